#!/usr/bin/env bash
# A native problem's reference columns: with the suite's torch_references, the final best
# is timed against its op's PyTorch form in eager and under torch.compile, in the Python
# worker (the library kgate-native built, loaded there), and the record, the Markdown and
# the JSON report carry vs eager and vs torch.compile; the form is kept for people to read.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
SRC="$KGATE_SOURCE_DIR"
source "$SRC/tests/e2e/torch_lib.sh.inc"  # $PY with torch (or skip, 77)
mkdir -p "$T/repo"
cp -r "$KGATE_FIXTURES/repo/." "$T/repo/"
sed -e 's/^id: tiny$/id: tiny-torch/' -e 's/^backend: host$/backend: host\ntorch_references: [eager, compile]/' \
  -e 's/max_experiments: 6/max_experiments: 2/' "$T/repo/suites/tiny.yaml" > "$T/repo/suites/tiny-torch.yaml"
rc=0
"$KGATE_BIN" run "$T/repo/suites/tiny-torch.yaml" --out "$T/out" --seed 7 > "$T/log" 2>&1 || rc=$?
cat "$T/log"
[ "$rc" = 0 ] || fail "exit $rc"
rec="$T/out/results/tiny__tiny_softmax.json"
python3 - "$rec" "$T/out" <<'PY'
import glob, json, sys
r = json.load(open(sys.argv[1]))
assert r["eager_us"] > 0 and r["compile_us"] > 0, r
assert r.get("compile_max_autotune_us", 0) == 0, r  # not asked for
rep = json.load(open(sys.argv[2] + "/report.json"))
lv = rep["levels"][0]
assert lv["geomean_vs_eager"] and lv["geomean_vs_compile"], lv
forms = glob.glob(sys.argv[2] + "/cache/torch-forms/softmax-*.py")
assert len(forms) == 1, forms
text = open(forms[0]).read()
assert "return torch.softmax(x, dim=-1)" in text and "def get_inputs()" in text, text
print("vs eager", round(r["eager_us"] / r["best_us"], 3), "vs torch.compile", round(r["compile_us"] / r["best_us"], 3))
PY
grep -q "remeasure vs compile: the reference" "$T/log" || fail "no re-measure against torch.compile's form logged"
grep -E "^\| tiny \|" "$T/out/report.md" | grep -Eq "\| [0-9.]+x \| [0-9.]+x \| [0-9.]+%" || fail "no vs eager / vs torch.compile geomeans in report.md"
check_consistent "$T/out"

# Optional columns: without a Python worker they stay empty with a warning, and the problem
# keeps its result (never an error for want of them).
rc=0
KGATE_PYTHON=/nonexistent/python "$KGATE_BIN" run "$T/repo/suites/tiny-torch.yaml" --out "$T/out2" --seed 7 \
  > "$T/log2" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$T/log2"; fail "without a Python worker: exit $rc"; }
grep -q "vs PyTorch" "$T/log2" || fail "no warning about the PyTorch columns"
python3 - "$T/out2/results/tiny__tiny_softmax.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] in ("improved", "matched") and r.get("eager_us", 0) == 0 and r.get("compile_us", 0) == 0, r
PY

# kgate bench --torch: the same measure for one candidate, after its gates, in the table
# and in the verdict JSON; a KernelBench problem is refused (its reference is its model).
P="$T/repo/native/tiny_softmax.yaml"
S="$(sed -n 's/^starters: *{host: *\([^}]*\)}.*/\1/p' "$P" | tr -d ' ')"
rc=0
"$KGATE_BIN" bench --problem "$P" --candidate "$T/repo/native/$S" --torch eager --min-time 0.05 --max-time 0.3 \
  --seed 3 --json "$T/bench.json" > "$T/bench.log" 2>&1 || rc=$?
cat "$T/bench.log"
[ "$rc" = 0 ] || fail "bench --torch: exit $rc"
grep -Eq "^  eager +PyTorch [0-9.e+]+ us +candidate [0-9.e+]+ us +[0-9.]+x \[" "$T/bench.log" || fail "no vs PyTorch line"
python3 - "$T/bench.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = j["torch_references"]["eager"]
assert e["torch_us"] > 0 and e["candidate_us"] > 0 and e["speedup_lo"] <= e["speedup"] <= e["speedup_hi"], e
assert j["passed"] is True
PY
rc=0
"$KGATE_BIN" bench --problem "$SRC/tests/fixtures/kernelbench/relu.py" --candidate "$SRC/tests/fixtures/kernelbench/relu.py" \
  --torch eager > "$T/kb.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "\-\-torch is for native problems" "$T/kb.log" || fail "bench --torch on a KernelBench problem: exit $rc: $(cat "$T/kb.log")"
echo "ok"
