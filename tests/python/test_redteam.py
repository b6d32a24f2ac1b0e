"""Issue 16, the red-team corpus for KernelBench (Python) candidates: cheating or broken
ModelNew files under tests/redteam/python/<class>/*.py, each with an
`# expect: GATE | RULE | REASON` line (REASON a substring of the rejection), judged by an
in-process worker the way the gates judge them (harness/gates: static, correctness with
the KernelBench plan -- 3 seeds x {problem, signed}, 2 repeats, atol = rtol = 1e-2 --,
the float64 oracle with rho 10 and a 4-ulp floor, then timing with the side-stream and
roofline rules). The reasons are the gates' own wording.

Header lines a candidate may carry:
  # expect: pass                         a correct-but-unusual candidate (unusual/)
  # expect: known-gap | GATE | WHY       a cheat the gates do not reject yet: the test
                                         asserts it still passes (and fails when it is
                                         caught, so docs/redteam.md gets updated)
  # problem: NAME.py                     tests/redteam/python/problems/NAME.py (default:
                                         the timer corpus's GEMM+ReLU problem)
  # requires: cuda                       judged only on a CUDA worker
  # requires: subprocess                 a hang: judged through `kgate bench --timeout`
  # cuda-expect: ...                     on a CUDA worker, this expectation instead (the
                                         line may repeat: any of them); for a cheat that
                                         is no cheaper than honest work at the GPU's scale

CPU: .venv/bin/python -m pytest -q tests/python/test_redteam.py
GPU (H200): KGATE_REQUIRE_GPU=1 KGATE_REDTEAM_CUDA=1 .venv/bin/python -m pytest -q \
    tests/python/test_redteam.py
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import pytest
import torch

from conftest import REPO
from inproc import InProc
from kgate_worker import clocks
from kgate_worker.protocol import WorkerError

RED = REPO / "tests" / "redteam" / "python"
PROBLEMS = RED / "problems"
DEFAULT_PROBLEM = REPO / "tests" / "redteam" / "timer" / "problem.py"
SEEDS = (200822465, 849424158, 332582595)
ATOL = RTOL = 1e-2
RHO, FLOOR_ULPS = 10.0, 4
EPS = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f64": 2.0 ** -52}
ROOFLINE_SLACK = 0.8
# A cache whose hit saves about half its time (caching/by_full_hash: a median ratio of about
# 1.9x against the audit's 1.5x) is caught by 7 of 10 single judgments on the 2-core dev box
# idle, 10 of 10 under two busy loops; 3 tries let one fresh-clone CI run through (2026-12-08).
TIMING_TRIES = 6
QUICK = dict(warmup_s=0.01, min_time_s=0.1, max_time_s=1.0, min_samples=10, input_sets=2)
KGATE = Path(os.environ.get("KGATE_BIN", REPO / "build" / "kgate"))
CUDA = torch.cuda.is_available() and os.environ.get("KGATE_REDTEAM_CUDA") == "1"


def header(path: Path) -> dict:
    h = {"expect": None, "problem": DEFAULT_PROBLEM, "requires": set(), "cuda_expect": []}
    for line in path.read_text().splitlines():
        if line.startswith("# expect:"):
            h["expect"] = [x.strip() for x in line[len("# expect:"):].split("|", 2)]
        elif line.startswith("# cuda-expect:"):
            h["cuda_expect"].append([x.strip() for x in
                                     line[len("# cuda-expect:"):].split("|", 2)])
        elif line.startswith("# problem:"):
            h["problem"] = PROBLEMS / line[len("# problem:"):].strip()
        elif line.startswith("# requires:"):
            h["requires"] |= {x.strip() for x in line[len("# requires:"):].split(",")}
    assert h["expect"], f"{path}: no '# expect:' line"
    return h


CANDIDATES = sorted(p for p in RED.glob("*/*.py") if p.parent.name != "problems")


def fmt(v: float) -> str:
    return f"{v:.3g}"


def correctness_reason(c: dict) -> str | None:
    """judge_correctness_case (harness/gates/correctness_gate.cpp), same order and words."""
    if c["return_code"] != 0:
        return "raised " + c["error"] if c["error"] else f"kgate_run returned {c['return_code']}"
    if c["cannot_judge"]:
        return None
    if not c["outputs"]:
        return "the worker reported no outputs for this case"
    for o in c["outputs"]:
        if not o["shape_ok"]:
            return f"output {o['name']} has the wrong shape"
    for o in c["outputs"]:
        if o["unwritten"] > 0:
            return f"{o['unwritten']} elements never written (still hold the poison value)"
    for o in c["outputs"]:
        if o["nan"] > 0 or o["inf"] > 0:
            what = " and ".join(x for x in (f"{o['nan']} NaN" if o["nan"] else "",
                                            f"{o['inf']} Inf" if o["inf"] else "") if x)
            return f"{what} elements where the float64 truth is finite"
    for o in c["outputs"]:
        if o["over_tol"] > 0:
            return (f"{o['over_tol']} elements over tolerance (worst: got {fmt(o['worst_got'])}"
                    f", want {fmt(o['worst_want'])}; max_abs_err {fmt(o['max_abs_err'])})")
    if c["inputs_modified"]:
        return "the candidate modified its inputs (inputs are read-only)"
    if not c["deterministic"]:
        return "2 runs on identical inputs were not bitwise identical (nondeterministic)"
    return None


def oracle_reason(c: dict, b: dict, dtype: str = "f32") -> str | None:
    floor = FLOOR_ULPS * EPS[dtype]
    for o in c["outputs"]:
        bo = next((x for x in b["outputs"] if x["name"] == o["name"]), None)
        if bo is None:
            return "the baseline reported no output " + o["name"]
        if not math.isfinite(bo["rel_l2_err"]):
            continue
        bound = RHO * max(bo["rel_l2_err"], floor)
        if not o["rel_l2_err"] <= bound:
            return (f"rel_l2_err {fmt(o['rel_l2_err'])} vs float64 truth > {fmt(RHO)} x "
                    f"baseline's {fmt(bo['rel_l2_err'])} = {fmt(bound)}")
    return None


def judge(w: InProc, path: Path, problem: Path, timing: dict) -> tuple[str, str, str]:
    """('static', rule, message) | ('correctness', '-', reason) | ('oracle', '-', reason) |
    ('performance', kind, reason) | ('pass', '-', '-')."""
    w.worker.fatal = ""
    w.load(problem, variant="small")
    assert w.compile(problem, slot="baseline")["compiled"]
    c = w.compile(path)
    if not c["compiled"]:
        f = c["findings"][0] if c["findings"] else {"rule": "import", "message": c["log"]}
        return "static", f["rule"], f["message"]
    cases = [dict(case_id=f"seed={s}/f32/{d}", seed=s, dtype="f32", dist=d, repeats=2,
                  atol=ATOL, rtol=RTOL) for s in SEEDS for d in ("problem", "signed")]
    got = []
    for case in cases:
        r = w("check", slot="candidate", cases=[case])["cases"][0]
        why = correctness_reason(r)
        if why:
            return "correctness", "-", f"case {case['case_id']}: {why}"
        got.append(r)
    for case, r in zip(cases, got):
        b = w("check", slot="baseline", cases=[case])["cases"][0]
        why = oracle_reason(r, b)
        if why:
            return "oracle", "-", f"case {case['case_id']}: {why}"
    try:
        t = w("time", seed=1, **timing)
    except WorkerError as e:
        return "performance", e.kind, e.message
    cand, base = t["samples_us"]["candidate"], t["samples_us"]["baseline"]
    if not cand or not base:
        return "performance", "worker_error", ("the worker returned no samples for the "
                                               f"candidate ({t['timer_note']})")
    if t["audit_failure"]:
        return "performance", "-", "timed calls: " + t["audit_failure"]
    if t["side_stream_work"]:
        return "performance", "-", ("work was still pending outside the timed stream at the "
                                    "end of a sample")
    bw = w.hello["device"]["copy_bandwidth_gbps"]
    floor_us = t["min_bytes"] / (bw * 1e3)
    med = sorted(cand)[len(cand) // 2]
    base_med = sorted(base)[len(base) // 2]
    # as the performance gate: a floor the baseline itself runs below is not applied (the
    # bandwidth behind it was measured low)
    if med < ROOFLINE_SLACK * floor_us and base_med >= ROOFLINE_SLACK * floor_us:
        return "performance", "-", (f"does less work than the problem requires: candidate "
                                    f"median {med:.4g} us < {ROOFLINE_SLACK} x roofline floor "
                                    f"{floor_us:.4g} us")
    return "pass", "-", "-"


pytestmark = pytest.mark.usefixtures("clocks_intact")


@pytest.fixture(scope="module")
def w():
    return InProc(backend="cuda" if CUDA else "cpu")


def verdict_ok(expect: list, got: tuple) -> tuple[bool, str]:
    """Whether the judgement is the expected one. known-gap: still passes (a rejection
    means the gap is closed: update the file and docs/redteam.md)."""
    if expect[0] == "pass":
        return got[0] == "pass", "a correct candidate was rejected"
    if expect[0] == "known-gap":
        # The performance gate's verdict on a cheat is a timing: on a loaded host the
        # roofline floor is crossed one run in a few, whatever gate the gap is about.
        # Caught there is no news; caught at a deterministic gate is.
        if got[0] == "performance":
            return True, ""
        return got[0] == "pass", ("the known gap is closed (the cheat is now rejected): "
                                  "make it an expectation and update docs/redteam.md")
    # several acceptable outcomes, separated by ' || ' in the reason field
    gate, rule, reason = expect
    if got[0] != gate:
        return False, f"rejected at the wrong gate (want {gate})"
    if rule != "-" and got[1] != rule:
        return False, f"wrong rule (want {rule})"
    return any(r.strip() in got[2] for r in reason.split("||")), f"reason lacks '{reason}'"


def _param(p: Path):
    h = header(p)
    marks = []
    if "cuda" in h["requires"]:
        marks.append(pytest.mark.skipif(not CUDA, reason="needs a CUDA worker "
                                        "(KGATE_REDTEAM_CUDA=1 on a GPU)"))
    if "subprocess" in h["requires"]:
        marks.append(pytest.mark.skipif(not KGATE.is_file(),
                                        reason="no kgate build (build/kgate or KGATE_BIN)"))
    return pytest.param(p, marks=marks, id=f"{p.parent.name}/{p.stem}")


def test_the_corpus_covers_the_classes():
    classes = {p.parent.name for p in CANDIDATES}
    assert len(CANDIDATES) >= 25, len(CANDIDATES)
    assert "unusual" in classes and len(classes) >= 10, classes
    for p in CANDIDATES:
        h = header(p)
        assert h["expect"][0] in ("pass", "known-gap", "static", "correctness", "oracle",
                                  "performance"), (p, h["expect"])
        assert (p.parent.name == "unusual") == (h["expect"][0] == "pass"), p


def bench(path: Path, problem: Path, timeout_s: int = 5) -> tuple[str, str, str]:
    """The real binaries: kgate bench with a short request deadline (a hang)."""
    r = subprocess.run([str(KGATE), "bench", "--problem", str(problem), "--candidate",
                        str(path), "--device", "cpu", "--min-time", "0.1", "--max-time", "1",
                        "--seed", "1", "--timeout", str(timeout_s)], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    for line in out.splitlines():
        if line.startswith("verdict: FAIL at the "):
            gate = line[len("verdict: FAIL at the "):].split()[0]
            return gate, "-", out
        if line.startswith("verdict: PASS"):
            return "pass", "-", out
    return "none", "-", out


@pytest.mark.parametrize("path", [_param(p) for p in CANDIDATES])
def test_redteam_python(w, path):
    h = header(path)
    expects = h["cuda_expect"] if CUDA and h["cuda_expect"] else [h["expect"]]
    # A rejection at the performance gate that only a timing can make (a result cache is
    # slower on fresh contents; the roofline) may be missed on a host so loaded that every
    # call takes the same scheduler-bound time: judged up to TIMING_TRIES times; the
    # deterministic gates once.
    timing = any(e[0] == "performance" for e in expects)
    for _ in range(TIMING_TRIES if timing and "subprocess" not in h["requires"] else 1):
        if "subprocess" in h["requires"]:
            got = bench(path, h["problem"])
        else:
            got = judge(w, path, h["problem"], QUICK)
        results = [verdict_ok(e, got) for e in expects]
        if any(r[0] for r in results) or got[0] != "pass":
            break
    ok = any(r[0] for r in results)
    why = "; ".join(r[1] for r in results)
    assert ok, f"{path.relative_to(REPO)}: {why}; got {got[0]} | {got[1]} | {got[2][-2000:]}"
