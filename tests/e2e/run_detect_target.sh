#!/usr/bin/env bash
# kgate run without --gpu on a suite with several GPU targets for its backend: the target
# is the one whose match rules accept the device the worker reports at hello. A device
# matching none of them, or two equally, is a usage error (exit 2) naming the targets and
# --gpu, before anything runs.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
R="$T/repo"
cp -r "$KGATE_FIXTURES/repo" "$R"
target() {  # ID NAME-REGEX
  printf 'version: 1\nid: %s\nname: %s\nbackend: host\nmatch: {name: "%s"}\npeak_bandwidth_gbps: 20\n' \
    "$1" "$1" "$2" > "$R/configs/gpus/$1.yaml"
}
target elsewhere '^no such processor$'
target elsewhere2 '^nor this one$'
target anyhost '.*'
suite() {  # ID GPUS
  sed -e "s/^id: .*/id: $1/" -e "s/^gpus: .*/gpus: [$2]/" "$R/suites/tiny.yaml" > "$R/suites/$1.yaml"
}
suite pick 'elsewhere, host'
suite none 'elsewhere, elsewhere2'
suite tie 'host, anyhost'

rc=0
"$KGATE_BIN" run "$R/suites/pick.yaml" --out "$T/pick" --seed 7 --max-experiments 1 > "$T/pick.log" 2>&1 || rc=$?
cat "$T/pick.log"
[ "$rc" = 0 ] || fail "pick: exit $rc"
grep -q "GPU target host: this machine's device (.*) matches it (.*configs/gpus/host.yaml:[0-9:]*), of the suite's elsewhere, host" \
  "$T/pick.log" || fail "pick: the detected target is not logged"
python3 - "$T/pick" <<'PY'
import json, os, sys
recs = [json.load(open(os.path.join(sys.argv[1], "results", f)))
        for f in os.listdir(os.path.join(sys.argv[1], "results"))]
assert [r["env"]["gpu_target"] for r in recs] == ["host"], [r["env"] for r in recs]
PY
check_consistent "$T/pick"

for s in none tie; do
  rc=0
  "$KGATE_BIN" run "$R/suites/$s.yaml" --out "$T/$s" > "$T/$s.log" 2>&1 || rc=$?
  cat "$T/$s.log"
  [ "$rc" = 2 ] || fail "$s: exit $rc, not 2"
  [ ! -e "$T/$s/journal.jsonl" ] || fail "$s: it ran"
done
grep -q "targets several GPUs for backend host (elsewhere, elsewhere2); this machine's device (.*) matches none of them; choose one with --gpu" \
  "$T/none.log" || fail "none: message"
grep -q "targets several GPUs for backend host (anyhost, host); this machine's device (.*) matches several of them equally (anyhost, host); choose one with --gpu" \
  "$T/tie.log" || fail "tie: message"
# A backend none of the suite's targets has: a usage error naming them, not a plan with
# every problem once per target ("appears twice in the plan").
cp "$KGATE_SOURCE_DIR/configs/gpus/h200.yaml" "$KGATE_SOURCE_DIR/configs/gpus/h100-sxm.yaml" "$R/configs/gpus/"
suite cudaonly 'h200, h100-sxm'
sed -i 's/^backend: .*/backend: cuda/' "$R/suites/cudaonly.yaml"
rc=0
"$KGATE_BIN" run "$R/suites/cudaonly.yaml" --backend host --out "$T/cudaonly" > "$T/cudaonly.log" 2>&1 || rc=$?
cat "$T/cudaonly.log"
[ "$rc" = 2 ] || fail "cudaonly: exit $rc, not 2"
grep -q "suite 'cudaonly' has no GPU target for backend host (its targets: h100-sxm (cuda), h200 (cuda))" \
  "$T/cudaonly.log" || fail "cudaonly: message"
! grep -q "appears twice" "$T/cudaonly.log" || fail "cudaonly: the plan doubled its problems"
# --gpu still decides without asking the device.
rc=0; "$KGATE_BIN" run "$R/suites/none.yaml" --gpu elsewhere --out "$T/given" --seed 7 --max-experiments 1 \
  > "$T/given.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$T/given.log"; fail "--gpu elsewhere: exit $rc"; }
! grep -q "this machine's device" "$T/given.log" || fail "--gpu given, yet the device was asked"
echo "PASS: kgate run picks the GPU target the device matches"
