"""``DataParallelExecutorGroup``: one executor per context, each on its slice of the batch.

A ``Module`` owns one group. The group binds the module's graph once per context with the
slice of the batch the context's work load gives it (``_split_input_slice``), copies each batch
into those slices, runs the executors, and merges their outputs and input gradients back into
whole-batch arrays. The batch axis of each input and output is the ``N`` of its layout
(``DataDesc.layout``, an output's ``__layout__`` attribute); an array without one goes whole
to every context.
"""
import logging
from collections import OrderedDict

from .. import ndarray as nd
from ..base import MXNetAssertionError, flag_to_dtype
from ..context import Context
from ..executor_manager import (_copy_averaged, _split_input_slice, bind_shared,
                                executor_bytes, reshape_executor)
from ..io import DataDesc
from ..ndarray import NDArray

__all__ = ['DataParallelExecutorGroup']


def _load_general(data, targets, major_axis):
    """Copy each source array into its targets: one array, a list (pre-sliced sources), or
    (slice, array) pairs that take the slice along the array's batch axis."""
    for d_src, d_targets, axis in zip(data, targets, major_axis):
        if isinstance(d_targets, NDArray):
            d_src.copyto(d_targets)
        elif isinstance(d_src, (list, tuple)):
            for src, dst in zip(d_src, d_targets):
                src.copyto(dst)
        else:
            for slice_idx, d_dst in d_targets:
                if axis < 0 or (slice_idx.start == 0 and d_src.shape[axis] == slice_idx.stop):
                    d_src.copyto(d_dst)
                elif axis == 0:
                    d_src[slice_idx.start:slice_idx.stop].copyto(d_dst)
                else:
                    nd.slice_axis(d_src, axis=axis, begin=slice_idx.start,
                                  end=slice_idx.stop).copyto(d_dst)


def _load_batch(batch, field, targets, major_axis):
    """Load a DataBatch's ``field`` ('data' or 'label'), or that of a list of per-context
    batches."""
    if isinstance(batch, list):
        new_batch = [[getattr(b, field)[i] for b in batch] for i in range(len(targets))]
        new_targets = [[dst for _, dst in d_target] for d_target in targets]
        _load_general(new_batch, new_targets, major_axis)
    else:
        _load_general(getattr(batch, field), targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """One array per output: the contexts' arrays concatenated along the batch axis (on the
    first one's context), or the first context's array when there is no batch axis."""
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            rets.append(nd.concat(*[t.as_in_context(tensors[0].context) for t in tensors],
                                  dim=axis))
        else:
            rets.append(tensors[0])
    return rets


def _output_attr(symbol, index, key):
    """Attribute ``key`` of output ``index``'s node (a single-output symbol is its own output:
    hybridlib's ``symbol[0]`` slices it, as an NDArray)."""
    output = symbol if len(symbol.list_outputs()) == 1 else symbol[index]
    return output.attr(key)


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """``group2ctxs`` as one dict (or None) per context."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise MXNetAssertionError(f'length of group2ctxs should be {ctx_len}, got '
                                      f'{len(group2ctxs)}')
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for key, value in group2ctxs.items():
            if isinstance(value, Context):
                ctxs = [value] * ctx_len
            elif len(value) == 1:
                ctxs = list(value) * ctx_len
            elif len(value) == ctx_len:
                ctxs = value
            else:
                raise MXNetAssertionError(f'length of group2ctxs[{key}] should be {ctx_len} or '
                                          f'1, got {len(value)}')
            for i in range(ctx_len):
                ret[i][key] = ctxs[i]
        return ret
    raise MXNetAssertionError('group2ctxs should be list of dict of str to context, or dict of '
                              'str to context or list of context; got '
                              f'{type(group2ctxs).__name__}')


def _grad_reqs(grad_req, arg_names, param_names, fixed_param_names, data_names,
               inputs_need_grad):
    """The gradient requirement of every argument: parameters take ``grad_req`` (fixed ones
    none), data only with ``inputs_need_grad``, labels and states none."""
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise MXNetAssertionError(f'grad_req: {len(grad_req)} requirements for '
                                      f'{len(arg_names)} arguments {arg_names}')
        return dict(zip(arg_names, grad_req))
    if isinstance(grad_req, dict):
        default, overrides = 'write', grad_req
    elif isinstance(grad_req, str):
        default, overrides = grad_req, {}
    else:
        raise ValueError('grad_req must be one of str, list, tuple, or dict.')
    reqs = {}
    for name in arg_names:
        if name in param_names:
            reqs[name] = 'null' if name in fixed_param_names else default
        elif name in data_names:
            reqs[name] = default if inputs_need_grad else 'null'
        else:
            reqs[name] = 'null'
    reqs.update(overrides)
    return reqs


class DataParallelExecutorGroup:
    """The executors of a module, one per context, each bound for its slice of the batch.

    Parameters
    ----------
    symbol : Symbol
        The module's graph.
    contexts : list of Context
        One executor per context.
    workload : list of number
        Relative share of the batch of each context.
    data_shapes, label_shapes : list of DataDesc or (name, shape)
        The whole-batch inputs; ``label_shapes`` may be None.
    param_names : list of str
        The arguments that are parameters (shared with ``shared_group``'s executors).
    for_training : bool
        Whether gradients are wanted (else every ``grad_req`` is ``'null'``).
    inputs_need_grad : bool
        Whether the data inputs get gradients.
    shared_group : DataParallelExecutorGroup, optional
        Share its parameters and input memory (a bucket of a ``BucketingModule``).
    logger : logging.Logger, optional
    fixed_param_names : list of str, optional
        Parameters that get no gradient (not trained).
    grad_req : str, list of str or dict of str to str
        ``'write'``, ``'add'`` or ``'null'``, for all parameters, for each argument, or by name.
    state_names : list of str, optional
        Arguments that are states (set with ``set_states``), not parameters.
    group2ctxs : dict or list of dict, optional
        Context groups; only groups mapped to the executor's own context are supported.
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = fixed_param_names or []
        self.state_names = state_names or []
        if not for_training:
            grad_req = 'null'
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        self.grad_req = _grad_reqs(grad_req, self.arg_names, self.param_names,
                                   self.fixed_param_names, [x.name for x in data_shapes],
                                   inputs_need_grad)
        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in contexts]
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = None
        self.label_arrays = None
        self.param_arrays = None
        self.state_arrays = None
        self.grad_arrays = None
        self.aux_arrays = None
        self.input_grad_arrays = None
        self.data_shapes = None
        self.label_shapes = None
        self.data_names = None
        self.label_names = None
        self.data_layouts = None
        self.label_layouts = None
        self.output_names = self.symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(_output_attr(symbol, i, '__layout__'))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def decide_slices(self, data_shapes):
        """The batch axis of each input; the first input with one sets the batch size and the
        contexts' slices, and the others must have the same batch size."""
        if not data_shapes:
            raise MXNetAssertionError('decide_slices: no input shapes were given')
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = shape[axis]
            if self.batch_size is not None:
                if batch_size != self.batch_size:
                    raise MXNetAssertionError(
                        f'all data must have the same batch size: batch_size = '
                        f'{self.batch_size}, but {name} has shape {shape}')
            else:
                self.batch_size = batch_size
                self.slices = _split_input_slice(self.batch_size, self.workload)
        return major_axis

    def _collect_arrays(self):
        """Gather the executors' arrays by input, parameter and state."""
        self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)]
                            for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name])
                                  for i, e in enumerate(self.execs)]
                                 for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        self.param_arrays = [[e.arg_arrays[i] for e in self.execs]
                             for i, name in enumerate(self.arg_names) if name in self.param_names]
        if self.for_training:
            self.grad_arrays = [[e.grad_arrays[i] for e in self.execs]
                                for i, name in enumerate(self.arg_names)
                                if name in self.param_names]
        else:
            self.grad_arrays = None
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)]
                                       for e in self.execs]
                                      for name, _ in self.data_shapes if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_arrays[i] for e in self.execs]
                           for i in range(len(self.aux_names))]

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind one executor per context (or, with ``reshape``, reshape the first-bound ones
        for new shapes, keeping their parameters)."""
        if self.execs and not reshape:
            raise MXNetAssertionError('bind_exec: the executors are already bound; use reshape')
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_shapes_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_shapes_i = ([] if label_shapes is None else
                              self._sliced_shape(label_shapes, i, self.label_layouts))
            if reshape:
                shapes = {d.name: d.shape for d in data_shapes_i + label_shapes_i}
                self.execs[i] = reshape_executor(self._default_execs[i], allow_up_sizing=True,
                                                 **shapes)
            else:
                self.execs.append(self._bind_ith_exec(i, data_shapes_i, label_shapes_i,
                                                      shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [i.name for i in self.data_shapes]
        if label_shapes is not None:
            self.label_names = [i.name for i in self.label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Reshape the executors for new input shapes (nothing when they are the same)."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameter values into every executor; a name the graph lacks is a ValueError
        unless ``allow_extra``."""
        if not allow_extra:
            for name in arg_params:
                if name not in self.arg_names:
                    raise ValueError(f'Find name "{name}" that is not in the arguments')
            for name in aux_params or {}:
                if name not in self.aux_names:
                    raise ValueError(f'Find name {name} that is not in the auxiliary states')
        for exec_ in self.execs:
            exec_.copy_params_from(arg_params, aux_params, allow_extra_params=True)

    def get_params(self, arg_params, aux_params):
        """Copy the parameters, averaged over the contexts, into the given (CPU) arrays."""
        _copy_averaged(self.param_names, self.param_arrays, arg_params)
        _copy_averaged(self.aux_names, self.aux_arrays, aux_params)

    def forward(self, data_batch, is_train=None):
        """Load the batch (a DataBatch, or a list of one per context) and run forward;
        ``is_train`` defaults to ``for_training``."""
        _load_batch(data_batch, 'data', self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        if isinstance(data_batch, list):
            if self.label_arrays is not None and data_batch and data_batch[0].label:
                _load_batch(data_batch, 'label', self.label_arrays, self.label_layouts)
        elif self.label_arrays is not None and data_batch.label:
            _load_batch(data_batch, 'label', self.label_arrays, self.label_layouts)
        for exec_ in self.execs:
            exec_.forward(is_train=is_train)

    def get_output_shapes(self):
        """``(name, shape)`` of each merged output."""
        # inferred from the first executor's inputs: its outputs exist only after a forward
        bound = {name: arr.shape for name, arr in self.execs[0].arg_dict.items()}
        _, shapes, _ = self.symbol.infer_shape(**bound)
        concat_shapes = []
        for key, the_shape, axis in zip(self.symbol.list_outputs(), shapes, self.output_layouts):
            the_shape = list(the_shape)
            if axis >= 0:
                the_shape[axis] = self.batch_size
            concat_shapes.append((key, tuple(the_shape)))
        return concat_shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``begin`` to ``end`` of the last forward: merged over the contexts, or as
        ``[[out1_dev1, out1_dev2], ...]``."""
        if end is None:
            end = self.num_outputs
        outputs = [[exec_.outputs[i] for exec_ in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = _merge_multi_context(outputs, self.output_layouts)
        return outputs

    def get_states(self, merge_multi_context=True):
        """The state arrays as ``[[state1_dev1, state1_dev2], ...]`` (merging is not
        supported, as in MXNet)."""
        if merge_multi_context:
            raise MXNetAssertionError('merge_multi_context=True is not supported for '
                                      'get_states yet.')
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the states from ``[[state1_dev1, ...], ...]`` or to one scalar ``value``."""
        if states is not None:
            if value is not None:
                raise MXNetAssertionError('Only one of states & value can be specified.')
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            if value is None:
                raise MXNetAssertionError('At least one of states & value must be specified.')
            for d_dst in self.state_arrays:
                for dst in d_dst:
                    dst[:] = value

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs from the last backward."""
        if not self.inputs_need_grad:
            raise MXNetAssertionError('get_input_grads: bind with inputs_need_grad=True to get '
                                      'the gradients of the inputs')
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        """Run backward on every executor, each with its slice of ``out_grads`` (needed for
        outputs that are not losses)."""
        if not self.for_training:
            raise MXNetAssertionError('re-bind with for_training=True to run backward')
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        for i, (exec_, islice) in enumerate(zip(self.execs, self.slices)):
            out_grads_slice = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0:
                    og_my_slice = nd.slice_axis(grad, axis=axis, begin=islice.start,
                                                end=islice.stop)
                    out_grads_slice.append(og_my_slice.as_in_context(self.contexts[i]))
                else:
                    out_grads_slice.append(grad.copyto(self.contexts[i]))
            exec_.backward(out_grads=out_grads_slice or None)

    def update_metric(self, eval_metric, labels, pre_sliced):
        """Update ``eval_metric`` with each executor's outputs and its slice of ``labels``
        (or, ``pre_sliced``, with ``labels[i]`` for context ``i``)."""
        for current_exec, (texec, islice) in enumerate(zip(self.execs, self.slices)):
            if not pre_sliced:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts):
                    if axis == 0:
                        labels_slice.append(label[islice])
                    elif axis > 0:
                        labels_slice.append(nd.slice_axis(label, axis=axis, begin=islice.start,
                                                          end=islice.stop))
                    else:
                        labels_slice.append(label)
            else:
                labels_slice = labels[current_exec]
            labels_ = OrderedDict(zip(self.label_names, labels_slice))
            preds = OrderedDict(zip(self.output_names, texec.outputs))
            eval_metric.update_dict(labels_, preds)

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        """Bind the executor of context ``i`` for its input shapes."""
        shared_exec = None if shared_group is None else shared_group.execs[i]
        input_shapes = dict(data_shapes)
        if label_shapes is not None:
            input_shapes.update(dict(label_shapes))
        input_types = {x.name: x.dtype for x in data_shapes}
        attr_dict = self.symbol.attr_dict()
        for sym_name in self.symbol.list_inputs():
            dtype_flag = attr_dict.get(sym_name, {}).get('__dtype__', '-1')
            if sym_name in input_types and dtype_flag != '-1':
                input_types[sym_name] = flag_to_dtype(dtype_flag)
        if label_shapes is not None:
            input_types.update({x.name: x.dtype for x in label_shapes})
        executor = bind_shared(self.symbol, self.contexts[i], input_shapes, input_types,
                               grad_req=self.grad_req, shared_exec=shared_exec,
                               shared_arg_names=self.param_names,
                               shared_buffer=self.shared_data_arrays[i],
                               group2ctx=self.group2ctxs[i], logger=self.logger)
        self._total_exec_bytes += executor_bytes(executor)
        return executor

    def _sliced_shape(self, shapes, i, major_axis):
        """The descriptions of the inputs of context ``i``: its slice along each batch axis."""
        sliced_shapes = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            sliced_shapes.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return sliced_shapes

    def install_monitor(self, mon):
        """Install a ``Monitor`` on every executor."""
        for exe in self.execs:
            mon.install(exe)
