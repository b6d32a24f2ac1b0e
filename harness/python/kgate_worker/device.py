"""Device description for hello: CPU from /proc and /sys, CUDA from torch; copy bandwidth
measured by timing a large tensor copy (read + write bytes)."""

from __future__ import annotations

import ctypes
import os
import platform
import time


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _cpuinfo_field(name: str) -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    return ""


def _size_bytes(text: str) -> int:
    text = text.strip().upper()
    mult = 1
    for suffix, m in (("K", 1024), ("M", 1024 ** 2), ("G", 1024 ** 3)):
        if text.endswith(suffix):
            text, mult = text[:-1], m
            break
    try:
        return int(text) * mult
    except ValueError:
        return 0


def cpu_l2_bytes() -> int:
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return 0
    for e in entries:
        if _read(f"{base}/{e}/level").strip() == "2":
            return _size_bytes(_read(f"{base}/{e}/size"))
    return 0


def cpu_info() -> dict:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    mem = 0
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    clock = 0
    khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").strip()
    if khz.isdigit():
        clock = int(khz) // 1000
    else:
        try:
            clock = int(float(_cpuinfo_field("cpu MHz") or 0))
        except ValueError:
            clock = 0
    return {"name": _cpuinfo_field("model name") or platform.processor() or "cpu",
            "cc": "", "sm_count": cores, "l2_bytes": cpu_l2_bytes(), "memory_bytes": mem,
            "clock_mhz": clock, "driver": ""}


def cuda_driver_version() -> str:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value > 0:
            return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except OSError:
        pass
    return ""


def cuda_info(torch, index: int) -> dict:
    p = torch.cuda.get_device_properties(index)
    clock = 0
    for attr in ("clock_rate",):  # kHz where torch exposes it
        if getattr(p, attr, 0):
            clock = int(getattr(p, attr)) // 1000
    if not clock:
        try:
            clock = int(torch.cuda.clock_rate(index))
        except Exception:  # pynvml missing or no permission
            clock = 0
    return {"name": p.name, "cc": f"{p.major}.{p.minor}",
            "sm_count": int(p.multi_processor_count),
            "l2_bytes": int(getattr(p, "L2_cache_size", 0) or 0),
            "memory_bytes": int(p.total_memory), "clock_mhz": clock,
            "driver": cuda_driver_version()}


def copy_bandwidth_gbps(torch, device, cap: int = 0) -> float:
    """Best of a few copies of a large buffer: (read + write bytes) / time, in GB/s. A
    worker whose device memory is capped (`cap` bytes) copies at most a quarter of it per
    buffer (the two buffers must fit beside the CUDA context's share; still hundreds of MiB,
    far past any L2). On
    the host, where other processes share the cores and load only ever lowers a copy's
    speed, more copies are tried (up to 20 within 0.3 s): a bandwidth read low puts the
    performance gate's roofline floor too high and rejects correct candidates (seen on
    a 2-core box under a parallel build: 5.8 GB/s, a correct candidate "below the floor")."""
    cuda = device.type == "cuda"
    nbytes = (1024 if cuda else 32) * 1024 * 1024  # 1 GiB on a GPU, as kgate-native
    if cap:
        nbytes = min(nbytes, max(64 << 20, cap // 4 >> 20 << 20))
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    t_all = time.perf_counter()
    for k in range(20):
        if k >= 5 and (cuda or time.perf_counter() - t_all > 0.3):
            break
        if cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            secs = start.elapsed_time(end) / 1e3
        else:
            t0 = time.perf_counter()
            dst.copy_(src)
            secs = time.perf_counter() - t0
        best = min(best, secs)
    del src, dst
    return round(2 * nbytes / best / 1e9, 3) if best > 0 else 0.0
