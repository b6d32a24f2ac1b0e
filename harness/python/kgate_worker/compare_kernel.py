"""The float64 comparison of stats.compare in one pass over the output and the truth, on
a CUDA device (kgate's own Triton kernel).

stats.compare's element rules, written with torch operations, make about thirty passes
over float64 temporaries of each chunk: on a GPU-sized output (23_Softmax: 1.6 G
elements) they were most of a check's time. This kernel applies the same rules to each
block of elements in registers and writes one row of partial statistics per block
(sums, counts, maxima and the first index reaching each); `reduce_partials` folds the
rows into what compare reports. The torch form stays the definition (and the CPU path):
tests/python/test_compare_kernel.py holds the two to the same answers, element rules,
ties and first indices included.

Only floating outputs come here (integer and bool outputs are compared exactly, by the
torch form); the truth may be any floating dtype (float64, or float32 where the problem
cannot run in float64) and is converted in registers.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096
NUM_WARPS = 8
# Columns of a block's row of partials.
F_SUM_D2, F_SUM_W2, F_MAX_D, F_MAX_REL, F_MAX_OVER = range(5)
(I_TRUTH_NONFINITE, I_UNWRITTEN, I_NAN, I_INF, I_OVER_TOL,
 I_FIRST_MAX, I_FIRST_BAD, I_FIRST_OVER) = range(8)
_BITS = {torch.float16: tl.int16, torch.bfloat16: tl.int16, torch.float32: tl.int32,
         torch.float64: tl.int64}
SUPPORTED = frozenset(_BITS)


NONE = (1 << 62)  # "no such element" in the first-index columns: past every index


@triton.jit(do_not_specialize=["n", "base", "row0", "never"])
def _compare_block(g_ptr, w_ptr, pf_ptr, pi_ptr, tol_ptr, n, base, row0, never,
                   BITS: tl.constexpr, BLOCK: tl.constexpr):
    """Block `pid` of one chunk of `n` elements (global index `base` + local); its
    partials go to row `row0 + pid`; `never` (NONE) marks a first index with no element.
    The tolerances come as float64 from `tol_ptr` (a float argument would be float32)."""
    pid = tl.program_id(0)
    tol_abs = tl.load(tol_ptr)
    rtol = tl.load(tol_ptr + 1)
    local = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = local < n
    idx = base + local
    inf = float("inf")
    g_raw = tl.load(g_ptr + local, mask=m, other=0.0)
    unw = (g_raw.to(BITS, bitcast=True) == -1) & m  # the poison: every bit set
    g = g_raw.to(tl.float64)
    w = tl.load(w_ptr + local, mask=m, other=0.0).to(tl.float64)
    absw = tl.abs(w)
    fin_w = absw < inf  # false for NaN and for either infinity
    fw = fin_w & m
    nfw = (~fin_w) & m
    nan_g = g != g
    fin_g = tl.abs(g) < inf
    same_nf = tl.where(w != w, nan_g, g == w)
    over_nf = nfw & ((~same_nf) | unw)
    bad = fw & (unw | (~fin_g))
    ok = fw & (~bad)
    d = tl.where(ok, tl.abs(g - w), 0.0)
    rel = tl.where(ok & (w != 0.0), d / tl.where(w != 0.0, absw, 1.0), 0.0)
    over = ok & (d > tol_abs + rtol * absw)
    plain = fw & (~unw)
    dm = tl.where(ok, d, -1.0)
    mx = tl.max(dm, axis=0)
    do = tl.where(over, d, -1.0)
    mo = tl.max(do, axis=0)
    row = row0 + pid
    tl.store(pf_ptr + row * 5 + 0, tl.sum(d * d, axis=0))
    tl.store(pf_ptr + row * 5 + 1, tl.sum(tl.where(fw, w * w, 0.0), axis=0))
    tl.store(pf_ptr + row * 5 + 2, mx)
    tl.store(pf_ptr + row * 5 + 3, tl.max(rel, axis=0))
    tl.store(pf_ptr + row * 5 + 4, mo)
    tl.store(pi_ptr + row * 8 + 0, tl.sum(nfw.to(tl.int64), axis=0))
    tl.store(pi_ptr + row * 8 + 1, tl.sum(unw.to(tl.int64), axis=0))
    tl.store(pi_ptr + row * 8 + 2, tl.sum((plain & nan_g).to(tl.int64), axis=0))
    tl.store(pi_ptr + row * 8 + 3, tl.sum((plain & (~nan_g) & (~fin_g)).to(tl.int64), axis=0))
    tl.store(pi_ptr + row * 8 + 4, tl.sum((over | bad | over_nf).to(tl.int64), axis=0))
    tl.store(pi_ptr + row * 8 + 5, tl.min(tl.where(ok & (dm == mx), idx, never), axis=0))
    tl.store(pi_ptr + row * 8 + 6, tl.min(tl.where(bad, idx, never), axis=0))
    tl.store(pi_ptr + row * 8 + 7, tl.min(tl.where(over & (do == mo), idx, never), axis=0))


def partials(g_all: torch.Tensor, w_all: torch.Tensor, tol_abs: float, rtol: float,
             chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One row of partials per block of `BLOCK` elements of the flat, contiguous `g_all`
    (on the device) against `w_all` (on the device or, a truth kept on the host, moved
    over `chunk` elements at a time). No host synchronisation until the caller reads."""
    n = g_all.numel()
    dev = g_all.device
    rows = sum(triton.cdiv(min(chunk, n - lo), BLOCK) for lo in range(0, n, chunk))
    pf = torch.empty((rows, 5), dtype=torch.float64, device=dev)
    pi = torch.empty((rows, 8), dtype=torch.int64, device=dev)
    bits = _BITS[g_all.dtype]
    tol = torch.tensor([tol_abs, rtol], dtype=torch.float64, device=dev)
    row0 = 0
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        g = g_all[lo:hi]
        w = w_all[lo:hi]
        if w.device != dev:
            w = w.to(dev, non_blocking=False)
        grid = triton.cdiv(hi - lo, BLOCK)
        _compare_block[(grid,)](g, w, pf, pi, tol, hi - lo, lo, row0, NONE,
                                BITS=bits, BLOCK=BLOCK, num_warps=NUM_WARPS)
        row0 += grid
    return pf, pi


def reduce_partials(pf: torch.Tensor, pi: torch.Tensor) -> dict:
    """The rows folded as stats.compare's chunk loop folds its chunks: sums and counts
    added, each maximum with the first index reaching it (-1: none, and -1.0 for a
    maximum no element reached). Folded on the device; two small reads."""
    none = torch.full((), NONE, dtype=torch.int64, device=pi.device)
    mx, mo = pf[:, F_MAX_D].max(), pf[:, F_MAX_OVER].max()
    fs = torch.stack([pf[:, F_SUM_D2].sum(), pf[:, F_SUM_W2].sum(), mx,
                      pf[:, F_MAX_REL].max(), mo]).tolist()
    counts = pi[:, I_TRUTH_NONFINITE:I_OVER_TOL + 1].sum(dim=0)
    firsts = torch.stack([torch.where(pf[:, F_MAX_D] == mx, pi[:, I_FIRST_MAX], none).min(),
                          pi[:, I_FIRST_BAD].min(),
                          torch.where(pf[:, F_MAX_OVER] == mo, pi[:, I_FIRST_OVER], none).min()])
    ints = torch.cat([counts, firsts]).tolist()
    sum_d2, sum_w2, max_d, max_rel, worst_over_d = fs
    nonfinite, unwritten, nan, inf, over_tol, first_max, first_bad, worst_over = ints
    compared = max_d >= 0.0  # some element was compared (-1.0 marks a block with none)
    return {"sum_d2": sum_d2, "sum_w2": sum_w2, "truth_nonfinite": nonfinite,
            "unwritten": unwritten, "nan": nan, "inf": inf, "over_tol": over_tol,
            "max_d": max_d if compared else -1.0,
            "first_max": first_max if compared and first_max < NONE else -1,
            "max_rel": max_rel if compared else -1.0,
            "first_bad": first_bad if first_bad < NONE else -1,
            "worst_over_d": worst_over_d if worst_over_d >= 0.0 else -1.0,
            "worst_over": worst_over if worst_over_d >= 0.0 and worst_over < NONE else -1}
