"""Where the Python worker's native slot loses time (docs/measurement.md, "The native
slot"): a native starter library, called as the worker calls it (kgate_worker.native),
timed beside its op's PyTorch form in eager and under torch.compile, several ways:

- `event`: the worker's own sample (cuda_timing.Sampler: L2 flush, events around one call),
  in the worker's AB/BA rotation, once per pairing (native beside eager, beside compile);
- `predelay`: the worker's `exclude_launch` sample (the GPU held busy between the flush and
  the start event for twice the slowest host issue), so the host has queued the call
  before the start event fires: the call's device time without its host launch cost;
- `graph`: one call captured in a CUDA graph, replayed between events after the flush;
- `host`: the host's time to issue one call (perf_counter around it, no synchronize).

Usage (on a GPU): python3 tools/native_slot_study.py [--rounds N] [--json F]
Builds the starters with nvcc (sm of the current device) into a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "harness", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from kgate_worker import clocks, cuda_timing, native  # noqa: E402

CASES = {
    # name: (starter, PyTorch form, inputs)
    "softmax": ("softmax.cu", lambda x: torch.softmax(x, dim=-1),
                lambda: [torch.randn(8192, 8192, device="cuda", dtype=torch.float16)]),
    "layernorm": ("layernorm.cu", lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5),
                  lambda: [torch.randn(8192, 4096, device="cuda", dtype=torch.float16),
                           torch.randn(4096, device="cuda", dtype=torch.float16),
                           torch.randn(4096, device="cuda", dtype=torch.float16)]),
}


class Form(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def build(starter: str, out_dir: str) -> str:
    major, minor = torch.cuda.get_device_capability()
    so = os.path.join(out_dir, starter.replace(".cu", ".so"))
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                    "-gencode", f"arch=compute_{major}{minor},code=sm_{major}{minor}",
                    "-I", os.path.join(ROOT, "harness", "include"),
                    os.path.join(ROOT, "kernelbench", "native", "starters", starter), "-o", so],
                   check=True)
    return so


def median(v):
    return statistics.median(v) if v else float("nan")


def study(name: str, so: str, rounds: int) -> dict:
    starter, fn, make = CASES[name]
    del starter
    form = Form(fn)
    slots = {"native": native.NativeModel(so, form), "eager": form,
             "compile": torch.compile(Form(fn))}
    xs = make()
    for _ in range(3):  # warm-up, compile
        for m in slots.values():
            m(*xs)
    torch.cuda.synchronize()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sampler = cuda_timing.Sampler(torch, torch.device("cuda"), 2 * l2)
    res: dict = {"case": name}

    def pairings(smp, label: str) -> None:
        """The worker's AB/BA rotation, native beside each PyTorch form in turn."""
        for other in ("eager", "compile"):
            pair = ["native", other]
            got = {s: [] for s in pair}
            for k in range(rounds):
                for j in range(2):
                    s = pair[(k + j) % 2]
                    got[s].append(smp.sample(s, lambda: slots[s](*xs)))
            res[f"{label}_native_beside_{other}"] = median(got["native"])
            res[f"{label}_{other}_beside_native"] = median(got[other])

    pairings(sampler, "event")

    # the host's cost of issuing each call (returned, not synchronized), then the
    # worker's `exclude_launch` sampler: a lead of twice the slowest issue
    host = {s: [] for s in slots}
    for k in range(rounds):
        for s, m in slots.items():
            t0 = clocks.perf_counter()
            m(*xs)
            host[s].append((clocks.perf_counter() - t0) * 1e6)
            torch.cuda.synchronize()
    lead = cuda_timing.lead_us([max(v) for v in host.values()])
    led = cuda_timing.Sampler(torch, torch.device("cuda"), 2 * l2)
    led.set_lead(lead)
    res["lead_us"] = lead
    pairings(led, "predelay")
    res["lead_us_at_end"] = led.lead_us
    res["lead_short"] = led.lead_short
    for s in slots:
        res[f"host_{s}"] = median(host[s])
        res[f"host_max_{s}"] = max(host[s])

    # graphs: one call per replay
    for s, m in slots.items():
        try:
            graph, _ = cuda_timing.capture(torch, m, [xs], 1)
        except Exception as e:  # noqa: BLE001 -- a slot that cannot be captured is reported
            res[f"graph_{s}"] = f"not captured: {e}"
            continue
        v = []
        for k in range(rounds):
            v.append(sampler.sample(s, lambda: cuda_timing.replay(graph)))
        res[f"graph_{s}"] = median(v)
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--json")
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    clocks.watch(torch)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": []}
    with tempfile.TemporaryDirectory() as d:
        for name in a.cases.split(","):
            so = build(CASES[name][0], d)
            r = study(name, so, a.rounds)
            out["cases"].append(r)
            print(json.dumps(r, indent=1), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
