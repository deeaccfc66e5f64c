"""Executors over several contexts (``mx.executor_manager``) and the binding they share.

Data-parallel training runs one Executor per context, each on a slice of the batch; the
parameters of all of them are kept equal by summing their gradients. This module holds what
that needs below the Module API:

- ``bind_shared``: ``Symbol.simple_bind`` with MXNet's sharing rules. A bucket of a
  ``BucketingModule`` binds its own graph over the parameter, gradient and auxiliary arrays of
  the default bucket's executor (``shared_exec``), and over the input buffers
  (``shared_buffer``) of all buckets, so that a shorter input reuses the memory of a longer one.
- ``reshape_executor``: ``Executor.reshape``, a new executor for new input shapes that shares
  every array whose size allows it.
- ``_split_input_slice`` (the batch slice of each context by its work load), the loaders that
  copy a batch into those slices, and MXNet's KVStore steps for one process
  (``_create_kvstore``, ``_initialize_kvstore``, ``_update_params``,
  ``_update_params_on_kvstore``, as in MXNet's ``model.py``), which ``Module`` uses.
- ``DataParallelExecutorGroup`` and ``DataParallelExecutorManager``: MXNet's older
  (``FeedForward``-era) classes, thin over the above. ``mx.mod`` has its own, fuller
  ``module.executor_group.DataParallelExecutorGroup`` built on the same binding.
"""
import logging
import os

import numpy as np

from . import kvstore as kvs
from . import ndarray as nd
from .base import MXNetAssertionError, MXNetError, NotSupportedError, np_dtype
from .context import cpu
from .executor import Executor
from .io import DataDesc
from .ndarray import NDArray

__all__ = ['bind_shared', 'reshape_executor', 'DataParallelExecutorGroup',
           'DataParallelExecutorManager']


# -------------------------------------------------------------------------------------------------
# Binding with shared arrays
# -------------------------------------------------------------------------------------------------

def _grad_req_dict(grad_req, arg_names):
    if isinstance(grad_req, str):
        return {name: grad_req for name in arg_names}
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise MXNetError(f'grad_req: {len(grad_req)} requirements for {len(arg_names)} '
                             f'arguments {arg_names}')
        return dict(zip(arg_names, grad_req))
    if isinstance(grad_req, dict):
        return {name: grad_req.get(name, 'null') for name in arg_names}
    raise TypeError(f'grad_req must be a str, a list or a dict, got {type(grad_req).__name__}')


def _check_group2ctx(ctx, group2ctx):
    """hybridlib runs a whole graph on one context: ctx groups are only allowed to name it."""
    if not group2ctx:
        return
    others = {group: c for group, c in group2ctx.items() if c != ctx}
    if others:
        raise NotSupportedError(
            f'group2ctx {others}: hybridlib runs each executor\'s whole graph on its context '
            f'({ctx}) and cannot place ctx_group parts of it on other contexts; leave group2ctxs '
            'unset or map every group to the executor\'s context')


def _view(array, shape):
    """An NDArray of ``shape`` over the first elements of ``array``'s memory."""
    size = int(np.prod(shape, dtype=np.int64))
    return NDArray(array._data.reshape(-1)[:size].reshape(shape), array.context)


def _reshape_or_create(name, shape, dtype, ctx, shared_buffer, logger):
    """The input array ``name`` from ``shared_buffer`` when that holds enough memory of the
    dtype, else a new one that replaces it there (MXNet's ``ReshapeOrCreate``)."""
    if shared_buffer is None:
        return nd.zeros(shape, ctx=ctx, dtype=dtype)
    old = shared_buffer.get(name)
    size = int(np.prod(shape, dtype=np.int64))
    if old is not None and np_dtype(old.dtype) == np_dtype(dtype) and old.context == ctx:
        if size <= old.size:
            return old if old.shape == tuple(shape) else _view(old, shape)
        logger.warning('bucketing: data "%s" has a shape %s, which is larger than already '
                       'allocated shape %s. Need to re-allocate. Consider putting '
                       'default_bucket_key to be the bucket taking the largest input for better '
                       'memory sharing.', name, tuple(shape), old.shape)
    new = nd.zeros(shape, ctx=ctx, dtype=dtype)
    shared_buffer[name] = new
    return new


def _shared_array(what, name, table, shape, dtype):
    array = table.get(name)
    if array is None:
        raise MXNetError(f'bind: the shared executor has no {what} {name!r} to share')
    if array.shape != tuple(shape) or np_dtype(array.dtype) != np_dtype(dtype):
        raise MXNetError(
            f'bind: {what} {name!r} of the shared executor has shape {array.shape} and dtype '
            f'{np_dtype(array.dtype).name}, but this graph needs {tuple(shape)} '
            f'{np_dtype(dtype).name}; shared parameters must have the same shape in every bucket')
    return array


def bind_shared(symbol, ctx, input_shapes, input_types=None, grad_req='write',
                shared_exec=None, shared_arg_names=None, shared_buffer=None, group2ctx=None,
                logger=logging):
    """Bind ``symbol`` with arrays allocated for ``input_shapes``, sharing as MXNet does.

    Parameters
    ----------
    symbol : Symbol
        The graph to bind.
    ctx : Context
        Where its arrays live and it runs.
    input_shapes : dict of str to tuple
        Shapes of the inputs (data and labels); the others are inferred.
    input_types : dict of str to dtype, optional
        Dtypes of the inputs; the others are inferred, float32 when nothing decides them.
    grad_req : str, list of str or dict of str to str
        ``'write'``, ``'add'`` or ``'null'`` for every argument, by position or by name.
    shared_exec : Executor, optional
        The arguments named in ``shared_arg_names`` (parameters) take their arrays and
        gradient arrays from this executor, and the auxiliary states theirs.
    shared_arg_names : list of str, optional
        The parameters, shared with ``shared_exec``.
    shared_buffer : dict of str to NDArray, optional
        Memory for the other arguments (inputs) and their gradients (``'grad of <name>'``),
        shared across binds: an input reuses the buffer of its name when that is large enough,
        otherwise a new array replaces it.
    group2ctx : dict of str to Context, optional
        Only contexts equal to ``ctx`` are supported (see ``NotSupportedError``).

    Returns
    -------
    Executor
    """
    _check_group2ctx(ctx, group2ctx)
    shared_arg_names = set(shared_arg_names or ())
    arg_names = symbol.list_arguments()
    aux_names = symbol.list_auxiliary_states()
    arg_shapes, _, aux_shapes = symbol.infer_shape(**input_shapes)
    if arg_shapes is None:
        partial = symbol.infer_shape_partial(**input_shapes)[0]
        unknown = [n for n, s in zip(arg_names, partial) if not s or 0 in s]
        raise MXNetError(f'bind: the input shapes {dict(input_shapes)} do not determine the '
                         f'shapes of {unknown}; give their shapes too')
    arg_types, _, aux_types = symbol.infer_type_partial(**(input_types or {}))
    arg_types = [t if t is not None else np.float32 for t in arg_types]
    aux_types = [t if t is not None else np.float32 for t in aux_types]
    reqs = _grad_req_dict(grad_req, arg_names)
    args, grads, aux = {}, {}, {}
    for name, shape, dtype in zip(arg_names, arg_shapes, arg_types):
        if shared_exec is not None and name in shared_arg_names:
            args[name] = _shared_array('argument', name, shared_exec.arg_dict, shape, dtype)
            if reqs[name] != 'null':
                shared_grad = shared_exec.grad_dict.get(name)
                grads[name] = (shared_grad if shared_grad is not None
                               else nd.zeros(shape, ctx=ctx, dtype=dtype))
        elif name in shared_arg_names:
            args[name] = nd.zeros(shape, ctx=ctx, dtype=dtype)
            if reqs[name] != 'null':
                grads[name] = nd.zeros(shape, ctx=ctx, dtype=dtype)
        else:
            args[name] = _reshape_or_create(name, shape, dtype, ctx, shared_buffer, logger)
            if reqs[name] != 'null':
                grads[name] = _reshape_or_create('grad of ' + name, shape, dtype, ctx,
                                                 shared_buffer, logger)
    for name, shape, dtype in zip(aux_names, aux_shapes, aux_types):
        if shared_exec is not None:
            aux[name] = _shared_array('auxiliary state', name, shared_exec.aux_dict, shape,
                                      dtype)
        else:
            aux[name] = nd.zeros(shape, ctx=ctx, dtype=dtype)
    return Executor(symbol, ctx, args, grads, reqs, aux)


def _reshaped(what, name, array, shape, given, partial_shaping, allow_up_sizing):
    """``array`` for ``shape``: itself, a view of its memory, or a new array."""
    if shape == array.shape:
        return array
    if not (partial_shaping or given):
        raise MXNetError(
            f'Shape of unspecified array {what}:{name} changed. This can cause the new executor '
            'to not share parameters with the old one. Please check for error in network. If '
            'this is intended, set partial_shaping=True to suppress this warning.')
    if int(np.prod(shape, dtype=np.int64)) > array.size:
        if not allow_up_sizing:
            raise MXNetError(
                f'New shape of {what}: {name} {shape} larger than original {array.shape}. First '
                'making a big executor and then down sizing it is more efficient than the '
                'reverse. If you really want to up size, set allow_up_sizing=True to enable '
                'allocation of new arrays.')
        return nd.zeros(shape, ctx=array.context, dtype=array.dtype)
    return _view(array, shape)


def reshape_executor(executor, partial_shaping=False, allow_up_sizing=False, **kwargs):
    """A new Executor of ``executor``'s graph for new input shapes (``Executor.reshape``).

    Arrays whose shape is unchanged are the same arrays; smaller ones are views of the old
    memory; larger ones are new, which needs ``allow_up_sizing``. An array whose shape changes
    without being named in ``kwargs`` is an error unless ``partial_shaping``.
    """
    symbol = executor._symbol
    arg_shapes, _, aux_shapes = symbol.infer_shape(**kwargs)
    if arg_shapes is None:
        raise MXNetError(f'reshape: the shapes {kwargs} do not determine every shape of the '
                         'graph; give the shapes of all inputs')
    args, grads, aux = {}, {}, {}
    for name, shape in zip(symbol.list_arguments(), arg_shapes):
        given = name in kwargs
        args[name] = _reshaped('arg', name, executor.arg_dict[name], shape, given,
                               partial_shaping, allow_up_sizing)
        grad = executor.grad_dict.get(name)
        if grad is not None:
            grads[name] = _reshaped('arg', name, grad, shape, given, partial_shaping,
                                    allow_up_sizing)
    for name, shape in zip(symbol.list_auxiliary_states(), aux_shapes):
        aux[name] = _reshaped('aux', name, executor.aux_dict[name], shape, False,
                              partial_shaping, allow_up_sizing)
    return Executor(symbol, executor._ctx, args, grads, executor._grad_req, aux)


def executor_bytes(executor):
    """The memory, in MB, of the arrays an executor holds (its ``debug_str`` total)."""
    arrays = {id(a): a for a in list(executor.arg_dict.values()) +
              list(executor.grad_dict.values()) + list(executor.aux_dict.values())
              if a is not None}
    total = sum(a.size * np.dtype(a.dtype).itemsize for a in arrays.values())
    return total >> 20


# -------------------------------------------------------------------------------------------------
# Slicing a batch across contexts
# -------------------------------------------------------------------------------------------------

def _copy_averaged(names, blocks, targets):
    """Copy each block (a parameter's arrays, one per context), averaged on the CPU, into
    ``targets[name]`` in its dtype."""
    for name, block in zip(names, blocks):
        weight = sum(w.copyto(cpu()) for w in block) / len(block)
        weight.astype(targets[name].dtype).copyto(targets[name])


def _split_input_slice(batch_size, work_load_list):
    """The slice of a batch of ``batch_size`` that each context takes, in proportion to its
    work load (the last one takes what rounding leaves)."""
    total_work_load = sum(work_load_list)
    batch_num_list = [round(work_load * batch_size / total_work_load)
                      for work_load in work_load_list]
    batch_num_sum = sum(batch_num_list)
    if batch_num_sum < batch_size:
        batch_num_list[-1] += batch_size - batch_num_sum
    slices = []
    end = 0
    for batch_num in batch_num_list:
        begin = int(min((end, batch_size)))
        end = int(min((begin + batch_num, batch_size)))
        if begin >= end:
            raise ValueError('Too many slices. Some splits are empty.')
        slices.append(slice(begin, end))
    return slices


def _check_arguments(symbol):
    """Raise ValueError when two arguments or two auxiliary states share a name."""
    arg_names = symbol.list_arguments()
    aux_names = symbol.list_auxiliary_states()
    for names, what, listed in (
            (arg_names, 'argument', f'arguments are {arg_names}'),
            (aux_names, 'auxiliary param',
             f'arguments are {arg_names}, auxiliary params are {aux_names}')):
        seen = set()
        for name in names:
            if name in seen:
                raise ValueError(f'Find duplicated {what} name "{name}", please make the weight '
                                 f'name non-duplicated(using name arguments), {listed}')
            seen.add(name)


def _load_general(data, targets):
    """Copy each array of ``data`` into its target, or its slices into the (slice, array)
    targets of each context."""
    for d_src, d_targets in zip(data, targets):
        if isinstance(d_targets, NDArray):
            d_src.copyto(d_targets)
            continue
        if d_targets[-1][0].stop != d_src.shape[0]:
            raise MXNetAssertionError(f'Batch size miss match. Expected '
                                      f'{d_targets[-1][0].stop}, got {d_src.shape[0]}')
        for slice_idx, d_dst in d_targets:
            d_src[slice_idx].copyto(d_dst)


def _load_data(batch, targets):
    _load_general(batch.data, targets)


def _load_label(batch, targets):
    _load_general(batch.label, targets)


def _bind_exec(sym, ctx, input_shapes, param_names, need_grad=False, base_exec=None,
               shared_data_arrays=None, input_types=None, logger=logging):
    """MXNet's binder of the old executor group: gradients for ``need_grad`` (True: every
    argument that is not an input; or a set of names), parameters shared with ``base_exec``."""
    arg_names = sym.list_arguments()
    if need_grad is False:
        need_grad = set()
    elif need_grad is True:
        need_grad = set(arg_names) - set(input_shapes.keys())
    elif not isinstance(need_grad, set):
        raise MXNetAssertionError('need_grad must be boolean or set.')
    if input_types is None:
        input_types = {k: np.float32 for k in input_shapes}
    grad_req = {name: 'write' if name in need_grad else 'null' for name in arg_names}
    return bind_shared(sym, ctx, input_shapes, input_types, grad_req, shared_exec=base_exec,
                       shared_arg_names=param_names, shared_buffer=shared_data_arrays,
                       logger=logger)


# -------------------------------------------------------------------------------------------------
# KVStore steps of one process (MXNet's model.py helpers)
# -------------------------------------------------------------------------------------------------

def _create_kvstore(kvstore, num_device, arg_params):
    """``(kvstore or None, update_on_kvstore)`` for a KVStore, a type name or None.

    As MXNet: one device needs no store; the store updates the weights itself unless
    ``MXNET_UPDATE_ON_KVSTORE=0``, or a ``local`` store holds a parameter of over 16M values.
    """
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and 'dist' not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == 'local' and arg_params:
                max_size = max(np.prod(param.shape) for param in arg_params.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError('kvstore must be KVStore, str or None')
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore


def _in_one_call(kvstore):
    """Whether ``kvstore`` takes lists of keys in one call (hybridlib's stores do, and a
    distributed one then packs them into a few collective calls); other stores get a call per
    key, as MXNet's modules make them."""
    return isinstance(kvstore, kvs.KVStore)


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put each parameter in the store; with ``update_on_kvstore`` also copy it to every
    device."""
    names = list(param_names[:len(param_arrays)])
    values = [arg_params[name] for name in names]
    if _in_one_call(kvstore) and names:
        names, values, param_arrays = [names], [values], [list(param_arrays)]
    for name, value, param_on_devs in zip(names, values, param_arrays):
        if not update_on_kvstore:
            kvstore.init(name, value)
        else:
            kvstore.broadcast(name, value, out=param_on_devs)


def _pushpull(kvstore, names, grad_arrays, out=None):
    """``pushpull`` of each parameter's gradients (into ``out``, else into themselves)."""
    if not names:
        return
    if _in_one_call(kvstore):
        kvstore.pushpull(names, grad_arrays, out=out)
        return
    for index, (name, grads) in enumerate(zip(names, grad_arrays)):
        kvstore.pushpull(name, grads, out=None if out is None else out[index], priority=-index)


def _with_gradients(grad_arrays):
    """The indices of the parameters that have gradients."""
    return [i for i, grads in enumerate(grad_arrays) if grads[0] is not None]


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Push each parameter's gradients (the store sums and updates) and pull the weights."""
    chosen = _with_gradients(grad_arrays)
    _pushpull(kvstore, [param_names[i] for i in chosen], [grad_arrays[i] for i in chosen],
              out=[param_arrays[i] for i in chosen])


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Sum the gradients through ``kvstore`` (when given), then update every device's copy
    with ``updater`` under the index ``parameter * num_device + device``."""
    chosen = _with_gradients(grad_arrays)
    if kvstore:
        _pushpull(kvstore, [param_names[i] for i in chosen], [grad_arrays[i] for i in chosen])
    updates = [[] for _ in range(num_device)]
    for index in chosen:
        arg_list, grad_list = param_arrays[index], grad_arrays[index]
        for k, (weight, grad) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((index * num_device + k, grad, weight))
    for dev_updates in updates:
        if dev_updates:
            indices, grads, weights = zip(*dev_updates)
            updater(indices, grads, weights)


# -------------------------------------------------------------------------------------------------
# MXNet's older executor group and manager
# -------------------------------------------------------------------------------------------------

class DataParallelExecutorGroup:
    """One executor per context over the slices of a batch (MXNet's older group, used by
    ``DataParallelExecutorManager``; modules use ``mx.module.executor_group``'s).

    Parameters
    ----------
    sym : Symbol
        The graph.
    arg_names, param_names : list of str
        Its arguments, and those of them that are parameters.
    ctx : list of Context
        One executor each.
    slices : list of slice
        The batch slice of each context.
    train_data : DataIter or DataBatch
        Gives ``provide_data`` and ``provide_label`` (names, shapes, dtypes).
    shared_group : DataParallelExecutorGroup, optional
        Share its parameters and input buffers (another bucket).
    """

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None):
        _check_arguments(sym)
        if shared_group is None:
            self.shared_data_arrays = [{} for _ in ctx]
        else:
            self.shared_data_arrays = shared_group.shared_data_arrays
        self.data_names = [x[0] for x in train_data.provide_data]
        self.label_names = [x[0] for x in train_data.provide_label]
        self.aux_names = sym.list_auxiliary_states()
        self.param_idx = [i for i, name in enumerate(arg_names) if name in param_names]
        self.param_names = [arg_names[i] for i in self.param_idx]
        self.train_execs = []
        for i, ctxi in enumerate(ctx):
            data_shapes, data_types = {}, {}
            for x in train_data.provide_data + train_data.provide_label:
                data_shapes[x[0]] = tuple([slices[i].stop - slices[i].start] + list(x[1][1:]))
                data_types[x[0]] = x.dtype if isinstance(x, DataDesc) else np.float32
            shared_exec = None if shared_group is None else shared_group.train_execs[i]
            self.train_execs.append(_bind_exec(
                sym, ctxi, data_shapes, self.param_names, need_grad=True, base_exec=shared_exec,
                shared_data_arrays=self.shared_data_arrays[i], input_types=data_types))
        self.data_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.train_execs)]
                            for name in self.data_names]
        self.label_arrays = [[(slices[i], e.arg_dict[name])
                              for i, e in enumerate(self.train_execs)]
                             for name in self.label_names]
        self.param_arrays = [[e.arg_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.aux_arrays = [[e.aux_arrays[i] for e in self.train_execs]
                           for i in range(len(self.aux_names))]
        self.slices = slices

    def load_data_batch(self, data_batch):
        """Copy the batch's data and labels into the executors' slices."""
        _load_data(data_batch, self.data_arrays)
        _load_label(data_batch, self.label_arrays)

    def forward(self, is_train=False):
        """Run every executor forward."""
        for texec in self.train_execs:
            texec.forward(is_train=is_train)

    def backward(self):
        """Run every executor backward."""
        for texec in self.train_execs:
            texec.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update ``metric`` with each executor's outputs and its slice of ``labels``."""
        for current_exec, (texec, islice) in enumerate(zip(self.train_execs, self.slices)):
            if not pre_sliced:
                labels_slice = [label[islice] for label in labels]
            else:
                labels_slice = labels[current_exec]
            metric.update(labels_slice, texec.outputs)


class DataParallelExecutorManager:
    """Trains a graph (or the buckets of ``sym_gen``) on several contexts: one executor group
    per bucket, all sharing the parameters of the first.

    Parameters
    ----------
    symbol : Symbol
        The graph of the default bucket.
    ctx : list of Context
        The contexts.
    train_data : DataIter
        Its ``batch_size``, ``provide_data``, ``provide_label`` (and ``default_bucket_key``
        with ``sym_gen``) shape the executors.
    arg_names, param_names, aux_names : list of str
        The graph's arguments, its parameters, its auxiliary states.
    work_load_list : list of number, optional
        Relative work of each context (equal by default).
    logger : logging.Logger, optional
    sym_gen : callable, optional
        ``sym_gen(bucket_key)`` gives the graph of a bucket.
    """

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names,
                 work_load_list=None, logger=None, sym_gen=None):
        if logger is None:
            logger = logging
        num_device = len(ctx)
        logger.info('Start training with %s', str(ctx))
        if work_load_list is None:
            work_load_list = [1] * num_device
        if not isinstance(work_load_list, list) or len(work_load_list) != num_device:
            raise MXNetAssertionError(
                f'Invalid settings for work load: work_load_list must be a list of one number per '
                f'context ({num_device}), got {work_load_list!r}')
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names = arg_names
        self.param_names = param_names
        self.aux_names = aux_names
        self.ctx = ctx
        self.execgrp = DataParallelExecutorGroup(symbol, self.arg_names, self.param_names,
                                                 self.ctx, self.slices, train_data)
        self.symbol = symbol
        self.sym_gen = sym_gen
        self.curr_execgrp = None
        if self.sym_gen is not None:
            self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp}

    def install_monitor(self, monitor):
        """Install ``monitor`` on every executor (not supported with buckets, as MXNet)."""
        if self.sym_gen is not None:
            raise NotImplementedError('Monitoring is not implemented for bucketing')
        for train_exec in self.execgrp.train_execs:
            monitor.install(train_exec)

    def set_params(self, arg_params, aux_params):
        """Copy parameter values into every executor."""
        for texec in self.execgrp.train_execs:
            texec.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Copy the parameters (averaged over the contexts) into the given CPU arrays."""
        _copy_averaged(self.param_names, self.param_arrays, arg_params)
        _copy_averaged(self.aux_names, self.aux_arrays, aux_params)

    @property
    def param_arrays(self):
        """The parameter arrays, one list (a copy per context) per parameter."""
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        """The gradient arrays, one list per parameter."""
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        """The auxiliary state arrays, one list per state."""
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Pick (binding it the first time) the group of the batch's bucket and load it."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                symbol = self.sym_gen(key)
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    symbol, self.arg_names, self.param_names, self.ctx, self.slices,
                    data_batch, shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def forward(self, is_train=False):
        """Run the current group forward."""
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        """Run the current group backward."""
        self.curr_execgrp.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update ``metric`` with the current group's outputs."""
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)
