#!/usr/bin/env bash
# Runs kgate's GPU tests on a GPU machine and prints a summary table last.
#   scripts/gpu-check.sh                          configure + build here (build-gpu/), then
#                                                 ctest -L gpu
#   KGATE_PREBUILT=DIR scripts/gpu-check.sh       use a build made elsewhere: a build tree,
#                                                 or scripts/gpu-bundle.sh's bin/ + lib/
#                                                 (DIR/lib goes on LD_LIBRARY_PATH); each gpu
#                                                 test runs in its own process, as in ctest;
#                                                 KGATE_GPU_FILTER=ERE runs the matching ones
# Logs go to $OUT (default out/gpu-check). Exit status: 0 when every test passed.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$ROOT/out/gpu-check}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
say() { echo "[gpu-check] $*"; }

{
  date -u
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1 || true
  command -v nvcc >/dev/null && nvcc --version | tail -1
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

export KGATE_SOURCE_DIR="$ROOT"
export KGATE_REQUIRE_GPU=1  # a missing backend fails the tests instead of skipping them
export KGATE_INCLUDE_DIR="$ROOT/harness/include"
export KGATE_TEST_CACHE="${KGATE_TEST_CACHE:-$(mktemp -d /tmp/kgate-gpu-cache.XXXXXX)}"
[ -x /usr/local/cuda/bin/nvcc ] && export KGATE_NVCC="${KGATE_NVCC:-/usr/local/cuda/bin/nvcc}"

status=0
if [ -n "${KGATE_PREBUILT:-}" ]; then
  BUILD=$(cd "$KGATE_PREBUILT" && pwd)
  export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # A build tree (tests/kgate_gpu_tests) or a bundle (bin/kgate_gpu_tests).
  find_one() {
    for p in "$BUILD/$1" "$BUILD/bin/$(basename "$1")"; do
      [ -e "$p" ] && { echo "$p"; return 0; }
    done
    say "prebuilt $BUILD has no $1"; exit 3
  }
  BIN=$(find_one tests/kgate_gpu_tests) || exit 3
  export KGATE_CUDA_PLUGIN
  KGATE_CUDA_PLUGIN=$(find_one libkgate_native_cuda.so) || exit 3
  # The gate-matrix tests drive a real kgate-native (which finds the plugin beside it).
  export KGATE_NATIVE_BIN
  KGATE_NATIVE_BIN=$(find_one kgate-native) || exit 3
  say "prebuilt: $BUILD (tests $BIN, plugin $KGATE_CUDA_PLUGIN)"
  # One process per test (a device fault poisons its process, as in ctest).
  tests=$("$BIN" --gtest_list_tests | awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}' |
          grep -E -- "${KGATE_GPU_FILTER:-.}")  # KGATE_GPU_FILTER: an ERE over Suite.Test
  if [ -z "$tests" ] && ! printf 'gpu.redteam_native_cuda' | grep -qE -- "${KGATE_GPU_FILTER:-.}"; then
    say "no tests listed by $BIN match KGATE_GPU_FILTER='${KGATE_GPU_FILTER:-}'"; "$BIN" --gtest_list_tests; exit 3
  fi
  : > "$OUT/tests.log"
  for t in $tests; do
    start=$(date +%s%N)
    one="$OUT/current-test.log"
    timeout 600 "$BIN" --gtest_filter="$t" > "$one" 2>&1
    rc=$?
    { echo "==== gpu.$t (exit $rc)"; cat "$one"; } >> "$OUT/tests.log"
    secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN {print (b - a) / 1e9}')
    if [ $rc -eq 0 ]; then res=PASS; else res="FAIL($rc)"; status=1; fi
    printf '%-60s %-9s %8.2fs\n' "gpu.$t" "$res" "$secs" >> "$SUMMARY"
    grep -hE '^(device|A/A|tiny|uncapturable|side stream|starter|gate matrix)' "$one" | sed 's/^/    /' >> "$SUMMARY" || true
    [ $rc -ne 0 ] && sed 's/^/    | /' "$one" | tail -40
  done
  rm -f "$OUT/current-test.log"
  # The native CUDA red-team corpus (ctest's gpu.redteam_native_cuda): every case through
  # `kgate bench`, each rejected for its expected reason, the unusual ones passing.
  if [ -z "${KGATE_GPU_FILTER:-}" ] || printf 'gpu.redteam_native_cuda' | grep -qE -- "$KGATE_GPU_FILTER"; then
    start=$(date +%s%N)
    KGATE_BIN=$(find_one kgate) KGATE_REDTEAM_DIR=native_cuda KGATE_REDTEAM_TIMEOUT=30 \
      timeout 900 bash "$ROOT/tests/e2e/redteam_native.sh" > "$OUT/redteam-native-cuda.log" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN {print (b - a) / 1e9}')
    if [ $rc -eq 0 ]; then res=PASS; else res="FAIL($rc)"; status=1; fi
    printf '%-60s %-9s %8.2fs\n' "gpu.redteam_native_cuda" "$res" "$secs" >> "$SUMMARY"
    sed 's/^/    /' "$OUT/redteam-native-cuda.log" >> "$SUMMARY"
  fi
else
  BUILD="$ROOT/build-gpu"
  say "configure + build in $BUILD"
  if ! cmake -S "$ROOT" -B "$BUILD" -G Ninja -DKGATE_BUILD_BENCHMARKS=OFF \
       -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$OUT/configure.log" 2>&1; then
    tail -30 "$OUT/configure.log"; say "configure failed (log: $OUT/configure.log)"; exit 3
  fi
  if ! cmake --build "$BUILD" -j"$(nproc)" > "$OUT/build.log" 2>&1; then
    grep -E "error|FAILED" "$OUT/build.log" | head -30; say "build failed (log: $OUT/build.log)"; exit 3
  fi
  export KGATE_CUDA_PLUGIN="$BUILD/libkgate_native_cuda.so"
  ctest --test-dir "$BUILD" -L gpu -V --timeout 600 \
    --output-junit "$OUT/ctest-junit.xml" > "$OUT/ctest.log" 2>&1 || status=1
  # "  1/9 Test #3: gpu.CudaTest.X ....   Passed    1.23 sec"
  grep -E 'Test +#' "$OUT/ctest.log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.+ */ /' \
    | awk '{printf "%-60s %-9s %8ss\n", $1, $2, $(NF-1)}' >> "$SUMMARY"
  grep -hE '^(device|A/A|tiny|uncapturable|side stream|starter|gate matrix)' "$OUT/ctest.log" | sed 's/^/    /' >> "$SUMMARY" || true
  [ $status -ne 0 ] && grep -A40 -E 'Failure|\*\*\*Failed|FAILED' "$OUT/ctest.log" | head -80
fi

echo
echo "==== kgate GPU tests: $(head -1 "$OUT/environment.txt" 2>/dev/null) ===="
cat "$SUMMARY"
if [ $status -eq 0 ]; then say "all GPU tests passed"; else say "GPU tests FAILED (logs in $OUT)"; fi
exit $status
