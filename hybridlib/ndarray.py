"""NDArray: an array on a context, run eagerly, recorded by tape.

An NDArray wraps one numpy (cpu) or cupy (gpu) array. Operators run through ``invoke``, which
checks shapes and dtypes with the operator's own inference (so errors read like MXNet's and
name the operator), runs ``compute(xp, ...)``, and records the call on the autograd tape when
recording. The operator functions of this module (``nd.FullyConnected``, ``nd.contrib.*``,
``nd.random.*``, ...) are generated from the registry at the end of this file; the methods
shared with Symbol live in ``methods.py``.
"""
import builtins      # nd.slice, nd.sum, ... are module globals here: builtins.slice
import ctypes
import os
import sys

import numpy as np

from . import codec, numpy_compat, profiler, serialization, tape
from .base import DEFAULT_DTYPE, MXNetAssertionError, MXNetError, check_stype, np_dtype
from .context import (Context, context_of_array, cpu, current_context, gpu, sync_devices,
                      transfer)
from .methods import ArrayMethods, binary_functions
from .ops import frontend, registry

__all__ = ['NDArray', 'array', 'empty', 'full', 'invoke', 'invoke_all', 'waitall', 'save',
           'load', 'load_frombuffer', 'concatenate', 'from_numpy', 'from_dlpack',
           'to_dlpack_for_read', 'to_dlpack_for_write']


class NDArray(ArrayMethods):
    """An n-dimensional array on a context (as ``mxnet.nd.NDArray``)."""
    __slots__ = ('_data', '_ctx', '_entry', '_grad', '_fresh_grad', '__weakref__')
    _is_hybrid_value = True
    # numpy defers to our reflected operators: np.float32(2) * x is an NDArray
    __array_ufunc__ = None
    __array_priority__ = 1000.0

    def __init__(self, data, ctx=None):
        self._data = data
        self._ctx = ctx if ctx is not None else context_of_array(data)
        self._entry = None      # (autograd node, output index) while recorded
        self._grad = None
        self._fresh_grad = False

    # -- attributes -------------------------------------------------------------------------------
    @property
    def shape(self):
        return self._data.shape

    @property
    def dtype(self):
        """The numpy scalar type (``numpy.float32``), as MXNet returns it."""
        return self._data.dtype.type

    @property
    def context(self):
        return self._ctx

    ctx = context

    @property
    def size(self):
        return int(self._data.size)

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def stype(self):
        return 'default'

    @property
    def grad(self):
        """The gradient buffer attached by ``attach_grad`` (None without one)."""
        return self._grad

    @property
    def writable(self):
        return True

    def _known_shape(self):
        return self._data.shape

    def _known_dtype(self):
        return self._data.dtype

    # -- conversion -------------------------------------------------------------------------------
    def asnumpy(self):
        """A numpy copy of the data (under the mxnet alias, a one-element array converts to a
        number as in numpy 1.x: ``numpy_compat.py``)."""
        if isinstance(self._data, np.ndarray):
            return numpy_compat.legacy_view(self._data.copy())
        return numpy_compat.legacy_view(self._data.get())

    def asscalar(self):
        """The one element of a size-1 array, as a numpy scalar."""
        if self.size != 1:
            raise ValueError(f'asscalar() needs an array of size 1, not of shape {self.shape}')
        return self.asnumpy().reshape(-1)[0]

    def to_dlpack_for_read(self):
        """A DLPack capsule viewing this array's memory (see ``nd.to_dlpack_for_read``)."""
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        """A DLPack capsule viewing this array's memory (see ``nd.to_dlpack_for_write``)."""
        return to_dlpack_for_write(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack protocol: ``np.from_dlpack(x)``, ``torch.from_dlpack(x)`` view x's memory."""
        # only what the caller gave, so that exporters older than DLPack 1.0 still accept it
        given = {'max_version': max_version, 'dl_device': dl_device, 'copy': copy}
        return self._data.__dlpack__(stream=stream,
                                     **{k: v for k, v in given.items() if v is not None})

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __array__(self, dtype=None, copy=None):
        data = self.asnumpy()
        return data if dtype is None else data.astype(dtype, copy=False)

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __bool__(self):
        if self.size == 1:
            return bool(self.asscalar())
        if self.size == 0:
            return False
        raise ValueError('The truth value of an NDArray with multiple elements is ambiguous.')

    def __len__(self):
        if self.ndim == 0:
            raise TypeError('len() of a 0-d NDArray')
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def copy(self):
        """A copy on the same context."""
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into the NDArray ``other`` (returned), or to a new array on context ``other``."""
        if isinstance(other, Context):
            return self._apply_copy(other)
        if isinstance(other, NDArray):
            if other is self:
                raise MXNetError('copyto: source and destination are the same array')
            if other.shape != self.shape:
                raise MXNetError(f'copyto: shape {self.shape} into shape {other.shape}')
            other._check_writable('copyto')
            other._data[...] = _to_module(self._data, other._ctx)
            return other
        raise TypeError(f'copyto() takes an NDArray or a Context, not {type(other).__name__}')

    def as_in_context(self, context):
        """This array on ``context``: itself when already there, else a copy."""
        if context == self._ctx:
            return self
        return self._apply_copy(context)

    def _apply_copy(self, ctx):
        return invoke_all(registry.get('_copyto'), [self], registry.Params(ctx=ctx))[0]

    def as_nd_ndarray(self):
        return self

    def _reshape_op(self, op_name, attrs, inplace):
        if inplace and not tape.is_recording():
            # the operator's own shape inference (and its errors), then a view: no copy made
            op = registry.get(op_name)
            shape = op.infer_shapes(op.parse_attrs(attrs), [self.shape])[1][0]
            return NDArray(self._data.reshape(shape), self._ctx)
        return super()._reshape_op(op_name, attrs, inplace)

    def tostype(self, stype):
        """This array in storage ``stype``: only 'default' (dense) exists here."""
        check_stype(stype, 'tostype')
        return self

    def wait_to_read(self):
        """Block until pending work on this array is done (a stream sync on a GPU)."""
        if self._ctx.device_type == 'gpu':
            self._ctx.array_module.cuda.get_current_stream().synchronize()

    wait_to_write = wait_to_read

    # -- autograd ----------------------------------------------------------------------------------
    def attach_grad(self, grad_req='write', stype=None):
        """Allocate a zero gradient buffer and mark this array as a variable for tape."""
        check_stype(stype, 'attach_grad')
        grad = NDArray(self._ctx.array_module.zeros_like(self._data), self._ctx)
        tape.mark_variables([self], [grad], grad_req)

    def detach(self):
        """The same data, cut off from the autograd graph."""
        return NDArray(self._data, self._ctx)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Gradients of this array with respect to the marked variables."""
        tape.backward([self], None if out_grad is None else [out_grad], retain_graph,
                      train_mode, _OPS)

    # -- hooks for methods.py -------------------------------------------------------------------
    def _apply(self, op_name, inputs, attrs, hint):
        op = registry.get(op_name)
        params = op.parse_attrs(attrs)
        outs = invoke_all(op, inputs, params)
        n = op.num_visible_outputs(params)
        return outs[0] if n == 1 else outs[:n]

    @classmethod
    def _function(cls, op_name):
        return getattr(_OPS, op_name)

    def _coerce(self, other):
        if isinstance(other, np.ndarray):
            return array(other, ctx=self._ctx, dtype=self.dtype)
        return super()._coerce(other)

    # -- in-place arithmetic: writes into this array's buffer -----------------------------------
    def _inplace(self, result, what):
        self._check_writable(what)
        self._data[...] = result._data
        return self

    def __iadd__(self, other):
        return self._inplace(self + other, '+=')

    def __isub__(self, other):
        return self._inplace(self - other, '-=')

    def __imul__(self, other):
        return self._inplace(self * other, '*=')

    def __itruediv__(self, other):
        return self._inplace(self / other, '/=')

    def __imod__(self, other):
        return self._inplace(self % other, '%=')

    def _check_writable(self, what):
        if tape.is_recording() and self._entry is not None:
            raise MXNetError(
                f'{what}: assigning to an NDArray that is already in a computational graph '
                f'(shape {self.shape}) makes its gradients wrong. Call backward first, or do '
                'this outside tape.record().')

    # -- indexing ---------------------------------------------------------------------------------
    def __getitem__(self, key):
        key = _unwrap_index(key)
        if _is_basic(key):
            if tape.is_recording() and self._entry is not None:
                return self._index_with_ops(key, self.ndim)
            data = self._data[key]
            if data.ndim == 0 and self.ndim > 0:
                # MXNet: a scalar result has shape (1,) and is a view, as every basic index
                # is (``x[0] += 1`` writes to x); numpy's scalar would be a copy
                data = self._data[(key if isinstance(key, tuple) else (key,)) + (None,)]
            return NDArray(data, self._ctx)
        if tape.is_recording() and self._entry is not None:
            return self._advanced_index_with_ops(key)
        return NDArray(self._data[key], self._ctx)

    def _advanced_index_with_ops(self, key):
        """Advanced indexing as ``gather_nd`` so that autograd sees it."""
        xp = self._ctx.array_module
        if not isinstance(key, tuple):
            key = (key,)
        grids = []
        for axis, k in enumerate(key):
            if isinstance(k, builtins.slice):
                k = xp.arange(*k.indices(self.shape[axis]))
            grids.append(xp.asarray(k))
        if any(isinstance(k, builtins.slice) for k in key) and len(grids) > 1:
            raise MXNetError('indexing that mixes slices and index arrays is not recorded by '
                             'autograd; index with arrays on the leading axes only')
        bcast = xp.broadcast_arrays(*grids)
        indices = array(xp.stack(bcast), ctx=self._ctx, dtype='int64')
        return self._apply('gather_nd', [self, indices], {}, 'gather_nd')

    def __setitem__(self, key, value):
        self._check_writable('x[...] = value')
        key = _unwrap_index(key)
        if isinstance(value, NDArray):
            value = _to_module(value._data, self._ctx)
        elif isinstance(value, np.ndarray) and self._ctx.device_type == 'gpu':
            value = self._ctx.array_module.asarray(value)
        try:
            self._data[key] = value
        except ValueError:
            if not getattr(value, 'ndim', 0):
                raise
            # only where the plain write fails: nothing is added to the usual x[...] = y
            self._data[key] = _fit_value(value, self._data[key].shape)

    # -- printing and pickling ------------------------------------------------------------------
    def __repr__(self):
        shape = 'x'.join(str(d) for d in self.shape)
        return f'\n{self.asnumpy()}\n<{type(self).__name__} {shape} @{self._ctx}>'

    __str__ = __repr__

    def __getstate__(self):
        return {'data': self.asnumpy(), 'ctx': (self._ctx.device_type, self._ctx.device_id)}

    def __setstate__(self, state):
        ctx = Context(*state['ctx'])
        self.__init__(_to_module(state['data'], ctx), ctx)

    def __reduce__(self):
        return (_rebuild, (self.__getstate__(),))


def _fit_value(value, target):
    """``value`` without the leading axes of length 1 that the region it is written into
    lacks: MXNet writes ``c[0] = a[0] + a[1]`` (a shape-(1,) array into one element)."""
    extra = value.ndim - len(target)
    if extra > 0 and all(d == 1 for d in value.shape[:extra]):
        return value.reshape(value.shape[extra:])
    return value


def _rebuild(state):
    arr = NDArray.__new__(NDArray)
    arr.__setstate__(state)
    return arr


def _unwrap_index(key):
    if isinstance(key, NDArray):
        return key._data.astype('int64')
    if isinstance(key, tuple):
        return tuple(k._data.astype('int64') if isinstance(k, NDArray) else k for k in key)
    if isinstance(key, list):
        return np.asarray(key)
    return key


def _is_basic(key):
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (builtins.slice, int, np.integer))
               and not isinstance(k, bool) for k in items)


def _to_module(data, ctx):
    """``data`` as an array of ``ctx``'s module (a copy across devices, else as is)."""
    return transfer(data, ctx, copy=False)


# -------------------------------------------------------------------------------------------------
# Running operators
# -------------------------------------------------------------------------------------------------

def _common_context(op, a, b):
    """Pinned and shared host memory is host memory: it mixes with cpu (the result is on cpu);
    anything else on different contexts is an error."""
    host = ('cpu_pinned', 'cpu_shared')
    if a.device_type in host and b.device_type in host + ('cpu',):
        return b if b.device_type == 'cpu' else Context('cpu', 0)
    if b.device_type in host and a.device_type == 'cpu':
        return a
    raise MXNetError(f'operator {op.name}: inputs are on different contexts ({a} and {b}); '
                     'move them with as_in_context')


def invoke_all(op, inputs, params, is_train=None):
    """Run ``op`` on NDArrays; returns all its outputs (hidden ones included) as NDArrays."""
    names = op.list_inputs(params) if op.variadic is None else None
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            label = names[i] if names else f'arg{i}'
            if x is None:
                raise MXNetError(f'operator {op.name}: input {label!r} is required')
            raise TypeError(f'operator {op.name}: input {label!r} must be an NDArray, '
                            f'got {type(x).__name__}')
    if inputs:
        ctx = inputs[0]._ctx
        for x in inputs[1:]:
            if x._ctx != ctx:
                ctx = _common_context(op, ctx, x._ctx)
    else:
        ctx = current_context()
    # an operator's ``ctx`` attribute (creation ops, _copyto) says where its outputs live
    ctx = params.get('ctx') or ctx
    datas = [x._data for x in inputs]
    op.infer_shapes(params, [d.shape for d in datas])
    op.infer_types(params, [d.dtype for d in datas])
    train = {}
    if op.train_aware:
        train['is_train'] = tape.is_training() if is_train is None else is_train
        is_train = train['is_train']
    if profiler.active.imperative:      # timed; when off, this check is all it costs
        with ctx.device_scope():
            result = profiler.timed_call(op.name, ctx, op.compute, ctx.array_module, params,
                                         *datas, **train)
    elif ctx.device_type == 'gpu':      # cupy allocates and runs on ctx's device
        with ctx.device_scope():
            result = op.compute(ctx.array_module, params, *datas, **train)
    else:
        result = op.compute(ctx.array_module, params, *datas, **train)
    if not isinstance(result, tuple):
        result = (result,)
    outs = [NDArray(r, ctx) for r in result]
    if tape.is_recording() and any(x._entry is not None for x in inputs):
        tape.record_op(op, params, inputs, outs, bool(is_train))
    return outs


def invoke(op, inputs, params, given=None, hint=None, out=None, name=None):
    """Run ``op`` for a generated ``nd.*`` function: the visible outputs, written to ``out``."""
    if out is not None and not inputs and 'shape' in op.attrs and not params.get('shape'):
        # nd.random.uniform(-1, 1, out=w) (Gluon's initializers): the shape and dtype of out
        target = out[0] if isinstance(out, (list, tuple)) else out
        params = registry.Params(params, shape=target.shape)
        if 'dtype' in op.attrs and params.get('dtype') is None:
            params['dtype'] = np.dtype(target.dtype)
    if isinstance(out, NDArray) and op.writes_into:
        written = _invoke_into(op, inputs, params, out)
        if written is not None:
            return written
    outs = invoke_all(op, inputs, params)
    visible = outs[:op.num_visible_outputs(params)]
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        if len(targets) != len(visible):
            raise MXNetError(f'operator {op.name}: out= has {len(targets)} arrays for '
                             f'{len(visible)} outputs')
        for t, v in zip(targets, visible):
            if t.shape != v.shape:
                raise MXNetError(f'operator {op.name}: out= has shape {t.shape}, '
                                 f'the result has shape {v.shape}')
            t._check_writable('out=')
            t._data[...] = v._data
        return out
    return visible[0] if len(visible) == 1 else visible


def _invoke_into(op, inputs, params, out):
    """``op`` written straight into ``out`` by its body (an optimizer's
    ``out=weight``), when nothing is recorded and ``out`` has the result's shape, dtype and
    context; None otherwise (the caller computes and copies)."""
    if tape.is_recording() or op.num_outputs(params) != 1 or \
            not all(isinstance(x, NDArray) for x in inputs):
        return None
    ctx = out._ctx
    if any(x._ctx is not ctx and x._ctx != ctx for x in inputs):
        return None
    datas = [x._data for x in inputs]
    _, shapes = op.infer_shapes(params, [d.shape for d in datas])
    _, dtypes = op.infer_types(params, [d.dtype for d in datas])
    if tuple(shapes[0]) != out.shape or dtypes[0] != out._data.dtype or \
            dtypes[0].kind != 'f' or not out._data.flags.c_contiguous:
        return None     # (a body may write through a reshaped view of out)
    xp = ctx.array_module
    inplace = {i for i, k in op.inplace if k == 0}
    if any(i not in inplace and xp.may_share_memory(d, out._data) for i, d in enumerate(datas)):
        return None     # a body may write out before it has read that input
    out._check_writable('out=')
    train = {'is_train': tape.is_training()} if op.train_aware else {}
    with ctx.device_scope():
        if profiler.active.imperative:  # timed; when off, this check is all it costs
            profiler.timed_call(op.name, ctx, op.compute, xp, params, *datas, out=out._data,
                                **train)
        else:
            op.compute(xp, params, *datas, out=out._data, **train)
    return out


# -------------------------------------------------------------------------------------------------
# Creation and module-level functions
# -------------------------------------------------------------------------------------------------

def array(source_array, ctx=None, dtype=None):
    """An NDArray from a nested list, a numpy/cupy array or an NDArray.

    The dtype is ``source_array.dtype`` for an NDArray source and float32 otherwise, as in
    MXNet (``nd.array(np.arange(3))`` is float32).
    """
    if isinstance(source_array, NDArray):
        dtype = source_array.dtype if dtype is None else dtype
        source = source_array._data
    else:
        source = source_array
    dtype = np_dtype(DEFAULT_DTYPE if dtype is None else dtype)
    ctx = ctx or current_context()
    xp = ctx.array_module
    if xp is np:
        if not isinstance(source, np.ndarray) and hasattr(source, 'get'):
            source = source.get()
        data = np.array(source, dtype=dtype)
    else:
        with xp.cuda.Device(ctx.device_id):
            data = xp.array(source, dtype=dtype)
    return NDArray(data, ctx)


def from_numpy(ndarray, zero_copy=True):
    """An NDArray on cpu sharing memory with a C-contiguous numpy array (when zero_copy)."""
    if zero_copy and isinstance(ndarray, np.ndarray) and ndarray.flags.c_contiguous:
        return NDArray(ndarray, Context('cpu', 0))
    return array(ndarray, dtype=ndarray.dtype)


# -------------------------------------------------------------------------------------------------
# DLPack: sharing memory with numpy, cupy, torch, ... without a copy
# -------------------------------------------------------------------------------------------------

def to_dlpack_for_read(data):
    """A DLPack capsule (named ``"dltensor"``) viewing ``data``'s memory once pending writes
    are done; ``from_dlpack`` here, ``torch.utils.dlpack.from_dlpack`` or ``cupy.from_dlpack``
    take it, once. Writes through the consumer are writes to ``data``."""
    data.wait_to_read()
    return data._data.__dlpack__()


def to_dlpack_for_write(data):
    """As ``to_dlpack_for_read``, once pending reads and writes are done (the consumer may
    write)."""
    data.wait_to_write()
    return data._data.__dlpack__()


def from_dlpack(dlpack):
    """An NDArray sharing memory with ``dlpack``: an object with ``__dlpack__`` (numpy, cupy or
    torch arrays, NDArrays) or a DLPack capsule, which this consumes (it can be used once).

    The context follows the memory's device: cpu(0), or gpu(i) for CUDA device i. Strided
    (non-contiguous) sources are viewed with their strides, as ``numpy.from_dlpack`` does.
    """
    if type(dlpack).__name__ == 'PyCapsule':
        dlpack = _DLPackCapsule(dlpack)
    elif not hasattr(dlpack, '__dlpack__'):
        raise TypeError(f'from_dlpack takes a DLPack capsule or an object with __dlpack__ '
                        f'(numpy, cupy or torch arrays), not {type(dlpack).__name__}')
    device_type, device_id = dlpack.__dlpack_device__()
    if device_type in _DLPACK_HOST:
        data = np.from_dlpack(dlpack)
        if isinstance(dlpack, _DLPackCapsule) and dlpack.legacy and not data.flags.writeable:
            data = np.asarray(_Writable(data))
        return NDArray(data)
    if device_type == _DLPACK_CUDA:
        xp = gpu(device_id).array_module
        with xp.cuda.Device(device_id):
            return NDArray(xp.from_dlpack(dlpack))
    raise MXNetError(f'from_dlpack: memory on DLPack device type {int(device_type)} is neither '
                     'host nor CUDA memory; copy it to the cpu or a CUDA gpu first')


_DLPACK_HOST = (1, 3)       # kDLCPU, kDLCUDAHost (pinned memory)
_DLPACK_CUDA = 2            # kDLCUDA

_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ('PyCapsule_IsValid', ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ('PyCapsule_GetPointer', ctypes.pythonapi))
_POINTER = ctypes.sizeof(ctypes.c_void_p)
# where the DLDevice (two int32) sits in what each kind of capsule points to: after the data
# pointer of DLManagedTensor's DLTensor; DLManagedTensorVersioned puts a version, manager
# context, deleter and flags before its DLTensor
_DEVICE_OFFSETS = {b'dltensor': _POINTER, b'dltensor_versioned': 8 + 3 * _POINTER + 8}


class _DLPackCapsule:
    """A bare DLPack capsule with the protocol's methods, so ``xp.from_dlpack`` takes it
    (numpy 2 no longer takes capsules themselves)."""

    def __init__(self, capsule):
        for name, offset in _DEVICE_OFFSETS.items():
            if _capsule_is_valid(capsule, name):
                address = _capsule_pointer(capsule, name) + offset
                self._device = tuple((ctypes.c_int32 * 2).from_address(address))
                self._capsule = capsule
                self.legacy = name == b'dltensor'
                return
        if any(_capsule_is_valid(capsule, b'used_' + name) for name in _DEVICE_OFFSETS):
            raise MXNetAssertionError('Invalid DLPack Tensor. DLTensor capsules can be '
                                      'consumed only once; export the array again.')
        raise TypeError('from_dlpack: this PyCapsule is not a DLPack tensor (its name is '
                        'neither "dltensor" nor "dltensor_versioned")')

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


class _Writable:
    """A writable view of ``array`` for ``np.asarray``. DLPack before 1.0 cannot mark memory
    read-only, so numpy imports such capsules read-only; MXNet's and torch's are writable by
    contract (``to_dlpack_for_write``), and numpy's legacy export refuses read-only arrays."""

    def __init__(self, array):
        self.base = array           # keeps the import, and through it the capsule, alive
        interface = array.__array_interface__
        self.__array_interface__ = dict(interface, data=(interface['data'][0], False))


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array (zeros here: numpy's empty would leak stale data into tests)."""
    check_stype(stype, 'empty')
    if isinstance(shape, int):
        shape = (shape,)
    ctx = ctx or current_context()
    xp = ctx.array_module
    return NDArray(xp.zeros(shape, dtype=np_dtype(dtype or DEFAULT_DTYPE)), ctx)


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of ``shape`` filled with zeros (``stype`` 'default' only)."""
    check_stype(stype, 'zeros')
    return _OPS._zeros(shape=shape, ctx=ctx, dtype=dtype or DEFAULT_DTYPE, **kwargs)


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Decode an image into a float32 (1, channels, h, w) array (MXNet's deprecated helper;
    ``mx.image.imdecode`` returns (h, w, channels) uint8).

    ``clip_rect`` (x0, y0, x1, y1) keeps a rectangle ((0, 0, 0, 0): all of it), ``channels=1``
    decodes to grey, ``mean`` (channels, h, w) is subtracted, and with ``out`` (c, h, w) or
    (n, c, h, w) the result is written there (at ``out[index]``) and ``out`` returned. MXNet
    1.9.1's own version fails on every image; this is what its documentation describes.
    """
    pixels = codec.decode(bytes(str_img), flag=0 if channels == 1 else 1, what='imdecode')
    x0, y0, x1, y1 = clip_rect
    if x1 > x0 and y1 > y0:
        pixels = pixels[y0:y1, x0:x1]
    result = pixels.transpose(2, 0, 1).astype(np.float32)
    if mean is not None:
        result = result - (mean.asnumpy() if isinstance(mean, NDArray) else np.asarray(mean))
    if out is None:
        return array(result[None], dtype=np.float32)
    (out[index] if out.ndim == 4 else out)[:] = result
    return out


def onehot_encode(indices, out):
    """Write the one-hot rows of ``indices`` into ``out`` (N, depth) and return it (MXNet's
    deprecated helper; ``one_hot`` returns a new array)."""
    out[:] = _OPS.one_hot(indices, depth=out.shape[1], dtype=np.dtype(out.dtype).name)
    return out


def full(shape, val, ctx=None, dtype=None, out=None):
    """An array of ``shape`` filled with ``val`` (MXNet's signature for ``_full``)."""
    return _OPS._full(shape=shape, value=float(val), ctx=ctx, dtype=dtype or DEFAULT_DTYPE,
                      out=out)


def concatenate(arrays, axis=0, always_copy=True):
    """Join arrays along an existing axis (MXNet's legacy helper; same as ``concat``)."""
    if not arrays:
        raise MXNetError('concatenate needs at least one array')
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return _OPS.Concat(*arrays, dim=axis)


def waitall():
    """Block until all pending work is done (a device sync on GPUs)."""
    sync_devices()


def save_to_bytes(data):
    """The bytes of ``save(fname, data)`` for an NDArray, a list or a str->NDArray dict."""
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        names = list(data)
        arrays = [data[k] for k in names]
        for k in names:
            if not isinstance(k, str):
                raise TypeError(f'save: dict keys must be strings, got {k!r}')
    elif isinstance(data, (list, tuple)):
        names, arrays = [], list(data)
    else:
        raise TypeError(f'save takes an NDArray, a list of NDArrays or a dict of them, '
                        f'not {type(data).__name__}')
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            label = names[i] if names else f'item {i}'
            raise TypeError(f'save: {label} is a {type(a).__name__}, not an NDArray')
    return serialization.dumps_arrays(names, [a.asnumpy() for a in arrays])


def save(fname, data):
    """Save a list or str->NDArray dict in MXNet's ``.params`` binary format (atomically: a
    failed save keeps the old file)."""
    serialization.atomic_write(fname, save_to_bytes(data))


def load(fname):
    """Load what ``save`` (or MXNet's ``mx.nd.save``) wrote: a list or a dict of NDArrays."""
    return load_frombuffer(serialization.read_file(fname), source=os.fspath(fname))


def load_frombuffer(buf, source='<buffer>'):
    """``load`` from bytes in memory; ``source`` names them in errors."""
    names, datas = serialization.loads_arrays(buf, source)
    arrays = [None if d is None else NDArray(d, cpu()) for d in datas]
    return dict(zip(names, arrays)) if names else arrays


globals().update(binary_functions())
_SPACES = frontend.populate(sys.modules[__name__], invoke, extras=('out', 'name'))
_OPS = _SPACES['op']
