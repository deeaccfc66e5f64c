#!/usr/bin/env bash
# The GPU check for a device machine: install the checkout without dependencies into the machine's
# python (numpy, cupy and PyTorch are already there), a smoke test, one ResNet-18 training step
# against PyTorch eager, then the test suite split over parallel pytest processes sharing the GPU.
# Usage, from the project root:  bash benchmarks/gpu_check.sh [SUITE_SECONDS] [pytest args...]
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
SUITE_S=${1:-270}; shift || true
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
python3 - <<'PY' 2>&1 | tee "$OUT/smoke.txt"
import cupy, hybridlib as mx
print("cupy", cupy.__version__, "cuda runtime", cupy.cuda.runtime.runtimeGetVersion(), "devices", mx.num_gpus())
x = mx.nd.ones((2, 3), ctx=mx.gpu(0)); print("gpu add:", (x + x).asnumpy().tolist(), x.context)
PY
timeout 100 python3 benchmarks/resnet18_gpu.py 2>&1 | tee "$OUT/bench.txt"
if [ $# -gt 0 ]; then targets=("$@"); else
  mapfile -t targets < <(find tests -name 'test_*.py' -not -path 'tests/clients/*' -printf '%s %p\n' | sort -rn | awk '{print $2}')
fi
N=8; for i in $(seq 0 $((N-1))); do
  group=(); for j in "${!targets[@]}"; do [ $((j % N)) -eq $i ] && group+=("${targets[$j]}"); done
  [ ${#group[@]} -eq 0 ] && continue
  timeout "$SUITE_S" python3 -m pytest -p no:cacheprovider -rfE --tb=short "${group[@]}" >"/tmp/suite$i.txt" 2>&1 &
done
wait
cat /tmp/suite*.txt > "$OUT/tests.txt"
echo "== summaries"; grep -h -E "^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)" /tmp/suite*.txt
echo "== failures"; grep -h -E "^(FAILED|ERROR) " /tmp/suite*.txt | cut -c1-240 | sort | head -150
