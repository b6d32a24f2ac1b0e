#!/usr/bin/env bash
# kgate run --gpus: one child run per GPU (here on the host backend, where the GPU index
# only sets CUDA_VISIBLE_DEVICES), each a shard of one run, merged into --out. Two GPUs
# for a one-problem suite: the second shard is empty and the merge still holds.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
rc=0
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$T/out" --seed 7 --gpus 0,1 --max-experiments 2 > "$T/log" 2>&1 || rc=$?
cat "$T/log"
[ "$rc" = 0 ] || fail "exit $rc"
grep -q "gpu 0: kgate run --shard 1/2" "$T/log" || fail "no child for gpu 0"
grep -q "gpu 1: kgate run --shard 2/2" "$T/log" || fail "no child for gpu 1"
grep -q "merged 2 GPU shards" "$T/log" || fail "not merged"
python3 - "$T/out" <<'PY'
import json, os, sys
out = sys.argv[1]
a = json.load(open(os.path.join(out, "gpu-0", "run.json")))
b = json.load(open(os.path.join(out, "gpu-1", "run.json")))
assert a["run_id"] == b["run_id"] and a["config_hash"] == b["config_hash"], (a["run_id"], b["run_id"])
assert a["planned"] == ["tiny/tiny_softmax"] and b["planned"] == [], (a["planned"], b["planned"])
m = json.load(open(os.path.join(out, "run.json")))
assert m["run_id"] == a["run_id"] and m["planned"] == ["tiny/tiny_softmax"], m
recs = os.listdir(os.path.join(out, "results"))
assert recs == ["tiny__tiny_softmax.json"], recs
assert os.path.exists(os.path.join(out, "junit.xml")) and os.path.exists(os.path.join(out, "report.md"))
print("merged run", m["run_id"])
PY
check_consistent "$T/out/gpu-0"
# Bad lists are usage errors before anything runs.
rc=0; "$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$T/bad" --gpus 0,0 > "$T/bad.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "listed twice" "$T/bad.log" || fail "--gpus 0,0: exit $rc"
rc=0; "$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$T/bad" --gpus 0,1 --shard 1/2 > "$T/bad.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--gpus with --shard: exit $rc"
echo "PASS: kgate run --gpus"
