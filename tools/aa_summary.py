#!/usr/bin/env python3
"""Summary of A/A runs (`agent: reference`, suites/kernelbench-official-aa.yaml) over one or
more `kgate run` output directories (shards of one sweep): per problem the outcome, the
speedup of the reference against itself with its interval, the wall time and the reason;
per level the counts by outcome; every problem that is not `matched` listed; and, where
the run was traced (KGATE_WORKER_TRACE=DIR/trace.jsonl), where the time went by worker
request kind.

Usage: tools/aa_summary.py RUN_DIR... [--json F] [--expect N]
  --expect N: the number of problems the sweep planned (a shortfall is reported and makes
  the exit status 1, as does any problem not `matched`)."""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import statistics
import sys


def records(run_dirs):
    """The result records; for a run stopped before it wrote some (a time limit around
    `kgate run`), each problem's journaled baseline experiment stands in -- in A/A mode
    that is the whole verdict -- as outcome `baseline-only` (passed) or `error`."""
    out = []
    for d in run_dirs:
        seen = set()
        for f in sorted(glob.glob(os.path.join(d, "results", "**", "*.json"), recursive=True)):
            try:
                with open(f, encoding="utf-8") as fh:
                    r = json.load(fh)
            except (OSError, ValueError) as e:
                out.append({"level": "?", "problem": f, "outcome": "unreadable", "reason": str(e)})
                continue
            seen.add(r.get("problem"))
            out.append(r)
        for e in jsonl(os.path.join(d, "journal.jsonl")):
            if (e.get("event") != "experiment" or e.get("verdict") != "baseline" or
                    e.get("problem") in seen):
                continue
            seen.add(e.get("problem"))
            out.append({"level": "(journal)", "problem": e.get("problem"),
                        "outcome": "baseline-only" if e.get("passed") else "error",
                        "speedup": e.get("speedup"), "speedup_lo": e.get("speedup_lo"),
                        "speedup_hi": e.get("speedup_hi"), "wall_s": e.get("wall_s"),
                        "reason": e.get("reason") or "the run stopped before its record"})
    return out


def jsonl(path):
    """The JSON objects of a JSON-lines file, a torn line (a killed writer) skipped; none
    when the file is absent."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


def traces(run_dirs):
    return [t for d in run_dirs for t in jsonl(os.path.join(d, "trace.jsonl"))]


def oracle_anchors(tr):
    """Per problem, from the traced checks of compiled mode: the largest ratio of
    torch.compile's own error to the reference's over its cases and outputs, with the two
    errors; (problem, ratio, compiled, reference) rows, highest ratio first."""
    worst = {}
    for t in tr:
        for out in t.get("errors") or []:
            if len(out) < 3 or out[1] is None or out[2] is None:
                continue
            ref, comp = float(out[1]), float(out[2])
            ratio = comp / ref if ref > 0 else (1.0 if comp == 0 else float("inf"))
            p = t.get("problem") or "?"
            if p not in worst or ratio > worst[p][0]:
                worst[p] = (ratio, comp, ref)
    return sorted(((p,) + v for p, v in worst.items()), key=lambda r: -r[1])


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))] if xs else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--json")
    ap.add_argument("--expect", type=int, default=0)
    a = ap.parse_args(argv)

    recs = records(a.runs)
    by_level = collections.defaultdict(collections.Counter)
    walls = collections.defaultdict(list)
    odd = []
    for r in recs:
        lv = r.get("level", "?")
        by_level[lv][r.get("outcome", "?")] += 1
        if isinstance(r.get("wall_s"), (int, float)):
            walls[lv].append(r["wall_s"])
        line = "%s/%s %s %.3fx [%.3f, %.3f] %.1f s" % (
            lv, r.get("problem"), r.get("outcome"), r.get("speedup") or 0,
            r.get("speedup_lo") or 0, r.get("speedup_hi") or 0, r.get("wall_s") or 0)
        print(line + "  " + (r.get("reason") or "")[:160])
        if r.get("outcome") not in ("matched", "baseline-only"):
            odd.append((lv, r.get("problem"), r.get("outcome"), r.get("reason") or ""))

    print("\nlevel     problems  outcomes                      wall per problem (mean / p90 / max)")
    total = 0
    for lv in sorted(by_level):
        n = sum(by_level[lv].values())
        total += n
        w = walls[lv]
        print("%-9s %8d  %-29s %.1f / %.1f / %.1f s" % (
            lv, n, ", ".join("%s %d" % kv for kv in sorted(by_level[lv].items())),
            statistics.mean(w) if w else 0, pct(w, 0.9), max(w) if w else 0))
    all_w = [x for w in walls.values() for x in w]
    print("all       %8d  wall sum %.0f s" % (total, sum(all_w)))
    if odd:
        print("\nnot matched:")
        for lv, p, o, why in odd:
            print("  %s/%s %s: %s" % (lv, p, o, why[:400]))

    tr = traces(a.runs)
    by_op = collections.defaultdict(list)
    per_problem = collections.defaultdict(lambda: collections.defaultdict(float))
    # a worker's start (hello) precedes its first load: it is charged to that problem
    pid_problem = {}
    for t in tr:
        if t.get("problem"):
            pid_problem.setdefault(t.get("pid"), t["problem"])
    load_phases = collections.defaultdict(list)
    for t in tr:
        by_op[t.get("op", "?")].append(float(t.get("s", 0)))
        where = t.get("problem") or pid_problem.get(t.get("pid"), "")
        per_problem[where][t.get("op", "?")] += float(t.get("s", 0))
        for name, s in (t.get("phases") or {}).items():
            load_phases[name].append(float(s))
    if tr:
        print("\nworker time by request (%d requests):" % len(tr))
        for op, xs in sorted(by_op.items(), key=lambda kv: -sum(kv[1])):
            print("  %-14s n=%4d  total %7.1f s  median %6.2f s  p90 %6.2f s  max %6.2f s" % (
                op, len(xs), sum(xs), statistics.median(xs), pct(xs, 0.9), max(xs)))
        if load_phases:
            print("load_problem by step:")
            for name, xs in sorted(load_phases.items(), key=lambda kv: -sum(kv[1])):
                print("  %-14s n=%4d  total %7.1f s  median %6.2f s  p90 %6.2f s  max %6.2f s" % (
                    name, len(xs), sum(xs), statistics.median(xs), pct(xs, 0.9), max(xs)))
        anchors = oracle_anchors(tr)
        if anchors:
            print("oracle anchors (compiled mode), torch.compile's error / the reference's, "
                  "per problem (worst case):")
            for p, ratio, comp, ref in anchors:
                print("  %-60s %8.3g  (torch.compile %.3g, reference %.3g)" % (
                    os.path.basename(p) or "?", ratio, comp, ref))
        slow = sorted(per_problem.items(), key=lambda kv: -sum(kv[1].values()))[:10]
        print("slowest problems in the worker:")
        for p, ops in slow:
            print("  %-60s %6.1f s  (%s)" % (os.path.basename(p) or "?", sum(ops.values()),
                  ", ".join("%s %.1f" % kv for kv in sorted(ops.items(), key=lambda kv: -kv[1])[:4])))

    missing = max(0, a.expect - total) if a.expect else 0
    if missing:
        print("\n%d planned problem(s) have no result" % missing)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump({"levels": {lv: dict(c) for lv, c in by_level.items()},
                       "not_matched": [dict(zip(("level", "problem", "outcome", "reason"), o))
                                       for o in odd],
                       "missing": missing,
                       "worker_s_by_op": {op: sum(xs) for op, xs in by_op.items()},
                       "load_s_by_step": {k: sum(xs) for k, xs in load_phases.items()},
                       "wall_s": {lv: w for lv, w in walls.items()}}, fh, indent=1)
    return 1 if odd or missing else 0


if __name__ == "__main__":
    sys.exit(main())
