"""kgate's own Triton kernels ("templates") for kernels Inductor generated.

Config search alone leaves torch.compile's memory-bound kernels where their algorithm puts
them: Inductor's online softmax reads every row twice from memory. A template is another
algorithm behind the same call-site contract. `offers(entry)` matches one inventory entry
(the kernel's fused ATen ops, its arguments' roles, shapes, strides and dtypes) against the
templates and instantiates each match as a complete kernel file: the `# kgate:kernel NAME`
header and call-site contract of the Inductor kernel it replaces, its own `# kgate:tune`
space, and a module whose global NAME is a launcher with the call site's `run(...)`
signature. The file is self-contained (an agent or a person can read and edit it); the
worker loads it like any kernel file and the model-level gates decide, as for any edit.

Standard library only: matching and instantiation run (and are tested) without torch.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from string import Template
from typing import Callable

TEMPLATE_KEY = "KGATE_TEMPLATE"  # top-level literal naming the template of a kernel file
_FLOAT_DTYPES = {"f32": 4, "f16": 2, "bf16": 2}


@dataclass
class Match:
    template: str
    why: str
    params: dict


def _contiguous_strides(shape: list) -> list:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(1, int(s))
    return list(reversed(out))


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


# ==== row softmax / log-softmax =============================================================

_SOFTMAX_OPS = {"prims.prepare_softmax_online", "aten.sub", "aten.exp", "aten.amax",
                "aten.sum", "aten.div", "aten.log", "aten._softmax", "aten._log_softmax"}


def _row_contract(entry: dict) -> tuple[dict | None, str]:
    """(the one input, the one output, rows, cols) of a row-wise kernel over the last,
    contiguous dimension, or (None, why not)."""
    args = entry.get("args", [])
    ins = [a for a in args if a.get("role") == "in"]
    outs = [a for a in args if a.get("role") == "out"]
    others = [a for a in args if a.get("role") not in ("in", "out", "scalar")]
    if len(ins) != 1 or len(outs) != 1 or others:
        return None, "not one input and one output tensor"
    x, y = ins[0], outs[0]
    if x.get("dtype") != y.get("dtype") or x.get("dtype") not in _FLOAT_DTYPES:
        return None, "input and output are not the same floating-point dtype"
    shape = list(x.get("shape", []))
    if not shape or list(y.get("shape", [])) != shape:
        return None, "input and output shapes differ"
    for a in (x, y):
        if list(a.get("stride", [])) != _contiguous_strides(shape):
            return None, f"{a['name']} is not contiguous"
    cols = int(shape[-1])
    rows = math.prod(int(s) for s in shape[:-1]) if len(shape) > 1 else 1
    scalars = {a["name"]: a.get("value") for a in args if a.get("role") == "scalar"}
    rnumel = scalars.get("r0_numel", scalars.get("rnumel"))
    if scalars.get("xnumel") != rows or rnumel != cols:
        return None, "the kernel does not reduce over the last dimension row by row"
    return {"x": x["name"], "y": y["name"], "rows": rows, "cols": cols,
            "dtype": x["dtype"]}, ""


def _match_row_softmax(entry: dict, source: str = "") -> Match | None:
    if entry.get("category") not in ("reduction", "persistent_reduction"):
        return None
    ops = set(entry.get("aten_ops") or [])
    log = "aten._log_softmax" in ops
    if log == ("aten._softmax" in ops) or not ops <= _SOFTMAX_OPS:
        return None  # neither or both, or more than a softmax fused in
    c, _ = _row_contract(entry)
    if c is None:
        return None
    what = "log-softmax" if log else "softmax"
    return Match("row-softmax", f"{what} over {c['rows']} contiguous rows of {c['cols']} "
                 f"{c['dtype']}", dict(c, log=log))


# Rows up to this many elements are one program's (SPLIT 1); longer ones are split.
ROW_IN_ONE_PROGRAM = 16384


def default_config(cols: int) -> dict:
    """The template's first point: a program per row holding it in registers when it is
    short enough, else the pipelined split (SPLIT 0, PIPE 1): each row split across as
    many programs as keep the rows in flight within half the L2, the second read from
    there."""
    if cols <= ROW_IN_ONE_PROGRAM:
        block = max(128, _next_pow2(cols))
        return {"SPLIT": 1, "XBLOCK": 1, "BLOCK": block,
                "NUM_WARPS": max(4, min(16, block // 512)), "OCCUPANCY": 1, "PIPE": 0}
    return {"SPLIT": 0, "XBLOCK": 1, "BLOCK": 4096, "NUM_WARPS": 4, "OCCUPANCY": 4,
            "PIPE": 1}


# The online (max, sum of exp) helpers of the softmax templates (each template file is
# self-contained: this text is written into every one that needs it).
_ONLINE_SOFTMAX_JIT = '''\
@triton.jit
def _exp(v, PRECISE: tl.constexpr):
    if PRECISE:
        return libdevice.exp(v)
    return tl.exp(v)


@triton.jit
def _log(v, PRECISE: tl.constexpr):
    if PRECISE:
        return libdevice.log(v)
    return tl.log(v)


@triton.jit
def _online(m, s, x, PRECISE: tl.constexpr):
    """One step of the online (max, sum of exp) over a tile; -inf lanes stay empty."""
    m_new = tl.maximum(m, x)
    alive = m_new != float("-inf")
    s = tl.where(alive, s * _exp(m - m_new, PRECISE) + _exp(x - m_new, PRECISE), 0.0)
    return m_new, s


@triton.jit
def _merge(m, s, PRECISE: tl.constexpr):
    """Per row of [rows, n] partial (max, sum of exp) pairs: (max, sum relative to it)."""
    top = tl.max(m, 1)
    return top, tl.sum(tl.where(m == float("-inf"), 0.0, s * _exp(m - top[:, None], PRECISE)), 1)


@triton.jit
def _chunk_stats(x_ptr, base, rmask, col0, cols, CHUNK: tl.constexpr, XBLOCK: tl.constexpr,
                 BLOCK: tl.constexpr, PRECISE: tl.constexpr):
    offs = tl.arange(0, BLOCK)[None, :]
    m = tl.full([XBLOCK, BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([XBLOCK, BLOCK], tl.float32)
    for c in range(0, CHUNK, BLOCK):
        cols_ = col0 + c + offs
        keep = rmask & (c + offs < CHUNK) & (cols_ < cols)
        x = tl.load(x_ptr + base + cols_, mask=keep, other=float("-inf"),
                    eviction_policy="evict_last").to(tl.float32)
        m, s = _online(m, s, x, PRECISE)
    return _merge(m, s, PRECISE)


'''


_ROW_SOFTMAX = Template('''\
# kgate's row-softmax template, XBLOCK rows at a time. SPLIT 1: the rows' own program,
# the rows held in registers when they fit one BLOCK (one read), else an online max and
# sum then the write. SPLIT > 1:
# each row split across SPLIT co-resident programs (SPLIT 0: as many as make each chunk
# one BLOCK); a program reads its chunk once for an online max and sum, the programs of
# a row exchange their partial (max, sum) through a small scratch buffer and a
# self-resetting arrival counter, and each writes its chunk, still in registers when it
# is one BLOCK (else read again, from L2 while it is there): one read of the input from
# memory instead of Inductor's two. Then the grid never exceeds what the GPU holds at
# once (SMs times OCCUPANCY, capped by the compiled kernel's registers and shared
# memory), so the programs of a row always meet.
SPLIT = $split
XBLOCK = $xblock
BLOCK = $block
NUM_WARPS = $warps
OCCUPANCY = $occ
# PIPE 1 (split rows only): a program publishes step k's partials before it waits for step
# k-1's, and writes from L2; SPLIT 0 then sizes the split so that the rows in flight fit
# half the L2.
PIPE = $pipe
# PIPE: the rows in flight stay within 1/L2_SHARE of the L2.
L2_SHARE = 2
$template_key = "row-softmax"

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

ROWS = $rows
COLS = $cols
ELEM_BYTES = $elem
LOG = $log
# exp and log from libdevice, as Inductor's kernels (False: the hardware approximations).
PRECISE = True
# Bounded wait for the other programs of a row (a GPU shared with another process can
# hold them back); past it the row is written from the partials it has, which the gates
# reject, rather than hanging the model.
SPIN_LIMIT = 1 << 24


$online_helpers
@triton.jit
def _finish(x, row_max, row_sum, LOG: tl.constexpr, PRECISE: tl.constexpr):
    if LOG:
        return x - row_max[:, None] - _log(row_sum, PRECISE)[:, None]
    return _exp(x - row_max[:, None], PRECISE) / row_sum[:, None]


@triton.jit
def _chunk_write(x_ptr, y_ptr, base, rmask, col0, cols, row_max, row_sum,
                 CHUNK: tl.constexpr, BLOCK: tl.constexpr, LOG: tl.constexpr,
                 PRECISE: tl.constexpr):
    offs = tl.arange(0, BLOCK)[None, :]
    for c in range(0, CHUNK, BLOCK):
        cols_ = col0 + c + offs
        keep = rmask & (c + offs < CHUNK) & (cols_ < cols)
        x = tl.load(x_ptr + base + cols_, mask=keep, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        y = _finish(x, row_max, row_sum, LOG, PRECISE)
        tl.store(y_ptr + base + cols_, y.to(y_ptr.dtype.element_ty), mask=keep)


@triton.jit
def _publish(part_ptr, cnt_ptr, r, rows, step, lane, pmax, psum, SPLIT: tl.constexpr):
    """Stores this program's partial (max, sum) of its chunk of the rows of `step`, then
    counts itself in (release: the partials are visible before the count)."""
    part = part_ptr + (tl.cast(r, tl.int64) * SPLIT + lane) * 2
    tl.store(part, pmax, mask=r < rows)
    tl.store(part + 1, psum, mask=r < rows)
    tl.debug_barrier()
    tl.atomic_add(cnt_ptr + step, 1, sem="release")


@triton.jit
def _gather(part_ptr, cnt_ptr, stat_ptr, r, rmask, step, SPLIT: tl.constexpr,
            SPLIT_P2: tl.constexpr, SPIN_LIMIT: tl.constexpr, PRECISE: tl.constexpr):
    """Waits until every program of `step` has published, merges their partials into the
    rows' (max, sum), and counts itself out; the last to leave resets the counter."""
    # Wait with plain loads from L2 (an atomic per poll would queue up at the counter's
    # L2 slice behind every other waiting program), then one acquire.
    spins = 0
    while (tl.load(cnt_ptr + step, volatile=True) < SPLIT) & (spins < SPIN_LIMIT):
        spins += 1
    if spins >= SPIN_LIMIT:
        tl.atomic_max(stat_ptr, spins)  # the launcher reports a wait that ran out
    tl.atomic_add(cnt_ptr + step, 0, sem="acquire")
    tl.debug_barrier()
    lanes = tl.arange(0, SPLIT_P2)[None, :]
    part = part_ptr + tl.cast(r, tl.int64)[:, None] * SPLIT * 2 + lanes * 2
    pm = rmask & (lanes < SPLIT)
    row_max, row_sum = _merge(
        tl.load(part, mask=pm, other=float("-inf"), cache_modifier=".cg"),
        tl.load(part + 1, mask=pm, other=0.0, cache_modifier=".cg"), PRECISE)
    # The last of the step's programs to leave resets its counter for the next call.
    left = tl.atomic_add(cnt_ptr + step, 1, sem="relaxed")
    if left == 2 * SPLIT - 1:
        tl.atomic_xchg(cnt_ptr + step, 0, sem="relaxed")
    return row_max, row_sum


@triton.jit
def _kgate_row_softmax(x_ptr, y_ptr, part_ptr, cnt_ptr, stat_ptr, rows, cols,
                       SPLIT: tl.constexpr, SPLIT_P2: tl.constexpr, CHUNK: tl.constexpr,
                       XBLOCK: tl.constexpr, BLOCK: tl.constexpr, LOG: tl.constexpr,
                       SPIN_LIMIT: tl.constexpr, PRECISE: tl.constexpr,
                       PIPE: tl.constexpr):
    """XBLOCK rows at a time; each row's columns split across SPLIT programs."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)[None, :]
    xs = tl.arange(0, XBLOCK)
    steps = tl.cdiv(rows, XBLOCK)
    if SPLIT == 1:
        # The rows' own program holds every column: no exchange, any grid works.
        for step in range(pid, steps, tl.num_programs(0)):
            r = step * XBLOCK + xs
            rmask = (r < rows)[:, None]
            base = tl.cast(r, tl.int64)[:, None] * cols
            if CHUNK == BLOCK:  # the rows in registers: one read
                keep = rmask & (offs < cols)
                x = tl.load(x_ptr + base + offs, mask=keep, other=float("-inf")).to(tl.float32)
                row_max, row_sum = _merge(x, tl.where(x == float("-inf"), 0.0, 1.0), PRECISE)
                y = _finish(x, row_max, row_sum, LOG, PRECISE)
                tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=keep)
            else:
                row_max, row_sum = _chunk_stats(x_ptr, base, rmask, 0, cols, CHUNK, XBLOCK,
                                                BLOCK, PRECISE)
                _chunk_write(x_ptr, y_ptr, base, rmask, 0, cols, row_max, row_sum, CHUNK,
                             BLOCK, LOG, PRECISE)
    elif PIPE:
        # Pipelined across steps: a program reads its chunk of step k's rows and publishes
        # their partials, and only then waits for step k-1's partials (published by its
        # peers a whole chunk earlier, so the wait rarely spins) and writes that step's
        # chunk, read again from L2: the grid's rows in flight are sized to stay there.
        lane = pid % SPLIT
        group = pid // SPLIT
        groups = tl.num_programs(0) // SPLIT
        col0 = lane * CHUNK
        prev = -1
        for step in range(group, steps, groups):
            r = step * XBLOCK + xs
            rmask = (r < rows)[:, None]
            base = tl.cast(r, tl.int64)[:, None] * cols
            pmax, psum = _chunk_stats(x_ptr, base, rmask, col0, cols, CHUNK, XBLOCK, BLOCK,
                                      PRECISE)
            _publish(part_ptr, cnt_ptr, r, rows, step, lane, pmax, psum, SPLIT)
            if prev >= 0:
                rp = prev * XBLOCK + xs
                rpmask = (rp < rows)[:, None]
                row_max, row_sum = _gather(part_ptr, cnt_ptr, stat_ptr, rp, rpmask, prev,
                                           SPLIT, SPLIT_P2, SPIN_LIMIT, PRECISE)
                _chunk_write(x_ptr, y_ptr, tl.cast(rp, tl.int64)[:, None] * cols, rpmask,
                             col0, cols, row_max, row_sum, CHUNK, BLOCK, LOG, PRECISE)
            prev = step
        if prev >= 0:
            rp = prev * XBLOCK + xs
            rpmask = (rp < rows)[:, None]
            row_max, row_sum = _gather(part_ptr, cnt_ptr, stat_ptr, rp, rpmask, prev, SPLIT,
                                       SPLIT_P2, SPIN_LIMIT, PRECISE)
            _chunk_write(x_ptr, y_ptr, tl.cast(rp, tl.int64)[:, None] * cols, rpmask, col0,
                         cols, row_max, row_sum, CHUNK, BLOCK, LOG, PRECISE)
    else:
        # SPLIT programs share XBLOCK rows, one chunk of columns each: each publishes its
        # partial (max, sum), waits for the others of its step, merges them and writes.
        lane = pid % SPLIT
        group = pid // SPLIT
        groups = tl.num_programs(0) // SPLIT
        col0 = lane * CHUNK
        for step in range(group, steps, groups):
            r = step * XBLOCK + xs
            rmask = (r < rows)[:, None]
            base = tl.cast(r, tl.int64)[:, None] * cols
            if CHUNK == BLOCK:
                keep = rmask & ((col0 + offs) < cols)
                x = tl.load(x_ptr + base + col0 + offs, mask=keep,
                            other=float("-inf")).to(tl.float32)
                pmax, psum = _merge(x, tl.where(x == float("-inf"), 0.0, 1.0), PRECISE)
            else:
                pmax, psum = _chunk_stats(x_ptr, base, rmask, col0, cols, CHUNK, XBLOCK,
                                          BLOCK, PRECISE)
            _publish(part_ptr, cnt_ptr, r, rows, step, lane, pmax, psum, SPLIT)
            row_max, row_sum = _gather(part_ptr, cnt_ptr, stat_ptr, r, rmask, step, SPLIT,
                                       SPLIT_P2, SPIN_LIMIT, PRECISE)
            if CHUNK == BLOCK:
                y = _finish(x, row_max, row_sum, LOG, PRECISE)
                tl.store(y_ptr + base + col0 + offs, y.to(y_ptr.dtype.element_ty), mask=keep)
            else:
                _chunk_write(x_ptr, y_ptr, base, rmask, col0, cols, row_max, row_sum, CHUNK,
                             BLOCK, LOG, PRECISE)


def _resident_programs(kernel, device, warps: int) -> int:
    """Programs of `kernel` one SM holds at once (registers, shared memory, threads)."""
    props = torch.cuda.get_device_properties(device)
    threads = 32 * warps
    regs = max(1, int(getattr(kernel, "n_regs", 0) or 0))
    per_warp = -(-regs * 32 // 256) * 256  # registers are allocated per warp in 256s
    by_regs = int(getattr(props, "regs_per_multiprocessor", 65536)) // (per_warp * warps)
    smem = int(getattr(getattr(kernel, "metadata", None), "shared", 0) or 0)
    sm_smem = int(getattr(props, "shared_memory_per_multiprocessor", 0) or 0)
    by_smem = sm_smem // smem if smem and sm_smem else 32
    by_threads = int(getattr(props, "max_threads_per_multi_processor", 2048)) // threads
    return max(1, min(by_regs, by_smem, by_threads, 32))


class _Launcher:
    """The call site's `$name.run(...)`: the same arguments, in the same order."""

    def __init__(self):
        self.state = {}

    def run(self, $x, $y, xnumel, r0_numel, *, stream=None):
        dev = $x.device
        st = self.state.get(dev)
        if st is None:
            st = self.state[dev] = self._setup($x, $y)
        self._launch($x, $y, *st)

    def _setup(self, x, y) -> tuple:
        """Scratch, counters and the grid, sized by the kernel that will run: a split
        row's grid only as large as the GPU holds of that very kernel at once."""
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        occ = max(1, int(OCCUPANCY))
        # NaN in the partials: a read before its program wrote it cannot pass for a number
        part = torch.full((max(1, ROWS * sms * occ * 2),), float("nan"), device=x.device,
                          dtype=torch.float32)
        cnt = torch.zeros((max(1, triton.cdiv(ROWS, XBLOCK)),), device=x.device,
                          dtype=torch.int32)
        stat = torch.zeros((1,), device=x.device, dtype=torch.int32)
        l2 = int(getattr(torch.cuda.get_device_properties(x.device), "L2_cache_size", 0) or 0)
        for _ in range(4):
            split, grid = self._grid(sms, occ, l2)
            if split == 1:
                break
            k = self._launch(x, y, part, cnt, stat, split, grid, warmup=True)
            if hasattr(k, "_init_handles"):
                k._init_handles()  # loads the module: registers and shared memory known
            fit = _resident_programs(k, x.device, NUM_WARPS)
            if fit >= occ:
                break
            occ = fit
        return part, cnt, stat, split, grid

    @staticmethod
    def _grid(sms: int, occ: int, l2_bytes: int = 0) -> tuple:
        """(programs per row, grid). SPLIT 0: as many programs as the row needs for one
        BLOCK each (the chunk stays in registers between the passes); with PIPE, as many
        as keep the rows in flight (two steps of every group) within half the L2. A split
        row's grid is a multiple of its programs and never more than `occ` per SM."""
        slots = max(1, sms * occ)
        steps = triton.cdiv(ROWS, XBLOCK)
        groups = steps
        if int(PIPE):
            # two steps of every group in flight: within half the L2
            step_bytes = 2 * XBLOCK * COLS * ELEM_BYTES
            groups = max(1, min(steps, (l2_bytes or (32 << 20)) // max(1, int(L2_SHARE)) //
                                step_bytes))
        if int(SPLIT) != 0:
            split = int(SPLIT)
        elif int(PIPE) and COLS > BLOCK:
            chunk = triton.cdiv(triton.cdiv(COLS, max(1, slots // groups)), BLOCK) * BLOCK
            split = triton.cdiv(COLS, chunk)
        else:
            split = triton.cdiv(COLS, BLOCK)
        split = min(split, slots)
        if split <= 1:
            return 1, max(1, steps)  # no exchange: a program per XBLOCK rows
        return split, max(1, min(slots // split, groups)) * split

    @staticmethod
    def _launch(x, y, part, cnt, stat, split, grid, warmup=False):
        chunk = triton.cdiv(triton.cdiv(COLS, split), BLOCK) * BLOCK
        kw = dict(SPLIT=split, SPLIT_P2=triton.next_power_of_2(split), CHUNK=chunk,
                  XBLOCK=XBLOCK, BLOCK=BLOCK, LOG=LOG, SPIN_LIMIT=SPIN_LIMIT,
                  PRECISE=PRECISE, PIPE=bool(int(PIPE)), num_warps=NUM_WARPS)
        if warmup:
            return _kgate_row_softmax.warmup(x, y, part, cnt, stat, ROWS, COLS,
                                             grid=(grid,), **kw)
        return _kgate_row_softmax[(grid,)](x, y, part, cnt, stat, ROWS, COLS, **kw)


$name = _Launcher()
''')


def _instantiate_row_softmax(entry: dict, m: Match, device: dict) -> tuple[str, str]:
    p = m.params
    d = default_config(p["cols"])
    cap = max(1024, _next_pow2(p["cols"]))
    blocks = sorted({b for b in (1024, 2048, 4096, 8192, 16384, 32768) if b <= cap} |
                    {d["BLOCK"]})
    tune = (f"# kgate:tune SPLIT=[0,1,8,16,32] XBLOCK=[1,2,4,8] "
            f"BLOCK=[{','.join(map(str, blocks))}] "
            f"NUM_WARPS=[{','.join(map(str, sorted({4, 8, 16, 32} | {d['NUM_WARPS']})))}] "
            "OCCUPANCY=[1,2,4] PIPE=[0,1] L2_SHARE=[2,4,8]\n# kgate:tune-local")
    body = _ROW_SOFTMAX.substitute(
        online_helpers=_ONLINE_SOFTMAX_JIT, split=d["SPLIT"], xblock=d["XBLOCK"], block=d["BLOCK"], warps=d["NUM_WARPS"], occ=d["OCCUPANCY"],
        pipe=d["PIPE"], elem=_FLOAT_DTYPES[p["dtype"]],
        template_key=TEMPLATE_KEY, rows=p["rows"], cols=p["cols"], log=bool(p["log"]),
        x=p["x"], y=p["y"], name=entry["name"])
    return tune, body


# ==== row normalisation: L1, L2, instance norm ==============================================

_ROW_NORM_KINDS = {"l1": 0, "l2": 1, "instance": 2}


def _row_input(entry: dict, source: str) -> tuple[dict | None, int, int]:
    """(the kernel's one input, rows, cols) when it reads `xnumel` contiguous rows of
    `r0_numel` elements (its own index arithmetic says so), else (None, 0, 0)."""
    args = entry.get("args", [])
    ins = [a for a in args if a.get("role") == "in"]
    if len(ins) != 1 or ins[0].get("dtype") not in _FLOAT_DTYPES:
        return None, 0, 0
    x = ins[0]
    shape = list(x.get("shape", []))
    if not shape or list(x.get("stride", [])) != _contiguous_strides(shape) or \
            int(x.get("offset", 0) or 0) != 0:
        return None, 0, 0
    scalars = {a["name"]: a.get("value") for a in args if a.get("role") == "scalar"}
    rows, cols = scalars.get("xnumel"), scalars.get("r0_numel", scalars.get("rnumel"))
    if not isinstance(rows, int) or not isinstance(cols, int) or \
            rows * cols != math.prod(int(v) for v in shape):
        return None, 0, 0
    if not re.search(rf"tl\.load\({re.escape(x['name'])} \+ \(r0_\d+ \+ {cols}\*x0\)", source):
        return None, 0, 0
    return x, rows, cols


def _flat_row_contract(entry: dict, source: str) -> tuple[dict | None, str]:
    """(the one input, the one output, rows, cols) of a kernel that reduces each of
    `xnumel` contiguous rows of `r0_numel` elements (the output may be a view of another
    shape over the same contiguous storage), or (None, why not)."""
    x, rows, cols = _row_input(entry, source)
    if x is None:
        return None, "the kernel does not read one tensor's contiguous rows"
    args = entry.get("args", [])
    outs = [a for a in args if a.get("role") == "out"]
    if len(outs) != 1 or any(a.get("role") not in ("in", "out", "scalar") for a in args):
        return None, "not one input and one output tensor"
    y = outs[0]
    shape = list(y.get("shape", []))
    if y.get("dtype") != x["dtype"] or not shape or \
            list(y.get("stride", [])) != _contiguous_strides(shape) or \
            int(y.get("offset", 0) or 0) != 0 or math.prod(int(v) for v in shape) != rows * cols:
        return None, "the output is not a contiguous tensor of the input's size and dtype"
    return {"x": x["name"], "y": y["name"], "rows": rows, "cols": cols,
            "dtype": x["dtype"]}, ""


def _norm_eps(source: str, cols: int) -> float | None:
    """The epsilon an instance-norm kernel adds to the variance: its one float constant
    other than the row length (None when that is not what the source shows)."""
    consts = {float(v) for v in re.findall(
        r"tl\.full\(\[1, 1\], ([-+0-9.eE]+), tl\.float32\)", source)} - {float(cols)}
    return consts.pop() if len(consts) == 1 and "rsqrt" in source else None


def _match_row_norm(entry: dict, source: str = "") -> Match | None:
    """x / mean(|x|), x / ||x||_2 or (x - mean) / sqrt(var + eps) per contiguous row, the
    whole kernel being that and nothing more (no affine weights, one input)."""
    if entry.get("category") not in ("reduction", "persistent_reduction") or not source:
        return None
    ops = set(entry.get("aten_ops") or [])
    eps = 0.0
    if ops == {"aten.abs", "aten.mean", "aten.div"} and "tl_math.abs(" in source:
        kind = "l1"
    elif ops == {"aten.linalg_vector_norm", "aten.div"} and "sqrt" in source and \
            re.search(r"(tmp\d+) \* \1\b", source) and "abs(" not in source:
        kind = "l2"
    elif "aten._native_batch_norm_legit" in ops and \
            ops <= {"aten._native_batch_norm_legit", "aten.view"} and "welford" in source:
        kind = "instance"
    else:
        return None
    c, _ = _flat_row_contract(entry, source)
    if c is None:
        return None
    if kind == "instance":
        e = _norm_eps(source, c["cols"])
        if e is None:
            return None
        eps = e
    what = {"l1": "x / mean(|x|)", "l2": "x / ||x||_2",
            "instance": f"(x - mean) / sqrt(var + {eps:g})"}[kind]
    return Match("row-norm", f"{what} over {c['rows']} contiguous rows of {c['cols']} "
                 f"{c['dtype']}", dict(c, kind=kind, eps=eps))


_ROW_NORM = Template('''\
# kgate's row-normalisation template: a program per row (OCCUPANCY 0) or a persistent grid
# of OCCUPANCY programs per SM walking the rows. The statistic's pass reads the row BLOCK
# elements at a time, the last (partial) chunk held in registers; the output pass writes
# that chunk first, then the others, backwards when REVERSE (the most recently read, the
# likeliest still in L2, first).
BLOCK = $block
NUM_WARPS = $warps
NUM_STAGES = 1
OCCUPANCY = 0
REVERSE = 1
$template_key = "row-norm"

import torch
import triton
import triton.language as tl

ROWS = $rows
COLS = $cols
# 0: x / mean(|x|); 1: x / sqrt(sum x^2); 2: (x - mean) * rsqrt(var + EPS)
KIND = $kind
EPS = $eps


@triton.jit
def _accumulate(a1, a2, x, shift, keep, KIND: tl.constexpr):
    if KIND == 0:
        a1 += tl.where(keep, tl.abs(x), 0.0)
    elif KIND == 1:
        a1 += tl.where(keep, x * x, 0.0)
    else:  # sums shifted by the row's first element: no cancellation when mean >> spread
        d = tl.where(keep, x - shift, 0.0)
        a1 += d
        a2 += d * d
    return a1, a2


@triton.jit
def _normalise(x, s1, s2, shift, cols, eps, KIND: tl.constexpr):
    if KIND == 0:
        return x / (s1 / cols)
    elif KIND == 1:
        return x / tl.sqrt_rn(s1)
    else:
        m = s1 / cols
        var = tl.maximum(s2 / cols - m * m, 0.0)
        return (x - (shift + m)) * tl.rsqrt(var + eps)


@triton.jit
def _kgate_row_norm(x_ptr, y_ptr, rows, cols, eps, KIND: tl.constexpr, BLOCK: tl.constexpr,
                    LAST: tl.constexpr, REVERSE: tl.constexpr):
    """Rows pid, pid + grid, ...; LAST is where the row's last chunk starts."""
    offs = tl.arange(0, BLOCK)
    tail = LAST + offs
    tail_keep = tail < cols
    full = tl.full([BLOCK], 1, tl.int1)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        base = tl.cast(row, tl.int64) * cols
        shift = tl.load(x_ptr + base).to(tl.float32)
        a1 = tl.zeros([BLOCK], tl.float32)
        a2 = tl.zeros([BLOCK], tl.float32)
        for c in range(0, LAST, BLOCK):
            x = tl.load(x_ptr + base + c + offs, eviction_policy="evict_last").to(tl.float32)
            a1, a2 = _accumulate(a1, a2, x, shift, full, KIND)
        t = tl.load(x_ptr + base + tail, mask=tail_keep, other=0.0).to(tl.float32)
        a1, a2 = _accumulate(a1, a2, t, shift, tail_keep, KIND)
        s1 = tl.sum(a1, 0)
        s2 = tl.sum(a2, 0)
        tl.store(y_ptr + base + tail,
                 _normalise(t, s1, s2, shift, cols, eps, KIND).to(y_ptr.dtype.element_ty),
                 mask=tail_keep)
        for i in range(0, LAST, BLOCK):
            if REVERSE:
                c = LAST - BLOCK - i
            else:
                c = i
            x = tl.load(x_ptr + base + c + offs, eviction_policy="evict_first").to(tl.float32)
            tl.store(y_ptr + base + c + offs,
                     _normalise(x, s1, s2, shift, cols, eps, KIND).to(y_ptr.dtype.element_ty))


class _Launcher:
    """The call site's `$name.run(...)`: the same arguments, in the same order."""

    def __init__(self):
        self.grid = {}

    def run(self, $x, $y, xnumel, r0_numel, *, stream=None):
        dev = $x.device
        grid = self.grid.get(dev)
        if grid is None:
            grid = ROWS
            if int(OCCUPANCY) > 0 and dev.type == "cuda":
                sms = torch.cuda.get_device_properties(dev).multi_processor_count
                grid = max(1, min(ROWS, sms * int(OCCUPANCY)))
            self.grid[dev] = grid
        self.launch($x, $y, grid)

    @staticmethod
    def launch(x, y, grid):
        last = (COLS - 1) // BLOCK * BLOCK
        _kgate_row_norm[(grid,)](x, y, ROWS, COLS, EPS, KIND=KIND, BLOCK=BLOCK, LAST=last,
                                 REVERSE=bool(int(REVERSE)), num_warps=NUM_WARPS,
                                 num_stages=NUM_STAGES)


$name = _Launcher()
''')


def _instantiate_row_norm(entry: dict, m: Match, device: dict) -> tuple[str, str]:
    p = m.params
    # The first point: 16 elements per thread on long rows, 32 warps (the best of the
    # walks over the official L1/L2 rows on the H200: docs/measurement.md, "row-norm");
    # a row of up to 16384 elements is one chunk, held in registers: one read.
    block = max(128, min(16384, _next_pow2(p["cols"])))
    warps = 32 if block >= 8192 else max(4, block // 256)
    cap = max(1024, _next_pow2(p["cols"]))
    blocks = sorted({b for b in (1024, 2048, 4096, 8192, 16384) if b <= cap} | {block})
    tune = (f"# kgate:tune BLOCK=[{','.join(map(str, blocks))}] NUM_WARPS=[4,8,16,32] "
            "NUM_STAGES=[1,2,3] OCCUPANCY=[0,1,2,4] REVERSE=[0,1]\n# kgate:tune-local")
    body = _ROW_NORM.substitute(
        block=block, warps=warps, template_key=TEMPLATE_KEY, rows=p["rows"], cols=p["cols"],
        kind=_ROW_NORM_KINDS[p["kind"]], eps=repr(float(p["eps"])), x=p["x"], y=p["y"],
        name=entry["name"])
    return tune, body


# ==== row softmax statistics (the first kernel of a cross-entropy) ===========================

def _match_softmax_stats(entry: dict, source: str = "") -> Match | None:
    """A kernel that is only `prims.prepare_softmax_online` over contiguous rows: each
    row's max and sum of exp(x - max), one f32 value per row into each of two outputs
    (what a cross-entropy's log-softmax reads back)."""
    if entry.get("category") != "reduction" or \
            set(entry.get("aten_ops") or []) != {"prims.prepare_softmax_online"} or \
            "online_softmax_reduce" not in source:
        return None
    x, rows, cols = _row_input(entry, source)
    outs = [a for a in entry.get("args", []) if a.get("role") == "out"]
    others = [a for a in entry.get("args", []) if a.get("role") not in ("in", "out", "scalar")]
    if x is None or len(outs) != 2 or others:
        return None
    for o in outs:
        if o.get("dtype") != "f32" or math.prod(int(v) for v in o.get("shape", [0])) != rows \
                or f"tl.store({o['name']} + (x0)" not in source:
            return None
    return Match("softmax-stats", f"max and sum of exp over {rows} contiguous rows of {cols} "
                 f"{x['dtype']}", {"x": x["name"], "m": outs[0]["name"], "s": outs[1]["name"],
                                   "rows": rows, "cols": cols, "dtype": x["dtype"]})


_SOFTMAX_STATS = Template('''\
# kgate's softmax-statistics template: XBLOCK rows per program (OCCUPANCY 0: a program per
# XBLOCK rows; else a persistent grid of OCCUPANCY programs per SM walking them), each
# row's max and sum of exp(x - max) in one read: from registers when the row fits one
# BLOCK, else an online max and sum over its chunks.
XBLOCK = $xblock
BLOCK = $block
NUM_WARPS = $warps
OCCUPANCY = 0
$template_key = "softmax-stats"

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

ROWS = $rows
COLS = $cols
# exp from libdevice, as Inductor's kernels (False: the hardware approximation).
PRECISE = True


$online_helpers
@triton.jit
def _kgate_softmax_stats(x_ptr, m_ptr, s_ptr, rows, cols, XBLOCK: tl.constexpr,
                         BLOCK: tl.constexpr, CHUNK: tl.constexpr, PRECISE: tl.constexpr):
    offs = tl.arange(0, BLOCK)[None, :]
    xs = tl.arange(0, XBLOCK)
    for step in range(tl.program_id(0), tl.cdiv(rows, XBLOCK), tl.num_programs(0)):
        r = step * XBLOCK + xs
        rmask = (r < rows)[:, None]
        base = tl.cast(r, tl.int64)[:, None] * cols
        if CHUNK == BLOCK:  # the rows in registers
            x = tl.load(x_ptr + base + offs, mask=rmask & (offs < cols),
                        other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
            m, s = _merge(x, tl.where(x == float("-inf"), 0.0, 1.0), PRECISE)
        else:
            m, s = _chunk_stats(x_ptr, base, rmask, 0, cols, CHUNK, XBLOCK, BLOCK, PRECISE)
        tl.store(m_ptr + r, m, mask=r < rows)
        tl.store(s_ptr + r, s, mask=r < rows)


class _Launcher:
    """The call site's `$name.run(...)`: the same arguments, in the same order."""

    def __init__(self):
        self.grid = {}

    def run(self, $x, $m, $s, xnumel, r0_numel, *, stream=None):
        dev = $x.device
        grid = self.grid.get(dev)
        if grid is None:
            grid = triton.cdiv(ROWS, XBLOCK)
            if int(OCCUPANCY) > 0 and dev.type == "cuda":
                sms = torch.cuda.get_device_properties(dev).multi_processor_count
                grid = max(1, min(grid, sms * int(OCCUPANCY)))
            self.grid[dev] = grid
        self.launch($x, $m, $s, grid)

    @staticmethod
    def launch(x, m, s, grid):
        chunk = triton.cdiv(COLS, BLOCK) * BLOCK
        _kgate_softmax_stats[(grid,)](x, m, s, ROWS, COLS, XBLOCK=XBLOCK, BLOCK=BLOCK,
                                      CHUNK=chunk, PRECISE=PRECISE, num_warps=NUM_WARPS)


$name = _Launcher()
''')


def _instantiate_softmax_stats(entry: dict, m: Match, device: dict) -> tuple[str, str]:
    p = m.params
    block = max(128, min(16384, _next_pow2(p["cols"])))
    warps = max(2, min(16, block // 512))
    xblock = max(1, min(8, 8192 // block))  # about 8192 elements per program
    cap = max(1024, _next_pow2(p["cols"]))
    blocks = sorted({b for b in (512, 1024, 2048, 4096, 8192, 16384) if b <= cap} | {block})
    tune = (f"# kgate:tune XBLOCK=[1,2,4,8] BLOCK=[{','.join(map(str, blocks))}] "
            f"NUM_WARPS=[{','.join(map(str, sorted({2, 4, 8, 16} | {warps})))}] "
            "OCCUPANCY=[0,1,2,4,8]\n# kgate:tune-local")
    body = _SOFTMAX_STATS.substitute(
        online_helpers=_ONLINE_SOFTMAX_JIT, xblock=xblock, block=block, warps=warps,
        template_key=TEMPLATE_KEY, rows=p["rows"], cols=p["cols"], x=p["x"], m=p["m"],
        s=p["s"], name=entry["name"])
    return tune, body


# ==== pointwise over rows: Inductor's own body, re-tiled ====================================

# A column operand (read at the column index alone) of at least this many bytes is worth
# holding across rows: smaller ones stay in L1/L2 under Inductor's flat tiling anyway.
_COLUMN_OPERAND_BYTES = 1 << 20
_CALL = re.compile(r"\btl\.(load|store)\(")
_NAMES = re.compile(r"\b(tmp\d+|x\d+|xmask|xindex|xoffset|xnumel)\b")


def _split_args(text: str, start: int) -> tuple[list[str], int] | None:
    """The top-level arguments of the call whose `(` is at text[start], and the index of
    its `)`; None when the parentheses do not close on the line."""
    depth, args, cur, quote = 0, [], "", ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            cur += ch
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            if depth == 1:
                continue
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return [a for a in args if a], i
        elif ch == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return None


def _masked(line: str, mask: str) -> str | None:
    """`line` with every tl.load/tl.store masked by `mask` too (Inductor's `None` and
    `xmask` become it, another mask is and-ed with it); None when a call's mask is not
    where Inductor writes it (positional: a load's second argument, a store's third)."""
    out, pos = "", 0
    for m in _CALL.finditer(line):
        if m.start() < pos:
            return None  # a call inside another call's arguments
        got = _split_args(line, m.end() - 1)
        if got is None:
            return None
        args, close = got
        at = 1 if m.group(1) == "load" else 2
        positional = [a for a in args if not re.match(r"\w+=", a)]
        if len(positional) != len(args[:len(positional)]) or any(
                re.match(r"mask=", a) for a in args) or len(positional) < at:
            return None
        if len(positional) == at:
            args.insert(at, mask)
        elif args[at] in ("None", "xmask"):
            args[at] = mask
        else:
            args[at] = f"({args[at]}) & {mask}"
        out += line[pos:m.start()] + f"tl.{m.group(1)}(" + ", ".join(args) + ")"
        pos = close + 1
    return out + line[pos:]


def _pointwise_rows(entry: dict, source: str) -> tuple[dict | None, str]:
    """Inductor's pointwise kernel as rows x columns: its flat index split by one modulus
    (`x0 = xindex % N`, `x1 = xindex // N`, maybe `x2 = xindex`), its body in straight
    lines; the lines that read only the column index hoisted out of the row loop. (None,
    why not) when the kernel is not of that form."""
    if entry.get("category") != "pointwise" or not source:
        return None, "not a pointwise kernel"
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, "the source does not parse"
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    fn = next((n for n in fns if n.name == entry.get("fn_name", entry.get("name"))),
              fns[0] if fns else None)
    params = [a.arg for a in fn.args.args] if fn else []
    if len(params) < 3 or params[-2:] != ["xnumel", "XBLOCK"]:
        return None, "not a one-dimensional pointwise kernel"
    lines = source.splitlines()[fn.body[0].lineno - 1:fn.body[-1].end_lineno]
    if any(not ln.startswith("    ") or ln.startswith("     ") for ln in lines if ln.strip()):
        return None, "the body is not straight-line code"
    lines = [ln.strip() for ln in lines if ln.strip()]
    numel = re.fullmatch(r"xnumel = (\d+)", lines[0])
    if numel is None or len(lines) < 5 or lines[1:3] != [
            "xoffset = tl.program_id(0) * XBLOCK",
            "xindex = xoffset + tl.arange(0, XBLOCK)[:]"] or \
            lines[3] not in ("xmask = tl.full([XBLOCK], True, tl.int1)[:]",
                             "xmask = xindex < xnumel"):
        return None, "not Inductor's one-dimensional index prologue (32-bit)"
    body, col, row, flat, mod, div = [], None, None, None, None, None
    for ln in lines[4:]:
        m = re.fullmatch(r"(x\d+) = \(?xindex % (\d+)\)?", ln)
        d = re.fullmatch(r"(x\d+) = xindex // (\d+)", ln)
        f = re.fullmatch(r"(x\d+) = xindex", ln)
        if m and col is None:
            col, mod = m.group(1), int(m.group(2))
        elif d and row is None:
            row, div = d.group(1), int(d.group(2))
        elif f and flat is None:
            flat = f.group(1)
        elif re.match(r"x\d+ = ", ln):
            return None, f"an index this template does not split: {ln}"
        else:
            body.append(ln)
    if col is None or row is None or mod != div:
        return None, "the flat index is not split into rows of one length"
    xnumel, cols = int(numel.group(1)), mod
    rows = xnumel // cols
    if rows * cols != xnumel or rows < 2:
        return None, "fewer than two whole rows"
    if not all(re.fullmatch(r"(tmp\d+ = .+|tl\.store\(.+\))", ln) for ln in body) or \
            any(re.search(r"\b(xindex|xoffset|program_id|arange|return)\b", ln) for ln in body):
        return None, "the body is not straight-line code over the split index"
    stored = {m.group(1) for ln in body for m in re.finditer(r"tl\.store\((\w+)", ln)}
    hoisted, hoisted_names, loop = [], {col}, []
    for ln in body:
        names = set(_NAMES.findall(ln.split(" = ", 1)[1])) if " = " in ln else {"xmask"}
        if not ln.startswith("tl.store") and names <= hoisted_names and \
                not any(p in stored for p in re.findall(r"tl\.load\((\w+)", ln)):
            hoisted.append(ln)
            hoisted_names.add(ln.split(" = ", 1)[0])
        else:
            loop.append(ln)
    hoisted = [_masked(ln, "cmask") for ln in hoisted]
    loop = [_masked(ln, "xmask") for ln in loop]
    if any(ln is None for ln in hoisted + loop):
        return None, "a load or store whose mask is not where Inductor writes it"
    args = {a["name"]: a for a in entry.get("args", [])}
    ptrs = params[:-2]
    if any(p not in args or args[p].get("role") == "scalar" for p in ptrs):
        return None, "the call site's arguments are not the kernel's pointers"

    def reads(p, lns):
        return sum(len(re.findall(rf"tl\.load\({p}\b", ln)) for ln in lns)

    column_bytes = sum(math.prod(int(v) for v in args[p].get("shape", [])) *
                       _FLOAT_DTYPES.get(args[p].get("dtype"), 8)
                       for p in ptrs if reads(p, hoisted) and not reads(p, loop))
    return {"ptrs": ptrs, "rows": rows, "cols": cols, "col": col, "row": row, "flat": flat,
            "hoisted": hoisted, "loop": loop, "column_bytes": column_bytes}, ""


def _match_pointwise_rows(entry: dict, source: str = "") -> Match | None:
    """A pointwise kernel over rows with column operands of a MiB or more, read at every
    row (a layer norm's affine weights). A window alone (one input read at several
    offsets, a pooling's taps) is not offered: re-tiled, 41_Max_Pooling_1D's measured
    0.73x of Inductor's flat kernel on the H200 (docs/measurement.md, "pointwise-rows")."""
    c, _ = _pointwise_rows(entry, source)
    if c is None or c["column_bytes"] < _COLUMN_OPERAND_BYTES:
        return None
    return Match("pointwise-rows", f"{c['rows']} rows of {c['cols']}: "
                 f"{c['column_bytes'] / (1 << 20):.0f} MiB of column operands held across "
                 "rows", c)


_POINTWISE_ROWS = Template('''\
# kgate's pointwise-over-rows template: Inductor's own arithmetic, re-tiled. Its flat index
# is split into rows of COLS: a program holds BLOCK columns and walks RBLOCK rows, so what
# depends on the column alone (index bounds, column operands such as affine weights) is
# computed and read once per program instead of once per element and row, and no element
# divides its index.
BLOCK = $block
RBLOCK = $rblock
NUM_WARPS = $warps
$template_key = "pointwise-rows"

import torch
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math

ROWS = $rows
COLS = $cols


@triton.jit
def _kgate_pointwise_rows($ptrs, BLOCK: tl.constexpr, RBLOCK: tl.constexpr,
                          CBLOCKS: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    $col = (pid % CBLOCKS) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        cmask = tl.full([BLOCK], True, tl.int1)
    else:
        cmask = $col < $cols
$hoisted
    for i in range(RBLOCK):
        row = (pid // CBLOCKS) * RBLOCK + i
        $row = row + tl.zeros([BLOCK], tl.int32)
$flat
        if EVEN:
            xmask = cmask
        else:
            xmask = cmask & ($row < $rows)
$loop


class _Launcher:
    """The call site's `$name.run(...)`: the same arguments, in the same order."""

    def run(self, $ptrs, xnumel, *, stream=None):
        cblocks = triton.cdiv(COLS, BLOCK)
        even = COLS % BLOCK == 0 and ROWS % RBLOCK == 0
        _kgate_pointwise_rows[(cblocks * triton.cdiv(ROWS, RBLOCK),)](
            $ptrs, BLOCK=BLOCK, RBLOCK=RBLOCK, CBLOCKS=cblocks, EVEN=even,
            num_warps=NUM_WARPS)


$name = _Launcher()
''')


def _instantiate_pointwise_rows(entry: dict, m: Match, device: dict) -> tuple[str, str]:
    p = m.params
    block = max(128, min(1024, _next_pow2(p["cols"])))
    # Every row of a column block in one program (up to 16): the column operands read once.
    rblock = min(16, _next_pow2(p["rows"]))
    blocks = sorted({b for b in (256, 512, 1024, 2048, 4096)
                     if b <= max(256, _next_pow2(p["cols"]))} | {block})
    rblocks = sorted({r for r in (1, 2, 4, 8, 16, 32) if r <= _next_pow2(p["rows"])} |
                     {rblock})
    tune = (f"# kgate:tune BLOCK=[{','.join(map(str, blocks))}] "
            f"RBLOCK=[{','.join(map(str, rblocks))}] NUM_WARPS=[2,4,8,16]\n"
            "# kgate:tune-local")

    def indent(lines, n):
        return "\n".join(" " * n + ln.replace("XBLOCK", "BLOCK") for ln in lines)

    flat = f"        {p['flat']} = row * {p['cols']} + {p['col']}" if p["flat"] else ""
    body = _POINTWISE_ROWS.substitute(
        block=block, rblock=rblock, warps=4, template_key=TEMPLATE_KEY, rows=p["rows"],
        cols=p["cols"], ptrs=", ".join(p["ptrs"]), col=p["col"], row=p["row"], flat=flat,
        hoisted=indent(p["hoisted"], 4), loop=indent(p["loop"], 8), name=entry["name"])
    return tune, body


# ==== the registry ==========================================================================

@dataclass
class _Template:
    name: str
    match: Callable[[dict, str], Match | None]
    instantiate: Callable[[dict, Match, dict], tuple[str, str]]


TEMPLATES = [_Template("row-softmax", _match_row_softmax, _instantiate_row_softmax),
             _Template("row-norm", _match_row_norm, _instantiate_row_norm),
             _Template("softmax-stats", _match_softmax_stats, _instantiate_softmax_stats),
             _Template("pointwise-rows", _match_pointwise_rows, _instantiate_pointwise_rows)]


def offers(entry: dict, device: dict, header: Callable[[dict, str], str],
           source: str = "") -> list[dict]:
    """[{template, why, text}] for every template that matches the inventory entry
    (`source`: the Inductor kernel's own source, which some templates read).
    `header(entry, tune_text)` writes the kernel file's header (kgate:kernel, the tune
    lines, the call-site contract); `device` has num_sms and l2_bytes (0 when unknown)."""
    out = []
    for t in TEMPLATES:
        m = t.match(entry, source)
        if m is None:
            continue
        tune, body = t.instantiate(entry, m, device)
        text = (header(entry, tune) + f"# kgate:template {t.name}: {m.why}\n#\n" + body)
        out.append({"template": t.name, "why": m.why, "text": text})
    return out
