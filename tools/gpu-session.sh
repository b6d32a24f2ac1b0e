#!/usr/bin/env bash
# One GPU session on the H200 runner: build there (with the carried .sysroot for the
# libraries the runner lacks), run the GPU tests, the four-gate bench timing, the
# measurement studies and a GPU suite run. Everything lands under $OUT.
# Usage (on the runner, repo root): bash tools/gpu-session.sh [steps...]
#   steps: build tests bench study timers run   (default: all)
set -uo pipefail
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
root="$PWD"
steps="${*:-build tests bench study timers run}"
export PKG_CONFIG_PATH="$root/.sysroot/lib/x86_64-linux-gnu/pkgconfig"
export CMAKE_PREFIX_PATH="$root/.sysroot"
export LD_LIBRARY_PATH="$root/.sysroot/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
export PYTHONUNBUFFERED=1
B="$root/build-gpu"
has() { [[ " $steps " == *" $1 "* ]]; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvcc --version | tail -2; g++ --version | head -1; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} > "$OUT/env.txt" 2>&1
if has build; then
  t0=$(date +%s)
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKGATE_BUILD_BENCHMARKS=OFF > "$OUT/build.log" 2>&1 &&
    cmake --build "$B" -j16 >> "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s"
fi
if has alltests; then
  ctest --test-dir "$B" -LE gpu -j16 --output-on-failure --timeout 300 > "$OUT/all-tests.log" 2>&1
  echo "non-gpu tests rc=$?"; grep -E "tests passed|tests failed|\*\*\*Failed|Failed  |Not Run" "$OUT/all-tests.log" | tail -25
fi
if has tests; then
  ctest --test-dir "$B" -L gpu --output-on-failure --timeout 300 > "$OUT/gpu-tests.log" 2>&1
  echo "gpu tests rc=$?"; grep -E "tests passed|tests failed|\*\*\*Failed|Failed  " "$OUT/gpu-tests.log" | tail -15
fi
if has bench; then
  for i in 1 2 3; do
    /usr/bin/time -f "bench wall %e s" "$B/kgate" bench --problem kernelbench/native/softmax.yaml \
      --candidate kernelbench/native/starters/softmax.cu --json "$OUT/bench-softmax-$i.json" \
      > "$OUT/bench-softmax-$i.txt" 2>&1
    echo "bench softmax cuda rc=$?"; tail -1 "$OUT/bench-softmax-$i.txt"
  done
  tail -30 "$OUT/bench-softmax-1.txt"
fi
if has study; then
  timeout 420 "$B/kgate_measure_study" --out "$OUT/measure_study.json" --trials "${TRIALS:-100}" 2>&1 | tee "$OUT/measure_study.txt"
fi
if has timers; then
  REPEATS="${REPEATS:-20}" KGATE_NATIVE_BIN="$B/kgate-native" timeout "${TIMERS_S:-400}" python3 tools/timer_study.py "$OUT" 2>&1 | tail -20
fi
if has run; then
  timeout 200 "$B/kgate" run suites/gpu-smoke.yaml --gpu h200 --out "$OUT/run" > "$OUT/run.log" 2>&1
  echo "run rc=$?"; tail -15 "$OUT/run.log"
fi
# The device tool brings back at most 8 files: pack everything into one archive.
( cd "$OUT" && tar czf /tmp/session.tgz --exclude='run/workspaces' . && find . -mindepth 1 -delete && mv /tmp/session.tgz . )
ls -la "$OUT"
