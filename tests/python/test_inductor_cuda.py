"""Compiled (dispatch-aware) mode on a CUDA device: the inventory of real Triton kernels,
kernel files, and compiling edited kernel files into the live compiled model.

Skipped without a GPU; KGATE_REQUIRE_GPU=1 (tools/gpu-session.sh) turns the skip into a
failure so a GPU runner cannot pass these by not running them."""

import ast
import os
import re
import shutil

import pytest
import torch

from conftest import skip_module_without_cuda, FIXTURES, Worker

skip_module_without_cuda()

PROBLEM = FIXTURES / "inductor" / "pointwise_reduction.py"
TOL = dict(atol=1e-4, rtol=1e-4)


def _compiled_worker(tmp, problem):
    """A CUDA worker with `problem` loaded in compiled mode (small variant), its kernel
    files to go in TMP/kernels."""
    kdir = tmp / "kernels"
    w = Worker(tmp / "worker.stderr")
    w.ok("hello", backend="cuda", device_index=0, cache_dir=str(tmp / "cache"))
    w.ok("load_problem", problem={"kind": "kernelbench", "path": str(problem),
                                  "variant": "small", "mode": "compiled",
                                  "kernels_dir": str(kdir)})
    return w, kdir


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """One worker with the problem loaded in compiled mode and the inventory written."""
    tmp = tmp_path_factory.mktemp("inductor_cuda")
    w, kdir = _compiled_worker(tmp, PROBLEM)
    inv = w.ok("inventory", dir=str(kdir), timeout=600)
    yield w, inv, kdir, tmp
    w.kill()
    w.close()


def _check(w, slot="candidate"):
    c = {"case_id": "c", "seed": 7, "dtype": "f32", "dist": "problem", **TOL}
    return w.ok("check", slot=slot, cases=[c])["cases"][0]


def _kernel(inv, category_prefix):
    for k in inv["kernels"]:
        if k["category"].startswith(category_prefix):
            return k
    raise AssertionError(f"no {category_prefix} kernel in {[k['name'] for k in inv['kernels']]}")


def _edited(tmp, kdir, name, fn):
    """A copy of kernel file NAME.py (outside kernels_dir) with fn applied to its text."""
    text = (kdir / f"{name}.py").read_text()
    out = tmp / f"edit_{name}_{abs(hash(fn)) % 10000}.py"
    out.write_text(fn(text))
    return out


def test_inventory_lists_triton_kernels_and_writes_files(session):
    w, inv, kdir, _ = session
    assert inv["device"] == "cuda" and inv["graphs"] == 1 and inv["no_triton_reason"] == ""
    assert inv["inventory_version"] == 1 and inv["triton"]
    cats = {k["category"] for k in inv["kernels"]}
    assert "pointwise" in cats and cats & {"reduction", "persistent_reduction"}, cats
    assert any(x["kind"] == "extern" for x in inv["externs"]), inv["externs"]
    assert inv["model_device_us"] > 0
    shares = sum(k["share"] for k in inv["kernels"]) + sum(x["share"] for x in inv["externs"])
    assert 0 < shares <= 1.0 + 1e-6, shares
    assert abs(inv["triton_share"] - sum(k["share"] for k in inv["kernels"])) < 1e-3
    for k in inv["kernels"]:
        assert k["device_us"] > 0 and k["bytes"] > 0 and k["calls"] >= 1, k
        assert k["amdahl_bound"] >= 1.0 and k["launch"]["num_warps"] >= 1, k
        assert {a["role"] for a in k["args"]} <= {"in", "out", "in_out", "scalar"}
        assert any(a["role"] == "scalar" and a["name"].endswith("numel") for a in k["args"])
        text = (kdir / k["file"]).read_text()
        assert text.startswith(f"# kgate:kernel {k['name']}\n# kgate:tune LAUNCH_")
        assert "LAUNCH_NUM_WARPS = " in text and "@triton.jit" in text
        ast.parse(text)


def test_unchanged_kernel_files_drop(session):
    w, inv, kdir, _ = session
    name = inv["kernels"][0]["name"]
    r = w.ok("compile", slot="candidate", source_path=str(kdir / f"{name}.py"))
    assert r["compiled"] and r["overrides"] == [] and r["kernel"] == name, r
    assert name in r["unchanged"], r
    c = _check(w)
    assert c["return_code"] == 0 and all(o["over_tol"] == 0 for o in c["outputs"]), c


def test_launch_change_compiles_runs_and_matches(session):
    w, inv, kdir, tmp = session
    k = _kernel(inv, "pointwise")
    name = k["name"]
    text = (kdir / f"{name}.py").read_text()
    m = re.search(r"^# kgate:tune .*LAUNCH_XBLOCK=\[([0-9,]+)\]", text, re.M)
    assert m, text[:400]
    values = [int(v) for v in m.group(1).split(",")]
    other = next(v for v in values if v != k["launch"]["XBLOCK"])
    r = w.ok("compile", slot="candidate", source_path=str(kdir / f"{name}.py"),
             defines={"LAUNCH_XBLOCK": str(other), "LAUNCH_NUM_WARPS": "2"}, timeout=300)
    assert r["compiled"], r
    assert r["overrides"] == [name] and r["defines_applied"] == ["LAUNCH_NUM_WARPS",
                                                                 "LAUNCH_XBLOCK"]
    assert [x["ok"] for x in r["kernel_check"]] == [True], r["kernel_check"]
    c = _check(w)
    assert c["return_code"] == 0 and all(o["over_tol"] == 0 for o in c["outputs"]), c
    # the baseline slot (the problem file) shares the wrapper module and stays unswapped
    b = w.ok("compile", slot="baseline", source_path=str(PROBLEM),
             defines={"KGATE_BASELINE": "candidate"})
    assert b["compiled"] and b["overrides"] == [], b
    t = w.ok("time", slots=["candidate", "baseline"], min_time_s=0.05, max_time_s=2.0,
             min_samples=10, warmup_s=0.02, target_rse=0.05)
    assert t["return_code"] == 0 and all(t["samples_us"].values()), t


def test_screen_times_the_edited_kernel_against_the_baselines_copy(session):
    """compile with `screen`: the edited kernel against Inductor's (the baseline slot is the
    problem file), then against a kept copy (the baseline slot swapping the same edit in):
    positive medians, the same launch config read equal within noise."""
    w, inv, kdir, tmp = session
    k = _kernel(inv, "pointwise")
    name = k["name"]
    b = w.ok("compile", slot="baseline", source_path=str(PROBLEM),
             defines={"KGATE_BASELINE": "candidate"})
    assert b["compiled"] and b["overrides"] == [], b
    warps = 2 if k["launch"]["num_warps"] != 2 else 8
    edit = _edited(tmp, kdir, name, lambda t: re.sub(r"^LAUNCH_NUM_WARPS = \d+",
                                                     f"LAUNCH_NUM_WARPS = {warps}", t,
                                                     flags=re.M))
    r = w.ok("compile", slot="candidate", source_path=str(edit), screen=True, timeout=300)
    assert r["compiled"] and r["overrides"] == [name], r
    sc = r["screen"]
    assert sc["kernel"] == name and sc["against"] == "inductor" and sc["samples"] == 10, sc
    assert sc["best_us"] > 0 and sc["candidate_us"] > 0, sc
    # the same edit in the baseline slot: the screen compares it with itself
    b = w.ok("compile", slot="baseline", source_path=str(edit),
             defines={"KGATE_BASELINE": "candidate"}, timeout=300)
    assert b["overrides"] == [name], b
    r = w.ok("compile", slot="candidate", source_path=str(edit), screen=True, timeout=300)
    sc = r["screen"]
    assert sc["against"] == "kept", sc
    assert 0.8 < sc["candidate_us"] / sc["best_us"] < 1.25, sc
    # without the parameter nothing is timed
    r = w.ok("compile", slot="candidate", source_path=str(edit), timeout=300)
    assert "screen" not in r, r
    w.ok("compile", slot="baseline", source_path=str(PROBLEM),
         defines={"KGATE_BASELINE": "candidate"})


def test_poisoned_store_compiles_but_fails_check(session):
    w, inv, kdir, tmp = session
    k = _kernel(inv, "pointwise")
    poisoned = _edited(tmp, kdir, k["name"], lambda s: re.sub(
        r"tl\.store\(([^,]+), (\w+)", r"tl.store(\1, \2 * 0", s, count=1))
    r = w.ok("compile", slot="candidate", source_path=str(poisoned), timeout=300)
    assert r["compiled"] and r["overrides"] == [k["name"]], r
    assert r["kernel_check"] and not r["kernel_check"][0]["ok"], r["kernel_check"]
    assert r["kernel_check"][0]["max_abs_err"] > 0
    assert "kernel-level check" in r["log"], r["log"]
    c = _check(w)
    assert c["return_code"] == 0 and any(o["over_tol"] > 0 for o in c["outputs"]), c
    # the unswapped baseline is untouched by the candidate's kernel
    w.ok("compile", slot="baseline", source_path=str(PROBLEM),
         defines={"KGATE_BASELINE": "candidate"})
    b = _check(w, "baseline")
    assert all(o["over_tol"] == 0 for o in b["outputs"]), b


def test_wrong_signature_is_compiled_false(session):
    w, inv, kdir, tmp = session
    k = _kernel(inv, "pointwise")
    fn = k["fn_name"]
    bad = _edited(tmp, kdir, k["name"], lambda s: re.sub(
        rf"def {fn}\(", f"def {fn}(extra_ptr, ", s, count=1))
    r = w.ok("compile", slot="candidate", source_path=str(bad))
    assert not r["compiled"] and "launch signature" in r["log"], r


def test_compile_error_names_the_file(session):
    w, inv, kdir, tmp = session
    k = _kernel(inv, "pointwise")
    bad = _edited(tmp, kdir, k["name"], lambda s: s.replace(
        "tl.store(", "tl.store_nonexistent(", 1))
    r = w.ok("compile", slot="candidate", source_path=str(bad), timeout=300)
    assert not r["compiled"] and str(bad) in r["log"], r


def test_unknown_kernel_name_is_compiled_false(session):
    w, inv, kdir, tmp = session
    k = inv["kernels"][0]
    other = _edited(tmp, kdir, k["name"], lambda s: s.replace(
        f"# kgate:kernel {k['name']}", "# kgate:kernel triton_poi_no_such_kernel_9", 1))
    r = w.ok("compile", slot="candidate", source_path=str(other))
    assert not r["compiled"] and "names no Triton kernel" in r["log"], r


def test_never_launched_kernel_is_compiled_false(tmp_path):
    """In process: a compiled reference whose model call launches no Inductor kernel (the
    eager model stands in for the compiled one) — the probe sees no launch."""
    from kgate_worker.worker import Worker as InProc
    kdir = tmp_path / "k"
    w = InProc()
    h = w.handlers()
    h["hello"]({"backend": "cuda", "device_index": 0, "cache_dir": str(tmp_path / "c")})
    h["load_problem"]({"problem": {"kind": "kernelbench", "path": str(PROBLEM),
                                   "variant": "small", "mode": "compiled"}})
    inv = h["inventory"]({"dir": str(kdir), "profile": False})
    assert all(k["device_us"] == 0 and k["share"] == 0 for k in inv["kernels"])
    name = inv["kernels"][0]["name"]
    # the LAUNCH_* values are what the loaded kernel launches with
    launch = inv["kernels"][0]["launch"]
    key = next(k for k in launch if k not in ("num_warps", "num_stages"))
    r = h["compile"]({"slot": "candidate", "source_path": str(kdir / f"{name}.py"),
                      "defines": {f"LAUNCH_{key}": str(max(1, launch[key] // 2)),
                                  "LAUNCH_NUM_WARPS": "2"}})
    assert r["compiled"] and r["overrides"] == [name], r
    cfg = w.slots["candidate"].model.overrides[name].launchers[0].config
    assert cfg.kwargs[key] == max(1, launch[key] // 2) and cfg.num_warps == 2, cfg
    ref = w.problem.compiled_ref
    eager = ref.compiled._orig_mod
    ref.compiled = eager
    edited = kdir / f"{name}.py"
    edited.write_text(edited.read_text() + "\n_kgate_edited = True\n")  # a real change
    r = h["compile"]({"slot": "candidate", "source_path": str(edited)})
    assert not r["compiled"] and "was never launched by the model" in r["log"], r
    shutil.rmtree(kdir)


@pytest.mark.parametrize("min_bound", [0, 1.01, 1e9])
def test_seed_compile_and_the_kernel_set_of_a_directory(tmp_path, min_bound):
    """inventory with seed_mode: Inductor's own search (pointwise autotuning, coordinate
    descent) runs on a copy of each kernel worth searching, on its own call-site arguments,
    and any kernel it configured differently carries its choice as a kgate:tune-seed line;
    then the problem file as the candidate swaps in every changed file of kernels_dir (the
    final re-measure's model), and an unchanged one is reported as such. With
    seed_min_bound (kgate run passes its keep threshold) only the kernels whose Amdahl bound
    reaches it are seeded, none at 1e9."""
    w, kdir = _compiled_worker(tmp_path, PROBLEM)
    try:
        extra = {"seed_min_bound": min_bound} if min_bound else {}
        inv = w.ok("inventory", dir=str(kdir), seed_mode="coordinate-descent", timeout=600,
                   **extra)
        if min_bound >= 1e9:
            assert inv["seed_mode"] == "" and inv["seed_compile_s"] == 0, inv
            assert inv["seed_note"].startswith("not seeded: no kernel's Amdahl bound"), inv
        elif min_bound == 0 or inv["seed_mode"]:
            assert inv["seed_mode"] == "coordinate-descent", inv.get("seed_note")
            assert inv["seed_compile_s"] > 0, inv
            # every kernel's copy loaded, autotuned and descended on the GPU
            assert "seed_note" not in inv, inv["seed_note"]
        for k in inv["kernels"]:
            text = (kdir / k["file"]).read_text()
            if "seed_launch" in k:
                assert "# kgate:tune-seed LAUNCH_" in text, text[:600]
            else:
                assert "kgate:tune-seed" not in text
        names = [k["name"] for k in inv["kernels"]]
        assert len(names) >= 2, names
        # change the launch of the first kernel only; the second stays Inductor's
        first = kdir / f"{names[0]}.py"
        text = first.read_text()
        warps = inv["kernels"][0]["launch"]["num_warps"]
        new = 2 if warps != 2 else 4
        first.write_text(text.replace(f"LAUNCH_NUM_WARPS = {warps}\n",
                                      f"LAUNCH_NUM_WARPS = {new}\n", 1))
        r = w.ok("compile", slot="candidate", source_path=str(PROBLEM), timeout=300)
        assert r["compiled"], r
        assert r["overrides"] == [names[0]], r
        assert set(names[1:]) <= set(r["unchanged"]), r
        c = _check(w)
        assert c["return_code"] == 0 and all(o["over_tol"] == 0 for o in c["outputs"]), c
    finally:
        w.kill()
        w.close()


@pytest.mark.parametrize("problem", ["18_Softmax", "19_LogSoftmax"])
def test_template_offer_is_written_swapped_in_and_correct(tmp_path, problem):
    """The inventory instantiates kgate's row-softmax template for Inductor's softmax
    kernel; the template file compiles into the live model, passes the kernel-level check
    and the model-level check, and times."""
    path = FIXTURES.parent.parent / "kernelbench" / "level1" / f"{problem}.py"
    w, kdir = _compiled_worker(tmp_path, path)
    try:
        inv = w.ok("inventory", dir=str(kdir), timeout=600)
        offered = [k for k in inv["kernels"] if k.get("templates")]
        assert len(offered) == 1, [(k["name"], k["aten_ops"]) for k in inv["kernels"]]
        k = offered[0]
        t = k["templates"][0]
        assert t["template"] == "row-softmax" and t["file"].startswith("templates/"), t
        tpl = tmp_path / t["file"]
        r = w.ok("compile", slot="candidate", source_path=str(tpl), screen=True,
                 timeout=300)
        assert r["compiled"], r
        assert r["overrides"] == [k["name"]], r
        assert [x["ok"] for x in r["kernel_check"]] == [True], r["kernel_check"]
        assert "screen" not in r, r  # a template file is not screened
        c = _check(w)
        assert c["return_code"] == 0 and all(o["over_tol"] == 0 for o in c["outputs"]), c
        b = w.ok("compile", slot="baseline", source_path=str(path),
                 defines={"KGATE_BASELINE": "candidate"})
        assert b["compiled"], b
        tm = w.ok("time", slots=["candidate", "baseline"], min_time_s=0.05, max_time_s=2.0,
                  min_samples=10, warmup_s=0.02, target_rse=0.05)
        assert tm["return_code"] == 0 and all(tm["samples_us"].values()), tm
    finally:
        w.kill()
        w.close()
