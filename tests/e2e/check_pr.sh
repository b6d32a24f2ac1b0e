#!/usr/bin/env bash
# `kgate check` end to end on the host backend: a temporary git repository with a minimal
# kgate layout (one native softmax problem), a main branch and PR branches with
# (a) a correct change to the starter -> exit 0, valid junit.xml, Markdown names the problem;
# (b) wrong math -> exit 1, the correctness gate and its case in the output, a
#     <failure type="CorrectnessRegression"> (the base passes); on a base that was wrong
#     already, a GateFailure;
# (c) only a README change -> exit 0, "nothing to check";
# (d) --base no-such-ref -> exit 2; a --changed file that maps to no problem -> warning, 0;
#     a --changed path in neither the working tree nor the base (a typo) -> exit 2;
# (e) a much slower starter -> exit 1 (performance);
# (f) a branch that deletes a KernelBench solution -> exit 1, the problem a <failure>
#     "its candidate file was deleted by this change" (also through --changed);
# (g) a base that does not compile, fixed by the change -> exit 2, <error type="ProblemError">.
# The git CLI builds the fixture repository only; kgate itself reads it with libgit2.
set -u
KGATE="${KGATE_BIN:?KGATE_BIN not set}"
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
FX="$SRC/tests/fixtures/search/repo"
XSD="$SRC/../shared/schemas/junit-10.xsd"
command -v git >/dev/null || { echo "skip: no git"; exit 77; }
TMP="$(mktemp -d)"
[ -n "${KGATE_KEEP_TMP:-}" ] || trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache"
unset GITHUB_STEP_SUMMARY KGATE_RUN_ID
fails=0
R="$TMP/repo"
STARTER=native/starters/repeat_softmax.cpp

g() { git -C "$R" -c user.name=kgate-test -c user.email=test@kgate.invalid -c commit.gpgsign=false "$@" >/dev/null; }

mkdir -p "$R/configs/gpus" "$R/configs/levels" "$R/native/starters" "$R/suites"
cp "$FX/configs/gpus/host.yaml" "$R/configs/gpus/"
cp "$FX/configs/levels/tiny.yaml" "$R/configs/levels/"
cp "$FX/native/tiny_softmax.yaml" "$R/native/"
cp "$FX/$STARTER" "$R/$STARTER"
cat >"$R/suites/check.yaml" <<'EOF'
version: 1
id: check
title: PR check e2e (small measurement times)
levels: [tiny]
gpus: [host]
backend: host
gates: {seeds: 2}
measurement: {min_time_s: 0.05, max_time_s: 0.3, min_samples: 8, target_rse: 0.05, flush_l2: false}
EOF
# A KernelBench-format level (a reference model and its solution) for the deletion case.
cat >"$R/configs/levels/kb.yaml" <<'EOF'
version: 1
id: kb
title: KernelBench-format level of the deletion case
kind: kernelbench
root: ../../kb/ref
select: all
baseline: eager
solutions: ../../kb/sol
EOF
mkdir -p "$R/kb/ref" "$R/kb/sol"
echo "# model" >"$R/kb/ref/19_ReLU.py"
echo "# ModelNew" >"$R/kb/sol/19_ReLU.py"
echo "# solutions" >"$R/kb/sol/README.md"  # the directory outlives the deletion
echo "# fixture" >"$R/README.md"
git init -q "$R" || { echo "skip: git init failed"; exit 77; }
g checkout -q -b main
g add -A
g commit -q -m "base"

# branch NAME: a branch off main whose change is made by the rest of the arguments (a sed
# script on the starter, or "readme").
branch() {
  local name="$1" what="$2"
  g checkout -q main
  g checkout -q -b "$name"
  if [ "$what" = readme ]; then echo "more docs" >>"$R/README.md"
  elif [ "$what" = rm-solution ]; then g rm -q kb/sol/19_ReLU.py
  else sed -i "$what" "$R/$STARTER"; fi
  g commit -q -am "$name"
}
branch good 's/^#define REPEAT 16$/#define REPEAT 8/'
branch broken 's|(float)(1.0 / sum)|(float)(2.0 / sum)|'
branch docs readme
branch slow 's/^#define REPEAT 16$/#define REPEAT 96/'
branch deleted rm-solution
grep -q "2.0 / sum" <(git -C "$R" show broken:$STARTER) || { echo "FAIL setup: the broken change did not apply"; exit 1; }
grep -q "REPEAT 96" <(git -C "$R" show slow:$STARTER) || { echo "FAIL setup: the slow change did not apply"; exit 1; }

# check NAME BRANCH EXPECTED_RC NEEDLE [ARGS...]: kgate check on BRANCH, exit code and output.
# BASE and REPO (environment) override --base main and --repo R.
check() {
  local name="$1" br="$2" want_rc="$3" needle="$4"
  shift 4
  g checkout -q "$br"
  "$KGATE" check --base "${BASE:-main}" --repo "${REPO:-$R}" --out "$TMP/$name" --suite "$R/suites/check.yaml" "$@" \
    >"$TMP/$name.out" 2>&1
  local rc=$?
  if [ "$rc" != "$want_rc" ]; then
    echo "FAIL $name: exit $rc, want $want_rc"; sed 's/^/    /' "$TMP/$name.out" | tail -40; fails=$((fails + 1)); return 1
  fi
  if ! grep -qF -- "$needle" "$TMP/$name.out"; then
    echo "FAIL $name: output lacks '$needle'"; sed 's/^/    /' "$TMP/$name.out" | tail -40; fails=$((fails + 1)); return 1
  fi
  echo "ok   $name (exit $rc)"
}
expect() {  # expect NAME DESCRIPTION COMMAND...
  local name="$1" what="$2"
  shift 2
  if ! "$@" >/dev/null 2>&1; then echo "FAIL $name: $what"; fails=$((fails + 1)); fi
}
validate_junit() {
  local f="$1"
  expect "$f" "no junit.xml" test -s "$f"
  if command -v xmllint >/dev/null && [ -f "$XSD" ]; then
    xmllint --noout --schema "$XSD" "$f" >"$TMP/xmllint.out" 2>&1 ||
      { echo "FAIL $f: not valid against junit-10.xsd"; cat "$TMP/xmllint.out"; fails=$((fails + 1)); }
  fi
}

# (a) a correct change: all gates pass, timed against the base version.
if check good good 0 "verdict: PASS" --seed 11; then
  validate_junit "$TMP/good/junit.xml"
  expect good "report.md does not name the problem" grep -q "tiny_softmax" "$TMP/good/report.md"
  expect good "no <failure> expected" bash -c "! grep -q '<failure' '$TMP/good/junit.xml'"
  expect good "baseline is not the base version" grep -q '"baseline_kind": "base"' "$TMP/good/results/tiny__tiny_softmax.json"
  expect good "no base copy" test -f "$TMP/good/base/tiny__tiny_softmax/repeat_softmax.cpp"
  expect good "the base copy is not main's starter" cmp -s "$TMP/good/base/tiny__tiny_softmax/repeat_softmax.cpp" "$FX/$STARTER"
  expect good "seed not printed" grep -q "reproduce with --seed 11" "$TMP/good.out"
  expect good "run.json is not a check" grep -q '"kind": "check"' "$TMP/good/run.json"
  expect good "the report's header does not name the device the check ran on" \
    bash -c "! grep -q '(check) on -,' '$TMP/good/report.md' && grep -q '\"gpu\": \"[^\"]' '$TMP/good/run.json'"
  expect good "JUnit names the problem within its level (not tiny/tiny/...)" \
    grep -q '<testcase classname="tiny" name="tiny_softmax"' "$TMP/good/junit.xml"
fi

# (b) wrong math: the correctness gate fails and names its case; the base version passes
# the gates, so the change is a correctness regression in the output, JUnit and report.
if check broken broken 1 "verdict: FAIL" --seed 11; then
  expect broken "no correctness gate failure in the output" grep -qE "correctness gate failed.*case seed=[0-9]+/" "$TMP/broken.out"
  expect broken "the base version was not judged" grep -q "base version: passes the static, correctness and oracle gates" "$TMP/broken.out"
  validate_junit "$TMP/broken/junit.xml"
  expect broken "no <failure type=CorrectnessRegression> in junit.xml" grep -q '<failure type="CorrectnessRegression"' "$TMP/broken/junit.xml"
  expect broken "report.md does not name the problem" grep -q "tiny_softmax" "$TMP/broken/report.md"
  expect broken "report.md does not count a correctness regression" grep -q "(1 correctness regressions, 0 gate failures" "$TMP/broken/report.md"
fi
# (b') a change on a base that was wrong already: the base fails too, so the change is a
# gate failure of a failing kernel, not a regression.
g checkout -q broken
g checkout -q -b stillbroken
sed -i 's/^#define REPEAT 16$/#define REPEAT 8/' "$R/$STARTER"
g commit -q -am "still wrong"
if BASE=broken check stillbroken stillbroken 1 "verdict: FAIL" --seed 11; then
  expect stillbroken "the base version's failure is not said" grep -q "base version: fails too" "$TMP/stillbroken.out"
  expect stillbroken "no <failure type=GateFailure> in junit.xml" grep -q '<failure type="GateFailure"' "$TMP/stillbroken/junit.xml"
  expect stillbroken "report.md does not count a gate failure" grep -q "(0 correctness regressions, 1 gate failures" "$TMP/stillbroken/report.md"
fi

# (c) no kernel change.
if check docs docs 0 "nothing to check"; then
  expect docs "verdict line" grep -q "verdict: PASS (nothing to check)" "$TMP/docs.out"
  validate_junit "$TMP/docs/junit.xml"
fi

# (d) usage errors and warnings.
BASE=no-such-ref check bad_ref good 2 "unknown ref 'no-such-ref'"
REPO="$TMP/no-such-dir" check no_dir good 2 "no such directory"
mkdir -p "$TMP/plain"
REPO="$TMP/plain" check not_repo good 2 "not a git repository"
check unmapped good 0 "maps to no problem" --changed README.md
expect unmapped "should say nothing to check" grep -q "nothing to check" "$TMP/unmapped.out"
check typo good 2 "--changed native/starters/no_such.cpp: no such file" --changed native/starters/no_such.cpp
expect typo "a typo wrote a passing report" bash -c "! test -e '$TMP/typo/junit.xml'"

# (e) a much slower starter (6x the work): a significant slowdown fails the check.
if check slow slow 1 "verdict: FAIL" --seed 11; then
  expect slow "no slowdown reason" grep -q "slower" "$TMP/slow.out"
  validate_junit "$TMP/slow/junit.xml"
  expect slow "no <failure> in junit.xml" grep -q '<failure' "$TMP/slow/junit.xml"
fi

# (f) a change that deletes a problem's candidate: the problem fails, with its reason, in
# the output, the JUnit and report.json; the same through --changed.
if check deleted deleted 1 "kb/sol/19_ReLU.py (deleted) -> kb/19_ReLU" --seed 11; then
  expect deleted "no verdict FAIL" grep -q "verdict: FAIL (1 of 1 problem failed; kb/19_ReLU: its candidate file was deleted by this change" "$TMP/deleted.out"
  validate_junit "$TMP/deleted/junit.xml"
  expect deleted "no <failure> naming the deletion in junit.xml" \
    grep -q '<failure type="GateFailure" message="its candidate file was deleted by this change' "$TMP/deleted/junit.xml"
  expect deleted "report.json does not fail with exit 1" \
    python3 -c "import json,sys; r=json.load(open('$TMP/deleted/report.json'))['result']; sys.exit(r['exit_code'] != 1 or not r['pipeline_failed'])"
fi
check deleted_changed deleted 1 "its candidate file was deleted by this change" --changed kb/sol/19_ReLU.py

# (g) a base that does not compile, fixed by the change: the problem's own input is
# unusable, a configuration error (exit 2) that the verdict, report.json and the JUnit's
# <error type="ProblemError"> all state (not an infrastructure error, not a failed gate).
g checkout -q main
g checkout -q -b badbase
sed -i 's|^#define REPEAT 16$|#define REPEAT 16 +|' "$R/$STARTER"
g commit -q -am "a base that does not compile"
g checkout -q -b fixbase
sed -i 's|^#define REPEAT 16 +$|#define REPEAT 16|' "$R/$STARTER"
g commit -q -am "fix the base"
if BASE=badbase check badbase fixbase 2 "verdict: ERROR (configuration" --seed 11; then
  validate_junit "$TMP/badbase/junit.xml"
  expect badbase "no <error type=\"ProblemError\"> in junit.xml" grep -q '<error type="ProblemError"' "$TMP/badbase/junit.xml"
  expect badbase "report.json does not say exit 2" \
    python3 -c "import json,sys; r=json.load(open('$TMP/badbase/report.json'))['result']; sys.exit(r['exit_code'] != 2 or not r['pipeline_failed'])"
fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all ok"
