#!/usr/bin/env bash
# The worker sandbox against the red-team candidates of tests/redteam/sandbox/ (host
# backend, the real binaries). Each candidate is a correct softmax plus one attempt to get
# out: write the problem file or the run's state, reach the network, read a key from the
# environment, kill kgate, leave a process behind, exhaust memory. Where the wall holds,
# the attempt fails and the candidate is judged on its honest output, or is rejected
# naming what it did; with KGATE_SANDBOX=off the same candidate gets through (its output
# is then scaled, or kgate dies), which shows each case can fail.
# A wall the kernel cannot build here is skipped with the reason `kgate doctor` prints.
set -u
KGATE="${KGATE_BIN:?KGATE_BIN not set}"
SRC="${KGATE_SOURCE_DIR:?KGATE_SOURCE_DIR not set}"
RT="$SRC/tests/redteam/sandbox"
FX="$SRC/tests/fixtures/search/repo"
TMP="$(mktemp -d)"
cleanup() {
  [ -n "${LISTENER:-}" ] && kill "$LISTENER" 2>/dev/null
  [ -n "${KGATE_KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export XDG_CACHE_HOME="$TMP/cache"
unset KGATE_SANDBOX KGATE_RUN_ID GITHUB_STEP_SUMMARY
fails=0
fail() { echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -25; fails=$((fails + 1)); }
ok() { echo "ok   $1"; }

mkdir -p "$TMP/p/starters"
cp "$FX/native/tiny_softmax.yaml" "$TMP/p/"
cp "$FX/native/starters/repeat_softmax.cpp" "$TMP/p/starters/"
PROBLEM="$TMP/p/tiny_softmax.yaml"

# mk CASE KEY=VALUE...: the candidate with @BODY@ and the given placeholders filled in.
mk() {
  local name="$1" out="$TMP/$1.cpp"
  shift
  sed "s|@BODY@|$RT/softmax_body.inc|" "$RT/$name.cpp" >"$out"
  for kv in "$@"; do sed -i "s|@${kv%%=*}@|${kv#*=}|g" "$out"; done
  echo "$out"
}
# bench NAME CANDIDATE [ENV...]: kgate bench; sets RC, output in $TMP/NAME.out.
bench() {
  local name="$1" cand="$2"
  shift 2
  env "$@" "$KGATE" bench --problem "$PROBLEM" --candidate "$cand" --min-time 0.05 --max-time 0.2 --seed 7 \
    >"$TMP/$name.out" 2>&1
  RC=$?
}

# What the sandbox holds on this machine: kgate logs it as a worker starts.
bench probe "$TMP/p/starters/repeat_softmax.cpp"
SANDBOX="$(grep -m1 'sandbox:' "$TMP/probe.out" || true)"
echo "${SANDBOX:-sandbox: (no sandbox line in the log of kgate bench)}"
[ "$RC" = 0 ] || fail "the honest starter does not pass in the sandbox (exit $RC)" "$TMP/probe.out"
has() { printf '%s' "$SANDBOX" | grep -q "$1"; }

# ---- files: the problem YAML ----
if has "writable only beneath"; then
  c="$(mk write_problem TARGET="$PROBLEM")"
  before="$(sha256sum <"$PROBLEM")"
  bench write_problem "$c"
  if [ "$RC" = 0 ] && [ "$(sha256sum <"$PROBLEM")" = "$before" ]; then ok "files: the problem file stays unchanged"
  else fail "files: exit $RC, problem changed: $([ "$(sha256sum <"$PROBLEM")" = "$before" ] && echo no || echo yes)" "$TMP/write_problem.out"; fi
  bench write_problem_off "$c" KGATE_SANDBOX=off
  if [ "$RC" = 1 ] && grep -q "rewritten by the candidate" "$PROBLEM"; then ok "files (control, sandbox off): the write gets through"
  else fail "files control: exit $RC" "$TMP/write_problem_off.out"; fi
  cp "$FX/native/tiny_softmax.yaml" "$PROBLEM"
else
  echo "skip files: $SANDBOX"
fi

# ---- files: OUT/state during kgate run ----
if has "writable only beneath"; then
  for mode in on off; do
    R="$TMP/run-$mode"
    mkdir -p "$R/configs/gpus" "$R/configs/levels" "$R/native/starters" "$R/suites"
    cp "$FX/configs/gpus/host.yaml" "$R/configs/gpus/"
    cp "$FX/configs/levels/tiny.yaml" "$R/configs/levels/"
    cp "$FX/native/tiny_softmax.yaml" "$R/native/"
    sed -i 's|starters/repeat_softmax.cpp|starters/write_problem.cpp|' "$R/native/tiny_softmax.yaml"
    OUT="$R/out"
    STATE="$OUT/state/tiny_softmax/starter/write_problem.cpp"
    cp "$(mk write_problem TARGET="$STATE")" "$R/native/starters/write_problem.cpp"
    cat >"$R/suites/rt.yaml" <<'EOF'
version: 1
id: rt
title: sandbox red team (the state copy)
levels: [tiny]
gpus: [host]
backend: host
budget: {max_experiments: 2}
gates: {seeds: 2}
measurement: {min_time_s: 0.05, max_time_s: 0.2, min_samples: 8, target_rse: 0.05, flush_l2: false}
EOF
    if [ "$mode" = on ]; then env "$KGATE" run "$R/suites/rt.yaml" --out "$OUT" >"$TMP/state-$mode.out" 2>&1
    else env KGATE_SANDBOX=off "$KGATE" run "$R/suites/rt.yaml" --out "$OUT" >"$TMP/state-$mode.out" 2>&1; fi
    RC=$?
    if [ "$mode" = on ]; then
      if [ -f "$STATE" ] && cmp -s "$STATE" "$R/native/starters/write_problem.cpp" && [ "$RC" = 0 ]; then
        ok "files: OUT/state stays byte-identical to the starter through kgate run"
      else fail "files: state copy changed or run failed (exit $RC)" "$TMP/state-$mode.out"; fi
    else
      if grep -q "rewritten by the candidate" "$STATE" 2>/dev/null; then ok "files (control, sandbox off): the state copy is written"
      else fail "files control: the state copy was not written (exit $RC)" "$TMP/state-$mode.out"; fi
    fi
  done
fi

# ---- files: the compile cache ----
# The baseline is compiled and loaded first, its object published to the shared cache;
# from that load on the worker's writes are narrowed, so the candidate (compiled after it,
# into the worker's own directory) cannot plant an object there for a later worker.
if has "writable only beneath"; then
  CACHE="$XDG_CACHE_HOME/kgate/host"
  c="$(mk write_problem TARGET="$CACHE/planted-by-candidate.so")"
  bench plant_cache "$c"
  if [ "$RC" = 0 ] && [ ! -e "$CACHE/planted-by-candidate.so" ] && ls "$CACHE"/*.so >/dev/null 2>&1; then
    ok "files: nothing planted in the compile cache, which still holds the baseline's object"
  else fail "files: compile cache: exit $RC, planted: $([ -e "$CACHE/planted-by-candidate.so" ] && echo yes || echo no)" "$TMP/plant_cache.out"; fi
  # A second bench of the same pair: the baseline's object is found in the shared cache
  # (the seal keeps the cache readable), the candidate compiles again in its own worker.
  # The baseline compiles before the seal, so a miss would republish its object: the
  # shared objects, names and times, stay as they were only when it was found.
  objects() { stat -c '%n %Y.%y' "$CACHE"/*.so 2>/dev/null; }
  before="$(objects)"
  bench plant_cache_again "$c"
  if [ "$RC" = 0 ] && [ ! -e "$CACHE/planted-by-candidate.so" ] && [ -n "$before" ] && [ "$(objects)" = "$before" ]; then
    ok "files: a second run finds the baseline's object in the cache and plants nothing"
  else fail "files: compile cache (second run): exit $RC, objects $([ "$(objects)" = "$before" ] && echo unchanged || echo changed)" "$TMP/plant_cache_again.out"; fi
  bench plant_cache_off "$c" KGATE_SANDBOX=off
  if [ "$RC" = 1 ] && [ -e "$CACHE/planted-by-candidate.so" ]; then ok "files (control, sandbox off): the object is planted"
  else fail "files control: compile cache: exit $RC" "$TMP/plant_cache_off.out"; fi
  rm -f "$CACHE/planted-by-candidate.so"
else
  echo "skip compile cache: $SANDBOX"
fi

# ---- network ----
if has "network: none" || has "network: no TCP"; then
  PORTFILE="$TMP/port" HITS="$TMP/hits"
  python3 - "$PORTFILE" "$HITS" <<'EOF' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("hit\n"); c.close()
EOF
  LISTENER=$!
  for _ in $(seq 100); do [ -f "$PORTFILE" ] && break; sleep 0.05; done
  c="$(mk network PORT="$(cat "$PORTFILE")")"
  bench network "$c"
  if [ "$RC" = 0 ] && [ ! -s "$HITS" ]; then ok "network: no connection from the worker"
  else fail "network: exit $RC, connections: $(wc -l <"$HITS" 2>/dev/null || echo 0)" "$TMP/network.out"; fi
  bench network_off "$c" KGATE_SANDBOX=off
  # The connect completes in the kernel's backlog before the listener's accept has written
  # its line (CI once read the file first): wait for it a little.
  for _ in $(seq 40); do [ -s "$HITS" ] && break; sleep 0.05; done
  if [ "$RC" = 1 ] && [ -s "$HITS" ]; then ok "network (control, sandbox off): the connection gets through"
  else fail "network control: exit $RC" "$TMP/network_off.out"; fi
else
  echo "skip network: $SANDBOX"
fi

# ---- environment ----
c="$(mk secret_env)"
bench secret_env "$c" KGATE_REDTEAM_API_KEY=hunter2
if [ "$RC" = 0 ]; then ok "environment: the key is not in the worker's environment"; else fail "environment: exit $RC" "$TMP/secret_env.out"; fi
bench secret_env_off "$c" KGATE_REDTEAM_API_KEY=hunter2 KGATE_SANDBOX=off
if [ "$RC" = 1 ]; then ok "environment (control, sandbox off): the key is visible"; else fail "environment control: exit $RC" "$TMP/secret_env_off.out"; fi

# ---- signals ----
if has "signals: only inside"; then
  c="$(mk kill_kgate)"
  bench kill_kgate "$c"
  if [ "$RC" = 0 ]; then ok "signals: kgate survives a SIGKILL from the candidate"; else fail "signals: exit $RC" "$TMP/kill_kgate.out"; fi
  bench kill_kgate_off "$c" KGATE_SANDBOX=off
  if [ "$RC" = 137 ]; then ok "signals (control, sandbox off): kgate is killed"; else fail "signals control: exit $RC" "$TMP/kill_kgate_off.out"; fi
else
  echo "skip signals: $SANDBOX"
fi

# ---- processes left behind ----
for name in escape_setsid escape_double_fork; do
  bench "$name" "$(mk "$name")"
  pid="$(grep -o 'pid [0-9]*' "$TMP/$name.out" | head -1 | cut -d' ' -f2)"
  if [ "$RC" = 1 ] && grep -q "crash: sandbox: a process left the worker's process group" "$TMP/$name.out" &&
     [ -n "$pid" ] && { [ ! -e "/proc/$pid" ] || grep -q ') Z ' "/proc/$pid/stat" 2>/dev/null; }; then
    ok "processes: $name rejected naming the process (pid $pid), which is gone"
  else fail "processes: $name: exit $RC, pid ${pid:-none} $([ -n "$pid" ] && [ -e "/proc/$pid" ] && echo 'still alive')" "$TMP/$name.out"
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  fi
done

# ---- memory ----
if has "address space"; then
  bench huge_alloc "$(mk huge_alloc)"
  if [ "$RC" = 1 ] && grep -q "correctness" "$TMP/huge_alloc.out" && grep -q "12" "$TMP/huge_alloc.out"; then
    ok "memory: the allocation fails inside the capped worker and the candidate is rejected"
  else fail "memory: exit $RC" "$TMP/huge_alloc.out"; fi
else
  echo "skip memory: no address-space cap in: $SANDBOX"
fi

[ "$fails" = 0 ] || { echo "$fails sandbox red-team case(s) failed"; exit 1; }
echo "all sandbox red-team cases held"
