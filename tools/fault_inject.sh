#!/usr/bin/env bash
# The full fault-injection run (tests/e2e/fault_injection.sh with KGATE_FAULT_FULL=1) on
# the demo suite with a built tree: kill -9 of kgate and of its worker at every phase,
# the corrupt-state cases, concurrent runs, a full disk. CI runs the short form as
# e2e.fault_injection; docs/runner.md ("Durability") records this one's numbers.
#   tools/fault_inject.sh [BUILD_DIR]        (default: build)
# KGATE_FAULT_FULL=0 runs the short form instead.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
[ -x "$build/kgate" ] && [ -x "$build/kgate-native" ] || { echo "no kgate and kgate-native in $build: build first" >&2; exit 2; }
export KGATE_BIN="$build/kgate" KGATE_NATIVE_BIN="$build/kgate-native" KGATE_SOURCE_DIR="$src"
export KGATE_FAULT_FULL="${KGATE_FAULT_FULL:-1}"
start=$(date +%s)
rc=0
bash "$src/tests/e2e/fault_injection.sh" || rc=$?
echo "($(($(date +%s) - start)) s)"
exit "$rc"
