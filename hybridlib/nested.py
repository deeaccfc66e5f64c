"""Nested lists of arrays as flat lists and back (MXNet's ``_flatten``/``_regroup``).

A HybridBlock's inputs and outputs, and the values of ``contrib.foreach``/``while_loop``/
``cond``, are (nested) lists of NDArrays or Symbols; the compiled graphs and the loops work on
flat lists. The format records the nesting. Duck-typed, so that the lowest layers may use it.
"""

__all__ = ['flatten_nested', 'regroup_nested']


def flatten_nested(args, reject, allow_none=False, split_symbols=False):
    """(flat list, format) of an array or of nested lists of arrays, as MXNet's ``_flatten``.

    The format is 0 for an NDArray or a Symbol of one output, n for a Symbol of n > 1 outputs,
    -1 for None (only with ``allow_none``: a HybridBlock's inputs may be None) and the list of
    formats for a list or tuple. A Symbol of n outputs stands in the flat list as itself (a
    HybridBlock groups its outputs), or as its n one-output Symbols with ``split_symbols``
    (control flow computes on each). Any other value raises ``reject(value)``.
    """
    if hasattr(args, '_is_hybrid_value'):
        if hasattr(args, 'list_outputs') and len(args) > 1:
            return (list(args) if split_symbols else [args]), len(args)
        return [args], 0
    if args is None and allow_none:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise reject(args)
    flat, fmts = [], []
    for item in args:
        values, fmt = flatten_nested(item, reject, allow_none, split_symbols)
        flat.extend(values)
        fmts.append(fmt)
    return flat, fmts


def regroup_nested(args, fmt):
    """The nesting ``fmt`` (from ``flatten_nested``) rebuilt from a flat list that holds one
    value per output: (value, the values left)."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError(f'expected None, got {args[0]!r}')
            return None, args[1:]
        return args[:fmt], args[fmt:]
    out = []
    for item in fmt:
        value, args = regroup_nested(args, item)
        out.append(value)
    return out, args
