"""The worker on a CUDA device: hello, poisoned checks, event and CUDA-graph timing, the
graph fallback, the side-stream check and the exit after a sticky device error.

Skipped without a GPU; KGATE_REQUIRE_GPU=1 (tools/gpu-session.sh) turns the skip into a
failure so a GPU runner cannot pass these by not running them."""

import os

import pytest
import torch

from conftest import skip_module_without_cuda, CAND, KB, Worker

skip_module_without_cuda()

FAST = dict(warmup_s=0.02, min_time_s=0.1, max_time_s=3.0, min_samples=20,
            max_samples=5000, target_rse=0.01, flush_l2=True, input_sets=2)


@pytest.fixture(scope="module")
def cuda_worker(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cuda")
    w = Worker(tmp / "worker.stderr")
    r = w.ok("hello", backend="cuda", device_index=0, cache_dir=str(tmp / "cache"))
    assert r["backend"] == "cuda", r
    yield w
    w.kill()
    w.close()


def load(w: Worker, name: str = "relu.py", variant: str = "") -> dict:
    r = w.ok("load_problem", problem={"id": name, "kind": "kernelbench",
                                      "path": str(KB / name), "variant": variant})
    assert w.ok("compile", slot="baseline", source_path=str(KB / name))["compiled"]
    return r


@pytest.fixture
def own_worker(tmp_path):
    """A worker of the test's own, with the small ReLU problem loaded: for tests that end
    with the worker exiting (after a sticky fault, after a failed graph capture)."""
    w = Worker(tmp_path / "own.stderr")
    w.ok("hello", backend="cuda", device_index=0)
    load(w, variant="small")
    yield w
    w.kill()
    w.close()


def test_hello_describes_the_gpu(tmp_path):
    w = Worker(tmp_path / "w.stderr")
    try:
        r = w.ok("hello", backend="cuda", device_index=0)
        d = r["device"]
        assert d["cc"].count(".") == 1 and d["sm_count"] > 0 and d["l2_bytes"] > 0
        assert d["memory_bytes"] > 0 and d["copy_bandwidth_gbps"] > 100, d
        assert d["driver"], d
    finally:
        w.kill()
        w.close()


def test_check_on_device_passes_and_fails(cuda_worker):
    load(cuda_worker)
    assert cuda_worker.compile_candidate("relu_clamp.py")["compiled"]
    c = cuda_worker.check(dist="signed")
    assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0, c
    assert c["deterministic"] and not c["inputs_modified"]
    assert cuda_worker.compile_candidate("relu_wrong.py")["compiled"]
    c = cuda_worker.check(dist="signed")
    assert c["outputs"][0]["over_tol"] > 0, c


def test_microsecond_calls_are_timed_in_graph_batches(cuda_worker):
    load(cuda_worker, variant="small")  # 4 x 64: a launch-bound call
    cuda_worker.compile_candidate("relu_clamp.py")
    r = cuda_worker.ok("time", slots=["candidate", "baseline"], **FAST)
    assert r["return_code"] == 0, r["timer_note"]
    assert r["timer"] == "cuda_graph" and r["batch"] >= 10, r
    s = r["samples_us"]
    assert len(s["candidate"]) == len(s["baseline"]) >= 20
    # a graph replay amortises the launch: a few µs per call at most
    assert 0 < sorted(s["baseline"])[len(s["baseline"]) // 2] < 10, s["baseline"][:10]
    assert not r["side_stream_work"]
    e = cuda_worker.ok("time", slots=["baseline"], cuda_graph=False, **FAST)
    assert e["timer"] == "cuda_event" and e["batch"] == 1


def test_full_size_relu_streams_at_copy_speed(cuda_worker):
    load(cuda_worker)  # 256 x 16384 f32: 32 MB moved, a few µs at HBM speed
    cuda_worker.compile_candidate("relu_clamp.py")
    r = cuda_worker.ok("time", slots=["candidate", "baseline"], dtype="f32", **FAST)
    assert r["return_code"] == 0, r["timer_note"]
    assert r["min_bytes"] == 2 * 256 * 16384 * 4
    # graph batches or events, the per-call time cannot beat the copy bandwidth
    med = sorted(r["samples_us"]["baseline"])[len(r["samples_us"]["baseline"]) // 2]
    assert med > r["min_bytes"] / 6e12 * 1e6, (med, r["timer"], r["batch"])


def test_uncapturable_candidate_falls_back_to_events(own_worker):
    # Its own worker: a failed capture leaves torch's CUDA generators unusable, so the
    # worker answers and then exits for a fresh one (the orchestrator replays the set-up).
    w = own_worker
    assert w.compile_candidate("relu_host_sync.py")["compiled"]
    r = w.ok("time", slots=["candidate", "baseline"], **FAST)
    assert r["return_code"] == 0, r["timer_note"]
    assert r["timer"] == "cuda_event" and r["batch"] == 1, r
    assert "CUDA graph capture not usable (slot 'candidate'" in r["timer_note"], r
    assert len(r["samples_us"]["candidate"]) >= 20
    assert w.proc.wait(timeout=60) == 3, w.stderr()
    assert "CUDA graph capture failed" in w.stderr()


def test_side_stream_work_is_flagged(cuda_worker):
    load(cuda_worker, variant="small")
    assert cuda_worker.compile_candidate("relu_side_stream.py")["compiled"]
    r = cuda_worker.ok("time", slots=["candidate", "baseline"], cuda_graph=False, **FAST)
    assert r["return_code"] == 0, r["timer_note"]
    assert r["side_stream_work"] is True, r
    assert "side-stream check" in r["timer_note"] and "candidate:" in r["timer_note"]
    cuda_worker.compile_candidate("relu_clamp.py")
    r = cuda_worker.ok("time", slots=["candidate", "baseline"], cuda_graph=False, **FAST)
    assert r["side_stream_work"] is False, r


def test_sticky_error_answers_then_exits(own_worker):
    w = own_worker
    assert w.compile_candidate("relu_illegal_address.py")["compiled"]
    c = w.check()
    assert c["return_code"] == 1 and c["error"], c
    assert w.proc.wait(timeout=60) == 3, w.stderr()
    assert "CUDA context unusable" in w.stderr()


def test_triton_solution_on_device(cuda_worker):
    sol = KB.parents[2] / "kernelbench"
    r = cuda_worker.ok("load_problem", problem={
        "id": "18_Softmax", "kind": "kernelbench",
        "path": str(sol / "level1" / "18_Softmax.py"), "variant": ""})
    assert r["degenerate"] == ""
    assert cuda_worker.ok("compile", slot="baseline",
                          source_path=str(sol / "level1" / "18_Softmax.py"))["compiled"]
    assert cuda_worker.ok("compile", slot="candidate", source_path=str(
        sol / "solutions" / "level1" / "18_Softmax.py"))["compiled"]
    c = cuda_worker.check(atol=1e-5, rtol=1e-5)
    assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0, c
    r = cuda_worker.ok("time", slots=["candidate", "baseline"], **FAST)
    assert r["return_code"] == 0, r["timer_note"]
    assert r["timer"] == "cuda_event", r


def _problem(tmp_path, text: str):
    import ast
    import types
    from kgate_worker.worker import Problem, _torch
    _torch()  # the worker imports torch lazily (after hello); this test skips hello
    path = tmp_path / "init_probe.py"
    path.write_text(text)
    mod = types.ModuleType("init_probe")
    exec(compile(text, str(path), "exec"), mod.__dict__)
    p = Problem(str(path), mod, ast.parse(text), False)
    p.init_inputs = list(mod.get_init_inputs())
    return p, mod


_INIT_PROBE = '''
import torch
class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)
        self.built_on = torch.empty(0).device.type
    def forward(self, x):
        return self.lin(x)
class ModelNew(torch.nn.Module):  # other names, the same draws in the same order
    def __init__(self, n):
        super().__init__()
        self.w = torch.nn.Parameter(torch.empty(n, n))
        self.b = torch.nn.Parameter(torch.empty(n))
        torch.nn.init.kaiming_uniform_(self.w, a=5 ** 0.5)
        bound = 1 / n ** 0.5
        torch.nn.init.uniform_(self.b, -bound, bound)
class Broken(Model):
    def __init__(self, n):
        raise ValueError("broken everywhere")
class HostOnly(Model):
    def __init__(self, n):
        super().__init__(n)
        self.table = torch.arange(4).numpy()  # only a host tensor converts to numpy
def get_init_inputs():
    return [64]
def get_inputs():
    return [torch.randn(8, 64)]
'''


def test_models_are_built_on_the_device_with_reproducible_weights(tmp_path):
    p, mod = _problem(tmp_path, _INIT_PROBE)
    dev = torch.device("cuda")
    a, b = p.new_model(mod.Model, dev), p.new_model(mod.Model, dev)
    assert a.built_on == "cuda" and not p.init_on_host
    assert a.lin.weight.device.type == "cuda"
    assert torch.equal(a.lin.weight, b.lin.weight) and torch.equal(a.lin.bias, b.lin.bias)
    # KernelBench's convention: a ModelNew drawing its parameters in the Model's order
    # gets the Model's weights even where its names differ.
    n = p.new_model(mod.ModelNew, dev)
    assert torch.equal(n.w, a.lin.weight) and torch.equal(n.b, a.lin.bias)


def test_a_constructor_that_fails_on_the_device_moves_the_problem_to_the_host(tmp_path):
    p, mod = _problem(tmp_path, _INIT_PROBE)
    dev = torch.device("cuda")
    # A constructor that fails on the host as well raises its own error, problem unmoved.
    with pytest.raises(ValueError, match="broken everywhere"):
        p.new_model(mod.Broken, dev)
    assert not p.init_on_host
    m = p.new_model(mod.HostOnly, dev)
    assert "failed when constructed on the device" in p.init_on_host, p.init_on_host
    assert m.built_on == "cpu" and m.lin.weight.device.type == "cuda"
    # From then on every model of the problem draws on the host: the weights agree.
    r = p.new_model(mod.Model, dev)
    assert r.built_on == "cpu" and torch.equal(r.lin.weight, m.lin.weight)


# ---- the sandbox's device memory cap (KGATE_SANDBOX_GPU_MEMORY_MB) -------------------------

RAISE_CAP = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        # the name built at run time, past the lint's memory-cap rule
        getattr(torch.cuda, "set_per_process_" + "memory_fraction")(1.0)
        return x.clamp(min=0)  # the problem's own op (relu) is the reference-op rule's
'''

OVER_CAP = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        pad = torch.empty(3 << 30, dtype=torch.uint8, device=x.device)  # 3 GiB: over the cap
        return x.clamp(min=0) + pad[:1].float() * 0
'''


@pytest.fixture
def capped_worker(tmp_path):
    """A worker capped at 2 GiB of device memory, the small ReLU problem loaded."""
    w = Worker(tmp_path / "capped.stderr", extra_env={"KGATE_WORKER_GPU_MEMORY_MB": "2048"})
    r = w.ok("hello", backend="cuda", device_index=0)
    assert r["device"]["memory_cap_bytes"] == 2048 << 20, r["device"]
    load(w, variant="small")
    yield w
    w.kill()
    w.close()


def check_capped(w: Worker, tmp_path, text: str) -> dict:
    f = tmp_path / "capped_candidate.py"
    f.write_text(text)
    assert w.ok("compile", slot="candidate", source_path=str(f))["compiled"]
    return w.check()


def test_a_candidate_that_raises_the_memory_cap_is_rejected(capped_worker, tmp_path):
    c = check_capped(capped_worker, tmp_path, RAISE_CAP)
    assert c["return_code"] == 1 and c["error"].startswith(
        "memory cap: the worker's device memory cap was changed"), c


def test_a_candidate_over_the_memory_cap_runs_out_of_memory_and_is_rejected(capped_worker,
                                                                              tmp_path):
    """3 GiB in a 2 GiB worker: out of memory where the reference runs, so rejected."""
    c = check_capped(capped_worker, tmp_path, OVER_CAP)
    assert c["return_code"] == 1 and c["error"].startswith(
        "out of device memory on inputs the reference runs in the same worker"), c


SLICED = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn(512, 262144)]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("body,free,dest", [
    ("torch.softmax(x, dim=1)", 768 << 20, "on the host"),  # 1 GiB truth: kept on the host
    ("x.sum(dim=1)", 512 << 20, "on the device"),           # 4 KiB truth: on the device
])
def test_a_truth_too_big_for_the_device_is_computed_there_in_slices(tmp_path, body, free,
                                                                     dest):
    """The device's free memory faked below one float64 run of the whole batch (512 MiB
    of float32 input, 1 GiB in float64): the truth is computed on the device in slices of
    rows, equals the whole run's, and the reference as its own candidate passes."""
    from inproc import InProc, as_model_new
    src = tmp_path / "sliced.py"
    src.write_text(SLICED.format(body=body))
    w = InProc(backend="cuda")
    w.worker._device_free = lambda: free
    r = w.load(src)
    p = w.worker.problem
    assert r["truth"] == "sliced" and "slices of at most" in r["truth_note"], r
    assert ("kept on the host" in r["truth_note"]) == (dest == "on the host")
    assert w.compile(as_model_new(src, tmp_path / "cand.py"), reference_op_rule=False)[
        "compiled"]
    case = w.check(atol=1e-4, rtol=1e-4)
    assert case["return_code"] == 0 and not case["cannot_judge"], case
    assert all(o["over_tol"] == 0 for o in case["outputs"]), case
    inputs = w.worker.draw_inputs(7, "problem", torch.float32)
    sliced = w.worker.truth(7, "problem", torch.float32, inputs)
    del w.worker._device_free
    whole = w.worker._run_f64(p, inputs, host=False)
    assert torch.allclose(sliced[0].to(whole[0].device), whole[0], rtol=1e-12, atol=1e-12)
