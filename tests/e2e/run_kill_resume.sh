#!/usr/bin/env bash
# Durability: SIGKILL a run at several points, --resume each time; the final journal has
# every experiment once (no loss, no duplicates) and git/TSV agree with it. Then SIGINT
# ends a run with 130 and --resume finishes it.
source "$(dirname "$0")/run_lib.sh.inc"
out="$T/out"
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" --seed 3 --max-experiments 5 > "$T/log" 2>&1 &
pid=$!
resumes=0
for delay in 1.5 2.3 3.1 1.7; do
  sleep "$delay"
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "--- killed after ${delay}s; journal has $(grep -c '"event":"experiment"' "$out/journal.jsonl" || true) experiments"
    "$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" --resume --max-experiments 5 >> "$T/log" 2>&1 &
    pid=$!
    resumes=$((resumes + 1))
  fi
done
rc=0
wait "$pid" || rc=$?
cat "$T/log"
[ "$rc" = 0 ] || fail "final resume exit $rc"
echo "resumed $resumes times"
grep -q '"event":"run_done"' "$out/journal.jsonl" || fail "run not finished"
check_consistent "$out"
n=$(grep -c '"event":"experiment"' "$out/journal.jsonl")
[ "$n" -ge 2 ] || fail "only $n experiments"

# SIGINT: clean stop with 130, then resume to the end.
out2="$T/out2"
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out2" --seed 4 --max-experiments 4 > "$T/log2" 2>&1 &
pid=$!
sleep 2.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
cat "$T/log2"
if [ "$rc" != 0 ]; then
  [ "$rc" = 130 ] || fail "SIGINT exit $rc, want 130"
  "$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out2" --resume --max-experiments 4 >> "$T/log2" 2>&1 \
    || fail "resume after SIGINT failed"
fi
check_consistent "$out2"
