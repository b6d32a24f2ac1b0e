#!/usr/bin/env bash
# Runs the Python worker's pytest suite with the Python kgate uses (see
# tests/e2e/torch_lib.sh.inc for how it is chosen and when a missing torch skips).
set -u
SRC="${KGATE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
source "$SRC/tests/e2e/torch_lib.sh.inc"
cd "$SRC"
if ! "$PY" -c "import pytest" >/dev/null 2>&1; then
  echo "FAIL: $PY has torch but no pytest (run scripts/install-deps.sh)"
  exit 1
fi
exec "$PY" -m pytest -q -p no:cacheprovider tests/python
