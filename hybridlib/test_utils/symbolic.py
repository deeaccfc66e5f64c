"""Running symbols through ``bind``/``simple_bind``: forward, backward, finite differences
(``check_numeric_gradient``, ``check_symbolic_forward``/``backward``) and timing.
"""
import time
from collections import OrderedDict

import numpy as np

from .. import ndarray as nd
from .. import symbol as _sym
from ..base import MXNetAssertionError, check_stype
from .compare import assert_almost_equal
from .tolerances import default_context, default_dtype, default_numeric_eps, get_tolerance

__all__ = ['simple_forward', 'numeric_grad', 'check_numeric_gradient', 'check_symbolic_forward',
           'check_symbolic_backward', 'check_speed']


_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _sorted_items(d):
    """The (key, value) pairs of ``d`` sorted by key (a deterministic order)."""
    return sorted(d.items(), key=lambda t: t[0])


def _sorted_dict(d):
    return OrderedDict(_sorted_items(d))


def _is_asnumpy(dtype):
    return isinstance(dtype, str) and dtype == 'asnumpy'


def _check_dtype(dtype, allow_asnumpy=True):
    if allow_asnumpy and _is_asnumpy(dtype):
        return
    assert np.dtype(dtype) in _FLOATS, \
        'dtype must be float16, float32 or float64%s, got %r' % (
            " or 'asnumpy'" if allow_asnumpy else '', dtype)


def _assign(target, value):
    """``target[:] = value``, also for 0-d arrays."""
    if target.ndim == 0:
        target[()] = value
    else:
        target[:] = value


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """The outputs of ``sym`` (numpy arrays; one array for one output) for numpy inputs given
    by name."""
    ctx = ctx or default_context()
    inputs = {k: nd.array(v) for k, v in inputs.items()}
    exe = sym.bind(ctx, args=inputs)
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    if len(outputs) == 1:
        outputs = outputs[0]
    return outputs


def _parse_location(sym, location, ctx, dtype=default_dtype()):
    """``location`` (list in ``list_arguments()`` order, or dict) as a sorted dict of NDArrays
    on ``ctx`` (of ``dtype``, or of each numpy array's dtype for 'asnumpy')."""
    assert isinstance(location, (dict, list, tuple))
    _check_dtype(dtype)
    if isinstance(location, dict):
        if set(location.keys()) != set(sym.list_arguments()):
            raise ValueError('Symbol arguments and keys of the given location do not match.'
                             'symbol args:%s, location.keys():%s'
                             % (str(set(sym.list_arguments())), str(set(location.keys()))))
    else:
        location = dict(zip(sym.list_arguments(), location))
    location = {k: nd.array(v, ctx=ctx, dtype=v.dtype if _is_asnumpy(dtype) else dtype)
                if isinstance(v, np.ndarray) else v for k, v in location.items()}
    return _sorted_dict(location)


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """``aux_states`` (list in ``list_auxiliary_states()`` order, or dict) as a dict of
    NDArrays on ``ctx``; None stays None."""
    _check_dtype(dtype)
    if aux_states is None:
        return None
    if isinstance(aux_states, dict):
        if set(aux_states.keys()) != set(sym.list_auxiliary_states()):
            raise ValueError('Symbol aux_states names and given aux_states do not match.'
                             'symbol aux_names:%s, aux_states.keys:%s'
                             % (str(set(sym.list_auxiliary_states())),
                                str(set(aux_states.keys()))))
    elif isinstance(aux_states, (list, tuple)):
        aux_states = dict(zip(sym.list_auxiliary_states(), aux_states))
    return {k: nd.array(v, ctx=ctx, dtype=v.dtype if _is_asnumpy(dtype) else dtype)
            for k, v in aux_states.items()}


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=default_dtype()):
    """The gradient of the sum of the executor's first output by central differences.

    Parameters
    ----------
    executor : Executor
        A bound symbol; its arguments named in ``location`` are overwritten.
    location : dict of str to numpy.ndarray
        The point: a value for every argument (the arrays are rebound in the dict as
        C-ordered arrays and restored after use). Non-float arguments are not differentiated.
    aux_states : dict of str to numpy.ndarray, optional
        Auxiliary states, restored before each forward pass.
    eps : float
        The step: each element is moved by +eps/2 and -eps/2.
    use_forward_train : bool
        Whether the forward passes run in training mode.
    dtype : np.float16, np.float32 or np.float64
        The dtype of the arrays written to the executor and of the result.

    Returns
    -------
    dict of str to numpy.ndarray
        The gradient of each argument of ``location``.
    """
    _check_dtype(dtype, allow_asnumpy=False)
    approx_grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    for k, v in location.items():
        _assign(executor.arg_dict[k], nd.array(v, dtype=dtype))
    for k in location:
        location[k] = np.asarray(location[k], order='C')
    for k, v in location.items():
        if v.dtype.kind != 'f':
            continue
        old_value = v.copy()
        flat = v.reshape(-1)    # a view: v is C-ordered
        for i in range(int(np.prod(v.shape))):
            flat[i] += eps / 2.0
            _assign(executor.arg_dict[k], nd.array(v, dtype=dtype))
            if aux_states is not None:
                for key, val in aux_states.items():
                    _assign(executor.aux_dict[key], val)
            executor.forward(is_train=use_forward_train)
            f_peps = executor.outputs[0].asnumpy()

            flat[i] -= eps
            _assign(executor.arg_dict[k], nd.array(v, dtype=dtype))
            if aux_states is not None:
                for key, val in aux_states.items():
                    _assign(executor.aux_dict[key], nd.array(val, dtype=dtype))
            executor.forward(is_train=use_forward_train)
            f_neps = executor.outputs[0].asnumpy()

            approx_grads[k].reshape(-1)[i] = (f_peps - f_neps).sum() / eps
            flat[i] = old_value.reshape(-1)[i]
        _assign(executor.arg_dict[k], nd.array(old_value, dtype=dtype))
    return approx_grads


def _dense_only(stypes, what):
    # the sparse storage types are refused; MXNet ignores any other name
    for name, stype in (stypes or {}).items():
        if stype in ('row_sparse', 'csr'):
            check_stype(stype, '%s (gradient of %r)' % (what, name))


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=default_dtype()):
    """Check the gradients of ``sym`` against finite differences.

    The outputs (one) are multiplied by a random projection and summed; the gradient of that
    with respect to each checked argument, from ``backward``, must match ``numeric_grad``.

    Parameters
    ----------
    sym : Symbol
        A symbol with one output.
    location : list or dict of numpy.ndarray
        The point: a value for every argument (list in ``sym.list_arguments()`` order).
    aux_states : list or dict of numpy.ndarray, optional
        Values of the auxiliary states.
    numeric_eps : float or dict of dtype -> float, optional
        The finite-difference step (default: ``default_numeric_eps()`` of the output's dtype).
    rtol, atol : float, optional
        Tolerances of the comparison (default: per dtype).
    grad_nodes : list of str or dict of str -> grad_req, optional
        The arguments to check (default: all, with 'write'); with 'add' the gradient is
        checked after subtracting the buffer's initial value, with 'null' the buffer must keep
        its initial value.
    use_forward_train : bool
        Whether the finite-difference forward passes run in training mode.
    ctx : Context, optional
        Where to run (default: ``default_context()``).
    grad_stype_dict : dict, optional
        Storage types of gradients: only 'default' (dense) is supported.
    dtype : np.float16, np.float32 or np.float64
        The dtype of the arrays.
    """
    _check_dtype(dtype, allow_asnumpy=False)
    if ctx is None:
        ctx = default_context()
    _dense_only(grad_stype_dict, 'check_numeric_gradient')

    def random_projection(shape):
        # not too small: too much precision would be lost in the numerical gradient
        return np.random.rand(*shape) + 0.1

    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if aux_states is not None:
        aux_states_npy = {k: v.asnumpy() for k, v in aux_states.items()}
    else:
        aux_states_npy = None
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
        grad_req = {k: 'write' for k in grad_nodes}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: 'write' for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = grad_nodes.copy()
        grad_nodes = grad_nodes.keys()
    else:
        raise ValueError('grad_nodes must be None, a list/tuple of argument names or a dict of '
                         'name -> grad_req, got %r' % (grad_nodes,))

    if len(sym.list_outputs()) != 1:
        raise MXNetAssertionError('check_numeric_gradient needs a symbol with one output; '
                                  'this one has %s' % sym.list_outputs())
    input_shape = {k: v.shape for k, v in location.items()}
    _, out_shape, _ = sym.infer_shape(**input_shape)
    proj = _sym.Variable('__random_proj')
    out = _sym.make_loss(sym * proj)

    location = dict(list(location.items()) +
                    [('__random_proj', nd.array(random_projection(out_shape[0]), ctx=ctx,
                                                dtype=dtype))])
    args_grad_npy = dict([(k, np.random.normal(0, 0.01, size=location[k].shape))
                          for k in grad_nodes]
                         + [('__random_proj', np.random.normal(0, 0.01, size=out_shape[0]))])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in args_grad_npy.items()}

    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad,
                        aux_states=aux_states)
    inps = executor.arg_arrays
    if len(inps) != len(location):
        raise ValueError('Executor arg_arrays and and location len do not match.'
                         'Got %d inputs and %d locations' % (len(inps), len(location)))
    executor.forward(is_train=True)

    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    # finite differences with a small step need a precise dtype
    if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float16)):
        assert eps >= 1e-5

    executor.backward()
    symbolic_grads = executor.grad_dict
    numeric_gradients = numeric_grad(executor, location_npy, aux_states_npy, eps=eps,
                                     use_forward_train=use_forward_train, dtype=dtype)

    for name in grad_nodes:
        _check_grad_buffer(name, grad_req[name], numeric_gradients[name], symbolic_grads[name],
                           args_grad_npy[name], rtol, atol, 'NUMERICAL_%s' % name)


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=default_dtype()):
    """Check the forward outputs of ``sym`` at ``location`` against ``expected``.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of numpy.ndarray
        A value for every argument (list in ``sym.list_arguments()`` order).
    expected : list or dict of numpy.ndarray
        The expected outputs (list in output order, or by ``sym.list_outputs()`` name).
    rtol, atol : float, optional
        Tolerances (default: per dtype).
    aux_states : list or dict of numpy.ndarray, optional
    ctx : Context, optional
    equal_nan : bool
        Whether NaN equals NaN.
    dtype : np.float16, np.float32, np.float64 or 'asnumpy'
        The dtype of the arrays ('asnumpy': each numpy array's own).

    Returns
    -------
    list of NDArray
        The outputs.
    """
    _check_dtype(dtype)
    if ctx is None:
        ctx = default_context()
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad_data = {k: nd.zeros(v.shape, ctx=ctx,
                                  dtype=v.dtype if _is_asnumpy(dtype) else dtype)
                      for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad_data,
                        aux_states=aux_states)
    executor.forward(is_train=False)
    outputs = executor.outputs
    for output_name, expect, output in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(expect, output, rtol, atol,
                            ('EXPECTED_%s' % output_name, 'FORWARD_%s' % output_name),
                            equal_nan=equal_nan)
    return executor.outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req='write', ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=default_dtype()):
    """Check the gradients of ``sym`` at ``location`` for head gradients ``out_grads``.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of numpy.ndarray
        A value for every argument (list in ``sym.list_arguments()`` order).
    out_grads : None, list or dict of numpy.ndarray or NDArray
        The gradients of the outputs (list in output order or by output name).
    expected : list or dict of numpy.ndarray
        The expected gradients (list in argument order, or by argument name); only these
        arguments are checked.
    rtol, atol : float, optional
    aux_states : list or dict of numpy.ndarray, optional
    grad_req : str, list or dict of str
        'write', 'add' (checked after subtracting the buffer's random initial value) or
        'null' (the buffer must keep its initial value).
    ctx : Context, optional
    grad_stypes : dict, optional
        Storage types of gradients: only 'default' (dense) is supported.
    equal_nan : bool
    dtype : np.float16, np.float32, np.float64 or 'asnumpy'

    Returns
    -------
    dict of str to NDArray
        The gradient buffers.
    """
    _check_dtype(dtype)
    if ctx is None:
        ctx = default_context()
    _dense_only(grad_stypes, 'check_symbolic_backward')
    location = _parse_location(sym=sym, location=location, ctx=ctx, dtype=dtype)
    aux_states = _parse_aux_states(sym=sym, aux_states=aux_states, ctx=ctx, dtype=dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))

    # dirty the gradient buffers deterministically, for reproducibility
    args_grad_npy = {k: np.random.normal(size=v.shape) for k, v in _sorted_items(expected)}
    args_grad_data = {k: nd.array(v, ctx=ctx,
                                  dtype=expected[k].dtype if _is_asnumpy(dtype) else dtype)
                      for k, v in args_grad_npy.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))

    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad_data,
                        aux_states=aux_states, grad_req=grad_req)
    executor.forward(is_train=True)

    def as_nd(arr):
        if isinstance(arr, np.ndarray):
            return nd.array(arr, ctx=ctx, dtype=arr.dtype if _is_asnumpy(dtype) else dtype)
        return arr

    if isinstance(out_grads, (tuple, list)):
        out_grads = [as_nd(arr) for arr in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: as_nd(v) for k, v in out_grads.items()}
    else:
        assert out_grads is None
    executor.backward(out_grads)

    for name in expected:
        _check_grad_buffer(name, grad_req[name], expected[name], args_grad_data[name],
                           args_grad_npy[name], rtol, atol, 'EXPECTED_%s' % name, equal_nan)
    return args_grad_data


def _check_grad_buffer(name, req, expected, buffer, initial, rtol, atol, expected_name,
                       equal_nan=False):
    """Check the gradient buffer of argument ``name`` after a backward pass with grad_req
    ``req``: ``expected`` for 'write', ``initial + expected`` for 'add' (the buffer held
    ``initial`` before), ``initial`` untouched for 'null'."""
    names = (expected_name, 'BACKWARD_%s' % name)
    if req == 'write':
        assert_almost_equal(expected, buffer, rtol, atol, names, equal_nan=equal_nan)
    elif req == 'add':
        assert_almost_equal(expected, buffer.asnumpy() - initial, rtol, atol, names,
                            equal_nan=equal_nan)
    elif req == 'null':
        assert_almost_equal(initial, buffer, rtol, atol, names, equal_nan=equal_nan)
    else:
        raise ValueError('Invalid grad_req %s for argument %s' % (req, name))


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ='whole', **kwargs):
    """The mean time in seconds of ``N`` runs of ``sym``: forward and backward
    (``typ='whole'``) or forward only (``typ='forward'``).

    ``location`` (dict of numpy arrays) gives the inputs; without it, shapes come from
    ``kwargs`` and the inputs are standard normal.
    """
    if ctx is None:
        ctx = default_context()
    if grad_req is None:
        grad_req = 'write'
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0)
                    for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), 'Expect dict, get "location"=%s' % str(location)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx,
                              **{k: v.shape for k, v in location.items()})
    for name, iarr in location.items():
        _assign(exe.arg_dict[name], iarr.astype(exe.arg_dict[name].dtype))

    if typ == 'whole':
        def run():
            exe.forward(is_train=True)
            exe.backward(out_grads=exe.outputs)
    elif typ == 'forward':
        def run():
            exe.forward(is_train=False)
    else:
        raise ValueError('typ can only be "whole" or "forward".')
    run()       # warm up
    for output in exe.outputs:
        output.wait_to_read()
    tic = time.time()
    for _ in range(N):
        run()
    nd.waitall()
    return (time.time() - tic) * 1.0 / N
