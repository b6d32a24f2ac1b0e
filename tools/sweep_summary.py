#!/usr/bin/env python3
"""Summarises a `kgate profile` sweep over KernelBench levels (tools/gpu-session.sh sweep).

Reads DIR/<level>/<problem>.json (the profile's versioned JSON) and .txt (its output, for
the error of a problem that wrote no JSON) and prints, per level: problems profiled, the
outcome the compiled-mode plan gives before any search (no Triton kernels; extern-dominated
or at-roofline, i.e. no kernel's Amdahl bound reaches the keep threshold, because the
kernels are too small a share of the model or already near copy bandwidth; searchable) and every error with
its first line. The plan rule is the one `kgate run` applies (search/suite_run.cpp
plan_kernels): a kernel is searched when its bound is >= the keep threshold.

Usage: sweep_summary.py DIR [--keep 1.01] [--json OUT]
"""
import argparse
import json
import pathlib
import sys


def classify(inv, keep):
    ks = inv.get("kernels", [])
    if not ks:
        return "no-triton", inv.get("no_triton_reason", "")
    profiled = any(k.get("device_us", 0) > 0 for k in ks)
    searched = [k for k in ks if not profiled or k.get("amdahl_bound", 0) <= 0 or k.get("amdahl_bound", 0) >= keep]
    if not searched:
        zero = max(1 / max(1e-9, 1 - k.get("share", 0)) for k in ks)
        kind = "extern-dominated" if zero < keep else "at-roofline"
        return kind, "Triton %.1f%%" % (100 * inv.get("triton_share", 0))
    best = max(k.get("amdahl_bound", 0) for k in searched)
    return "searchable", "%d of %d kernels, best bound %.3fx" % (len(searched), len(ks), best)


def first_error(txt):
    if not txt.exists():
        return "no output"
    lines = [l for l in txt.read_text(errors="replace").splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "Error" in l:
            return l.strip()[:300]
    return (lines[-1] if lines else "empty output")[:300]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--keep", type=float, default=1.01)
    ap.add_argument("--json")
    a = ap.parse_args()
    root = pathlib.Path(a.dir)
    rows = []
    for txt in sorted(root.glob("*/*.txt")):
        level, name = txt.parent.name, txt.stem
        js = txt.with_suffix(".json")
        row = {"level": level, "problem": name}
        if js.exists():
            inv = json.loads(js.read_text())["inventory"]
            row["outcome"], row["detail"] = classify(inv, a.keep)
            row["triton_kernels"] = len(inv.get("kernels", []))
            row["externs"] = len(inv.get("externs", []))
            row["triton_share"] = inv.get("triton_share", 0)
            row["model_device_us"] = inv.get("model_device_us", 0)
        else:
            row["outcome"], row["detail"] = "error", first_error(txt)
        rows.append(row)
    levels = sorted({r["level"] for r in rows})
    kinds = ["searchable", "extern-dominated", "at-roofline", "no-triton", "error"]
    print("| level | profiled | " + " | ".join(kinds) + " |")
    print("|---|--:|" + "--:|" * len(kinds))
    for lv in levels + ["all"]:
        rs = [r for r in rows if lv == "all" or r["level"] == lv]
        print("| %s | %d | " % (lv, len(rs)) + " | ".join(str(sum(r["outcome"] == k for r in rs)) for k in kinds) + " |")
    for r in rows:
        if r["outcome"] in ("error", "no-triton"):
            print("%s/%s: %s: %s" % (r["level"], r["problem"], r["outcome"], r["detail"]))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
