"""Issue 19: correct candidates the worker must not reject (an A/A sweep over the official
KernelBench found each class). Every behaviour is proven on our own small problems in
tests/fixtures/kernelbench/aa/; with KERNELBENCH_ROOT set, also on the official files."""

from __future__ import annotations

import ast

import pytest

from inproc import AA, InProc, as_model_new, kernelbench_root
from kgate_worker import lint

KB_ROOT = kernelbench_root()
needs_kb = pytest.mark.skipif(KB_ROOT is None, reason="KERNELBENCH_ROOT not set")


def ref_op(path) -> str | None:
    return lint.reference_op(ast.parse(open(path).read()))


@pytest.fixture(scope="module")
def w():
    return InProc()


# ---- 1. the reference-op rule only for a problem that is one op and nothing else -------

@pytest.mark.parametrize("name,op", [
    ("matmul_scaling_residual.py", None), ("convt3d_residual.py", None),
    ("gpt_block.py", None), ("gru_single.py", "gru"), ("matmul_single.py", "matmul"),
    ("conv2d_single.py", "conv2d")])
def test_reference_op_only_for_single_op_problems(name, op):
    assert ref_op(AA / name) == op


@pytest.mark.parametrize("forward", [
    "return torch.relu(x) * 2",            # arithmetic after the op
    "return -torch.relu(x)",
    "return torch.relu(x) if x.numel() else x",
    "y = torch.relu(x)\n        y += 1\n        return y",
    "return self.helper(torch.relu(x))",   # a method of the model
    "return torch.relu(x) > 0",
])
def test_op_plus_anything_is_not_single(forward):
    src = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n"
           "    def helper(self, y):\n        return y\n"
           f"    def forward(self, x):\n        {forward}\n")
    assert lint.reference_op(ast.parse(src)) is None


@pytest.mark.parametrize("forward,op", [
    ("return torch.sum(x, dim=self.dim, keepdim=True)", "sum"),
    ("return torch.matmul(x.view(x.size(0) * 2, -1), x.T)", "matmul"),
    ("out, _ = self.gru(x)\n        return out", "gru"),
    ("return torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)", None),
])
def test_single_op_with_data_movement(forward, op):
    src = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n"
           "    def __init__(self):\n        super().__init__()\n"
           "        self.gru = nn.GRU(4, 4)\n        self.dim = 1\n"
           f"    def forward(self, x):\n        {forward}\n")
    assert lint.reference_op(ast.parse(src)) == op


@pytest.mark.parametrize("name", ["matmul_scaling_residual.py", "convt3d_residual.py",
                                  "gpt_block.py"])
def test_multi_op_problem_accepts_its_reference_as_candidate(w, tmp_path, name):
    r = w.load(AA / name)
    assert r["reference_op"] == "" and r["reference_op_rule"] is True
    c = w.compile(as_model_new(AA / name, tmp_path / name))
    assert c["compiled"] is True, c
    case = w.check(atol=1e-4, rtol=1e-4)
    assert case["return_code"] == 0 and case["deterministic"]
    assert all(o["over_tol"] == 0 for o in case["outputs"]), case


@pytest.mark.parametrize("name,op", [("gru_single.py", "gru"),
                                     ("matmul_single.py", "matmul"),
                                     ("conv2d_single.py", "conv2d")])
def test_single_op_rule_applies_unless_exempt(w, tmp_path, name, op):
    cand = as_model_new(AA / name, tmp_path / name)
    assert w.load(AA / name)["reference_op"] == op
    r = w.compile(cand)
    assert r["compiled"] is False and [f["rule"] for f in r["findings"]] == ["reference-op"]
    # the A/A mode: exempt per compile ...
    r = w.compile(cand, reference_op_rule=False)
    assert r["compiled"] is True and r["rules_exempt"] == ["reference-op"], r
    assert "reference-op rule exempt" in r["log"]
    assert w.check(atol=1e-4, rtol=1e-4)["outputs"][0]["over_tol"] == 0
    # ... or for the whole problem at load_problem
    r = w.load(AA / name, reference_op_rule=False)
    assert r["reference_op"] == op and r["reference_op_rule"] is False
    assert w.compile(cand)["compiled"] is True
    # a compile may still ask for the rule
    assert w.compile(cand, reference_op_rule=True)["compiled"] is False


def test_exemption_keeps_every_other_rule(w, tmp_path):
    cand = as_model_new(AA / "matmul_single.py", tmp_path / "c.py")
    cand.write_text(cand.read_text().replace(
        '        return torch.matmul(A, B)',
        '        try:\n            pass\n        except Exception:\n            pass\n'
        '        return torch.matmul(A, B)'))
    w.load(AA / "matmul_single.py")
    r = w.compile(cand, reference_op_rule=False)
    assert r["compiled"] is False
    assert [f["rule"] for f in r["findings"]] == ["swallow"]


def test_reference_op_rule_must_be_bool(w):
    from kgate_worker.protocol import WorkerError
    w.load(AA / "matmul_single.py")
    with pytest.raises(WorkerError) as e:
        w.compile(AA / "matmul_single.py", reference_op_rule="no")
    assert e.value.kind == "bad_request"


@needs_kb
@pytest.mark.parametrize("rel,op", [
    ("level2/40_Matmul_Scaling_ResidualAdd.py", None),
    ("level2/20_ConvTranspose3d_Sum_ResidualAdd_Multiply_ResidualAdd.py", None),
    ("level3/44_MiniGPTBlock.py", None),
    ("level1/1_Square_matrix_multiplication_.py", "matmul"),
    ("level1/54_conv_standard_3D__square_input__square_kernel.py", "conv3d"),
    ("level3/39_GRU.py", "gru"), ("level3/42_GRUBidirectionalHidden.py", "gru")])
def test_official_reference_ops(rel, op):
    assert ref_op(KB_ROOT / rel) == op
