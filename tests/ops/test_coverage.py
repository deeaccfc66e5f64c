"""Every registered operator has at least one harness case (a new operator needs its tests)."""
import importlib.util
import pathlib

from hybridlib.ops import registry

HERE = pathlib.Path(__file__).parent
# operators that no table case can call, with the reason and where they are tested instead
EXEMPT = {
    '_backward_Custom': 'its attribute is the live forward Custom node it differentiates; '
                        'every Custom case of test_custom.py runs it (autograd and the Symbol '
                        'backward), tests/test_operator.py also compiled',
}


def _all_cases():
    cases = []
    for path in sorted(HERE.glob('test_*.py')):
        if path.name == 'test_coverage.py':
            continue
        spec = importlib.util.spec_from_file_location(f'_cases_{path.stem}', path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases.extend(getattr(module, 'CASES', []))
    return cases


def test_every_operator_has_a_case():
    covered = {registry.get(c.op).name for c in _all_cases()}
    missing = sorted(set(registry.list_ops()) - covered - set(EXEMPT))
    assert not missing, f'operators without a test case in tests/ops: {missing}'


def test_every_case_names_a_registered_operator():
    unknown = sorted({c.op for c in _all_cases() if registry.find(c.op) is None})
    assert not unknown, f'cases for operators that are not registered: {unknown}'
