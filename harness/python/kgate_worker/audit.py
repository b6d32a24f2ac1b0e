"""Timed calls audited (issue 16): what a slot computes while it is timed must be what it
computed while it was checked.

The correctness gate sees a slot's first calls only; the timing's calls were never
compared. A candidate that computes on every other call, or honestly for the calls the
checks make and then half the work, or that returns a result it cached by the inputs'
content (the timing cycles over a few input sets), passed every gate. The `time` op now:

- compares, in every sampling round, the outputs of the candidate and the baseline on the
  same input set (both are timed on it in that round; the baseline passed the gates, so
  its output is the reference for this round). The comparison runs between samples, never
  inside a timed window. Two correct slots agree within twice the check's tolerance (each
  is within it of the float64 truth), widened as the check widened it for an
  ill-conditioned problem. In CUDA-graph timing no Python runs during a replay, so the
  last captured call's outputs are compared after sampling.
- times a few rounds on input sets it has just drawn from seeds nobody else knows, written
  into the timed buffers (so the pointers are the same and the contents new), and
  audits their outputs. Each round calls the candidate on its new contents, then runs
  the same steps again (the contents written, the baseline's settling call) and calls it
  on the same contents, now seen: a slot much slower on the first than on the second
  returns results it has seen before: a result cache.

Either finding is the `audit_failure` of the answer; the performance gate rejects on it.
What could not be audited (no room on the device for a second output, a reference that
draws random numbers inside a graph) is said in `audit_note`.
"""

from __future__ import annotations

from typing import Any

CHUNK = 1 << 24          # elements compared per step (a few float32 temporaries of it)
TOL_FACTOR = 2.1         # two correct outputs are each within the tolerance of the truth
FRESH_ROUNDS = 5         # rounds timed on freshly drawn contents
CACHE_FACTOR = 1.5       # this much slower on new contents than on the same ones again: a cache
DEFAULT_TOL = (1e-2, 1e-2)  # KernelBench's, when no check of this dtype ran before


def outputs_differ(torch: Any, got: list | None, want: list | None, atol: float,
                   rtol: float, extra_atol: float = 0.0) -> str:
    """'' when `got` agrees with `want` (the other slot's outputs on the same inputs)
    within TOL_FACTOR x (atol + rtol·|want|) + 2·extra_atol per element (integer and bool
    outputs exactly; NaN matches NaN, an infinity the same infinity), else what differs:
    the output, how many elements and the first of them."""
    if got is None or want is None:
        return "" if got is None and want is None else "one slot returned no tensor"
    if len(got) != len(want):
        return f"{len(got)} outputs against the baseline's {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        name = f"output{i}"
        if not isinstance(g, torch.Tensor) or not isinstance(w, torch.Tensor):
            return f"{name} is not a tensor"
        if tuple(g.shape) != tuple(w.shape):
            return f"{name} has shape {tuple(g.shape)} against the baseline's {tuple(w.shape)}"
        if g.is_complex() or w.is_complex():
            continue
        exact = not (w.is_floating_point() or g.is_floating_point())
        ga = g.detach().reshape(-1)
        wa = w.detach().reshape(-1)
        if ga.device != wa.device:
            ga = ga.to(wa.device)
        tol_abs = TOL_FACTOR * atol + 2 * extra_atol
        tol_rel = TOL_FACTOR * rtol

        def bad_of(lo: int, hi: int):
            """Exactly the elements that disagree (NaN with NaN and an infinity with the
            same infinity agree; any other non-finite value disagrees)."""
            a, b = ga[lo:hi], wa[lo:hi]
            if exact:
                return a != b
            a, b = a.float(), b.float()
            same = (a == b) | (torch.isnan(a) & torch.isnan(b))
            close = torch.isfinite(b) & ((a - b).abs() <= tol_abs + tol_rel * b.abs())
            return ~same & ~close

        def suspects(lo: int, hi: int):
            """A superset of bad_of in fewer passes (it runs every timing round): every
            element not within the tolerance, non-finite ones included."""
            a, b = ga[lo:hi], wa[lo:hi]
            if exact:
                return (a != b).sum()
            d = (a.float() - b.float()).abs_()
            lim = b.float().abs().mul_(tol_rel).add_(tol_abs)
            return d.le_(lim).logical_not_().sum()

        n = ga.numel()
        total = None
        for lo in range(0, n, CHUNK):  # counted on the device, one synchronisation
            s = suspects(lo, min(n, lo + CHUNK))
            total = s if total is None else total + s
        if total is None or int(total) == 0:
            continue
        count, first = 0, -1  # the rare path: the exact count and the first of them
        for lo in range(0, n, CHUNK):
            idx = bad_of(lo, min(n, lo + CHUNK)).nonzero()
            if idx.numel() and first < 0:
                first = lo + int(idx[0])
            count += idx.shape[0]
        if count:  # else only matching non-finite values
            return (f"{name}: {count} of {n} elements differ from the baseline's beyond "
                    f"{TOL_FACTOR:g} x the check's tolerance (first at flat index {first}: "
                    f"{float(ga[first]):.6g} against {float(wa[first]):.6g})")
    return ""


def tolerance(table: dict, dtype_key: str) -> tuple:
    """(atol, rtol, extra_atol) for outputs of this dtype: the widest the checks of the
    problem used (the table the worker fills as it checks), else KernelBench's."""
    return table.get(dtype_key, (*DEFAULT_TOL, 0.0))


def _median(values: list) -> float:
    v = sorted(values)
    n = len(v)
    return (v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])) if n else float("nan")


def cache_finding(samples: dict, fresh: dict) -> str:
    """'' unless the candidate is more than CACHE_FACTOR x slower on contents it has not
    seen than on the same contents again after the same steps, in the median over the fresh
    rounds of each round's ratio: then what was seen. `fresh` holds, per round, the
    candidate's first call on new contents ("candidate") and its second call on them, now
    seen ("candidate_seen"), each after the same steps (the contents written, the
    baseline's settling call), timed the same way, so load, the timing method and what the
    baseline's call leaves behind cancel out of their ratio (an honest slot on a loaded
    2-core box read 1.5x slower on its fresh rounds than on the timing's repeated sets,
    taken seconds earlier, while a cache by content passed there whenever the baseline was
    slowed as much). A
    cache computes on the first call and copies on the second; honest work costs the same
    twice. The repeated sets' median (`samples`) is only said."""
    c, seen = fresh.get("candidate") or [], fresh.get("candidate_seen") or []
    if not c or len(c) != len(seen):
        return ""
    ratio = _median([a / b if b > 0 else float("inf") for a, b in zip(c, seen)])
    if ratio > CACHE_FACTOR:
        cm = _median(samples.get("candidate") or [])
        return ("the candidate is faster on inputs it has seen before (a result cache): "
                f"median {_median(c):.4g} us over {len(c)} rounds on freshly drawn contents "
                f"against {_median(seen):.4g} us on the same contents again after the same "
                f"steps (median ratio {ratio:.3g}x; {cm:.4g} us on the repeated input sets)")
    return ""


def confirmed_cache(samples: dict, first: dict, second: dict) -> tuple[str, str]:
    """(audit_failure, audit_note) from two sets of FRESH_ROUNDS rounds on fresh contents,
    the second taken because the first showed a cache. A cache is slower on new contents
    every time; a burst of load over the first set's few rounds is not repeated, so the
    finding stands only when the second set shows it too."""
    finding = cache_finding(samples, first)
    if not finding:
        return "", ""
    again = cache_finding(samples, second)
    if again:
        return finding + "; again in a second set of rounds: " + again.split(": ", 1)[1], ""
    return "", ("one set of rounds on fresh contents was slower for the candidate, the "
                "second was not: load, not a cache (" + finding.split(": ", 1)[1] + ")")
