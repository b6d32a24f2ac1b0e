#!/usr/bin/env bash
# actionlint on the GitHub Actions templates in ci/ (with the self-hosted runner labels of
# ci/actionlint.yaml; shellcheck on their run: scripts when it is installed). actionlint
# comes from scripts/install-deps.sh (.venv/bin/actionlint) or PATH. Missing, the test is
# skipped (exit 77) with a message, unless KGATE_REQUIRE_TORCH=1 (CI, where
# scripts/install-deps.sh has installed it): then a missing actionlint is a failure.
set -u
SRC="${KGATE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
AL="$SRC/.venv/bin/actionlint"
[ -x "$AL" ] || AL="$(command -v actionlint || true)"
if [ -z "$AL" ]; then
  if [ "${KGATE_REQUIRE_TORCH:-0}" = "1" ]; then
    echo "FAIL: no actionlint (not in $SRC/.venv/bin, not on PATH) and KGATE_REQUIRE_TORCH=1 (run scripts/install-deps.sh)"
    exit 1
  fi
  echo "SKIP: actionlint is not installed (scripts/install-deps.sh puts it into .venv); ci/*.yml not linted"
  exit 77
fi
command -v shellcheck >/dev/null || echo "note: no shellcheck on PATH; run: scripts are not checked"
cd "$SRC"
"$AL" -version | head -1
"$AL" -config-file ci/actionlint.yaml ci/nightly.yml ci/pr.yml ci/weekly.yml || {
  echo "FAIL: actionlint found problems in ci/*.yml"; exit 1; }
# The lint must be able to fail: an unknown runner label and always() on a cancel-prone job.
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/bad.yml" <<'YML'
on: push
jobs:
  j:
    runs-on: [self-hosted, linux, no-such-gpu]
    steps:
      - run: echo "${{ github.event.pull_request.title }}"
YML
if "$AL" -config-file ci/actionlint.yaml "$tmp/bad.yml" >"$tmp/out" 2>&1; then
  cat "$tmp/out"; echo "FAIL: actionlint passed a workflow with an unknown runner label"; exit 1
fi
grep -q "no-such-gpu" "$tmp/out" || { cat "$tmp/out"; echo "FAIL: actionlint did not name the unknown label"; exit 1; }
echo "PASS: actionlint on ci/nightly.yml ci/pr.yml ci/weekly.yml"
