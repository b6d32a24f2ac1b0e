"""Unit tests of the worker's pure functions: lint, source rewrites, error statistics."""

import ast
import json
import math
import textwrap

import pytest
import torch

from conftest import CAND, KB, REPO
from kgate_worker import lint, source, stats
from kgate_worker.protocol import WorkerError, encode, param, parse_request


def L(text: str):
    return lint.lint(ast.parse(textwrap.dedent(text)), None)


def rules(findings):
    return [(f.line, f.rule) for f in findings]


# ---- lint -----------------------------------------------------------------------------

def ref_op_of(text: str):
    return lint.reference_op(ast.parse(textwrap.dedent(text)))


HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("forward,expected", [
    ("return torch.relu(x)", "relu"),
    ("return F.softmax(x, dim=1)", "softmax"),
    ("return torch.matmul(x, x)", "matmul"),
    ("return x @ x", "matmul"),
    ("return torch.bmm(x, x)", "matmul"),
    ("return self.conv(x)", "conv2d"),
    ("return x.view(-1).sum(dim=0)", "sum"),
    ("return torch.relu(self.conv(x))", None),
    ("return torch.matmul(x, x) * 2 + torch.sigmoid(x)", None),
    ("return self.seq(x)", None),
])
def test_reference_op_detection(forward, expected):
    src = HEAD + textwrap.dedent(f"""
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
            self.seq = nn.Sequential(nn.ReLU())
        def forward(self, x):
            {forward}
    """)
    assert lint.reference_op(ast.parse(src)) == expected


def test_reference_op_of_fixture_problems():
    assert lint.reference_op(ast.parse((KB / "relu.py").read_text())) == "relu"
    assert lint.reference_op(ast.parse((KB / "linear_relu.py").read_text())) is None


def cand(body: str) -> str:
    return HEAD + textwrap.dedent(body)


def test_reference_op_finding_forms():
    for call in ("torch.relu(x)", "F.relu(x)", "x.relu()", "x.relu_()", "torch.nn.functional.relu(x)"):
        f = lint.lint(ast.parse(cand(f"""
        class ModelNew(nn.Module):
            def forward(self, x):
                return {call}
        """)), "relu")
        assert rules(f) == [(7, "reference-op")], call
    # calling an nn.ReLU module instance counts; constructing one alone does not
    f = lint.lint(ast.parse(cand("""
    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU()
        def forward(self, x):
            return self.act(x)
    """)), "relu")
    assert rules(f) == [(10, "reference-op")]
    # holding an nn.Conv2d for its weights and calling another op is fine
    f = lint.lint(ast.parse(cand("""
    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
        def forward(self, x):
            return my_kernel(x, self.conv.weight)
    """)), "conv2d")
    assert f == []
    # other ops and multi-op problems: no finding
    f = lint.lint(ast.parse(cand("""
    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.matmul(x, x).clamp(min=0)
    """)), None)
    assert f == []


def test_reference_op_ignores_triton_and_copied_model():
    f = lint.lint(ast.parse(cand("""
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr):
        tl.softmax(tl.load(x_ptr))

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, 1)

    class ModelNew(nn.Module):
        def forward(self, x):
            return x
    """)), "softmax")
    assert f == []


def test_stream_rule():
    f = L("""
    import torch
    from torch.cuda import Stream
    def f(x):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            pass
        torch.cuda.current_stream()
    """)
    assert rules(f) == [(3, "stream"), (5, "stream"), (6, "stream")]


def test_swallow_rule():
    f = L("""
    for i in range(3):
        try:
            pass
        except Exception:
            pass
        try:
            pass
        except (ValueError, KeyError):
            ...
        try:
            pass
        except Exception:
            continue
        try:
            pass
        except Exception:
            raise
        try:
            pass
        except Exception as e:
            print(e)
    """)
    assert rules(f) == [(5, "swallow"), (9, "swallow"), (13, "swallow")]


def test_monkeypatch_rule():
    f = L("""
    import time
    import torch
    import torch.nn.functional as F
    from torch import cuda
    import triton
    time.perf_counter = lambda: 0
    torch.cuda.Event = object
    F.relu = None
    cuda.synchronize = None
    setattr(torch, "matmul", None)
    triton.testing.do_bench = None
    torch.backends.cudnn.benchmark = True
    x = object()
    x.attr = 1
    self_like = {}
    """)
    assert rules(f) == [(7, "monkeypatch"), (8, "monkeypatch"), (9, "monkeypatch"),
                        (10, "monkeypatch"), (11, "monkeypatch"), (12, "monkeypatch"),
                        (13, "monkeypatch")]


def test_introspection_rule_refuses_object_lists_and_frames_not_gc_itself():
    got = rules(L("""
        import gc, sys, inspect
        from gc import get_referrers
        def f(x):
            gc.collect()
            gc.disable()
            objs = gc.get_objects()
            up = sys._getframe(1).f_back
            fn = getattr(gc, "get_referents")
            g = getattr(sys, "_" + "getframe")
            here = inspect.currentframe()
            return inspect.signature(f), x.f_globals
    """))
    assert (3, "introspection") in got       # from gc import get_referrers
    assert (5, "introspection") not in got   # gc.collect is fine
    assert (6, "introspection") not in got   # so is the rest of gc
    assert (7, "introspection") in got       # gc.get_objects
    assert (8, "introspection") in got       # sys._getframe / .f_back
    assert (9, "introspection") in got       # getattr(gc, "get_referents")
    assert (10, "introspection") in got      # getattr(sys, <computed>)
    assert (11, "introspection") in got      # inspect.currentframe
    assert (12, "introspection") in got      # .f_globals (inspect.signature is fine)
    assert [r for _, r in got if r != "introspection"] == []


def test_thread_subprocess_network_rules():
    f = L("""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    import multiprocessing as mp
    import asyncio
    import torch.multiprocessing
    import subprocess
    import os
    from os import system
    os.system("x")
    os.popen("x")
    os.execv("x", [])
    os.fork()
    import socket
    import urllib.request
    from http import client
    import requests
    import ssl
    __import__("socket")
    os.path.join("a", "b")
    """)
    assert rules(f) == [(2, "thread"), (3, "thread"), (4, "thread"), (5, "thread"),
                        (6, "thread"), (7, "subprocess"), (9, "subprocess"),
                        (10, "subprocess"), (11, "subprocess"), (12, "subprocess"),
                        (13, "subprocess"), (14, "network"), (15, "network"), (16, "network"),
                        (17, "network"), (18, "network"), (19, "network")]


@pytest.mark.parametrize("name,rule,line", [
    ("lint_reference_op.py", "reference-op", 10),
    ("lint_stream.py", "stream", 8),
    ("lint_swallow.py", "swallow", 10),
    ("lint_monkeypatch.py", "monkeypatch", 6),
    ("lint_thread.py", "thread", 2),
    ("lint_subprocess.py", "subprocess", 9),
    ("lint_network.py", "network", 2),
])
def test_lint_fixture_candidates(name, rule, line):
    f = lint.lint(ast.parse((CAND / name).read_text()), "relu")
    assert (line, rule) in rules(f), rules(f)
    assert {x.rule for x in f} == {rule}


def test_clean_candidates_have_no_findings():
    for name in ("relu_clamp.py", "relu_tunable.py", "relu_print.py", "linear_relu_ok.py"):
        assert lint.lint(ast.parse((CAND / name).read_text()), "relu") == [], name


# ---- source ---------------------------------------------------------------------------

def test_parse_value():
    assert source.parse_value("64") == 64
    assert source.parse_value("1e-3") == 0.001
    assert source.parse_value("[64, 128]") == [64, 128]
    assert source.parse_value("True") is True
    assert source.parse_value("'x'") == "x"
    assert source.parse_value("ieee") == "ieee"


def test_small_line_and_rewrite():
    text = textwrap.dedent("""
    # kgate:small batch_size=4 dim=256 mode=fast
    batch_size = 1024
    dim: int = 65536
    mode = "slow"
    other = batch_size * 2
    def f():
        batch_size = 99
        return batch_size
    """)
    values, line = source.parse_small_line(text)
    assert values == {"batch_size": 4, "dim": 256, "mode": "fast"} and line == 2
    tree = ast.parse(text)
    assert source.rewrite_assignments(tree, values) == {"batch_size", "dim", "mode"}
    ns: dict = {}
    exec(compile(tree, "t.py", "exec"), ns)
    assert (ns["batch_size"], ns["dim"], ns["mode"], ns["other"], ns["f"]()) == \
        (4, 256, "fast", 8, 99)


def test_small_line_missing_and_malformed():
    assert source.parse_small_line("x = 1\n") == (None, 0)
    with pytest.raises(source.SourceError):
        source.parse_small_line("# kgate:small batch_size\n")


def test_rewrite_keeps_line_numbers():
    text = "A = 1\nB = [1, 2]\nraise ValueError(A)\n"
    tree = ast.parse(text)
    source.rewrite_assignments(tree, {"A": 5, "B": (3, 4)})
    with pytest.raises(ValueError) as ei:
        exec(compile(tree, "/x/t.py", "exec"), {})
    assert source.describe_exception(ei.value, "/x/t.py") == "ValueError: 5 (/x/t.py:3)"


def test_exec_module_is_isolated(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("VALUE = 1\n")
    import sys
    before = list(sys.path)
    m1 = source.exec_module(ast.parse(p.read_text()), str(p), "t")
    m2 = source.exec_module(ast.parse("VALUE = 2\n"), str(p), "t")
    assert m1.__name__ != m2.__name__ and (m1.VALUE, m2.VALUE) == (1, 2)
    assert sys.path == before
    source.forget_module(m1)
    source.forget_module(m2)


def test_parse_source_error_location():
    with pytest.raises(source.SourceError) as ei:
        source.parse_source("x = 1\ndef f(:\n", "/p/bad.py")
    assert str(ei.value).startswith("/p/bad.py:2: SyntaxError:")


# ---- stats ----------------------------------------------------------------------------

def T(*v, dtype=torch.float32):
    return torch.tensor(v, dtype=dtype)


def test_compare_exact_and_tolerance():
    want = T(1.0, -2.0, 0.0, 4.0, dtype=torch.float64)
    e = stats.compare("output0", T(1.0, -2.0, 0.0, 4.0), want, 1e-6, 1e-6)
    assert (e["max_abs_err"], e["over_tol"], e["worst_kind"], e["shape_ok"]) == \
        (0.0, 0, "finite", True)
    e = stats.compare("output0", T(1.0, -2.5, 0.1, 4.0), want, 0.2, 0.0)
    assert e["over_tol"] == 1 and e["worst_index"] == 1
    assert e["max_abs_err"] == pytest.approx(0.5)
    assert e["max_rel_err"] == pytest.approx(0.25)
    assert (e["worst_got"], e["worst_want"]) == (-2.5, -2.0)
    assert e["rel_l2_err"] == pytest.approx(math.sqrt(0.25 + 0.01) / math.sqrt(21), rel=1e-6)
    # rtol scales with |want|
    assert stats.compare("o", T(1.0, -2.5, 0.0, 4.0), want, 0.0, 0.3)["over_tol"] == 0


def test_compare_nonfinite_and_unwritten():
    want = T(1.0, 2.0, 3.0, 4.0, float("inf"), float("nan"), dtype=torch.float64)
    got = T(1.0, float("nan"), float("-inf"), 4.0, float("inf"), float("nan"))
    e = stats.compare("o", got, want, 1e-3, 1e-3)
    assert (e["nan"], e["inf"], e["truth_nonfinite"], e["over_tol"]) == (1, 1, 2, 2)
    assert (e["worst_index"], e["worst_kind"], e["worst_got"], e["worst_want"]) == \
        (1, "nan", 0.0, 2.0)
    # a truth NaN matched by something finite is over tolerance
    assert stats.compare("o", T(float("nan"), 1.0), T(1.0, float("nan"),
                         dtype=torch.float64), 1, 1)["over_tol"] == 2
    # all-ones bits are the poison pattern: unwritten, not nan
    got = torch.zeros(4, dtype=torch.float16)
    got.view(torch.int16)[2] = -1
    e = stats.compare("o", got, torch.zeros(4, dtype=torch.float64), 0, 0)
    assert (e["unwritten"], e["nan"], e["over_tol"], e["worst_kind"], e["worst_index"]) == \
        (1, 0, 1, "unwritten", 2)


def test_compare_shape_and_type_mismatch():
    want = torch.zeros(2, 3, dtype=torch.float64)
    assert stats.compare("o", torch.zeros(3, 2), want, 0, 0)["shape_ok"] is False
    e = stats.compare("o", 1.5, want, 0, 0)
    assert e["shape_ok"] is False and e["dtype"] == "float"
    assert stats.compare("o", torch.zeros(2, 3, dtype=torch.bfloat16), want, 0, 0)["dtype"] \
        == "bf16"


def test_compare_integer_outputs():
    want = torch.tensor([-1, 2, 3], dtype=torch.float64)
    e = stats.compare("o", torch.tensor([-1, 2, 4]), want, 0, 0)
    assert (e["unwritten"], e["over_tol"], e["worst_index"]) == (0, 1, 2)


def test_bitwise_equal():
    a = T(1.0, float("nan"), -0.0)
    assert stats.bitwise_equal(a, a.clone())
    assert not stats.bitwise_equal(a, T(1.0, float("nan"), 0.0))
    assert not stats.bitwise_equal(a, a.double())
    assert stats.bitwise_equal(torch.tensor([True, False]), torch.tensor([True, False]))


def test_rse_of_median():
    assert stats.rse_of_median([5.0]) == math.inf
    assert stats.rse_of_median([5.0, 6.0]) == math.inf  # too few to stop on, as in C++
    assert stats.rse_of_median([10.0] * 10) == 0.0
    # one huge outlier does not prevent convergence
    assert stats.rse_of_median([10.0, 10.1, 9.9] * 20 + [5000.0]) < 0.01


def test_rse_of_median_is_the_cpp_runners_estimator():
    """tests/fixtures/stats/median_rse.json: the numbers stats::median_rse gives (the C++
    test MedianRse.MatchesTheFixtureThePythonWorkerIsPinnedTo checks the same file)."""
    fx = json.loads((REPO / "tests" / "fixtures" / "stats" / "median_rse.json").read_text())
    assert len(fx["cases"]) >= 8
    for c in fx["cases"]:
        got = stats.rse_of_median(c["samples"])
        if c["rse"] is None:
            assert got == math.inf, c["name"]
        else:
            assert got == pytest.approx(c["rse"], rel=1e-9, abs=1e-12), c["name"]


# ---- protocol ---------------------------------------------------------------------------

def test_parse_request_and_params():
    assert parse_request(b'{"v":1,"id":3,"op":"x","a":1}') == (3, "x", {"a": 1})
    for line, rid in ((b"nope", 0), (b"[]", 0), (b'{"v":1,"op":"x"}', 0),
                      (b'{"v":1,"id":true,"op":"x"}', 0), (b'{"v":2,"id":5,"op":"x"}', 5),
                      (b'{"v":1,"id":6}', 6), (b'\xff\xfe', 0)):
        with pytest.raises(WorkerError) as ei:
            parse_request(line)
        assert ei.value.kind == "bad_request" and ei.value.rid == rid, line
    assert param({"a": 2}, "a", "num") == 2.0
    for value, kind in (("x", "int"), (True, "int"), (-1, "uint"), (1, "str"), (float("nan"), "num")):
        with pytest.raises(WorkerError):
            param({"a": value}, "a", kind)


def test_encode_never_emits_nan():
    text = encode({"a": float("nan"), "b": [float("-inf")], "c": 1.5})
    assert "NaN" not in text and "Infinity" not in text


def test_cuda_graph_batch_size():
    from kgate_worker import cuda_timing as ct
    assert ct.graph_batch(4.0) == 50  # ~200 µs per replay
    assert ct.graph_batch(100.0) == 2  # never fewer than 2 calls
    assert ct.graph_batch(0.0) == 400  # clamped at 0.5 µs per call
    assert ct.graph_batch(0.01) == 400 and ct.graph_batch(0.15) == 400
    assert ct.graph_batch(1e-9) <= ct.GRAPH_BATCH_MAX


def test_lead_covers_twice_the_slowest_issue_within_bounds():
    from kgate_worker import cuda_timing as ct
    assert ct.lead_us([]) == ct.LEAD_FLOOR_US
    assert ct.lead_us([3.0, 8.0]) == ct.LEAD_FLOOR_US
    assert ct.lead_us([30.0, 45.0, 12.0]) == 90.0
    assert ct.lead_us([1e6]) == ct.LEAD_MAX_US
    assert ct.lead_cycles(100.0) == 200_000  # at the fastest SM clock assumed, 2 GHz


def _fake_sampler(ct, start_fired):
    """A Sampler whose CUDA calls are recorded: what it issues, in order."""
    s = ct.Sampler.__new__(ct.Sampler)
    s.issued = []
    s.flush, s.device, s.start, s.end = None, None, "start", "end"
    s.idle_sync_us, s.hits, s.checked, s.waits_us = 1.0, {}, {}, {}
    s.lead_us, s.lead_short = 0.0, 0
    s._sleep = lambda cycles: s.issued.append(("sleep", cycles))
    s._record = lambda e: s.issued.append(("record", e))
    s._query = lambda e: start_fired[0]
    s._wait_end = lambda e: None
    s._elapsed_ms = lambda a, b: 0.1
    s._synchronize = lambda d: None
    return s


def test_a_lead_precedes_the_start_event_and_doubles_when_the_host_was_late():
    from kgate_worker import cuda_timing as ct
    fired = [False]
    s = _fake_sampler(ct, fired)
    assert s.sample("a", lambda: s.issued.append("call")) == 100.0
    assert s.issued == [("record", "start"), "call", ("record", "end")]  # no lead by default
    s.issued.clear()
    s.set_lead(30.0)
    s.sample("a", lambda: s.issued.append("call"))
    assert s.issued == [("sleep", ct.lead_cycles(30.0)), ("record", "start"), "call",
                        ("record", "end")]
    assert s.lead_us == 30.0 and s.lead_short == 0  # the start had not fired: covered
    fired[0] = True  # the GPU reached the start event before the host issued the call
    s.sample("a", lambda: None)
    assert s.lead_short == 1 and s.lead_us == 60.0
    for _ in range(20):
        s.sample("a", lambda: None)
    assert s.lead_us == ct.LEAD_MAX_US
    s._sleep = None  # a torch without torch.cuda._sleep: no lead
    s.set_lead(30.0)
    assert s.lead_us == 0.0


def test_side_stream_flag_needs_a_quarter_and_three():
    from kgate_worker import cuda_timing as ct
    assert not ct.side_flagged(0, 100)
    assert not ct.side_flagged(2, 2)       # two stray waits are host jitter
    assert ct.side_flagged(3, 12) and not ct.side_flagged(3, 13)
    assert ct.side_flagged(100, 100)


def test_side_stream_threshold_grows_with_the_sample():
    from kgate_worker import cuda_timing as ct
    assert ct.side_threshold_us(5.0, 2.0) == 55.0          # 50 µs floor over the idle cost
    assert ct.side_threshold_us(20.0, 10.0) == 100.0       # 4x a slow idle synchronize
    assert ct.side_threshold_us(5.0, 2000.0) == 105.0      # 5 % of a 2 ms sample


def test_worker_trace_names_each_request_and_its_problem(tmp_path, monkeypatch):
    import io
    import json as _json

    from kgate_worker.protocol import serve
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("KGATE_WORKER_TRACE", str(trace))
    from kgate_worker import PROTOCOL_VERSION
    reqs = [{"v": PROTOCOL_VERSION, "id": 1, "op": "load", "problem": {"path": "/kb/19_ReLU.py"}},
            {"v": PROTOCOL_VERSION, "id": 2, "op": "time"},
            {"v": PROTOCOL_VERSION, "id": 3, "op": "boom"},
            {"v": PROTOCOL_VERSION, "id": 4, "op": "check"}]
    proto_in = io.BytesIO("".join(_json.dumps(r) + "\n" for r in reqs).encode())
    proto_out = io.StringIO()

    def boom(_):
        raise RuntimeError("no")
    check = {"outputs": [{"rel_l2_err": 3e-7, "reference_rel_l2_err": 1e-7,
                          "compiled_rel_l2_err": 2e-7}, {"rel_l2_err": 0.5}]}
    rc = serve({"load": lambda p: {"phases_s": {"module": 0.25, "probe": 1.5}},
                "time": lambda p: {}, "boom": boom, "check": lambda p: check},
               proto_in, proto_out, lambda m: None)
    assert rc == 0
    lines = [_json.loads(x) for x in trace.read_text().splitlines()]
    # the failed request is answered but not traced as handled time
    assert [(x["op"], x["problem"]) for x in lines] == [("load", "/kb/19_ReLU.py"),
                                                          ("time", "/kb/19_ReLU.py"),
                                                          ("check", "/kb/19_ReLU.py")]
    assert all(x["s"] >= 0 for x in lines)
    # a handler's own steps (load_problem's phases_s) go into its line, and only there
    assert lines[0]["phases"] == {"module": 0.25, "probe": 1.5}
    assert "phases" not in lines[1]
    # a check's errors: the slot's, the reference's, torch.compile's (the oracle's anchors)
    assert lines[2]["errors"] == [[3e-7, 1e-7, 2e-7], [0.5, None, None]]
    assert "errors" not in lines[1]


# ---- the device memory cap: the lint's memory-cap rule and the check after a call -------

@pytest.mark.parametrize("text,line", [
    ("import torch\ntorch.cuda.set_per_process_memory_fraction(1.0)\n", 2),
    ("from torch.cuda import set_per_process_memory_fraction as f\n", 1),
    ("import torch\nf = torch._C._cuda_setMemoryFraction\n", 2),
    ("import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n", 2),
    ("import torch\na = torch.cuda.memory.CUDAPluggableAllocator('x.so', 'a', 'f')\n", 2),
    ("exec('import torch; torch.cuda.set_per_process_memory_fraction(1.0)')\n", 1),
])
def test_lint_memory_cap(text, line):
    assert (line, "memory-cap") in rules(L(text)), L(text)


def test_lint_memory_cap_leaves_reading_memory_alone():
    assert L("""
        import torch
        import triton
        free, total = torch.cuda.mem_get_info()
        used = torch.cuda.memory_allocated() + torch.cuda.max_memory_reserved()
        f = torch.cuda.get_per_process_memory_fraction()
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8))
        """) == []


def test_memory_cap_changed_is_said_and_put_back(monkeypatch):
    """The check after every call, with torch's getter and setter faked: a cap moved off
    what hello set is described and set back; an unchanged one, or none, says nothing.
    Without the getter (an older torch), an allocator holding more than the cap says it."""
    from kgate_worker import worker as wk
    wk._torch()
    w = wk.Worker()
    assert w._memory_cap_changed() == ""  # no cap
    w.device = torch.device("cuda", 0)
    w.memory_cap, w.memory_fraction = 2 << 30, 0.025
    state = {"fraction": 0.025}
    w._fraction_get = lambda index: state["fraction"]
    w._fraction_set = lambda f, index: state.update(fraction=f)
    assert w._memory_cap_changed() == ""
    state["fraction"] = 1.0
    msg = w._memory_cap_changed()
    assert msg.startswith("memory cap: the worker's device memory cap was changed from "
                          "0.025 to 1 of the device"), msg
    assert state["fraction"] == 0.025 and w._memory_cap_changed() == ""
    w._fraction_get = None
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 1 << 30)
    assert w._memory_cap_changed() == ""
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 3 << 30)
    assert "the allocator holds 3.0 GiB, over the cap" in w._memory_cap_changed()


def test_a_traceback_starts_at_the_first_frame_outside_the_worker(tmp_path):
    """An error raised two frames deep in the author's code keeps those frames; the
    worker's own frames above them are dropped, and a lone frame is left to the located
    message."""
    import ast as _ast
    from kgate_worker import source
    helper = tmp_path / "helper_mod.py"
    helper.write_text("def boom():\n    raise ValueError('deep')\n")
    cand = tmp_path / "cand.py"
    cand.write_text(f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
                    "import helper_mod\nhelper_mod.boom()\n")
    text = cand.read_text()
    try:
        source.exec_module(_ast.parse(text), str(cand), "candidate")
    except ValueError as e:
        tb = source.format_traceback(e)
    assert tb.startswith("Traceback") and str(cand) in tb and "helper_mod.py" in tb, tb
    assert "kgate_worker" not in tb and tb.rstrip().endswith("ValueError: deep"), tb
    lone = tmp_path / "lone.py"
    lone.write_text("raise RuntimeError('at import')\n")
    try:
        source.exec_module(_ast.parse(lone.read_text()), str(lone), "candidate")
    except RuntimeError as e:
        assert source.format_traceback(e) == ""
        assert source.located_exception(e, str(lone)) == f"{lone}:1: RuntimeError: at import"
