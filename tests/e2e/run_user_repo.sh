#!/usr/bin/env bash
# kgate as a tool in another repository, end to end on the host backend:
#   `cmake --install` of this build into a temporary prefix, moved elsewhere (an install is
#   relocatable), with the source tree hidden (a private mount namespace, where the machine
#   allows one) and none of KGATE_SOURCE_DIR/ROOT/INCLUDE_DIR/PYTHONPATH/NATIVE_BIN set;
#   `kgate init` scaffolds a user repository (and keeps its files on a second init);
#   `kgate validate --plan` there: the built-in GPU targets come from the install;
#   two shards of suites/smoke.yaml and `kgate merge` of them (and a refused merge of
#   shards of different runs, and a merge missing shard 2: exit 3, every report says so); `kgate check` of a PR branch with wrong math (exit 1, one
#   ::error annotation on the kernel file, one step summary) and of a faster one (exit 0).
# Every step asserts its exit code, and that junit.xml and report.json say the same.
set -uo pipefail
: "${KGATE_BIN:?KGATE_BIN must point at the kgate binary of the build to install}"
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
BUILD="$(cd "$(dirname "$KGATE_BIN")" && pwd)"
command -v git >/dev/null || { echo "skip: no git"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-e2e-user.XXXXXX")
[ -n "${KGATE_KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- install, then move the prefix ----
cmake --install "$BUILD" --prefix "$T/stage" >"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "cmake --install"; }
mv "$T/stage" "$T/kgate"
P="$T/kgate"
for f in bin/kgate bin/kgate-native include/kgate/kernel.h include/kgate/starter_host.h include/kgate/starter_cuda.cuh share/kgate/python/kgate_worker/__main__.py \
         share/kgate/configs/gpus/cpu.yaml share/kgate/kernelbench/native/softmax.yaml \
         share/kgate/ci/nightly.yml share/kgate/ci/actionlint.yaml; do
  [ -e "$P/$f" ] || fail "the install has no $f"
done
if [ -f "$BUILD/libkgate_native_cuda.so" ]; then
  [ -f "$P/bin/libkgate_native_cuda.so" ] || fail "the CUDA backend was built but not installed"
fi
echo "ok   installed into a prefix and moved it"

# ---- the installed kgate alone: no source tree, no kgate variables ----
unset KGATE_SOURCE_DIR KGATE_ROOT KGATE_INCLUDE_DIR KGATE_PYTHONPATH KGATE_NATIVE_BIN KGATE_BIN KGATE_RUN_ID
unset GITHUB_STEP_SUMMARY GITHUB_WORKSPACE KGATE_HISTORY
export PATH="$P/bin:$PATH" XDG_CACHE_HOME="$T/cache" CI=true
hide=0
case "$T/" in "$SRC"/*) ;; *)
  if unshare -m --propagation private true 2>/dev/null; then hide=1; fi ;;
esac
# k ARGS...: the installed kgate, with the source tree it was built from hidden (mounted over).
k() {
  if [ "$hide" = 1 ]; then
    unshare -m --propagation private bash -c 'mount -t tmpfs kgate-hidden "$0" && exec "$@"' "$SRC" kgate "$@"
  else
    kgate "$@"
  fi
}
[ "$hide" = 1 ] && echo "ok   the source tree is hidden from the installed kgate" ||
  echo "note: no private mount namespace here; the source tree stays visible"
# expect_rc WANT NAME ARGS...: run the installed kgate, output in $T/NAME.out.
expect_rc() {
  local want="$1" name="$2"; shift 2
  k "$@" >"$T/$name.out" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || { tail -40 "$T/$name.out"; fail "$name: kgate $* exited $rc, want $want"; }
  echo "ok   $name (exit $rc)"
}

# ---- kgate init ----
R="$T/repo"
expect_rc 0 init init "$R" --kgate-ref v9.9.9-test --kgate-git https://example.invalid/kgate.git
for f in configs/levels/native.yaml configs/levels/kernelbench.yaml kernels/native/softmax.yaml \
         kernels/native/starters/softmax.cpp kernels/native/starters/softmax.cu kernels/native/rmsnorm.yaml \
         suites/smoke.yaml suites/nightly.yaml suites/pr.yaml .github/workflows/nightly.yml \
         .github/workflows/pr.yml .github/workflows/weekly.yml .github/actionlint.yaml Jenkinsfile; do
  [ -f "$R/$f" ] || fail "kgate init wrote no $f"
done
[ -d "$R/configs/gpus" ] && fail "kgate init wrote configs/gpus (the built-in targets are the default)"
for wf in nightly pr weekly; do
  grep -q '^  KGATE_REF: v9.9.9-test$' "$R/.github/workflows/$wf.yml" || fail "$wf.yml does not pin the kgate ref"
  grep -q '^  KGATE_GIT: https://example.invalid/kgate.git$' "$R/.github/workflows/$wf.yml" || fail "$wf.yml: KGATE_GIT"
done
grep -q "KGATE_REF = 'v9.9.9-test'" "$R/Jenkinsfile" || fail "the Jenkinsfile does not pin the kgate ref"
expect_rc 0 init_again init "$R"
grep -q "wrote" "$T/init_again.out" && fail "a second kgate init overwrote files"
grep -q "kept     suites/smoke.yaml" "$T/init_again.out" || fail "a second kgate init does not say what it kept"

cd "$R" || fail "cd $R"
git init -q . && git checkout -q -b main
g() { git -c user.name=kgate-test -c user.email=test@kgate.invalid -c commit.gpgsign=false "$@" >/dev/null; }
g add -A && g commit -q -m "kgate init"
AL="$SRC/.venv/bin/actionlint"
[ -x "$AL" ] || AL="$(command -v actionlint || true)"
if [ -n "$AL" ]; then
  "$AL" >"$T/actionlint.out" 2>&1 || { cat "$T/actionlint.out"; fail "actionlint on the scaffolded workflows"; }
  echo "ok   actionlint on the scaffolded workflows"
fi

# ---- validate: the user's levels and suites, kgate's built-in GPU targets ----
expect_rc 0 validate validate --plan
grep -q "on cpu (host backend): 2 problems" "$T/validate.out" ||
  { cat "$T/validate.out"; fail "validate --plan: the smoke suite does not plan on the built-in cpu target"; }
grep -q "suite nightly: not planned here: level 'kernelbench'.*KERNELBENCH_ROOT" "$T/validate.out" ||
  { cat "$T/validate.out"; fail "validate --plan: the nightly does not say it needs KERNELBENCH_ROOT"; }

# ---- nightly shape: two shards of one run, merged ----
for s in 1 2; do
  expect_rc 0 "shard$s" run suites/smoke.yaml --out "$T/shard$s" --shard "$s/2" --run-id user-e2e --seed 5 --max-experiments 1
done
# A shard of another run: shard 2's records under another run id.
cp -r "$T/shard2" "$T/other"
python3 - "$T/other" <<'PY' || fail "setup: another run's shard"
import glob, json, sys
for f in [sys.argv[1] + "/run.json"] + glob.glob(sys.argv[1] + "/results/*.json"):
    j = json.load(open(f))
    j["run_id"] = "another-run"
    json.dump(j, open(f, "w"))
PY
expect_rc 0 merge merge "$T/shard1" "$T/shard2" --out "$T/merged"
# An --out that names a file (or runs through one) is a usage error that says so.
: >"$T/a-file"
expect_rc 2 merge_out_file merge "$T/shard1" "$T/shard2" --out "$T/a-file"
grep -q "a-file: not a directory (it is a file)" "$T/merge_out_file.out" || fail "merge --out FILE does not say why"
expect_rc 2 run_out_below_file run suites/smoke.yaml --out "$T/a-file/out"
grep -q "a-file is a file); --out names the output directory" "$T/run_out_below_file.out" || fail "run --out FILE/x does not say why"
expect_rc 2 merge_other merge "$T/shard1" "$T/other" --out "$T/merged-other"
grep -q "merge only the shards of one run" "$T/merge_other.out" || fail "the refused merge does not say why"

# agree DIR RC [PROBLEMS...]: junit.xml, report.json and the exit code say the same; the
# records are the listed problems (level/name), each a JUnit testcase named by its level.
agree() {
  python3 - "$@" <<'PY'
import json, sys, xml.etree.ElementTree as ET
out, rc, want = sys.argv[1], int(sys.argv[2]), sorted(sys.argv[3:])
rep = json.load(open(out + "/report.json"))
cases = list(ET.parse(out + "/junit.xml").getroot().iter("testcase"))
got = sorted(c.get("classname") + "/" + c.get("name") for c in cases)
assert got == want, f"{out}: junit testcases {got}, want {want}"
recs = sorted(p["level"] + "/" + p["problem"] for p in rep["problems"])
assert recs == want, f"{out}: report.json problems {recs}, want {want}"
failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
res = rep["result"]
assert res["pipeline_failed"] == (rc != 0), (out, res, rc)
assert res["exit_code"] == rc, (out, res, rc)
assert bool(failed) == (rc != 0), (out, failed, rc)
print(f"agree {out}: exit {rc}, {len(cases)} testcases, failing {failed}")
PY
}
agree "$T/merged" 0 native/rmsnorm native/softmax || fail "merged reports disagree"
python3 - "$T/merged/report.json" <<'PY' || fail "merged report.json: run"
import json, sys
run = json.load(open(sys.argv[1]))["run"]
assert run["run_id"] == "user-e2e", run["run_id"]
assert run["env"]["gpu_target"] == "cpu", run["env"]  # kgate's built-in target
assert run["planned"] == ["native/rmsnorm", "native/softmax"], run["planned"]
PY
# A shard's output missing from the merge: exit 3, and every report says so -- shard 2's
# problems (named by the plans each shard's run.json carries) are errors "no result: shard
# 2/2 is missing", the JUnit has the shard as an error of its own, run.json is no whole run;
# `kgate report --from` the merged directory tells the same.
expect_rc 3 merge_missing merge "$T/shard1" --out "$T/merged-missing"
grep -q "shard 2/2 is missing" "$T/merge_missing.out" || fail "the merge does not name the missing shard"
expect_rc 3 report_missing report --from "$T/merged-missing" --out "$T/report-missing"
for d in merged-missing report-missing; do
  python3 - "$T/$d" "$T/shard2/run.json" <<'PY' || fail "$d: the reports of a merge without shard 2 disagree"
import json, sys, xml.etree.ElementTree as ET
out, shard2 = sys.argv[1], json.load(open(sys.argv[2]))
missing = sorted(shard2["planned"])
assert missing, shard2
rep = json.load(open(out + "/report.json"))
assert rep["result"]["exit_code"] == 3 and rep["result"]["pipeline_failed"], rep["result"]
errors = sorted(p["level"] + "/" + p["problem"] for p in rep["problems"] if p["failure"] == "error")
assert errors == missing, (errors, missing)
for p in rep["problems"]:
    if p["level"] + "/" + p["problem"] in missing:
        assert p["message"] == "no result: shard 2/2 is missing", p
root = ET.parse(out + "/junit.xml").getroot()
cases = {c.get("classname") + "/" + c.get("name"): c for c in root.iter("testcase")}
erred = sorted(k for k, c in cases.items() if c.find("error") is not None)
assert erred == sorted(missing + ["kgate/shard 2/2"]), erred
assert int(root.get("errors")) == len(erred) and int(root.get("tests")) == len(cases), root.attrib
md = open(out + "/report.md").read()
assert "**Result: FAIL**" in md and "shard 2/2 is missing" in md, md[:600]
run = rep["run"]
assert run["shard"] == {"index": 0, "count": 2} and run["missing_shards"] == [2], run["shard"]
print(f"agree {out}: exit 3, errors {erred}")
PY
done
[ -d "$T/shard1/workspaces" ] && ls -d "$T"/shard*/workspaces/*/.git >/dev/null 2>&1 || fail "no experiment repositories in the shards"

# ---- PR check: wrong math on a branch, then a faster change ----
STARTER=kernels/native/starters/softmax.cpp
grep -q "const float inv = 1.0f / sum;" "$STARTER" || fail "setup: the softmax starter changed; update the sed below"
g checkout -q -b broken
sed -i 's|const float inv = 1.0f / sum;|const float inv = 2.0f / sum;|' "$STARTER"
g commit -q -am "wrong math"
: >"$T/summary.md"
GITHUB_STEP_SUMMARY="$T/summary.md" GITHUB_WORKSPACE="$R" \
  expect_rc 1 check_broken check --base main --suite suites/smoke.yaml --out "$T/check-broken" --seed 3
n=$(grep -c '^::error ' "$T/check_broken.out")
[ "$n" = 1 ] || { cat "$T/check_broken.out"; fail "$n ::error annotations, want 1"; }
grep -q "^::error file=$STARTER,line=[0-9]*,.*title=.*native/softmax" "$T/check_broken.out" ||
  { grep '^::error' "$T/check_broken.out"; fail "the annotation does not name the kernel file"; }
[ "$(grep -c '^# kgate' "$T/summary.md")" = 1 ] || { cat "$T/summary.md"; fail "the step summary was not written once"; }
agree "$T/check-broken" 1 native/softmax || fail "check reports disagree (wrong math)"
grep -q '<failure type="CorrectnessRegression"' "$T/check-broken/junit.xml" || fail "wrong math on a correct base is not a JUnit <failure type=CorrectnessRegression>"

g checkout -q main && g checkout -q -b faster
sed -i 's/^#define ACC 1$/#define ACC 8/' "$STARTER"
git diff --quiet main -- "$STARTER" && fail "setup: the faster change did not apply"
g commit -q -am "faster"
expect_rc 0 check_faster check --base main --suite suites/smoke.yaml --out "$T/check-faster" --seed 3
agree "$T/check-faster" 0 native/softmax || fail "check reports disagree (faster)"
grep -q '^::error' "$T/check_faster.out" && fail "annotations outside GitHub Actions"
echo "PASS: kgate installed, init, run shards + merge, check in a user repository"
