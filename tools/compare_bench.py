"""The float64 comparison of a check (kgate_worker.stats.compare) timed both ways on a CUDA
device: the torch form (stats._fold_torch, the definition) and kgate's fused kernel
(compare_kernel.py), on outputs of official KernelBench sizes against a float64 truth.

    python3 tools/compare_bench.py [--sizes 4096x393216,16384x16384] [--reps 5] [--json F]

Each size: the median of --reps calls of each form (synchronised), the statistics of both
(they must agree), and the fused form's effective bandwidth over the bytes it reads."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness", "python"))

import torch  # noqa: E402

from kgate_worker import compare_kernel as ck, stats  # noqa: E402


def timed(fn, reps: int) -> tuple[float, dict]:
    out, ts = None, []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096x393216,16384x16384,128x4096")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    rows = []
    for size in a.sizes.split(","):
        n = 1
        for d in size.split("x"):
            n *= int(d)
        g = torch.Generator(device="cuda").manual_seed(0)
        want = torch.randn(n, device="cuda", dtype=torch.float64, generator=g)
        got = want.float()
        got[n // 3] += 1.0
        stats.warm_fused([got.dtype], want.dtype, got.device)
        t_torch, ref = timed(lambda: stats._fold_torch(got, want, 1e-2, 1e-2), a.reps)
        t_fused, fused = timed(lambda: ck.reduce_partials(*ck.partials(got, want, 1e-2, 1e-2,
                                                                       stats.COMPARE_CHUNK)), a.reps)
        agree = not stats.disagreements(fused, ref)  # the rule the tests hold the kernel to
        gbps = n * (got.element_size() + want.element_size()) / t_fused / 1e9
        row = {"size": size, "elements": n, "torch_ms": round(t_torch * 1e3, 3),
               "fused_ms": round(t_fused * 1e3, 3), "speedup": round(t_torch / t_fused, 2),
               "fused_GBps": round(gbps, 1), "agree": agree}
        rows.append(row)
        print(json.dumps(row), flush=True)
        del got, want
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=1)
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
