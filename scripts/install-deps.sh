#!/usr/bin/env bash
# Installs everything kgate needs on a fresh Debian 12 machine (apt + pip).
# Idempotent: a second run installs nothing and exits 0.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev libgit2-dev libtinyxml2-dev libcli11-dev nlohmann-json3-dev
  libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libxml2-utils libcurl4-openssl-dev python3 python3-pip
  chromium  # headless: the HTML report screenshot test (skipped when absent)
)

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

# Python side (the worker and its tests). Only installed when asked: torch is large and
# the native path needs no Python at all.
if [ "${KGATE_WITH_PYTHON:-0}" = "1" ]; then
  py_missing=0
  python3 -c "import pytest, yaml, numpy" 2>/dev/null || py_missing=1
  if [ "$py_missing" -eq 1 ]; then
    python3 -m pip install -q pytest pyyaml numpy
  else
    echo "install-deps: python packages present"
  fi
fi
