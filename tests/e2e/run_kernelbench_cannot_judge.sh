#!/usr/bin/env bash
# A KernelBench problem this machine cannot hold (tests/fixtures/kernelbench/too_big.py: 1 TiB
# of input), in a `kgate run` through the real Python worker: refused in seconds, before
# anything is allocated, as "kgate cannot judge this problem on this machine" with the
# sizes; an infrastructure error, not a gate failure, and the log, the exit code (3), the
# result record, the JUnit (an <error>, no <failure>) and report.md say the same.
set -u
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
source "$SRC/tests/e2e/run_lib.sh.inc"
mkdir -p "$T/cfg/configs/levels" "$T/cfg/configs/gpus" "$T/cfg/suites"
cp "$SRC/tests/fixtures/kbcompiled/configs/gpus/host.yaml" "$T/cfg/configs/gpus/"
cat >"$T/cfg/configs/levels/big.yaml" <<YAML
version: 1
id: big
title: A problem no test machine can hold
kind: kernelbench
root: $SRC/tests/fixtures/kernelbench
select: list
problems: [too_big]
baseline: eager
YAML
sed -e 's/^levels: .*/levels: [big]/' -e 's/^id: .*/id: big/' \
  "$SRC/tests/fixtures/kbcompiled/suites/kbaa.yaml" >"$T/cfg/suites/big.yaml"

rc_of "$KGATE_BIN" run "$T/cfg/suites/big.yaml" --out "$T/out" --run-id big-e2e >"$T/run.log" 2>&1
cat "$T/run.log"
[ "$rc" = 3 ] || fail "kgate run exited $rc, want 3 (an infrastructure error)"
WHY="kgate cannot judge this problem on this machine: judging it needs at least 5120.0 GiB"
grep -qF "too_big: $WHY" "$T/run.log" || fail "the log does not say why too_big was not judged"
grep -qF "(exit 3)" "$T/run.log" || fail "the run's last line does not say exit 3"
"$PY" - "$T/out" "$WHY" <<'PYEOF'
import glob, json, os, sys
import xml.etree.ElementTree as ET
out, why = sys.argv[1], sys.argv[2]
recs = [json.load(open(f)) for f in glob.glob(os.path.join(out, "results", "**", "*.json"),
                                               recursive=True)]
assert len(recs) == 1 and recs[0]["problem"] == "too_big", recs
r = recs[0]
assert r["outcome"] == "error" and r["reason"].startswith(why), (r["outcome"], r["reason"])
suite = ET.parse(os.path.join(out, "junit.xml")).getroot()
assert suite.get("errors") == "1" and suite.get("failures") == "0", suite.attrib
case = suite.find(".//testcase[@name='too_big']")
assert case is not None and case.find("failure") is None, ET.tostring(case)
err = case.find("error")
assert err is not None and why in (err.get("message", "") + (err.text or "")), ET.tostring(err)
md = open(os.path.join(out, "report.md")).read()
assert "| big/too_big | error | " + why in md, md
assert json.load(open(os.path.join(out, "report.json")))["result"]["exit_code"] == 3
print("ok: too_big not judged; log, exit code, record, JUnit and report.md agree")
PYEOF
