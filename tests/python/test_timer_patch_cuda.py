"""Issue 16, timer patching on a GPU: the red-team corpus against a CUDA worker (event and
CUDA-graph timing), lazy patches of torch.cuda.Event.elapsed_time, torch.cuda.synchronize
and CUDAGraph.replay, event timing that stays honest with the identity check switched off,
and a correct candidate that times itself with its own CUDA events.

Skipped without a GPU; KGATE_REQUIRE_GPU=1 turns the skip into a failure:
    KGATE_REQUIRE_GPU=1 .venv/bin/python -m pytest -q tests/python/test_timer_patch_cuda.py
"""

from __future__ import annotations

import statistics

import pytest

from conftest import skip_module_without_cuda

skip_module_without_cuda()

from inproc import InProc  # noqa: E402
from kgate_worker import clocks  # noqa: E402
from test_timer_patch import (CANDIDATES, candidate, clocks_intact,  # noqa: E402,F401
                              expectation, judge, load)

EVENTS = dict(warmup_s=0.02, min_time_s=0.1, max_time_s=3.0, min_samples=20,
              max_samples=5000, target_rse=0.01, flush_l2=True, input_sets=2,
              cuda_graph=False)
GRAPHS = dict(EVENTS, cuda_graph=True)


@pytest.fixture(scope="module")
def cw():
    w = InProc(backend="cuda")
    assert w.hello["backend"] == "cuda"
    return w


@pytest.mark.parametrize("timing", [EVENTS, GRAPHS], ids=["events", "graphs"])
@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_redteam_candidate_on_cuda(cw, path, timing):
    load(cw)
    gate, rule, reason = expectation(path)
    got = judge(cw, path, **timing)
    assert got[0] == gate, got
    if gate != "pass":
        assert got[1] == rule and reason in got[2], got


@pytest.mark.parametrize("patch,named", [
    ("E = torch.cuda.Event\nr = E.elapsed_time\nE.elapsed_time = lambda s, e: r(s, e) / 2",
     "torch.cuda.Event.elapsed_time"),
    ("torch.cuda.synchronize = lambda device=None: None", "torch.cuda.synchronize"),
    ("G = torch.cuda.CUDAGraph\nG.replay = lambda self: None", "torch.cuda.CUDAGraph.replay"),
    ("E = torch.cuda.Event\nE.record = lambda self, stream=None: None",
     "torch.cuda.Event.record"),
])
def test_lazy_gpu_clock_patch_is_rejected(cw, tmp_path, patch, named):
    cand = candidate(tmp_path, f"""
        if self.calls == 2:
            exec({patch!r}, {{"torch": torch}})
    """)
    load(cw)
    gate, kind, msg = judge(cw, cand, **GRAPHS)
    assert (gate, kind) == ("performance", "no_candidate"), msg
    assert msg.startswith(f"timer patch: {named} was rebound by the candidate"), msg
    assert clocks.tampered() == []


def test_event_timing_is_honest_even_unchecked(cw, tmp_path, monkeypatch):
    """The candidate does three times the work and divides the elapsed time of its own
    samples by ten; with the identity check off it is still measured as the slower one."""
    monkeypatch.setattr(clocks, "verify", lambda when="": None)
    cand = candidate(tmp_path, """
        if self.calls == 1:  # through exec: the static gate would see it written plainly
            exec("E = torch.cuda.Event\\nr = E.elapsed_time\\n"
                 "E.elapsed_time = lambda s, e: r(s, e) / 10", {"torch": torch})
        for _ in range(2):
            torch.relu(a @ b)
    """)
    load(cw)
    assert cw.compile(cand)["compiled"]
    cw.check(atol=1e-4, rtol=1e-4)
    assert clocks.tampered() != []
    r = cw("time", **EVENTS)
    clocks.restore()
    c = statistics.median(r["samples_us"]["candidate"])
    b = statistics.median(r["samples_us"]["baseline"])
    assert c > 2 * b, (c, b)


def test_own_cuda_events_pass(cw, tmp_path):
    """Correct but unusual: times its first call with CUDA events of its own."""
    cand = candidate(tmp_path, """
        if self.calls == 1:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            torch.relu(a @ b)
            end.record()
            end.synchronize()
            self.first_call_ms = start.elapsed_time(end)
    """)
    load(cw)
    for timing in (EVENTS, GRAPHS):
        assert judge(cw, cand, **timing) == ("pass", "-", "-")
