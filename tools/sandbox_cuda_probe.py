#!/usr/bin/env python3
"""Which of the worker sandbox's walls (docs/sandbox.md) keeps CUDA from starting on this
machine: each wall alone, then all of them, applied in a fresh child process the way
core/sandbox.cpp applies them, then cuInit(0) and torch.cuda.is_available() there.

Usage: python3 tools/sandbox_cuda_probe.py [--json F]
Prints one line per variant: the wall, cuInit's result code, what torch says.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import resource
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
FS_WRITE = ((1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9)
            | (1 << 10) | (1 << 11) | (1 << 12))
FS_REFER, FS_TRUNCATE = 1 << 13, 1 << 14
NET_BIND, NET_CONNECT = 1 << 0, 1 << 1
SCOPE_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000


class RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    return LIBC.syscall(SYS_CREATE_RULESET, None, 0, 1)


def fail(what: str) -> None:
    e = ctypes.get_errno()
    raise OSError(e, f"{what}: {os.strerror(e)}")


def landlock(fs: bool = False, writable=(), net: bool = False, scope: int = 0) -> None:
    a = abi()
    attr = RulesetAttr(0, 0, 0)
    if fs:
        attr.fs = FS_WRITE | (FS_REFER if a >= 2 else 0) | (FS_TRUNCATE if a >= 3 else 0)
    if net:
        attr.net = NET_BIND | NET_CONNECT
    attr.scoped = scope
    size = 24 if a >= 6 else (16 if a >= 4 else 8)
    fd = LIBC.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if fd < 0:
        fail("landlock_create_ruleset")
    for d in writable:
        os.makedirs(d, exist_ok=True)
        dfd = os.open(d, os.O_PATH | os.O_DIRECTORY)
        rule = PathBeneath(attr.fs, dfd)
        if LIBC.syscall(SYS_ADD_RULE, fd, 1, ctypes.byref(rule), 0) != 0:
            fail("landlock_add_rule " + d)
        os.close(dfd)
    if LIBC.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        fail("no_new_privs")
    if LIBC.syscall(SYS_RESTRICT_SELF, fd, 0) != 0:
        fail("landlock_restrict_self")


def netns() -> None:
    user = os.geteuid() != 0
    uid, gid = os.geteuid(), os.getegid()
    if LIBC.unshare(CLONE_NEWNET | (CLONE_NEWUSER if user else 0)) != 0:
        fail("unshare")
    if user:
        for f, v in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1\n"),
                     ("gid_map", f"{gid} {gid} 1\n")):
            with open(f"/proc/self/{f}", "w") as fh:
                fh.write(v)


def writable_dirs() -> list:
    home = os.path.expanduser("~")
    tmp = os.environ.get("TMPDIR", "/tmp") + "/kgate-probe"
    return [tmp, "/dev", home + "/.cache", home + "/.triton", home + "/.nv"]


VARIANTS = {
    "none": lambda: None,
    "no_new_privs": lambda: LIBC.prctl(38, 1, 0, 0, 0),
    "nofile 4096": lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096)),
    "core 0": lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)),
    "netns": netns,
    "landlock files (kgate's writable dirs)": lambda: landlock(fs=True, writable=writable_dirs()),
    "landlock files (no /dev)": lambda: landlock(
        fs=True, writable=[d for d in writable_dirs() if d != "/dev"]),
    "landlock files (/ writable)": lambda: landlock(fs=True, writable=["/"]),
    "landlock files (+ /proc /sys)": lambda: landlock(
        fs=True, writable=writable_dirs() + ["/proc", "/sys"]),
    "landlock files (+ /proc)": lambda: landlock(fs=True, writable=writable_dirs() + ["/proc"]),
    "landlock files (+ /sys)": lambda: landlock(fs=True, writable=writable_dirs() + ["/sys"]),
    "landlock files (+ /proc/self)": lambda: landlock(
        fs=True, writable=writable_dirs() + [f"/proc/{os.getpid()}"]),
    "landlock files (+ /proc/self + /proc/driver)": lambda: landlock(
        fs=True, writable=writable_dirs() + [f"/proc/{os.getpid()}", "/proc/driver"]),
    "landlock files (+ /run /var /tmp)": lambda: landlock(
        fs=True, writable=writable_dirs() + ["/run", "/var", "/tmp"]),
    "landlock tcp": lambda: landlock(net=True),
    "landlock scope signals": lambda: landlock(scope=SCOPE_SIGNAL),
    "landlock scope abstract unix": lambda: landlock(scope=SCOPE_UNIX),
    "all (as kgate)": lambda: (netns(), resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096)),
                               landlock(fs=True, writable=writable_dirs(),
                                        scope=SCOPE_SIGNAL | SCOPE_UNIX)),
}


def probe(name: str, wall) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = {"variant": name}
        try:
            wall()
            cuda = ctypes.CDLL("libcuda.so.1")
            out["cuInit"] = cuda.cuInit(0)
            import torch
            out["torch_cuda"] = bool(torch.cuda.is_available())
            if out["torch_cuda"]:
                out["device"] = torch.cuda.get_device_name(0)
                out["ok"] = float(torch.ones(4, device="cuda").sum().item()) == 4.0
        except BaseException as e:  # noqa: BLE001 -- a probe reports whatever happened
            out["error"] = f"{type(e).__name__}: {e}"
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data or b'{"variant": "%s", "error": "no answer"}' % name.encode())


def main() -> int:
    print(f"uid {os.geteuid()}, Landlock ABI {abi()}, kernel {os.uname().release}")
    rows = [probe(n, v) for n, v in VARIANTS.items()]
    for x in rows:
        print(f"{x['variant']:40s} cuInit={x.get('cuInit', '-')!s:4s} torch.cuda={x.get('torch_cuda', '-')!s:5s} "
              f"{x.get('error', '')}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
