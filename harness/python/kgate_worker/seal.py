"""The compile-cache seal of the Python worker (issue 16): once candidate code is about to
run in this process, the worker narrows its own writes with a second Landlock layer, so
candidate code cannot plant entries in the run's shared Inductor and Triton caches that a
later worker (a fresh re-measure's, the references', the next run's) would load as
torch.compile's own kernels.

kgate asks for it (KGATE_WORKER_SEAL=1) in sandboxed workers and names, in
KGATE_WORKER_SEAL_KEEP (':'-separated), what must stay writable besides the worker's own
directory: a compiled-mode workspace, the trace's folder. After the seal the worker writes
only beneath `<TMPDIR>/kgate-worker-<pid>` (its TMPDIR, Inductor's and Triton's caches from
now on: entries written before the seal stay readable in the shared cache, entries written
after it are this worker's alone), /dev, its own /proc entry, the CUDA driver's JIT cache and
the kept folders. Layers only narrow: the spawn-time walls still hold.

Pure standard library (ctypes); Linux x86-64 and arm64 system-call numbers.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import tempfile

_SYS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RESTRICT_SELF_TSYNC = 1 << 3          # ABI 8: every thread of the process
_PR_SET_NO_NEW_PRIVS = 38
# Write-side file rights by the ABI that introduced them (reading and executing are never
# restricted): write file, remove dir/file, make char/dir/reg/sock/fifo/block/sym.
_ABI1_WRITE = (1 << 1) | (1 << 4) | (1 << 5) | sum(1 << b for b in range(6, 13))
_REFER, _TRUNCATE = 1 << 13, 1 << 14   # ABI 2, ABI 3

_tried = False


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _rights(abi: int) -> int:
    r = _ABI1_WRITE
    if abi >= 2:
        r |= _REFER
    if abi >= 3:
        r |= _TRUNCATE
    return r


def narrow_writes(dirs: list[str]) -> tuple[str, bool]:
    """Adds a Landlock layer that allows writes only beneath `dirs` (created when missing)
    and the process's own /proc entry: ("", every_thread) on success, else (why, False)."""
    nums = _SYS.get(os.uname().machine)
    if nums is None:
        return f"no Landlock system-call numbers for {os.uname().machine}", False
    create, add_rule, restrict = nums
    libc = _libc()
    abi = libc.syscall(ctypes.c_long(create), None, ctypes.c_size_t(0),
                       ctypes.c_uint(_CREATE_RULESET_VERSION))
    if abi <= 0:
        return f"no Landlock ({os.strerror(ctypes.get_errno())})", False
    rights = _rights(abi)
    # struct landlock_ruleset_attr: only handled_access_fs (its first field) is used, so
    # the size of that field alone is passed (every ABI accepts the ABI-1 size).
    attr = ctypes.create_string_buffer(struct.pack("=Q", rights))
    fd = libc.syscall(ctypes.c_long(create), attr, ctypes.c_size_t(8), ctypes.c_uint(0))
    if fd < 0:
        return f"cannot create a Landlock ruleset: {os.strerror(ctypes.get_errno())}", False
    try:
        for d in list(dirs) + [f"/proc/{os.getpid()}"]:
            try:
                os.makedirs(d, exist_ok=True)
                dfd = os.open(d, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as e:
                return f"cannot allow writes beneath {d}: {e.strerror or e}", False
            try:
                # struct landlock_path_beneath_attr (packed): u64 allowed_access, s32 parent_fd
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, dfd))
                if libc.syscall(ctypes.c_long(add_rule), ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                rule, ctypes.c_uint(0)) != 0:
                    return (f"cannot allow writes beneath {d}: "
                            f"{os.strerror(ctypes.get_errno())}"), False
            finally:
                os.close(dfd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"cannot set no_new_privs: {os.strerror(ctypes.get_errno())}", False
        flags = _RESTRICT_SELF_TSYNC if abi >= 8 else 0
        if libc.syscall(ctypes.c_long(restrict), ctypes.c_int(fd), ctypes.c_uint(flags)) != 0:
            return f"cannot restrict the process: {os.strerror(ctypes.get_errno())}", False
    finally:
        os.close(fd)
    return "", flags != 0 or len(os.listdir("/proc/self/task")) == 1


def before_candidate_code() -> None:
    """Seals this worker (once) when kgate asked for it; the caches, TMPDIR and Python's
    tempfile move to the worker's own directory. A seal that cannot be built is said on
    stderr and the worker goes on (KGATE_SANDBOX=strict: a RuntimeError instead)."""
    global _tried
    if _tried:
        return
    _tried = True
    if os.environ.get("KGATE_WORKER_SEAL") != "1":
        return
    own = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"kgate-worker-{os.getpid()}")
    keep = [own, "/dev"]
    cuda_cache = os.environ.get("CUDA_CACHE_PATH") or (
        os.path.join(os.environ["HOME"], ".nv") if os.environ.get("HOME") else "")
    if cuda_cache:
        keep.append(cuda_cache)  # the driver's JIT cache (keyed by PTX), as kgate-native
    keep += [d for d in os.environ.get("KGATE_WORKER_SEAL_KEEP", "").split(":") if d]
    why, every_thread = narrow_writes(keep)
    if why:
        msg = f"sandbox: the compile cache stays writable to candidate code: {why}"
        if os.environ.get("KGATE_SANDBOX") == "strict":
            raise RuntimeError(msg + " (KGATE_SANDBOX=strict)")
        sys.stderr.write(f"[kgate_worker] {msg}\n")
        return
    for sub, var in (("inductor", "TORCHINDUCTOR_CACHE_DIR"), ("triton", "TRITON_CACHE_DIR")):
        os.makedirs(os.path.join(own, sub), exist_ok=True)
        os.environ[var] = os.path.join(own, sub)
    os.environ["TMPDIR"] = own
    tempfile.tempdir = own
    if not every_thread:
        sys.stderr.write("[kgate_worker] sandbox: the compile cache is read-only to the sealing "
                         "thread and the threads it starts; threads that already ran keep the "
                         "spawn-time walls (Landlock ABI < 8)\n")
