#!/usr/bin/env bash
# Packs a build made on this machine for scripts/gpu-check.sh on a GPU machine that lacks
# some of its libraries (e.g. libgit2, tinyxml2): the binaries the GPU tests need, in the
# build tree's layout, plus lib/ with every shared library they load that is not part of
# glibc, the C++ runtime, or the CUDA driver/toolkit (those come from the GPU machine).
#   usage: scripts/gpu-pack.sh [BUILD_DIR=build] [DEST=.devcarry/kgate-prebuilt]
# then on the GPU machine: KGATE_PREBUILT=DEST scripts/gpu-check.sh
set -euo pipefail
BUILD=${1:-build}
DEST=${2:-.devcarry/kgate-prebuilt}
rm -rf "$DEST"
mkdir -p "$DEST/lib" "$DEST/tests"
bins=("$BUILD/tests/kgate_gpu_tests" "$BUILD/libkgate_native_cuda.so" "$BUILD/kgate-native" "$BUILD/kgate")
for b in "${bins[@]}"; do
  [ -e "$b" ] || { echo "gpu-pack: missing $b (build it first)" >&2; exit 1; }
  rel=${b#"$BUILD"/}
  mkdir -p "$DEST/$(dirname "$rel")"
  # Debug info stays behind: it is most of the size and the copy must stay small.
  objcopy --strip-debug "$b" "$DEST/$rel"
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    case "$name" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libresolv.so*|libutil.so*|libanl.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
      libcuda.so*|libnvidia*|libcublas*|libcudart*|libnvrtc*|libnvJitLink*) ;;
      *) [ -e "$DEST/lib/$name" ] || cp -L "$path" "$DEST/lib/$name" ;;
    esac
  done
done
du -sh "$DEST"
