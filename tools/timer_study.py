#!/usr/bin/env python3
"""Side-by-side timer study on a GPU (issue: measurement you can gate CI on).

One kernel (the softmax CUDA starter, fp16) at four size classes (~5 us, 50 us, 500 us,
5 ms), measured by four methods in one process run:
  kgate      kgate-native's `time` request (events, L2 flush, adaptive stopping, graphs
             for us-scale kernels): the median it reports
  do_bench   triton.testing.do_bench with default settings (mean)
  kb_event   KernelBench-style: 3 warm-ups, 100 trials, events, 256 MB flush, mean
  reference  CUDA graph of [flush, call] x N minus graph of [flush] x N, per call
Each method is repeated REPEATS times (TIMER_CLASSES=500us,5ms picks classes); reported:
median value, CV over repeats, error against the reference, and wall time per measurement.
Writes a JSON and a Markdown table into OUT (argv[1]).
"""
import ctypes, json, os, statistics, subprocess, sys, time

import torch
import triton.testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
NATIVE = os.environ.get("KGATE_NATIVE_BIN", os.path.join(ROOT, "build", "kgate-native"))
REPEATS = int(os.environ.get("REPEATS", "20"))
STARTERS = os.path.join(ROOT, "kernelbench", "native", "starters")


class KTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8)]


def ktensor(t):
    k = KTensor()
    k.data = t.data_ptr()
    k.dtype = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2}[t.dtype]
    k.ndim = t.dim()
    for i, (s, st) in enumerate(zip(t.shape, t.stride())):
        k.shape[i] = s
        k.strides[i] = st
    return k


def build_so(src):
    so = os.path.join("/tmp", "kgate_timer_study_" + os.path.basename(src) + ".so")
    subprocess.check_call(["nvcc", "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                           "-gencode", "arch=compute_90,code=sm_90", "-lcublas",
                           "-I", os.path.join(ROOT, "harness", "include"), src, "-o", so])
    lib = ctypes.CDLL(so)
    lib.kgate_run.restype = ctypes.c_int
    return lib


class Native:
    """Minimal client of kgate-native's JSON-lines protocol."""

    def __init__(self):
        self.p = subprocess.Popen([NATIVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.id = 0

    def call(self, op, **params):
        self.id += 1
        req = dict(params, v=1, id=self.id, op=op)
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        resp = json.loads(self.p.stdout.readline())
        if not resp.get("ok"):
            raise RuntimeError(f"{op}: {resp.get('error')}")
        return resp["result"]

    def close(self):
        try:
            self.call("shutdown")
        except Exception:
            pass
        self.p.wait(timeout=30)


def kb_event(fn, flush):
    times = []
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    for _ in range(100):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1000.0)
    return statistics.mean(times)


def graph_reference(fn, flush, n):
    def capture(body):
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            body()  # warm
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=s):
                body()
        torch.cuda.synchronize()
        return g

    def both():
        for _ in range(n):
            flush.zero_()
            fn()

    def only_flush():
        for _ in range(n):
            flush.zero_()

    g_both, g_flush = capture(both), capture(only_flush)

    def t(g):
        vals = []
        for _ in range(7):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            g.replay()
            e.record()
            torch.cuda.synchronize()
            vals.append(s.elapsed_time(e) * 1000.0)
        return statistics.median(vals)

    return (t(g_both) - t(g_flush)) / n


CLASSES = [
    # label, op, starter file, dims, dtype
    ("5us", "softmax", "softmax.cu", {"R": 256, "C": 2048}, "f16"),
    ("50us", "softmax", "softmax.cu", {"R": 8192, "C": 8192}, "f16"),
    ("500us", "softmax", "softmax.cu", {"R": 32768, "C": 16384}, "f16"),
    ("5ms", "matmul", "matmul_cublas.cu", {"M": 12288, "N": 12288, "K": 12288}, "bf16"),
]
# TIMER_CLASSES=500us,5ms runs a subset (a session's device time may not fit all four)
if os.environ.get("TIMER_CLASSES"):
    _only = os.environ["TIMER_CLASSES"].split(",")
    CLASSES = [c for c in CLASSES if c[0] in _only]
TORCH_DTYPE = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def torch_tensors(op, d, dt):
    dev = torch.device("cuda")
    if op == "softmax":
        x = torch.randn(d["R"], d["C"], device=dev, dtype=dt)
        return [x], [torch.empty_like(x)], lambda i, o: torch.allclose(
            o[0].float(), torch.softmax(i[0].float(), dim=1), atol=2e-3)
    a = torch.randn(d["M"], d["K"], device=dev, dtype=dt)
    b = torch.randn(d["K"], d["N"], device=dev, dtype=dt)
    c = torch.empty(d["M"], d["N"], device=dev, dtype=dt)
    return [a, b], [c], lambda i, o: (o[0].float() - (i[0] @ i[1]).float()).abs().max().item() < 1.0


def main():
    os.makedirs(OUT, exist_ok=True)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    native = Native()
    hello = native.call("hello", backend="cuda", device_index=0)
    rows = []
    for label, op, src_name, dims, dtype in CLASSES:
        src = os.path.join(STARTERS, src_name)
        lib = build_so(src)
        native.call("load_problem", problem={"id": op, "kind": "native", "op": op})
        native.call("compile", slot="candidate", source_path=src, defines={})
        ins, outs, ok = torch_tensors(op, dims, TORCH_DTYPE[dtype])
        kin = (KTensor * len(ins))(*[ktensor(t) for t in ins])
        kout = (KTensor * len(outs))(*[ktensor(t) for t in outs])

        def fn():
            rc = lib.kgate_run(kin, len(ins), kout, len(outs),
                               ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
            assert rc == 0, rc

        fn()
        torch.cuda.synchronize()
        assert ok(ins, outs), f"{label}: kernel output wrong"
        n_graph = 200 if label in ("5us", "50us") else 20
        ref = statistics.median(graph_reference(fn, flush, n_graph) for _ in range(3))
        methods = {
            "kgate": lambda: statistics.median(native.call(
                "time", slots=["candidate"], dims=dims, dtype=dtype, seed=1,
                min_time_s=0.1, max_time_s=2.0)["samples_us"]["candidate"]),
            "do_bench": lambda: triton.testing.do_bench(fn) * 1000.0,
            "kb_event": lambda: kb_event(fn, flush),
        }
        shape = "x".join(str(v) for v in dims.values())
        for name, m in methods.items():
            vals, walls = [], []
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                vals.append(m())
                walls.append(time.perf_counter() - t0)
            med = statistics.median(vals)
            rows.append({"class": label, "op": op, "shape": shape, "dtype": dtype,
                         "method": name, "median_us": med,
                         "cv_pct": 100 * statistics.pstdev(vals) / statistics.mean(vals),
                         "err_vs_ref_pct": 100 * (med / ref - 1), "ref_us": ref,
                         "wall_s": statistics.median(walls), "values_us": vals})
            print(f"{label:>6} {op:>8} {name:>9}: {med:10.2f} us  cv {rows[-1]['cv_pct']:5.2f}%  "
                  f"err {rows[-1]['err_vs_ref_pct']:+7.2f}%  ref {ref:9.2f}  "
                  f"wall {rows[-1]['wall_s']*1000:7.1f} ms", flush=True)
        del ins, outs, kin, kout
        torch.cuda.empty_cache()
    native.close()
    with open(os.path.join(OUT, "timer_study.json"), "w") as f:
        json.dump({"version": 1, "device": hello.get("device"), "torch": torch.__version__,
                   "triton": triton.__version__, "repeats": REPEATS, "rows": rows}, f, indent=1)
    with open(os.path.join(OUT, "timer_study.md"), "w") as f:
        f.write("| class | op | shape | dtype | method | median µs | CV % | error vs graph ref % | wall ms |\n")
        f.write("|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['class']} | {r['op']} | {r['shape']} | {r['dtype']} | {r['method']} | "
                    f"{r['median_us']:.2f} | {r['cv_pct']:.2f} | {r['err_vs_ref_pct']:+.2f} | "
                    f"{r['wall_s']*1000:.0f} |\n")


if __name__ == "__main__":
    main()
