"""The loaders under fuzzing (tests/fuzzing.py): every mutated file loads or gives one of the
library's errors. ``HYBRIDLIB_FUZZ_CASES`` sets the cases per format (default 8000, about
30 s in all); ``python tests/fuzzing.py N`` prints the outcomes by kind."""
import os

import pytest

import fuzzing

CASES = int(os.environ.get('HYBRIDLIB_FUZZ_CASES', '8000'))


@pytest.mark.parametrize('fmt', fuzzing.FORMATS, ids=lambda f: f.name)
def test_mutated_files_load_or_give_library_errors(fmt):
    counts, unclean, slowest = fuzzing.run_format(fmt, CASES)
    shown = '\n'.join(f'case {o.case}: {o.kind}: {o.error!r}'[:400] for o in unclean[:10])
    assert not unclean, f'{fmt.name}: {len(unclean)} of {CASES} cases ended badly:\n{shown}'
    # the mutators reach both sides: files that still load, and each kind of refusal
    assert counts['loaded'] and sum(counts.values()) - counts['loaded'] > CASES // 2, counts


def test_an_unclean_outcome_is_reported(tmp_path):
    class Broken(fuzzing.CIFARFiles):
        def load(self, folder):
            raise KeyError('a raw Python error')
    outcome = fuzzing.run_case(Broken(), Broken().files(), 0, str(tmp_path))
    assert outcome.kind == 'UNCLEAN KeyError'


def test_a_hang_is_stopped_and_reported(tmp_path, monkeypatch):
    class Stuck(fuzzing.CIFARFiles):
        def load(self, folder):
            while True:
                pass
    monkeypatch.setattr(fuzzing, 'SLOW', 0.2)
    outcome = fuzzing.run_case(Stuck(), Stuck().files(), 0, str(tmp_path))
    assert outcome.kind == 'UNCLEAN hang' and outcome.seconds < 5
