"""The fused comparison kernel (kgate_worker/compare_kernel.py) against the torch form that
defines compare's statistics (stats._fold_torch): the same sums, counts, maxima and first
indices on crafted outputs -- NaN, infinities, the poison, non-finite truths, ties, several
chunks and blocks, float32/float16/bfloat16/float64 outputs, float64 and float32 truths.

On the CPU the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, in a subprocess:
the mode is read when triton is imported); on a CUDA device (KGATE_REQUIRE_GPU=1) the same
cases run compiled, and a GPU-sized output goes through compare end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import WORKER_PATH as HARNESS_PY
from kgate_worker import stats

_CASES = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
from kgate_worker import compare_kernel as ck, stats

dev = sys.argv[2]
ck.BLOCK = int(sys.argv[3])
CHUNK = int(sys.argv[4])
g0 = torch.Generator().manual_seed(3)


def poison(t):
    bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return torch.full(t.shape, -1, dtype=bits).view(t.dtype)


def case(n, gdt, wdt, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, generator=g, dtype=torch.float64) * 3
    got = (w + torch.randn(n, generator=g, dtype=torch.float64) * 1e-3).to(gdt)
    k = max(1, n // 97)
    pick = lambda: torch.randint(0, n, (k,), generator=g)
    got[pick()] = (w[pick()] + 1.0).to(gdt)              # over tolerance
    got[pick()] = float("nan")
    got[pick()] = float("inf")
    got[pick()] = -float("inf")
    i = pick()
    got[i] = poison(got[i])                               # never written
    w[pick()] = float("nan")                              # non-finite truths
    w[pick()] = float("inf")
    j = pick()
    got[j] = w[j].to(gdt)                                 # NaN == NaN, inf == inf where matched
    return got.to(dev), w.to(wdt).to(dev)


out = []
cases = [case(20011, torch.float32, torch.float64, 1),
         case(9000, torch.float16, torch.float64, 2),
         case(7777, torch.bfloat16, torch.float64, 3),
         case(12345, torch.float32, torch.float32, 4),
         case(5000, torch.float64, torch.float64, 5)]
# ties: the same largest error at several places (the first must be named)
w = torch.zeros(10000, dtype=torch.float64)
got = torch.zeros(10000, dtype=torch.float32)
got[[7000, 300, 9000]] = 0.5
cases.append((got.to(dev), w.to(dev)))
# nothing comparable: every truth non-finite
cases.append((torch.ones(3000).to(dev), torch.full((3000,), float("nan"), dtype=torch.float64).to(dev)))
# all equal
v = torch.randn(4099, generator=g0, dtype=torch.float64)
cases.append((v.to(torch.float32).to(dev), v.to(torch.float32).to(torch.float64).to(dev)))
for got, want in cases:
    for tol_abs, rtol in ((1e-2, 1e-2), (0.0, 0.0), (1e-5, 1e-5)):
        fused = ck.reduce_partials(*ck.partials(got, want, tol_abs, rtol, CHUNK))
        ref = stats._fold_torch(got, want, tol_abs, rtol)
        out.append({"fused": fused, "torch": ref})
print(json.dumps(out))
'''


def _run(env: dict, device: str, block: int, chunk: int) -> list:
    r = subprocess.run([sys.executable, "-c", _CASES, str(HARNESS_PY), device, str(block),
                        str(chunk)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _same(pairs: list) -> None:
    assert pairs
    for k, p in enumerate(pairs):
        f, t = p["fused"], p["torch"]
        assert set(f) == set(t), k
        # Sums within 1e-12 (another order), the relative error within 1e-15 (another
        # float64 division), the rest exactly: stats.AGREEMENT_REL.
        bad = stats.disagreements(f, t)
        assert not bad, (k, [(key, f[key], t[key]) for key in bad])


def test_fused_compare_matches_the_torch_form_in_the_interpreter():
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    # small blocks and chunks: many blocks per chunk, several chunks, a ragged last block
    _same(_run(env, "cpu", 256, 8192))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_fused_compare_matches_the_torch_form_on_the_gpu():
    _same(_run(dict(os.environ), "cuda", 4096, 1 << 24))
    _same(_run(dict(os.environ), "cuda", 256, 8192))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_compare_takes_the_fused_kernel_on_a_gpu_sized_output(monkeypatch):
    from kgate_worker import stats
    monkeypatch.setattr(stats, "_fused_failed", "")  # on, whatever the default
    n = 3 * stats.COMPARE_CHUNK + 12345
    g = torch.Generator(device="cuda").manual_seed(1)
    want = torch.randn(n, device="cuda", dtype=torch.float64, generator=g)
    got = (want + 1e-4 * torch.randn(n, device="cuda", dtype=torch.float64, generator=g)).float()
    got[n - 5] = float("nan")
    got[2 * stats.COMPARE_CHUNK + 1] += 1.0
    e = stats.compare("output0", got, want, 1e-2, 1e-2)
    assert not stats._fused_failed
    assert e["nan"] == 1 and e["over_tol"] == 2
    assert e["worst_kind"] == "nan" and e["worst_index"] == n - 5
    ref = stats._fold_torch(got.reshape(-1), want.reshape(-1), 1e-2, 1e-2)
    assert e["max_abs_err"] == ref["max_d"]
