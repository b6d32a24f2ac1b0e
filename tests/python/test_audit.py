"""Issue 16: the timed calls are audited (kgate_worker/audit.py) -- their outputs against
the baseline's on the same inputs, and rounds on fresh contents against result caches --
and a correct slot, reference-as-candidate included, is never flagged."""

from __future__ import annotations

import math

import pytest
import torch

from conftest import REPO
from inproc import AA, InProc, as_model_new
from kgate_worker import audit

RED = REPO / "tests" / "redteam" / "python"
GEMM = REPO / "tests" / "redteam" / "timer" / "problem.py"
QUICK = dict(warmup_s=0.01, min_time_s=0.05, max_time_s=0.5, min_samples=6, input_sets=2)

pytestmark = pytest.mark.usefixtures("clocks_intact")


# ---- outputs_differ ----------------------------------------------------------------------

def differ(got, want, atol=1e-2, rtol=1e-2, extra=0.0):
    return audit.outputs_differ(torch, got, want, atol, rtol, extra)


def test_outputs_within_twice_the_tolerance_agree():
    w = torch.linspace(-4, 4, 1001)
    assert differ([w + 0.02], [w]) == ""          # 2 x atol: each within atol of a truth
    assert differ([w * 1.02], [w]) == ""          # 2 x rtol
    assert differ([w.clone()], [w], 0.0, 0.0) == ""


def test_outputs_beyond_it_differ_and_the_first_is_named():
    w = torch.zeros(10, 10)
    g = w.clone()
    g[3, 4] = 1.0
    g[7, 1] = -1.0
    why = differ([g], [w])
    assert why.startswith("output0: 2 of 100 elements differ from the baseline's")
    assert "first at flat index 34: 1 against 0" in why


def test_nonfinite_values_agree_only_with_themselves():
    w = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert differ([w.clone()], [w]) == ""
    for i, v in ((1, 0.0), (2, 1e30), (3, float("inf")), (0, float("nan"))):
        g = w.clone()
        g[i] = v
        assert "1 of 4 elements" in differ([g], [w]), (i, v)


def test_integer_outputs_exactly_and_structure_checked():
    w = torch.arange(10)
    assert differ([w.clone()], [w]) == ""
    g = w.clone()
    g[9] = 8
    assert "1 of 10" in differ([g], [w])
    assert "shape" in differ([torch.zeros(2, 3)], [torch.zeros(3, 2)])
    assert "2 outputs against the baseline's 1" in differ([w, w], [w])
    assert differ(None, None) == ""
    assert differ(None, [w]) != ""


def test_the_widening_of_an_ill_conditioned_problem_applies():
    w = torch.full((8,), 1e20)
    assert differ([w * 1.015], [w]) == ""  # 2.1 x rtol covers it at this scale
    assert differ([w * 1.03], [w]) != ""
    w, g = torch.zeros(8), torch.full((8,), 0.5)
    assert differ([g], [w]) != ""
    assert differ([g], [w], extra=0.3) == ""  # 2 x extra_atol


def test_large_outputs_are_compared_in_chunks(monkeypatch):
    monkeypatch.setattr(audit, "CHUNK", 7)
    w = torch.randn(100)
    g = w.clone()
    g[93] += 1
    assert "first at flat index 93" in differ([g], [w])
    assert differ([w.clone()], [w]) == ""


# ---- cache_finding -----------------------------------------------------------------------

def test_a_slot_slower_only_on_fresh_contents_is_a_cache():
    rep = {"candidate": [10.0] * 20, "baseline": [30.0] * 20}
    why = audit.cache_finding(rep, {"candidate": [31, 29, 30, 33, 30],
                                    "candidate_seen": [10, 11, 10, 10, 9],
                                    "baseline": [30, 31, 29, 30, 30]})
    assert "faster on inputs it has seen before" in why
    assert "median 30 us over 5 rounds on freshly drawn contents against 10 us on the same " \
           "contents again after the same steps (median ratio 3.1x; 10 us on the repeated" in why


def test_outliers_and_load_are_not_a_cache():
    rep = {"candidate": [10.0] * 20, "baseline": [10.0] * 20}
    # two outliers of five: the median ratio is an ordinary pair's
    assert audit.cache_finding(rep, {"candidate": [40, 40, 10, 11, 10],
                                     "candidate_seen": [10] * 5, "baseline": [10] * 5}) == ""
    # the machine slowed during the fresh rounds: the seen calls too
    assert audit.cache_finding(rep, {"candidate": [30] * 5, "candidate_seen": [29] * 5,
                                     "baseline": [30] * 5}) == ""
    assert audit.cache_finding(rep, {"candidate": [], "candidate_seen": [], "baseline": []}) == ""
    # a correct slot on a loaded host (CI) 1.52x slower on fresh rounds than on the
    # repeated sets, its seen calls as slow: not a cache, whatever the baseline did
    assert audit.cache_finding({"candidate": [197.0] * 9, "baseline": [217.2] * 9},
                               {"candidate": [298.6] * 5, "candidate_seen": [290.0] * 5,
                                "baseline": [400.0] * 5}) == ""
    # a cache with the baseline slowed as much (the case the repeated-set rule missed)
    assert audit.cache_finding({"candidate": [10.0] * 9, "baseline": [20.0] * 9},
                               {"candidate": [60.0] * 5, "candidate_seen": [12.0] * 5,
                                "baseline": [60.0] * 5}) != ""
    # unpaired timings say nothing
    assert audit.cache_finding(rep, {"candidate": [30] * 5, "baseline": [10] * 5}) == ""


def test_a_cache_finding_stands_only_when_a_second_set_of_rounds_shows_it_too():
    rep = {"candidate": [10.0] * 9, "baseline": [20.0] * 9}
    seen = [10, 10, 11, 10, 10]
    cache = {"candidate": [31, 29, 30, 33, 30], "candidate_seen": seen, "baseline": [20] * 5}
    burst = {"candidate": [900, 30, 700, 800, 40], "candidate_seen": seen, "baseline": [20] * 5}
    calm = {"candidate": [10, 11, 10, 12, 10], "candidate_seen": seen, "baseline": [20] * 5}
    failure, note = audit.confirmed_cache(rep, cache, cache)
    assert failure.startswith("the candidate is faster on inputs it has seen before "
                              "(a result cache): median 30 us over 5 rounds") and note == ""
    assert "; again in a second set of rounds: median 30 us over 5 rounds" in failure
    failure, note = audit.confirmed_cache(rep, burst, calm)
    assert failure == ""
    assert note == ("one set of rounds on fresh contents was slower for the candidate, the "
                    "second was not: load, not a cache (median 700 us over 5 rounds on "
                    "freshly drawn contents against 10 us on the same contents again after "
                    "the same steps (median ratio 63.6x; 10 us on the repeated input sets))")
    assert audit.confirmed_cache(rep, calm, cache) == ("", "")  # the first set decides


# ---- the time op -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def w():
    return InProc()


def timed(w, problem, candidate, **extra):
    w.worker.fatal = ""
    w.load(problem, variant="small", **extra)
    assert w.compile(problem, slot="baseline")["compiled"]
    assert w.compile(candidate, **({"reference_op_rule": False} if extra else {}))["compiled"]
    w.check(slot="candidate", atol=1e-2, rtol=1e-2)  # the tolerance the audit widens from
    return w("time", seed=3, **QUICK)


def fresh_sets(t: dict) -> int:
    """How many sets of fresh rounds a clean timing took: a burst of load on a busy host can
    slow the first set; the worker then takes a second, which clears it, and says so."""
    load = "one set of rounds on fresh contents was slower for the candidate, the second was not"
    return 2 if t["audit_note"].startswith(load) else 1


def test_the_reference_against_itself_is_audited_and_clean(w, tmp_path):
    t = timed(w, GEMM, as_model_new(GEMM, tmp_path / "aa.py"))
    assert t["audit_failure"] == "", t
    # every sampling round and every fresh round compared
    n = len(t["samples_us"]["candidate"])
    assert t["audit_note"] == "" or fresh_sets(t) == 2, t
    assert t["audited"] == n + 2 * audit.FRESH_ROUNDS * fresh_sets(t), t


def test_a_reference_that_draws_random_numbers_is_seeded_for_the_audit(w, tmp_path):
    problem = AA / "lstm_random_h0.py"
    t = timed(w, problem, as_model_new(problem, tmp_path / "lstm.py"), reference_op_rule=False)
    assert t["audit_failure"] == "", t
    assert t["audited"] > audit.FRESH_ROUNDS


def test_skipping_every_other_call_is_caught_in_a_sampling_round(w):
    t = timed(w, GEMM, RED / "batch_skip" / "every_other.py")
    assert t["stop_reason"] == "audit"
    assert t["audit_failure"].startswith(
        "outputs of timed calls differ from the baseline's on the same inputs (sampling round")
    assert "elements differ" in t["audit_failure"]


def test_a_cheat_that_starts_after_the_checks_is_caught(w):
    t = timed(w, GEMM, RED / "warmup_detect" / "correct_while_checked.py")
    # Caught in the first audited round after it starts: a sampling round, or -- when a
    # loaded host stops sampling before the audit draws one (seen under a parallel load) --
    # the first round on fresh contents.
    assert t["audit_failure"].startswith(
        "outputs of timed calls differ from the baseline's on the same inputs ("), t["audit_failure"]
    assert "(sampling round" in t["audit_failure"] or "(fresh round" in t["audit_failure"], t["audit_failure"]


@pytest.mark.parametrize("key, bound", [
    # Returns what it computed the first time it saw an input buffer: the timing's own sets
    # are computed once each and then correct, so only the fresh rounds (new contents
    # written into those buffers) can see it.
    ("(a.data_ptr(), b.data_ptr())", " or len(self.seen) > 64"),
    # Recomputes whenever torch's version counter of an input moves (an in-place write),
    # else returns what it stored: the timing's repeated sets are never written, so it
    # copies there. The fresh rounds write their contents without moving the counter.
    ("(a.data_ptr(), a._version, b.data_ptr(), b._version)", ""),
], ids=["pointer", "pointer-and-version"])
def test_a_cache_by_buffer_meets_new_contents_in_the_same_buffers(w, tmp_path, key, bound):
    cand = tmp_path / "by_buffer.py"
    cand.write_text(
        "import torch\nimport torch.nn as nn\n\n"
        "class ModelNew(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.seen = {}\n\n"
        "    def forward(self, a, b):\n"
        f"        k = {key}\n"
        f"        if k not in self.seen{bound}:\n"
        "            self.seen[k] = torch.relu(a @ b)\n"
        "        return self.seen[k].clone()\n")
    w.worker.fatal = ""
    w.load(GEMM, variant="small")
    assert w.compile(GEMM, slot="baseline")["compiled"]
    assert w.compile(cand)["compiled"]
    t = w("time", seed=3, **QUICK)
    assert "(fresh round 0)" in t["audit_failure"], t["audit_failure"]


_BY_CONTENT = (
    "import torch\nimport torch.nn as nn\n\n"
    "class ModelNew(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.counts, self.outs, self.novel = {}, {}, 0\n\n"
    "    def forward(self, a, b):\n"
    "        k = (float(a[0, 0]), float(a[-1, -1]), float(b[0, 0]))\n"
    "        new = k not in self.counts\n"
    "        if new:  # contents not seen before; 'timing': the timed sets repeat\n"
    "            self.novel += any(n >= 3 for n in self.counts.values())\n"
    "        self.counts[k] = self.counts.get(k, 0) + 1\n"
    "        if not new:\n"
    "            return self.outs[k].clone()\n"
    "        out = torch.relu(a @ b)\n"
    "        for _ in range(40 if new and self.novel > 0 else 0):\n"
    "            out = torch.relu(a @ b) + 0 * out\n"
    "        self.outs[k] = out\n"
    "        return out\n")


def test_a_cache_by_content_is_confirmed_by_a_second_set_of_fresh_rounds(w, tmp_path):
    # honest (and slow) on every content it has not seen once the timing repeats its
    # sets, a copy of what it computed on contents it has
    cand = tmp_path / "by_content.py"
    cand.write_text(_BY_CONTENT)
    w.worker.fatal = ""
    w.load(GEMM, variant="small")
    assert w.compile(GEMM, slot="baseline")["compiled"]
    assert w.compile(cand)["compiled"]
    # Each fresh call is set against a call on the same contents after the same steps, so
    # load cancels; a finding still needs two sets of rounds to agree, and a burst can end
    # it: three attempts. A rule that never fires fails all three.
    for attempt in range(3):
        t = w("time", seed=3 + attempt, **QUICK)
        if t["audit_failure"]:
            break
    assert t["audit_failure"].startswith(
        "the candidate is faster on inputs it has seen before (a result cache)"), t
    assert "; again in a second set of rounds: median" in t["audit_failure"]
    assert t["audited"] == len(t["samples_us"]["candidate"]) + 4 * audit.FRESH_ROUNDS


_RELU_13 = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        for _ in range(12):
            y = torch.relu(y)
        return y


def get_inputs():
    return [torch.randn(16, 1000)]


def get_init_inputs():
    return []
"""


def test_a_stateless_candidate_after_a_heavier_baseline_is_no_cache(w, tmp_path):
    """What a new user saw on this 2-core box: `torch.clamp(x, min=0)` against a reference
    of 13 relus, a few microseconds a call, rejected as a result cache in 3 runs of 4 --
    its first call on fresh contents came right after the baseline's settling call, its
    control right after its own first call, and an op that small runs 1.3-1.8x slower
    after the heavier one. The control now follows the same steps."""
    problem = tmp_path / "relu13.py"
    problem.write_text(_RELU_13)
    cand = tmp_path / "clamp.py"
    cand.write_text("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        return torch.clamp(x, min=0)\n")
    w.worker.fatal = ""
    w.load(problem, variant="")
    assert w.compile(problem, slot="baseline")["compiled"]
    assert w.compile(cand)["compiled"]
    w.check(slot="candidate", atol=1e-2, rtol=1e-2)
    for seed in range(4):
        t = w("time", seed=seed, **QUICK)
        assert t["audit_failure"] == "", t["audit_failure"]
        assert t["audited"] >= audit.FRESH_ROUNDS


def test_one_slot_alone_is_timed_unaudited(w, tmp_path):
    w.worker.fatal = ""
    w.load(GEMM, variant="small")
    assert w.compile(as_model_new(GEMM, tmp_path / "one.py"))["compiled"]
    t = w("time", seed=3, slots=["candidate"], **QUICK)
    assert t["audited"] == 0 and t["audit_failure"] == "" and t["samples_us"]["candidate"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_graph_timing_audits_the_last_captured_call(tmp_path):
    wc = InProc(backend="cuda")
    relu = REPO / "tests" / "fixtures" / "kernelbench" / "relu.py"
    wc.load(relu, variant="small", reference_op_rule=False)  # A/A: one op, itself
    assert wc.compile(relu, slot="baseline")["compiled"]
    assert wc.compile(as_model_new(relu, tmp_path / "r.py"), reference_op_rule=False)["compiled"]
    t = wc("time", seed=3, **QUICK)
    assert t["timer"] == "cuda_graph", t
    # the graphs' last calls, then two passes a fresh round
    assert t["audit_failure"] == "", t
    assert t["audited"] == 1 + 2 * audit.FRESH_ROUNDS * fresh_sets(t), t
    assert not math.isnan(t["min_bytes"])
