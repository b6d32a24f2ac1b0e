#!/usr/bin/env bash
# kill -9 of a worker from outside kgate (what the OOM killer does) is no verdict on the
# candidate: the request runs again in a fresh worker and the run finishes as if nothing
# happened -- no crash recorded, no 0 us baseline, exit 0.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
out="$T/out"
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" --seed 8 --max-experiments 5 > "$T/log" 2>&1 &
pid=$!
# Once, mid-search (the baseline journaled): twice in a row within one request would be
# charged to that request, as it should.
killed=0
for _ in $(seq 1 400); do
  w=$(pgrep -P "$pid" -f kgate-native | head -1 || true)
  if [ -n "$w" ] && grep -q '"event":"experiment"' "$out/journal.jsonl" 2>/dev/null; then
    kill -9 "$w" 2>/dev/null && killed=1
    break
  fi
  sleep 0.02
done
rc=0
wait "$pid" || rc=$?
cat "$T/log"
[ "$killed" -ge 1 ] || fail "no worker was found to kill"
[ "$rc" = 0 ] || fail "the run exited $rc after its worker was killed"
check_consistent "$out"
if grep -h '"reason"' "$out"/results/*.json | grep -qi "signal 9\|SIGKILL\|A/A timing noise"; then
  fail "a result charges the outside kill to a candidate or the baseline"
fi
python3 - "$out" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/results/*.json"):
    r = json.load(open(f))
    assert r["baseline_us"] > 0, (f, r["baseline_us"])
PY
echo "ok: $killed worker kill(s) survived"
