"""Static check of KernelBench problem files, for `kgate validate` (no torch, no import of
the files): each must parse, and define at its top level `class Model`, `get_inputs` and
`get_init_inputs` (what the worker's load_problem needs); a starting candidate (a level's
`solutions` file, after `--starters`) must parse and define `ModelNew`. One line per
finding,

    FILE:LINE:COL: error: WHAT

and nothing for a file that passes. Exit status 0 whatever it found (the findings are
the answer); 2 on a usage error.

Run as ``python3 -m kgate_worker.problem_lint PROBLEM... [--starters STARTER...]``.
Standard library only.
"""

from __future__ import annotations

import ast
import sys

REQUIRED = (("Model", "class Model"), ("get_inputs", "get_inputs()"),
            ("get_init_inputs", "get_init_inputs()"))
STARTER_REQUIRED = (("ModelNew", "class ModelNew"),)


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names bound at the module's top level: classes, functions, assignments, imports."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            # definitions under a top-level guard (if/try) still bind module names
            inner = ast.Module(body=[n for n in ast.iter_child_nodes(node)
                                     if isinstance(n, ast.stmt)], type_ignores=[])
            names |= _top_level_names(inner)
    return names


def check(path: str, starter: bool = False) -> list[str]:
    """The findings for one problem file (a starting candidate when `starter`), each
    "FILE:LINE:COL: error: WHAT"."""
    what = "starting candidate" if starter else "problem file"
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        return [f"{path}:1:1: error: cannot read the {what}: {e.strerror or e}"]
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        line, col = e.lineno or 1, e.offset or 1
        return [f"{path}:{line}:{col}: error: the {what} does not parse: "
                f"{type(e).__name__}: {e.msg}"]
    except ValueError as e:  # null bytes
        return [f"{path}:1:1: error: the {what} does not parse: {e}"]
    names = _top_level_names(tree)
    missing = [n for name, n in (STARTER_REQUIRED if starter else REQUIRED) if name not in names]
    if missing:
        return [f"{path}:1:1: error: a KernelBench {what} defines {', '.join(missing)} "
                f"at its top level; this one does not"]
    return []


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python3 -m kgate_worker.problem_lint PROBLEM... [--starters STARTER...]",
              file=sys.stderr)
        return 2
    starter = False
    for arg in argv:
        if arg == "--starters":
            starter = True
            continue
        for line in check(arg, starter):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
