"""Every registered operator has at least one harness case (a new operator needs its tests), and
the cases reach every specialised body and engine path through the compiled graph."""
import functools
import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import sys
import types

import numpy as np

import harness
import hybridlib.ops
from hybridlib.ops import registry

HERE = pathlib.Path(__file__).parent
# operators that no table case can call, with the reason and where they are tested instead
EXEMPT = {
    '_backward_Custom': 'its attribute is the live forward Custom node it differentiates; '
                        'every Custom case of test_custom.py runs it (autograd and the Symbol '
                        'backward), tests/test_operator.py also compiled',
}
# code objects of comprehensions run inline with their function: not bodies of their own
_COMPREHENSIONS = {'<listcomp>', '<dictcomp>', '<setcomp>', '<genexpr>'}


@functools.lru_cache(maxsize=None)
def _all_cases():
    cases = []
    for path in sorted(HERE.glob('test_*.py')):
        if path.name == 'test_coverage.py':
            continue
        spec = importlib.util.spec_from_file_location(f'_cases_{path.stem}', path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases.extend(getattr(module, 'CASES', []))
    return tuple(cases)


def test_every_operator_has_a_case():
    covered = {registry.get(c.op).name for c in _all_cases()}
    missing = sorted(set(registry.list_ops()) - covered - set(EXEMPT))
    assert not missing, f'operators without a test case in tests/ops: {missing}'


def test_every_case_names_a_registered_operator():
    unknown = sorted({c.op for c in _all_cases() if registry.find(c.op) is None})
    assert not unknown, f'cases for operators that are not registered: {unknown}'


def _code(fn):
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.unwrap(fn).__code__


def _nested(code):
    """``code`` and the functions defined in it (the closures a ``specialise`` returns)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name not in _COMPREHENSIONS:
            yield from _nested(const)


def _targets():
    """{code object: what it is} for every explicit ``specialise`` with the functions nested in
    it, and every function in an operator module's ``ENGINE_PATHS``."""
    targets = {}
    for op in registry.REGISTRY.values():
        if op._specialise is not None:
            for code in _nested(_code(op._specialise)):
                targets.setdefault(code, f'specialise of {op.name}')
    for info in pkgutil.iter_modules(hybridlib.ops.__path__):
        module = importlib.import_module(f'hybridlib.ops.{info.name}')
        for fn in getattr(module, 'ENGINE_PATHS', ()):
            targets.setdefault(_code(fn), f'engine path of {info.name}')
    return targets


def test_every_specialisation_and_engine_path_is_reached():
    """Each case's compiled forward (static_alloc, float64 and float32 inputs) and backward run
    under a profile hook that records which of the target functions are entered."""
    targets = _targets()
    entered = set()

    def profile(frame, event, arg):
        if event == 'call':
            entered.add(frame.f_code)

    errors = []
    for case in _all_cases():
        if not case.check_symbol:
            continue
        for dtype in (None, np.float32) if case.check_float32 else (None,):
            sys.setprofile(profile)
            try:
                harness.run_compiled(case, np.random.default_rng(case.seed + 12345), dtype)
            except Exception as err:     # reported with the unreached bodies it may explain
                errors.append(f'{case} ({dtype or "float64"}): {type(err).__name__}: {err}')
            finally:
                sys.setprofile(None)
    missing = sorted(f'{code.co_filename}:{code.co_firstlineno} {code.co_name} ({what})'
                     for code, what in targets.items() if code not in entered)
    assert not missing and not errors, \
        'reached by no case of tests/ops (compiled, static_alloc=True):\n  ' + \
        '\n  '.join(missing) + ('\ncompiled runs that failed:\n  ' + '\n  '.join(errors)
                                if errors else '')
