#!/usr/bin/env bash
# SIGTERM while a worker call is in flight (a CI job's timeout during a candidate that
# hangs, or during a minute-long max-autotune compile): kgate abandons the call at once --
# the worker's process group killed, exit 130 within seconds, not at the request's
# 120 s deadline nor at the runner's SIGKILL -- and leaves the run as a resume expects it:
# the abandoned experiment not journaled, the worktree at the journaled best.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
repo="$T/repo"
mkdir -p "$repo/suites"
ln -s "$KGATE_FIXTURES/repo/configs" "$repo/configs"
ln -s "$KGATE_FIXTURES/repo/native" "$repo/native"
sed -e 's/^id: .*/id: hang/' -e 's/max_experiments: [0-9]*/max_experiments: 2/' \
    -e "s|^agent: .*|agent: {kind: command, command: \"sh \\\\\"\$KGATE_FIXTURES/agents/hang_kernel.sh\\\\\"\", timeout_s: 30}|" \
    "$SUITES/tiny.yaml" > "$repo/suites/hang.yaml"
grep -q hang_kernel "$repo/suites/hang.yaml" || { cat "$repo/suites/hang.yaml"; fail "suite not rewritten"; }
out="$T/out"
"$KGATE_BIN" run "$repo/suites/hang.yaml" --out "$out" --seed 3 > "$T/log" 2>&1 &
pid=$!
# The baseline is measured, then experiment 1's candidate hangs in its first check.
for _ in $(seq 1 600); do
  grep -q "search plan" "$T/log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$T/log"; fail "kgate ended before its search"; }
  sleep 0.2
done
grep -q "search plan" "$T/log" || { cat "$T/log"; fail "no search within 120 s"; }
sleep 4  # the agent's turn, the candidate's compile, then the hang
kill -0 "$pid" 2>/dev/null || { cat "$T/log"; fail "kgate ended on its own"; }
workers=$(pgrep -P "$pid" || true)
[ -n "$workers" ] || { cat "$T/log"; fail "no worker under kgate during the hang"; }
t0=$(date +%s%N)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
cat "$T/log"
[ "$rc" = 130 ] || fail "SIGTERM during a hung candidate: exit $rc, want 130"
[ "$ms" -lt 10000 ] || fail "kgate took $ms ms to stop (the worker call was waited for)"
grep -q "the worker call in flight was abandoned" "$T/log" || fail "no word of the abandoned call"
for w in $workers; do
  for _ in $(seq 1 50); do kill -0 "$w" 2>/dev/null || break; sleep 0.1; done
  ! kill -0 "$w" 2>/dev/null || fail "worker $w ($(cat /proc/$w/cmdline 2>/dev/null | tr '\0' ' ')) outlived kgate"
done
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
ev = [json.loads(l) for l in open(os.path.join(out, "journal.jsonl")).read().splitlines()[1:]]
ns = [e["n"] for e in ev if e.get("event") == "experiment"]
assert ns == [0], ("only the baseline is journaled; the abandoned experiment is not", ns)
PY
check_consistent "$out"
ws=$(find "$out/state" -mindepth 1 -maxdepth 1 -type d | head -1)
! grep -rq "spin = 1" "$ws" --include=*.cpp || fail "the worktree kept the abandoned candidate"
echo "PASS: SIGTERM abandoned the hung call in ${ms} ms; the run is resumable"
