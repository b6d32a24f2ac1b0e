#!/usr/bin/env bash
# Command agents on the host backend: a wrong kernel is reverted by the correctness gate
# (not a pipeline failure); an edit of a forbidden file is caught and undone; an agent
# that hangs is killed at its timeout.
source "$(dirname "$0")/run_lib.sh.inc"
rc=0
"$KGATE_BIN" run "$SUITES/broken.yaml" --out "$T/broken" --seed 1 > "$T/log" 2>&1 || rc=$?
cat "$T/log"
[ "$rc" = 0 ] || fail "broken: exit $rc (a reverted candidate must not fail the pipeline)"
python3 - "$T/broken" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1] + "/journal.jsonl").read().splitlines()[1:]]
ex = [e for e in ev if e["event"] == "experiment"]
assert [e["verdict"] for e in ex] == ["baseline", "revert", "revert"], [e["verdict"] for e in ex]
assert all(e["failed_gate"] == "correctness" for e in ex[1:]), ex[1]
r = json.load(open(sys.argv[1] + "/results/tiny__tiny_softmax.json"))
assert r["outcome"] == "fallback", r["outcome"]
PY
cmp "$T/broken/workspaces/tiny_softmax/repeat_softmax.cpp" \
    "$KGATE_FIXTURES/repo/native/starters/repeat_softmax.cpp" || fail "starter not restored"
check_consistent "$T/broken"

rc=0
start=$(date +%s)
"$KGATE_BIN" run "$SUITES/forbidden.yaml" --out "$T/forbidden" --seed 1 > "$T/log2" 2>&1 || rc=$?
cat "$T/log2"
[ "$rc" = 0 ] || fail "forbidden: exit $rc"
[ $(( $(date +%s) - start )) -lt 60 ] || fail "the hanging agent was not killed in time"
python3 - "$T/forbidden" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1] + "/journal.jsonl").read().splitlines()[1:]]
ex = [e for e in ev if e["event"] == "experiment"]
assert [e["verdict"] for e in ex] == ["baseline", "violation", "timeout"], [e["verdict"] for e in ex]
assert ex[1]["violations"] == ["modified problem.yaml"], ex[1]["violations"]
PY
cmp "$T/forbidden/workspaces/tiny_softmax/problem.yaml" "$KGATE_FIXTURES/repo/native/tiny_softmax.yaml" \
  || fail "problem.yaml not restored"
pgrep -f "sleep 300" >/dev/null && fail "the agent's child outlived its timeout" || true
check_consistent "$T/forbidden"
