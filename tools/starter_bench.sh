#!/usr/bin/env bash
# Measures the tuning gap of the demo host starters (defaults vs knobs) at their
# host_bench shapes, pinned to one core. Run from the repository root.
set -euo pipefail
out=${1:-$(mktemp -d)}
mkdir -p "$out"
g++ -O2 -std=c++20 -Iharness -Iharness/include tools/starter_bench.cpp harness/ops/*.cpp -ldl -o "$out/starter_bench"
v() {  # v OP NAME FLAGS...
  local op=$1 name=$2; shift 2
  g++ -O3 -march=native -shared -fPIC -Iharness/include "$@" kernelbench/native/starters/$op.cpp -o "$out/${op}_$name.so"
}
v softmax default; v softmax store -DSTORE_EXP=1; v softmax fexp -DFAST_EXP=1; v softmax cvt -DVEC_CVT=1
v softmax best -DSTORE_EXP=1 -DACC=8 -DFAST_EXP=1 -DVEC_CVT=1
v rmsnorm default; v rmsnorm acc8 -DACC=8; v rmsnorm cvt -DVEC_CVT=1; v rmsnorm best -DACC=16 -DRECIP=1 -DVEC_CVT=1
v bias_gelu default; v bias_gelu m2 -DMATH=2; v bias_gelu cvt -DVEC_CVT=1; v bias_gelu best -DMATH=2 -DVEC_CVT=1
pin=""; command -v taskset >/dev/null && pin="taskset -c 1"
cd "$out"
$pin ./starter_bench softmax f16 R=256 C=2048 -- ./softmax_{default,store,fexp,cvt,best}.so
$pin ./starter_bench rmsnorm f16 R=512 C=2048 -- ./rmsnorm_{default,acc8,cvt,best}.so
$pin ./starter_bench bias_gelu f16 R=128 C=2048 -- ./bias_gelu_{default,m2,cvt,best}.so
