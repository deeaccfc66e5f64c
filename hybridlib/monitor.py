"""``mx.monitor`` (``mx.mon``): statistics of an Executor's arrays, for debugging.

A ``Monitor`` installs a callback on executors (``Executor.set_monitor_callback``). Between
``tic()`` and ``toc()`` it collects a statistic of every operator output the executor reports
(and, with ``monitor_all``, of operator inputs) whose name matches ``pattern``: in the forward,
and in the backward the gradients of MXNet's backward nodes (``fc1_backward_output0``, ...);
``toc`` adds the arguments and auxiliary states and returns the statistics as text,
``toc_print`` logs them as MXNet 1.9.1 does.
"""
import logging
import re
from math import sqrt

from . import ndarray
from .base import MXNetAssertionError, py_str
from .ndarray import NDArray

__all__ = ['Monitor']


class Monitor:
    """Monitor inputs, outputs, weights, and gradients for debugging.

    Parameters
    ----------
    interval : int
        Number of batches between collections: ``tic`` starts one every ``interval`` calls.
    stat_func : function
        Computes the statistic of a tensor: takes an NDArray and returns an NDArray (or a list
        of NDArrays). Defaults to ``norm(x) / sqrt(x.size)``, the root mean square.
    pattern : str
        A regular expression (``re.match``) on the names of the tensors to monitor. For
        example, ``'.*weight|.*output'`` monitors all weights and outputs.
    sort : bool, default False
        Sort the results by tensor name (otherwise they keep the order of execution).
    monitor_all : bool, default False
        If true, monitor both the inputs and the outputs of operators, otherwise outputs only.
    """

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                """The root mean square of ``x``: norm(x) / sqrt(size(x))."""
                return ndarray.norm(x) / sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            """The executor's callback: ``name`` as bytes (or str), ``array`` an NDArray."""
            name = py_str(name)
            if not self.activated or not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Install the callback on an executor; a Monitor may be installed on several.

        Parameters
        ----------
        exe : Executor
            The Executor (returned by ``symbol.bind`` or ``simple_bind``) to install to.
        """
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start collecting stats for the current batch. Call before calling forward."""
        if self.step % self.interval == 0:
            for exe in self.exes:
                for array in exe.arg_arrays:
                    array.wait_to_read()
                for array in exe.aux_arrays:
                    array.wait_to_read()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End collecting for the current batch and return the results.

        Call after the computation of the current batch.

        Returns
        -------
        res : list of (int, str, str)
            ``(step, name, statistics)`` per monitored tensor: the step counts ``tic`` calls
            (from 1), ``statistics`` is each statistic's value followed by a tab.
        """
        if not self.activated:
            return []
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        res = []
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        for n, k, v_list in self.queue:
            if isinstance(v_list, NDArray):
                v_list = [v_list]
            if not isinstance(v_list, list) or not all(isinstance(v, NDArray) for v in v_list):
                raise MXNetAssertionError(
                    f'Monitor: stat_func must return an NDArray or a list of NDArrays; for '
                    f'{k!r} it returned {type(v_list).__name__}')
            s = ''
            for v in v_list:
                if v.shape == (1,):
                    s += str(v.asscalar()) + '\t'
                else:
                    s += str(v.asnumpy()) + '\t'
            res.append((n, k, s))
        self.queue = []
        return res

    def toc_print(self):
        """End collecting and log the results (``logging.info``)."""
        res = self.toc()
        for n, k, v in res:
            logging.info('Batch: {:7d} {:30s} {:s}'.format(n, k, v))
