#!/usr/bin/env bash
# Runs one of the recorded GPU session plans (tools/gpu-plans/NAME.env) on the device, with
# VAR=value overrides: bash tools/gpu-plan.sh dispatch DISPATCH_SHARD=6/8
# Carry .devcarry (scripts/gpu-bundle.sh build .devcarry) and .kb (the official KernelBench).
set -euo pipefail
cd "$(dirname "$0")/.."
plan="tools/gpu-plans/${1:?usage: tools/gpu-plan.sh PLAN [VAR=value ...]}.env"
if [ ! -f "$plan" ]; then
  have=(tools/gpu-plans/*.env)
  have=("${have[@]##*/}")
  echo "no plan $plan (have: ${have[*]%.env})" >&2
  exit 2
fi
shift
set -a
# shellcheck disable=SC1090
. "$plan"
for kv in "$@"; do export "${kv?}"; done
set +a
python3 -c "import yaml, pytest" 2>/dev/null || pip install -q pyyaml pytest
# shellcheck disable=SC2086
exec bash tools/gpu-session.sh $STEPS
