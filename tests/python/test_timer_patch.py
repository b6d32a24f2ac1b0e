"""Issue 16, timer patching: a candidate that rebinds the worker's clocks (time.perf_counter
& co., torch.cuda.Event, torch.cuda.synchronize, CUDA graphs) is rejected as a timer patch,
by the lint where the patch can be seen in the source, else by the worker's identity check
after the import, the constructor, each warm-up and each timed call; and the timing itself
never depends on the candidate's goodwill (the worker's own references).

The candidates are tests/redteam/timer/*.py, each with an `# expect: GATE | RULE | REASON`
line; this file runs on a CPU (test_timer_patch_cuda.py holds the GPU half)."""

from __future__ import annotations

import ast
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from conftest import REPO, Worker
from inproc import InProc
from kgate_worker import clocks, lint
from kgate_worker.protocol import WorkerError

TIMER = REPO / "tests" / "redteam" / "timer"
PROBLEM = TIMER / "problem.py"
QUICK = dict(warmup_s=0.01, min_time_s=0.05, max_time_s=1.0, min_samples=5)


def expectation(path: Path) -> tuple[str, str, str]:
    """(gate, rule or error kind, reason substring) from the file's `# expect:` line."""
    for line in path.read_text().splitlines():
        if line.startswith("# expect:"):
            gate, rule, reason = (x.strip() for x in line[len("# expect:"):].split("|"))
            return gate, rule, reason
    raise AssertionError(f"{path}: no '# expect:' line")


CANDIDATES = sorted(p for p in TIMER.glob("*.py") if p.name != "problem.py")


pytestmark = pytest.mark.usefixtures("clocks_intact")


@pytest.fixture(scope="module")
def w():
    return InProc()


def load(w: InProc, path: Path = PROBLEM, variant: str = "small") -> None:
    w.worker.fatal = ""
    w.load(path, variant=variant)
    assert w.compile(path, slot="baseline")["compiled"]


def judge(w: InProc, path: Path, **timing) -> tuple[str, str, str]:
    """What the worker made of a candidate: ('static', rule, message) for a compile finding,
    ('correctness', ...) for a failed check, ('performance', kind, message) for an error
    answer to `time`, ('pass', '-', '-') when it was timed."""
    c = w.compile(path)
    if not c["compiled"]:
        f = c["findings"][0] if c["findings"] else {"rule": "import", "message": c["log"]}
        return "static", f["rule"], f["message"]
    case = w.check(atol=1e-4, rtol=1e-4)
    if case["return_code"] != 0 or any(o["over_tol"] for o in case["outputs"]):
        return "correctness", "-", str(case)
    try:
        r = w("time", **(timing or QUICK))
    except WorkerError as e:
        return "performance", e.kind, e.message
    assert all(r["samples_us"][s] for s in ("candidate", "baseline")), r
    return "pass", "-", "-"


def test_the_corpus_covers_the_classes():
    names = {p.stem for p in CANDIDATES}
    assert len(CANDIDATES) >= 10, names
    gates = [expectation(p)[0] for p in CANDIDATES]
    assert {"static", "performance", "pass"} <= set(gates), gates


@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_redteam_candidate(w, path):
    load(w)
    gate, rule, reason = expectation(path)
    got = judge(w, path)
    assert got[0] == gate, got
    if gate != "pass":
        assert got[1] == rule and reason in got[2], got
    if gate in ("static", "performance") and got[1] in ("timer-patch", "no_candidate"):
        # seen at run time: the clocks are back, the slot is gone, the process is replaced
        assert clocks.tampered() == []
        assert "candidate" not in w.worker.slots
        assert w.worker.fatal.startswith("timer patch:")


def candidate(tmp_path, body: str, name: str = "cand.py") -> Path:
    """A correct ModelNew for the red-team problem (relu(a @ b)) whose forward runs `body`
    first, with `self.calls` counting its calls."""
    f = tmp_path / name
    f.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0

            def forward(self, a, b):
                self.calls += 1
        """) + textwrap.indent(textwrap.dedent(body), " " * 8) +
        "        return torch.relu(a @ b)\n")
    return f


def test_a_patch_between_samples_is_named_with_its_slot(w, tmp_path):
    cand = candidate(tmp_path, """
        if self.calls == 60:  # after the check's repeats and the warm-up
            exec("import time as t\\nr = t.perf_counter\\nt.perf_counter = lambda: r() / 2")
    """)
    load(w)
    gate, kind, msg = judge(w, cand, warmup_s=0.0, min_time_s=5.0, max_time_s=5.0,
                            min_samples=1000)
    assert (gate, kind) == ("performance", "no_candidate"), msg
    assert msg.startswith("timer patch: time.perf_counter was rebound by the candidate "
                          "(module attribute replaced) (after a timed call of slot "
                          "'candidate')"), msg


def test_timing_is_honest_even_unchecked(w, monkeypatch):
    """With the identity check switched off, the candidate that scales only its own samples
    (and does three times the work) is still measured as the slower one: the worker never
    reads the clock the candidate patched."""
    monkeypatch.setattr(clocks, "verify", lambda when="": None)
    load(w)
    # On a host so loaded that every call takes a scheduler-bound time (ctest -j2 beside
    # the end-to-end runs) both sides can read alike: timed up to three times, each with a
    # fresh copy of the candidate (its module installs the patch once).
    for _ in range(3):
        assert w.compile(TIMER / "scales_own_samples.py")["compiled"]
        w.check(atol=1e-4, rtol=1e-4)  # installs the patch
        assert clocks.tampered() != []
        r = w("time", **QUICK)
        clocks.restore()  # nobody checked, so nobody restored
        cand = statistics.median(r["samples_us"]["candidate"])
        base = statistics.median(r["samples_us"]["baseline"])
        if cand > 2 * base:
            break
    assert cand > 2 * base, (cand, base)


# ---- the identity check ------------------------------------------------------------------

def test_clocks_names_and_restores_each_kind_of_change():
    import time
    real_pc, real_mono = time.perf_counter, time.monotonic
    time.perf_counter = lambda: 0.0
    del time.monotonic
    torch.cuda.Event.elapsed_time = lambda s, e: 0.0
    torch.cuda.synchronize.__code__ = (lambda device=None: None).__code__
    sys.modules["time"] = type(sys)("time")
    try:
        got = clocks.tampered()
    finally:
        clocks.restore()
    assert got == [
        "time.perf_counter was rebound by the candidate (module attribute replaced)",
        "time.monotonic was rebound by the candidate (module attribute deleted)",
        "torch.cuda.Event.elapsed_time was rebound by the candidate (class attribute "
        "replaced)",
        "torch.cuda.synchronize.__code__ was rebound by the candidate (function code "
        "replaced)",
        "sys.modules['time'] was rebound by the candidate (sys.modules entry replaced)"]
    assert time.perf_counter is real_pc and time.monotonic is real_mono
    assert sys.modules["time"] is time
    assert "elapsed_time" in vars(torch.cuda.Event)
    assert clocks.tampered() == []


def test_a_shadowing_class_attribute_is_removed_on_restore():
    base = [k for k in torch.cuda.Event.__mro__ if "query" in k.__dict__]
    torch.cuda.Event.query = lambda self: True
    assert clocks.tampered() == ["torch.cuda.Event.query was rebound by the candidate "
                                 "(class attribute replaced)"]
    clocks.restore()
    assert [k for k in torch.cuda.Event.__mro__ if "query" in k.__dict__] == base


def test_a_pybind11_class_attribute_is_restored_through_its_metaclass():
    # torch.cuda.CUDAGraph's metaclass is pybind11's, which refuses type.__setattr__
    # (on the H200 every such restore raised TypeError and left the patch in place)
    g = torch.cuda.CUDAGraph
    assert type(g) is not type
    before = [k for k in g.__mro__ if "replay" in k.__dict__]
    g.replay = lambda self: None
    assert clocks.tampered() == ["torch.cuda.CUDAGraph.replay was rebound by the candidate "
                                 "(class attribute replaced)"]
    clocks.restore()
    assert clocks.tampered() == []
    assert [k for k in g.__mro__ if "replay" in k.__dict__] == before


def test_the_worker_clock_is_the_real_one_under_a_patch():
    import time
    time.perf_counter_ns = lambda: 0
    try:
        t0 = clocks.perf_counter_ns()
        sum(range(10000))
        assert clocks.perf_counter_ns() > t0
    finally:
        clocks.restore()


def test_watch_never_takes_a_patched_clock_as_the_original():
    import time
    time.perf_counter = lambda: 0.0
    try:
        clocks.watch(torch, triton=True)  # a second call adds nothing already taken
        assert clocks.tampered() != []
    finally:
        clocks.restore()


def test_source_line_points_into_an_exec_string(tmp_path):
    f = tmp_path / "c.py"
    f.write_text("import torch\nX = 1\nexec('import time; time.perf_counter_ns = id')\n")
    assert clocks.source_line(str(f), ["time.perf_counter_ns was rebound by ..."]) == 3
    assert clocks.source_line(str(f), ["sys.modules['time'] was rebound by ..."]) == 3
    assert clocks.source_line(str(tmp_path / "missing.py"), ["x was rebound"]) == 1


# ---- the lint ----------------------------------------------------------------------------

def findings(src: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.rule, f.message)
            for f in lint.lint(ast.parse(textwrap.dedent(src)), None)]


@pytest.mark.parametrize("code,shown", [
    ("import time\ntime.perf_counter = id", "assigns to time.perf_counter"),
    ("import time as t\nt.time_ns += 1", "assigns to time.time_ns"),
    ("import importlib\nm = importlib.import_module('time')\nsetattr(m, 'monotonic', id)",
     "setattr() on time.monotonic"),
    ("from importlib import import_module as im\nim('time').perf_counter = id",
     "assigns to time.perf_counter"),
    ("(t := __import__('time')).perf_counter_ns = id", "assigns to time.perf_counter_ns"),
    ("m = __import__('torch.cuda', fromlist=['x'])\nm.synchronize = id",
     "assigns to torch.cuda.synchronize"),
    ("import torch\nE = getattr(getattr(torch, 'cuda'), 'Event')\nE.record = id",
     "assigns to torch.cuda.Event.record"),
    ("import torch\ngetattr(torch.cuda, 'Event').elapsed_time = id",
     "assigns to torch.cuda.Event.elapsed_time"),
    ("import time\ntime.__dict__['perf_counter'] = id",
     "assigns to time.perf_counter through time.__dict__"),
    ("import time\nd = vars(time)\nd['time'] = id", "assigns to time.time through time.__dict__"),
    ("import time\nvars(time).update({'perf_counter': id})",
     "writes time.perf_counter through time.__dict__.update()"),
    ("import sys\nsys.modules['time'].perf_counter = id", "assigns to time.perf_counter"),
    ("import sys\nsys.modules['time'] = None", "assigns to sys.modules['time']"),
    ("import sys\nsys.modules.update(time=None)", "update() on sys.modules"),
    ("import torch\nobject.__setattr__(torch.cuda, 'synchronize', id)",
     "object.__setattr__() on torch.cuda.synchronize"),
    ("import torch\ntype.__setattr__(torch.cuda.Event, 'query', id)",
     "type.__setattr__() on torch.cuda.Event.query"),
    ("import torch\ntorch.cuda.__setattr__('current_stream', id)",
     "__setattr__() on torch.cuda.current_stream"),
    ("import torch\ns = setattr\ns(torch.cuda.CUDAGraph, 'replay', id)",
     "setattr() on torch.cuda.CUDAGraph.replay"),
    ("import torch\nname = 'Ev' + 'ent'\nsetattr(torch.cuda, name, id)",
     "setattr() on torch.cuda.<name computed at run time>"),
    ("import torch\ntorch.cuda.synchronize.__code__ = id.__code__",
     "assigns to torch.cuda.synchronize.__code__"),
    ("import time\ndel time.perf_counter", "deletes time.perf_counter"),
    ("import triton.testing\ntriton.testing.do_bench = id",
     "assigns to triton.testing.do_bench"),
    ("import torch\nclass M:\n    def forward(self, x):\n        torch.cuda.Event = id",
     "assigns to torch.cuda.Event"),
])
def test_lint_sees_a_timer_patch(code, shown):
    got = findings(code)
    assert len(got) == 1, got
    line, rule, msg = got[0]
    assert rule == "monkeypatch" and msg.startswith(f"timer patch: {shown}"), got


@pytest.mark.parametrize("code,rule,start", [
    ("import ctypes", "ctypes", "imports ctypes"),
    ("from ctypes import c_void_p", "ctypes", "imports ctypes"),
    ("import importlib\nimportlib.import_module('ctypes')", "ctypes", "imports ctypes"),
    ("import cffi", "ctypes", "imports cffi"),
    ("import kgate_worker.clocks", "monkeypatch", "imports kgate_worker.clocks"),
    ("import importlib\nimportlib.import_module('torch').matmul = id", "monkeypatch",
     "assigns to torch.matmul (patching torch is not allowed)"),
])
def test_lint_other_reaches(code, rule, start):
    got = findings(code)
    assert [(r, m.startswith(start)) for _, r, m in got] == [(rule, True)], got


def test_lint_leaves_reading_the_clocks_alone():
    assert findings("""
        import time
        import importlib
        import torch
        from time import perf_counter
        t0 = time.perf_counter()
        clock = time.perf_counter
        m = importlib.import_module("time")
        dt = m.perf_counter() - t0
        ev = torch.cuda.Event(enable_timing=True)
        ev.note = "own event"
        f32 = getattr(torch, "float32")
        d = dict(vars(time))
        d["perf_counter"] = None
        perf_counter = None
        stats = {}
        stats["time"] = perf_counter
    """) == []


# ---- the worker process and the gates ----------------------------------------------------

def test_worker_exits_after_answering_a_timer_patch(tmp_path):
    """The process that ran a patch serves no further request: it answers, then exits with
    status 3 so the orchestrator replays the set-up into a fresh one."""
    for name, op in (("exec_at_import.py", "compile"), ("lazy_forward.py", "time")):
        p = Worker(tmp_path / f"{name}.stderr")
        try:
            p.hello_cpu()
            p.ok("load_problem", problem={"id": "p", "kind": "kernelbench",
                                          "path": str(PROBLEM), "variant": "small"})
            assert p.ok("compile", slot="baseline", source_path=str(PROBLEM))["compiled"]
            c = p.ok("compile", slot="candidate", source_path=str(TIMER / name))
            if op == "compile":
                assert c["compiled"] is False and c["findings"][0]["rule"] == "timer-patch"
            else:
                assert c["compiled"] is True
                assert "timer patch:" in p.error("time", "no_candidate", **QUICK)
            assert p.proc.wait(timeout=30) == 3
            assert "a fresh worker replaces this one" in p.stderr()
        finally:
            p.kill()
            p.close()


KGATE = Path(os.environ.get("KGATE_BIN", REPO / "build" / "kgate"))


@pytest.mark.skipif(not KGATE.is_file(), reason="no kgate build (build/kgate or KGATE_BIN)")
@pytest.mark.parametrize("name,code,verdict", [
    ("exec_at_import.py", 1, "verdict: FAIL at the static gate: static: "),
    ("lazy_forward.py", 1, "verdict: FAIL at the performance gate: performance: case "
                           "small/f32: while timing: no_candidate: timer patch: "),
    ("unusual_reads_clock.py", 0, "verdict: PASS"),
])
def test_kgate_bench_names_the_timer_patch(name, code, verdict):
    r = subprocess.run([str(KGATE), "bench", "--problem", str(PROBLEM), "--candidate",
                        str(TIMER / name), "--device", "cpu", "--min-time", "0.2",
                        "--max-time", "2", "--seed", "1"], cwd=REPO, capture_output=True,
                       text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == code and verdict in out, out[-3000:]
    if code:
        assert "timer patch: time.perf_counter_ns was rebound by the candidate" in out, out
