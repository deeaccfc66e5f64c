"""The package's import graph: no circles among module-level imports, no function-level imports
of package modules (they hide circles), and no module over 1,000 lines.

The core is laid out in one direction (README's Layout lists it in import order): base ->
context -> ops -> tape -> methods -> ndarray -> graph -> executor -> symbol -> autograd ->
planner and cached_op -> parameter -> block -> nn. Imports of optional third-party packages
(cupy, Pillow, ...) stay inside the functions that need them."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / 'hybridlib'
MAX_LINES = 1000
# documented exceptions to "no function-level imports of package modules": none today
FUNCTION_LEVEL_EXCEPTIONS = set()


def _modules():
    mods = {}
    for path in sorted(ROOT.rglob('*.py')):
        parts = list(path.relative_to(ROOT.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts = parts[:-1]
        mods['.'.join(parts)] = path
    return mods


MODULES = _modules()


def _targets(mod, path, node):
    """The package modules an import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = mod.split('.') if path.name == '__init__.py' else mod.split('.')[:-1]
    if node.level:
        base = base[:len(base) - node.level + 1] + ([node.module] if node.module else [])
        package = '.'.join(base)
    else:
        package = node.module or ''
    found = []
    for alias in node.names:
        name = f'{package}.{alias.name}'
        found.append(name if name in MODULES else package)
    return [t for t in found if t in MODULES]


def _graph():
    """({module: modules it imports at module level}, [(module, line, target) inside code])."""
    edges, inner = {}, []
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding='utf-8'))
        top = set()
        module_level = set()
        for stmt in tree.body:      # module level, including under if/try at module level
            module_level.add(stmt)
            for sub in ast.walk(stmt) if isinstance(stmt, (ast.If, ast.Try)) else ():
                module_level.add(sub)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _targets(mod, path, node)
                if node in module_level:
                    top.update(targets)
                else:
                    inner += [(mod, node.lineno, t) for t in targets]
        edges[mod] = top
    return edges, inner


def _cycles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))
    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_at_module_level():
    edges, _ = _graph()
    assert _cycles(edges) == []


def test_no_function_level_imports_of_package_modules():
    _, inner = _graph()
    found = [f'{m}:{line} imports {t}' for m, line, t in inner
             if (m, t) not in FUNCTION_LEVEL_EXCEPTIONS]
    assert found == [], 'function-level imports (move them to the top of the module):\n' + \
        '\n'.join(found)


def test_the_checks_see_a_function_level_import(tmp_path):
    tree = ast.parse('def f():\n    from . import ndarray\n')
    inner = [n for n in ast.walk(tree.body[0]) if isinstance(n, ast.ImportFrom)]
    assert _targets('hybridlib.symbol', ROOT / 'symbol.py', inner[0]) == ['hybridlib.ndarray']


@pytest.mark.parametrize('module', sorted(MODULES))
def test_no_module_over_1000_lines(module):
    lines = MODULES[module].read_text(encoding='utf-8').count('\n')
    assert lines <= MAX_LINES, f'{module} has {lines} lines'


def test_the_checks_see_a_circle():
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': set()}) == [['a', 'b', 'c']]
