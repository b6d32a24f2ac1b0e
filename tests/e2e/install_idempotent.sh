#!/usr/bin/env bash
# scripts/install-deps.sh is idempotent: on a machine that already has everything (the
# first run makes sure of that), a second run installs nothing, says so, and exits 0.
# Needs root or passwordless sudo to install; skipped (exit 77, with a message) otherwise.
# The Python part (a multi-GB torch) is only checked when .venv already has it.
set -uo pipefail

src="${KGATE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
script="$src/scripts/install-deps.sh"
[ -f "$script" ] || { echo "FAIL: $script not found"; exit 1; }

if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
  echo "SKIP: install_idempotent needs root or passwordless sudo"
  exit 77
fi
mode=--apt-only
if [ -x "$src/.venv/bin/python" ] && "$src/.venv/bin/python" -c "import torch, numpy, pytest" 2>/dev/null; then
  mode=""
fi

first=$(bash "$script" $mode 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: first run exited $rc"; echo "$first"; exit 1
fi

second=$(bash "$script" $mode 2>&1)
rc=$?
echo "$second"
if [ $rc -ne 0 ]; then
  echo "FAIL: second run exited $rc"; exit 1
fi
if ! grep -q "Debian packages present" <<<"$second"; then
  echo "FAIL: second run did not report every package present"; exit 1
fi
if grep -q "apt-get install" <<<"$second"; then
  echo "FAIL: second run installed packages"; exit 1
fi
if [ -z "$mode" ] && ! grep -q "python packages present" <<<"$second"; then
  echo "FAIL: second run installed python packages"; exit 1
fi
echo "PASS: install-deps.sh is idempotent"
