"""A native kgate library (kgate_run, built here with the host backend's compiler) as a
Python worker slot beside a PyTorch form of its op: checked against the form's float64
truth and timed interleaved against it (kgate_worker/native.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import torch

from conftest import REPO
from inproc import InProc

QUICK = dict(warmup_s=0.01, min_time_s=0.05, max_time_s=0.5, min_samples=6, input_sets=2)

FORM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(48, 1000, dtype=torch.float32)]


def get_init_inputs():
    return []
"""


def build(src, out, *defines):
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", f"-I{REPO / 'harness' / 'include'}",
           *[f"-D{d}" for d in defines], str(src), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def softmax_lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("native")
    return build(REPO / "kernelbench" / "native" / "starters" / "softmax.cpp", d / "softmax.so")


@pytest.fixture()
def w(tmp_path):
    form = tmp_path / "softmax_form.py"
    form.write_text(FORM)
    w = InProc()
    w.load(form, variant="")
    assert w.compile(form, slot="baseline")["compiled"]
    return w


def test_a_native_library_is_checked_and_timed_against_the_pytorch_form(w, softmax_lib):
    r = w.compile(softmax_lib, native=True)
    assert r["compiled"] and r["native"], r
    c = w.check(atol=1e-5, rtol=1e-5)
    assert c["return_code"] == 0 and c["error"] == "", c
    out = c["outputs"][0]
    assert out["over_tol"] == 0 and out["nan"] == 0, c
    assert c["inputs_modified"] is False
    t = w("time", seed=3, **QUICK)
    assert t["audit_failure"] == "", t
    assert len(t["samples_us"]["candidate"]) >= 6 and len(t["samples_us"]["baseline"]) >= 6


def test_a_native_library_that_disagrees_with_the_form_fails_its_check(w, tmp_path):
    # The same starter built to compute something else (exp without the normalisation is
    # not reachable by a define; a wrong output is: every element one).
    src = tmp_path / "ones.cpp"
    src.write_text(
        '#include "kgate/kernel.h"\n'
        'extern "C" int kgate_run(const kgate_tensor* in, int32_t, kgate_tensor* out, int32_t, void*) {\n'
        '  float* y = static_cast<float*>(out[0].data);\n'
        '  for (int64_t i = 0; i < in[0].shape[0] * in[0].shape[1]; ++i) y[i] = 1.0f;\n'
        '  return 0;\n}\n')
    lib = build(src, tmp_path / "ones.so")
    assert w.compile(lib, native=True)["compiled"]
    c = w.check(atol=1e-5, rtol=1e-5)
    assert c["outputs"][0]["over_tol"] > 0, c


def test_a_failing_library_and_a_missing_one_are_reported(w, tmp_path):
    src = tmp_path / "fails.cpp"
    src.write_text('#include "kgate/kernel.h"\n'
                   'extern "C" int kgate_run(const kgate_tensor*, int32_t, kgate_tensor*, int32_t, void*) '
                   '{ return 7; }\n')
    lib = build(src, tmp_path / "fails.so")
    assert w.compile(lib, native=True)["compiled"]
    c = w.check()
    assert c["return_code"] == 1 and "fails.so returned 7" in c["error"], c
    r = w.compile(tmp_path / "none.so", native=True)
    assert r["compiled"] is False and "no such file" in r["log"]
    src2 = tmp_path / "noentry.cpp"
    src2.write_text('extern "C" int something_else() { return 0; }\n')
    r = w.compile(build(src2, tmp_path / "noentry.so"), native=True)
    assert r["compiled"] is False and "exports no kgate_run" in r["log"], r


def test_outputs_follow_the_reference_for_each_input_signature(softmax_lib):
    from kgate_worker.native import NativeModel
    m = NativeModel(str(softmax_lib), lambda x: torch.softmax(x, dim=-1))
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(5, 33, dtype=dt)
        y = m(x)
        assert y.dtype == dt and y.shape == x.shape
        torch.testing.assert_close(y.float(), torch.softmax(x.float(), -1), atol=1e-2, rtol=1e-2)
    # a strided input is handed over contiguous
    x = torch.randn(33, 5).t()
    torch.testing.assert_close(m(x), torch.softmax(x, -1), atol=1e-5, rtol=1e-5)
