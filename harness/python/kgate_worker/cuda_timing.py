"""CUDA timing for the worker's `time` op, by the same method as kgate-native's CUDA timer
(harness/native/cuda/cuda_timer.cpp): events around each sample with the L2 flushed
before it, CUDA-graph batches for µs-scale calls (plain event timing of a ~5 µs kernel
reads mostly launch overhead), and a side-stream check after every sample.

Every clock, event and synchronize here is the worker's own reference (clocks.py), taken
before any candidate was imported: a candidate that rebinds `torch.cuda.Event.elapsed_time`
or `torch.cuda.synchronize` changes nothing that is measured (and the worker rejects it).

Only `graph_batch`, `side_threshold_us` and `side_flagged` run without a GPU; the rest needs torch on CUDA.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Callable, Sequence

from . import clocks

GRAPH_BELOW_US = 20.0          # calls faster than this are timed in CUDA-graph batches
GRAPH_BATCH_TARGET_US = 200.0  # a batch lasts about this long
GRAPH_BATCH_MAX = 1000
CAPTURE_WARMUP_CALLS = 3       # calls on a side stream before capture (lazy init, autotune)
# Excluding the host's cost of issuing a call (`exclude_launch`): the GPU spins this long
# before each start event, so the call is queued before the start event fires.
LEAD_FLOOR_US = 20.0
LEAD_MAX_US = 5000.0
# torch.cuda._sleep counts SM clock cycles; no data-center GPU's SM clock runs faster
# than this, and a slower clock only makes the lead longer.
LEAD_CLOCK_HZ = 2.0e9


def graph_batch(probe_us: float) -> int:
    """Calls per graph replay for a call that takes about `probe_us` µs."""
    n = math.ceil(GRAPH_BATCH_TARGET_US / max(probe_us, 0.5))
    return max(2, min(GRAPH_BATCH_MAX, n))


def lead_us(issue_us: Sequence[float]) -> float:
    """The lead for calls whose host issue times (µs, the call returned without
    synchronizing) were `issue_us`: twice the slowest, at least LEAD_FLOOR_US."""
    return min(LEAD_MAX_US, max(LEAD_FLOOR_US, 2.0 * max(issue_us, default=0.0)))


def lead_cycles(us: float) -> int:
    return round(us * 1e-6 * LEAD_CLOCK_HZ)


def side_threshold_us(idle_sync_us: float, sample_us: float) -> float:
    """How long a device-wide synchronize after the end event may take before the sample
    counts as having missed work: the idle cost plus a margin for host jitter (Python's
    is larger than C++'s) that grows with the sample, so long samples are not flagged by
    noise; work worth flagging on another stream is a sizeable share of the sample."""
    return idle_sync_us + max(50.0, 4 * idle_sync_us, 0.05 * sample_us)


def side_flagged(hits: int, checked: int) -> bool:
    """Work outside the timed stream: at least 3 samples and a quarter of them waited."""
    return hits >= 3 and hits * 4 >= checked


class Sampler:
    """Times one call (or graph replay) per sample; counts samples after which the device
    was still busy with work the end event did not cover (another stream)."""

    def __init__(self, torch: Any, device: Any, flush_bytes: int):
        self.torch = torch
        self.device = device
        self.flush = (torch.empty(flush_bytes, dtype=torch.uint8, device=device)
                      if flush_bytes > 0 else None)
        self.flush_value = 0
        event = clocks.original("torch.cuda.Event")
        self._record = clocks.original("torch.cuda.Event.record")
        self._wait_end = clocks.original("torch.cuda.Event.synchronize")
        self._elapsed_ms = clocks.original("torch.cuda.Event.elapsed_time")
        self._synchronize = clocks.original("torch.cuda.synchronize")
        self.start = event(enable_timing=True)
        self.end = event(enable_timing=True)
        self.hits: dict[str, int] = {}
        self.checked: dict[str, int] = {}
        idle = []
        for _ in range(20):
            t0 = clocks.perf_counter()
            self._synchronize(device)
            idle.append((clocks.perf_counter() - t0) * 1e6)
        self.idle_sync_us = statistics.median(idle)
        self.waits_us: dict[str, list] = {}
        # the lead (set_lead): 0 times the host's issue of each call with it
        self.lead_us = 0.0
        self.lead_short = 0
        try:
            self._sleep = clocks.original("torch.cuda._sleep")
        except KeyError:  # a torch build without it: no lead, as before
            self._sleep = None
        self._query = clocks.original("torch.cuda.Event.query")

    def set_lead(self, us: float) -> None:
        """Hold the GPU `us` µs before each start event (0: no lead)."""
        self.lead_us = min(LEAD_MAX_US, us) if self._sleep is not None else 0.0

    def sample(self, slot: str, fn: Callable[[], Any], batch: int = 1) -> float:
        """µs per call of one sample: flush, [lead,] start event, fn(), end event. With a
        lead, a start event that had already fired when the call was issued means the GPU
        waited for the host: the lead doubles for the next samples (`lead_short` counts
        such samples)."""
        if self.flush is not None:
            self.flush_value ^= 0x5A
            self.flush.fill_(self.flush_value)
        if self.lead_us > 0:
            self._sleep(lead_cycles(self.lead_us))
        self._record(self.start)
        fn()
        self._record(self.end)
        if self.lead_us > 0 and self._query(self.start):
            self.lead_short += 1
            self.set_lead(2 * self.lead_us)
        self._wait_end(self.end)
        sample_us = self._elapsed_ms(self.start, self.end) * 1e3
        t0 = clocks.perf_counter()
        self._synchronize(self.device)
        waited_us = (clocks.perf_counter() - t0) * 1e6
        self.checked[slot] = self.checked.get(slot, 0) + 1
        self.waits_us.setdefault(slot, []).append(waited_us)
        if waited_us > side_threshold_us(self.idle_sync_us, sample_us):
            self.hits[slot] = self.hits.get(slot, 0) + 1
        return sample_us / batch

    def side_stream_work(self) -> bool:
        return any(side_flagged(self.hits.get(s, 0), n) for s, n in self.checked.items())

    def side_note(self) -> str:
        """What the side-stream check saw, per slot (for the timer note when it flags)."""
        parts = []
        for s, n in self.checked.items():
            w = self.waits_us.get(s) or [0.0]
            parts.append(f"{s}: {self.hits.get(s, 0)} of {n} samples waited, median "
                         f"{statistics.median(w):.1f} us, max {max(w):.1f} us")
        return (f"side-stream check (idle synchronize {self.idle_sync_us:.1f} us): " +
                "; ".join(parts))


def capture(torch: Any, model: Callable, sets: Sequence[list], batch: int) -> tuple:
    """A CUDA graph of `batch` calls of `model` on the input sets in turn, replayed once
    (so its first timed replay is not its upload), and the output of its last call (the
    graph rewrites it on every replay: the timing audit compares it). Raises when the
    calls cannot be captured (host synchronisation, .item(), CPU fallbacks, new streams,
    ...). Replay it with `replay(graph)`."""
    current = clocks.original("torch.cuda.current_stream")
    side = clocks.original("torch.cuda.Stream")()
    side.wait_stream(current())
    with clocks.original("torch.cuda.stream")(side):
        for i in range(CAPTURE_WARMUP_CALLS):
            model(*sets[i % len(sets)])
    current().wait_stream(side)
    graph = clocks.original("torch.cuda.CUDAGraph")()
    last = None
    with clocks.original("torch.cuda.graph")(graph):
        for i in range(batch):
            last = model(*sets[i % len(sets)])
    replay(graph)
    clocks.original("torch.cuda.synchronize")()
    return graph, last


def replay(graph: Any) -> None:
    """One replay of a captured graph, through the worker's own reference to the method."""
    clocks.original("torch.cuda.CUDAGraph.replay")(graph)
