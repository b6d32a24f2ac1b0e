"""Where one `check` request of the Python worker spends its time, on a real problem:
the worker's handlers called in process (tests/python/inproc.py), the problem's own
reference as the candidate (A/A), then N check requests under cProfile.

    python3 tools/check_profile.py PROBLEM.py [--backend cuda] [--checks 4] [--top 30]

Prints each request's wall time and the functions with the most cumulative time."""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(root / "harness" / "python"), str(root / "tests" / "python")]

from inproc import InProc, as_model_new  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--checks", type=int, default=4)
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    w = InProc(a.backend)
    t = time.perf_counter()
    w.load(a.problem, variant="")
    print(f"load_problem {time.perf_counter() - t:.3f} s")
    with tempfile.TemporaryDirectory() as d:
        cand = as_model_new(Path(a.problem), Path(d) / "aa.py")
        assert w.compile(cand, reference_op_rule=False)["compiled"]
        w.check(seed=1, atol=1e-2, rtol=1e-2)  # first touch of the allocator and kernels
        pr = cProfile.Profile()
        for s in range(a.checks):
            t = time.perf_counter()
            pr.enable()
            r = w.check(seed=2 + s, dist="problem" if s % 2 == 0 else "signed",
                        atol=1e-2, rtol=1e-2, repeats=2)
            pr.disable()
            print(f"check {s}: {time.perf_counter() - t:.3f} s, over_tol "
                  f"{[o['over_tol'] for o in r['outputs']]}", flush=True)
    pstats.Stats(pr).sort_stats("cumulative").print_stats(a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
