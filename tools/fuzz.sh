#!/usr/bin/env bash
# The full form of kgate's fuzzing (docs/fuzzing.md): builds the `fuzz` preset (clang,
# libFuzzer, ASan + UBSan; build-fuzz/) and runs the three targets one after the other,
# one process each:
#   fuzz_config    the YAML config loader        (harness/config/loader.h)
#   fuzz_protocol  the worker protocol decoder   (harness/protocol/messages.h)
#   fuzz_journal   the run journal reader        (harness/search/journal.h, as --resume)
#
#   tools/fuzz.sh            1,000,000 executions per target (the recorded full form)
#   tools/fuzz.sh 200000     that many executions per target
#   tools/fuzz.sh 600s       that many seconds per target
#   FUZZ_TARGETS="protocol journal" tools/fuzz.sh 60s    only those
#   FUZZ_MERGE=1 tools/fuzz.sh ...   afterwards, minimise what was found into the committed
#                                    corpus tests/fuzz/corpus/<t>/ (-merge=1)
#
# Each target starts from its committed corpus (copied to build-fuzz/fuzz-corpus/<t>/,
# where new inputs accumulate across runs) with its dictionary tests/fuzz/<t>.dict. A
# crash, a sanitizer report or an unexpected exception stops that target and leaves the
# input in build-fuzz/fuzz-artifacts/<t>/; the script then exits 1. The last lines of each
# target's log (build-fuzz/fuzz-<t>.log) are its numbers: runs, time, cov and ft.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
LIMIT="${1:-1000000}"
TARGETS="${FUZZ_TARGETS:-config protocol journal}"
JOBS="${FUZZ_BUILD_JOBS:-2}"

case "$LIMIT" in
  *s) BOUND=(-max_total_time="${LIMIT%s}") ;;
  *[!0-9]* | "") echo "usage: tools/fuzz.sh [RUNS | SECONDSs]" >&2; exit 2 ;;
  *) BOUND=(-runs="$LIMIT") ;;
esac

cd "$ROOT"
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  cmake --preset fuzz
fi
build_targets=()
for t in $TARGETS; do build_targets+=("fuzz_$t"); done
cmake --build "$BUILD" -j"$JOBS" --target "${build_targets[@]}"

failed=0
for t in $TARGETS; do
  corpus="$BUILD/fuzz-corpus/$t"
  artifacts="$BUILD/fuzz-artifacts/$t"
  log="$BUILD/fuzz-$t.log"
  mkdir -p "$corpus" "$artifacts"
  cp -n "$ROOT/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  dict=()
  [[ -f "$ROOT/tests/fuzz/$t.dict" ]] && dict=(-dict="$ROOT/tests/fuzz/$t.dict")
  echo "== fuzz_$t (${BOUND[*]}) -> $log"
  start=$(date +%s)
  rc=0
  "$BUILD/tests/fuzz/fuzz_$t" -max_len=4096 "${BOUND[@]}" -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || rc=$?
  wall=$(( $(date +%s) - start ))
  last=$(grep -aE '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 || true)
  runs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  echo "   rc=$rc wall=${wall}s executions=${runs:-?} last: ${last:-(none)}"
  if [[ $rc -ne 0 ]]; then
    failed=1
    echo "   FAILED: see $log and $artifacts/" >&2
    grep -aE 'ERROR|SUMMARY|runtime error|terminate called' "$log" | head -5 >&2 || true
  fi
  if [[ "${FUZZ_MERGE:-0}" == 1 ]]; then
    "$BUILD/tests/fuzz/fuzz_$t" -merge=1 -max_len=4096 "$ROOT/tests/fuzz/corpus/$t" "$corpus" \
      >"$BUILD/fuzz-$t-merge.log" 2>&1
    echo "   merged: $(ls "$ROOT/tests/fuzz/corpus/$t" | wc -l) files in tests/fuzz/corpus/$t"
  fi
done
exit $failed
