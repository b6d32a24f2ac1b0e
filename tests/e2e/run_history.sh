#!/usr/bin/env bash
# A whole `kgate run` records itself in the history database (--db, else $KGATE_HISTORY),
# twice into one database (two runs, WAL mode); a shard does not (it is recorded once
# merged); a history that cannot be written fails the run with exit 3, its results kept and
# every report saying so.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
run() { local rc=0; "$KGATE_BIN" run "$SUITES/tiny.yaml" --seed 7 --max-experiments 1 "$@" > "$T/log" 2>&1 || rc=$?; echo "$rc"; }
[ "$(run --out "$T/a" --db "$T/h.db" --run-id first)" = 0 ] || { cat "$T/log"; fail "run 1"; }
[ "$(KGATE_HISTORY="$T/h.db" run --out "$T/b" --run-id second)" = 0 ] || { cat "$T/log"; fail "run 2"; }
grep -q "recorded the run in $T/h.db" "$T/log" || { cat "$T/log"; fail "run 2 did not say it recorded"; }
[ "$(KGATE_HISTORY="$T/h.db" run --out "$T/c" --run-id third --shard 1/1)" = 0 ] || { cat "$T/log"; fail "shard"; }
python3 - "$T/h.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
ids = sorted(r[0] for r in db.execute("SELECT run_id FROM runs"))
assert ids == ["first", "second"], ids   # the shard is recorded once merged, not by itself
print("history runs:", ids)
PY
mkdir -p "$T/dir.db"  # a directory where the database should be: unwritable even for root
rc=$(run --out "$T/d" --db "$T/dir.db" --run-id fourth)
[ "$rc" = 3 ] || { cat "$T/log"; fail "an unwritable history exited $rc, not 3"; }
grep -q "history $T/dir.db" "$T/log" || { cat "$T/log"; fail "no error naming the database"; }
[ -f "$T/d/results/tiny__tiny_softmax.json" ] || fail "results lost when the history failed"
# Every report says what the exit code says: report.json exit 3 with the error, the
# Markdown result line FAIL naming the database, the JUnit an <error> of suite kgate.
python3 - "$T/d" "$T/dir.db" <<'PY' || fail "the reports do not state the history error"
import json, os, sys
import xml.etree.ElementTree as ET
out, db = sys.argv[1], sys.argv[2]
res = json.load(open(os.path.join(out, "report.json")))["result"]
assert res["exit_code"] == 3 and res["pipeline_failed"], res
assert any(db in e for e in res["history_errors"]), res
assert any(db in e for e in json.load(open(os.path.join(out, "run.json")))["history_errors"])
md = open(os.path.join(out, "report.md")).read()
assert "**Result: FAIL**" in md and db in md.split("\n\n")[2], md[:800]
root = ET.parse(os.path.join(out, "junit.xml")).getroot()
case = root.find(".//testcase[@classname='kgate'][@name='history']")
assert case is not None and case.find("error").get("type") == "InfrastructureError", ET.tostring(root)[:800]
assert int(root.get("errors")) >= 1, root.attrib
print("ok: report.json, report.md, JUnit and run.json state the history error")
PY
# `kgate report --from` with a history it can use replaces the error; without --db the
# regenerated reports still say what the run said.
"$KGATE_BIN" report --from "$T/d" > "$T/log" 2>&1 || { cat "$T/log"; fail "report --from"; }
grep -q '"exit_code": 3' "$T/d/report.json" || fail "regenerated reports forgot the history error"
"$KGATE_BIN" report --from "$T/d" --db "$T/h.db" > "$T/log" 2>&1 || { cat "$T/log"; fail "report --from --db"; }
grep -q '"exit_code": 0' "$T/d/report.json" || { cat "$T/d/report.json"; fail "recorded at last, the reports still say 3"; }
echo "PASS: runs record themselves in the history"
