"""Error statistics against the float64 truth, bitwise comparisons, timing statistics.

Semantics follow the native checker (harness/native/checker.cpp) so both workers report
the same numbers for the same outputs.
"""

from __future__ import annotations

import math
import statistics

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


def compare(name: str, got, want: torch.Tensor, atol: float, rtol: float) -> dict:
    """Per-output error record of `got` (any dtype) against the float64 `want`."""
    e = {"name": name, "max_abs_err": 0.0, "max_rel_err": 0.0, "rel_l2_err": 0.0,
         "over_tol": 0, "nan": 0, "inf": 0, "truth_nonfinite": 0, "unwritten": 0,
         "worst_index": -1, "worst_got": 0.0, "worst_want": 0.0, "shape_ok": True,
         "worst_kind": "", "dtype": ""}
    if not isinstance(got, torch.Tensor):
        e["shape_ok"] = False
        e["dtype"] = type(got).__name__
        return e
    e["dtype"] = dtype_name(got.dtype)
    if tuple(got.shape) != tuple(want.shape) or got.is_complex():
        e["shape_ok"] = False
        return e
    g_raw = got.detach().contiguous().reshape(-1)
    w = want.detach().to(device=g_raw.device, dtype=torch.float64).contiguous().reshape(-1)
    g = g_raw.to(torch.float64)
    if g.numel() == 0:
        return e
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
    rel = torch.where(ok & (w != 0), d / torch.where(w != 0, absw, torch.ones_like(absw)),
                      torch.zeros_like(g))
    over = ok & (d > atol + rtol * absw)
    sum_d2 = float((d * d).sum())
    sum_w2 = float(torch.where(fw, w * w, torch.zeros_like(w)).sum())

    e["truth_nonfinite"] = int(nfw.sum())
    e["unwritten"] = int(unw.sum())
    e["nan"] = int((fw & ~unw & torch.isnan(g)).sum())
    e["inf"] = int((fw & ~unw & torch.isinf(g)).sum())
    e["over_tol"] = int(over.sum()) + int(bad.sum()) + int(over_nf.sum())
    e["max_abs_err"] = _f(d.max())
    e["max_rel_err"] = _f(rel.max())
    norm_d, norm_w = math.sqrt(sum_d2), math.sqrt(sum_w2)
    e["rel_l2_err"] = _f(norm_d / norm_w if norm_w > 0 else norm_d)

    if bool(bad.any()):
        idx = int(torch.nonzero(bad)[0, 0])
        gv = float(g[idx])
        e["worst_kind"] = ("unwritten" if bool(unw[idx]) else "nan" if math.isnan(gv)
                           else "inf" if gv > 0 else "-inf")
        e["worst_index"], e["worst_got"], e["worst_want"] = idx, 0.0, float(w[idx])
    elif bool(ok.any()):
        # The first element with the largest |got - want| (like the native checker).
        dm = torch.where(ok, d, torch.full_like(d, -1.0))
        mx = dm.max()
        idx = int(torch.nonzero(dm == mx)[0, 0])
        e["worst_index"], e["worst_got"], e["worst_want"] = idx, _f(g[idx]), _f(w[idx])
        e["worst_kind"] = "finite"
    return e


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def robust_sd(xs: list[float]) -> float:
    """1.4826 * median absolute deviation: the standard deviation for normally distributed
    samples, but not inflated by the rare multi-millisecond outlier (preemption, page
    faults) that would otherwise keep a timing run from ever converging."""
    med = statistics.median(xs)
    return 1.4826 * statistics.median(abs(x - med) for x in xs)


def rse_of_median(xs: list[float]) -> float:
    """Relative standard error of the median: 1.2533 * sd / sqrt(n) / median, with the
    robust sd above. inf when it cannot be estimated (n < 2 or median <= 0)."""
    n = len(xs)
    if n < 2:
        return math.inf
    med = statistics.median(xs)
    if med <= 0:
        return math.inf
    return 1.2533 * robust_sd(xs) / math.sqrt(n) / med
