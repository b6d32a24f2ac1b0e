#!/usr/bin/env bash
# One run per --out: a second `kgate run` (or `--resume`) into an OUT that a run holds is
# refused with exit 2 and a message naming the holder; the first run finishes untouched;
# once it has ended (or died to kill -9) the directory is free again.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
out="$T/out"
# start_holding SEED LOG: a run into $out in the background ($pid), once it holds the lock
start_holding() {
  "$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" --seed "$1" --max-experiments 4 > "$2" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    [ -s "$out/.kgate.lock" ] && return 0
    sleep 0.1
  done
  fail "the run wrote no lock note"
}
start_holding 5 "$T/log1"
for extra in "" "--resume"; do
  rc=0
  "$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" $extra > "$T/log2" 2>&1 || rc=$?
  cat "$T/log2"
  [ "$rc" = 2 ] || fail "a second run ${extra} into a busy OUT exited $rc, want 2"
  grep -q "is in use by pid $pid on .*: kgate run .*tiny.yaml" "$T/log2" || fail "the refusal does not name the holder"
done
rc=0
wait "$pid" || rc=$?
cat "$T/log1"
[ "$rc" = 0 ] || fail "the first run exited $rc"
check_consistent "$out"
[ ! -s "$out/.kgate.lock" ] || fail "the lock note outlived the run"

# kill -9 frees the directory too (the kernel drops the lock with the process)
start_holding 6 "$T/log3"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
"$KGATE_BIN" run "$SUITES/tiny.yaml" --out "$out" --resume --max-experiments 4 > "$T/log4" 2>&1 \
  || { cat "$T/log4"; fail "resume after kill -9 was refused"; }
check_consistent "$out"
echo "ok"
