"""Shared helpers: a client that drives `python -m kgate_worker` over pipes the way the
orchestrator does (own process group, JSON lines, deadline per request)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
KB = FIXTURES / "kernelbench"
CAND = KB / "candidates"
WORKER_PATH = REPO / "harness" / "python"
sys.path.insert(0, str(WORKER_PATH))
sys.path.insert(0, str(Path(__file__).resolve().parent))

@pytest.fixture
def clocks_intact():
    """The test leaves the process's clocks as it found them (a candidate that escaped the
    worker's restore would otherwise skew the rest of the run), and says so. Modules that
    run candidates in-process use it on every test (pytestmark)."""
    import torch
    from kgate_worker import clocks
    clocks.watch(torch)
    yield
    left = clocks.tampered()
    clocks.restore()
    assert left == [], left


# torch.compile artifacts persist across pytest runs (a cold CPU compile is ~30 s).
INDUCTOR_CACHE = Path(tempfile.gettempdir()) / "kgate-pytest-cache"


class Worker:
    def __init__(self, stderr_path: Path, extra_env: dict | None = None):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(WORKER_PATH)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        env.update(extra_env or {})
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kgate_worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, cwd=REPO, env=env,
            start_new_session=True)
        self.lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.next_id = 1

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.decode("utf-8"))
        self.lines.put(None)

    def send_raw(self, text: str) -> None:
        self.proc.stdin.write(text.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = 120) -> dict:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise AssertionError(f"no response within {timeout}s; stderr:\n{self.stderr()}")
        assert line is not None, f"worker exited; stderr:\n{self.stderr()}"
        return json.loads(line)

    def request(self, op: str, timeout: float = 120, **params) -> dict:
        rid = self.next_id
        self.next_id += 1
        self.send_raw(json.dumps({"v": 1, "id": rid, "op": op, **params}))
        resp = self.read(timeout)
        assert resp["id"] == rid and resp["v"] == 1, resp
        return resp

    def ok(self, op: str, timeout: float = 120, **params) -> dict:
        resp = self.request(op, timeout=timeout, **params)
        assert resp["ok"] is True, resp
        return resp["result"]

    def error(self, op: str, kind: str, **params) -> str:
        resp = self.request(op, **params)
        assert resp["ok"] is False and resp["error"]["kind"] == kind, resp
        return resp["error"]["message"]

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def no_stray_output(self, wait: float = 0.2) -> None:
        """Nothing but answers on stdout: no unrequested line arrives (EOF is fine)."""
        try:
            line = self.lines.get(timeout=wait)
        except queue.Empty:
            return
        assert line is None, f"stray stdout line: {line!r}"

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._stderr.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    # conveniences
    def hello_cpu(self, cache_dir: Path | None = None) -> dict:
        params = {"backend": "cpu", "device_index": 0}
        if cache_dir is not None:
            params["cache_dir"] = str(cache_dir)
        return self.ok("hello", **params)

    def load(self, name: str, variant: str = "small") -> dict:
        return self.ok("load_problem", problem={"id": name, "kind": "kernelbench",
                                                "path": str(KB / name), "variant": variant})

    def compile_candidate(self, name: str, defines: dict | None = None) -> dict:
        return self.ok("compile", slot="candidate", source_path=str(CAND / name),
                       defines=defines or {})

    def check(self, slot: str = "candidate", **case) -> dict:
        c = {"case_id": "c", "seed": 7, "dtype": "f32", "dist": "problem", "atol": 1e-5,
             "rtol": 1e-5}
        c.update(case)
        return self.ok("check", slot=slot, cases=[c])["cases"][0]


@pytest.fixture
def worker(tmp_path):
    w = Worker(tmp_path / "worker.stderr")
    yield w
    w.kill()
    w.close()


def restore_relu(w: Worker) -> None:
    w.load("relu.py")
    assert w.ok("compile", slot="baseline", source_path=str(KB / "relu.py"))["compiled"]


@pytest.fixture(scope="module")
def relu_module_worker(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("relu")
    w = Worker(tmp / "worker.stderr")
    w.hello_cpu(tmp / "cache")
    yield w
    w.kill()
    w.close()


@pytest.fixture
def relu_worker(relu_module_worker):
    """A shared worker with the small ReLU problem loaded and an eager baseline compiled
    (tests may load other problems; the state is restored for the next test)."""
    restore_relu(relu_module_worker)
    return relu_module_worker


def skip_module_without_cuda() -> None:
    """A CUDA test module's guard: skipped without a GPU, except that KGATE_REQUIRE_GPU=1
    (tools/gpu-session.sh) turns the skip into a failure, so a GPU runner cannot pass the
    module by not running it."""
    import torch
    if not torch.cuda.is_available():
        if os.environ.get("KGATE_REQUIRE_GPU") == "1":
            raise RuntimeError("KGATE_REQUIRE_GPU=1 but torch sees no CUDA device")
        pytest.skip("no CUDA device", allow_module_level=True)
