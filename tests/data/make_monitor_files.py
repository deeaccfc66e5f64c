"""Writes tests/data/monitor-*.json: the names MXNet 1.9.1's executor monitor gives to what it
reports (``Executor.set_monitor_callback``), and the statistics of what it reports.

Run with the MXNet oracle, from the repository root::

    .oracle/bin/python tests/data/make_monitor_files.py

The cases are the functions of this file that take the ``mx`` module: run here with
``mxnet``, and by tests/test_monitor_names.py with ``hybridlib``. Files:

* ``monitor-forward.json``: for every operator that runs with its default attributes on inputs
  of shape (2, 3), and for the cases of ``ATTR_CASES``, the names a forward pass reports
  (``[names, names with monitor_all]``): inputs as MXNet names them (``op_input0`` for an
  operator that does not name its inputs), outputs hidden ones included (``op_mask``);
* ``monitor-backward.json``: for the one-operator cases of ``BACKWARD_CASES`` and the
  networks of ``graphs``, what a forward and a backward pass report, ``monitor_all`` off and
  on, as ``[phase, name, root mean square]``.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = (2, 3)

# operators left out of the default-attribute sweep: MXNet's internal ones (gradients, numpy,
# sparse, control flow, OpenCV helpers), and those whose MXNet kernels crash the process on
# (2, 3) inputs (quantization, MKL-DNN subgraphs, IdentityAttachKLSparseReg)
SWEEP_PREFIXES = ('_backward', '_np', '_contrib_backward', '_sparse', '_cvim', '_cvcopy',
                  '_rnn_param_concat', '_set_value', '_onehot_encode', '_imdecode', '_foreach',
                  '_while_loop', '_cond', '_CachedOp', '_NoGradient', '_Native', '_NDArray',
                  '_CustomFunction', 'Custom', '_contrib_quantize', '_contrib_dequantize',
                  '_contrib_requantize', '_contrib_quantized', '_sg_')
SWEEP_SKIP = {'IdentityAttachKLSparseReg'}

# (operator, attributes, input shapes) run besides the default-attribute sweep
ATTR_CASES = [
    ('Activation', dict(act_type='relu'), [SHAPE]),
    ('Activation', dict(act_type='sigmoid'), [SHAPE]),
    ('Reshape', dict(shape=(-1,)), [SHAPE]),
    ('expand_dims', dict(axis=0), [SHAPE]),
    ('clip', dict(a_min=0.3, a_max=0.6), [SHAPE]),
    ('slice_axis', dict(axis=1, begin=0, end=2), [SHAPE]),
    ('slice', dict(begin=(0, 1), end=(2, 3)), [SHAPE]),
    ('tile', dict(reps=(2, 1)), [SHAPE]),
    ('repeat', dict(repeats=2), [SHAPE]),
    ('reverse', dict(axis=1), [SHAPE]),
    ('Cast', dict(dtype='float64'), [SHAPE]),
    ('one_hot', dict(depth=3), [SHAPE]),
    ('broadcast_to', dict(shape=(2, 2, 3)), [(1, 2, 3)]),
    ('Pad', dict(mode='constant', pad_width=(0, 0, 0, 0, 1, 1, 1, 1)), [(1, 1, 2, 3)]),
    ('depth_to_space', dict(block_size=2), [(1, 4, 2, 3)]),
    ('space_to_depth', dict(block_size=2), [(1, 1, 2, 4)]),
    ('FullyConnected', dict(num_hidden=2), [SHAPE]),
    ('FullyConnected', dict(num_hidden=2, no_bias=True), [SHAPE]),
    ('Convolution', dict(kernel=(2, 2), num_filter=2), [(1, 1, 3, 3)]),
    ('Deconvolution', dict(kernel=(2, 2), num_filter=2), [(1, 1, 3, 3)]),
    ('Pooling', dict(kernel=(2, 2), pool_type='max'), [(1, 1, 4, 4)]),
    ('Pooling', dict(kernel=(2, 2), pool_type='avg'), [(1, 1, 4, 4)]),
    ('Embedding', dict(input_dim=4, output_dim=2), [SHAPE]),
    ('LRN', dict(nsize=3), [(1, 3, 2, 2)]),
    ('LayerNorm', {}, [SHAPE]),
    ('LayerNorm', dict(output_mean_var=True), [SHAPE]),
    ('GroupNorm', dict(num_groups=1), [(2, 2, 3)]),
    ('SliceChannel', dict(num_outputs=3), [SHAPE]),
    ('Concat', dict(num_args=2, dim=1), [SHAPE, SHAPE]),
    ('stack', dict(num_args=2), [SHAPE, SHAPE]),
    ('add_n', dict(num_args=2), [SHAPE, SHAPE]),
    ('dot', {}, [SHAPE, (3, 2)]),
    ('batch_dot', {}, [(2, 2, 3), (2, 3, 2)]),
    ('pick', {}, [SHAPE, (2,)]),
    ('take', {}, [SHAPE, (2,)]),
    ('broadcast_like', {}, [(1, 3), SHAPE]),
    ('LeakyReLU', dict(act_type='prelu'), [SHAPE]),
    ('LeakyReLU', dict(act_type='rrelu'), [SHAPE]),
    ('BatchNorm', dict(output_mean_var=True), [SHAPE]),
    ('Dropout', dict(p=0.5), [SHAPE]),
    ('RNN', dict(mode='lstm', state_size=2, num_layers=1), [(2, 1, 3)]),
    ('RNN', dict(mode='gru', state_size=2, num_layers=1, state_outputs=True), [(2, 1, 3)]),
    ('UpSampling', dict(scale=2, sample_type='nearest', num_args=1), [(1, 1, 2, 3)]),
    ('moments', dict(axes=(1,)), [SHAPE]),
    ('_contrib_SyncBatchNorm', dict(key='k'), [SHAPE]),
    ('InstanceNorm', {}, [(2, 3, 2)]),
    ('Crop', dict(num_args=1, h_w=(1, 1)), [(1, 1, 2, 3)]),
    ('CTCLoss', {}, [(3, 2, 4), (2, 2)]),
    ('GridGenerator', dict(transform_type='affine', target_shape=(2, 2)), [(1, 6)]),
    ('BilinearSampler', {}, [(1, 1, 3, 3), (1, 2, 2, 2)]),
    ('SpatialTransformer', dict(target_shape=(2, 2), transform_type='affine',
                                sampler_type='bilinear'), [(1, 1, 3, 3), (1, 6)]),
    ('ROIPooling', dict(pooled_size=(2, 2), spatial_scale=1.0), [(1, 1, 4, 4), (1, 5)]),
    ('Correlation', {}, [(1, 1, 3, 3), (1, 1, 3, 3)]),
    ('_contrib_ROIAlign', dict(pooled_size=(2, 2), spatial_scale=1.0), [(1, 1, 4, 4), (1, 5)]),
    ('_contrib_AdaptiveAvgPooling2D', dict(output_size=1), [(1, 1, 4, 4)]),
    ('_contrib_BilinearResize2D', dict(height=2, width=2), [(1, 1, 3, 3)]),
    ('_contrib_box_iou', {}, [(2, 4), (3, 4)]),
    ('_contrib_box_nms', {}, [(1, 3, 6)]),
    ('_contrib_index_copy', {}, [(3, 2), (1,), (1, 2)]),
    ('_contrib_interleaved_matmul_selfatt_qk', dict(heads=1), [(2, 1, 6)]),
    ('_contrib_MultiBoxPrior', dict(sizes=(0.5,)), [(1, 1, 2, 2)]),
    ('khatri_rao', dict(num_args=2), [SHAPE, (4, 3)]),
    ('amp_cast', dict(dtype='float16'), [SHAPE]),
    ('amp_multicast', dict(num_outputs=2), [SHAPE, SHAPE]),
    ('cast_storage', dict(stype='default'), [SHAPE]),
    ('im2col', dict(kernel=(2, 2)), [(1, 1, 3, 3)]),
    ('col2im', dict(kernel=(2, 2), output_size=(3, 3)), [(1, 4, 4)]),
    ('softmax_cross_entropy', {}, [SHAPE, (2,)]),
    ('_split_v2', dict(indices=(0, 1), axis=1), [SHAPE]),
    ('_slice_assign', dict(begin=(0, 0), end=(2, 1)), [SHAPE, (2, 1)]),
    ('_slice_assign_scalar', dict(begin=(0, 0), end=(2, 1), scalar=1.0), [SHAPE]),
    ('scatter_nd', dict(shape=(2, 3)), [(2,), (2, 2)]),
    ('multi_sum_sq', dict(num_arrays=2), [SHAPE, SHAPE]),
    ('_histogram', dict(bin_cnt=2, range=(0, 1)), [SHAPE]),
    ('_linalg_gemm', {}, [(2, 2), (2, 2), (2, 2)]),
    ('_linalg_gemm2', {}, [(2, 2), (2, 2)]),
    ('_linalg_potri', {}, [(2, 2)]),
    ('_linalg_trmm', {}, [(2, 2), (2, 2)]),
    ('_linalg_trsm', {}, [(2, 2), (2, 2)]),
    ('_linalg_syrk', {}, [(2, 2)]),
    ('_linalg_sumlogdiag', {}, [(2, 2)]),
    ('_linalg_det', {}, [(2, 2)]),
    ('_linalg_slogdet', {}, [(2, 2)]),
    ('_linalg_inverse', {}, [(2, 2)]),
    ('_linalg_extractdiag', {}, [(2, 2)]),
    ('_linalg_makediag', {}, [(2,)]),
    ('_linalg_extracttrian', {}, [(2, 2)]),
    ('_linalg_maketrian', {}, [(3,)]),
    ('_linalg_syevd', {}, [(2, 2)]),
    ('_linalg_gelqf', {}, [(2, 3)]),
    ('_image_to_tensor', {}, [(2, 3, 3)]),
    ('_image_normalize', dict(mean=(0.5,), std=(2.0,)), [(3, 2, 3)]),
    ('_image_flip_left_right', {}, [(2, 3, 3)]),
    ('_image_resize', dict(size=(2, 2)), [(3, 3, 3)]),
    ('_image_crop', dict(x=0, y=0, width=2, height=2), [(3, 3, 3)]),
    ('_image_flip_top_bottom', {}, [(2, 3, 3)]),
    ('_image_random_flip_left_right', {}, [(2, 3, 3)]),
    ('_image_random_flip_top_bottom', {}, [(2, 3, 3)]),
    ('_image_random_brightness', dict(min_factor=0.5, max_factor=1.5), [(2, 3, 3)]),
    ('_image_random_contrast', dict(min_factor=0.5, max_factor=1.5), [(2, 3, 3)]),
    ('_image_random_saturation', dict(min_factor=0.5, max_factor=1.5), [(2, 3, 3)]),
    ('_image_random_hue', dict(min_factor=0.5, max_factor=1.5), [(2, 3, 3)]),
    ('_image_random_color_jitter', dict(brightness=0.1, contrast=0.1, saturation=0.1,
                                        hue=0.1), [(2, 3, 3)]),
    ('_image_adjust_lighting', dict(alpha=(0.1, 0.1, 0.1)), [(2, 3, 3)]),
    ('_image_random_lighting', {}, [(2, 3, 3)]),
    ('_random_normal', dict(shape=(2, 3)), []),
    ('_random_normal_like', {}, [SHAPE]),
    ('_random_uniform_like', {}, [SHAPE]),
    ('_eye', dict(N=2), []),
    ('_arange', dict(start=0, stop=3), []),
    ('_full', dict(shape=(2, 3), value=1.0), []),
    ('_zeros', dict(shape=(2, 3)), []),
    ('_linspace', dict(start=0, stop=1, num=3), []),
    ('_rnn_param_concat', dict(num_args=2, dim=0), [(2,), (3,)]),
    ('Convolution_v1', dict(kernel=(2, 2), num_filter=2), [(1, 1, 3, 3)]),
    ('Pooling_v1', dict(kernel=(2, 2)), [(1, 1, 4, 4)]),
    ('_contrib_DeformableConvolution', dict(kernel=(2, 2), num_filter=2),
     [(1, 1, 3, 3), (1, 8, 2, 2)]),
    ('_contrib_PSROIPooling', dict(spatial_scale=1.0, output_dim=1, pooled_size=2),
     [(1, 4, 4, 4), (1, 5)]),
    ('_contrib_box_encode', {}, [(1, 2), (1, 2), (1, 2, 4), (1, 2, 4), (4,), (4,)]),
    ('_contrib_box_decode', {}, [(1, 2, 4), (1, 2, 4)]),
    ('_contrib_bipartite_matching', dict(threshold=0.5), [(2, 3)]),
    ('_contrib_SparseEmbedding', dict(input_dim=4, output_dim=2), [SHAPE]),
    ('_contrib_interleaved_matmul_selfatt_valatt', dict(heads=1), [(2, 1, 6), (1, 2, 2)]),
    ('_contrib_interleaved_matmul_encdec_qk', dict(heads=1), [(2, 1, 2), (2, 1, 4)]),
    ('_contrib_interleaved_matmul_encdec_valatt', dict(heads=1), [(2, 1, 4), (1, 2, 2)]),
    ('_contrib_MultiBoxTarget', {}, [(1, 2, 4), (1, 1, 5), (1, 2, 2)]),
    ('_contrib_MultiBoxDetection', {}, [(1, 2, 2), (1, 8), (1, 2, 4)]),
    ('_ravel_multi_index', dict(shape=(2, 3)), [(2, 2)]),
    ('_unravel_index', dict(shape=(2, 3)), [(2,)]),
]


def wave(shape, offset=0.0, low=-1.0, high=1.0, step=1.3):
    """Distinct smooth float32 values in [low, high] of ``shape``."""
    n = int(np.prod(shape))
    unit = (np.sin(np.arange(n) * step + offset) + 1) / 2
    return (low + (high - low) * unit).reshape(shape).astype(np.float32)


def op_function(mx, op):
    """The ``mx.sym`` function of operator ``op`` (MXNet's module layout), or None."""
    for module, prefix in ((mx.sym, ''), (mx.sym.contrib, '_contrib_'),
                           (mx.sym.linalg, '_linalg_'), (mx.sym.image, '_image_'),
                           (mx.sym._internal, ''), (mx.sym.random, '_random_')):
        if op.startswith(prefix):
            fn = getattr(module, op[len(prefix):], None)
            if fn is not None:
                return fn
    return None


def _monitored(exe, monitor_all, run):
    names = []
    exe.set_monitor_callback(lambda name, array: names.append(name.decode('utf-8')),
                             monitor_all)
    run()
    return names


def forward_names(mx, op, attrs, shapes, variables=False):
    """``[names, names with monitor_all]`` that a forward pass of ``op`` (a node named ``op``)
    reports; ``shapes``: of the first inputs in order (the others inferred). The inputs are
    the variables ``op_<input>`` that the operator makes, or with ``variables`` variables
    ``x0``, ``x1``, ... given for the inputs of ``shapes`` (as an operator that mutates its
    inputs needs them)."""
    given = [mx.sym.var(f'x{i}') for i in range(len(shapes))] if variables else []
    symbol = op_function(mx, op)(*given, name='op', **attrs)
    exe = symbol.simple_bind(mx.cpu(), grad_req='null',
                             **dict(zip(symbol.list_arguments(), shapes)))
    for i, (name, array) in enumerate(sorted(exe.arg_dict.items())):
        array[:] = wave(array.shape, i, 0.2, 0.9)
    for array in exe.aux_dict.values():
        array[:] = 1.0
    return [_monitored(exe, monitor_all, lambda: exe.forward(is_train=False))
            for monitor_all in (False, True)]


def sweep(mx, ops, attr_cases=True):
    """Records of ``forward_names`` for ``ops`` (default attributes, where they run on a
    first input of shape ``SHAPE`` or on inputs all of that shape) and for ``ATTR_CASES``:
    ``{'op', 'attrs', 'shapes', 'variables', 'names'}``."""
    records = []
    for op in ops:
        for shapes in ([SHAPE], [SHAPE] * 8):
            try:
                names = forward_names(mx, op, {}, shapes)
                mx.nd.waitall()     # MXNet raises an operator's errors when it is waited for
            except Exception:      # noqa: BLE001 - an operator that needs attributes or shapes
                continue
            records.append({'op': op, 'attrs': {}, 'shapes': shapes, 'variables': False,
                            'names': names})
            break
    for op, attrs, shapes in ATTR_CASES if attr_cases else ():
        records.append({'op': op, 'attrs': attrs, 'shapes': shapes, 'variables': True,
                        'names': forward_names(mx, op, attrs, shapes, True)})
    return records


# -------------------------------------------------------------------------------------------------
# Backward
# -------------------------------------------------------------------------------------------------

# name: (operator, attributes, input specs); a spec is a shape (float values), or
# ('int', shape, high) for integer values in [0, high) (labels, indices)
BACKWARD_CASES = {
    'fc': ('FullyConnected', dict(num_hidden=2), [SHAPE]),
    'fc_no_bias': ('FullyConnected', dict(num_hidden=2, no_bias=True), [SHAPE]),
    'fc_no_flatten': ('FullyConnected', dict(num_hidden=2, flatten=False), [(2, 2, 3)]),
    'act_relu': ('Activation', dict(act_type='relu'), [SHAPE]),
    'act_sigmoid': ('Activation', dict(act_type='sigmoid'), [SHAPE]),
    'act_tanh': ('Activation', dict(act_type='tanh'), [SHAPE]),
    'act_softrelu': ('Activation', dict(act_type='softrelu'), [SHAPE]),
    'act_softsign': ('Activation', dict(act_type='softsign'), [SHAPE]),
    'batchnorm': ('BatchNorm', {}, [SHAPE]),
    'batchnorm_gamma': ('BatchNorm', dict(fix_gamma=False), [SHAPE]),
    'batchnorm_mean_var': ('BatchNorm', dict(fix_gamma=False, output_mean_var=True), [SHAPE]),
    'flatten': ('Flatten', {}, [(2, 3, 2)]),
    'reshape': ('Reshape', dict(shape=(-1,)), [SHAPE]),
    'softmax_output': ('SoftmaxOutput', {}, [SHAPE, ('int', (2,), 3)]),
    'linear_regression': ('LinearRegressionOutput', {}, [SHAPE, SHAPE]),
    'logistic_regression': ('LogisticRegressionOutput', {}, [SHAPE, SHAPE]),
    'mae_regression': ('MAERegressionOutput', {}, [SHAPE, SHAPE]),
    'elemwise_add': ('elemwise_add', {}, [SHAPE, SHAPE]),
    'elemwise_mul': ('elemwise_mul', {}, [SHAPE, SHAPE]),
    'relu': ('relu', {}, [SHAPE]),
    'sigmoid': ('sigmoid', {}, [SHAPE]),
    'square': ('square', {}, [SHAPE]),
    'plus_scalar': ('_plus_scalar', dict(scalar=2.0), [SHAPE]),
    'mul_scalar': ('_mul_scalar', dict(scalar=2.0), [SHAPE]),
    'sum': ('sum', dict(axis=1), [SHAPE]),
    'mean': ('mean', {}, [SHAPE]),
}


def _input_values(specs):
    values = []
    for i, spec in enumerate(specs):
        if spec[0] == 'int':
            _, shape, high = spec
            values.append(np.floor(wave(shape, i, 0, high - 1e-3)).astype(np.float32))
        else:
            values.append(wave(spec, i + 0.5))
    return values


def case_symbol(mx, case):
    """``(symbol, {input name: value})`` of ``BACKWARD_CASES[case]``: a node named ``op`` on
    variables ``op_<input>``."""
    op, attrs, specs = BACKWARD_CASES[case]
    symbol = op_function(mx, op)(name='op', **attrs)
    return symbol, dict(zip(symbol.list_arguments(), _input_values(specs)))


def graphs(mx):
    """``{name: (symbol, {input name: value})}``: networks whose gradients meet (sums),
    branch, share a weight, reach several outputs, or are zeros (argmax)."""
    sym = mx.sym
    data = sym.var('data')
    x = wave((2, 5), 0.3)
    nets = {}
    a = sym.FullyConnected(data, num_hidden=4, name='fc1')
    r = sym.Activation(a, act_type='relu', name='relu1')
    b = sym.FullyConnected(r, num_hidden=4, name='fc2')
    nets['residual'] = (sym.elemwise_add(b, a, name='add'), {'data': x})
    w = sym.var('w')
    a = sym.FullyConnected(data, weight=w, num_hidden=5, no_bias=True, name='fa')
    b = sym.FullyConnected(sym.relu(a, name='r'), weight=w, num_hidden=5, no_bias=True,
                           name='fb')
    nets['shared_weight'] = (b, {'data': x})
    a = sym.FullyConnected(data, num_hidden=4, name='fc1')
    nets['two_heads'] = (sym.Group([sym.sigmoid(a, name='s'), sym.tanh(a, name='t')]),
                         {'data': x})
    nets['head_and_inner'] = (sym.Group([a, sym.sigmoid(a, name='s')]), {'data': x})
    nets['clone_to_two'] = (sym.elemwise_add(data, sym.var('y'), name='add'),
                            {'data': x, 'y': wave((2, 5), 1.1)})
    nets['square_by_mul'] = (sym.elemwise_mul(data, data, name='m'), {'data': x})
    a = sym.FullyConnected(data, num_hidden=3, name='fc')
    index = sym.argmax(a, axis=1, name='am')
    # a gradient summed with argmax's zeros (left out of the sum), or only zeros
    nets['zeros_left_out'] = (sym.elemwise_add(sym.sum(a, axis=1, name='s'), index, name='add'),
                              {'data': x})
    nets['zeros_only'] = (index, {'data': x})
    return nets


def backward_report(mx, symbol, values, monitor_all):
    """``[[phase, name, rms]]`` that a forward (``'forward'``) and a backward pass
    (``'backward'``, head gradients given) of ``symbol`` report; parameters not in ``values``
    get ``wave`` values, auxiliary states values in [0.5, 1]."""
    shapes = {name: value.shape for name, value in values.items()}
    exe = symbol.simple_bind(mx.cpu(), **shapes)
    for i, name in enumerate(symbol.list_arguments()):
        array = exe.arg_dict[name]
        array[:] = values[name] if name in values else wave(array.shape, 2.0 + i)
    for i, name in enumerate(symbol.list_auxiliary_states()):
        exe.aux_dict[name][:] = wave(exe.aux_dict[name].shape, 5.0 + i, 0.5, 1.0)
    report = []

    def record(phase):
        def callback(name, array):
            if not isinstance(array, mx.nd.NDArray):     # MXNet passes a handle
                array = mx.nd.NDArray(mx.base.NDArrayHandle(array), writable=False)
            data = array.asnumpy().astype(np.float64)
            report.append([phase, name.decode('utf-8'), float(np.sqrt(np.mean(data ** 2)))])
        exe.set_monitor_callback(callback, monitor_all)

    record('forward')
    exe.forward(is_train=True)
    head_grads = [mx.nd.array(wave(out.shape, 7.0 + i)) for i, out in enumerate(exe.outputs)]
    record('backward')
    exe.backward(head_grads)
    return report


def backward_reports(mx):
    """``{case: [report, report with monitor_all]}`` of the one-operator cases and the
    networks."""
    cases = {name: case_symbol(mx, name) for name in BACKWARD_CASES}
    cases.update(graphs(mx))
    return {name: [backward_report(mx, symbol, values, monitor_all)
                   for monitor_all in (False, True)]
            for name, (symbol, values) in cases.items()}


def main():
    # the names of the operators themselves, not of MKL-DNN's fused subgraphs
    # (sg_mkldnn_fully_connected_0), which MXNet's CPU build makes of an inference executor
    os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'
    import mxnet as mx
    ops = sorted(op for op in mx.operator.get_all_registered_operators()
                 if not op.startswith(SWEEP_PREFIXES) and op not in SWEEP_SKIP)
    with open(os.path.join(HERE, 'monitor-forward.json'), 'w', encoding='utf-8') as f:
        json.dump(sweep(mx, ops), f, indent=0, sort_keys=True)
        f.write('\n')
    with open(os.path.join(HERE, 'monitor-backward.json'), 'w', encoding='utf-8') as f:
        json.dump(backward_reports(mx), f, indent=0, sort_keys=True)
        f.write('\n')
    print('wrote monitor-forward.json and monitor-backward.json')


if __name__ == '__main__':
    main()
