"""The worker driven over pipes, as the orchestrator drives it."""

import pytest

from conftest import CAND, INDUCTOR_CACHE, KB


# ---- hello ------------------------------------------------------------------------------

def test_hello_cpu_and_cuda_unsupported(worker, tmp_path):
    r = worker.hello_cpu(tmp_path / "cache")
    assert r["runner"] == "kgate_worker" and r["protocol"] == 1 and r["backend"] == "cpu"
    d = r["device"]
    assert d["cc"] == "" and d["sm_count"] >= 1 and d["memory_bytes"] > 0
    assert d["copy_bandwidth_gbps"] > 0
    assert r["torch"].startswith("2.") and r["python"].count(".") == 2
    assert (tmp_path / "cache" / "inductor").is_dir()
    assert worker.ok("hello", backend="host")["backend"] == "host"
    import torch
    if not torch.cuda.is_available():
        msg = worker.error("hello", "unsupported", backend="cuda", device_index=0)
        assert "cuda" in msg
    assert "tpu" in worker.error("hello", "bad_request", backend="tpu")
    assert worker.close() == 0  # EOF on stdin: exit 0


# ---- load_problem -----------------------------------------------------------------------

def test_load_problem_variants(relu_worker):
    full = relu_worker.load("relu.py", variant="")
    assert full["variant_applied"] is False
    small = relu_worker.load("relu.py")
    assert small["variant_applied"] is True and small["degenerate"] == ""
    assert small["inputs"] == [{"name": "input0", "dtype": "f32"}]
    assert small["outputs"] == [{"name": "output0", "dtype": "f32"}]
    # no '# kgate:small' line: used as is, and said so
    r = relu_worker.load("two_outputs.py")
    assert r["variant_applied"] is False
    assert [o["name"] for o in r["outputs"]] == ["output0", "output1"]
    r = relu_worker.load("linear_relu.py")
    assert r["variant_applied"] is True and r["init_inputs"] == "[16, 8]"
    # where the load's time went, step by step (on the CPU no fused comparison to warm)
    assert list(r["phases_s"]) == ["module", "sizing", "construct", "probe", "truth"]
    assert all(s >= 0 for s in r["phases_s"].values())


@pytest.mark.parametrize("name,reason", [
    ("degenerate_zero.py", "constant output"),
    ("degenerate_seed_invariant.py", "seed-invariant output"),
    ("degenerate_tiny.py", "near-zero output"),
    ("relu.py", ""),
    ("linear_relu.py", ""),
])
def test_degenerate_detection(relu_worker, name, reason):
    assert relu_worker.load(name)["degenerate"] == reason


def test_load_problem_errors(relu_worker, tmp_path):
    def bad(path, variant=""):
        return relu_worker.error("load_problem", "bad_request",
                            problem={"id": "p", "kind": "kernelbench", "path": str(path),
                                     "variant": variant})
    assert bad(KB / "no_get_inputs.py").endswith("no_get_inputs.py: no get_inputs()")
    assert f"{KB / 'syntax_error.py'}:5: SyntaxError" in bad(KB / "syntax_error.py")
    msg = bad(KB / "raises_on_import.py")
    assert f"{KB / 'raises_on_import.py'}:5: RuntimeError: problem setup failed" in msg
    p = tmp_path / "wrong_small.py"
    p.write_text("# kgate:small size=4\nimport torch\nSIZE = 8\n")
    assert "size" in bad(p, "small")
    assert "kgate-native" in relu_worker.error("load_problem", "unsupported",
                                          problem={"id": "p", "op": "softmax"})
    # a failed load leaves no problem behind
    assert relu_worker.request("compile", slot="candidate",
                          source_path=str(CAND / "relu_clamp.py"))["error"]["kind"] == "no_problem"


# ---- compile ----------------------------------------------------------------------------

def test_compile_candidate_results(relu_worker):
    r = relu_worker.compile_candidate("relu_clamp.py")
    assert r["compiled"] is True and r["findings"] == [] and r["log"] == ""
    assert r["cache_hit"] is False and r["compile_ms"] >= 0
    r = relu_worker.compile_candidate("relu_syntax.py")
    assert r["compiled"] is False and f"{CAND / 'relu_syntax.py'}:7: SyntaxError" in r["log"]
    r = relu_worker.compile_candidate("relu_import_error.py")
    assert r["compiled"] is False
    assert f"{CAND / 'relu_import_error.py'}:6: NameError" in r["log"]
    # the worker's own frames are not the author's business: one line, no traceback
    assert "kgate_worker" not in r["log"] and "Traceback" not in r["log"], r["log"]
    r = relu_worker.compile_candidate("no_model_new.py")
    assert r["compiled"] is False and "no class ModelNew" in r["log"]
    r = relu_worker.compile_candidate("does_not_exist.py")
    assert r["compiled"] is False and "does_not_exist.py" in r["log"]
    # a failed compile empties the slot
    assert relu_worker.request("check", slot="candidate", cases=[{"case_id": "c"}])[
        "error"]["kind"] == "no_candidate"


@pytest.mark.parametrize("name,rule,line", [
    ("lint_reference_op.py", "reference-op", 10),
    ("lint_stream.py", "stream", 8),
    ("lint_swallow.py", "swallow", 10),
    ("lint_monkeypatch.py", "monkeypatch", 6),
    ("lint_thread.py", "thread", 2),
    ("lint_subprocess.py", "subprocess", 9),
    ("lint_network.py", "network", 2),
])
def test_compile_rejects_lint_findings(relu_worker, name, rule, line):
    r = relu_worker.compile_candidate(name)
    assert r["compiled"] is False
    assert {"line": line, "rule": rule} in [{"line": f["line"], "rule": f["rule"]}
                                            for f in r["findings"]]
    assert f"{CAND / name}:{line}: [{rule}]" in r["log"]


def test_reference_op_rule_only_for_single_op_problems(relu_worker, tmp_path):
    p = tmp_path / "fused.py"
    p.write_text("import torch.nn as nn\nimport torch.nn.functional as F\n\n"
                 "class ModelNew(nn.Module):\n"
                 "    def __init__(self, i, o):\n"
                 "        super().__init__()\n"
                 "        self.linear = nn.Linear(i, o)\n"
                 "    def forward(self, x):\n"
                 "        return F.relu(F.linear(x, self.linear.weight, self.linear.bias))\n")
    relu_worker.load("linear_relu.py")
    # F.relu inside a linear+ReLU fusion is fine
    r = relu_worker.ok("compile", slot="candidate", source_path=str(p))
    assert r["compiled"] is True and r["findings"] == [], r
    # the same candidate against the single-op ReLU problem is not
    relu_worker.load("relu.py")
    r = relu_worker.ok("compile", slot="candidate", source_path=str(p))
    assert r["compiled"] is False and r["findings"][0]["rule"] == "reference-op"
    assert r["findings"][0]["line"] == 9


def test_constructor_mismatch_is_a_compile_failure(relu_worker):
    relu_worker.load("linear_relu.py")
    r = relu_worker.compile_candidate("relu_clamp.py")
    assert r["compiled"] is False
    assert r["log"].startswith(f"{CAND / 'relu_clamp.py'}: TypeError")


def test_weights_copied_from_reference(relu_worker):
    relu_worker.load("linear_relu.py")
    r = relu_worker.compile_candidate("linear_relu_ok.py")
    assert r["compiled"] and r["weights_copied"] is True
    c = relu_worker.check(atol=1e-5, rtol=1e-5)
    assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0, c
    # the eager baseline matches too, and f16 runs in half precision
    relu_worker.ok("compile", slot="baseline", source_path=str(KB / "linear_relu.py"))
    c = relu_worker.check("baseline", dtype="f16", atol=1e-2, rtol=1e-2)
    assert c["outputs"][0]["dtype"] == "f16" and c["outputs"][0]["over_tol"] == 0
    assert c["outputs"][0]["rel_l2_err"] > 0  # rounding against the float64 truth
    # back to f32 afterwards: the f32 weights were not rounded by the f16 run
    c = relu_worker.check("baseline", dtype="f32", atol=1e-5, rtol=1e-5)
    assert c["outputs"][0]["over_tol"] == 0 and c["outputs"][0]["rel_l2_err"] < 1e-6


def test_tunable_defines(relu_worker):
    r = relu_worker.compile_candidate("relu_tunable.py", {"BLOCK": "16"})
    assert r["compiled"] and r["defines_applied"] == ["BLOCK"]
    assert relu_worker.check(dist="signed")["outputs"][0]["over_tol"] == 0
    # BLOCK=0 reaches the candidate: range() with step 0 raises
    relu_worker.compile_candidate("relu_tunable.py", {"BLOCK": "0"})
    c = relu_worker.check()
    assert c["return_code"] == 1 and "must not be zero" in c["error"]
    r = relu_worker.compile_candidate("relu_tunable.py", {"NOT_THERE": "1"})
    assert r["compiled"] and "NOT_THERE" in r["log"]


# ---- check ------------------------------------------------------------------------------

def test_check_pass_and_fail(relu_worker):
    relu_worker.compile_candidate("relu_clamp.py")
    c = relu_worker.check(dist="signed", repeats=3)
    o = c["outputs"][0]
    assert c["return_code"] == 0 and c["error"] == "" and c["deterministic"] is True
    assert c["inputs_modified"] is False and o["over_tol"] == 0 and o["max_abs_err"] == 0
    relu_worker.compile_candidate("relu_wrong.py")
    o = relu_worker.check()["outputs"][0]
    assert o["over_tol"] > 0 and o["worst_kind"] == "finite"
    assert o["worst_got"] == pytest.approx(o["worst_want"] / 2)
    relu_worker.compile_candidate("relu_zeros.py")
    o = relu_worker.check()["outputs"][0]
    assert o["over_tol"] > 0 and o["rel_l2_err"] == pytest.approx(1.0)


def test_check_reports_the_references_own_error_for_the_oracle(relu_worker, tmp_path):
    """A ModelNew 0.5 % off passes KernelBench's 1e-2 tolerances; the oracle catches it only
    against the reference's own error, which every check reports beside the slot's (the
    same for the baseline slot, a wrong starter included: it cannot anchor the bound)."""
    relu_worker.load("linear_relu.py")
    scaled = tmp_path / "linear_relu_scaled.py"
    scaled.write_text((CAND / "linear_relu_ok.py").read_text().replace(
        ".clamp(min=0)", ".clamp(min=0) * 1.005"))
    relu_worker.ok("compile", slot="candidate", source_path=str(scaled), defines={})
    relu_worker.ok("compile", slot="baseline", source_path=str(scaled),
                   defines={"KGATE_BASELINE": "candidate"})
    for slot in ("candidate", "baseline"):
        o = relu_worker.check(slot, atol=1e-2, rtol=1e-2)["outputs"][0]
        assert o["over_tol"] == 0                                   # correctness passes
        assert o["rel_l2_err"] == pytest.approx(5e-3, rel=1e-3)     # the slot is 0.5 % off
        assert 0 <= o["reference_rel_l2_err"] < 1e-5                # the reference is not
    relu_worker.ok("compile", slot="candidate", source_path=str(CAND / "linear_relu_ok.py"),
                   defines={})
    o = relu_worker.check(atol=1e-2, rtol=1e-2)["outputs"][0]
    assert o["rel_l2_err"] < 1e-5 and o["reference_rel_l2_err"] < 1e-5


def test_check_signed_distribution_catches_abs(relu_worker):
    relu_worker.compile_candidate("relu_abs.py")
    # torch.rand inputs are never negative: |x| looks right ...
    assert relu_worker.check(dist="problem")["outputs"][0]["over_tol"] == 0
    # ... until the signs are flipped
    o = relu_worker.check(dist="signed")["outputs"][0]
    assert o["over_tol"] > 0 and o["worst_want"] == 0 and o["worst_got"] > 0


def test_check_raise(relu_worker):
    relu_worker.compile_candidate("relu_raises.py")
    c = relu_worker.check()
    assert c["return_code"] == 1 and c["outputs"] == []
    assert c["error"] == (f"ValueError: kernel launch failed ({CAND / 'relu_raises.py'}:8)")


def test_check_input_mutation(relu_worker):
    relu_worker.compile_candidate("relu_mutates.py")
    c = relu_worker.check(dist="signed")
    assert c["inputs_modified"] is True and c["outputs"][0]["over_tol"] == 0


def test_check_nan_shape_type_determinism(relu_worker):
    relu_worker.compile_candidate("relu_nan.py")
    o = relu_worker.check()["outputs"][0]
    assert (o["nan"], o["over_tol"], o["worst_index"], o["worst_kind"], o["worst_got"]) == \
        (1, 1, 3, "nan", 0)
    relu_worker.compile_candidate("relu_shape.py")
    assert relu_worker.check()["outputs"][0]["shape_ok"] is False
    relu_worker.compile_candidate("relu_double.py")  # within tolerance, float64
    o = relu_worker.check()["outputs"][0]
    assert (o["over_tol"], o["dtype"], o["reference_dtype"]) == (0, "f64", "f32")
    o = relu_worker.check(dtype="f16")["outputs"][0]
    assert (o["dtype"], o["reference_dtype"]) == ("f64", "f16")
    relu_worker.compile_candidate("relu_not_tensor.py")
    c = relu_worker.check()
    assert c["return_code"] == 0 and c["outputs"][0]["shape_ok"] is False
    relu_worker.compile_candidate("relu_nondeterministic.py")
    c = relu_worker.check(repeats=3, atol=1e-5)
    assert c["deterministic"] is False and c["outputs"][0]["over_tol"] == 0


def test_check_truth_is_shared_and_cases_are_reproducible(relu_worker):
    relu_worker.compile_candidate("relu_wrong.py")
    cases = [{"case_id": f"s{s}", "seed": s, "dtype": "f32", "dist": "signed", "atol": 1e-6,
              "rtol": 1e-6} for s in (1, 2, 1)]
    r = relu_worker.ok("check", slot="candidate", cases=cases)["cases"]
    assert [c["case_id"] for c in r] == ["s1", "s2", "s1"]
    assert r[0]["outputs"] == r[2]["outputs"] and r[0]["outputs"] != r[1]["outputs"]
    b = relu_worker.ok("check", slot="baseline", cases=cases[:1])["cases"][0]
    assert b["outputs"][0]["over_tol"] == 0


def test_two_outputs(relu_worker):
    relu_worker.load("two_outputs.py")
    relu_worker.compile_candidate("two_outputs_ok.py")
    c = relu_worker.check(dtype="bf16", atol=0.1, rtol=0.05)
    assert [o["name"] for o in c["outputs"]] == ["output0", "output1"]
    assert all(o["over_tol"] == 0 and o["shape_ok"] for o in c["outputs"]), c


# ---- time -------------------------------------------------------------------------------

def test_time_interleaved_and_converging(relu_worker):
    relu_worker.compile_candidate("relu_clamp.py")
    r = relu_worker.ok("time", slots=["candidate", "baseline"], dtype="f32", seed=5,
                       warmup_s=0.01, min_time_s=0.05, max_time_s=5.0, min_samples=10,
                       max_samples=100000, target_rse=0.05, flush_l2=True, input_sets=3,
                       cuda_graph=False)
    s = r["samples_us"]
    assert len(s["candidate"]) == len(s["baseline"]) >= 10
    assert r["stop_reason"] == "converged", r["stop_reason"]
    assert r["timer"] == "perf_counter" and r["batch"] == 1 and r["return_code"] == 0
    assert all(x > 0 for x in s["candidate"] + s["baseline"])
    assert r["min_bytes"] == 2 * 4 * 64 * 4 and r["elapsed_s"] < 5.5
    r = relu_worker.ok("time", slots=["baseline"], warmup_s=0, min_time_s=10,
                       max_time_s=10, min_samples=1000, max_samples=7, target_rse=0)
    assert r["stop_reason"] == "max_samples" and len(r["samples_us"]["baseline"]) == 7
    r = relu_worker.ok("time", slots=["baseline"], warmup_s=0, min_time_s=0.1,
                       max_time_s=0.2, min_samples=10 ** 9, max_samples=10 ** 9)
    assert r["stop_reason"] == "max_time"
    # exclude_launch is a CUDA timer's: on the CPU it is accepted and changes nothing
    r = relu_worker.ok("time", slots=["baseline"], warmup_s=0, min_time_s=0,
                       max_time_s=5, min_samples=3, max_samples=3, exclude_launch=True)
    assert r["timer"] == "perf_counter" and "host issue" not in r["timer_note"], r


def test_time_exception(relu_worker):
    relu_worker.compile_candidate("relu_raises.py")
    r = relu_worker.ok("time", slots=["candidate", "baseline"], warmup_s=0.01,
                       min_time_s=0.01, max_time_s=1.0, min_samples=3)
    assert r["return_code"] == 1 and "kernel launch failed" in r["timer_note"]
    assert "relu_raises.py:8" in r["timer_note"]


# ---- process behaviour ------------------------------------------------------------------

def test_stdout_discipline_with_printing_candidate(worker):
    worker.hello_cpu()
    worker.load("relu.py")
    worker.ok("compile", slot="baseline", source_path=str(KB / "relu.py"))
    assert worker.compile_candidate("relu_print.py")["compiled"]
    c = worker.check(repeats=2)
    assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0
    r = worker.ok("time", warmup_s=0, min_time_s=0.01, max_time_s=0.5, min_samples=3,
                  max_samples=5)
    assert len(r["samples_us"]["candidate"]) >= 3
    worker.ok("shutdown")
    worker.no_stray_output()
    assert worker.close() == 0
    err = worker.stderr()
    assert "candidate imported" in err and "hello from forward" in err
    assert '"id": 999' in err  # the C-level write landed on stderr, not the protocol


def test_internal_errors_keep_serving(relu_worker, tmp_path):
    p = tmp_path / "float64_fails.py"
    p.write_text(
        "import torch\nimport torch.nn as nn\n\n"
        "class Model(nn.Module):\n"
        "    def forward(self, x):\n"
        "        if x.dtype == torch.float64:\n"
        "            raise RuntimeError('no double here')\n"
        "        if x.shape[0] == 5:\n"
        "            raise RuntimeError('no float32 either')\n"
        "        return x + 1\n\n"
        "draws = [0]\n\n"
        "def get_inputs():\n    draws[0] += 1\n"
        "    return [torch.randn(4 if draws[0] <= 4 else 5)]\n\n"
        "def get_init_inputs():\n    return []\n")
    # a reference failing in float64 only is judged against its float32 self (the load
    # draws four input sets: one on the meta device to size the problem, three to probe)
    r = relu_worker.ok("load_problem", problem={"id": "p", "kind": "kernelbench",
                                                "path": str(p)})
    assert "no double here" in r["oracle_skip"]
    relu_worker.ok("compile", slot="baseline", source_path=str(p))
    # one failing in float32 too is the worker's own error
    resp = relu_worker.request("check", slot="baseline", cases=[{"case_id": "c", "seed": 3}])
    assert resp["ok"] is False and resp["error"]["kind"] == "internal"
    assert "no float32 either" in resp["error"]["message"]
    # still alive and serving
    relu_worker.send_raw("garbage")
    assert relu_worker.read()["error"]["kind"] == "bad_request"
    assert relu_worker.ok("hello", backend="cpu")["runner"] == "kgate_worker"


def test_candidate_exit_does_not_kill_worker(relu_worker, tmp_path):
    p = tmp_path / "exits.py"
    p.write_text("import sys\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                 "    def forward(self, x):\n        sys.exit(3)\n")
    assert relu_worker.ok("compile", slot="candidate", source_path=str(p))["compiled"]
    c = relu_worker.check()
    assert c["return_code"] == 1 and "SystemExit: 3" in c["error"]


# ---- torch.compile baselines ------------------------------------------------------------

def test_compile_baseline_torch_compile(relu_worker):
    """torch.compile on CPU needs a C++ compiler; either it works and matches, or the
    answer is a clean compiled:false with a log (never a dead worker)."""
    relu_worker.hello_cpu(INDUCTOR_CACHE)  # before the first torch.compile in the process
    r = relu_worker.ok("compile", slot="baseline", source_path=str(KB / "relu.py"),
                  defines={"KGATE_BASELINE": "compile"}, timeout=240)
    if r["compiled"]:
        assert r["compile_ms"] > 0 and r["baseline"] == "compile"
        c = relu_worker.check("baseline", dist="signed")
        assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0
    else:
        assert "torch.compile" in r["log"] and r["log"].strip()
    assert relu_worker.ok("hello", backend="cpu")["runner"] == "kgate_worker"


def test_compile_baseline_candidate_mode(relu_worker):
    """KGATE_BASELINE=candidate puts a ModelNew file (the search's current best) into the
    baseline slot: linted and checked like a candidate; a wrong one is caught there too."""
    cands = KB / "candidates"
    r = relu_worker.ok("compile", slot="baseline", source_path=str(cands / "relu_clamp.py"),
                       defines={"KGATE_BASELINE": "candidate"})
    assert r["compiled"] and r["baseline"] == "candidate"
    c = relu_worker.check("baseline", dist="signed")
    assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0
    r = relu_worker.ok("compile", slot="baseline", source_path=str(cands / "relu_abs.py"),
                       defines={"KGATE_BASELINE": "candidate"})
    assert r["compiled"]
    c = relu_worker.check("baseline", dist="signed")
    assert c["outputs"][0]["over_tol"] > 0
    r = relu_worker.ok("compile", slot="baseline", source_path=str(cands / "lint_stream.py"),
                       defines={"KGATE_BASELINE": "candidate"})
    assert not r["compiled"] and r["findings"][0]["rule"] == "stream"
