#!/usr/bin/env bash
# A report that cannot be written fails the run as infrastructure (exit 3, the report
# named), never a warning behind exit 0; the results themselves are kept.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
out="$T/out"
mkdir -p "$out/junit.xml"  # a directory where the JUnit file goes
rc=0
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" --seed 7 --max-experiments 2 > "$T/log" 2>&1 || rc=$?
cat "$T/log"
[ "$rc" = 3 ] || fail "an unwritable junit.xml exited $rc, want 3"
grep -q "error.*reports: .*junit.xml" "$T/log" || fail "the error does not name the report"
ls "$out"/results/*.json > /dev/null || fail "the results were lost"
check_consistent "$out"
echo ok
