#!/usr/bin/env bash
# A KernelBench ModelNew starter 0.5 % off (tests/fixtures/kernelbench/linear_relu.py, its
# solution scaled by 1.005) passes KernelBench's 1e-2 tolerances, so only the float64
# oracle can catch it, and only against the reference's own error: the starter gated
# against itself would be its own anchor. `kgate run` fails it at the oracle gate (exit 1),
# and the log, the result record (each gate saying how many rows it judged), the JUnit (a
# <failure>) and report.md say the same; the correct solution beside it passes.
set -u
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
source "$SRC/tests/e2e/run_lib.sh.inc"
mkdir -p "$T/cfg/configs/levels" "$T/cfg/configs/gpus" "$T/cfg/suites" "$T/sol"
cp "$SRC/tests/fixtures/kbrepo/configs/gpus/host.yaml" "$T/cfg/configs/gpus/"
sed 's/\.clamp(min=0)/.clamp(min=0) * 1.005/' "$SRC/tests/fixtures/kernelbench/candidates/linear_relu_ok.py" \
  >"$T/sol/linear_relu.py"
grep -qF '* 1.005' "$T/sol/linear_relu.py" || fail "the fixture's solution no longer has .clamp(min=0) to scale"
cp "$SRC/tests/fixtures/kernelbench/candidates/relu_clamp.py" "$T/sol/relu.py"
cat >"$T/cfg/configs/levels/kbw.yaml" <<YAML
version: 1
id: kbw
title: A wrong starter within KernelBench's tolerances, and a right one
kind: kernelbench
root: $SRC/tests/fixtures/kernelbench
select: list
problems: [linear_relu, relu]
baseline: eager
solutions: $T/sol
starter: solutions
YAML
sed -e 's/^levels: .*/levels: [kbw]/' -e 's/^id: .*/id: kbw/' -e 's/^  max_experiments: .*/  max_experiments: 0/' \
  "$SRC/tests/fixtures/kbrepo/suites/kb.yaml" >"$T/cfg/suites/kbw.yaml"

rc_of "$KGATE_BIN" run "$T/cfg/suites/kbw.yaml" --out "$T/out" --run-id kbw-e2e >"$T/run.log" 2>&1
cat "$T/run.log"
[ "$rc" = 1 ] || fail "kgate run exited $rc, want 1 (a starter fails its gates)"
grep -qF "linear_relu: the starter fails the oracle gate" "$T/run.log" || fail "the log does not name the oracle gate"
grep -qF "x the reference's" "$T/run.log" || fail "the oracle's bound is not the reference's own error"
"$PY" - "$T/out" <<'PYEOF'
import glob, json, os, sys
import xml.etree.ElementTree as ET
out = sys.argv[1]
sys.path.insert(0, os.path.join(os.environ["KGATE_SOURCE_DIR"], "tests", "e2e"))
from e2e_records import records
recs = records(out)
assert set(recs) == {"linear_relu", "relu"}, recs.keys()
w = recs["linear_relu"]
assert w["outcome"] == "error" and "oracle" in w["reason"], (w["outcome"], w["reason"])
gates = {g["gate"]: g for g in w["gates"]}
assert gates["correctness"]["status"] == "pass" and gates["correctness"]["judged"] >= 2, gates
assert gates["oracle"]["status"] == "fail" and gates["oracle"]["judged"] >= 1, gates
assert "the reference's" in gates["oracle"]["reason"], gates["oracle"]
ok = recs["relu"]
assert ok["outcome"] != "error", (ok["outcome"], ok["reason"])
assert all(g["status"] == "pass" and g["judged"] >= 1 for g in ok["gates"]), ok["gates"]
suite = ET.parse(os.path.join(out, "junit.xml")).getroot()
assert suite.get("failures") == "1" and suite.get("errors") == "0", suite.attrib
case = suite.find(".//testcase[@name='linear_relu']")
assert case is not None and case.find("failure") is not None, ET.tostring(case)
md = open(os.path.join(out, "report.md")).read()
assert "**Result: FAIL**" in md, md[:600]
rep = json.load(open(os.path.join(out, "report.json")))
assert rep["result"]["exit_code"] == 1
# the level table counts the failing starter where the result line does: failed, not errors
lv = rep["levels"][0]
assert (lv["failed"], lv["errors"]) == (rep["result"]["gate_failures"], rep["result"]["errors"]) == (1, 0), (lv, rep["result"])
assert "| kbw | 2 | " in md and " | 1 | 0 | " in md, md[:900]
print("ok: the 0.5 % wrong starter fails the oracle; log, exit code, records, JUnit and report.md agree")
PYEOF
# The run as the one shard of a merge: the merge exits with the status its reports state.
rc_of "$KGATE_BIN" merge "$T/out" --out "$T/merged" >"$T/merge.log" 2>&1
cat "$T/merge.log"
[ "$rc" = 1 ] || fail "kgate merge exited $rc, want 1 (its report says FAIL)"
"$PY" - "$T/merged" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
assert json.load(open(os.path.join(out, "report.json")))["result"]["exit_code"] == 1
assert "**Result: FAIL**" in open(os.path.join(out, "report.md")).read()
print("ok: the merge's exit code and its reports agree")
PYEOF
echo "PASS: a KernelBench starter is held to the reference's own error"
