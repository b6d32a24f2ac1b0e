#!/usr/bin/env bash
# One GPU session on the H200 runner: the GPU tests, the four-gate bench timing, the
# KernelBench worker on CUDA, suite runs and the measurement studies. Everything lands
# under $OUT (packed into one archive at the end: the device tool brings back few files).
#
# Binaries: a bundle made here by scripts/gpu-bundle.sh (carried as .devcarry: bin/ + the
# libraries the runner lacks in lib/) when it runs there, else a build on the runner
# with the carried .sysroot.
#
# Usage (on the runner, repo root): bash tools/gpu-session.sh [steps...]
#   or a recorded plan (tools/gpu-plans/NAME.env: steps and their settings):
#   bash tools/gpu-plan.sh NAME [VAR=value ...]
#   steps: tests pytest bench matmul doctor sandbox rtnative redteam kbbench kbrun smoke onerun sweep capture dispatch template aa compare study timers nativeslot knobs
#          (default: all; dispatch needs KERNELBENCH_ROOT or an official checkout carried as .kb;
#          DISPATCH_AGENT picks its agent kind, default template; DISPATCH_PYTEST_K narrows
#          its GPU tests with pytest's -k)
#   PYTEST_FILES / PYTEST_K replace the pytest step's test files / narrow them with -k.
#   GPU_TARGET names the --gpu target of the suite runs (default: the one kgate detects).
#   STEP_S_<step>=N caps a step's seconds (defaults below): SIGTERM then, SIGKILL 20 s later,
#   so the archive is packed before the device call's own limit (keep that 60 s above the
#   sum of the caps).
set -uo pipefail
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
root="$PWD"
steps="${*:-tests pytest bench matmul doctor sandbox redteam kbbench kbrun smoke onerun sweep dispatch aa study timers}"
has() { [[ " $steps " == *" $1 "* ]]; }
cap() { local v="STEP_S_$1"; echo "${!v:-$2}"; }
export PATH="/usr/local/cuda/bin:$PATH"
export PYTHONUNBUFFERED=1
export KGATE_ROOT="$root" KGATE_SOURCE_DIR="$root"
export KGATE_INCLUDE_DIR="$root/harness/include" KGATE_PYTHONPATH="$root/harness/python"
export KGATE_PYTHON="${KGATE_PYTHON:-$(command -v python3)}"
export KGATE_NVCC=/usr/local/cuda/bin/nvcc
t_session=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t_session )) s] $*"; }
# A session copy of SUITE (suites/X.yaml) as $suite, run on the given shard (k/n) or on
# the listed level/name problems; the sed expressions in $edits applied first. Fills
# $suite and the array $shard for `kgate run "$suite" "${shard[@]}"`.
session_suite() {  # NAME SOURCE SHARD "PROBLEMS" [sed args...]
  local name="$1" src="$2" want="$3" problems="$4"
  shift 4
  suite="suites/_session-$name.yaml"
  sed "$@" -e "s/^id: .*/id: $name/" "$src" > "$suite"
  shard=()
  if [ -n "$want" ]; then
    shard=(--shard "$want")
  else
    local list
    list=$(for p in $problems; do printf 'kb-%s/%s, ' "${p%%/*}" "${p#*/}"; done)
    sed -i -e "s|^levels: .*|levels: []\nproblems: [${list%, }]|" "$suite"
  fi
}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  nvcc --version | tail -2; g++ --version | head -1
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  git -C "$root" log -1 --format='kgate %h %s' 2>/dev/null || true
} > "$OUT/env.txt" 2>&1

if [ -x "$root/.devcarry/bin/kgate" ] &&
   LD_LIBRARY_PATH="$root/.devcarry/lib" "$root/.devcarry/bin/kgate" --version > "$OUT/version.txt" 2>&1; then
  B="$root/.devcarry/bin"
  export LD_LIBRARY_PATH="$root/.devcarry/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  prebuilt=1
  stamp "prebuilt bundle: $(head -1 "$OUT/version.txt")"
else
  export PKG_CONFIG_PATH="$root/.sysroot/lib/x86_64-linux-gnu/pkgconfig"
  export CMAKE_PREFIX_PATH="$root/.sysroot"
  export LD_LIBRARY_PATH="$root/.sysroot/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  B="$root/build-gpu"
  prebuilt=0
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKGATE_BUILD_BENCHMARKS=OFF > "$OUT/build.log" 2>&1 &&
    cmake --build "$B" -j16 --target kgate kgate-native kgate_native_cuda kgate_measure_study \
      kgate_gpu_tests >> "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  stamp "built on the runner"
fi
export KGATE_NATIVE_BIN="$B/kgate-native"

if has tests; then
  # The one GPU test runner (scripts/gpu-check.sh), on the carried bundle or this build tree.
  if [ "$prebuilt" = 1 ]; then tests_from="$root/.devcarry"; else tests_from="$B"; fi
  OUT="$OUT/gpu-check" KGATE_PREBUILT="$tests_from" timeout -k 20 "$(cap tests 300)" \
    bash scripts/gpu-check.sh > "$OUT/gpu-tests.log" 2>&1
  stamp "gpu tests rc=$?"; tail -25 "$OUT/gpu-tests.log"
fi
if has pytest; then
  KGATE_REQUIRE_GPU=1 timeout -k 20 "$(cap pytest 240)" python3 -m pytest -q -p no:cacheprovider \
    ${PYTEST_FILES:-tests/python/test_worker_cuda.py tests/python/test_audit.py} ${PYTEST_K:+-k "$PYTEST_K"} \
    > "$OUT/pytest-cuda.log" 2>&1
  stamp "pytest cuda rc=$?"; tail -30 "$OUT/pytest-cuda.log"
fi
if has bench; then
  # BENCH_SHAPE="{R: 4096, C: 4096}" benches that shape instead of the problem's own.
  bench_problem=kernelbench/native/softmax.yaml
  if [ -n "${BENCH_SHAPE:-}" ]; then
    bench_problem=kernelbench/native/_session-softmax.yaml
    sed "s/^bench: .*/bench: ${BENCH_SHAPE}/" kernelbench/native/softmax.yaml > "$bench_problem"
  fi
  for i in $(seq 1 "${BENCH_RUNS:-2}"); do
    /usr/bin/time -f "bench wall %e s" timeout -k 20 "$(cap bench 120)" "$B/kgate" bench \
      --problem "$bench_problem" --candidate kernelbench/native/starters/softmax.cu \
      --json "$OUT/bench-softmax-$i.json" > "$OUT/bench-softmax-$i.txt" 2>&1
    stamp "bench softmax cuda #$i rc=$?: $(tail -1 "$OUT/bench-softmax-$i.txt")"
  done
  [ -n "${BENCH_SHAPE:-}" ] && rm -f "$bench_problem"  # a second softmax in the level would clash
  tail -30 "$OUT/bench-softmax-1.txt"
fi
if has matmul; then
  /usr/bin/time -f "bench wall %e s" timeout -k 20 "$(cap matmul 240)" "$B/kgate" bench \
    --problem kernelbench/native/matmul.yaml --candidate kernelbench/native/starters/matmul.cu \
    --json "$OUT/bench-matmul.json" > "$OUT/bench-matmul.txt" 2>&1
  stamp "bench matmul cuda rc=$?"; tail -30 "$OUT/bench-matmul.txt"
fi
if has doctor; then
  KGATE_STARTERS_DIR="$root/kernelbench/native/starters" \
    /usr/bin/time -f "doctor wall %e s" timeout -k 20 "$(cap doctor 240)" "$B/kgate" doctor --backend cuda \
    ${GPU_TARGET:+--gpu "$GPU_TARGET"} --out "$OUT/doctor.json" > "$OUT/doctor.txt" 2>&1
  stamp "kgate doctor cuda rc=$?"; tail -30 "$OUT/doctor.txt"
fi
# The native CUDA red-team corpus (tests/redteam/native_cuda) through `kgate bench`: the
# timing audit's rounds and the result-cache rule of kgate-native on a GPU.
if has rtnative; then
  KGATE_BIN="$B/kgate" KGATE_REDTEAM_DIR=native_cuda timeout -k 20 "$(cap rtnative 180)" \
    bash tests/e2e/redteam_native.sh > "$OUT/redteam-native-cuda.txt" 2>&1
  stamp "native red team on CUDA rc=$?"; tail -16 "$OUT/redteam-native-cuda.txt"
fi
# The worker sandbox on the GPU runner (docs/sandbox.md): what holds there, the host
# red-team cases, and a KernelBench bench on CUDA inside the sandbox (torch, Triton and
# the driver must work behind the walls), beside the same bench with KGATE_SANDBOX=off.
if has sandbox; then
  KGATE_BIN="$B/kgate" KGATE_NATIVE_BIN="$B/kgate-native" timeout -k 20 "$(cap sandbox 300)" \
    bash tests/e2e/redteam_sandbox.sh > "$OUT/sandbox-redteam.txt" 2>&1
  stamp "sandbox red team rc=$?"; tail -16 "$OUT/sandbox-redteam.txt"
  for mode in on off; do
    KGATE_SANDBOX=$mode timeout -k 20 "$(cap sandbox 300)" "$B/kgate" bench --device cuda \
      --problem tests/fixtures/kernelbench/relu.py --candidate tests/fixtures/kernelbench/candidates/relu_clamp.py \
      --baseline compile > "$OUT/sandbox-kb-$mode.txt" 2>&1
    stamp "sandbox=$mode kernelbench bench (compile baseline) rc=$?"
    grep -E "sandbox:|verdict:" "$OUT/sandbox-kb-$mode.txt"
  done
fi
# The KernelBench red-team corpus on a CUDA worker (docs/redteam.md): every case, the
# `requires: cuda` ones (side streams) included.
if has redteam; then
  KGATE_BIN="$B/kgate" KGATE_REQUIRE_GPU=1 KGATE_REDTEAM_CUDA=1 timeout -k 20 "$(cap redteam 300)" \
    python3 -m pytest -q -p no:cacheprovider tests/python/test_redteam.py > "$OUT/redteam-cuda.log" 2>&1
  stamp "red team on CUDA rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/redteam-cuda.log" | tail -12
fi

if has kbbench; then
  for p in ${KB_BENCH:-level1/18_Softmax level2/7_Matmul_Scale_Softmax}; do
    n=$(basename "$p")
    /usr/bin/time -f "bench wall %e s" timeout -k 20 "$(cap kbbench 200)" "$B/kgate" bench \
      --problem "kernelbench/$p.py" --candidate "kernelbench/solutions/$p.py" --device cuda \
      --baseline compile --json "$OUT/kbbench-$n.json" > "$OUT/kbbench-$n.txt" 2>&1
    stamp "kgate bench $p (vs torch.compile) rc=$?"; tail -25 "$OUT/kbbench-$n.txt"
  done
fi
# A suite with a session-sized budget: SUITE_WALL_S / PROBLEM_WALL_S / MAX_EXPERIMENTS
# replace the suite's own (a copy under suites/, on the runner's copy of the tree only).
short_suite() {
  local src="suites/$1.yaml" dst="suites/_session-$1.yaml"
  sed -e "s/^  suite_wall_s: .*/  suite_wall_s: ${SUITE_WALL_S:-300}/" \
      -e "s/^  problem_wall_s: .*/  problem_wall_s: ${PROBLEM_WALL_S:-60}/" \
      -e "s/^  problem_floor_s: .*/  problem_floor_s: ${PROBLEM_FLOOR_S:-20}/" \
      -e "s/^  max_experiments: .*/  max_experiments: ${MAX_EXPERIMENTS:-3}/" \
      -e "s/^id: .*/id: $1/" "$src" > "$dst"
  echo "$dst"
}
if has kbrun; then
  # Every GPU of the host (one shard each), unless CUDA_VISIBLE_DEVICES pins this step.
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
  multi=(); [[ -z "${CUDA_VISIBLE_DEVICES:-}" && "$gpus" == *,* ]] && multi=(--gpus "$gpus")
  /usr/bin/time -f "run wall %e s" timeout -k 20 "$(cap kbrun 420)" "$B/kgate" run \
    "$(short_suite kernelbench-gpu)" ${GPU_TARGET:+--gpu "$GPU_TARGET"} "${multi[@]}" --out "$OUT/kbrun" > "$OUT/kbrun.log" 2>&1
  stamp "kgate run kernelbench-gpu rc=$?"; tail -40 "$OUT/kbrun.log"
  ls "$OUT/kbrun"; cat "$OUT/kbrun"/*.md 2>/dev/null | head -60
fi
if has smoke; then
  # SMOKE_PROBLEMS (names of native problems, e.g. "softmax rmsnorm") narrows the run to
  # those: matmul's max-autotune references alone take a minute.
  suite=$(SUITE_WALL_S=${SMOKE_WALL_S:-150} MAX_EXPERIMENTS=${SMOKE_EXPERIMENTS:-6} PROBLEM_WALL_S=40 \
          short_suite gpu-smoke)
  if [ -n "${SMOKE_PROBLEMS:-}" ]; then
    list=$(for p in $SMOKE_PROBLEMS; do printf 'native/%s, ' "$p"; done)
    sed -i -e "s|^levels: .*|levels: []\nproblems: [${list%, }]|" "$suite"
  fi
  /usr/bin/time -f "run wall %e s" timeout -k 20 "$(cap smoke 300)" "$B/kgate" run \
    "$suite" ${GPU_TARGET:+--gpu "$GPU_TARGET"} --out "$OUT/smoke" > "$OUT/smoke.log" 2>&1
  stamp "kgate run gpu-smoke rc=$?"; tail -30 "$OUT/smoke.log"
  cat "$OUT"/smoke/*/results.tsv "$OUT"/smoke/results*.tsv 2>/dev/null | head -60
  # The native problems against their ops' PyTorch forms (the suite's torch_references).
  grep -E "remeasure vs|vs PyTorch" "$OUT/smoke.log" | tail -30
  grep -A14 '^## Problems' "$OUT/smoke/report.md" 2>/dev/null
fi
if has onerun; then
  # gpu-smoke on one native problem alone (ONE_PROBLEM, default matmul; ONE_SHAPE, e.g.
  # "{R: 4096, C: 4096}", times another bench shape under a session id): the cost of each
  # experiment of that problem in a run.
  prob=${ONE_PROBLEM:-matmul}; id=$prob; copy=""
  if [ -n "${ONE_SHAPE:-}" ]; then
    id="${prob}_session"; copy="kernelbench/native/_session-$prob.yaml"
    sed -e "s/^bench: .*/bench: ${ONE_SHAPE}/" -e "s/^id: .*/id: $id/" "kernelbench/native/$prob.yaml" > "$copy"
  fi
  suite=$(SUITE_WALL_S=${ONE_WALL_S:-200} MAX_EXPERIMENTS=${ONE_EXPERIMENTS:-4} \
          PROBLEM_WALL_S=${ONE_WALL_S:-200} PROBLEM_FLOOR_S=60 short_suite gpu-smoke)
  sed -i -e "s/^levels: .*/levels: []\nproblems: [native\/$id]/" -e "s/^id: .*/id: gpu-$id/" "$suite"
  /usr/bin/time -f "run wall %e s" timeout -k 20 "$(cap onerun 300)" "$B/kgate" run "$suite" \
    ${GPU_TARGET:+--gpu "$GPU_TARGET"} --out "$OUT/onerun-$id" > "$OUT/onerun-$id.log" 2>&1
  stamp "kgate run $id rc=$?"; tail -30 "$OUT/onerun-$id.log"
  [ -n "$copy" ] && rm -f "$copy"
fi
if has sweep; then
  # `kgate profile` of every official problem of SWEEP_LEVELS (default: all three), SWEEP_P
  # at a time (compiles are CPU-bound; the GPU is shared, so these times are not
  # measurements), then the compiled-mode plan per problem (tools/sweep_summary.py).
  kb="${KERNELBENCH_ROOT:-$root/.kb}/KernelBench"
  for lv in ${SWEEP_LEVELS:-level1 level2 level3}; do
    mkdir -p "$OUT/sweep/$lv"
    ls "$kb/$lv"/*.py | head -n "${SWEEP_MAX:-1000}" | xargs -P "${SWEEP_P:-8}" -I{} sh -c \
      'n=$(basename "{}" .py); /usr/bin/time -f "profile wall %e s" timeout '"$(cap sweep_problem 240)"' \
         "$0" profile "{}" --json "$1/$n.json" > "$1/$n.txt" 2>&1' "$B/kgate" "$OUT/sweep/$lv"
    stamp "sweep $lv done"
  done
  python3 tools/sweep_summary.py "$OUT/sweep" --json "$OUT/sweep/summary.json" | tee "$OUT/sweep-summary.txt"
fi
if has capture; then
  # Real Inductor output code, inventories and kernel files of CAPTURE_PROBLEMS (level/name
  # ids of the official KernelBench) at their own sizes, one problem at a time alone on the
  # GPU (its per-kernel times are measurements): what templates are written against.
  kb="${KERNELBENCH_ROOT:-$root/.kb}/KernelBench"
  t_cap=$(date +%s)
  for p in ${CAPTURE_PROBLEMS:-level1/95_CrossEntropyLoss}; do
    if [ $(( $(date +%s) - t_cap )) -gt "$(cap capture 300)" ]; then stamp "capture: step cap, $p not reached"; continue; fi
    timeout 90 python3 tests/fixtures/inductor/capture.py "$kb/$p.py" "$OUT/captures" cuda default full \
      > /dev/null 2> "$OUT/captures-$(basename "$p").err"
    stamp "capture $p rc=$?"
  done
fi
if has dispatch; then
  # Dispatch-aware mode on the official KernelBench, unmodified (KERNELBENCH_ROOT, default
  # .kb: a ScalingIntelligence/KernelBench checkout carried in, never committed): the
  # compiled-mode worker tests, `kgate profile` of DISPATCH_PROFILE, real wrapper captures
  # for the CPU fixtures (DISPATCH_CAPTURE), and a run of suites/kernelbench-official.yaml
  # on DISPATCH_PROBLEMS (level/name ids) -- or, with DISPATCH_SHARD=k/n, on that shard of
  # all 250 (DISPATCH_LEVELS narrows the levels, e.g. "kb-level2").
  export KERNELBENCH_ROOT="${KERNELBENCH_ROOT:-$root/.kb}"
  kb="$KERNELBENCH_ROOT/KernelBench"
  if [ "${DISPATCH_PYTEST:-1}" = 1 ]; then
    KGATE_REQUIRE_GPU=1 timeout -k 20 "$(cap dispatch_pytest 150)" python3 -m pytest -q -p no:cacheprovider \
      tests/python/test_inductor_cuda.py ${DISPATCH_PYTEST_K:+-k "$DISPATCH_PYTEST_K"} > "$OUT/pytest-inductor.log" 2>&1
    stamp "pytest inductor cuda rc=$?"; tail -5 "$OUT/pytest-inductor.log"
  fi
  for p in ${DISPATCH_PROFILE-level1/23_Softmax level2/37_Matmul_Swish_Sum_GroupNorm}; do
    n=$(basename "$p")
    /usr/bin/time -f "profile wall %e s" timeout -k 20 "$(cap dispatch_profile 120)" "$B/kgate" profile "$kb/$p.py" \
      --json "$OUT/profile-$n.json" > "$OUT/profile-$n.txt" 2>&1
    stamp "kgate profile $p rc=$?"; cat "$OUT/profile-$n.txt"
  done
  for p in ${DISPATCH_CAPTURE:-}; do
    timeout 120 python3 tests/fixtures/inductor/capture.py "$kb/$p.py" "$OUT/captures" cuda > /dev/null 2>&1
    stamp "capture $p rc=$?"
  done
  session_suite kernelbench-official suites/kernelbench-official.yaml "${DISPATCH_SHARD:-}" \
    "${DISPATCH_PROBLEMS:-level1/23_Softmax level1/40_LayerNorm}" \
    -e "s/^  suite_wall_s: .*/  suite_wall_s: ${SUITE_WALL_S:-600}/" \
    -e "s/^  problem_wall_s: .*/  problem_wall_s: ${PROBLEM_WALL_S:-60}/" \
    -e "s/^  max_experiments: .*/  max_experiments: ${MAX_EXPERIMENTS:-6}/" \
    -e "s/^  kind: .*/  kind: ${DISPATCH_AGENT:-template}/" \
    -e "s/^levels: \[kb-level1, kb-level2, kb-level3\]/levels: [${DISPATCH_LEVELS:-kb-level1, kb-level2, kb-level3}]/"
  # DISPATCH_AGENT=command with DISPATCH_COMMAND: an external agent (tools/gpu-plans/pair.env).
  [ -n "${DISPATCH_COMMAND:-}" ] && sed -i -e "s|^  kind: command\$|&\n  command: ${DISPATCH_COMMAND}|" "$suite"
  # DISPATCH_REFS (e.g. "eager, compile") narrows the reference columns (torch_references).
  [ -n "${DISPATCH_REFS+x}" ] && sed -i -e "s/^backend: .*/&\ntorch_references: [${DISPATCH_REFS}]/" "$suite"
  # Each worker request is traced in a folder of its own (the sandbox lets a worker write
  # the trace's folder): where a problem's time goes.
  mkdir -p "$OUT/dispatch-trace"
  KGATE_WORKER_TRACE="$OUT/dispatch-trace/trace.jsonl" \
  /usr/bin/time -f "run wall %e s" timeout -k 20 "$(cap dispatch 420)" "$B/kgate" run "$suite" ${DISPATCH_GPU:+--gpu "$DISPATCH_GPU"} \
    "${shard[@]}" --out "$OUT/dispatch" > "$OUT/dispatch.log" 2>&1
  stamp "kgate run kernelbench-official rc=$?"; tail -40 "$OUT/dispatch.log"
  # A run killed after the cap's grace (an operation in flight past it) wrote no reports;
  # its finished problems' records are on disk: the reports from them.
  if [ ! -f "$OUT/dispatch/report.md" ] && compgen -G "$OUT/dispatch/results/*.json" > /dev/null; then
    "$B/kgate" report --from "$OUT/dispatch" > "$OUT/dispatch-report.log" 2>&1
    stamp "kgate report --from the killed run's records rc=$?"
  fi
  cat "$OUT/dispatch/results.tsv" 2>/dev/null | head -80
  sed -n '/Dispatch-aware/,/^## Failures/p' "$OUT/dispatch/report.md" 2>/dev/null | head -60
  # Where the worker time went, the load's steps, and the oracle's two anchors per problem
  # (torch.compile's own error against the reference's) from the trace.
  python3 tools/aa_summary.py "$OUT/dispatch-trace" 2>/dev/null | sed -n '/^worker time/,$p' | head -45
  rm -f "$suite"
fi
if has template; then
  # kgate's Triton templates measured on their own (tools/template_study.py): correctness
  # against float64, CUDA-graph replays, counters, and a grid of their tunables.
  timeout -k 20 "$(cap template 300)" python3 tools/template_study.py ${TEMPLATE_ARGS:-} --json "$OUT/template-study.json" \
    > "$OUT/template-study.log" 2>&1
  stamp "template study rc=$?"; grep -v "^  SPLIT" "$OUT/template-study.log" | grep -iv warn | head -30
fi
if has compare; then
  # The check's float64 comparison both ways (tools/compare_bench.py): the torch form and
  # kgate's fused kernel, timed on official sizes; then their agreement tests on the GPU.
  timeout -k 20 "$(cap compare 240)" python3 tools/compare_bench.py --json "$OUT/compare-bench.json" \
    > "$OUT/compare-bench.log" 2>&1
  stamp "compare bench rc=$?"; tail -8 "$OUT/compare-bench.log"
  # One check request of an official problem, A/A, profiled with each form (COMPARE_PROFILE=0:
  # not profiled; COMPARE_PYTEST=0: its GPU tests left to the pytest step).
  for fused in $([ "${COMPARE_PROFILE:-1}" = 1 ] && echo 1 0); do
    KGATE_WORKER_FUSED_COMPARE=$fused timeout -k 20 "$(cap compare 240)" python3 tools/check_profile.py \
      "${COMPARE_PROBLEM:-$root/.kb/KernelBench/level1/23_Softmax.py}" --checks 4 --top 25 \
      > "$OUT/check-profile-fused$fused.log" 2>&1
    stamp "check profile (fused $fused) rc=$?"; grep -E "^check|^load" "$OUT/check-profile-fused$fused.log"
  done
  if [ "${COMPARE_PYTEST:-1}" = 1 ]; then
    KGATE_REQUIRE_GPU=1 timeout -k 20 "$(cap compare 240)" python3 -m pytest -q -p no:cacheprovider \
      tests/python/test_compare_kernel.py > "$OUT/pytest-compare.log" 2>&1
    stamp "pytest compare rc=$?"; tail -5 "$OUT/pytest-compare.log"
  fi
fi
if has aa; then
  # The A/A mode over the official KernelBench (suites/kernelbench-official-aa.yaml): each
  # reference against itself through every gate, on AA_PROBLEMS (level/name ids) or, with
  # AA_SHARD=k/n, on that shard of all 250 (AA_LEVELS narrows the levels). AA_SHARDS="1/4
  # 2/4 ..." runs those shards as concurrent runs on the one GPU: only for small problems --
  # five at once on the official level 1 (50-72 GiB per worker) ran out of GPU memory and
  # made cuDNN fall back to other algorithms (docs/measurement.md, 2026-12-01 fourth
  # session). Each worker request is traced (KGATE_WORKER_TRACE): where the time goes.
  export KERNELBENCH_ROOT="${KERNELBENCH_ROOT:-$root/.kb}"
  session_suite kernelbench-official-aa suites/kernelbench-official-aa.yaml "${AA_SHARD:-${AA_SHARDS:+1/1}}" \
    "${AA_PROBLEMS:-level1/19_ReLU}" -e "s/^levels: .*/levels: [${AA_LEVELS:-kb-level1, kb-level2, kb-level3}]/"
  aa_runs=()
  if [ -n "${AA_SHARDS:-}" ]; then
    for k in $AA_SHARDS; do
      d="$OUT/aa-${k%%/*}"; mkdir -p "$d"; aa_runs+=("$d")
      KGATE_WORKER_TRACE="$d/trace.jsonl" /usr/bin/time -f "aa $k wall %e s" timeout -k 20 "$(cap aa 300)" \
        "$B/kgate" run "$suite" ${GPU_TARGET:+--gpu "$GPU_TARGET"} --shard "$k" --out "$d" > "$d.log" 2>&1 &
    done
    wait
  else
    # AA_DIR keeps the run in a directory of the working tree (ignored, kept on a warm
    # machine between device calls): a run the call's cap stopped is resumed by the next
    # call (`kgate run --resume`), so one run of the 250 can span several calls. Its
    # reports are copied to $OUT/aa after each call.
    # Absolute: the workers' trace file and the sandbox's writable folders are named by it.
    d=$(realpath -m "${AA_DIR:-$OUT/aa}"); mkdir -p "$d"; resume=()
    [ -s "$d/journal.jsonl" ] && resume=(--resume)
    KGATE_WORKER_TRACE="$d/trace.jsonl" /usr/bin/time -f "aa wall %e s" timeout -k 20 "$(cap aa 300)" \
      "$B/kgate" run "$suite" ${GPU_TARGET:+--gpu "$GPU_TARGET"} "${shard[@]}" "${resume[@]}" --out "$d" >> "$OUT/aa.log" 2>&1
    if [ "$d" != "$(realpath -m "$OUT/aa")" ]; then mkdir -p "$OUT/aa"; cp -r "$d"/. "$OUT/aa/"; fi
    aa_runs=("$OUT/aa")
  fi
  stamp "kgate run kernelbench-official-aa done"
  for d in "${aa_runs[@]}"; do grep -E "A/A|error|warn|wall" "$d.log" | tail -8; done
  python3 tools/aa_summary.py "${aa_runs[@]}" --json "$OUT/aa-summary.json" 2>&1 | tail -80
  rm -f "$suite"
fi
if has study; then
  timeout -k 20 "$(cap study 420)" "$B/kgate_measure_study" --root "$root" --native "$B/kgate-native" \
    --classes "${STUDY_CLASSES:-500us,5ms}" --trials "${TRIALS:-100}" \
    --out "$OUT/measure_study.json" 2>&1 | tee "$OUT/measure_study.txt"
  stamp "measure study done"
fi
if has knobs; then
  # A native CUDA starter's defaults against other knob settings at its bench shape: each
  # setting of KNOBS (space-separated; NAME=VALUE pairs joined by commas, e.g.
  # "ROW_WARPS=1 ROW_WARPS=2,ROW_PACKS=8") written into a copy of the starter's #defines and
  # benched through every gate against the starter itself (`kgate bench`): what a default
  # should be (KNOBS_PROBLEM, default reduce_sum).
  prob=${KNOBS_PROBLEM:-reduce_sum}; t_knobs=$(date +%s)
  mkdir -p "$OUT/knobs"
  for setting in ${KNOBS:-ROW_WARPS=1 ROW_WARPS=2 ROW_WARPS=4}; do
    if [ $(( $(date +%s) - t_knobs )) -gt "$(cap knobs 240)" ]; then stamp "knobs: step cap, $setting not reached"; continue; fi
    f="$OUT/knobs/$prob-${setting//[,=]/_}.cu"
    cp "kernelbench/native/starters/$prob.cu" "$f"
    for kv in ${setting//,/ }; do sed -i "s/^#define ${kv%%=*} .*/#define ${kv%%=*} ${kv#*=}/" "$f"; done
    timeout -k 10 120 "$B/kgate" bench --problem "kernelbench/native/$prob.yaml" --candidate "$f" \
      --json "${f%.cu}.json" > "${f%.cu}.log" 2>&1
    stamp "knobs $prob $setting rc=$?"; grep -E "^verdict|speedup" "${f%.cu}.log" | head -3
  done
fi
if has nativeslot; then
  # The native slot of the Python worker against its PyTorch forms, timed as the worker
  # does and with exclude_launch (tools/native_slot_study.py; docs/measurement.md).
  timeout -k 20 "$(cap nativeslot 240)" python3 tools/native_slot_study.py --rounds "${SLOT_ROUNDS:-60}" \
    --json "$OUT/native-slot.json" > "$OUT/native-slot.txt" 2>&1
  stamp "native slot study rc=$?"; cat "$OUT/native-slot.txt" | tail -60
fi
if has timers; then
  TIMER_CLASSES="${TIMER_CLASSES:-500us,5ms}" REPEATS="${REPEATS:-10}" \
    timeout -k 20 "$(cap timers 300)" python3 tools/timer_study.py "$OUT" 2>&1 | tail -20
  stamp "timer study done"
fi
# Pack everything (workspaces excluded: git repos of every experiment are large).
( cd "$OUT" && tar czf /tmp/session.tgz --exclude='workspaces' --exclude='cache' . && find . -mindepth 1 -delete &&
  mv /tmp/session.tgz . )
ls -la "$OUT"
