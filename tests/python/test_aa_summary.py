"""tools/aa_summary.py: the A/A sweep summary over run directories -- records, a run cut
short (its journaled baselines stand in), the exit status, the trace breakdown."""

import json
import os
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "aa_summary.py")


def _run(*args):
    return subprocess.run([sys.executable, TOOL, *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def _record(d, level, problem, outcome, reason=""):
    p = d / "results" / level
    p.mkdir(parents=True, exist_ok=True)
    (p / f"{problem}.json").write_text(json.dumps(
        {"level": level, "problem": problem, "outcome": outcome, "speedup": 1.0,
         "speedup_lo": 0.99, "speedup_hi": 1.01, "wall_s": 5.0, "reason": reason}))


def test_all_matched_plus_journaled_baselines_pass(tmp_path):
    a = tmp_path / "a"
    _record(a, "kb-level1", "19_ReLU", "matched")
    b = tmp_path / "b"
    b.mkdir()
    base = {"event": "experiment", "verdict": "baseline", "passed": True, "speedup": 1.0,
            "speedup_lo": 0.99, "speedup_hi": 1.0, "wall_s": 7.0, "reason": ""}
    (b / "journal.jsonl").write_text(
        json.dumps({"format": "kgate-journal", "v": 1}) + "\n" +
        json.dumps(dict(base, problem="23_Softmax")) + "\n" + '{"event": "exper')  # torn
    (b / "trace.jsonl").write_text(
        json.dumps({"pid": 1, "op": "hello", "problem": "", "s": 3.0}) + "\n" +
        json.dumps({"pid": 1, "op": "check", "problem": "/kb/23_Softmax.py", "s": 1.5}) + "\n")
    out = tmp_path / "s.json"
    r = _run(a, b, "--json", out, "--expect", 2)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "baseline-only 1" in r.stdout and "matched 1" in r.stdout
    assert "23_Softmax.py" in r.stdout and "hello 3.0" in r.stdout  # start charged to it
    s = json.loads(out.read_text())
    assert s["missing"] == 0 and s["not_matched"] == []


def test_a_reject_or_a_shortfall_fails(tmp_path):
    a = tmp_path / "a"
    _record(a, "kb-level1", "19_ReLU", "matched")
    _record(a, "kb-level1", "70_conv", "error", "A/A false reject: the oracle gate")
    r = _run(a, "--expect", 3)
    assert r.returncode == 1
    assert "not matched:" in r.stdout and "70_conv error: A/A false reject" in r.stdout
    assert "1 planned problem(s) have no result" in r.stdout


def test_the_oracle_anchors_of_compiled_mode_worst_case_per_problem(tmp_path):
    a = tmp_path / "a"
    _record(a, "kb-level2", "1_Conv", "matched")
    lines = [{"pid": 1, "op": "check", "problem": "/kb/1_Conv.py", "s": 1.0,
              "errors": [[2e-7, 1e-7, 3e-7]]},
             {"pid": 1, "op": "check", "problem": "/kb/1_Conv.py", "s": 1.0,
              "errors": [[2e-7, 1e-7, 5e-8], [1e-3, None, None]]},
             {"pid": 1, "op": "check", "problem": "/kb/2_Gemm.py", "s": 1.0,
              "errors": [[1e-6, 2e-6, 1e-6]]}]
    (a / "trace.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = _run(a)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = r.stdout.split("torch.compile's error / the reference's")[1].splitlines()[1:3]
    assert rows[0].split()[:2] == ["1_Conv.py", "3"], rows   # the worse of its two cases
    assert rows[1].split()[:2] == ["2_Gemm.py", "0.5"], rows
