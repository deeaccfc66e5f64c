"""Writes MXNet 1.9.1's numbers for the detection operators and the gluon.contrib.cnn layers.

Run with the MXNet oracle's Python, from the repository root::

    .oracle/bin/python tests/data/make_detection_files.py

It writes under tests/data/:

* ``detection-cases.json``: per operator case its operator (``nd.contrib`` name), attributes,
  the number of inputs and outputs and the inputs whose gradients MXNet computed (``grads``);
  per layer case its constructor, input shape, repr before and after the first call, name,
  parameters (name, shape, dtype, grad_req, initializer) and the exported ``-symbol.json``;
  and the layers' ``__init__`` signatures;
* ``detection-numbers.npz``: the arrays: ``CASE:inI`` (inputs), ``CASE:outK`` (outputs),
  ``CASE:cotK`` (the head gradients of a backward pass) and ``CASE:gradI`` (the input
  gradients); for layers also ``CASE:param:NAME`` (the values set before the call, without the
  block's prefix) and ``CASE:pgrad:NAME`` (their gradients).

Operators run imperatively on float32 inputs (float64 ones for the deformable convolutions).
MXNet's CPU has no backward for ModulatedDeformableConvolution and RROIAlign, and writes zeros
for the box utilities and the proposals: those cases record outputs only.
tests/ops/test_detection.py and tests/contrib/test_cnn.py read the files.
"""
import inspect
import json
import os
import tempfile

import numpy as np
import mxnet as mx
from mxnet import autograd, nd
from mxnet.gluon.contrib import cnn

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20240611)


def uniform(shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def wave(shape, offset=0.0):
    """Smooth distinct values in [-1, 1] (head gradients, layer parameters)."""
    size = int(np.prod(shape))
    return np.sin(np.arange(size) * 0.7 + offset).reshape(shape).astype(np.float32)


def corner_boxes(shape, low=0.0, high=1.0):
    xy = RNG.uniform(low, (low + high) / 2, size=shape[:-1] + (2,))
    wh = RNG.uniform((high - low) / 10, (high - low) / 2, size=shape[:-1] + (2,))
    return np.concatenate([xy, xy + wh], axis=-1).astype(np.float32)


def rois(num, images, width, height, scale=1.0):
    x1 = RNG.uniform(-2, width / scale - 2, num)
    y1 = RNG.uniform(-2, height / scale - 2, num)
    w, h = RNG.uniform(1, width / scale, num), RNG.uniform(1, height / scale, num)
    return np.stack([RNG.integers(0, images, num), x1, y1, x1 + w, y1 + h],
                    axis=1).astype(np.float32)


# -------------------------------------------------------------------------------------------------
# Operator cases: (name, operator, attributes, inputs, inputs to differentiate)
# -------------------------------------------------------------------------------------------------

def operator_cases():
    cases = []

    def case(name, op, attrs, inputs, grads=()):
        cases.append((name, op, attrs, inputs, list(grads)))

    samples = np.array([[1, -1, 0, 1], [1, 1, 0, -1]], np.float32)
    matches = np.array([[2, 0, 1, 1], [0, 2, 2, 1]], np.float32)
    encode_inputs = [samples, matches, corner_boxes((2, 4, 4)), corner_boxes((2, 3, 4)),
                     np.array([0.1, -0.1, 0.05, 0.0], np.float32),
                     np.array([0.1, 0.2, 0.3, 0.4], np.float32)]
    case('box_encode', 'box_encode', {}, encode_inputs)
    offsets, anchors = uniform((2, 5, 4)), corner_boxes((1, 5, 4))
    case('box_decode', 'box_decode', {}, [offsets, anchors])
    case('box_decode_corner', 'box_decode',
         dict(format='corner', std0=0.1, std1=0.2, std2=0.3, std3=0.4), [offsets, anchors])
    case('box_decode_clip', 'box_decode', dict(format='corner', std2=2.0, std3=3.0, clip=0.5),
         [offsets, anchors])
    scores = np.round(RNG.uniform(0, 1, (2, 4, 3)) * 8).astype(np.float32) / 8
    case('bipartite', 'bipartite_matching', dict(threshold=0.2), [scores])
    case('bipartite_topk', 'bipartite_matching', dict(threshold=0.0, topk=1), [scores])
    case('bipartite_ascend', 'bipartite_matching', dict(threshold=0.6, is_ascend=True),
         [scores.reshape(2, 3, 4)])

    # proposals: 3 scales x 2 ratios anchors on a 4 x 5 map of stride 8; the images leave
    # padding cells, rpn_min_size removes the smallest boxes
    cls = RNG.uniform(0, 1, (2, 12, 4, 5)).astype(np.float32)
    bbox = RNG.normal(0, 0.3, (2, 24, 4, 5)).astype(np.float32)
    info = np.array([[30, 37, 1.0], [25, 40, 0.5]], np.float32)
    rpn = dict(scales=(1.0, 2.0, 4.0), ratios=(0.5, 2.0), feature_stride=8, rpn_min_size=12,
               rpn_pre_nms_top_n=40, rpn_post_nms_top_n=12, threshold=0.5)
    case('proposal', 'Proposal', dict(rpn, output_score=True), [cls[:1], bbox[:1], info[:1]])
    case('proposal_iou_loss', 'Proposal', dict(rpn, iou_loss=True, threshold=0.3),
         [cls[:1], bbox[:1] * 4, info[:1]])
    case('proposal_all', 'Proposal',
         dict(rpn, rpn_pre_nms_top_n=-1, rpn_post_nms_top_n=30, rpn_min_size=4),
         [cls[:1], bbox[:1], info[:1]])
    case('multi_proposal', 'MultiProposal', dict(rpn, output_score=True), [cls, bbox, info])

    data = uniform((2, 2 * 9, 6, 7))
    boxes = rois(4, 2, 7, 6, scale=0.5)
    case('psroi', 'PSROIPooling', dict(spatial_scale=0.5, output_dim=2, pooled_size=3),
         [data, boxes], grads=[0])
    case('psroi_group', 'PSROIPooling',
         dict(spatial_scale=0.5, output_dim=2, pooled_size=2, group_size=3), [data, boxes],
         grads=[0])
    trans = uniform((4, 4, 2, 2))
    dps = dict(spatial_scale=0.5, output_dim=2, group_size=3, pooled_size=3, part_size=2,
               sample_per_part=2, trans_std=0.2)
    case('dpsroi', 'DeformablePSROIPooling', dps, [data, boxes, trans], grads=[0, 2])
    case('dpsroi_one_class', 'DeformablePSROIPooling', dict(dps, part_size=0, sample_per_part=3),
         [data, boxes, uniform((4, 2, 3, 3))], grads=[0, 2])
    case('dpsroi_no_trans', 'DeformablePSROIPooling', dict(dps, no_trans=True), [data, boxes],
         grads=[0])
    rotated = np.stack([RNG.integers(0, 2, 4), RNG.uniform(0, 14, 4), RNG.uniform(0, 12, 4),
                        RNG.uniform(2, 9, 4), RNG.uniform(2, 9, 4), RNG.uniform(-90, 90, 4)],
                       axis=1).astype(np.float32)
    case('rroi', 'RROIAlign', dict(pooled_size=(2, 3), spatial_scale=0.5), [data, rotated])
    case('rroi_sampling', 'RROIAlign', dict(pooled_size=(3, 2), spatial_scale=0.5,
                                            sampling_ratio=2), [data, rotated])

    image = uniform((2, 4, 5, 6)).astype(np.float64)
    conv = dict(kernel=(3, 2), stride=(1, 2), pad=(1, 1), dilate=(2, 1), num_filter=4,
                num_group=2, num_deformable_group=2)
    offset = uniform((2, 2 * 2 * 6, 3, 4), -1.5, 1.5).astype(np.float64)
    weight, bias = uniform((4, 2, 3, 2)).astype(np.float64), uniform((4,)).astype(np.float64)
    case('deformable', 'DeformableConvolution', conv, [image, offset, weight, bias],
         grads=[0, 1, 2, 3])
    case('deformable_plain', 'DeformableConvolution',
         dict(kernel=(3, 3), pad=(1, 1), num_filter=3, no_bias=True),
         [image, uniform((2, 18, 5, 6), -2, 2).astype(np.float64),
          uniform((3, 4, 3, 3)).astype(np.float64)], grads=[0, 1, 2])
    mask = uniform((2, 2 * 6, 3, 4), 0, 1).astype(np.float64)
    case('modulated', 'ModulatedDeformableConvolution', conv,
         [image, offset, mask, weight, bias])
    return cases


def run_operator(name, op, attrs, inputs, grads, numbers):
    arrays = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in grads:
        arrays[i].attach_grad()
    with autograd.record():
        outs = getattr(nd.contrib, op)(*arrays, **attrs)
    outs = outs if isinstance(outs, list) else [outs]
    for i, x in enumerate(inputs):
        numbers[f'{name}:in{i}'] = x
    for k, o in enumerate(outs):
        numbers[f'{name}:out{k}'] = o.asnumpy()
    if grads:
        cots = [wave(o.shape, k) for k, o in enumerate(outs)]
        autograd.backward(outs, [nd.array(c, dtype=o.dtype) for c, o in zip(cots, outs)])
        for k, c in enumerate(cots):
            numbers[f'{name}:cot{k}'] = c
        for i in grads:
            numbers[f'{name}:grad{i}'] = arrays[i].grad.asnumpy()
    return dict(op=op, attrs=attrs, inputs=len(inputs), outputs=len(outs), grads=grads)


# -------------------------------------------------------------------------------------------------
# Layer cases: (name, constructor, input shape, with MXNet's gradients)
# -------------------------------------------------------------------------------------------------

LAYERS = [
    ('cnn_deformable', 'cnn.DeformableConvolution(4, kernel_size=3, padding=1, in_channels=2)',
     (2, 2, 5, 5), True),
    ('cnn_deformable_deferred', "cnn.DeformableConvolution(3, kernel_size=(3, 2), strides=(2, 1), "
     "dilation=(1, 2), activation='tanh')", (1, 3, 6, 5), True),
    ('cnn_deformable_groups', 'cnn.DeformableConvolution(4, kernel_size=2, groups=2, '
     'num_deformable_group=2, use_bias=False, offset_use_bias=False, in_channels=4)',
     (2, 4, 4, 5), True),
    ('cnn_modulated', 'cnn.ModulatedDeformableConvolution(4, kernel_size=3, padding=1, '
     'in_channels=2)', (2, 2, 5, 5), False),
    ('cnn_modulated_groups', "cnn.ModulatedDeformableConvolution(4, kernel_size=(2, 3), "
     "strides=2, num_deformable_group=2, use_bias=False, activation='relu')", (1, 4, 6, 7),
     False),
]


def param_values(shape, index):
    """The layers' parameter values (small, so that the offsets stay within a few pixels)."""
    return (0.3 * wave(shape, index)).astype(np.float32)


def run_layer(name, make, shape, with_grads, numbers):
    with mx.name.NameManager():
        block = eval(make, {'cnn': cnn})
    facts = dict(make=make, shape=shape, with_grads=with_grads, repr_before=repr(block),
                 name=block.name, prefix=block.prefix,
                 params=[[k, list(p.shape), np.dtype(p.dtype).name, p.grad_req, str(p.init)]
                         for k, p in block.params.items()])
    block.initialize()
    x = nd.array(wave(shape, 0.3))
    block(x)
    params = block.collect_params()
    for i, (key, p) in enumerate(params.items()):
        values = param_values(p.shape, i)
        p.set_data(nd.array(values))
        numbers[f'{name}:param:{key[len(block.prefix):]}'] = values
    facts['repr_after'] = repr(block)
    numbers[f'{name}:in0'] = x.asnumpy()
    if with_grads:
        x.attach_grad()
        with autograd.record():
            out = block(x)
        cot = wave(out.shape, 1.0)
        out.backward(nd.array(cot))
        numbers[f'{name}:cot0'] = cot
        numbers[f'{name}:grad0'] = x.grad.asnumpy()
        for key, p in params.items():
            if p.grad_req != 'null':
                numbers[f'{name}:pgrad:{key[len(block.prefix):]}'] = p.grad().asnumpy()
    else:
        out = block(x)
    numbers[f'{name}:out0'] = out.asnumpy()
    block.hybridize()
    block(x)
    with tempfile.TemporaryDirectory() as tmp:
        block.export(os.path.join(tmp, 'net'))
        with open(os.path.join(tmp, 'net-symbol.json')) as f:
            facts['symbol'] = f.read()
    return facts


def main():
    numbers, facts = {}, {'operators': {}, 'layers': {}}
    for name, op, attrs, inputs, grads in operator_cases():
        facts['operators'][name] = run_operator(name, op, attrs, inputs, grads, numbers)
    for name, make, shape, with_grads in LAYERS:
        facts['layers'][name] = run_layer(name, make, shape, with_grads, numbers)
    facts['signatures'] = {cls: str(inspect.signature(getattr(cnn, cls).__init__))
                           for cls in cnn.__all__}
    facts['all'] = list(cnn.__all__)
    with open(os.path.join(HERE, 'detection-cases.json'), 'w') as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write('\n')
    np.savez_compressed(os.path.join(HERE, 'detection-numbers.npz'), **numbers)


if __name__ == '__main__':
    main()
