"""One computation in several settings must agree: a symbol on several contexts and dtypes
(``check_consistency``), a Gluon block imperative and hybridized
(``check_gluon_hybridize_consistency``), and two optimizers (``compare_optimizer``).
"""
import traceback

import numpy as np

from .. import autograd
from .. import ndarray as nd
from ..base import check_stype
from ..initializer import Initializer
from ..symbol import Symbol
from .compare import assert_almost_equal, compare_ndarray_tuple
from .symbolic import _assign, _sorted_items
from .tolerances import default_context, get_tols

__all__ = ['check_consistency', 'check_gluon_hybridize_consistency', 'compare_optimizer']


def _most_precise(dtypes):
    """The index of the first most precise dtype, as ``np.argmax`` picks it from a list of
    dtypes (``a > b``: b casts safely to a)."""
    best = 0
    for i, dtype in enumerate(dtypes):
        if dtype > dtypes[best]:
            best = i
    return best


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Check that a symbol gives the same outputs and gradients in several settings.

    Parameters
    ----------
    sym : Symbol or list of Symbol
        One symbol, or one per setting (same arguments and outputs).
    ctx_list : list of dict
        The settings, at least two: keyword arguments of ``simple_bind`` (``ctx``, input
        shapes by name, ``type_dict``), e.g. ``{'ctx': mx.cpu(), 'data': (2, 3),
        'type_dict': {'data': np.float16}}``.
    scale : float
        The standard deviation (normal) or 0.92 * half-width (uniform) of random inputs.
    grad_req : str or list or dict
        The gradient requirement; 'null' checks the forward pass only.
    arg_params, aux_params : dict of str -> array, optional
        Inputs to use; missing arguments are drawn at random (written into ``arg_params``),
        missing auxiliary states are 0.
    rtol, atol : float or dict of dtype -> float, optional
    raise_on_err : bool
        Whether a mismatch raises (otherwise it is printed).
    ground_truth : dict of str -> array, optional
        The reference outputs and gradients; by default those of the first setting whose
        output has the most precise dtype.
    equal_nan : bool
    use_uniform : bool
        Whether random inputs are uniform rather than normal.
    rand_type : numpy dtype
        The dtype random inputs are cast to before being written.

    Returns
    -------
    dict of str -> array
        The reference: outputs (of the training pass when gradients are checked) and
        gradients.
    """
    assert len(ctx_list) > 1
    if isinstance(sym, Symbol):
        sym = [sym] * len(ctx_list)
    else:
        assert len(sym) == len(ctx_list)
    output_names = sym[0].list_outputs()
    arg_names = sym[0].list_arguments()
    exe_list = []
    for s, ctx in zip(sym, ctx_list):
        assert s.list_arguments() == arg_names
        assert s.list_outputs() == output_names
        exe_list.append(s.simple_bind(grad_req=grad_req, **ctx))

    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params

    def smaller_dtype(dt1, dt2):
        # the less precise of two dtypes
        return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2

    # random inputs in a deterministic order, for reproducibility
    for n, arr in _sorted_items(exe_list[0].arg_dict):
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape, scale=scale).astype(rand_type)
    for n in exe_list[0].aux_dict:
        if n not in aux_params:
            aux_params[n] = 0
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            _assign(arr, arg_params[name])
        for name, arr in exe.aux_dict.items():
            _assign(arr, aux_params[name])
        if grad_req == 'add':
            for arr in exe.grad_arrays:
                if arr is not None:
                    _assign(arr, 0)

    for exe in exe_list:
        exe.forward(is_train=False)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exe_list]
    gt_idx = _most_precise(dtypes)
    gt = ground_truth
    if gt is None:
        gt = dict(zip(output_names, exe_list[gt_idx].outputs))
        if grad_req != 'null':
            # the gradient buffers: backward below fills them
            gt.update({n: exe_list[gt_idx].grad_dict.get(n) for n in arg_names})

    def report(kind, err):
        print(kind)
        traceback.print_exc()
        if raise_on_err:
            raise err
        print(str(err))

    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names, exe.outputs):
            try:
                assert_almost_equal(arr, gt[name], rtol=rtol, atol=atol, equal_nan=equal_nan)
            except AssertionError as err:
                report('Predict Err: ctx %d vs ctx %d at %s' % (i, gt_idx, name), err)

    if grad_req == 'null':
        return gt
    for exe in exe_list:
        exe.forward(is_train=True)
    if ground_truth is None:
        gt.update(zip(output_names, exe_list[gt_idx].outputs))
    # the first executor's outputs, in the least precise dtype, are every head gradient
    least_precise_dtype = [out.dtype for out in exe_list[0].outputs]
    for exe in exe_list:
        least_precise_dtype = [smaller_dtype(out.dtype, dt)
                               for out, dt in zip(exe.outputs, least_precise_dtype)]
    golden_data_np = [out.astype(dt).asnumpy()
                      for out, dt in zip(exe_list[0].outputs, least_precise_dtype)]
    for exe in exe_list:
        out_grads = [nd.array(golden_np, ctx=exe._ctx, dtype=out.dtype)
                     for golden_np, out in zip(golden_data_np, exe.outputs)]
        exe.backward(out_grads)

    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            gtarr = gt.get(name)
            if gtarr is None:
                assert arr is None
                continue
            try:
                rt, at = rtol, atol
                # with float16 data, a float32 gradient (e.g. batchnorm's gamma) gets float16
                # tolerances
                smaller_arr_dtype = smaller_dtype(arr.dtype, dtypes[i])
                smaller_gt_dtype = smaller_dtype(gtarr.dtype, dtypes[gt_idx])
                if smaller_arr_dtype != arr.dtype or smaller_gt_dtype != gtarr.dtype:
                    rt, at = get_tols(arr.astype(smaller_arr_dtype),
                                      gtarr.astype(smaller_gt_dtype), rtol, atol)
                assert_almost_equal(arr, gtarr, rtol=rt, atol=at, equal_nan=equal_nan)
            except AssertionError as err:
                report('Train Err: {} {} ctx {} vs {} {} ctx {} at {}'.format(
                    np.dtype(arr.dtype).name, arr.ctx, i, np.dtype(gtarr.dtype).name,
                    getattr(gtarr, 'ctx', 'numpy'), gt_idx, name), err)
    return gt


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Check that a HybridBlock gives the same outputs (and input gradients) imperatively and
    hybridized.

    Parameters
    ----------
    net_builder : callable
        ``net_builder(prefix='net_')`` builds the block (it must not draw random numbers).
    data_l : list of NDArray
        The inputs.
    numpy_func : callable, optional
        A numpy reference of the block: ``numpy_func(*numpy inputs)``.
    test_grad : bool
        Whether to compare the gradients of the inputs too (head gradient: the output).
    rtol, atol : float
    """
    saved_out_np = None
    saved_grad_np_l = None
    params_init = None
    use_autograd_flags = [False, True] if test_grad else [False]
    for hybridize in [False, True]:
        for use_autograd in use_autograd_flags:
            net = net_builder(prefix='net_')
            if params_init is None:
                net.initialize()
            else:
                net.initialize(params_init)
            if hybridize:
                net.hybridize()
            in_data_l = [ele.copy() for ele in data_l]
            if use_autograd:
                for ele in in_data_l:
                    ele.attach_grad()
                with autograd.record():
                    out = net(*in_data_l)
                out.backward(out)
            else:
                out = net(*in_data_l)
            if params_init is None:
                params_init = _ValuesByName({k: v.data().asnumpy()
                                             for k, v in net.collect_params().items()})
            if saved_out_np is None:
                saved_out_np = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out_np, rtol=rtol, atol=atol)
            if use_autograd:
                if saved_grad_np_l is None:
                    saved_grad_np_l = [ele.grad.asnumpy() for ele in in_data_l]
                else:
                    for data, saved_grad_np in zip(in_data_l, saved_grad_np_l):
                        assert_almost_equal(data.grad.asnumpy(), saved_grad_np,
                                            rtol=rtol, atol=atol)
    if numpy_func is not None:
        numpy_out = numpy_func(*[ele.asnumpy() for ele in data_l])
        assert_almost_equal(saved_out_np, numpy_out, rtol=rtol, atol=atol)


class _ValuesByName(Initializer):
    """Initializes every parameter with the numpy value saved under its name (also those
    with an initializer of their own, which the first build used)."""

    def __init__(self, values):
        super().__init__()
        self._values = values

    def __call__(self, desc, arr):
        arr[()] = self._values[str(desc)]

    def _init_weight(self, name, arr):
        arr[()] = self._values[str(name)]


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default',
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Check that two optimizers make the same update (states too, with compare_states).

    With a list of shapes, ``opt2`` updates the ``ntensors`` arrays in one multi-tensor call
    and ``opt1`` one at a time.
    """
    ctx = default_context()
    if not isinstance(shape, list):
        assert ntensors == 1
        for stype in (w_stype, g_stype):
            if stype in ('row_sparse', 'csr'):
                check_stype(stype, 'compare_optimizer')      # refuses them
            if stype != 'default':
                raise Exception('type not supported yet')
        w2 = nd.random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        w1 = w2.copyto(ctx)
        g2 = nd.random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        g1 = g2.copyto(ctx)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(nd.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(nd.random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2 = tuple(w.copy() for w in w1)
    g2 = tuple(g.copy() for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
