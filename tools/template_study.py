"""Measures kgate's Triton templates on their own, outside a run (GPU only).

For each shape and dtype: the template instantiated as `kgate run` would write it, its
error against float64 next to torch.compile's, its arrival counters after the call
(they must be back at zero), and do_bench medians of eager, torch.compile (default) and
the template over a small grid of its tunables, as % of measured copy bandwidth.

    python tools/template_study.py [--json OUT.json] [--quick] [--pipe]
    python tools/template_study.py --norm [--json OUT.json]

`--norm` studies the row-norm template on the official level-1 kernels it matches
(38_L1Norm_, 39_L2Norm_, 34_InstanceNorm: their captured entries and sources under
tests/fixtures/inductor/kb-level1, the problems' own sizes), against eager, torch.compile
default and max-autotune-no-cudagraphs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness", "python"))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from kgate_worker import inductor, templates  # noqa: E402

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def entry(rows: int, cols: int, log: bool, dt: str) -> dict:
    ops = ["prims.prepare_softmax_online", "aten.sub", "aten.exp",
           "aten._log_softmax" if log else "aten._softmax"]
    t = {"dtype": dt, "shape": [rows, cols], "stride": [cols, 1], "offset": 0}
    return {"name": "kgate_study_kernel", "category": "reduction", "aten_ops": ops,
            "args": [dict(t, name="in_ptr0", role="in"), dict(t, name="out_ptr0", role="out"),
                     {"name": "xnumel", "role": "scalar", "value": rows},
                     {"name": "r0_numel", "role": "scalar", "value": cols}]}


def load(text: str, tag: str):
    d = tempfile.mkdtemp(prefix="kgate_tpl_")
    path = os.path.join(d, f"{tag}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(tag, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def copy_bw() -> float:
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = do_bench(lambda: b.copy_(a), warmup=50, rep=300, return_mode="median")
    return 2 * a.numel() / (ms * 1e-3) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pipe", action="store_true",
                    help="on long rows only the default, the pipelined split and one "
                         "program per row")
    ap.add_argument("--norm", action="store_true",
                    help="the row-norm template on the official kernels it matches")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    dev = {"num_sms": props.multi_processor_count, "l2_bytes": props.L2_cache_size}
    bw = copy_bw()
    print(f"# {props.name}: {dev['num_sms']} SMs, L2 {dev['l2_bytes'] >> 20} MiB, copy "
          f"{bw:.0f} GB/s; torch {torch.__version__}, triton {triton.__version__}", flush=True)
    shapes = [(4096, 393216, "f32", False), (4096, 393216, "f32", True),
              (16, 4194304, "f32", True)]
    if not args.quick:
        shapes += [
              (8192, 8192, "f16", False), (4096, 32000, "f32", True),
              (1023, 4097, "f32", False), (1537, 1023, "f16", True), (4097, 1537, "bf16", False),
              (127, 50257, "bf16", True), (16, 4194304, "f32", False)]
    out = {"device": props.name, "copy_bw_gbps": bw, "torch": torch.__version__,
           "triton": triton.__version__, "cases": []}
    if args.norm:
        shapes = []
        study_norm(dev, bw, out)
    for rows, cols, dt, log in shapes:
        tag = f"{'logsoftmax' if log else 'softmax'}_{rows}x{cols}_{dt}"
        torch.manual_seed(0)
        x = (torch.randn(rows, cols, device="cuda") * 3).to(DT[dt])
        ref = (torch.log_softmax if log else torch.softmax)
        want = ref(x.double(), -1)
        fn = lambda t: ref(t, -1)  # noqa: E731
        torch._dynamo.reset()  # each case its own static compile
        comp = torch.compile(fn, dynamic=False)
        yc = comp(x)
        o = templates.offers(entry(rows, cols, log, dt), dev, inductor.kernel_header)[0]
        mod = load(o["text"], tag)
        launcher = getattr(mod, "kgate_study_kernel")
        y = torch.full_like(x, float("nan"))
        launcher.run(x, y, rows, cols)  # first call: grid sized
        y.fill_(float("nan"))
        launcher.run(x, y, rows, cols)
        torch.cuda.synchronize()
        st = next(iter(launcher.state.values()))
        err = float((y.double() - want).abs().max())
        err_c = float((yc.double() - want).abs().max())
        cnt_zero = bool((st[1] == 0).all())
        nbytes = 2 * x.numel() * x.element_size()
        t_e = do_bench(lambda: fn(x), return_mode="median")
        t_c = do_bench(lambda: comp(x), return_mode="median")
        case = {"case": tag, "default": {"SPLIT": mod.SPLIT, "XBLOCK": mod.XBLOCK,
                                          "BLOCK": mod.BLOCK, "NUM_WARPS": mod.NUM_WARPS,
                                          "OCCUPANCY": mod.OCCUPANCY}, "grid": st[4],
                "max_abs_err": err, "compile_max_abs_err": err_c, "counters_zero": cnt_zero,
                "eager_ms": t_e, "compile_ms": t_c, "configs": []}
        print(f"{tag}: err {err:.3g} (compile {err_c:.3g}), counters zero {cnt_zero}, "
              f"eager {t_e * 1e3:.1f} us, compile {t_c * 1e3:.1f} us "
              f"({nbytes / (t_c * 1e-3) / 1e9 / bw * 100:.0f}%)", flush=True)
        # a CUDA graph of the template (the timer captures small kernels): replays agree
        # and leave the counters at zero
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            launcher.run(x, y, rows, cols)
        y.fill_(float("nan"))
        g.replay()
        g.replay()
        torch.cuda.synchronize()
        case["graph_max_abs_err"] = float((y.double() - want).abs().max())
        case["graph_counters_zero"] = bool((st[1] == 0).all())
        print(f"  CUDA graph: err {case['graph_max_abs_err']:.3g}, counters zero "
              f"{case['graph_counters_zero']}", flush=True)
        del g
        # the 6th element: 0 without the pipelined split, else its L2 share
        d = (mod.SPLIT, mod.XBLOCK, mod.BLOCK, mod.NUM_WARPS, mod.OCCUPANCY,
             mod.PIPE * mod.L2_SHARE)
        # the pipelined split (PIPE 1) on every long-row case
        pipe_pts = [(0, 1, bl, w, occ, share) for share in (2, 4, 8)
                    for bl, w, occ in ((4096, 4, 4), (2048, 8, 4), (4096, 8, 4), (2048, 4, 8),
                                       (4096, 4, 8))] if cols > 16384 else []
        if args.pipe:
            grid_pts = [d] + pipe_pts + ([(1, 1, 8192, 16, 1, 0)] if cols > 16384 else [])
        elif cols > 16384 and not out["cases"]:  # a grid of the space
            grid_pts = [d] + [(0, xb, bl, w, occ, 0) for xb in (1, 2) for bl in (4096, 8192)
                              for w in (4, 8, 16) for occ in (2, 4)
                              if (0, xb, bl, w, occ, 0) != d and 8 <= xb * bl // (32 * w) <= 32]
            grid_pts += [(1, 1, 8192, 16, 1, 0), (1, 2, 2048, 8, 1, 0)] + pipe_pts
        else:  # the default and one step along each axis
            grid_pts = [d, (d[0], d[1] * 2) + d[2:], (d[0], d[1], max(1024, d[2] // 2)) + d[3:],
                        (d[0], d[1], d[2] * 2) + d[3:], d[:3] + (max(4, d[3] // 2),) + d[4:],
                        d[:3] + (min(32, d[3] * 2),) + d[4:],
                        d[:4] + (2 if d[4] != 2 else 4, d[5])] + pipe_pts
        grid_pts = list(dict.fromkeys(grid_pts))
        for sp, xb, bl, w, occ, pipe in grid_pts:
            mod.SPLIT, mod.XBLOCK, mod.BLOCK, mod.NUM_WARPS, mod.OCCUPANCY = sp, xb, bl, w, occ
            mod.PIPE, mod.L2_SHARE = int(pipe > 0), max(2, pipe)
            launcher.state.clear()
            t0 = time.perf_counter()
            try:
                launcher.run(x, y, rows, cols)
                torch.cuda.synchronize()
                y.fill_(float("nan"))
                launcher.run(x, y, rows, cols)
                e = float((y.double() - want).abs().max())
                t = do_bench(lambda: launcher.run(x, y, rows, cols), return_mode="median")
                for _ in range(3):  # races show as a wrong call now and then
                    y.fill_(float("nan"))
                    launcher.run(x, y, rows, cols)
                    e = max(e, float((y.double() - want).abs().max()))
            except Exception as ex:  # noqa: BLE001
                print(f"  SPLIT {sp} XBLOCK {xb} BLOCK {bl} warps {w} occ {occ} pipe {pipe}: "
                      f"{type(ex).__name__}: {str(ex)[:300]}")
                continue
            st = next(iter(launcher.state.values()))
            c = {"SPLIT": sp, "XBLOCK": xb, "BLOCK": bl, "NUM_WARPS": w, "OCCUPANCY": occ,
                 "PIPE": pipe,
                 "grid": st[4], "ms": t, "max_abs_err": e,
                 "pct_copy_bw": nbytes / (t * 1e-3) / 1e9 / bw * 100,
                 "vs_compile": t_c / t, "counters_zero": bool((st[1] == 0).all()),
                 "spin_timeouts": int(st[2].item()),
                 "first_s": time.perf_counter() - t0}
            case["configs"].append(c)
            print(f"  SPLIT {sp:2d} XBLOCK {xb} BLOCK {bl:5d} warps {w:2d} occ {occ} pipe {pipe} "
                  f"split {st[3]:3d} grid "
                  f"{st[4]:5d}: {t * 1e3:9.1f} us {c['pct_copy_bw']:5.1f}% "
                  f"{c['vs_compile']:.3f}x vs compile, err {e:.2g}, zero {c['counters_zero']}, "
                  f"spin timeouts {c['spin_timeouts']}",
                  flush=True)
        out["cases"].append(case)
        del x, y, want, yc
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


KB1 = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "inductor", "kb-level1")
NORM_CASES = {  # problem: (reference, the problem's get_inputs at its own sizes)
    "38_L1Norm_": (lambda x: x / torch.mean(torch.abs(x), dim=1, keepdim=True),
                   lambda: torch.rand(32768, 65535, device="cuda")),
    "39_L2Norm_": (lambda x: x / torch.norm(x, p=2, dim=1, keepdim=True),
                   lambda: torch.rand(32768, 65535, device="cuda")),
    "34_InstanceNorm": (lambda x: torch.nn.functional.instance_norm(x),
                        lambda: torch.rand(112, 64, 512, 512, device="cuda")),
}


def study_norm(dev: dict, bw: float, out: dict) -> None:
    """The row-norm offer for each official kernel it matches, timed over a walk of its
    tunables (one axis at a time from the default, as the tuner walks), beside eager,
    torch.compile default and max-autotune-no-cudagraphs on the same input."""
    for stem, (ref, make) in NORM_CASES.items():
        inv = json.load(open(os.path.join(KB1, f"{stem}.inventory.json")))
        pw = inductor.parse_wrapper(open(os.path.join(
            KB1, f"{stem}.cuda-2.11.0.g0.captured.py.txt")).read())
        e = inv["kernels"][0]
        src = {k.name: k.source for k in pw.kernels}[e["name"]]
        o = templates.offers(e, dev, inductor.kernel_header, src)[0]
        mod = load(o["text"], stem)
        launcher = getattr(mod, e["name"])
        torch.manual_seed(0)
        x = make()
        rows, cols = x.numel() // e["args"][-1]["value"], e["args"][-1]["value"]
        want = ref(x.double())
        y = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        case = {"case": stem, "why": o["why"], "configs": []}
        for label, fn in (("eager", lambda: ref(x)),):
            case[label + "_ms"] = do_bench(fn, return_mode="median")
        for label, mode in (("compile", "default"), ("max_autotune", "max-autotune-no-cudagraphs")):
            torch._dynamo.reset()
            comp = torch.compile(ref, mode=mode, dynamic=False)
            t0 = time.perf_counter()
            yc = comp(x)
            case[label + "_compile_s"] = time.perf_counter() - t0
            case[label + "_ms"] = do_bench(lambda: comp(x), return_mode="median")
            case[label + "_max_abs_err"] = float((yc.double() - want).abs().max())
            del yc
        tc = case["compile_ms"]
        print(f"{stem} ({o['why']}): eager {case['eager_ms'] * 1e3:.1f} us, compile "
              f"{tc * 1e3:.1f} us ({nbytes / (tc * 1e-3) / 1e9 / bw * 100:.0f}%), max-autotune "
              f"{case['max_autotune_ms'] * 1e3:.1f} us; compile err "
              f"{case['compile_max_abs_err']:.3g}", flush=True)
        names = ("BLOCK", "NUM_WARPS", "OCCUPANCY", "REVERSE", "NUM_STAGES")
        axes = {"BLOCK": (4096, 8192, 16384), "NUM_WARPS": (8, 16, 32),
                "OCCUPANCY": (0, 1, 2, 4), "REVERSE": (1, 0), "NUM_STAGES": (1, 2, 3)}
        best = {n: getattr(mod, n) for n in names}
        seen = {}

        def point(cfg):
            key = tuple(cfg[n] for n in names)
            if key in seen:
                return seen[key]
            for n in names:
                setattr(mod, n, cfg[n])
            launcher.grid.clear()
            t0 = time.perf_counter()
            try:
                y.fill_(float("nan"))
                launcher.run(x, y, rows, cols)
                err = float((y.double() - want.view(y.shape)).abs().max())
                t = do_bench(lambda: launcher.run(x, y, rows, cols), return_mode="median")
            except Exception as ex:  # noqa: BLE001
                print(f"  {cfg}: {type(ex).__name__}: {str(ex)[:200]}", flush=True)
                seen[key] = float("inf")
                return seen[key]
            c = dict(cfg, ms=t, max_abs_err=err, pct_copy_bw=nbytes / (t * 1e-3) / 1e9 / bw * 100,
                     vs_compile=tc / t, vs_max_autotune=case["max_autotune_ms"] / t,
                     first_s=time.perf_counter() - t0)
            case["configs"].append(c)
            print(f"  {' '.join(f'{n} {cfg[n]}' for n in names)}: {t * 1e3:8.1f} us "
                  f"{c['pct_copy_bw']:5.1f}% {c['vs_compile']:.3f}x vs compile "
                  f"{c['vs_max_autotune']:.3f}x vs max-autotune, err {err:.2g}", flush=True)
            seen[key] = t
            return t

        best_t = point(best)
        for _ in range(2):  # two sweeps of one axis at a time
            for n in names:
                for v in axes[n]:
                    cand = dict(best, **{n: v})
                    t = point(cand)
                    if t < best_t:
                        best, best_t = cand, t
        case["best"] = dict(best, ms=best_t)
        out["cases"].append(case)
        del x, y, want
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
