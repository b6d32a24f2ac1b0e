#!/usr/bin/env bash
# `kgate bench` end to end on the host backend: exit codes 0/1/2/3, the verdict line, the
# --json verdict and --seed reproduction, through the real kgate-native.
set -u
KGATE="${KGATE_BIN:?KGATE_BIN not set}"
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
FX="$SRC/tests/fixtures/candidates/softmax"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache"
fails=0

source "$SRC/tests/e2e/bench_lib.sh.inc"

B=(bench --problem "$FX/problem.yaml" --min-time 0.2 --max-time 0.6 --timeout 60)

run ok 0 "verdict: PASS" -- "${B[@]}" --candidate "$FX/ok.cpp" --seed 7 --json "$TMP/ok.json" --gbench-json "$TMP/ok.gbench.json"
# The timing samples as Google Benchmark JSON: one iteration entry per sample, per side,
# plus the aggregates, and the same sample counts as the verdict.
if ! python3 - "$TMP/ok.json" "$TMP/ok.gbench.json" <<'PYEOF'
import json, sys
v = json.load(open(sys.argv[1])); g = json.load(open(sys.argv[2]))
assert "context" in g and g["context"]["kgate_timer"] == v["timing"]["timer"], g.get("context")
it = [b for b in g["benchmarks"] if b["run_type"] == "iteration"]
names = sorted({b["name"] for b in it})
assert len(names) == 2 and any(n.endswith("/candidate") for n in names), names
cand = [b for b in it if b["name"].endswith("/candidate")]
assert len(cand) == len(v["timing"]["candidate_samples_us"]) > 0, (len(cand), len(v["timing"]["candidate_samples_us"]))
assert any(b["run_type"] == "aggregate" and b.get("aggregate_name") == "median" for b in g["benchmarks"])
PYEOF
then
  echo "FAIL ok.gbench.json: not the expected Google Benchmark JSON"; fails=$((fails + 1))
fi
if ! python3 -c "import json,sys; v=json.load(open(sys.argv[1])); assert v['version']==1 and v['passed'] and v['seed']==7 and len(v['gates'])==4 and v['timing']['candidate_us']>0" "$TMP/ok.json"; then
  echo "FAIL ok.json: not the expected verdict"; fails=$((fails + 1))
fi

run wrong_mask 1 "verdict: FAIL at the correctness gate: correctness: case seed=" -- "${B[@]}" --candidate "$FX/wrong_mask.cpp" --seed 7 --json "$TMP/wm1.json"
grep -q "elements over tolerance" "$TMP/wrong_mask.out" || { echo "FAIL wrong_mask: no numbers"; fails=$((fails + 1)); }
grep -q "reproduce: kgate bench .* --seed 7" "$TMP/wrong_mask.out" || { echo "FAIL wrong_mask: no reproduce line"; fails=$((fails + 1)); }
# Same seed, same failing case.
run wrong_mask_again 1 "verdict: FAIL" -- "${B[@]}" --candidate "$FX/wrong_mask.cpp" --seed 7 --json "$TMP/wm2.json"
if ! python3 -c "import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); fa=[g['failed_case'] for g in a['gates'] if g['gate']=='correctness']; fb=[g['failed_case'] for g in b['gates'] if g['gate']=='correctness']; assert fa==fb and fa[0], (fa, fb)" "$TMP/wm1.json" "$TMP/wm2.json"; then
  echo "FAIL --seed does not reproduce the failing case"; fails=$((fails + 1))
fi

# Honest while checked, half the rows while timed: the audit of the timed calls.
run less_work_while_timed 1 "verdict: FAIL at the performance gate: performance: case R=256,C=1024/f32: timed calls: a round on fresh contents" -- "${B[@]}" --candidate "$FX/less_work_while_timed.cpp"
run lint 1 "verdict: FAIL at the static gate" -- "${B[@]}" --candidate "$FX/forbidden_thread.cpp"
run usage_missing_problem 2 "error" -- bench --problem "$TMP/none.yaml" --candidate "$FX/ok.cpp"
run usage_missing_candidate 2 "no such candidate" -- "${B[@]}" --candidate "$TMP/none.cpp"
run usage_extension 2 "cannot tell the backend" -- "${B[@]}" --candidate "$FX/problem.yaml"
run usage_min_over_max 2 "--min-time 2 s is more than --max-time 1 s" -- bench --problem "$FX/problem.yaml" --candidate "$FX/ok.cpp" --min-time 2 --max-time 1
run usage_zero_timeout 2 "--timeout: '0' is not a positive number of seconds" -- bench --problem "$FX/problem.yaml" --candidate "$FX/ok.cpp" --timeout 0
run usage_negative_time 2 "'-1' is not a positive number of seconds" -- bench --problem "$FX/problem.yaml" --candidate "$FX/ok.cpp" --min-time -1
KGATE_NATIVE_BIN="$TMP/no-runner" run infra_no_runner 3 "KGATE_NATIVE_BIN" -- "${B[@]}" --candidate "$FX/ok.cpp"
# No CUDA driver on the CI machine: the cuda backend is unavailable (infrastructure).
if ! command -v nvidia-smi >/dev/null 2>&1; then
  run infra_no_cuda 3 "not available" -- "${B[@]}" --candidate "$FX/ok.cpp" --backend cuda
fi

[ "$fails" = 0 ] && echo "all bench e2e checks passed"
exit $(( fails > 0 ))
