#!/usr/bin/env bash
# Regressions against the accepted results, end to end on the host backend: the demo suite
# (a temporary copy: its softmax only, fail_on.performance on) runs with --db; `kgate accept`
# promotes its results; a second run with a softmax starter that does its work 8 times is
# compared with them: a performance regression in report.md, report.json, junit.xml and the
# exit code (1) alike. Accepting the second run makes it the reference, and re-reporting it
# against the history passes (exit 0), every report saying so.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
SRC="$KGATE_SOURCE_DIR"
R="$T/repo"
mkdir -p "$R/configs/levels" "$R/suites" "$R/kernelbench"
cp -r "$SRC/configs/gpus" "$R/configs/"
cp -r "$SRC/kernelbench/native" "$R/kernelbench/"
sed 's/^problems: .*/problems: [softmax]/' "$SRC/configs/levels/native-demo.yaml" > "$R/configs/levels/native-demo.yaml"
sed 's/^  performance: false/  performance: true/' "$SRC/suites/demo.yaml" > "$R/suites/demo.yaml"
grep -q '^  performance: true' "$R/suites/demo.yaml" || fail "could not turn fail_on.performance on"
DB="$T/history.sqlite"
run() { local rc=0; "$KGATE_BIN" run "$R/suites/demo.yaml" --seed 11 --max-experiments 3 --db "$DB" "$@" > "$T/log" 2>&1 || rc=$?; echo "$rc"; }

# Night 1: the starter as shipped.
rc=$(run --out "$T/n1" --run-id night-1)
[ "$rc" = 0 ] || { cat "$T/log"; fail "night 1 exited $rc"; }
"$KGATE_BIN" accept --db "$DB" "$T/n1" > "$T/accept.log" 2>&1 || { cat "$T/accept.log"; fail "accept night 1"; }
grep -q "accepted native-demo/softmax on cpu" "$T/accept.log" || { cat "$T/accept.log"; fail "accept did not name softmax"; }

# Night 2: a starter 8 times slower (the same math): the search cannot win it back.
ST="$R/kernelbench/native/starters/softmax.cpp"
python3 - "$ST" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
loop = "  for (int64_t r = 0; r < rows; ++r) {"
assert s.count(loop) == 1, "the starter's row loop moved"
open(p, "w").write(s.replace(loop, "  for (int rep = 0; rep < 8; ++rep)\n" + loop))
PY
rc=$(run --out "$T/n2" --run-id night-2)
[ "$rc" = 1 ] || { cat "$T/log"; fail "night 2 (slower than accepted) exited $rc, not 1"; }
grep -q "performance regression: slower than the accepted result of run night-1" "$T/log" \
  || { cat "$T/log"; fail "no regression warning in the log"; }

# Every report says what the exit code says.
check_story() {  # DIR EXPECTED_EXIT EXPECTED_FAILURE
  python3 - "$@" <<'PY'
import json, sys, xml.etree.ElementTree as ET
d, want_exit, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rec = json.load(open(f"{d}/results/native-demo__softmax.json"))
assert rec["vs_accepted"]["run_id"] == "night-1", rec.get("vs_accepted")
j = json.load(open(f"{d}/report.json"))
assert j["result"]["exit_code"] == want_exit, j["result"]
assert j["result"]["pipeline_failed"] == (want_exit != 0), j["result"]
p = [p for p in j["problems"] if p["problem"] == "softmax"][0]
assert p["failure"] == want, p
assert p["vs_accepted"] is not None and p["vs_accepted"]["regressed"] == (want != "none"), p["vs_accepted"]
md = open(f"{d}/report.md").read()
assert ("**Result: FAIL**" in md) == (want_exit != 0) and ("**Result: PASS**" in md) == (want_exit == 0), md[:600]
assert "## Against the accepted results" in md, md
assert ("**performance regression**" in md) == (want != "none"), md
assert ("| native-demo/softmax | performance_regression |" in md) == (want != "none"), md
root = ET.parse(f"{d}/junit.xml").getroot()
tc = [t for t in root.iter("testcase") if t.get("name") == "softmax"][0]
fails = tc.findall("failure")
if want == "none":
    assert not fails, ET.tostring(tc)
else:
    assert len(fails) == 1 and fails[0].get("type") == "PerformanceRegression", ET.tostring(tc)
    assert "slower than the accepted result" in fails[0].get("message"), fails[0].get("message")
print(d, "exit", want_exit, want, "ratio", p["vs_accepted"]["ratio"])
PY
}
check_story "$T/n2" 1 performance_regression || fail "night 2's reports disagree"

# The history has both nights; night 2 was not accepted by itself.
python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
runs = sorted(r[0] for r in db.execute("SELECT run_id FROM runs"))
assert runs == ["night-1", "night-2"], runs
acc = db.execute("SELECT run_id FROM accepted WHERE problem = 'native-demo/softmax' ORDER BY id DESC").fetchone()
assert acc[0] == "night-1", acc
PY

# Accepting night 2 makes the slower kernel the reference: compared again, it passes.
"$KGATE_BIN" accept --db "$DB" --from "$T/n2" --problem softmax > "$T/accept2.log" 2>&1 || { cat "$T/accept2.log"; fail "accept night 2"; }
rc=0; "$KGATE_BIN" report --from "$T/n2" --db "$DB" > "$T/log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$T/log"; fail "night 2 after its acceptance exited $rc"; }
python3 - "$T/n2" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/report.json"))
p = [p for p in j["problems"] if p["problem"] == "softmax"][0]
assert j["result"]["exit_code"] == 0 and p["failure"] == "none", (j["result"], p)
assert p["vs_accepted"]["run_id"] == "night-2" and not p["vs_accepted"]["regressed"], p["vs_accepted"]
assert "<failure" not in open(f"{d}/junit.xml").read()
assert "**performance regression**" not in open(f"{d}/report.md").read()
PY
echo "PASS: a run slower than the accepted results regresses in every report and the exit code"
