"""The optimizers of ``SVRGModule`` (MXNet 1.9.1's ``contrib.svrg_optimization.svrg_optimizer``).

``_SVRGOptimizer`` holds two optimizers and picks one by the parameter's name: the names that
end in ``_full`` are the full gradients that ``SVRGModule`` accumulates in a KVStore, which
``_AssignmentOptimizer`` copies in; every other name is a weight, updated by the optimizer
the user chose. Both are registered (``optimizer.create('_SVRGOptimizer', ...)``), as in
MXNet, and meant for ``SVRGModule`` only.

Difference from MXNet 1.9.1: MXNet sends every name that *contains* ``full`` to the
assignment, so the weights of an unnamed ``FullyConnected`` (``fullyconnected0_weight``) are
overwritten by their gradients and training diverges; here only the ``_full`` keys are.
"""
from ... import optimizer as opt

__all__ = []

# the arguments of Optimizer.__init__, which _SVRGOptimizer keeps for itself
_BASE_PARAMS = ('rescale_grad', 'param_idx2name', 'wd', 'clip_gradient', 'learning_rate',
                'lr_scheduler', 'sym', 'begin_num_update', 'multi_precision', 'param_dict')


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Assigns the gradient to the weight: a KVStore key of full gradients then holds the
    sum pushed by all devices."""

    def update(self, index, weight, grad, state):
        """``weight[:] = grad``.

        Parameters
        ----------
        index : int or str
            The parameter's index or name (unused).
        weight : NDArray
            The array that receives the gradient.
        grad : NDArray
            The (summed) full gradient.
        state : None
            This optimizer keeps no state.
        """
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Updates the weights with ``default_optimizer`` and the full-gradient keys
    (``<name>_full``) with ``_AssignmentOptimizer``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer given to ``SVRGModule.init_optimizer``; a name is created with all of
        ``kwargs``.
    **kwargs
        ``Optimizer`` arguments (this optimizer keeps those of the base class) and the
        default optimizer's own ones (``momentum``, ...).
    """

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The arguments in ``kwargs`` that ``Optimizer.__init__`` takes."""
        return {key: value for key, value in kwargs.items() if key in _BASE_PARAMS}

    def update(self, index, weight, grad, state):
        """Update ``weight`` with the optimizer its name selects.

        Parameters
        ----------
        index : int or str
            The parameter's index in ``idx2name``, or its name (a KVStore key).
        weight, grad : NDArray
        state : any
            What ``create_state`` returned for ``index``.
        """
        if _is_full_gradient(self._check_index(index)):
            self.aux_opt.update(index, weight, grad, state)
        else:
            self.default_opt.update(index, weight, grad, state)

    def create_state(self, index, weight):
        """The state of the optimizer that ``index``'s name selects (see ``update``)."""
        if _is_full_gradient(self._check_index(index)):
            return self.aux_opt.create_state(index, weight)
        return self.default_opt.create_state(index, weight)

    def _check_index(self, index):
        """The parameter name of ``index`` (an index in ``idx2name`` or a name in it)."""
        if index in self.idx2name.values():
            return index
        if index not in self.idx2name:
            raise KeyError(f'_SVRGOptimizer: parameter index {index!r} is not in param_idx2name '
                           f'({len(self.idx2name)} entries); create it through '
                           'SVRGModule.init_optimizer, which names every parameter')
        return self.idx2name[index]


def _is_full_gradient(name):
    """Whether ``name`` is a key of full gradients (``SVRGModule`` adds ``_full``)."""
    return name.endswith('_full')
