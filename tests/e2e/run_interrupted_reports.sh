#!/usr/bin/env bash
# SIGTERM (a CI job's timeout) after the demo suite's first problem finished: exit 130, and
# the reports are written for what finished -- that problem as it ended, the two others
# as errors "(interrupted)" in the JUnit, the Markdown and report.json -- so the job still
# publishes them. --resume then finishes the run and rewrites them whole.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
out="$T/out"
"$KGATE_BIN" run "$KGATE_SOURCE_DIR/suites/demo.yaml" --out "$out" --seed 5 --max-experiments 3 > "$T/log" 2>&1 &
pid=$!
first=""
for _ in $(seq 1 600); do  # up to 120 s for the first problem
  first=$(grep -oE '\] [a-z0-9_]+: (improved|matched|fallback|regressed|error) ' "$T/log" | head -1 | cut -d' ' -f2 | tr -d : || true)
  [ -n "$first" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
[ -n "$first" ] || { cat "$T/log"; fail "no problem finished"; }
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
cat "$T/log"
[ "$rc" = 130 ] || fail "SIGTERM after $first finished: exit $rc, want 130"
grep -q "interrupted: the reports in" "$T/log" || fail "no word of the reports"
python3 - "$out" "$first" <<'PY'
import json, os, sys
import xml.etree.ElementTree as ET
out, first = sys.argv[1], sys.argv[2]
cases = {c.get("name"): c for c in ET.parse(os.path.join(out, "junit.xml")).getroot().iter("testcase")}
# the three problems, and the run itself as an error: interrupted
run = cases.pop("run", None)
assert run is not None and run.find("error").get("type") == "interrupted", sorted(cases)
assert len(cases) == 3, sorted(cases)
assert cases[first].find("error") is None and cases[first].find("failure") is None, ET.tostring(cases[first])[:300]
others = [n for n in cases if n != first]
for n in others:
    e = cases[n].find("error")
    assert e is not None and "(interrupted)" in (e.get("message", "") + (e.text or "")), (n, ET.tostring(cases[n])[:300])
md = open(os.path.join(out, "report.md")).read()
assert "**interrupted** (partial results)" in md, md[:500]
assert "**Result: FAIL** (interrupted: the run was stopped before it finished, exit 130" in md, md[:800]
rep = json.load(open(os.path.join(out, "report.json")))
assert rep["result"]["pipeline_failed"] is True and rep["result"]["exit_code"] == 130, rep["result"]
print("interrupted after", first, "- reports hold it and", len(others), "unfinished problems as errors")
PY
# --resume finishes the run; its reports no longer carry the interruption.
rc=0; "$KGATE_BIN" run "$KGATE_SOURCE_DIR/suites/demo.yaml" --out "$out" --resume --max-experiments 3 >> "$T/log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { tail -20 "$T/log"; fail "resume exit $rc"; }
! grep -q "interrupted" "$out/report.md" || fail "the resumed run's report still says interrupted"
check_consistent "$out"
echo "PASS: an interrupted run's reports hold what finished"
