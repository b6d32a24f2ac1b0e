"""tools/pair/groupnorm_apply.py, the command agent of the first GPU pair experiment, without
a GPU: what it reads from the captured 37_Matmul_Swish_Sum_GroupNorm wrapper, the two files
it writes into a workspace (the fused apply keeps the call site's launch signature, the
statistics kernel's file does nothing), what it refuses, and the fused kernel itself in
Triton's interpreter against float64 at small sizes."""

import ast
import importlib.util
import json
import os
import subprocess
import sys

from conftest import FIXTURES, REPO
from kgate_worker import inductor

IND = FIXTURES / "inductor"
AGENT = REPO / "tools" / "pair" / "groupnorm_apply.py"
ROOT = str(REPO / "harness" / "python")


def _agent():
    spec = importlib.util.spec_from_file_location("groupnorm_apply", AGENT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _workspace(tmp_path):
    """A compiled-mode workspace of the captured problem: its two kernel files and an
    inventory naming the pair."""
    pw = inductor.parse_wrapper(
        (IND / "37_Matmul_Swish_Sum_GroupNorm.cuda-2.11.0.g0.captured.py.txt").read_text())
    (tmp_path / "kernels").mkdir()
    entries = []
    for k in pw.kernels:
        e = {"name": k.name, "args": [], "launch": {}, "calls": k.calls}
        (tmp_path / "kernels" / f"{k.name}.py").write_text(inductor.kernel_file_text(e, k.source))
        entries.append(e)
    partners = inductor.pair_partners([dict(f, graph=0) for f in pw.flows],
                                      {k.name: k.calls for k in pw.kernels})
    for e in entries:
        if e["name"] in partners:
            e["partners"] = partners[e["name"]]
    (tmp_path / "inventory.json").write_text(json.dumps({"kernels": entries}))
    return pw


def _run(tmp_path, cand):
    env = dict(os.environ, KGATE_CANDIDATE=str(cand))
    return subprocess.run([sys.executable, str(AGENT)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_it_reads_the_group_shape_from_inductors_apply_kernel():
    pw = inductor.parse_wrapper(
        (IND / "37_Matmul_Swish_Sum_GroupNorm.cuda-2.11.0.g0.captured.py.txt").read_text())
    m = _agent()
    assert m.shape_of(pw.kernels[1].source) == {"c": 4096, "g": 64, "eps": 1e-05}
    assert m.shape_of(pw.kernels[0].source) is None   # the statistics kernel is no apply
    soft = inductor.parse_wrapper((IND / "23_Softmax.cuda-2.11.0.g0.captured.py.txt").read_text())
    assert m.shape_of(soft.kernels[0].source) is None


def test_it_writes_the_pair_and_keeps_both_launch_signatures(tmp_path):
    pw = _workspace(tmp_path)
    stats, apply = pw.kernels
    cand = tmp_path / "kernels" / f"{apply.name}.py"
    r = _run(tmp_path, cand)
    assert r.returncode == 0, r.stderr
    assert f"kgate-description: fold {stats.name} into {apply.name}" in r.stdout
    fused = cand.read_text()
    noop = (tmp_path / "kernels" / f"{stats.name}.py").read_text()
    for text, kernel in ((fused, apply), (noop, stats)):
        tree = ast.parse(text)
        assert inductor.parse_kernel_header(text, "f.py") == kernel.name
        assert inductor.template_name(tree) is not None
        launcher = next(n for n in tree.body if isinstance(n, ast.ClassDef))
        run = next(f for f in launcher.body if isinstance(f, ast.FunctionDef) and f.name == "run")
        got = [a.arg for a in run.args.args][1:]
        want = inductor.launch_params(inductor.jit_function(ast.parse(kernel.source)))
        assert got == want, (kernel.name, got, want)
    assert "C=4096, G=64" in fused
    # a second turn: the pair is in place, nothing is changed
    before = (fused, noop)
    r = _run(tmp_path, cand)
    assert "nothing more to fold" in r.stdout
    assert (cand.read_text(), (tmp_path / "kernels" / f"{stats.name}.py").read_text()) == before


def test_it_refuses_a_kernel_that_is_no_group_norm_apply(tmp_path):
    pw = _workspace(tmp_path)
    stats = pw.kernels[0]
    cand = tmp_path / "kernels" / f"{stats.name}.py"
    before = cand.read_text()
    r = _run(tmp_path, cand)
    assert r.returncode == 0 and "nothing changed" in r.stdout, r.stdout + r.stderr
    assert cand.read_text() == before


_INTERP = r'''
import importlib.util, json, os, sys
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, sys.argv[1])
import torch
spec = importlib.util.spec_from_file_location("agent", sys.argv[2])
agent = importlib.util.module_from_spec(spec); spec.loader.exec_module(agent)
out = []
for rows, c, g, gblock in json.loads(sys.argv[3]):
    path = os.path.join(sys.argv[4], f"fused{len(out)}.py")
    open(path, "w").write(agent.fused_text("k", "s", {"c": c, "g": g, "eps": 1e-5}, gblock))
    spec = importlib.util.spec_from_file_location(f"fused{len(out)}", path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    gen = torch.Generator().manual_seed(rows * c)
    x, bias, add, w, b = (torch.randn(*s, generator=gen) for s in ((rows, c), (c,), (c,), (c,), (c,)))
    io = x.clone()
    junk = torch.full((rows * c // g,), float("nan"))   # the statistics it must not read
    m.k.run(io, bias, add, junk, junk, w, b, rows * c)
    t = x.double() + bias.double()
    t = torch.sigmoid(t) * t + add.double()
    tg = t.view(rows, c // g, g)
    y = ((tg - tg.mean(-1, keepdim=True)) / torch.sqrt(tg.var(-1, unbiased=False, keepdim=True) + 1e-5))
    y = y.view(rows, c) * w.double() + b.double()
    out.append({"err": float((io.double() - y).abs().max()), "nan": bool(torch.isnan(io).any())})
print(json.dumps(out))
'''


def test_the_fused_kernel_in_tritons_interpreter(tmp_path):
    # groups a program handles: all of them in one (gblock >= groups), several programs, a
    # partial last block (7 groups of 64 over blocks of 4)
    cases = [(3, 256, 64, 16), (4, 512, 64, 2), (7, 64, 64, 4), (2, 128, 32, 8)]
    r = subprocess.run([sys.executable, "-c", _INTERP, ROOT, str(AGENT), json.dumps(cases),
                        str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    for case, got in zip(cases, json.loads(r.stdout.strip().splitlines()[-1])):
        assert not got["nan"] and got["err"] < 1e-4, (case, got)
