"""Writes tests/data/spatial.json and tests/data/legacy.json: MXNet 1.9.1's outputs, input
gradients and auxiliary states after one training step of the spatial operators
(hybridlib/ops/spatial.py, and BilinearSampler) and of the legacy ones (hybridlib/ops/legacy.py).

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_spatial_files.py

Every operator runs as a Symbol bound with its inputs (MXNet's imperative call cannot pass the
auxiliary states of the legacy operators), forward in training mode, then backward with a head
gradient of distinct values. Each case holds the operator, its attributes, its inputs (and
auxiliary states, by name), the head gradients, MXNet's outputs, the gradients of the inputs
listed in ``diff`` and the auxiliary states after the step. tests/ops/test_spatial.py and
tests/ops/test_legacy.py read them.
"""
import json
import os

import numpy as np
import mxnet as mx
from mxnet import nd

HERE = os.path.dirname(os.path.abspath(__file__))


def wave(shape, offset=0.0, low=-1.0, high=1.0, step=1.3):
    """Distinct smooth values in [low, high] of ``shape``."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n) * step + offset) + 1) / 2
    return (low + (high - low) * unit).reshape(shape).astype(np.float32)


def tolist(x):
    x = np.asarray(x)
    return {'shape': list(x.shape), 'data': [float(format(v, '.9g')) for v in
                                             x.astype('float64').ravel()]}


def case(name, op, attrs, inputs, diff, aux=None, train=True):
    """``inputs``: [(name, array)] in the operator's order; ``diff``: names to differentiate;
    ``aux``: [(name, array)] auxiliary states."""
    aux = aux or []
    variables = [mx.sym.var(n) for n, _ in inputs]
    sym = getattr(mx.sym, op)(*variables, name='op', **attrs)
    args = {n: nd.array(v) for n, v in inputs}
    grads = {n: nd.zeros(v.shape) for n, v in inputs if n in diff}
    req = {n: ('write' if n in diff else 'null') for n, _ in inputs}
    aux_arrays = {f'op_{n}': nd.array(v) for n, v in aux}
    exe = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=req, aux_states=aux_arrays)
    outs = exe.forward(is_train=train)
    heads = [wave(o.shape, 0.7 + k) for k, o in enumerate(outs)]
    exe.backward([nd.array(h) for h in heads], is_train=train)
    return {'name': name, 'op': op, 'attrs': attrs, 'train': train,
            'inputs': [[n, tolist(v)] for n, v in inputs],
            'aux': [[n, tolist(v)] for n, v in aux],
            'heads': [tolist(h) for h in heads],
            'outputs': [tolist(o.asnumpy()) for o in outs],
            'grads': {n: tolist(g.asnumpy()) for n, g in grads.items()},
            'aux_after': {n: tolist(exe.aux_dict[f'op_{n}'].asnumpy()) for n, _ in aux}}


def spatial():
    x = wave((2, 2, 5, 6))
    theta = np.array([[0.9, 0.2, 0.1, -0.1, 1.1, 0.05],
                      [0.6, -0.3, 0.2, 0.25, 0.7, -0.1]], np.float32)
    flow = wave((2, 2, 4, 5), 0.4, -1.5, 1.5)
    # points inside, on the border, just outside and far outside the image
    grid = wave((2, 2, 3, 4), 0.2, -1.3, 1.3)
    rois = np.array([[0, 0, 0, 9, 7], [1, 2.4, 1.6, 10.5, 8.5], [0, 4, 2, 4, 2],
                     [1, -3, -2, 20, 15], [0, 11, 9, 13, 12]], np.float32)
    ties = np.zeros((1, 2, 4, 5), np.float32)
    ties[0, 0, 1:3, 2:4] = 1.0          # one maximum in several places of a bin
    ties[0, 1] = wave((4, 5), 1.0)
    a, b = wave((1, 2, 6, 7), 0.1), wave((1, 2, 6, 7), 1.9)
    return [
        case('grid_affine', 'GridGenerator', dict(transform_type='affine', target_shape=(3, 4)),
             [('data', theta)], ['data']),
        case('grid_warp', 'GridGenerator', dict(transform_type='warp'), [('data', flow)],
             ['data']),
        case('sampler', 'BilinearSampler', {}, [('data', x), ('grid', grid)], ['data', 'grid']),
        case('transformer', 'SpatialTransformer',
             dict(target_shape=(4, 3), transform_type='affine', sampler_type='bilinear'),
             [('data', x), ('loc', theta)], ['data', 'loc']),
        case('roi', 'ROIPooling', dict(pooled_size=(2, 3), spatial_scale=0.5),
             [('data', x), ('rois', rois)], ['data']),
        case('roi_fine', 'ROIPooling', dict(pooled_size=(3, 3), spatial_scale=1.0),
             [('data', x), ('rois', rois[:2] / 2)], ['data']),
        case('roi_ties', 'ROIPooling', dict(pooled_size=(1, 2), spatial_scale=1.0),
             [('data', ties), ('rois', np.array([[0, 0, 0, 4, 3]], np.float32))], ['data']),
        case('corr', 'Correlation', dict(max_displacement=2, pad_size=2),
             [('data1', a), ('data2', b)], ['data1', 'data2']),
        case('corr_strided', 'Correlation',
             dict(kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=1),
             [('data1', a), ('data2', b)], ['data1', 'data2']),
        case('corr_abs', 'Correlation',
             dict(kernel_size=3, max_displacement=1, pad_size=1, is_multiply=False),
             [('data1', a), ('data2', b)], ['data1', 'data2']),
        case('crop', 'Crop', dict(num_args=1, h_w=(3, 4), offset=(1, 2)), [('arg0', x)],
             ['arg0']),
        case('crop_like_center', 'Crop', dict(num_args=2, center_crop=True),
             [('arg0', x), ('arg1', wave((1, 1, 2, 3)))], ['arg0']),
    ]


def legacy():
    x = wave((2, 2, 5, 6))
    gamma, beta = wave((2,), 0.3, 0.5, 1.5), wave((2,), 0.9)
    mean, var = wave((2,), 1.7, -0.5, 0.5), wave((2,), 2.1, 0.5, 1.5)
    scores = wave((4, 5), 0.5, -2, 2)
    sigmoid = wave((4, 5), 0.2, 0.05, 0.95)
    return [
        case('conv', 'Convolution_v1', dict(kernel=(3, 3), num_filter=4, stride=(2, 1),
                                             pad=(1, 2), dilate=(1, 2)),
             [('data', x), ('weight', wave((4, 2, 3, 3), 0.4)), ('bias', wave((4,), 0.8))],
             ['data', 'weight', 'bias']),
        case('conv_group_nobias', 'Convolution_v1',
             dict(kernel=(2, 2), num_filter=4, num_group=2, no_bias=True),
             [('data', x), ('weight', wave((4, 1, 2, 2), 0.6))], ['data', 'weight']),
        case('pool_max_full', 'Pooling_v1', dict(kernel=(3, 3), pool_type='max',
                                                 pooling_convention='full', stride=(2, 2),
                                                 pad=(1, 1)),
             [('data', x)], ['data']),
        case('pool_avg_full', 'Pooling_v1', dict(kernel=(3, 2), pool_type='avg',
                                                 pooling_convention='full', stride=(2, 3),
                                                 pad=(1, 1)),
             [('data', x)], ['data']),
        case('pool_sum', 'Pooling_v1', dict(kernel=(2, 2), pool_type='sum', stride=(2, 2)),
             [('data', x)], ['data']),
        case('pool_max_negative_pad', 'Pooling_v1', dict(kernel=(2, 2), pad=(1, 1)),
             [('data', x - 2)], ['data']),
        case('pool_global_avg', 'Pooling_v1', dict(kernel=(1, 1), pool_type='avg',
                                                   global_pool=True),
             [('data', x)], ['data']),
        case('bn_train', 'BatchNorm_v1', dict(fix_gamma=False, eps=1e-2, momentum=0.8,
                                              output_mean_var=True),
             [('data', x), ('gamma', gamma), ('beta', beta)], ['data', 'gamma', 'beta'],
             aux=[('moving_mean', mean), ('moving_var', var)]),
        case('bn_fix_gamma', 'BatchNorm_v1', {},
             [('data', x), ('gamma', gamma), ('beta', beta)], ['data', 'beta'],
             aux=[('moving_mean', mean), ('moving_var', var)]),
        case('bn_global', 'BatchNorm_v1', dict(use_global_stats=True, fix_gamma=False,
                                               output_mean_var=True),
             [('data', x), ('gamma', gamma), ('beta', beta)], ['data', 'gamma', 'beta'],
             aux=[('moving_mean', mean), ('moving_var', var)]),
        case('svm_l2', 'SVMOutput', {},
             [('data', scores), ('label', np.array([0, 3, 1, 4], np.float32))], ['data']),
        case('svm_l1', 'SVMOutput', dict(margin=0.5, regularization_coefficient=2.0,
                                         use_linear=True),
             [('data', scores), ('label', np.array([0, 3, 1, 4], np.float32))], ['data']),
        case('svm_nd', 'SVMOutput', dict(margin=1.5),
             [('data', wave((2, 3, 4), 0.1, -2, 2)),
              ('label', np.array([[0, 3, 1], [2, 2, 9]], np.float32))], ['data']),
        case('kl', 'IdentityAttachKLSparseReg', dict(sparseness_target=0.2, penalty=0.01,
                                                     momentum=0.7),
             [('data', sigmoid)], ['data'], aux=[('moving_avg', wave((5,), 0.3, 0.2, 0.8))]),
    ]


def main():
    for name, cases in (('spatial.json', spatial()), ('legacy.json', legacy())):
        path = os.path.join(HERE, name)
        with open(path, 'w') as f:
            json.dump({'cases': cases}, f, separators=(',', ':'))
        print('wrote', path, os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    main()
