"""README's "Layout" section names every module of the package, one row per layer in import
order: a module imports (at module level) only modules of its own row or of rows above it."""
import pathlib
import re

import pytest

from test_import_graph import MODULES, _graph

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'hybridlib'


def _rows():
    """The rows of the Layout table, in order, as (first cell, whole row)."""
    text = (ROOT / 'README.md').read_text(encoding='utf-8')
    start = text.index('## Layout')
    end = text.find('\n## ', start + 1)
    section = text[start:end if end != -1 else None]
    rows = [(line.split('|')[1], line) for line in section.splitlines() if line.startswith('| `')]
    assert rows, 'README.md has no Layout table'
    return rows


def _unit(module):
    """What a README row names for a module: ``x`` for hybridlib.x and for anything in the
    subpackage hybridlib.x, ``ops.y`` for an operator module."""
    parts = module.split('.')[1:]
    if parts[0] == 'ops' and len(parts) > 1:
        return f'ops.{parts[1]}'
    return parts[0]


def _row_of(unit, rows):
    """Index of the first row naming ``unit``, or None: a module as `name.py` or a package as
    `name/` in the first cell; an operator module as `name` or `name.py` anywhere in a row whose
    first cell is about hybridlib/ops/."""
    ops = unit.startswith('ops.')
    name = re.escape(unit[4:] if ops else unit)
    pattern = rf'`(?:hybridlib/ops/)?{name}(?:\.py)?`' if ops else \
        rf'`(?:hybridlib/)?{name}(?:\.py|/)`'
    for i, (first, whole) in enumerate(rows):
        if ops and 'hybridlib/ops/' in first and re.search(pattern, whole):
            return i
        if not ops and 'hybridlib/ops/' not in first and re.search(pattern, first):
            return i
    return None


UNITS = sorted({_unit(m) for m in MODULES if m != 'hybridlib' and _unit(m) != 'ops'})


@pytest.mark.parametrize('unit', UNITS)
def test_readme_layout_names_every_module(unit):
    assert _row_of(unit, _rows()) is not None, f'README.md\'s Layout table does not name {unit}'


def test_readme_layout_is_in_import_order():
    rows = _rows()
    edges, _ = _graph()
    wrong = []
    for module, targets in edges.items():
        if module in ('hybridlib', 'hybridlib.ops') or not module.startswith('hybridlib.'):
            continue
        here = _row_of(_unit(module), rows)
        for target in targets:
            if target in ('hybridlib', 'hybridlib.ops'):
                continue
            there = _row_of(_unit(target), rows)
            if here is not None and there is not None and there > here:
                wrong.append(f'{module} (row {here + 1}) imports {target} (row {there + 1})')
    assert wrong == [], 'README.md\'s Layout rows are out of import order:\n' + '\n'.join(wrong)


def test_the_order_check_reads_rows():
    rows = [('`hybridlib/base.py`', '| `hybridlib/base.py` | errors, `nn` |'),
            ('`hybridlib/ops/<family>.py`', '| `hybridlib/ops/<family>.py` | `nn`, `conv` |'),
            ('`hybridlib/nn/`', '| `hybridlib/nn/` | layers |')]
    assert _row_of('base', rows) == 0
    assert _row_of('ops.nn', rows) == 1
    assert _row_of('nn', rows) == 2
    assert _row_of('conv', rows) is None
