"""Error statistics against the float64 truth, bitwise comparisons, timing statistics.

Semantics follow the native checker (harness/native/checker.cpp) so both workers report
the same numbers for the same outputs.
"""

from __future__ import annotations

import math
import os
import statistics
import sys

import torch

DTYPES: dict[str, torch.dtype] = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
}
_NAMES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8",
    torch.uint8: "u8", torch.bool: "bool", torch.complex64: "c64", torch.complex128: "c128",
}
_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
DBL_MAX = 1.7976931348623157e308


def dtype_name(dt: torch.dtype) -> str:
    return _NAMES.get(dt, str(dt).replace("torch.", ""))


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's raw bits as a same-sized integer tensor (contiguous)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    if t.is_floating_point() or t.is_complex():
        return t.view(_INT_VIEW[t.element_size()] if not t.is_complex() else torch.int32)
    return t


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.device != b.device:
        b = b.to(a.device)
    return bool(torch.equal(_bits(a), _bits(b)))


def poison_mask(t: torch.Tensor) -> torch.Tensor:
    """Elements whose bits are all ones: the poison written before each run (a NaN for
    every floating dtype, -1 / max for integers)."""
    flat = t.detach().contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        return torch.zeros(flat.shape, dtype=torch.bool, device=flat.device)
    if flat.dtype == torch.uint8:
        return flat == 255
    if flat.is_floating_point():
        return _bits(flat) == -1
    if flat.is_complex():
        return torch.zeros(flat.shape, dtype=torch.bool, device=flat.device)
    return flat == -1


def _f(x: torch.Tensor | float) -> float:
    v = float(x)
    if math.isnan(v):
        return DBL_MAX
    if math.isinf(v):
        return DBL_MAX if v > 0 else -DBL_MAX
    return v


COMPARE_CHUNK = 1 << 24  # elements per pass: float64 temporaries of 128 MiB, not of the output


def is_exact_dtype(dt: torch.dtype) -> bool:
    """Integer and bool outputs (argmax, argmin, masks, counts) are compared exactly."""
    return not (dt.is_floating_point or dt.is_complex)


def compare(name: str, got, want: torch.Tensor, atol: float, rtol: float,
            extra_atol: float = 0.0) -> dict:
    """Per-output error record of `got` (any dtype) against the float64 `want` (or the
    float32 reference when the problem cannot run in float64).

    An integer or bool `want` is compared exactly (atol = rtol = 0, `exact: true`).
    `extra_atol` widens the tolerance of every element (an ill-conditioned reference's own
    error, see worker.py). The work is done in chunks of COMPARE_CHUNK elements, so a
    GPU-sized output needs no float64 copies of its own size; `want` may live on another
    device than `got` (a truth kept on the host), each chunk is moved over as needed."""
    e = {"name": name, "max_abs_err": 0.0, "max_rel_err": 0.0, "rel_l2_err": 0.0,
         "over_tol": 0, "nan": 0, "inf": 0, "truth_nonfinite": 0, "unwritten": 0,
         "worst_index": -1, "worst_got": 0.0, "worst_want": 0.0, "shape_ok": True,
         "worst_kind": "", "dtype": "", "worst_abs_err": 0.0, "exact": False,
         "shape": [int(d) for d in want.shape]}
    if not isinstance(got, torch.Tensor):
        e["shape_ok"] = False
        e["dtype"] = type(got).__name__
        return e
    e["dtype"] = dtype_name(got.dtype)
    if tuple(got.shape) != tuple(want.shape) or got.is_complex():
        e["shape_ok"] = False
        return e
    if is_exact_dtype(want.dtype):
        atol, rtol, extra_atol = 0.0, 0.0, 0.0
        e["exact"] = True
    g_all = got.detach().contiguous().reshape(-1)
    w_all = want.detach().contiguous().reshape(-1)
    n = g_all.numel()
    if n == 0:
        return e
    f = _fold(g_all, w_all, atol + extra_atol, rtol)
    first_bad, worst_over, first_max = f["first_bad"], f["worst_over"], f["first_max"]
    e.update({k: f[k] for k in ("truth_nonfinite", "unwritten", "nan", "inf", "over_tol")})
    e["max_abs_err"] = _f(max(f["max_d"], 0.0))
    e["max_rel_err"] = _f(max(f["max_rel"], 0.0))
    norm_d, norm_w = math.sqrt(f["sum_d2"]), math.sqrt(f["sum_w2"])
    e["rel_l2_err"] = _f(norm_d / norm_w if norm_w > 0 else norm_d)

    def at(i: int) -> tuple[float, float]:
        return float(g_all[i].to(torch.float64)), float(w_all[i].to(torch.float64))

    if first_bad >= 0:
        gv, wv = at(first_bad)
        unwritten = bool(poison_mask(g_all[first_bad:first_bad + 1])[0]) and (
            g_all.is_floating_point() or gv != wv)
        e["worst_kind"] = ("unwritten" if unwritten else "nan" if math.isnan(gv)
                           else "inf" if gv > 0 else "-inf")
        e["worst_index"], e["worst_got"], e["worst_want"] = first_bad, 0.0, wv
    elif worst_over >= 0 or first_max >= 0:
        # The element reported as the worst is one over tolerance when there is one (the
        # largest |got - want| among them): the largest error overall may be within the
        # tolerance of a large |want|. Else the first largest |got - want|.
        idx = worst_over if worst_over >= 0 else first_max
        gv, wv = at(idx)
        e["worst_index"], e["worst_got"], e["worst_want"] = idx, _f(gv), _f(wv)
        e["worst_abs_err"] = _f(abs(gv - wv))
        e["worst_kind"] = "finite"
    return e


# Elements of one output from which the fused CUDA kernel (compare_kernel.py) takes over
# from the torch form: below it a launch and its JIT compile buy nothing.
FUSED_MIN_ELEMENTS = 1 << 20
# Whether the fused kernel is used unless KGATE_WORKER_FUSED_COMPARE says (1: on, 0: off).
# On since its GPU tests passed and it agreed with the torch form on an H100 at 13.8x its
# speed (docs/measurement.md, 2026-12-07, fourth session).
FUSED_DEFAULT = True
# Why the fused kernel is not used in this process (said once): it failed to build, or it
# is off (KGATE_WORKER_FUSED_COMPARE, FUSED_DEFAULT: an A/B of the two forms, an escape hatch).
_fused_failed = {"1": "", "0": "KGATE_WORKER_FUSED_COMPARE=0"}.get(
    os.environ.get("KGATE_WORKER_FUSED_COMPARE", ""),
    "" if FUSED_DEFAULT else "off by default (KGATE_WORKER_FUSED_COMPARE=1 turns it on)")


def warm_fused(out_dtypes: list, truth_dtype: torch.dtype, device: torch.device) -> None:
    """Builds the fused kernel for these output dtypes against this truth dtype now: the
    worker calls it before any candidate code runs, while Triton's shared cache is still
    the one it reads (the seal gives a worker a cache of its own: built after it, the
    kernel would be compiled again by every worker). A build that fails turns the fused
    path off in this process (said once), as in `_fold`."""
    if device.type != "cuda" or _fused_failed:
        return
    for dt in dict.fromkeys(out_dtypes):
        if dt.is_floating_point:
            one = torch.zeros(1, dtype=dt, device=device)
            _fold(one, torch.zeros(1, dtype=truth_dtype, device=device), 0.0, 0.0, fused=True)


def _fold(g_all: torch.Tensor, w_all: torch.Tensor, tol_abs: float, rtol: float,
          fused: bool = False) -> dict:
    """compare's per-element statistics: sums, counts, each maximum with the first index
    reaching it. A floating output on a CUDA device goes through kgate's fused kernel
    (one pass); everything else, and that kernel failing to build, through `_fold_torch`,
    which defines them. `fused`: the kernel whatever the size."""
    global _fused_failed
    if (g_all.is_cuda and not _fused_failed and w_all.is_floating_point()
            and (fused or g_all.numel() >= FUSED_MIN_ELEMENTS)):
        try:
            from . import compare_kernel as ck
            if g_all.dtype in ck.SUPPORTED and w_all.dtype in ck.SUPPORTED:
                pf, pi = ck.partials(g_all, w_all, tol_abs, rtol, COMPARE_CHUNK)
                return ck.reduce_partials(pf, pi)
        except Exception as ex:  # noqa: BLE001 -- a kernel that cannot build: the torch form
            _fused_failed = f"{type(ex).__name__}: {str(ex).splitlines()[0][:200] if str(ex) else ''}"
            sys.stderr.write(f"[kgate_worker] the fused comparison kernel is off in this "
                             f"process ({_fused_failed}); comparing with torch operations\n")
    return _fold_torch(g_all, w_all, tol_abs, rtol)


def _fold_torch(g_all: torch.Tensor, w_all: torch.Tensor, tol_abs: float, rtol: float) -> dict:
    """The definition of compare's statistics, chunk by chunk in torch operations (float64
    temporaries of COMPARE_CHUNK elements; a `w_all` on another device moved over a chunk
    at a time)."""
    n = g_all.numel()
    sum_d2 = sum_w2 = 0.0
    max_d = max_rel = -1.0
    first_bad = first_max = -1
    worst_over, worst_over_d = -1, -1.0
    counts = {"truth_nonfinite": 0, "unwritten": 0, "nan": 0, "inf": 0, "over_tol": 0}
    for lo in range(0, n, COMPARE_CHUNK):
        hi = min(n, lo + COMPARE_CHUNK)
        g_raw = g_all[lo:hi]
        w = w_all[lo:hi].to(device=g_raw.device, dtype=torch.float64)
        g = g_raw.to(torch.float64)
        unw = poison_mask(g_raw)
        if not g_raw.is_floating_point():
            unw &= g != w  # an integer truth may legitimately equal the sentinel
        fw = torch.isfinite(w)
        nfw = ~fw
        same_nf = torch.where(torch.isnan(w), torch.isnan(g), g == w)
        over_nf = nfw & (~same_nf | unw)
        bad = fw & (unw | ~torch.isfinite(g))
        ok = fw & ~bad
        absw = w.abs()
        d = torch.where(ok, (g - w).abs(), torch.zeros_like(g))
        rel = torch.where(ok & (w != 0),
                          d / torch.where(w != 0, absw, torch.ones_like(absw)),
                          torch.zeros_like(g))
        over = ok & (d > tol_abs + rtol * absw)
        sum_d2 += float((d * d).sum())
        sum_w2 += float(torch.where(fw, w * w, torch.zeros_like(w)).sum())
        counts["truth_nonfinite"] += int(nfw.sum())
        counts["unwritten"] += int(unw.sum())
        counts["nan"] += int((fw & ~unw & torch.isnan(g)).sum())
        counts["inf"] += int((fw & ~unw & torch.isinf(g)).sum())
        counts["over_tol"] += int(over.sum()) + int(bad.sum()) + int(over_nf.sum())
        if bool(ok.any()):
            dm = torch.where(ok, d, torch.full_like(d, -1.0))
            mx = float(dm.max())
            if mx > max_d:  # the first largest |got - want| (like the native checker)
                max_d, first_max = mx, lo + int(torch.nonzero(dm == mx)[0, 0])
            max_rel = max(max_rel, float(rel.max()))
        if first_bad < 0 and bool(bad.any()):
            first_bad = lo + int(torch.nonzero(bad)[0, 0])
        if bool(over.any()):
            do = torch.where(over, d, torch.full_like(d, -1.0))
            mo = float(do.max())
            if mo > worst_over_d:
                worst_over_d, worst_over = mo, lo + int(torch.nonzero(do == mo)[0, 0])
        del g, w, unw, fw, nfw, same_nf, over_nf, bad, ok, absw, d, rel, over
    return dict(counts, sum_d2=sum_d2, sum_w2=sum_w2, max_d=max_d, first_max=first_max,
                max_rel=max_rel, first_bad=first_bad, worst_over_d=worst_over_d,
                worst_over=worst_over)


def relative_spread(a: list | None, b: list | None) -> float:
    """How far two runs' outputs are apart: 0.0 when bitwise equal, else the largest over
    outputs of max |a - b| / max |a| (max |a - b| when a is all zeros); NaN where only one
    side has it, or a different structure, shape or dtype is inf. Chunked like compare."""
    if a is None or b is None or len(a) != len(b):
        return math.inf
    worst = 0.0
    for x, y in zip(a, b):
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
            return math.inf
        if bitwise_equal(x, y):
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return math.inf
        xf = x.detach().contiguous().reshape(-1)
        yf = y.detach().contiguous().reshape(-1).to(xf.device)
        md = mx = 0.0
        for lo in range(0, xf.numel(), COMPARE_CHUNK):
            xs = xf[lo:lo + COMPARE_CHUNK].to(torch.float64)
            ys = yf[lo:lo + COMPARE_CHUNK].to(torch.float64)
            both_nan = torch.isnan(xs) & torch.isnan(ys)
            d = torch.where(both_nan, torch.zeros_like(xs), (xs - ys).abs())
            fin = torch.isfinite(xs)
            mx = max(mx, float(torch.where(fin, xs.abs(), torch.zeros_like(xs)).max()))
            dmax = float(torch.where(torch.isnan(d), torch.full_like(d, math.inf), d).max())
            md = max(md, dmax)
        if not math.isfinite(md):
            return math.inf
        worst = max(worst, md / mx if mx > 0 else md)
    return worst


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


SE_Z = 1.959963984540054  # the 95 % normal quantile, as in harness/stats/descriptive.cpp


def median_se(xs: list[float]) -> float:
    """Standard error of the median, the estimator of kgate's C++ runners
    (stats::median_se_sorted): the half-width of the order-statistic window around the
    median (ranks n/2 -/+ z*sqrt(n)/2, clipped to the sample) over 2z. inf for n < 3.
    tests/fixtures/stats/median_rse.json pins both implementations to the same numbers."""
    n = len(xs)
    if n < 3:
        return math.inf
    s = sorted(xs)
    half = SE_Z * math.sqrt(n) / 2.0
    lo = max(0, math.floor(n / 2.0 - half))
    hi = min(n - 1, math.ceil(n / 2.0 + half) - 1)
    return (s[hi] - s[lo]) / (2.0 * SE_Z)


def rse_of_median(xs: list[float]) -> float:
    """Relative standard error of the median: median_se / |median|; inf for n < 3, a zero
    or non-finite median. One target_rse means the same precision in every worker."""
    if len(xs) < 3:
        return math.inf
    med = statistics.median(xs)
    if med == 0 or not math.isfinite(med):
        return math.inf
    return median_se(xs) / abs(med)


# How far the fused statistics may be from the torch form's (_fold_torch) and still
# be the same answer: the sums add the same terms in another order, the relative error is
# a float64 division rounded by another library; every count, maximum and first index is
# exact.
AGREEMENT_REL = {"sum_d2": 1e-12, "sum_w2": 1e-12, "max_rel": 1e-15}


def disagreements(fused: dict, ref: dict) -> list[str]:
    """The statistics where `fused` is not the torch form's `ref` under AGREEMENT_REL."""
    keys = sorted(set(fused) | set(ref))
    return [k for k in keys
            if k not in fused or k not in ref or not (
                fused[k] == ref[k]
                or abs(fused[k] - ref[k]) <= AGREEMENT_REL.get(k, 0.0) * abs(ref[k]))]
