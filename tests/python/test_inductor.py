"""Compiled (dispatch-aware) mode without a GPU: wrapper parsing on fixtures, kernel
files and their tune lines, the AST-equality drop, header errors, the module-global swap
against fake wrapper modules, the trial's probes, and the CPU end-to-end protocol."""

import ast
import types

import pytest
import torch

from conftest import FIXTURES, INDUCTOR_CACHE, KB, Worker
from kgate_worker import inductor, source

IND = FIXTURES / "inductor"
HAND = IND / "cuda_wrapper.handwritten.py.txt"
CPU_CAP = IND / "cpu_wrapper.captured-cpu-2.15.py.txt"
H200_CAP = IND / "pointwise_reduction.cuda-2.11.0.g0.captured.py.txt"


# ---- static parsing ------------------------------------------------------------------

def test_parse_handwritten_cuda_wrapper():
    pw = inductor.parse_wrapper(HAND.read_text())
    names = [k.name for k in pw.kernels]
    assert names == ["triton_poi_fused_convolution_transpose_0",
                     "triton_per_fused_add_native_layer_norm_1",
                     "triton_tem_fused_bmm_2", "triton_red_fused_sum_3"]  # call order
    poi, per, tem, red = pw.kernels
    assert [k.category for k in pw.kernels] == ["pointwise", "persistent_reduction",
                                                "template", "reduction"]
    assert poi.calls == 2 and per.calls == 1 and tem.calls == 1 and red.calls == 1
    assert poi.fn_name == poi.name and poi.device == "cuda"
    assert poi.aten_ops == ["aten.convolution", "aten.transpose"]
    assert poi.source_nodes == ["conv1d", "transpose"]
    assert red.aten_ops == ["aten.sum"] and red.source_nodes == ["sum_1"]
    assert poi.source.lstrip().startswith("import triton") and "@triton.jit" in poi.source
    assert [(x["kind"], x["name"], x["calls"]) for x in pw.externs] == [
        ("extern", "convolution", 1), ("extern", "mm", 1), ("extern", "addmm", 1),
        ("fallback", "torch.ops.aten._scaled_dot_product_cudnn_attention.default", 1)]
    assert pw.other_kernels == []
    # call-site names: non-constexpr parameters, then a template's grid ints
    assert inductor.call_site_names(poi.source) == ["in_ptr0", "out_ptr0", "ynumel", "xnumel"]
    assert inductor.call_site_names(tem.source) == ["arg_A", "arg_B", "out_ptr0", "_grid_0",
                                                    "_grid_1", "_grid_2"]
    assert inductor.call_site_names(per.source, 5)[-1] == "arg4"
    meta = inductor.inductor_meta(ast.parse(per.source))
    assert meta["mutated_arg_names"] == ["in_out_ptr0"]


def _flows(pw):
    return [(f["buffer"], f["producer"], f["arg"], f["consumers"], f["output"])
            for f in pw.flows]


def test_wrapper_flows_follow_aliases_views_and_rewrites():
    # Hand-written: a reused buffer (buf2 = buf1), an in-place kernel, views passed to an
    # extern call (reinterpret_tensor), a fallback's tuple element (buf6 = buf5[0]), a
    # kernel launched twice, and what `call` returns.
    pw = inductor.parse_wrapper(HAND.read_text())
    poi, per, tem, red = (k.name for k in pw.kernels)
    sdpa = "torch.ops.aten._scaled_dot_product_cudnn_attention.default"
    assert _flows(pw) == [
        ("buf0", poi, "out_ptr0", ["convolution"], False),
        ("buf1", "convolution", "result", [per], False),
        ("buf1", per, "in_out_ptr0", ["mm", poi], False),   # written in place, read twice
        ("buf3", "mm", "out", ["addmm"], False),
        ("buf4", "addmm", "out", [sdpa], False),
        ("buf5", sdpa, "result", [tem], False),
        ("buf7", tem, "out_ptr0", [], True),
        ("buf8", poi, "out_ptr0", [red], False),
        ("buf9", red, "out_ptr0", [], True)]
    assert pw.flows[0]["shape"] == [8, 256, 512] and pw.flows[0]["dtype"] == "float32"
    assert pw.flows[0]["bytes"] == 8 * 256 * 512 * 4
    assert pw.flows[1]["bytes"] == 0  # an extern call's result: its size is not written


def test_wrapper_flows_name_the_intermediates_a_pair_of_kernels_round_trips():
    # 37_Matmul_Swish_Sum_GroupNorm: the statistics kernel writes each group's mean and
    # rstd (8 MiB each), which only the apply kernel reads; the GEMM's output is read by
    # both and written in place by the second, which returns it.
    pw = inductor.parse_wrapper(
        (IND / "37_Matmul_Swish_Sum_GroupNorm.cuda-2.11.0.g0.captured.py.txt").read_text())
    stats, apply = (k.name for k in pw.kernels)
    assert _flows(pw) == [("buf0", "mm", "out", [stats, apply], False),
                          ("buf1", stats, "out_ptr0", [apply], False),
                          ("buf2", stats, "out_ptr1", [apply], False),
                          ("buf0", apply, "in_out_ptr0", [], True)]
    assert [f["bytes"] for f in pw.flows] == [2**29, 2**23, 2**23, 2**29]


def _partners(pw):
    flows = [dict(f, graph=0) for f in pw.flows]
    got = inductor.pair_partners(flows, {k.name: k.calls for k in pw.kernels})
    return {c: [(p["kernel"], p["buffers"], p["bytes"]) for p in ps] for c, ps in got.items()}


def test_pair_partners_are_producers_whose_every_write_only_one_kernel_reads():
    gemm = inductor.parse_wrapper(
        (IND / "37_Matmul_Swish_Sum_GroupNorm.cuda-2.11.0.g0.captured.py.txt").read_text())
    stats, apply = (k.name for k in gemm.kernels)
    assert _partners(gemm) == {apply: [(stats, ["buf1", "buf2"], 2 * 2**23)]}
    # a chain: each kernel pairs with the one before it
    ln = inductor.parse_wrapper((IND / "kb-level1/40_LayerNorm.cuda-2.11.0.g0.captured.py.txt")
                                .read_text())
    red, per, poi = (k.name for k in ln.kernels)
    assert _partners(ln) == {per: [(red, ["buf0", "buf1", "buf2"], 3 * 2048)],
                             poi: [(per, ["buf3", "buf4"], 2 * 64)]}
    # none where a write has two readers, is returned, or a kernel launches twice
    assert _partners(inductor.parse_wrapper(HAND.read_text())) == {}
    soft = inductor.parse_wrapper((IND / "23_Softmax.cuda-2.11.0.g0.captured.py.txt").read_text())
    assert _partners(soft) == {}
    # the kernel file says so
    entry = {"name": apply, "args": [], "launch": {},
             "partners": [{"kernel": stats, "buffers": ["buf1", "buf2"], "bytes": 2 * 2**23}]}
    text = inductor.kernel_file_text(entry, gemm.kernels[1].source)
    assert f"#   reads buf1, buf2 (16777216 bytes) from {stats}, their only reader" in text
    assert f"# (a pair: kernels/{stats}.py may change in the same experiment" in text.replace("#     ", "# ")


def test_parse_cpu_capture_has_only_cpp_kernels():
    pw = inductor.parse_wrapper(CPU_CAP.read_text())
    assert pw.kernels == []
    assert pw.other_kernels == [{"name": "cpp_fused__softmax_relu_0", "kind": "cpp",
                                 "calls": 1}]
    assert pw.externs == [{"name": "addmm", "kind": "extern", "calls": 1}]


def test_parse_real_h200_capture():
    pw = inductor.parse_wrapper(H200_CAP.read_text())
    assert [k.category for k in pw.kernels] == ["persistent_reduction", "pointwise"]
    assert all(k.calls == 1 and k.device == "cuda" for k in pw.kernels)
    assert [x["name"] for x in pw.externs] == ["mm"]
    assert "aten.sum" in pw.kernels[0].aten_ops


# Real captures of official KernelBench problems (torch 2.11.0+cu130, triton 3.6.0, H200,
# tests/fixtures/inductor/capture.py): what a dispatch-aware search sees on them.
def test_parse_official_kernelbench_captures():
    soft = inductor.parse_wrapper((IND / "23_Softmax.cuda-2.11.0.g0.captured.py.txt").read_text())
    assert [(k.category, k.calls) for k in soft.kernels] == [("reduction", 1)]
    assert soft.kernels[0].name.startswith("triton_red_fused__softmax")
    assert soft.externs == [] and soft.other_kernels == []
    assert "aten._softmax" in soft.kernels[0].aten_ops
    gemm = inductor.parse_wrapper(
        (IND / "37_Matmul_Swish_Sum_GroupNorm.cuda-2.11.0.g0.captured.py.txt").read_text())
    assert [k.category for k in gemm.kernels] == ["persistent_reduction", "pointwise"]
    assert [(x["kind"], x["name"]) for x in gemm.externs] == [("extern", "mm")]
    for k in soft.kernels + gemm.kernels:  # every kernel's source loads as a kernel file
        text = inductor.kernel_file_text({"name": k.name, "args": [], "launch": {}}, k.source)
        assert inductor.parse_kernel_header(text, "k.py") == k.name


def test_roles():
    mutated = {"in_ptr1"}
    assert inductor.arg_role("in_out_ptr0", True, set()) == "in_out"
    assert inductor.arg_role("out_ptr0", True, mutated) == "out"
    assert inductor.arg_role("in_ptr0", True, mutated) == "in"
    assert inductor.arg_role("in_ptr1", True, mutated) == "in_out"
    assert inductor.arg_role("arg_A", True, set()) == "in"
    assert inductor.arg_role("xnumel", False, set()) == "scalar"


# ---- kernel files ---------------------------------------------------------------------

def _entry(launch=None, xnumel=524288):
    return {"name": "triton_poi_fused_relu_0", "fn_name": "triton_poi_fused_relu_0",
            "aten_ops": ["aten.relu"], "args": [
                {"name": "in_ptr0", "role": "in", "dtype": "f32", "shape": [128, 4096],
                 "stride": [4096, 1], "offset": 0},
                {"name": "out_ptr0", "role": "out", "dtype": "f32", "shape": [128, 4096],
                 "stride": [4096, 1], "offset": 0},
                {"name": "xnumel", "role": "scalar", "value": xnumel}],
            "launch": launch or {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1},
            "device_us": 4.5, "share": 0.123, "bandwidth_fraction": 0.64}


KSRC = HAND.read_text().split("async_compile.triton('triton_poi_fused_convolution_"
                              "transpose_0', '''")[1].split("''', device_str")[0]


def test_tune_values():
    assert inductor.tune_values("XBLOCK", 1024, {"xnumel": 524288}) == [
        256, 512, 1024, 2048, 4096]
    assert inductor.tune_values("XBLOCK", 256, {"xnumel": 300}) == [64, 128, 256, 512]
    assert inductor.tune_values("XBLOCK", 1024, {"xnumel": 100}) == [1024]  # capped: v kept alone
    assert inductor.tune_values("XBLOCK", 4, {}) == [1, 2, 4, 8, 16]
    assert inductor.tune_values("R0_BLOCK", 64, {"r0_numel": 64}) == [16, 32, 64]
    assert inductor.tune_values("R0_BLOCK", 64, {"rnumel": 100}) == [16, 32, 64, 128]
    assert inductor.tune_values("YBLOCK", 16, {"xnumel": 2}) == [4, 8, 16, 32, 64]
    assert inductor.tune_values("NUM_WARPS", 4, {}) == [1, 2, 4, 8, 16]
    assert inductor.tune_values("NUM_WARPS", 32, {}) == [1, 2, 4, 8, 16, 32]
    assert inductor.tune_values("NUM_STAGES", 1, {}) == [1, 2, 3, 4]
    assert inductor.tune_values("NUM_STAGES", 5, {}) == [1, 2, 3, 4, 5]
    assert inductor.tune_values("EVEN_K", True, {}) is None
    assert inductor.tune_values("XBLOCK", 96, {}) is None  # not a power of two


def test_kernel_file_text_header_and_defaults():
    text = inductor.kernel_file_text(_entry(), KSRC)
    lines = text.splitlines()
    assert lines[0] == "# kgate:kernel triton_poi_fused_relu_0"
    assert lines[1] == ("# kgate:tune LAUNCH_XBLOCK=[256,512,1024,2048,4096] "
                        "LAUNCH_NUM_WARPS=[1,2,4,8,16] LAUNCH_NUM_STAGES=[1,2,3,4]")
    assert "#   triton_poi_fused_relu_0.run(in_ptr0, out_ptr0, xnumel, stream=...)" in lines
    assert "#   in_ptr0    in       f32[128, 4096]  stride [4096, 1]  offset 0" in lines
    assert "#   xnumel     scalar   524288" in lines
    assert "#   fuses: aten.relu" in lines
    assert ("#   time: 4.50 us per model call, 12.3% of the model's GPU time, 64% of copy "
            "bandwidth") in lines
    assert lines.index("LAUNCH_XBLOCK = 1024") < lines.index("LAUNCH_NUM_WARPS = 4") < \
        lines.index("LAUNCH_NUM_STAGES = 1")
    assert text.endswith(KSRC.lstrip("\n")) or text.rstrip("\n").endswith(KSRC.strip("\n"))
    tree = ast.parse(text)
    assert inductor.parse_kernel_header(text, "k.py") == "triton_poi_fused_relu_0"
    assert inductor.launch_config(tree) == ({"XBLOCK": 1024}, 4, 1)
    fn = inductor.jit_function(tree)
    assert inductor.launch_params(fn) == ["in_ptr0", "out_ptr0", "ynumel", "xnumel"]
    # unprofiled: says so
    e = _entry()
    e["device_us"] = 0.0
    assert "#   time: not profiled" in inductor.kernel_file_text(e, KSRC)


def test_kernel_file_several_block_keys():
    launch = {"YBLOCK": 32, "XBLOCK": 32, "num_warps": 4, "num_stages": 1}
    e = _entry(launch)
    e["args"].insert(2, {"name": "ynumel", "role": "scalar", "value": 4096})
    e["args"][-1]["value"] = 256
    text = inductor.kernel_file_text(e, KSRC)
    tune = text.splitlines()[1]
    assert tune.startswith("# kgate:tune LAUNCH_YBLOCK=[8,16,32,64,128] "
                           "LAUNCH_XBLOCK=[8,16,32,64,128] ")
    assert inductor.launch_config(ast.parse(text)) == ({"YBLOCK": 32, "XBLOCK": 32}, 4, 1)


def test_ast_equality_drop():
    orig = inductor.kernel_file_text(_entry(), KSRC)
    base = ast.parse(orig)
    commented = orig.replace("    xmask = xindex < xnumel\n",
                             "    # a comment the AST does not see\n    xmask = xindex < xnumel\n")
    commented = commented.replace("#   time: 4.50 us", "#   time: 9.99 us")
    assert commented != orig and inductor.same_ast(ast.parse(commented), base)
    tree = ast.parse(orig)
    assert source.rewrite_assignments(tree, {"LAUNCH_XBLOCK": 512}) == {"LAUNCH_XBLOCK"}
    assert not inductor.same_ast(tree, base)
    assert not inductor.same_ast(ast.parse(orig.replace("LAUNCH_NUM_WARPS = 4",
                                                        "LAUNCH_NUM_WARPS = 8")), base)
    # defines that restate the defaults are no change at all
    tree = ast.parse(orig)
    source.rewrite_assignments(tree, {"LAUNCH_XBLOCK": 1024})
    assert inductor.same_ast(tree, base)


def test_override_set_pins_a_partners_kept_copy_for_the_baseline(tmp_path):
    # The workspace holds the experiment's edit of the partner (B); the baseline's set pins
    # B's kept copy, and the baseline's own file (A's best) stays its own.
    kdir, best = tmp_path / "kernels", tmp_path / "best"
    kdir.mkdir()
    best.mkdir()
    (kdir / "A.py").write_text("# kgate:kernel A\nX = 1\n")
    (kdir / "B.py").write_text("# kgate:kernel B\nNOOP = 1\n")
    (best / "A.py").write_text("# kgate:kernel A\nX = 0\n")
    (best / "B.py").write_text("# kgate:kernel B\nKEPT = 1\n")
    own = best / "A.py"
    text, tree, name = inductor.read_kernel_file(str(own))
    plain = inductor.override_set(str(kdir), str(own), name, text, tree)
    assert plain["B"][0] == str(kdir / "B.py")          # what leaked before pins
    got = inductor.override_set(str(kdir), str(own), name, text, tree,
                                [str(best / "B.py"), str(best / "A.py")])
    assert {n: v[0] for n, v in got.items()} == {"A": str(own), "B": str(best / "B.py")}
    assert "KEPT = 1" in got["B"][1]
    (tmp_path / "plain.py").write_text("X = 1\n")
    with pytest.raises(inductor.CompileFailure, match="not a kernel file"):
        inductor.override_set(str(kdir), str(own), name, text, tree, [str(tmp_path / "plain.py")])
    with pytest.raises(inductor.CompileFailure, match="no such file"):
        inductor.override_set(str(kdir), str(own), name, text, tree, [str(tmp_path / "gone.py")])


def test_header_parsing_errors():
    assert inductor.parse_kernel_header("import torch\n", "p.py") is None
    assert inductor.parse_kernel_header("x = 1\n# kgate:kernel late_name\n", "p.py") is None
    assert inductor.parse_kernel_header("\n# note\n#  kgate:kernel  k_1 \nx = 1\n",
                                        "p.py") == "k_1"
    for bad, line in (("# kgate:kernel\n", 1), ("# kgate:kernel a b\n", 1),
                      ("# x\n# kgate:kernel 1abc\n", 2),
                      ("# kgate:kernel a\n# kgate:kernel b\n", 2)):
        with pytest.raises(source.SourceError) as e:
            inductor.parse_kernel_header(bad, "/k/f.py")
        assert str(e.value).startswith(f"/k/f.py:{line}: "), str(e.value)
    with pytest.raises(source.SourceError, match="must be a literal"):
        inductor.launch_config(ast.parse("LAUNCH_XBLOCK = 2 * n\n"))


# ---- swap / restore -------------------------------------------------------------------

class FakeKernel:
    def __init__(self, tag, log, fn=None):
        self.tag, self.log, self.fn = tag, log, fn

    def run(self, *args, stream=None):
        self.log.append(self.tag)
        if self.fn is not None:
            self.fn(*args)


def fake_wrapper(log, name="triton_poi_k_0"):
    mod = types.ModuleType("fake_wrapper")
    setattr(mod, name, FakeKernel("orig", log))

    def call(args):
        getattr(mod, name).run(*args, stream=0)
        return args
    mod.call = call
    return mod


def test_swap_only_inside_the_call_and_restored():
    log = []
    mod = fake_wrapper(log)
    orig = mod.triton_poi_k_0
    seen = []
    sm = inductor.SwappedModel(lambda *x: seen.append(mod.triton_poi_k_0) or mod.call(list(x)),
                               {"triton_poi_k_0": FakeKernel("new", log)},
                               modules=lambda: [mod])
    sm(1)
    assert log == ["new"] and seen[0] is not orig and mod.triton_poi_k_0 is orig
    mod.call([1])
    assert log == ["new", "orig"]

    def boom(*x):
        mod.call(list(x))
        raise RuntimeError("inside")
    bad = inductor.SwappedModel(boom, {"triton_poi_k_0": FakeKernel("bad", log)},
                                modules=lambda: [mod])
    with pytest.raises(RuntimeError):
        bad(1)
    assert mod.triton_poi_k_0 is orig and log[-1] == "bad"


def test_two_swapped_models_share_one_module():
    log = []
    mod = fake_wrapper(log)
    mods = [mod]
    run = lambda *x: mod.call(list(x))  # noqa: E731
    a = inductor.SwappedModel(run, {"triton_poi_k_0": FakeKernel("A", log)}, lambda: mods)
    b = inductor.SwappedModel(run, {}, lambda: mods)
    a(1), b(1), a(1), b(1)
    assert log == ["A", "orig", "A", "orig"]


def test_swap_rescans_when_the_cache_grows_and_skips_kernel_modules():
    log = []
    mod = fake_wrapper(log)
    kmod = fake_wrapper(log)  # a kernel module: imports triton_heuristics
    kmod.triton_heuristics = object()
    mods = [mod, kmod]
    current = [mod]
    sm = inductor.SwappedModel(lambda *x: current[0].call(list(x)),
                               {"triton_poi_k_0": FakeKernel("new", log)}, lambda: mods)
    sm(1)
    assert [m for m, _ in sm.targets()] == [mod] and log == ["new"]
    newer = fake_wrapper(log)  # a recompile: a new wrapper module with new kernel objects
    mods.append(newer)
    current[0] = newer
    sm(1)
    assert log == ["new", "new"] and isinstance(newer.triton_poi_k_0, FakeKernel)
    assert newer.triton_poi_k_0.tag == "orig" and kmod.triton_poi_k_0.tag == "orig"


# ---- the trial (probes, kernel-level check) -------------------------------------------

class FakeRef:
    def __init__(self, compiled, names):
        self.compiled = compiled
        self.entries = {n: {"args": [{"name": "in_ptr0"}, {"name": "out_ptr0"},
                                     {"name": "xnumel"}]} for n in names}


def _doubler(scale):
    def fn(x, out, n):
        out.copy_(x * scale)
    return fn


def _trial_setup(scale, launch=True):
    log = []
    mod = types.ModuleType("fake_wrapper")
    mod.triton_poi_k_0 = FakeKernel("orig", log, _doubler(2.0))

    def call(args):
        x = args[0]
        out = torch.empty_like(x)
        if launch:
            mod.triton_poi_k_0.run(x, out, x.numel(), stream=0)
        return out
    mod.call = call
    ref = FakeRef(lambda *x: mod.call(list(x)), ["triton_poi_k_0"])
    ov = inductor.Override("triton_poi_k_0", "/k/triton_poi_k_0.py", "", ast.parse(""))
    ov.autotuner = FakeKernel("new", log, _doubler(scale))
    return ref, ov, mod, log


def test_trial_kernel_check_reports_a_mismatch():
    ref, ov, mod, log = _trial_setup(0.0)
    res, lines, screened = inductor.trial(ref, [ov], [torch.ones(8)], True, "/k/x.py",
                                          modules=lambda: [mod])
    assert screened is None
    assert log == ["orig", "new"]  # the original ran on clones first
    assert res == [{"kernel": "triton_poi_k_0", "ok": False, "max_abs_err": 2.0,
                    "arg": "out_ptr0"}]
    assert lines == ["/k/triton_poi_k_0.py: kernel-level check: triton_poi_k_0 arg out_ptr0 "
                     "max abs err 2 (first model call)"]
    assert mod.triton_poi_k_0.tag == "orig"
    ref, ov, mod, log = _trial_setup(2.0)
    res, lines, _ = inductor.trial(ref, [ov], [torch.ones(8)], True, "/k/x.py",
                                   modules=lambda: [mod])
    assert res[0]["ok"] and res[0]["max_abs_err"] == 0.0 and lines == []


def _pair_timer(best_us, cand_us, calls):
    """A screen timer that launches each side twice and answers the given times."""
    def time_pair(best, cand):
        for f in (best, cand, cand, best):
            f()
        calls.append("pair")
        return {"best_us": best_us, "candidate_us": cand_us, "samples": 2}
    return time_pair


def test_trial_screen_times_the_edited_kernel_against_inductors_on_clones():
    ref, ov, mod, log = _trial_setup(2.0)
    calls = []
    x = torch.ones(8)
    res, _, screened = inductor.trial(
        ref, [ov], [x], True, "/k/x.py", modules=lambda: [mod],
        screen=inductor.Screen("triton_poi_k_0", None, _pair_timer(10.0, 12.5, calls)))
    # the check (original on clones, then the override), then the screen's launches
    assert log == ["orig", "new", "orig", "new", "new", "orig"] and calls == ["pair"]
    assert screened == {"kernel": "triton_poi_k_0", "against": "inductor", "best_us": 10.0,
                        "candidate_us": 12.5, "samples": 2}
    assert res[0]["ok"] and torch.equal(x, torch.ones(8))  # the model's input untouched
    assert mod.triton_poi_k_0.tag == "orig"


def test_trial_screen_leaves_a_kernel_that_computes_something_else_to_the_gates():
    ref, ov, mod, log = _trial_setup(0.0)  # the override writes zeros: the check fails
    calls = []
    res, _, screened = inductor.trial(
        ref, [ov], [torch.ones(8)], True, "/k/x.py", modules=lambda: [mod],
        screen=inductor.Screen("triton_poi_k_0", None, _pair_timer(10.0, 50.0, calls)))
    assert not res[0]["ok"] and screened is None and calls == []


def test_trial_screen_against_a_kept_copy_and_only_for_its_kernel():
    ref, ov, mod, log = _trial_setup(2.0)
    kept = FakeKernel("kept", log, _doubler(2.0))
    _, _, screened = inductor.trial(
        ref, [ov], [torch.ones(8)], True, "/k/x.py", modules=lambda: [mod],
        screen=inductor.Screen("triton_poi_k_0", kept, _pair_timer(9.0, 8.0, [])))
    assert log == ["orig", "new", "kept", "new", "new", "kept"]
    assert screened["against"] == "kept" and screened["candidate_us"] == 8.0
    # a screen naming another kernel times nothing
    ref, ov, mod, log = _trial_setup(2.0)
    calls = []
    _, _, screened = inductor.trial(
        ref, [ov], [torch.ones(8)], True, "/k/x.py", modules=lambda: [mod],
        screen=inductor.Screen("triton_poi_other_1", None, _pair_timer(1.0, 2.0, calls)))
    assert screened is None and calls == [] and log == ["orig", "new"]


def test_trial_never_launched_and_exceptions():
    ref, ov, mod, _ = _trial_setup(2.0, launch=False)
    with pytest.raises(inductor.CompileFailure, match="triton_poi_k_0 was never launched"):
        inductor.trial(ref, [ov], [torch.ones(8)], True, "/k/x.py", modules=lambda: [mod])

    ref, ov, mod, _ = _trial_setup(2.0)

    def raises(*a):
        raise ValueError("bad launch")
    ov.autotuner = FakeKernel("new", [], raises)
    with pytest.raises(inductor.CompileFailure) as e:
        inductor.trial(ref, [ov], [torch.ones(8)], False, "/k/x.py", modules=lambda: [mod])
    assert e.value.log.startswith("/k/x.py: ValueError: bad launch")
    assert mod.triton_poi_k_0.tag == "orig"


def test_compare_args_exact_for_integers_and_nan_equal():
    a = [torch.tensor([1.0, float("nan")]), torch.tensor([1, 2]), 5]
    b = [torch.tensor([1.005, float("nan")]), torch.tensor([1, 2]), 5]
    r = inductor.compare_args("k", a, b, ["out_ptr0", "out_ptr1", "xnumel"])
    assert r["ok"] and r["max_abs_err"] == pytest.approx(0.005)
    r = inductor.compare_args("k", a, [b[0], torch.tensor([1, 3]), 5],
                              ["out_ptr0", "out_ptr1", "xnumel"])
    assert not r["ok"] and r["arg"] == "out_ptr1" and r["max_abs_err"] == 1.0


def test_compare_args_in_chunks_finds_the_worst_anywhere(monkeypatch):
    """GPU-sized arguments are compared a slice at a time (the float64 copies of an 8 GiB
    argument ran the H200 out of memory): the worst element is found in any chunk, and a
    strided (transposed) argument compares the same as a contiguous one."""
    monkeypatch.setattr(inductor, "COMPARE_CHUNK", 64)
    a = torch.zeros(50, 40)
    b = a.clone()
    b[37, 3] = 0.5
    r = inductor.compare_args("k", [a], [b], ["out_ptr0"])
    assert not r["ok"] and r["max_abs_err"] == pytest.approx(0.5)
    r = inductor.compare_args("k", [a.t()], [b.t()], ["out_ptr0"])
    assert not r["ok"] and r["max_abs_err"] == pytest.approx(0.5)
    i = torch.arange(2000).reshape(100, 20)
    j = i.clone()
    j[99, 19] += 7
    r = inductor.compare_args("k", [i], [j], ["out_ptr0"])
    assert not r["ok"] and r["max_abs_err"] == 7.0
    assert inductor.compare_args("k", [a], [a.clone()], ["out_ptr0"])["ok"]


# ---- the protocol, end to end on the CPU ------------------------------------------------

@pytest.fixture(scope="module")
def cw(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inductor")
    w = Worker(tmp / "worker.stderr")
    w.hello_cpu(INDUCTOR_CACHE)
    yield w, tmp
    w.kill()
    w.close()


def _load(w, name, kernels_dir="", **extra):
    spec = {"kind": "kernelbench", "path": str(KB / name), "variant": "small",
            "mode": "compiled", **extra}
    if kernels_dir:
        spec["kernels_dir"] = str(kernels_dir)
    return w.ok("load_problem", problem=spec)


def test_load_problem_mode_parameters(cw):
    w, _ = cw
    assert w.load("relu.py")["mode"] == "model"
    bad = {"kind": "kernelbench", "path": str(KB / "relu.py")}
    assert "problem.mode" in w.error("load_problem", "bad_request",
                                     problem={**bad, "mode": "eager"})
    assert "compile_mode" in w.error("load_problem", "bad_request",
                                     problem={**bad, "compile_mode": "reduce-overhead"})
    assert "kernels_dir" in w.error("load_problem", "bad_request",
                                    problem={**bad, "kernels_dir": 3})
    r = _load(w, "relu.py", compile_mode="max-autotune-no-cudagraphs")
    assert r["mode"] == "compiled"


def test_a_problem_loaded_for_its_inventory_only_is_not_probed_and_not_judged(cw):
    """kgate profile's load (problem.inventory_only): the model and weights, no probe runs
    of the reference and no float64 truth; the inventory works, checks and compiles are
    refused until the problem is loaded again without it."""
    w, tmp = cw
    bad = {"kind": "kernelbench", "path": str(KB / "relu.py"), "variant": "small"}
    assert "needs problem.mode 'compiled'" in w.error(
        "load_problem", "bad_request", problem={**bad, "inventory_only": True})
    r = _load(w, "relu.py", inventory_only=True)
    assert r["inventory_only"] is True and r["inputs"] == [] and r["outputs"] == [], r
    inv = w.ok("inventory", timeout=300)
    assert inv["inventory_version"] == 1 and inv["graphs"] == 1, inv
    assert "inventory only" in w.error("check", "bad_request", slot="candidate")
    assert "inventory only" in w.error("compile", "bad_request", slot="candidate",
                                       source_path=str(KB / "relu.py"))
    assert "inventory only" in w.error("time", "bad_request", slots=["candidate"])
    r = _load(w, "relu.py")  # loaded again to be judged: probed, its truth placed
    assert "inventory_only" not in r and r["inputs"] and r["truth"], r


def test_inventory_before_load_is_no_problem(tmp_path):
    w = Worker(tmp_path / "w.stderr")
    try:
        w.hello_cpu(INDUCTOR_CACHE)
        assert "load_problem" in w.error("inventory", "no_problem")
    finally:
        w.kill()
        w.close()


@pytest.mark.parametrize("name", ["relu.py", "linear_relu.py"])
def test_cpu_inventory_compile_check_time(cw, name):
    w, tmp = cw
    kdir = tmp / f"k_{name}"
    _load(w, name, kdir)
    inv = w.ok("inventory", dir=str(kdir), timeout=300)
    assert inv["inventory_version"] == 1 and inv["device"] == "cpu"
    assert inv["compile_mode"] == "default" and inv["graphs"] == 1
    assert inv["torch"] == torch.__version__.split("+")[0]
    assert inv["kernels"] == [] and inv["model_device_us"] == 0.0
    # where the inventory's time went: no seed compile asked for, a compile, no profile here
    assert inv["seed_compile_s"] < 0.5 and inv["compile_s"] > 0 and inv["profile_s"] >= 0, inv
    assert inv["other_kernels"] and all(o["kind"] == "cpp" and o["name"].startswith("cpp_")
                                        for o in inv["other_kernels"])
    assert inv["no_triton_reason"].startswith("torch.compile generated no Triton kernels (")
    assert "C++ kernel" in inv["no_triton_reason"] and "on the CPU" in inv["no_triton_reason"]
    if name == "linear_relu.py":
        assert [x["name"] for x in inv["externs"]] == ["addmm"]
        # the flows of the live wrapper: addmm's result is read by the C++ kernel (not a
        # launch kgate follows) or returned; none is a Triton kernel's
        assert [(f["producer"], f["graph"]) for f in inv["flows"]] == [("addmm", 0)], inv["flows"]
    assert not any(f["producer"].startswith("triton_") for f in inv["flows"])
    assert kdir.is_dir() and list(kdir.iterdir()) == []
    r = w.ok("compile", slot="candidate", source_path=str(KB / name), timeout=300)
    assert r["compiled"] and r["overrides"] == [] and r["unchanged"] == [] and r["kernel"] == "", r
    b = w.ok("compile", slot="baseline", source_path=str(KB / name),
             defines={"KGATE_BASELINE": "candidate"})
    assert b["compiled"] and b["baseline"] == "candidate"
    c = w.check(dist="signed")
    assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0, c
    # the reference's own error and torch.compile's model's are measured in this mode: the
    # oracle's anchor is the larger of the two (oracle_gate.h)
    o = c["outputs"][0]
    assert 0 <= o["reference_rel_l2_err"] < 1e-5 and o["reference_dtype"] == o["dtype"], c
    assert 0 <= o["compiled_rel_l2_err"] < 1e-5, c
    c = w.check(dtype="f16")
    assert c["return_code"] == 1
    assert "compiled mode runs the problem's own dtype (f32), not f16" in c["error"]
    t = w.ok("time", slots=["candidate", "baseline"], min_time_s=0.02, max_time_s=0.5,
             min_samples=5, warmup_s=0.01)
    assert t["return_code"] == 0 and all(len(v) >= 5 for v in t["samples_us"].values())
    # torch.compile's baseline in compiled mode is the very model candidates swap into
    cb = w.ok("compile", slot="baseline", source_path=str(KB / name),
              defines={"KGATE_BASELINE": "compile"})
    assert cb["compiled"] and cb["shared_with_candidates"] is True, cb
    t = w.ok("time", slots=["candidate", "baseline"], min_time_s=0.02, max_time_s=0.5,
             min_samples=5, warmup_s=0.01)
    assert t["return_code"] == 0
    # ... and a max-autotune baseline (another mode) is a model of its own
    if name == "relu.py":
        ma = w.ok("compile", slot="baseline", source_path=str(KB / name),
                  defines={"KGATE_BASELINE": "compile-max-autotune"}, timeout=300)
        assert ma["compiled"] and "shared_with_candidates" not in ma, ma
    # the eager baseline still works in compiled mode
    e = w.ok("compile", slot="baseline", source_path=str(KB / name))
    assert e["compiled"] and e["baseline"] == "eager"


def test_cpu_compile_failures(cw):
    w, tmp = cw
    kdir = tmp / "kfail"
    kdir.mkdir()
    _load(w, "relu.py", kdir)
    # a ModelNew file is neither a kernel file nor the problem
    r = w.ok("compile", slot="candidate", source_path=str(KB / "candidates" / "relu_clamp.py"))
    assert not r["compiled"] and "not a kernel file" in r["log"], r
    # a kernel file naming a kernel the compiled model does not have
    k = tmp / "stale.py"
    k.write_text(inductor.kernel_file_text(_entry(), KSRC))
    r = w.ok("compile", slot="candidate", source_path=str(k), timeout=300)
    assert not r["compiled"], r
    assert (f"{k}:1: kgate:kernel triton_poi_fused_relu_0 names no Triton kernel of the "
            "compiled model (kernels: none)") in r["log"]
    # malformed header
    k2 = tmp / "malformed.py"
    k2.write_text("# kgate:kernel a b\nx = 1\n")
    r = w.ok("compile", slot="candidate", source_path=str(k2))
    assert not r["compiled"] and r["log"].startswith(f"{k2}:1: malformed"), r
    # kernels_dir files join the override set: lint runs on them (before the name check)
    (kdir / "triton_poi_x_0.py").write_text("# kgate:kernel triton_poi_x_0\n"
                                             "import subprocess\nLAUNCH_XBLOCK = 4\n")
    r = w.ok("compile", slot="candidate", source_path=str(KB / "relu.py"))
    assert not r["compiled"] and r["findings"][0]["rule"] == "subprocess", r
    # two files naming one kernel
    (kdir / "triton_poi_x_0.py").write_text("# kgate:kernel triton_poi_x_0\nLAUNCH_XBLOCK = 4\n")
    (kdir / "again.py").write_text("# kgate:kernel triton_poi_x_0\nLAUNCH_XBLOCK = 8\n")
    r = w.ok("compile", slot="candidate", source_path=str(KB / "relu.py"))
    assert not r["compiled"] and "is also named by" in r["log"], r
    # the slot is left empty after a failed compile
    assert w.error("check", "no_candidate", slot="candidate", cases=[{"case_id": "c"}])


# ---- launch configs worth compiling ------------------------------------------------------

def test_oversized_launch_is_refused_before_compiling():
    from kgate_worker import inductor
    # Inductor's own reduction config: 2048 x 1 on 16 warps, 4 elements per thread.
    orig = ({"XBLOCK": 1, "R0_BLOCK": 2048}, 16, 1)
    assert inductor.oversized_launch({"XBLOCK": 2, "R0_BLOCK": 2048}, 8, orig) == ""
    why = inductor.oversized_launch({"XBLOCK": 8, "R0_BLOCK": 16384}, 1, orig)
    assert "puts 4096 block elements on each thread (at most 256)" in why, why
    # a file whose original config is already above the cap may keep that size
    big = ({"XBLOCK": 1024, "R0_BLOCK": 64}, 1, 1)  # 2048 per thread
    assert inductor.oversized_launch({"XBLOCK": 1024, "R0_BLOCK": 64}, 1, big) == ""
    assert inductor.oversized_launch({"XBLOCK": 2048, "R0_BLOCK": 64}, 1, big) != ""


def test_kernel_file_asks_for_a_local_search():
    from kgate_worker import inductor
    line = inductor.tune_line({"XBLOCK": 1024, "num_warps": 4, "num_stages": 1},
                              {"xnumel": 1 << 20})
    assert line.splitlines() == [
        "# kgate:tune LAUNCH_XBLOCK=[256,512,1024,2048,4096] LAUNCH_NUM_WARPS=[1,2,4,8,16] "
        "LAUNCH_NUM_STAGES=[1,2,3,4]",
        "# kgate:tune-local"], line


def test_amdahl_bound_never_below_one():
    from kgate_worker import inductor
    e = {"device_us": 10.0, "share": 0.5, "bytes": 40e6}  # 40 MB in 10 us at 2000 GB/s: 200 %
    inductor.fill_bandwidth(e, 2000.0)
    assert e["bandwidth_fraction"] == 2.0 and e["amdahl_bound"] == 1.0
    e = {"device_us": 10.0, "share": 0.5, "bytes": 10e6}  # 50 % of copy bandwidth
    inductor.fill_bandwidth(e, 2000.0)
    assert e["bandwidth_fraction"] == 0.5
    assert abs(e["amdahl_bound"] - 1 / (0.5 + 0.25)) < 1e-6


def test_seed_line_from_another_compiles_choice():
    from kgate_worker import inductor
    launch = {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1}
    seed = {"XBLOCK": 64, "num_warps": 8, "num_stages": 1}
    line = inductor.tune_line(launch, {"xnumel": 1 << 20}, seed).splitlines()
    # 64 is outside 1024's v/4..4v range: added to the list so the tuner can write it
    assert line[0].startswith("# kgate:tune LAUNCH_XBLOCK=[64,256,512,1024,2048,4096] ")
    assert line[1:] == ["# kgate:tune-local",
                        "# kgate:tune-seed LAUNCH_XBLOCK=64 LAUNCH_NUM_WARPS=8 LAUNCH_NUM_STAGES=1"]
    # the same config, or one of another kernel shape (other keys), seeds nothing
    assert len(inductor.tune_line(launch, {}, dict(launch)).splitlines()) == 2
    assert len(inductor.tune_line(launch, {}, {"XBLOCK": 8, "R0_BLOCK": 64,
                                               "num_warps": 4}).splitlines()) == 2
    assert inductor.seed_point(launch, None) == {}


def test_inductor_meta_reads_real_kernels():
    """Inductor writes an empty set as `set()` (autotune_hints): the literal still reads."""
    src = inductor.parse_wrapper((IND / "23_Softmax.cuda-2.11.0.g0.captured.py.txt")
                                 .read_text()).kernels[0].source
    meta = inductor.inductor_meta(ast.parse(src))
    assert meta["autotune_hints"] == set() and meta["max_autotune_pointwise"] is False
    assert meta["kernel_name"] == "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0"


@pytest.mark.parametrize("fixture", ["23_Softmax.cuda-2.11.0.g0.captured.py.txt",
                                     "cuda_wrapper.handwritten.py.txt"])
def test_with_inductor_meta_overrides_the_kernels_own_options(fixture):
    """The seeding copy of a kernel: Inductor's search options appended to its inductor_meta
    display, overriding the kernel's own (`max_autotune_pointwise: False` in a 2.11
    compile); the program and every other entry are the kernel's."""
    src = inductor.parse_wrapper((IND / fixture).read_text()).kernels[0].source
    extra = inductor.SEED_MODES["coordinate-descent"]
    text = inductor.with_inductor_meta(src, extra)
    tree, orig = ast.parse(text), ast.parse(src)
    assert inductor.inductor_meta(tree) == {**inductor.inductor_meta(orig), **extra}
    assert inductor.inductor_meta(tree)["max_autotune_pointwise"] is True
    fn, ofn = inductor.jit_function(tree), inductor.jit_function(orig)
    assert ast.dump(fn.args) == ast.dump(ofn.args) and fn.name == ofn.name
    assert [ast.dump(x) for x in fn.body] == [ast.dump(x) for x in ofn.body]
    assert text.replace(", 'max_autotune_pointwise': True, 'coordinate_descent_tuning': True",
                        "", 1) == src


def test_with_inductor_meta_on_odd_displays():
    deco = ("@triton_heuristics.pointwise(size_hints={{'x': 8}}, triton_meta={{'n': 'é'}}, "
            "inductor_meta={meta})\n@triton.jit\ndef k(in_ptr0, XBLOCK: tl.constexpr):\n"
            "    pass\n")
    for meta, want in [("{}", {"a": 1}), ("{'a': 0,}", {"a": 1}),
                       ("{'b': [1, 2], 'a': 0}", {"b": [1, 2], "a": 1})]:
        text = inductor.with_inductor_meta(deco.format(meta=meta), {"a": 1})
        assert inductor.inductor_meta(ast.parse(text)) == want, text
    # no display to extend: no copy
    assert inductor.with_inductor_meta(deco.format(meta="META"), {"a": 1}) is None
    assert inductor.with_inductor_meta("@triton.jit\ndef k(x):\n    pass\n", {"a": 1}) is None
    assert inductor.with_inductor_meta("def (:", {"a": 1}) is None


def test_the_kernel_of_a_scan_is_not_its_combine_helper():
    # 89_cumsum's kernel comes after its jit `_triton_helper_fn_add0` combine function:
    # the kernel (the function Inductor's heuristics decorate) is what is pinned, launched
    # and compared; the helper had made every launch-config edit a static-gate error
    pw = inductor.parse_wrapper((IND / "kb-level1" / "89_cumsum.cuda-2.11.0.g0.captured.py.txt")
                                .read_text())
    (k,) = pw.kernels
    fn = inductor.jit_function(ast.parse(k.source))
    assert fn.name == "triton_red_fused_cumsum_0"
    assert inductor.launch_params(fn) == ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"]
    # a plain jit kernel after a helper: the last one
    assert inductor.jit_function(ast.parse(
        "@triton.jit\ndef h(a):\n    return a\n\n@triton.jit\ndef k(x):\n    pass\n")).name == "k"


def test_inventory_seeds_kernel_files(tmp_path):
    """apply_seeds: a kernel whose seed differs from its own launch gets seed_launch and,
    in its file, a kgate:tune-seed line; a seed equal to its own launch is no seed."""
    ref = inductor.CompiledReference()
    ref.kernels = {"triton_poi_fused_relu_0": inductor.KernelDef(
        name="triton_poi_fused_relu_0", fn_name="triton_poi_fused_relu_0", source=KSRC,
        device="cuda", category="pointwise", line=1, calls=1, aten_ops=["aten.relu"],
        source_nodes=["relu"])}
    ref.graph_of = {"triton_poi_fused_relu_0": 0}
    ref.entries = {"triton_poi_fused_relu_0": _entry()}
    res = inductor.inventory_result(ref, "default", "cpu", False, 1, [], 0.0)
    assert res["seed_mode"] == ""
    seeds = {"triton_poi_fused_relu_0": {"XBLOCK": 512, "num_warps": 8, "num_stages": 1}}
    assert inductor.apply_seeds(res, seeds, "coordinate-descent") == 1
    inductor.write_kernel_files(res, ref, str(tmp_path), "cpu")
    k = res["kernels"][0]
    assert k["seed_launch"] == {"XBLOCK": 512, "num_warps": 8, "num_stages": 1}
    assert k["seed_mode"] == "coordinate-descent" and res["seed_mode"] == "coordinate-descent"
    assert k["file"] == "triton_poi_fused_relu_0.py"
    text = (tmp_path / "triton_poi_fused_relu_0.py").read_text()
    assert "# kgate:tune-seed LAUNCH_XBLOCK=512 LAUNCH_NUM_WARPS=8 LAUNCH_NUM_STAGES=1\n" in text
    # the kernel's own config again: no seed, no line
    res = inductor.inventory_result(ref, "default", "cpu", False, 1, [], 0.0)
    same = {"triton_poi_fused_relu_0": dict(_entry()["launch"])}
    assert inductor.apply_seeds(res, same, "coordinate-descent") == 0
    assert "seed_launch" not in res["kernels"][0]
    inductor.write_kernel_files(res, ref, str(tmp_path), "cpu")
    assert "kgate:tune-seed" not in (tmp_path / "triton_poi_fused_relu_0.py").read_text()


@pytest.mark.parametrize("name,worth", [
    ("34_InstanceNorm", True), ("38_L1Norm_", True), ("40_LayerNorm", True),
    ("95_CrossEntropyLoss", True), ("35_GroupNorm_", False), ("37_FrobeniusNorm_", False),
    ("94_MSELoss", False)])
def test_only_kernels_worth_searching_are_seeded(name, worth):
    """Each seeded kernel costs its own autotuning and descent, so only the kernels whose
    Amdahl bound reaches the keep threshold are seeded, highest first: on the H200's
    captured inventories, the norms and losses whose kernels already run at copy bandwidth
    get none."""
    import json
    inv = json.loads((IND / "kb-level1" / f"{name}.inventory.json").read_text())
    names = inductor.seed_targets(inv, 1.01)
    assert bool(names) is worth
    bound = {k["name"]: k["amdahl_bound"] for k in inv["kernels"]}
    assert all(bound[n] >= 1.01 for n in names)
    assert [bound[n] for n in names] == sorted((bound[n] for n in names), reverse=True)
    assert len(inductor.seed_targets(inv, 0)) == len(inv["kernels"])  # 0: every kernel


def test_seed_targets_without_kernels_or_times():
    assert inductor.seed_targets({"kernels": []}, 1.01) == []
    unprofiled = {"kernels": [{"name": "k", "device_us": 0.0, "amdahl_bound": 1.0},
                              {"name": "t", "category": "template", "device_us": 0.0}]}
    assert inductor.seed_targets(unprofiled, 1.01) == ["k"]  # no times to tell: as searched


class _FakeConfig:
    def __init__(self, kwargs, num_warps, num_stages):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


class _FakeAutotuner:
    """Stands for a CachingAutotuner: `run` records what it ran on and doubles out_ptr0;
    a tuner settles on `settle` at its first launch (or raises `fails`)."""

    def __init__(self, settle=None, fails=None):
        self.launchers, self.runs, self.settle, self.fails = [], [], settle, fails

    def run(self, in_ptr0, out_ptr0, xnumel, stream=None):
        if self.fails is not None:
            raise self.fails
        if self.settle and not self.launchers:
            self.launchers = [_FakeConfig(*self.settle)]
            self.launchers[0].config = self.launchers[0]
        self.runs.append((in_ptr0, out_ptr0))
        out_ptr0.copy_(2 * in_ptr0)


def _seeding_model(monkeypatch, names, tuners):
    """A compiled model whose wrapper launches the kernels `names` in turn (each
    out = 2 * in), and _load_module faked to load `tuners[name]` as each seeding copy:
    (ref, the wrapper module, the loaded texts)."""
    mod = types.ModuleType("fake_wrapper")
    mod.__dict__.update({n: _FakeAutotuner() for n in names})

    def call(x):
        out = x
        for n in names:
            nxt = torch.empty_like(out)
            mod.__dict__[n].run(out, nxt, out.numel(), stream=0)
            out = nxt
        return out
    mod.call = call
    ref = inductor.CompiledReference()
    ref.compiled = call
    ref.graphs = [("", mod)]
    ref.graph_of = {n: 0 for n in names}
    ref.kernels = {n: inductor.KernelDef(
        name=n, fn_name="triton_poi_fused_convolution_transpose_0", source=KSRC, device="cuda",
        category="pointwise", line=1, calls=1, aten_ops=[], source_nodes=[]) for n in names}
    loaded = {}

    def load(ov, cache):
        loaded[ov.name] = ov.text
        return types.SimpleNamespace(triton_poi_fused_convolution_transpose_0=tuners[ov.name])
    monkeypatch.setattr(inductor, "_load_module", load)
    return ref, mod, loaded


def test_kernel_seeds_tune_a_copy_on_clones_and_leave_the_model_alone(monkeypatch):
    """kernel_seeds: each named kernel's seeding copy (Inductor's search options in its
    inductor_meta) runs once, at the kernel's first launch, on clones of its arguments; its
    settled config is the seed. The model's own kernels run on the real arguments, the
    output is the model's, and the globals are restored after."""
    names = ["k0", "k1", "k2"]
    tuners = {"k0": _FakeAutotuner(settle=({"XBLOCK": 256}, 8, 1)),
              "k1": _FakeAutotuner(fails=RuntimeError("out of resource: shared memory"))}
    ref, mod, loaded = _seeding_model(monkeypatch, names, tuners)
    own = {n: mod.__dict__[n] for n in names}
    x = torch.arange(6.0)
    seeds, why = inductor.kernel_seeds(ref, ["k0", "k1"], [x], "coordinate-descent")
    assert seeds == {"k0": {"XBLOCK": 256, "num_warps": 8, "num_stages": 1}}
    assert why == {"k1": "RuntimeError: out of resource: shared memory"}
    for n in ("k0", "k1"):
        meta = inductor.inductor_meta(ast.parse(loaded[n]))
        assert meta["max_autotune_pointwise"] is True and meta["coordinate_descent_tuning"]
    # the copy ran on clones: equal values, other storage than the model's
    (t_in, t_out), = tuners["k0"].runs
    (m_in, m_out), = own["k0"].runs
    assert torch.equal(t_in, m_in) and t_in.data_ptr() != m_in.data_ptr()
    assert t_out.data_ptr() != m_out.data_ptr()
    assert all(len(own[n].runs) == 1 for n in names)  # every kernel of the model ran once
    assert torch.equal(x, torch.arange(6.0))
    assert all(mod.__dict__[n] is own[n] for n in names)  # globals restored


def test_kernel_seeds_name_a_kernel_never_launched(monkeypatch):
    """A kernel the call never launched, or whose wrapper module is gone, gets no seed and
    is named; the model's global is restored either way."""
    ref, mod, _ = _seeding_model(monkeypatch, ["k0"], {"k9": _FakeAutotuner(settle=({}, 4, 1))})
    ref.kernels["k9"] = ref.kernels["k0"]
    ref.graph_of["k9"] = 0
    own = mod.__dict__["k9"] = _FakeAutotuner()
    seeds, why = inductor.kernel_seeds(ref, ["k9"], [torch.ones(3)], "coordinate-descent")
    assert seeds == {} and why == {"k9": "never launched by the model"}
    assert mod.__dict__["k9"] is own
    del mod.__dict__["k9"]
    seeds, why = inductor.kernel_seeds(ref, ["k9"], [torch.ones(3)], "coordinate-descent")
    assert seeds == {} and why == {"k9": "its wrapper module is not loaded"}


@pytest.fixture
def taken_for_cuda(tmp_path, monkeypatch):
    """An in-process worker with the compiled-mode ReLU problem loaded on the CPU, then
    taken for a CUDA one (the inventory's seed gate runs on CUDA only): (worker, kernels
    dir, the Worker class to patch)."""
    from inproc import InProc
    from kgate_worker.worker import Worker as InProcWorker
    w = InProc()
    w("hello", backend="cpu", cache_dir=str(INDUCTOR_CACHE))
    kdir = tmp_path / "k"
    w.load(KB / "relu.py", mode="compiled", kernels_dir=str(kdir))
    monkeypatch.setattr(InProcWorker, "cuda", property(lambda self: True))
    monkeypatch.setattr(InProcWorker, "sync", lambda self: None)
    return w, kdir, InProcWorker


def test_inventory_without_triton_kernels_seeds_nothing(taken_for_cuda, monkeypatch):
    """The inventory's seeding, run in process on the CPU with the worker taken for a CUDA
    one: a model without Triton kernels (C++ kernels on the CPU) gets no seeding and says
    why."""
    w, kdir, InProcWorker = taken_for_cuda
    monkeypatch.setattr(inductor, "kernel_seeds",
                        lambda *a: pytest.fail("seeding made for a model without kernels"))
    inv = w("inventory", dir=str(kdir), seed_mode="coordinate-descent", seed_min_bound=1.01)
    assert inv["seed_mode"] == "" and inv["seed_compile_s"] == 0 and inv["compile_s"] > 0, inv
    assert inv["seed_note"] == "not seeded: torch.compile generated no Triton kernels", inv
    assert inv["graphs"] == 1 and inv["kernels"] == []


def _profiled(bounds: dict):
    """inventory_result faked to answer kernels with these Amdahl bounds (profiled)."""
    def fake(ref, *a):
        return {"kernels": [{"name": n, "category": "pointwise", "device_us": 10.0,
                             "amdahl_bound": b, "launch": {"XBLOCK": 64, "num_warps": 4}}
                            for n, b in bounds.items()], "seed_mode": ""}
    return fake


@pytest.mark.parametrize("bounds,seeded", [
    ({"k_small": 1.002, "k_big": 1.3, "k_mid": 1.05}, ["k_big", "k_mid"]),
    ({"k_small": 1.002}, [])])
def test_inventory_seeds_the_kernels_worth_searching(taken_for_cuda, monkeypatch, bounds,
                                                     seeded):
    """With seed_min_bound only the kernels whose Amdahl bound reaches it are seeded, highest
    first, on the model already compiled and profiled (no second compile); their seeds land
    in the inventory; none worth searching: no seeding, and the note says why."""
    w, kdir, InProcWorker = taken_for_cuda
    monkeypatch.setattr(inductor, "inventory_result", _profiled(bounds))
    asked = []

    def seeds(ref, names, inputs, mode):
        assert ref is w.worker.problem.compiled_ref and mode == "coordinate-descent"
        asked.append(list(names))
        return {n: {"XBLOCK": 128, "num_warps": 4} for n in names}, {}
    monkeypatch.setattr(inductor, "kernel_seeds", seeds)
    inv = w("inventory", seed_mode="coordinate-descent", seed_min_bound=1.01)
    if seeded:
        assert asked == [seeded] and inv["seed_mode"] == "coordinate-descent", inv
        assert "seed_note" not in inv and inv["seed_compile_s"] >= 0
        assert sorted(k["name"] for k in inv["kernels"] if "seed_launch" in k) == sorted(seeded)
    else:
        assert asked == [] and inv["seed_mode"] == "" and inv["seed_compile_s"] == 0
        assert inv["seed_note"] == ("not seeded: no kernel's Amdahl bound reaches 1.01x (none "
                                    "is worth searching)"), inv


def test_inventory_says_which_kernels_got_no_seed(taken_for_cuda, monkeypatch):
    w, kdir, InProcWorker = taken_for_cuda
    monkeypatch.setattr(inductor, "inventory_result", _profiled({"k0": 1.5, "k1": 1.2}))
    monkeypatch.setattr(inductor, "kernel_seeds", lambda ref, names, inputs, mode: (
        {"k0": {"XBLOCK": 128, "num_warps": 4}}, {"k1": "never launched by the model"}))
    inv = w("inventory", seed_mode="coordinate-descent", seed_min_bound=1.01)
    assert inv["seed_note"] == "k1: not seeded: never launched by the model", inv
    assert [k["name"] for k in inv["kernels"] if "seed_launch" in k] == ["k0"]

    def broken(ref, names, inputs, mode):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    monkeypatch.setattr(inductor, "kernel_seeds", broken)
    inv = w("inventory", seed_mode="coordinate-descent", seed_min_bound=1.01)
    assert inv["seed_mode"] == "" and not any("seed_launch" in k for k in inv["kernels"])
    assert inv["seed_note"] == ("coordinate-descent seeding failed: RuntimeError: CUDA error: "
                                "an illegal memory access was encountered"), inv


def test_kernel_seeds_stand_in_for_their_own_graphs_kernel_only(monkeypatch):
    """Two graphs may each have a kernel of one name: the seeding copy (of graph 0's
    source) stands in for graph 0's global only; graph 1's kernel runs as it is."""
    tuner = _FakeAutotuner(settle=({"XBLOCK": 64}, 4, 1))
    ref, mod0, _ = _seeding_model(monkeypatch, ["k0"], {"k0": tuner})
    mod1 = types.ModuleType("fake_wrapper_1")
    mod1.k0 = _FakeAutotuner()
    first = ref.compiled
    ref.compiled = lambda x: mod1.k0.run(first(x), torch.empty_like(x), x.numel(), stream=0)
    ref.graphs.append(("", mod1))
    seeds, why = inductor.kernel_seeds(ref, ["k0"], [torch.ones(4)], "coordinate-descent")
    assert seeds == {"k0": {"XBLOCK": 64, "num_warps": 4, "num_stages": 1}} and why == {}
    assert len(tuner.runs) == 1 and len(mod0.k0.runs) == 1 and len(mod1.k0.runs) == 1
    assert isinstance(mod1.k0, _FakeAutotuner)


def _parsed(*kernels):
    """A ParsedWrapper holding kernels given as (name, source)."""
    return inductor.ParsedWrapper(kernels=[inductor.KernelDef(
        name=n, fn_name=n, source=src, device="cuda", category="pointwise", line=1, calls=1,
        aten_ops=[], source_nodes=[]) for n, src in kernels], externs=[], other_kernels=[])


def test_a_kernel_name_two_graphs_give_different_programs_is_no_slot():
    """Inductor numbers kernels per graph: after a graph break two graphs can each have a
    triton_poi_fused_relu_0. One program under one name is one slot; two programs under
    one name are none (a kernel file and a swap name a kernel by name alone), and the
    inventory lists them as such."""
    other = KSRC.replace("+ 4096*x1", "+ 4095*x1")
    ref = inductor.CompiledReference()
    ref.graphs = [("", None), ("", None)]
    ref.index([_parsed(("k_same", KSRC), ("k_clash", KSRC)),
               _parsed(("k_same", KSRC), ("k_clash", other), ("k_two", other))])
    assert sorted(ref.kernels) == ["k_same", "k_two"] and ref.ambiguous == ["k_clash"]
    assert ref.graph_of == {"k_same": 0, "k_two": 1}
    ref.entries = {n: dict(_entry(), name=n) for n in ref.kernels}
    inv = inductor.inventory_result(ref, "default", "cuda", False, 1, [], 0.0)
    assert [k["name"] for k in inv["kernels"]] == ["k_same", "k_two"]
    assert [o for o in inv["other_kernels"] if o["kind"] == "triton-ambiguous"] == [
        {"name": "k_clash", "kind": "triton-ambiguous", "graph": 0},
        {"name": "k_clash", "kind": "triton-ambiguous", "graph": 1}]
    assert inv["no_triton_reason"] == ""
    # nothing else to search: the fallback says why
    only = inductor.CompiledReference()
    only.graphs = [("", None), ("", None)]
    only.index([_parsed(("k_clash", KSRC)), _parsed(("k_clash", other))])
    assert only.kernels == {} and only.no_triton_reason() == (
        "no Triton kernel kgate can swap: two graphs give the kernel name k_clash to "
        "different programs")
