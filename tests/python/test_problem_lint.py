"""kgate_worker.problem_lint: the static check `kgate validate` runs on KernelBench problem
files (parsed, never imported)."""

import os
from pathlib import Path

import pytest

from conftest import REPO
from kgate_worker import problem_lint

GOOD = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    return [torch.randn(4)]

def get_init_inputs():
    return []
"""


def lint(tmp_path, text, name="p.py"):
    f = tmp_path / name
    f.write_text(text)
    return problem_lint.check(str(f)), str(f)


def test_a_problem_file_with_its_three_names_passes(tmp_path):
    assert lint(tmp_path, GOOD)[0] == []


def test_names_bound_otherwise_at_the_top_level_count(tmp_path):
    text = ("import torch\nfrom somewhere import Model\nget_inputs = lambda: []\n"
            "try:\n    def get_init_inputs():\n        return []\nexcept Exception:\n    pass\n")
    assert lint(tmp_path, text)[0] == []


def test_a_syntax_error_is_at_its_line_and_column(tmp_path):
    found, f = lint(tmp_path, GOOD.replace("def forward(self, x):", "def forward(self, x)"))
    assert found == [f"{f}:5:25: error: the problem file does not parse: SyntaxError: expected ':'"]


def test_names_only_nested_or_missing_are_named(tmp_path):
    text = GOOD.replace("def get_init_inputs():\n    return []\n", "") \
               .replace("def get_inputs():", "class Holder:\n  def get_inputs():")
    found, f = lint(tmp_path, text)
    assert found == [f"{f}:1:1: error: a KernelBench problem file defines get_inputs(), "
                     "get_init_inputs() at its top level; this one does not"]


def test_a_starting_candidate_needs_model_new(tmp_path):
    f = tmp_path / "s.py"
    f.write_text(GOOD)
    assert problem_lint.check(str(f), starter=True) == [
        f"{f}:1:1: error: a KernelBench starting candidate defines class ModelNew at its top "
        "level; this one does not"]
    f.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    assert problem_lint.check(str(f), starter=True) == []


def test_the_command_line_takes_problems_then_starters(tmp_path, capsys):
    p, s = tmp_path / "p.py", tmp_path / "s.py"
    p.write_text(GOOD)
    s.write_text(GOOD)
    assert problem_lint.main([str(p), "--starters", str(s)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{s}:1:1: error: a KernelBench starting candidate defines class ModelNew at "
                   "its top level; this one does not"]


def test_an_unreadable_file_is_said(tmp_path):
    f = tmp_path / "missing.py"
    assert problem_lint.check(str(f))[0].startswith(f"{f}:1:1: error: cannot read the problem file")


def test_the_repositorys_problem_files_pass():
    files = sorted(str(p) for p in (REPO / "kernelbench").glob("level[123]/[0-9]*.py"))
    starters = sorted(str(p) for p in (REPO / "kernelbench").glob("solutions/*/level*/*.py"))
    assert files and starters
    assert [x for f in files for x in problem_lint.check(f)] == []
    assert [x for f in starters for x in problem_lint.check(f, starter=True)] == []


@pytest.mark.skipif(not os.environ.get("KERNELBENCH_ROOT"), reason="KERNELBENCH_ROOT not set")
def test_every_official_problem_file_passes():
    root = Path(os.environ["KERNELBENCH_ROOT"]) / "KernelBench"
    files = sorted(str(p) for p in root.glob("level[123]/*.py"))
    assert len(files) == 250
    assert [x for f in files for x in problem_lint.check(f)] == []
