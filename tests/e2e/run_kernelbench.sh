#!/usr/bin/env bash
# `kgate run` over a KernelBench-format level through the real Python worker on the CPU:
# the tuner improves a badly tuned ModelNew starter, a problem without a starting
# candidate is skipped, the result records carry vs-eager and vs-torch.compile numbers,
# and journal, TSV and git agree.
set -u
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
source "$SRC/tests/e2e/run_lib.sh.inc"
set +e
"$KGATE_BIN" run "$SRC/tests/fixtures/kbrepo/suites/kb.yaml" --out "$T/out" >"$T/run.log" 2>&1
rc=$?
set -e
cat "$T/run.log"
[ "$rc" = 0 ] || fail "kgate run exited $rc"
check_consistent "$T/out"
"$PY" - "$T/out" <<'PYEOF'
import glob, json, os, sys
out = sys.argv[1]
recs = {}
for f in glob.glob(os.path.join(out, "results", "**", "*.json"), recursive=True):
    r = json.load(open(f))
    recs[r["problem"]] = r
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
