#!/usr/bin/env bash
# Dispatch-aware search on the CPU, end to end through the real Python worker: a
# KernelBench-format level without solutions starts from torch.compile's own model
# (nothing is skipped), `kgate profile` takes a problem apart, and -- because Inductor emits
# C++ kernels on a CPU -- every problem ends `fallback` (no Triton kernels) with the compiled
# model as its result, never an error. Exit code, records, JUnit and report.md agree.
set -u
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
source "$SRC/tests/e2e/run_lib.sh.inc"
SUITE="$SRC/tests/fixtures/kbcompiled/suites/kbc.yaml"

"$KGATE_BIN" validate "$SUITE" --plan >"$T/plan.log" 2>&1 || { cat "$T/plan.log"; fail "validate --plan failed"; }
cat "$T/plan.log"
grep -q "skipped" "$T/plan.log" && fail "the plan skips a problem of a level without solutions"
grep -q "kernel-level screen: an edited kernel more than 5% slower alone is reverted" "$T/plan.log" ||
  fail "the plan does not state the kernel-level screen of its compiled-mode problems"

set +e
"$KGATE_BIN" profile "$SRC/kernelbench/level1/6_ReLU.py" --device cpu --json "$T/profile.json" \
  --kernels-dir "$T/kernels" >"$T/profile.log" 2>&1
rcp=$?
mkdir -p "$T/trace"
KGATE_WORKER_TRACE="$T/trace/trace.jsonl" "$KGATE_BIN" run "$SUITE" --out "$T/out" --run-id kbc-e2e \
  --cache "$T/cache" >"$T/run.log" 2>&1
rc=$?
set -e
cat "$T/profile.log" "$T/run.log"
[ "$rcp" = 0 ] || fail "kgate profile exited $rcp"
grep -q "no Triton kernels" "$T/profile.log" || fail "kgate profile does not say why there is nothing to search"
# A file that is not a problem, and one that does not exist, each said as such (exit 2).
rc_run=$rc
rc_of "$KGATE_BIN" profile "$SRC/suites/demo.yaml" >"$T/profile-yaml.log" 2>&1
[ "$rc" = 2 ] && grep -qF "demo.yaml: error: not a KernelBench problem file" "$T/profile-yaml.log" ||
  fail "kgate profile of a YAML file: exit $rc, $(cat "$T/profile-yaml.log")"
rc_of "$KGATE_BIN" profile "$T/nowhere.py" >"$T/profile-none.log" 2>&1
[ "$rc" = 2 ] && grep -qF "nowhere.py: error: no such file" "$T/profile-none.log" ||
  fail "kgate profile of a missing file: exit $rc, $(cat "$T/profile-none.log")"
rc=$rc_run
[ "$rc" = 0 ] || fail "kgate run exited $rc"
grep -q "remeasure vs eager" "$T/run.log" || fail "no re-measure against eager"
grep -q "remeasure vs compile-max-autotune" "$T/run.log" || fail "no re-measure against max-autotune"
# --cache: the workers' compile caches live there, not in OUT/cache
grep -q "compile caches: $T/cache (kept across runs)" "$T/run.log" || fail "the run does not name its --cache"
[ -d "$T/cache/inductor/fxgraph" ] || fail "torch.compile's models are not cached in --cache"
[ ! -e "$T/out/cache" ] || fail "a run with --cache made OUT/cache too"
! grep -q "remeasure vs compile:" "$T/run.log" || fail "torch.compile's model, the baseline, was timed again"
check_consistent "$T/out"
"$PY" - "$T" <<'PYEOF'
import glob, json, os, sys
import xml.etree.ElementTree as ET
t = sys.argv[1]
prof = json.load(open(os.path.join(t, "profile.json")))
assert prof["version"] == 1 and prof["kind"] == "kgate-profile", prof.keys()
inv = prof["inventory"]
assert inv["kernels"] == [] and inv["graphs"] >= 1, inv
assert any(k["kind"] == "cpp" for k in inv["other_kernels"]), inv["other_kernels"]
out = os.path.join(t, "out")
sys.path.insert(0, os.path.join(os.environ["KGATE_SOURCE_DIR"], "tests", "e2e"))
from e2e_records import records
recs = records(out)
assert set(recs) == {"6_ReLU", "12_Matmul_Divide_Sum"}, recs.keys()
for p, r in recs.items():
    assert r["mode"] == "compiled", (p, r["mode"])
    assert r["outcome"] == "fallback" and r["fallback_kind"] == "no-triton", (p, r["outcome"], r["reason"])
    assert "Triton" in r["reason"], r["reason"]
    assert r["baseline_kind"] == "compile" and r["speedup"] == 1 and r["best_us"] > 0, r
    assert r["eager_us"] > 0 and r["compile_us"] > 0, (p, r["eager_us"], r["compile_us"])
    # the result is torch.compile's own model, the search's baseline: 1x against it by
    # definition, not a second timing of it
    assert r["compile_us"] == r["best_us"], (p, r["compile_us"], r["best_us"])
    assert r["triton_kernels"] == 0 and r["experiments"] == 0, r
    inv = json.load(open(os.path.join(out, "workspaces", p, "inventory.json")))
    assert inv["inventory_version"] == 1 and inv["kernels"] == [], inv
    # the baseline ran every gate: torch.compile's model checked against the float64 truth
    gates = {g["gate"]: g["status"] for g in r["gates"]}
    assert gates.get("correctness") == "pass" and gates.get("oracle") == "pass", gates
junit = ET.parse(os.path.join(out, "junit.xml")).getroot()
cases = junit.findall(".//testcase")
assert len(cases) == 2, len(cases)
for c in cases:
    assert c.find("failure") is None and c.find("error") is None, ET.tostring(c)[:300]
md = open(os.path.join(out, "report.md")).read()
assert "**Result: PASS**" in md, md[:300]
assert "Dispatch-aware search" in md and "| kbc | 2 | 0 | 2 | 0 | 0 | 0 |" in md, md
rep = json.load(open(os.path.join(out, "report.json")))
assert rep["result"]["pipeline_failed"] is False
lv = [l for l in rep["levels"] if l["level"] == "kbc"][0]
assert lv["compiled"] == 2 and lv["fallback_kinds"] == {"no-triton": 2}, lv
# no experiment ran (nothing to search on the CPU): the cost columns say so
assert lv["compiled_experiments"] == 0 and lv["compiled_experiment_wall_median_s"] is None, lv
assert "| 0 (0) | - |" in md, md
# The re-measures against eager and max-autotune share one fresh worker: per problem, the
# timings come from two processes (the search's worker, its A/A; then that one), and the
# fresh one loads the problem once.
import collections
timed, loads = collections.defaultdict(list), collections.Counter()
for line in open(os.path.join(t, "trace", "trace.jsonl")):
    e = json.loads(line)
    p = os.path.basename(e["problem"])[:-3]
    if e["op"] == "time":
        timed[p].append(e["pid"])
    if e["op"] == "load_problem":
        loads[(p, e["pid"])] += 1
for p in recs:
    pids = timed[p]
    assert len(set(pids)) == 2 and pids[-1] == pids[-2] != pids[0], (p, pids)
    assert loads[(p, pids[-1])] == 1, (p, loads)
print("compiled mode on the CPU:", {p: (r["outcome"], r["fallback_kind"], round(r["eager_us"] / r["best_us"], 2)) for p, r in recs.items()})
PYEOF

# A suite that gives torch_references narrows a KernelBench problem's reference columns to
# those it lists: here eager alone, so no max-autotune compile (a nightly job short of GPU
# time skips its 15-70 s per GEMM).
# It also keeps the compile caches of the first run ($KGATE_CACHE_DIR, as a nightly job
# sets it): 6_ReLU's torch.compile model is found there, so the cache gains nothing.
touch "$T/cache.mark"
set +e
KGATE_CACHE_DIR="$T/cache" "$KGATE_BIN" run "$SRC/tests/fixtures/kbcompiled/suites/kbc-eager.yaml" \
  --out "$T/eager" >"$T/eager.log" 2>&1
rc=$?
set -e
cat "$T/eager.log"
[ "$rc" = 0 ] || fail "kgate run (torch_references: [eager]) exited $rc"
new_entries=$(find "$T/cache" -type f -newer "$T/cache.mark" | head -5)
[ -z "$new_entries" ] || fail "a second run with the same cache compiled 6_ReLU again: $new_entries"
[ ! -e "$T/eager/cache" ] || fail "a run with \$KGATE_CACHE_DIR made OUT/cache too"
grep -q "remeasure vs eager" "$T/eager.log" || fail "no re-measure against eager"
! grep -q "remeasure vs compile-max-autotune" "$T/eager.log" || fail "max-autotune timed though the suite lists eager alone"
"$PY" - "$T/eager" <<'PYEOF'
import glob, json, os, sys
recs = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[1], "results", "**", "*.json"), recursive=True)]
assert [r["problem"] for r in recs] == ["6_ReLU"], [r["problem"] for r in recs]
r = recs[0]
assert r["outcome"] == "fallback" and r["eager_us"] > 0, r
assert not r.get("compile_max_autotune_us"), r.get("compile_max_autotune_us")
PYEOF
echo "PASS: dispatch-aware run on the CPU"
