"""The examples run (the digits example needs the ``examples`` extra: scikit-learn)."""
import importlib.util
import os

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, 'examples')


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f'{name}.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_trains_exports_and_reimports(tmp_path):
    pytest.importorskip('sklearn', reason='the digits example needs scikit-learn (.[examples])')
    digits = _load('digits')
    accuracy, reimported = digits.main(['--epochs', '3', '--out', str(tmp_path / 'digits')])
    assert accuracy > 0.9
    assert reimported == accuracy
    assert (tmp_path / 'digits-symbol.json').exists()


def test_run_export_reproduces_mxnet(capsys):
    run_export = _load('run_export')
    prefix = os.path.join(os.path.dirname(__file__), 'data', 'reference', 'lenet')
    import sys
    argv, sys.argv = sys.argv, ['run_export.py', prefix]
    try:
        run_export.main()
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    diff = float(out.rsplit('=', 1)[1])
    assert diff < 1e-5
