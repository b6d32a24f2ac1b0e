#!/usr/bin/env bash
# Packs a build made on this (Debian 12) machine for the H200 runner (Ubuntu 24.04):
# the binaries plus the shared libraries the runner lacks (libgit2 and its deps,
# tinyxml2, yaml-cpp 0.7), and nothing else: DEST/lib goes on LD_LIBRARY_PATH there, which
# the Python worker inherits, so a Debian copy of a library the runner has would shadow it.
# CUDA and the driver come from the runner itself. DEST/include/kgate carries the headers
# candidates compile against (kernel.h and the starter helpers starter_host.h,
# starter_cuda.cuh: every file of harness/include/kgate), so a bundle holds all a native
# compile needs (point KGATE_INCLUDE_DIR at DEST/include where no source tree is).
# Usage: scripts/gpu-bundle.sh BUILD_DIR DEST_DIR
set -euo pipefail
build="${1:-build}"
dest="${2:-.devcarry}"
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/include"
cp -R "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/harness/include/kgate" "$dest/include/"
bins=()
for f in kgate kgate-native libkgate_native_cuda.so kgate_measure_study tests/kgate_gpu_tests; do
  if [ -f "$build/$f" ]; then
    cp "$build/$f" "$dest/bin/"
    strip --strip-debug "$dest/bin/$(basename "$f")" || true
    bins+=("$dest/bin/$(basename "$f")")
  fi
done
# The libraries the binaries load that the runner lacks (see shared/notes/gpu-runner.md).
keep='^(libgit2|libmbedtls|libmbedx509|libmbedcrypto|libhttp_parser|libssh2|libtinyxml2|libyaml-cpp)\.'
for b in "${bins[@]}"; do
  LD_LIBRARY_PATH="$dest/bin:${LD_LIBRARY_PATH:-}" ldd "$b" 2>/dev/null | awk '/=>/ {print $1, $3}' | while read -r name path; do
    if [[ ! "$name" =~ $keep ]] || [ ! -f "$path" ]; then continue; fi
    cp -L -n "$path" "$dest/lib/$name" 2>/dev/null || true
  done
done
du -sh "$dest"
