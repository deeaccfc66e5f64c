"""The benchmark suite (benchmarks/) runs on a tiny setting. Timings are never asserted."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / 'benchmarks'


def run(script, *args):
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, 'PYTHONPATH': str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_runner_prints_the_tables(tmp_path):
    raw_path = tmp_path / 'results.json'
    out = run('run.py', '--quick', '--repeat', '1', '--only', 'mlp_b64_train',
              '--json', str(raw_path))
    rows = [line for line in out.splitlines() if line.startswith('| mlp_b64_train ')]
    assert len(rows) == 2  # times and ratios, peak memory
    times = [cell.strip() for cell in rows[0].strip('|').split('|')]
    hl_imp, hl_hyb, mx_imp, mx_hyb, eager, jit, floor, arithmetic = times[1:9]
    assert float(hl_imp) > 0 and float(hl_hyb) > 0 and float(floor) > 0
    # 3 x 2 x 64 x (784 x 256 + 256 x 256 + 256 x 10) FLOPs at the machine's sgemm rate
    assert 0 < float(arithmetic) < float(hl_hyb)
    assert mx_imp == mx_hyb == eager == jit == '-'  # peers not given: left out
    assert 'mlp_b64_train: hybridized / torch jit' in out  # the target, skipped
    assert 'arithmetic floor: FLOPs / ' in out and ' on ' in out.splitlines()[3]

    raw = json.loads(raw_path.read_text())
    assert raw['errors'] == []
    assert {(t['lib'], t['mode']) for t in raw['times']} == {
        ('hybridlib', 'imperative'), ('hybridlib', 'hybridized'), ('numpy', 'floor'),
        ('arithmetic', 'floor')}
    assert {m['mode'] for m in raw['memory'] if m['peak_mb'] > 0} == {'imperative', 'hybridized'}


def test_every_gluon_workload_runs_on_hybridlib():
    out = run('gluon_workloads.py', '--lib', 'hybridlib', '--quick', '--repeat', '1')
    results = [json.loads(line.split(' ', 1)[1]) for line in out.splitlines()
               if line.startswith('@@bench ')]
    assert [r.get('error') for r in results] == [None] * 16
    assert {(r['workload'], r['mode']) for r in results} == {
        (name, mode) for name in ('mlp_b1_infer', 'mlp_b256_infer', 'mlp_b64_train',
                                  'deep20_b1_infer', 'lenet_b16_infer', 'lenet_b64_train',
                                  'resnet18_b1_infer', 'resnet18_b8_train')
        for mode in ('imperative', 'hybridized')}


def test_training_loop_runs_one_epoch():
    pytest.importorskip('sklearn')
    out = run('training_loop.py', '--epochs', '1', '--rounds', '1')
    rows = [line for line in out.splitlines() if line.startswith('| imperative |')
            or line.startswith('| hybridized |')]
    assert len(rows) == 2 and all(float(r.split('|')[2]) > 0 for r in rows)


def test_distributed_benchmark_runs_on_two_workers():
    pytest.importorskip('mpi4py')
    out = run('distributed.py', '--steps', '20', '--sizes', '4096,65536', '--models', 'digits')
    assert '| 65,536 |' in out
    speed = [line for line in out.splitlines() if line.startswith('| digits CNN, batch 64 | 2 |')]
    assert len(speed) == 1 and float(speed[0].split('|')[4]) > 0
    assert 'Ring cost model' in out
