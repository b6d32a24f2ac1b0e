#!/usr/bin/env bash
# `kgate bench` on KernelBench problems through the real Python worker on the CPU: the four
# gates, their failures named by gate and case, exit codes and the --json verdict.
set -u
KGATE="${KGATE_BIN:?KGATE_BIN not set}"
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
FX="$SRC/tests/fixtures/kernelbench"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0

source "$SRC/tests/e2e/bench_lib.sh.inc"
# gates_pass JSON GATE...: the verdict's listed gates passed.
gates_pass() {
  local json="$1"; shift
  "$PY" - "$json" "$@" <<'PYEOF' || { echo "FAIL $json: gates $* did not all pass"; fails=$((fails + 1)); }
import json, sys
v = json.load(open(sys.argv[1]))
st = {g["gate"]: g["status"] for g in v["gates"]}
assert v["version"] == 1 and len(v["gates"]) == 4, v
for g in sys.argv[2:]:
    assert st[g] == "pass", (g, st)
assert st["performance"] in ("pass", "fail"), st
if st["performance"] == "pass" or v["timing"]:
    assert v["timing"]["candidate_us"] > 0 and v["timing"]["baseline_us"] > 0
PYEOF
}

B=(bench --device cpu --min-time 0.1 --max-time 0.4 --timeout 120 --seed 11)
P="$FX/relu.py"

# A correct candidate in another formulation passes the first three gates; speed on a
# 2-core CI box is whatever it is, but the performance gate must run and report numbers.
"$KGATE" "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_clamp.py" --json "$TMP/ok.json" >"$TMP/ok.out" 2>&1
rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then echo "FAIL ok: exit $rc"; cat "$TMP/ok.out"; fails=$((fails + 1)); fi
gates_pass "$TMP/ok.json" static correctness oracle
grep -qE "^  small/f32 " "$TMP/ok.out" || { echo "FAIL ok: not the small CPU variant"; fails=$((fails + 1)); }
# A file without a '# kgate:small' line runs at its own sizes, and says so (the official
# files have none): its timed case is not called small.
sed '/kgate:small/d' "$P" >"$TMP/relu_own_sizes.py"
"$KGATE" "${B[@]}" --problem "$TMP/relu_own_sizes.py" --candidate "$FX/candidates/relu_clamp.py" >"$TMP/own.out" 2>&1
grep -q "no '# kgate:small' line in .*relu_own_sizes.py: it runs at the file's own sizes on the host" "$TMP/own.out" &&
  grep -qE "^  get_inputs/f32 " "$TMP/own.out" && ! grep -q "small/f32" "$TMP/own.out" ||
  { echo "FAIL own sizes: not said, or called small"; cat "$TMP/own.out"; fails=$((fails + 1)); }

# |x| equals relu(x) on torch.rand inputs: only the signed distribution catches it.
run abs_cheat 1 "verdict: FAIL at the correctness gate: correctness: case seed=" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_abs.py"
grep -q "/f32/signed: .* elements over tolerance" "$TMP/abs_cheat.out" || { echo "FAIL abs_cheat: not caught on the signed case"; fails=$((fails + 1)); }
run wrong 1 "elements over tolerance" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_wrong.py"
run raises 1 "raised " -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_raises.py"
run not_python 2 "a KernelBench problem's candidate is a .py file with a class ModelNew" -- "${B[@]}" --problem "$P" --candidate "$SRC/README.md"
run mutates 1 "modified its inputs" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_mutates.py"
run nan 1 "NaN" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_nan.py"
run shape 1 "wrong shape" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_shape.py"
run dtype 1 "output output0 is f64, the reference's is f32" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_double.py"
run syntax 1 "verdict: FAIL at the static gate" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_syntax.py"
run stream 1 "[stream]" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/lint_stream.py"
run refop 1 "[reference-op]" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/lint_reference_op.py"
run subprocess 1 "[subprocess]" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/lint_subprocess.py"
# A candidate that prints to stdout cannot corrupt the protocol stream.
"$KGATE" "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_print.py" --json "$TMP/print.json" >"$TMP/print.out" 2>&1
gates_pass "$TMP/print.json" static correctness oracle

# A problem this machine cannot hold (1 TiB of input), sized on the meta device before
# anything is allocated: not judged, an infrastructure error (exit 3), not a gate failure.
run too_big 3 "kgate cannot judge this problem on this machine: judging it needs at least 5120.0 GiB" -- "${B[@]}" --problem "$FX/too_big.py" --candidate "$FX/too_big.py"

# Usage errors: a missing problem, a baseline that is not a mode.
run missing 2 "no such problem file" -- "${B[@]}" --problem "$FX/nope.py" --candidate "$FX/candidates/relu_clamp.py"
run bad_baseline 2 "eager, compile or compile-max-autotune" -- "${B[@]}" --problem "$P" --candidate "$FX/candidates/relu_clamp.py" --baseline "$FX/relu.py"
# A problem file the worker cannot load is a usage error naming the file.
run no_inputs 2 "no_get_inputs.py" -- "${B[@]}" --problem "$FX/no_get_inputs.py" --candidate "$FX/candidates/relu_clamp.py"

# No GPU here: --device cuda is an infrastructure error (3) that names the sandbox, so a
# runner whose GPU works outside it knows where to look.
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  run no_cuda 3 "the worker ran in kgate's sandbox" -- bench --device cuda --timeout 120 --problem "$P" --candidate "$FX/candidates/relu_clamp.py"
  KGATE_SANDBOX=off run no_cuda_off 3 "is not available here" -- bench --device cuda --timeout 120 --problem "$P" --candidate "$FX/candidates/relu_clamp.py"
fi

# A two-layer problem and a candidate for it, against the eager model.
"$KGATE" "${B[@]}" --problem "$FX/linear_relu.py" --candidate "$FX/candidates/linear_relu_ok.py" --json "$TMP/lr.json" >"$TMP/lr.out" 2>&1
gates_pass "$TMP/lr.json" static correctness oracle

[ "$fails" = 0 ] && echo "all kernelbench bench checks passed"
exit $(( fails > 0 ))
