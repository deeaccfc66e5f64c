"""The static buffer plan of a compiled graph (``hybridize(static_alloc=True)``).

Values that an operator can write into a given buffer (output 0 of a node whose body takes
``out=``, ``OpDef.writes_into_buffer``: a float output of known shape) get a buffer allocated once
per plan and kept across calls. A buffer is reused by a later value of the same shape and dtype
once everything that reads it is done, or written in place by an operator whose ``inplace``
hint allows it when its input dies there.

What the plan must never do is overwrite memory that is still visible. Two rules ensure it:

* values the function returns (graph outputs, and the values a backward pass will read) and
  everything that may share memory with them are never pooled;
* an operator that cannot write into a buffer may return its input or a view of it, so its
  output extends the life of its inputs' buffers (they form one *alias group*, released
  together); a body that takes ``out=`` promises fresh outputs without one, and every output
  but the first fresh with one.
"""

__all__ = ['plan_buffers', 'writes_into']


class _Groups:
    """Union-find over entries."""

    def __init__(self):
        self._parent = {}

    def find(self, e):
        parent = self._parent
        root = e
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(e, e) != root:
            parent[e], e = root, parent[e]
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[ra] = rb


def writes_into(node):
    """Whether ``node``'s operator can write output 0 into a given buffer."""
    return node.op.writes_into_buffer(node.params)


def plan_buffers(nodes, keep, shapes, dtypes):
    """Assign static buffers to the outputs of ``nodes`` (run in this order).

    ``keep`` are the entries the function returns, ``shapes`` and ``dtypes`` the inferred values
    per entry. Returns ``({entry: buffer index}, [(shape, dtype) per buffer],
    {entry: True if written in place})``.
    """
    keep = set(keep)
    last_use = {}
    for i, node in enumerate(nodes):
        for e in node.inputs:
            last_use[e] = i
    end_of_time = len(nodes)
    candidates = set()
    for node in nodes:
        entry = (node, 0)
        shape, dtype = shapes.get(entry), dtypes.get(entry)
        if writes_into(node) and entry not in keep \
                and shape is not None and 0 not in shape and dtype is not None \
                and dtype.kind == 'f':
            candidates.add(entry)
    while True:                 # demote candidates that share memory with a returned value
        groups = _alias_groups(nodes, candidates)
        kept_roots = {groups.find(e) for e in keep}
        demoted = {e for e in candidates if groups.find(e) in kept_roots}
        if not demoted:
            break
        candidates -= demoted
    group_end = {}
    for i, node in enumerate(nodes):
        for k in range(node.num_outputs):
            e = (node, k)
            end = end_of_time if e in keep else last_use.get(e, i)
            root = groups.find(e)
            group_end[root] = max(group_end.get(root, -1), end)
    buffers = []                # [shape, dtype, busy until (inclusive)]
    assign, in_place = {}, {}
    for i, node in enumerate(nodes):
        entry = (node, 0)
        if entry not in candidates:
            continue
        key = (tuple(shapes[entry]), dtypes[entry])
        end = group_end[groups.find(entry)]
        chosen = None
        for idx_in, idx_out in node.op.inplace:
            if idx_out != 0 or idx_in >= len(node.inputs):
                continue
            b = assign.get(node.inputs[idx_in])
            if b is not None and buffers[b][2] == i and tuple(buffers[b][:2]) == key:
                chosen = b
                in_place[entry] = True
                break
        if chosen is None:
            for b, (shape, dtype, busy) in enumerate(buffers):
                if (shape, dtype) == key and busy < i:
                    chosen = b
                    break
        if chosen is None:
            chosen = len(buffers)
            buffers.append([key[0], key[1], -1])
        buffers[chosen][2] = max(buffers[chosen][2], end)
        assign[entry] = chosen
    return assign, [(shape, dtype) for shape, dtype, _ in buffers], in_place


def _alias_groups(nodes, pooled):
    """Entries that may share memory: the outputs of an operator that cannot write into a
    buffer are grouped with its inputs (one that can returns fresh arrays from ``compute``)."""
    groups = _Groups()
    for node in nodes:
        if (node, 0) in pooled or writes_into(node):
            continue
        for k in range(node.num_outputs):
            for e in node.inputs:
                groups.union((node, k), e)
    return groups
