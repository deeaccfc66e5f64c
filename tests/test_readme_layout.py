"""README's "Layout" section names every module of the package (a new file gets a row)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'hybridlib'


def _layout_section():
    text = (ROOT / 'README.md').read_text(encoding='utf-8')
    start = text.index('## Layout')
    end = text.find('\n## ', start + 1)
    return text[start:end if end != -1 else None]


def _modules():
    """Top-level modules and packages, and the operator families."""
    names = [p.stem for p in PACKAGE.glob('*.py') if p.stem != '__init__']
    names += [p.name for p in PACKAGE.iterdir() if (p / '__init__.py').exists()]
    names += [p.stem for p in (PACKAGE / 'ops').glob('*.py') if p.stem != '__init__']
    return sorted(set(names))


@pytest.mark.parametrize('module', _modules())
def test_readme_layout_names_every_module(module):
    # as code: `name`, `name.py`, `name/`, `hybridlib/name.py`, `hybridlib/ops/name.py`, or a
    # path inside the package `hybridlib/name/...`
    name = re.escape(module)
    pattern = rf'`(?:hybridlib/(?:ops/)?)?{name}(?:\.py|/)?`|`hybridlib/{name}/'
    assert re.search(pattern, _layout_section()), \
        f'README.md\'s Layout section does not name {module}'
