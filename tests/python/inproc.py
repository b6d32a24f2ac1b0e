"""An in-process kgate worker for tests: the op handlers called directly (no pipes, no
process start), answers as the result dict or a raised WorkerError."""

from __future__ import annotations

import os
import re
from pathlib import Path

from conftest import FIXTURES
from kgate_worker.worker import Worker

AA = FIXTURES / "kernelbench" / "aa"
CORPUS = FIXTURES / "corpus"


def kernelbench_root() -> Path | None:
    """The official KernelBench checkout's KernelBench/ directory, from KERNELBENCH_ROOT
    (the repository root or its KernelBench/ directory); None when unset."""
    root = os.environ.get("KERNELBENCH_ROOT")
    if not root:
        return None
    p = Path(root)
    return p / "KernelBench" if (p / "KernelBench" / "level1").is_dir() else p


def as_model_new(problem: Path, dest: Path) -> Path:
    """The problem file with its Model renamed ModelNew: the A/A candidate."""
    text = problem.read_text()
    text = re.sub(r"\bclass Model\b", "class ModelNew", text)
    text = re.sub(r"\bsuper\(Model,", "super(ModelNew,", text)
    dest.write_text(text)
    return dest


class InProc:
    def __init__(self, backend: str = "cpu"):
        self.worker = Worker()
        self.ops = self.worker.handlers()
        self.hello = self("hello", backend=backend)

    def __call__(self, op: str, **params) -> dict:
        return self.ops[op](params)

    def load(self, path, variant: str = "small", **spec) -> dict:
        return self("load_problem", problem={"id": Path(path).stem, "kind": "kernelbench",
                                             "path": str(path), "variant": variant, **spec})

    def compile(self, path, slot: str = "candidate", **params) -> dict:
        return self("compile", slot=slot, source_path=str(path), **params)

    def check(self, slot: str = "candidate", **case) -> dict:
        c = {"case_id": "c", "seed": 7, "dtype": "f32", "dist": "problem", "atol": 1e-5,
             "rtol": 1e-5}
        c.update(case)
        return self("check", slot=slot, cases=[c])["cases"][0]
