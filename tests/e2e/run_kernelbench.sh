#!/usr/bin/env bash
# `kgate run` over a KernelBench-format level through the real Python worker on the CPU:
# the tuner improves a badly tuned ModelNew starter, a problem without a starting
# candidate is skipped, the result records carry vs-eager and vs-torch.compile numbers,
# journal, TSV and git agree; run as two shards of one run and merged.
set -u
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
source "$SRC/tests/e2e/run_lib.sh.inc"
# Two shards of one run (the id from the environment for one, the flag for the other),
# then `kgate merge`: one set of records and reports, as a nightly matrix produces.
set +e
KGATE_RUN_ID=kb-e2e-1 "$KGATE_BIN" run "$SRC/tests/fixtures/kbrepo/suites/kb.yaml" --shard 1/2 --out "$T/s1" >"$T/s1.log" 2>&1
rc1=$?
"$KGATE_BIN" run "$SRC/tests/fixtures/kbrepo/suites/kb.yaml" --shard 2/2 --run-id kb-e2e-1 --out "$T/s2" >"$T/s2.log" 2>&1
rc2=$?
"$KGATE_BIN" merge "$T/s1" "$T/s2" --out "$T/out" >"$T/merge.log" 2>&1
rcm=$?
set -e
cat "$T/s1.log" "$T/s2.log" "$T/merge.log"
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] || fail "kgate run shards exited $rc1 / $rc2"
[ "$rcm" = 0 ] || fail "kgate merge exited $rcm"
"$PY" - "$T" <<'PYEOF'
import json, os, sys
t = sys.argv[1]
i1 = json.load(open(os.path.join(t, "s1", "run.json")))
i2 = json.load(open(os.path.join(t, "s2", "run.json")))
assert i1["run_id"] == i2["run_id"] == "kb-e2e-1", (i1["run_id"], i2["run_id"])
assert i1["config_hash"] and i1["config_hash"] == i2["config_hash"]
assert (i1["shard"], i2["shard"]) == ({"index": 1, "count": 2}, {"index": 2, "count": 2})
assert sorted(i1["planned"] + i2["planned"]) == ["kb/linear_relu", "kb/relu"], (i1["planned"], i2["planned"])
assert i1["finished_at"] and not i1["interrupted"] and i1["seed"] > 0
PYEOF
for s in s1 s2; do if [ -f "$T/$s/journal.jsonl" ] && [ -d "$T/$s/workspaces/relu" ]; then check_consistent "$T/$s"; fi; done
"$PY" - "$T/out" <<'PYEOF'
import glob, json, os, sys
out = sys.argv[1]
sys.path.insert(0, os.path.join(os.environ["KGATE_SOURCE_DIR"], "tests", "e2e"))
from e2e_records import records
recs = records(out)
assert set(recs) == {"relu", "linear_relu"}, recs.keys()
r = recs["relu"]
assert r["outcome"] == "improved", (r["outcome"], r["reason"])
assert r["speedup_lo"] > 1.01 and r["kept"] >= 1, r
assert r["eager_us"] > 0, "no vs-eager number"
print("relu:", r["outcome"], round(r["speedup"], 2), "x; eager", round(r["eager_us"], 1), "us; compile", round(r["compile_us"], 1), "us; best", round(r["best_us"], 1), "us")
s = recs["linear_relu"]
assert s["outcome"] == "skipped" and "no starting candidate" in s["reason"], s
md = open(os.path.join(out, "report.md")).read()
assert "vs eager" in md and "| kb |" in md, md[:400]
PYEOF
echo "PASS: kgate run on KernelBench problems"
