#!/usr/bin/env bash
# The A/A mode (`agent: reference`) on the CPU, end to end through the real Python worker:
# each KernelBench problem's reference model, named ModelNew, goes through every gate
# against itself. A correct candidate that is the reference must pass, and the timing must
# see no difference: every problem `matched`, no search, exit 0, and records, JUnit and
# report.md agree.
set -u
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
source "$SRC/tests/e2e/run_lib.sh.inc"
SUITE="$SRC/tests/fixtures/kbcompiled/suites/kbaa.yaml"

"$KGATE_BIN" validate "$SUITE" --plan >"$T/plan.log" 2>&1 || { cat "$T/plan.log"; fail "validate --plan failed"; }
cat "$T/plan.log"
grep -q "the reference model as its own ModelNew" "$T/plan.log" || fail "the plan does not say the reference is the starter"
set +e
"$KGATE_BIN" run "$SUITE" --out "$T/out" --run-id kbaa-e2e >"$T/run.log" 2>&1
rc=$?
set -e
cat "$T/run.log"
[ "$rc" = 0 ] || fail "kgate run exited $rc"
check_consistent "$T/out"
"$PY" - "$T/out" <<'PYEOF'
import glob, json, os, sys
import xml.etree.ElementTree as ET
out = sys.argv[1]
sys.path.insert(0, os.path.join(os.environ["KGATE_SOURCE_DIR"], "tests", "e2e"))
from e2e_records import records
recs = records(out)
assert set(recs) == {"6_ReLU", "12_Matmul_Divide_Sum"}, recs.keys()
for p, r in recs.items():
    assert r["outcome"] == "matched", (p, r["outcome"], r["reason"])
    assert r["reason"].startswith("A/A: the reference passed every gate against itself"), r["reason"]
    assert r["experiments"] == 0 and r["best_us"] > 0, r
    # the record says what it ran on: the worker's torch (and triton when installed)
    import torch as _t
    assert r["env"]["torch"] == _t.__version__.split("+")[0], r["env"]
    gates = {g["gate"]: g["status"] for g in r["gates"]}
    assert all(gates.get(g) == "pass" for g in ("static", "correctness", "oracle")), gates
    cand = open(os.path.join(out, "workspaces", p, p + ".py")).read()
    assert cand.rstrip().endswith("ModelNew = Model"), cand[-200:]
junit = ET.parse(os.path.join(out, "junit.xml")).getroot()
cases = junit.findall(".//testcase")
assert len(cases) == 2, len(cases)
for c in cases:
    assert c.find("failure") is None and c.find("error") is None, ET.tostring(c)[:300]
md = open(os.path.join(out, "report.md")).read()
assert "**Result: PASS**" in md, md[:300]
rep = json.load(open(os.path.join(out, "report.json")))
assert rep["result"]["pipeline_failed"] is False and rep["result"]["exit_code"] == 0, rep["result"]
print("A/A on the CPU:", {p: (r["outcome"], round(r["speedup"], 3)) for p, r in recs.items()})
PYEOF
echo "PASS: A/A mode on the CPU"
