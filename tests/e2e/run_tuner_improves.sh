#!/usr/bin/env bash
# kgate run on the host backend: the tuner beats a deliberately badly tuned starter,
# the improvement survives the final interleaved re-measure, and git/TSV/journal agree.
source "$(dirname "$0")/run_lib.sh.inc"
rc=0
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$T/out" --seed 7 > "$T/log" 2>&1 || rc=$?
cat "$T/log"
[ "$rc" = 0 ] || fail "exit $rc"
rec="$T/out/results/tiny__tiny_softmax.json"
[ -f "$rec" ] || fail "no result record"
[ "$(result_field "$rec" outcome)" = improved ] || fail "outcome $(result_field "$rec" outcome)"
python3 - "$rec" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["version"] == 1 and r["speedup_lo"] > 2.0, r  # REPEAT 16 -> <= 4 at least
assert r["best_us"] < r["baseline_us"] and r["kept"] >= 1 and r["experiments"] >= 1, r
print("speedup", r["speedup"], [r["speedup_lo"], r["speedup_hi"]])
PY
grep -q "search plan" "$T/log" || fail "no plan printed"
grep -q "tiny_softmax #1 " "$T/log" || fail "no per-experiment progress line"
# The committed best alone reproduces the kernel: its REPEAT default was rewritten.
grep -Eq '^#define REPEAT (1|2|4)$' "$T/out/workspaces/tiny_softmax/repeat_softmax.cpp" || fail "best not rewritten"
check_consistent "$T/out"
