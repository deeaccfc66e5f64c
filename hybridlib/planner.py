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
  but the first fresh with one (except hidden outputs that are output 0 itself,
  ``hidden_views``, grouped with it).

A ``Concat`` whose slices of the output are contiguous (every axis before the joined one has
size 1: a batch of one along channels) costs no copy: its inputs are written straight into
their slices of its buffer (``_placements``), and the node itself runs nothing. Its inputs must
be values the plan pools, each joined once; a joined value that is itself such a Concat is
placed with its inputs (DenseNet's growing features: one buffer for a whole block). The buffer
is held from the first input written to the last read of any of them.
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
    {entry: True if written in place}, {entry: (buffer index, [index, ...])})``: the last are
    the values written into a part of a buffer, ``buffer[index][index]...``, the joined values
    of a Concat and the Concat's own output (``_placements``), whose nodes run nothing.
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
    placed = _placements(nodes, candidates, keep, shapes, dtypes)
    buffers = []                # [shape, dtype, busy until (inclusive)]
    assign, in_place, roots = {}, {}, {}
    for i, node in enumerate(nodes):
        entry = (node, 0)
        if entry in placed:
            root = _within(placed, entry)[0]
            if root not in roots:       # its first input: the Concat's buffer from here on
                key = (tuple(shapes[root]), dtypes[root])
                roots[root] = _free_buffer(buffers, key, i)
                buffers[roots[root]][2] = group_end[groups.find(root)]
            continue
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
            chosen = _free_buffer(buffers, key, i)
        buffers[chosen][2] = max(buffers[chosen][2], end)
        assign[entry] = chosen
    views = {}
    for entry in placed:
        root, chain = _within(placed, entry)
        views[entry] = (roots[root], chain)
    return assign, [(shape, dtype) for shape, dtype, _ in buffers], in_place, views


def _free_buffer(buffers, key, i):
    """A buffer of ``key`` (shape, dtype) that nothing reads from node ``i`` on; a new one if
    none is."""
    for b, (shape, dtype, busy) in enumerate(buffers):
        if (shape, dtype) == key and busy < i:
            return b
    buffers.append([key[0], key[1], -1])
    return len(buffers) - 1


def _placements(nodes, candidates, keep, shapes, dtypes):
    """The Concats that cost no copy (see the module's docstring): {entry: (the Concat's
    entry, its index there)} for each value written into its slice of a Concat's output, and
    {entry: None} for the outermost Concats' outputs, which get the buffers."""
    joined = {}
    for node in nodes:
        if node.op.name == 'Concat':
            for e in node.inputs:
                joined[e] = joined.get(e, 0) + 1
    placed = {}
    for node in nodes:
        entry = (node, 0)
        shape, dtype = shapes.get(entry), dtypes.get(entry)
        if node.op.name != 'Concat' or entry in keep or shape is None or 0 in shape \
                or dtype is None or dtype.kind != 'f':
            continue
        axis = node.params.dim % len(shape)
        if any(d != 1 for d in shape[:axis]) or not all(
                (e in candidates or e in placed) and joined[e] == 1 and e[1] == 0
                and dtypes.get(e) == dtype
                and not e[0].op.reshapes       # (emitted as views of their input, never written)
                for e in node.inputs):
            continue
        offset = 0
        for e in node.inputs:
            size = shapes[e][axis]
            placed[e] = (entry, (slice(None),) * axis + (slice(offset, offset + size),))
            offset += size
        placed[entry] = None
    return placed


def _within(placed, entry):
    """(the outermost Concat output that ``entry`` is written into, the indexes that take
    ``entry``'s part of it, outermost first)."""
    chain = []
    while placed[entry] is not None:
        entry, index = placed[entry]
        chain.append(index)
    return entry, chain[::-1]


def _alias_groups(nodes, pooled):
    """Entries that may share memory: the outputs of an operator that cannot write into a
    buffer are grouped with its inputs (one that can returns fresh arrays from ``compute``)."""
    groups = _Groups()
    for node in nodes:
        if node.op.hidden_views:
            for k in range(1, node.num_outputs):
                groups.union((node, k), (node, 0))
        if (node, 0) in pooled or writes_into(node):
            continue
        for k in range(node.num_outputs):
            for e in node.inputs:
                groups.union((node, k), e)
    return groups
