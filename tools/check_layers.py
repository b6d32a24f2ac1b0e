#!/usr/bin/env python3
"""The folder layering of harness/, checked against its declaration in CMakeLists.txt.

CMakeLists.txt declares each folder's library and the folders it may use:
    kgate_layer(FOLDER DEPS...)            a library of its own
    kgate_layer_of(TARGET FOLDER DEPS...)  a folder built into another target (native, cli)
This script reads every #include "X/..." under harness/FOLDER/ (nested folders count as
FOLDER) and fails when
  - a folder includes a folder that is neither declared for it nor reachable through its
    declared folders,
  - a folder with sources has no declaration, or a declaration names an unknown folder,
  - the declarations have a cycle.
It prints the folder graph (what each folder includes) either way.

Usage: tools/check_layers.py [REPO]   (exit 0: layered as declared; 1: violations)
"""
import os
import re
import sys

SKIP = {"include", "python"}  # the kernel ABI header (kgate/...), the Python worker


def declarations(cmake_text):
    text = re.sub(r"#[^\n]*", "", cmake_text)
    decl = {}
    for m in re.finditer(r"\bkgate_layer\(\s*([A-Za-z0-9_]+)([^)]*)\)", text):
        decl[m.group(1)] = m.group(2).split()
    for m in re.finditer(r"\bkgate_layer_of\(\s*[A-Za-z0-9_$-{}]+\s+([A-Za-z0-9_]+)([^)]*)\)", text):
        decl[m.group(1)] = m.group(2).split()
    return decl


def include_graph(harness):
    folders = sorted(d for d in os.listdir(harness)
                     if os.path.isdir(os.path.join(harness, d)) and d not in SKIP)
    graph = {}
    pattern = re.compile(r'^\s*#\s*include\s+"([^/"]+)/')
    for f in folders:
        uses = {}
        for dirpath, _, files in os.walk(os.path.join(harness, f)):
            for name in files:
                if not name.endswith((".h", ".cpp", ".cu", ".cuh", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = pattern.match(line)
                        if m and m.group(1) in folders and m.group(1) != f:
                            uses.setdefault(m.group(1), f"{os.path.relpath(path, harness)}:{lineno}")
        graph[f] = uses
    return folders, graph


def closure(decl, start):
    seen, todo = set(), list(decl.get(start, []))
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(decl.get(d, []))
    return seen


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    harness = os.path.join(repo, "harness")
    with open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8") as fh:
        decl = declarations(fh.read())
    folders, graph = include_graph(harness)
    problems = []
    for f in folders:
        if f not in decl:
            problems.append(f"harness/{f}: no kgate_layer declaration in CMakeLists.txt")
    for f, deps in decl.items():
        for d in deps:
            if d not in folders:
                problems.append(f"CMakeLists.txt: kgate_layer({f} ...) names '{d}', not a folder of harness/")
        if f in closure(decl, f):
            problems.append(f"CMakeLists.txt: the declarations of {f} lead back to it (a cycle)")
    for f in folders:
        allowed = closure(decl, f)
        for used, where in sorted(graph[f].items()):
            if used not in allowed:
                problems.append(f"harness/{where}: {f}/ includes {used}/, which CMakeLists.txt does not "
                                f"declare for {f} (kgate_layer({f} ...))")
    print("folder graph (what each folder includes):")
    for f in folders:
        print(f"  {f}: {' '.join(sorted(graph[f])) or '-'}")
    if problems:
        print(f"\n{len(problems)} layering violation(s):")
        for p in problems:
            print("  " + p)
        return 1
    print("\nlayered as declared: no folder includes above its declaration, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
