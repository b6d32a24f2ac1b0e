#!/usr/bin/env bash
# Fault injection on the demo suite (host backend, no GPU): kill -9 of kgate at points
# across every phase and of its worker, corrupt state on copies of a killed and of a
# finished run, concurrent runs into one --out, and a full disk (a small tmpfs where this
# machine permits one). Reports points tried / survived (identical results to a clean run
# of the same seed) and corrupt cases recovered / clear error / silent.
#
# Short form (CI, e2e.fault_injection, under a minute on 2 cores): a handful of points per
# kind. Full form: KGATE_FAULT_FULL=1 (tools/fault_inject.sh), every point and case; the
# numbers in docs/runner.md ("Durability") are its output. Fails when a point does not
# survive, a corrupt case is silent or unclear, or a run hangs.
source "$(dirname "$0")/run_lib.sh.inc"  # tests/e2e/run_lib.sh.inc
FULL="${KGATE_FAULT_FULL:-0}"
SEED=11
export KGATE_HISTORY=""  # no history database: runs compared with themselves only

# Full form: the demo suite with CI-sized measurements (suites/demo.yaml's levels,
# problems and starters; min_time 0.05 s), through a repository of symlinks into the
# source tree. Short form: the one-problem search fixture (tests/fixtures/search), the
# same code paths at a tenth of the time.
if [ "$FULL" = 1 ]; then
  repo="$T/repo"
  mkdir -p "$repo/suites"
  ln -s "$KGATE_SOURCE_DIR/configs" "$repo/configs"
  ln -s "$KGATE_SOURCE_DIR/kernelbench" "$repo/kernelbench"
  sed -e 's/^id: demo$/id: demo-fi/' -e 's/min_time_s: .*/min_time_s: 0.05/' -e 's/max_time_s: .*/max_time_s: 0.5/' \
    -e 's/seeds: .*/seeds: 2/' "$KGATE_SOURCE_DIR/suites/demo.yaml" > "$repo/suites/demo-fi.yaml"
  SUITE="$repo/suites/demo-fi.yaml" SUITE_ID=demo-fi MAXE="${KGATE_FAULT_MAXE:-2}"
else
  repo="$T/repo"
  mkdir -p "$repo/suites"
  ln -s "$KGATE_FIXTURES/repo/configs" "$repo/configs"
  ln -s "$KGATE_FIXTURES/repo/native" "$repo/native"
  sed -e 's/min_time_s: [0-9.]*/min_time_s: 0.02/' -e 's/max_time_s: [0-9.]*/max_time_s: 0.2/' \
    "$SUITES/tiny.yaml" > "$repo/suites/tiny.yaml"
  SUITE="$repo/suites/tiny.yaml" SUITE_ID=tiny MAXE=2
fi
T0=$(date +%s)
section() { echo "== $* ($(($(date +%s) - T0)) s)"; }
RUN=("$SUITE" --seed "$SEED" --max-experiments "$MAXE")
LIMIT=240  # seconds any single kgate command may take before it counts as a hang

tried=0 survived=0 identical=0 recovered=0 clear=0 silent=0 unclear=0 skipped=0 disk_tried=0 disk_ok=0
problems=()  # one line per failure, printed at the end
note() { problems+=("$*"); echo "  !! $*"; }

# start OUT LOG [ARGS...]: kgate run in the background, $pid
start() {
  local out="$1" log="$2"
  shift 2
  timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}" --out "$out" "$@" >> "$log" 2>&1 &
  pid=$!
}
# the kgate process under the timeout wrapper started by start()
kgate_pid() { pgrep -P "$1" -x kgate | head -1 || true; }
jlines() { [ -f "$1/journal.jsonl" ] && wc -l < "$1/journal.jsonl" || echo 0; }

# verify OUT REF: prints "identical", "consistent: WHY" or "bad: WHY". Consistent: journal,
# results.tsv and git agree (check_consistent), the run finished (run_done), every planned
# problem has exactly one record and it is the journal's last result for it, no temp file
# is left anywhere. Identical: also the same experiments (number, point, verdict), outcomes
# and kept counts as the clean run REF of the same seed.
verify() {
  local out="$1" ref="$2" why
  if ! why=$(check_consistent "$out" 2>&1); then
    echo "bad: journal/TSV/git disagree: $(echo "$why" | tail -1)"
    return
  fi
  python3 - "$out" "$ref" <<'PY' || echo "bad: the checker could not read the state back"
import glob, json, os, sys
out, ref = sys.argv[1], sys.argv[2]
planned = [p.split("/")[-1] for p in json.load(open(os.path.join(out, "run.json")))["planned"]]
def journal(d):
    # As a resume replays it (and check_consistent reads it): an experiment of a problem
    # outside the plan is history only, a repeated experiment number is skipped.
    ev, seen = [], {}
    for l in open(os.path.join(d, "journal.jsonl")).read().splitlines()[1:]:
        e = json.loads(l)
        if e.get("event") == "experiment":
            if e.get("problem") not in planned or e["n"] < seen.get(e["problem"], 0): continue
            seen[e["problem"]] = e["n"] + 1
        ev.append(e)
    done = {}
    for e in ev:
        if e["event"] == "problem_done" and not e.get("infra"):
            done[e["problem"]] = e["result"]
    exps = {}
    for e in ev:
        if e["event"] == "experiment":
            exps.setdefault(e["problem"], []).append((e["n"], json.dumps(e["point"], sort_keys=True), e["verdict"]))
    return ev, done, exps
def bad(msg):
    print("bad: " + msg); sys.exit(0)
ev, done, exps = journal(out)
if not any(e["event"] == "run_done" for e in ev): bad("no run_done")
recs = {}
for f in glob.glob(os.path.join(out, "results", "*.json")):
    r = json.load(open(f))
    recs[r["problem"]] = r
for p in planned:
    if p not in recs: bad(f"{p}: no record")
    if p not in done: bad(f"{p}: no problem_done")
    for k in ("outcome", "experiments", "kept", "best_commit"):
        if recs[p].get(k) != done[p].get(k): bad(f"{p}: record {k}={recs[p].get(k)!r}, journal {done[p].get(k)!r}")
    # ... and the result against the experiments it claims to come from
    es = [e for e in ev if e["event"] == "experiment" and e["problem"] == p]
    if recs[p]["outcome"] != "skipped":
        if not es: bad(f"{p}: a result without a baseline")
        if recs[p]["experiments"] != len(es) - 1: bad(f"{p}: {recs[p]['experiments']} experiments claimed, {len(es) - 1} journaled")
        if recs[p]["kept"] != sum(e["verdict"] == "keep" for e in es): bad(f"{p}: kept count differs from the journal")
        if recs[p]["best_commit"] != es[-1]["best_commit"]: bad(f"{p}: best_commit is not the journal's best")
    if recs[p]["outcome"] == "error": bad(f"{p}: error: {recs[p]['reason'][:120]}")
for root, dirs, files in os.walk(out):
    if ".git" in dirs: dirs.remove(".git")
    for f in files:
        if ".tmp." in f or ".tmp-" in f: bad("temp file left: " + os.path.join(root, f))
_, rdone, rexps = journal(ref)
diff = []
for p in planned:
    if exps.get(p) != rexps.get(p): diff.append(f"{p}: experiments differ")
    for k in ("outcome", "kept", "experiments"):
        if done[p].get(k) != rdone[p].get(k): diff.append(f"{p}: {k} {done[p].get(k)} vs {rdone[p].get(k)}")
print("identical" if not diff else "consistent: " + "; ".join(diff))
PY
}

# point LABEL OUT: account for one kill point of a finished chain
account() {
  local label="$1" res="$2"
  tried=$((tried + 1))
  case "$res" in
    identical) survived=$((survived + 1)); identical=$((identical + 1)) ;;
    consistent*) survived=$((survived + 1)) ;;
    *) note "kill point $label: $res" ;;
  esac
}

# wait_for COND_CMD... : polls until COND succeeds or the run $pid ends; 0 if COND held
wait_for() {
  for _ in $(seq 1 $((LIMIT * 50))); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.02
  done
  return 1
}
lines_at_least() { [ "$(jlines "$out")" -ge "$1" ]; }
log_has() { grep -q -- "$1" "$log" 2>/dev/null; }
journal_has() { grep -q -- "$1" "$out/journal.jsonl" 2>/dev/null; }

# kill_kgate: SIGKILL the kgate of $pid; its workers must not outlive it
kill_kgate() {
  local k w
  k=$(kgate_pid "$pid")
  [ -n "$k" ] || return 1
  w=$(pgrep -P "$k" | tr '\n' ' ' || true)
  kill -9 "$k" 2>/dev/null || return 1
  wait "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    local alive=""
    for x in $w; do kill -0 "$x" 2>/dev/null && alive="$alive $x"; done
    [ -z "$alive" ] && return 0
    sleep 0.05
  done
  note "workers$alive outlived a kill -9 of kgate"
  for x in $alive; do kill -9 "$x" 2>/dev/null || true; done
}

section "clean reference run (seed $SEED, $MAXE experiments per problem)"
ref="$T/ref"
rc_of timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}" --out "$ref" > "$T/ref.log" 2>&1
[ "$rc" = 0 ] || { cat "$T/ref.log"; fail "the clean run exited $rc"; }
ref_lines=$(jlines "$ref")
r=$(verify "$ref" "$ref")
[ "$r" = identical ] || fail "the clean run does not verify: $r"
echo "   $ref_lines journal lines"
# The noise floor of "identical": a second clean run of the same seed. On a CPU the demo's
# keep/revert calls near the threshold flip with load; the tiny fixture's do not.
floor="not measured (short form)"
if [ "$FULL" = 1 ]; then
  rc_of timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}" --out "$T/ref2" > "$T/ref2.log" 2>&1
  floor=$(verify "$T/ref2" "$ref")
  echo "   a second clean run: $floor"
fi
# The corrupt-state cases start from the first kill with at least BASE_AT journal lines
# (full form: late, so that each resume has little left to do).
if [ "$FULL" = 1 ]; then BASE_AT=$((ref_lines - 5)); else BASE_AT=3; fi

# ---- kill -9 of kgate -------------------------------------------------------------------
# A chain is one run killed at each of its triggers in turn, --resume after each kill; a
# trigger is 'lines:N[+S]' (the journal has N lines, then S seconds more), 'start:S'
# (S seconds after the start), 'log:TEXT[+S]' (the log shows TEXT) or 'event:NAME[+S]'.
run_chain() {
  local name="$1"
  shift
  out="$T/chain-$name" log="$T/chain-$name.log"
  local labels=() trig cond delay
  start "$out" "$log"
  for trig in "$@"; do
    delay=0
    case "$trig" in *+*) delay="${trig##*+}"; trig="${trig%+*}" ;; esac
    case "$trig" in
      start:*) cond=(true); delay="${trig#start:}" ;;
      lines:*) cond=(lines_at_least "${trig#lines:}") ;;
      log:*) cond=(log_has "${trig#log:}") ;;
      event:*) cond=(journal_has "\"event\":\"${trig#event:}\"") ;;
    esac
    if ! wait_for "${cond[@]}"; then
      echo "   $name: $trig not reached (the run had ended)"
      continue
    fi
    sleep "$delay"
    if ! kill_kgate; then
      echo "   $name: $trig reached, but the run ended before the kill"
    else
      labels+=("$name/$trig${delay:++$delay}")
      # The corrupt-state cases start from a copy of a run killed mid-search.
      if [ ! -d "$T/base-killed" ] && [ "$(jlines "$out")" -ge "$BASE_AT" ]; then cp -a "$out" "$T/base-killed"; fi
      echo "   $name: killed at $trig+${delay}s (journal: $(jlines "$out") lines)"
      # Killed before the journal had its header: there is nothing to resume, run again.
      if [ -s "$out/journal.jsonl" ]; then start "$out" "$log" --resume; else start "$out" "$log"; fi
    fi
  done
  wait_rc "$pid"
  local res
  if [ "$rc" != 0 ]; then
    res="bad: the last resume exited $rc ($(tail -1 "$log"))"
  else
    res=$(verify "$out" "$ref")
  fi
  echo "   $name: $res"
  for l in "${labels[@]}"; do account "$l" "$res"; done
}

section "kill -9 of kgate"
half=$((ref_lines / 2))
if [ "$FULL" = 1 ]; then
  run_chain a start:0.05 start:0.3 lines:1+0.2 lines:2 lines:2+0.15 lines:3+0.3
  run_chain b lines:4 lines:4+0.1 lines:5+0.25 "log:search plan" lines:6 lines:7+0.2
  run_chain c "lines:$half" "lines:$((half + 1))+0.05" "lines:$((half + 2))+0.3" "log:moving on" "log:moving on+0.1"
  run_chain d "lines:$((ref_lines - 4))" "lines:$((ref_lines - 3))+0.1" "lines:$((ref_lines - 2))" \
    "lines:$((ref_lines - 1))" event:run_done event:run_done+0.02
else
  run_chain a start:0.3 lines:2+0.1 "lines:$half" "lines:$((ref_lines - 1))" event:run_done
fi

# ---- kill -9 of the worker ---------------------------------------------------------------
# From outside (the OOM killer): retried once in a fresh worker, no verdict; the run ends
# with exit 0 and the clean run's results, no resume needed.
worker_kill() {
  local name="$1" trig="$2" delay="${3:-0}"
  out="$T/worker-$name" log="$T/worker-$name.log"
  start "$out" "$log"
  local k w=""
  case "$trig" in
    lines:*) wait_for lines_at_least "${trig#lines:}" || true ;;
    log:*) wait_for log_has "${trig#log:}" || true ;;
  esac
  sleep "$delay"
  k=$(kgate_pid "$pid")
  for _ in $(seq 1 250); do
    [ -n "$k" ] && w=$(pgrep -P "$k" -x kgate-native | head -1 || true)
    [ -n "$w" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  if [ -z "$w" ] || ! kill -9 "$w" 2>/dev/null; then
    echo "   worker $name: no worker alive at $trig (not counted)"
    wait "$pid" 2>/dev/null || true
    return
  fi
  wait_rc "$pid"
  local res
  if [ "$rc" != 0 ]; then res="bad: the run exited $rc after its worker was killed ($(tail -1 "$log"))"
  else res=$(verify "$out" "$ref"); fi
  if grep -h '"reason"' "$out"/results/*.json 2>/dev/null | grep -qi "signal 9\|A/A timing noise"; then
    res="bad: a result charges the kill to a candidate: $(grep -h -o '"reason": *"[^"]*signal 9[^"]*"' "$out"/results/*.json | head -1)"
  fi
  echo "   worker $name (at $trig+${delay}s): $res"
  account "worker/$name" "$res"
}
section "kill -9 of the worker (kgate-native)"
worker_kill search lines:3 0.05
if [ "$FULL" = 1 ]; then
  worker_kill baseline lines:1 0.1
  worker_kill late "lines:$((ref_lines - 3))" 0.05
  worker_kill remeasure "log:moving on" 0
fi
echo "   python worker: not exercised here (the demo suite is native; tests/python covers its deaths)"

# ---- corrupt state -----------------------------------------------------------------------
# Each case: a copy of a base run, one corruption, then `kgate run --resume` (and, where the
# case is about records, `kgate report --from`). Recovered: exit 0 and the run verifies.
# Clear error: exit 2 or 3 and the message names WHAT (the file or ref). Silent: exit 0 with
# a state that does not verify. Unclear: any other exit, or an error that names nothing.
section "corrupt state"
killed="$T/base-killed" finished="$ref"
[ -d "$killed" ] || fail "no kill point left a run to corrupt (base-killed)"
J=journal.jsonl
first_problem() { python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]).read().splitlines()[1:]][0]["problem"])' "$1/$J"; }
last_problem() { python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]).read().splitlines()[1:]][-1]["problem"])' "$1/$J"; }
run_of() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["run_id"])' "$1/$J"; }
p1=$(first_problem "$killed") run_id=$(run_of "$killed") plast=$(last_problem "$killed")
fp=$(first_problem "$finished") fid=$(run_of "$finished")

# corrupt NAME BASE WHAT SETUP [CMD]: WHAT is a grep pattern the error must contain;
# SETUP runs in the copy's directory; CMD is resume (default) or report
corrupt() {
  local name="$1" base="$2" what="$3" setup="$4" cmd="${5:-resume}"
  local c="$T/corrupt-$name"
  rm -rf "$c"
  cp -a "$base" "$c"
  (cd "$c" && eval "$setup") || { note "corrupt $name: the setup failed"; return; }
  local clog="$T/corrupt-$name.log"
  if [ "$cmd" = report ]; then
    rc_of timeout -s KILL "$LIMIT" "$KGATE_BIN" report --from "$c" > "$clog" 2>&1
  else
    rc_of timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}" --out "$c" --resume > "$clog" 2>&1
  fi
  local res kind
  if [ "$rc" = 0 ] && [ "$cmd" = resume ]; then
    res=$(verify "$c" "$ref")
    case "$res" in identical|consistent*) kind=recovered ;; *) kind=silent ;; esac
  elif [ "$rc" = 0 ]; then
    # report --from: exit 0 is right only when the reports carry the trouble
    if grep -q -- "$what" "$clog" "$c/report.md" 2>/dev/null && ! grep -q "Result: PASS" "$c/report.md"; then
      kind=clear res="reports fail and say: $(grep -h -o -- "$what.\{0,60\}" "$clog" | head -1)"
    else
      kind=silent res="exit 0, $(grep -h -o 'Result: [A-Z]*' "$c/report.md" 2>/dev/null | head -1)"
    fi
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    kind=unclear res="hung ($LIMIT s)"
  elif { [ "$rc" = 2 ] || [ "$rc" = 3 ]; } && grep -q -- "$what" "$clog" && ! grep -q "internal error" "$clog"; then
    kind=clear res="exit $rc: $(grep -h -- "$what" "$clog" | head -1 | cut -c1-160)"
  else
    kind=unclear res="exit $rc: $(grep -h 'error' "$clog" | head -1 | cut -c1-160)"
  fi
  echo "   $name: $kind ($res)"
  case "$kind" in
    recovered) recovered=$((recovered + 1)) ;;
    clear) clear=$((clear + 1)) ;;
    silent) silent=$((silent + 1)); note "corrupt $name: silent: $res" ;;
    *) unclear=$((unclear + 1)); note "corrupt $name: unclear: $res" ;;
  esac
}
py() { python3 -c "$@"; }
# journal
corrupt torn-tail "$killed" "$J" "printf '{\"event\":\"experiment\",\"prob' >> $J"
corrupt json-array-line "$killed" "$J:" "echo '[1,2,3]' >> $J"
corrupt forged-done-empty "$killed" "$J:" "echo '{\"event\":\"problem_done\",\"problem\":\"$p1\",\"result\":{}}' >> $J"
corrupt garbage-middle "$killed" "$J:2" "sed -i '2s/.*/not json at all/' $J"
corrupt deleted-journal "$killed" "nothing to resume" "rm $J"
if [ "$FULL" = 1 ]; then
  corrupt forged-done-early "$killed" "$J:" \
    "sed -i '1a {\"event\":\"problem_done\",\"problem\":\"$p1\",\"result\":{\"outcome\":\"improved\"}}' $J"
  corrupt forged-done-late "$killed" "$J" \
    "echo '{\"event\":\"problem_done\",\"problem\":\"$p1\",\"result\":{\"outcome\":\"improved\",\"experiments\":9}}' >> $J"
  corrupt foreign-header "$killed" "$J:1" "sed -i '1s/kgate-journal/other-tool/' $J"
  corrupt future-version "$killed" "journal version" "sed -i '1s/\"v\":1/\"v\":99/' $J"
  corrupt empty-journal "$killed" "nothing to resume" ": > $J"
  corrupt duplicated-experiment "$killed" "$J" "sed -n '3p' $J >> $J"
  corrupt bad-field-type "$killed" "$J:" "echo '{\"event\":\"experiment\",\"problem\":\"$p1\",\"n\":\"zero\"}' >> $J"
  corrupt unknown-problem "$killed" "$J" "echo '{\"event\":\"experiment\",\"problem\":\"not_planned\",\"n\":0}' >> $J"
  corrupt other-suite "$killed" "is of suite" "sed -i '1s/\"suite\":\"$SUITE_ID\"/\"suite\":\"nightly\"/' $J"
  corrupt journal-is-dir "$killed" "$J" "rm $J && mkdir $J"
  corrupt journal-is-fifo "$killed" "$J" "rm $J && mkfifo $J"
  corrupt commit-not-in-repo "$killed" "not in the repository\|no commit" \
    "py 'import json,sys; L=open(\"$J\").read().splitlines(); e=json.loads(L[2]); e[\"commit\"]=\"0\"*40; L[2]=json.dumps(e); open(\"$J\",\"w\").write(\"\\n\".join(L)+\"\\n\")'"
  corrupt infra-error-done "$killed" "$J" \
    "echo '{\"event\":\"problem_done\",\"problem\":\"$p1\",\"infra\":true,\"result\":{\"outcome\":\"error\",\"reason\":\"No space left on device\"}}' >> $J"
fi
# records, TSV, run.json
corrupt broken-foreign-record "$finished" "results/zzz.json" "echo '{not json' > results/zzz.json"
corrupt truncated-record "$finished" "results/" "f=\$(ls results/*.json | head -1); head -c 40 \"\$f\" > \"\$f.x\" && mv \"\$f.x\" \"\$f\""
corrupt report-of-killed-run "$killed" "no result record\|planned but no result\|no result records" "true" report
if [ "$FULL" = 1 ]; then
  corrupt deleted-record "$finished" "results/" "rm \$(ls results/*.json | head -1)"
  corrupt results-is-file "$finished" "results" "rm -rf results && echo x > results"
  corrupt garbage-tsv "$killed" "results.tsv" "echo garbage > results.tsv"
  corrupt deleted-run-json "$killed" "run.json" "rm run.json"
  corrupt garbage-run-json "$finished" "run.json" "echo '[' > run.json"
  corrupt stale-temps "$killed" "tmp" "touch results/x.json.tmp.999999.0 run.json.tmp.999999.1 && mkdir -p cache/host && touch cache/host/k.cpp.tmp-999999-0"
  corrupt stale-lock-note "$killed" ".kgate.lock" "echo 'pid 999999 on elsewhere since then: kgate run x' > .kgate.lock"
  corrupt report-of-finished-run-deleted-record "$finished" "no result record\|planned but no result" "rm \$(ls results/*.json | head -1)" report
  corrupt cache-deleted "$killed" "cache" "rm -rf cache"
  corrupt cache-garbage "$killed" "cache" "for f in \$(find cache -type f | head -20); do echo garbage > \"\$f\"; done"
fi
# git and workspaces
corrupt deleted-ref-finished "$finished" "refs/kgate" "git -C workspaces/$fp update-ref -d refs/kgate/$fid/$fp/0001"
corrupt dirty-worktree "$killed" "workspaces" "echo '// half an edit' >> \$(ls workspaces/$plast/*.cpp | head -1); echo junk > workspaces/$plast/junk.o"
if [ "$FULL" = 1 ]; then
  corrupt dirty-worktree-finished "$finished" "workspaces" "echo '// an edit' >> \$(ls workspaces/$fp/*.cpp | head -1)"
  corrupt deleted-best-tag "$finished" "refs/tags" "git -C workspaces/$fp tag -d kgate/$fid/$fp/best"
  corrupt deleted-branch-finished "$finished" "refs/heads" "git -C workspaces/$fp update-ref -d refs/heads/kgate/$SUITE_ID/$fid/$fp"
  corrupt moved-ref-unfinished "$killed" "refs/kgate" \
    "git -C workspaces/$p1 update-ref refs/kgate/$run_id/$p1/0000 \$(git -C workspaces/$p1 rev-parse -q --verify refs/kgate/$run_id/$p1/0001 || git -C workspaces/$p1 rev-parse HEAD)"
  corrupt deleted-git-finished "$finished" "experiment repository" "rm -rf workspaces/$fp/.git"
  corrupt deleted-git-unfinished "$killed" "workspaces/$p1" "rm -rf workspaces/$p1/.git"
  corrupt deleted-workspace "$killed" "workspaces/$p1" "rm -rf workspaces/$p1"
  corrupt stale-index-lock "$killed" "index.lock" "touch workspaces/$p1/.git/index.lock"
  corrupt deleted-state-best "$killed" "state" "rm -rf state/$p1/best"
  corrupt deleted-state "$killed" "state" "rm -rf state"
fi

# ---- concurrent runs ---------------------------------------------------------------------
section "concurrent runs into one --out"
concurrent() {
  local name="$1" gap="$2" mode="$3"
  local c="$T/conc-$name" l1="$T/conc-$name-1.log" l2="$T/conc-$name-2.log"
  if [ "$mode" = resume ]; then cp -a "$killed" "$c"; extra=(--resume); else extra=(); fi
  timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}" --out "$c" "${extra[@]}" > "$l1" 2>&1 &
  local p1=$!
  sleep "$gap"
  timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}" --out "$c" "${extra[@]}" > "$l2" 2>&1 &
  local p2=$!
  wait_rc "$p1"; local r1=$rc
  wait_rc "$p2"; local r2=$rc
  local res
  if [ "$r1$r2" = 02 ] || [ "$r1$r2" = 20 ]; then
    local loser="$l2"; [ "$r1" = 2 ] && loser="$l1"
    if ! grep -q "is in use by pid" "$loser"; then res="bad: the refused run does not name the holder"
    else res=$(verify "$c" "$ref"); fi
  else
    res="bad: exits $r1 and $r2 (want one 0 and one 2)"
  fi
  echo "   $name ($mode, ${gap}s apart): $res"
  account "concurrent/$name" "$res"
}
concurrent two-resumes 0 resume
if [ "$FULL" = 1 ]; then
  concurrent two-runs 0.3 run
  concurrent same-instant 0 run
fi

# ---- disk full ---------------------------------------------------------------------------
# OUT on a small tmpfs (mount as root, else in a user and mount namespace): filled mid-run
# the run exits 3 naming the disk, leaves no temp file and no torn journal line, and after
# the space is freed --resume finishes with the clean run's results. A tmpfs too small for
# a baseline is exit 3 with the system's words, never "the starter does not compile".
section "disk full"
# Inside a mount namespace (root: unshare -m; else a user namespace, unshare -rm) so the
# tmpfs goes away with it; the outputs are copied out for the checks.
cat > "$T/disk.sh" <<'EOS'
set -u
mnt="$1" size="$2" mode="$3" save="$4"
shift 4
mount -t tmpfs -o "size=$size" tmpfs "$mnt" || exit 77
d="$mnt/out"
if [ "$mode" = fill ]; then
  "$@" --out "$d" > "$save.run.log" 2>&1 &
  p=$!
  for _ in $(seq 1 3000); do
    [ "$(cat "$d/journal.jsonl" 2>/dev/null | wc -l)" -ge 3 ] && break
    kill -0 "$p" 2>/dev/null || break
    sleep 0.02
  done
  dd if=/dev/zero of="$mnt/filler" bs=64k > /dev/null 2>&1
  wait "$p"; echo $? > "$save.rc1"
  tail -c 1 "$d/journal.jsonl" | od -An -c | grep -q '\\n' && echo whole > "$save.journal" || echo torn > "$save.journal"
  find "$d" -path '*/.git' -prune -o \( -name '*.tmp.*' -o -name '*.tmp-*' \) -print > "$save.temps"
  rm -f "$mnt/filler"
  "$@" --out "$d" --resume > "$save.resume.log" 2>&1; echo $? > "$save.rc2"
else
  "$@" --out "$d" > "$save.run.log" 2>&1; echo $? > "$save.rc1"
fi
cp -a "$d" "$save.out" 2>/dev/null
exit 0
EOS
disk_account() {
  disk_tried=$((disk_tried + 1))
  case "$2" in bad*) note "disk $1: $2" ;; *) disk_ok=$((disk_ok + 1)) ;; esac
}
in_tmpfs() {  # in_tmpfs SIZE MODE SAVE: the kgate run of disk.sh on a tmpfs of SIZE
  local mnt="$T/mnt-$2"
  mkdir -p "$mnt"
  if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    unshare -m --propagation private bash "$T/disk.sh" "$mnt" "$@" timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}"
  elif unshare -rm true 2>/dev/null; then
    unshare -rm bash "$T/disk.sh" "$mnt" "$@" timeout -s KILL "$LIMIT" "$KGATE_BIN" run "${RUN[@]}"
  else
    return 77
  fi
}
rc_of in_tmpfs 12m fill "$T/disk-fill"
if [ "$rc" = 77 ]; then
  echo "   skipped: no tmpfs here (not root, no user namespace to mount one in)"
  skipped=$((skipped + 1))
else
  s="$T/disk-fill" r1=$(cat "$T/disk-fill.rc1") r2=$(cat "$T/disk-fill.rc2")
  if [ "$r1" = 0 ]; then res="bad: the run never met the full disk (exit 0; make the tmpfs smaller)"
  elif [ "$r1" != 3 ]; then res="bad: the run on a full disk exited $r1, want 3"
  elif grep "does not compile\|fails the static gate" "$s.run.log" | grep -qv "not charged to"; then res="bad: charged to the starter: $(grep -m1 'does not compile\|fails the static' "$s.run.log")"
  elif ! grep -q "No space left on device\|disk is full" "$s.run.log"; then res="bad: exit 3 without naming the disk: $(grep -m1 error "$s.run.log")"
  elif [ "$(cat "$s.journal")" != whole ]; then res="bad: the journal ends in a torn line"
  elif [ -s "$s.temps" ]; then res="bad: temp files left: $(head -3 "$s.temps" | tr '\n' ' ')"
  elif [ "$r2" != 0 ]; then res="bad: --resume after freeing space exited $r2 ($(grep -m1 error "$s.resume.log"))"
  else res=$(verify "$s.out" "$ref"); fi
  echo "   filled mid-run ($(grep -m1 -o 'No space left on device\|disk is full' "$s.run.log" || true)), freed, resumed: $res"
  disk_account filled "$res"
  rc_of in_tmpfs 96k small "$T/disk-small"
  s="$T/disk-small" r1=$(cat "$T/disk-small.rc1")
  if [ "$r1" != 3 ]; then res="bad: a 96 KB disk gave exit $r1, want 3"
  elif grep "does not compile\|fails the static gate" "$s.run.log" | grep -qv "not charged to"; then res="bad: charged to the starter: $(grep -m1 'does not compile\|fails the static' "$s.run.log")"
  elif ! grep -q "No space left on device\|disk is full" "$s.run.log"; then res="bad: exit 3 without naming the disk: $(grep -m1 error "$s.run.log")"
  else res="clear error"; fi
  echo "   a 96 KB disk: exit $r1, $res: $(grep -m1 -o '[^:]*No space left on device.\{0,40\}' "$s.run.log" || true)"
  disk_account small "$res"
fi

echo
echo "== fault injection ($([ "$FULL" = 1 ] && echo full || echo short) form, $SUITE_ID suite, seed $SEED, $MAXE experiments per problem, $(nproc) cores, $(($(date +%s) - T0)) s)"
echo "kill points: $tried tried, $survived survived: complete and consistent ($identical with results identical to the clean run; two clean runs: ${floor%%:*})"
echo "corrupt state: $((recovered + clear + silent + unclear)) cases: $recovered recovered, $clear clear error, $silent silent, $unclear unclear"
if [ "$skipped" = 0 ]; then echo "disk full: $disk_tried cases, $disk_ok as they should be"
else echo "disk full: skipped (see above)"; fi
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'FAIL: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "ok"
