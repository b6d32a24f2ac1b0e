"""The Python worker's compile-cache seal (kgate_worker/seal.py, issue 16): asked for with
KGATE_WORKER_SEAL=1, a worker narrows its own writes before it first runs candidate code.
A candidate then cannot plant a file in the run's shared Inductor cache, and a candidate
that compiles with torch.compile still works: its entries go to the worker's own
directory. Skipped where the kernel has no Landlock."""

import ctypes
import os
import textwrap

import pytest

from conftest import INDUCTOR_CACHE, KB, Worker


def _landlock_abi() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint(1)))


pytestmark = pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64") or _landlock_abi() <= 0,
                                reason="no Landlock in this kernel")

PLANTER = """
import torch
import torch.nn as nn

with open({plant!r}, "w") as f:
    f.write("# planted by a candidate\\n")


class ModelNew(nn.Module):
    def forward(self, x):
        return x * (x > 0)
"""

# A candidate that compiles with torch.compile, which writes Inductor's cache.
COMPILER = """
import torch
import torch.nn as nn


@torch.compile
def _rectify(x):
    return x * (x > 0)


class ModelNew(nn.Module):
    def forward(self, x):
        return _rectify(x)
"""


def _worker(tmp_path, seal: bool) -> tuple[Worker, os.PathLike]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch), "KGATE_WORKER_SEAL": "1" if seal else "0",
           "KGATE_WORKER_SEAL_KEEP": ""}
    w = Worker(tmp_path / "worker.stderr", env)
    w.hello_cpu(INDUCTOR_CACHE)
    w.load("relu.py")
    assert w.ok("compile", slot="baseline", source_path=str(KB / "relu.py"))["compiled"]
    return w, scratch


@pytest.mark.parametrize("seal", [True, False])
def test_candidate_code_cannot_plant_in_the_shared_cache(tmp_path, seal):
    plant = INDUCTOR_CACHE / "inductor" / f"planted-{os.getpid()}-{seal}.py"
    plant.unlink(missing_ok=True)
    cand = tmp_path / "planter.py"
    cand.write_text(PLANTER.format(plant=str(plant)))
    w, _ = _worker(tmp_path, seal)
    try:
        r = w.ok("compile", slot="candidate", source_path=str(cand), timeout=300)
        if seal:
            assert not r["compiled"] and "PermissionError" in r["log"], r
            assert not plant.exists(), "a sealed worker let candidate code write the shared cache"
        else:  # the control: without the seal the same candidate plants its file
            assert r["compiled"] and plant.exists(), r
    finally:
        plant.unlink(missing_ok=True)
        w.kill()
        w.close()


def test_a_sealed_candidates_torch_compile_writes_its_own_directory(tmp_path):
    cand = tmp_path / "compiler.py"
    cand.write_text(COMPILER)
    w, scratch = _worker(tmp_path, True)
    try:
        assert w.ok("compile", slot="candidate", source_path=str(cand), timeout=300)["compiled"]
        c = w.check(dist="signed")
        assert c["return_code"] == 0 and c["outputs"][0]["over_tol"] == 0, c
        own = scratch / f"kgate-worker-{w.proc.pid}" / "inductor"
        assert own.is_dir() and any(own.iterdir()), \
            "the candidate's torch.compile did not write into the worker's own directory"
    finally:
        w.kill()
        w.close()


def test_a_seal_that_cannot_be_built_says_why_and_changes_nothing(tmp_path):
    """A folder to keep that cannot be made is no crash: narrow_writes answers why, and the
    process stays as it was (still free to write where it could)."""
    import subprocess
    import sys
    from conftest import WORKER_PATH
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from kgate_worker import seal\n"
            "why, every = seal.narrow_writes(['/proc/1/no-such-dir/x'])\n"
            "print(why)\n"
            "open(%r, 'w').write('still free')\n") % (str(WORKER_PATH), str(tmp_path / "free.txt"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("cannot allow writes beneath /proc/1/no-such-dir/x"), r.stdout
    assert (tmp_path / "free.txt").read_text() == "still free"
