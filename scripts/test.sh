#!/usr/bin/env bash
# Builds kgate and runs every test that needs no GPU (unit, end-to-end on the host
# backend, worker tests). GPU tests: `ctest --preset gpu` on a GPU runner.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${KGATE_CMAKE_PRESET:-default}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -j2 --timeout 600
