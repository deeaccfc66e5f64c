"""``Block.summary``: the table of layers, output shapes and parameter counts that MXNet
prints, made by running the block once with a forward hook on every layer.
"""
from .block_scope import UsageError
from .ndarray import NDArray
from .symbol import Symbol

__all__ = []


def _shapes(values):
    """The shapes of nested values, lists for lists and tuples (as MXNet's summary)."""
    if isinstance(values, (list, tuple)):
        return [_shapes(v) for v in values]
    return values.shape if isinstance(values, NDArray) else values


def _has_symbol(values):
    if isinstance(values, (list, tuple)):
        return any(_has_symbol(v) for v in values)
    return isinstance(values, Symbol)


def _shape_str(values):
    shapes = _shapes(values)
    return str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)


def _summary_table(block, inputs):
    """The text of ``Block.summary``: one row per layer called, then parameter counts."""
    rows = [('Input', _shape_str(inputs), 0, 0, 0)]
    seen = set()
    hooks = []

    def record(layer, _, outputs):
        if _has_symbol(outputs):
            return          # a trace for deferred initialisation, not a call
        n_params = trainable = shared = 0
        for p in layer.params.values():
            size = p.data().size
            n_params += size
            trainable += 0 if p.grad_req == 'null' else size
            if id(p) in seen:
                shared += size
            seen.add(id(p))
        name = f'{type(layer).__name__}-{len(rows)}'
        rows.append((name, _shape_str(outputs), n_params, trainable, shared))

    def attach(layer):
        if getattr(layer, '_active', False):       # a hybridized HybridBlock
            raise UsageError(f'"{layer.name}" must not be hybridized to print summary.')
        if layer._summary_row:
            hooks.append(layer.register_forward_hook(record))
    try:
        block.apply(attach)
        block(*inputs)
    finally:
        for h in hooks:
            h.detach()
    fmt = '{:>20}  {:>42} {:>15}'
    total = sum(r[2] for r in rows)
    trainable = sum(r[3] for r in rows)
    shared = sum(r[4] for r in rows)
    lines = ['-' * 80, fmt.format('Layer (type)', 'Output Shape', 'Param #'), '=' * 80]
    lines += [fmt.format(name, shape, n) for name, shape, n, _, _ in rows]
    lines += ['=' * 80, 'Parameters in forward computation graph, duplicate included',
              f'   Total params: {total}', f'   Trainable params: {trainable}',
              f'   Non-trainable params: {total - trainable}',
              f'Shared params in forward computation graph: {shared}',
              f'Unique parameters in model: {total - shared}', '-' * 80]
    return '\n'.join(lines)
