"""The worker's state and its ops: hello, load_problem, inventory, compile, check, time,
shutdown."""

from __future__ import annotations

import ast
import collections
import contextlib
import functools
import math
import os
import platform
import statistics
import sys
import time
from typing import Any

from . import RUNNER_NAME, __version__, audit, clocks, lint, seal, source
from .protocol import WorkerError, bad_request, param

MODEL_SEED = 42          # torch.manual_seed before constructing Model / ModelNew
SIGN_SALT = 0x5167_4E5F_D15C_0001  # keeps the sign-flip stream apart from get_inputs()
DEGENERATE_SEEDS = (1, 2)
TRUTH_CACHE_ENTRIES = 16
SCREEN_SAMPLES = 10  # per side: the kernel-level screen of an edited kernel (compile)
BASELINE_MODES = {"eager": None, "compile": "default",
                  "compile-max-autotune": "max-autotune-no-cudagraphs"}
DISTS = {"problem": "problem", "normal": "problem", "signed": "signed"}
SLOTS = ("candidate", "baseline")
PROBLEM_MODES = ("model", "compiled")
CALL_SEED = MODEL_SEED   # torch.manual_seed before every checked call of a model (reference,
                         # truth, candidate), as KernelBench does: a forward that draws random
                         # numbers draws the same ones in every slot
SPREAD_FACTOR = 4.0      # a slot's repeat-to-repeat spread may be this x the reference's own
REF_RHO = 10.0           # default rho: an ill-conditioned case's tolerance is widened by
                         # rho x the float32 reference's own worst error over tolerance
REF_ERROR_ENTRIES = 64
AUDIT_HEADROOM = 256 << 20  # device memory left free beside what the timing audit keeps
GIB = float(1 << 30)
HOST_LINK_BPS = 8e9      # bytes/s of a pageable copy between the device and the host (a low
                         # estimate for PCIe 4-5 x16): the cost of a truth kept on the host


class CannotJudge(Exception):
    """The worker cannot judge this case (it does not fit the machine, ...): answered as the
    case's `cannot_judge` reason, never as a failure of the slot."""


def oom_rejection(msg: str) -> str:
    """The error of a candidate that ran out of device memory on inputs the reference runs
    in the same worker (the worker's own holdings released first)."""
    return ("out of device memory on inputs the reference runs in the same worker (the "
            "candidate needs more GPU memory than the reference has room for beside it): " + msg)


HOARD_SLACK = (256 << 20, 1 << 30)  # device memory a slot may come to hold more of across
                         # an out-of-memory retry before it counts as keeping memory back:
                         # in torch tensors, and as the driver counts it (other processes on
                         # the device, and the libraries' handles and workspaces, move that)


def hoard_rejection(kept: int, msg: str) -> str:
    """The error of a candidate that ran out of device memory while it kept device memory
    of its own across the failed call (the reference cannot be asked to run beside it)."""
    return (f"out of device memory while the candidate keeps {_gib(kept)} of device memory "
            "across its calls (held after the failed call, with the worker's own holdings "
            "released): " + msg)


def _is_oom(e: BaseException) -> bool:
    if isinstance(e, MemoryError):
        return True
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if oom is not None and isinstance(e, oom):
        return True
    return isinstance(e, RuntimeError) and ("out of memory" in str(e).lower()
                                            or "not enough memory" in str(e).lower())


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def plan_truth(need: int, device_free: int, host_free: int, cuda: bool,
               random_ref: bool) -> tuple[str, str]:
    """Where the float64 truth of a case is computed: ("device" | "host" | "f32" |
    "cannot", why). `need` is the least the float64 run holds (float64 copies of the
    inputs and of the outputs); a run that still runs out of device memory is retried on
    the host. A reference drawing random numbers in forward cannot move to the host (the
    host's generator differs from the device's): it is judged against its float32 self on
    the device ("f32"), the oracle skipped."""
    if not cuda:
        if need <= host_free:
            return "device", ""
        return "cannot", (f"the float64 truth needs ~{_gib(need)} and the host has "
                          f"{_gib(host_free)} available")
    if need <= device_free:
        return "device", ""
    why = f"the float64 truth needs ~{_gib(need)} with {_gib(device_free)} free on the device"
    if random_ref:
        return "f32", (why + " and the reference draws random numbers in forward (the "
                       "host's generator differs from the device's): judged against the "
                       "float32 reference")
    if need <= host_free:
        return "host", why + "; computed on the host"
    return "cannot", why + f" and {_gib(host_free)} available on the host"

SLICE_HEADROOM = 4        # a slice's float64 run may hold this x its inputs and outputs
                          # (the model's intermediates), as the whole run's plan allows
SLICE_AGREEMENT = 1e-9    # the row-separability check: max |difference| / max |output|


def plan_slices(batch: int, fixed: int, per_row: int, out_bytes: int, device_free: int,
                host_free: int, cuda: bool) -> tuple[int, str] | None:
    """A float64 truth too big to compute in one run, computed in slices of the batch on
    the device: (rows per slice, where the assembled truth goes: "device" | "host"), or
    None when no slice fits. `fixed` is the float64 bytes of the inputs every slice takes
    whole, `per_row` those of one row of the sliced inputs and of the outputs. The truth
    is assembled on the device when it takes at most half of what is free there, else on
    the host (a GPU only); each slice's run may hold SLICE_HEADROOM x its inputs and
    outputs in what is left."""
    if batch < 2 or per_row <= 0:
        return None
    if out_bytes <= device_free // 2:
        dest, room = "device", device_free - out_bytes
    elif cuda and out_bytes <= host_free // 2:
        dest, room = "host", device_free
    else:
        return None
    rows = (room // SLICE_HEADROOM - fixed) // per_row
    if rows < 1:
        return None
    return min(int(rows), batch), dest


def batch_rows(inputs: list, output_meta: list) -> tuple[int, list] | str:
    """The batch a truth can be sliced along: (B, which inputs are sliced) when every output
    has a leading dimension B >= 2 and some tensor input leads with B (those inputs are
    sliced, the others passed whole), else why not. Whether the model is row-separable is
    not decided here: the worker checks it on the reference (row_agreement)."""
    if not output_meta or any(len(shape) == 0 for shape, _ in output_meta):
        return "an output has no batch dimension"
    lead = {int(shape[0]) for shape, _ in output_meta}
    if len(lead) != 1 or next(iter(lead)) < 2:
        return "the outputs do not share a leading dimension of 2 or more"
    b = next(iter(lead))
    t = _torch()
    sliced = [isinstance(x, t.Tensor) and x.dim() > 0 and int(x.shape[0]) == b
              for x in inputs]
    if not any(sliced):
        return f"no input leads with the outputs' {b} rows"
    return b, sliced


def row_agreement(part: list, whole: list, rows: int) -> float:
    """How far the first `rows` rows of the outputs of a run on more rows (`whole`) are from
    a run on those rows alone (`part`): max |difference| / max |output| over the floating
    outputs; inf when shapes, non-finite positions or integer values differ."""
    t = _torch()
    if len(part) != len(whole):
        return math.inf
    worst = 0.0
    for a, b in zip(part, whole):
        b = b[:rows]
        if a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        if not (a.is_floating_point() or a.is_complex()):
            if not t.equal(a, b):
                return math.inf
            continue
        fa, fb = t.isfinite(a), t.isfinite(b)
        if not t.equal(fa, fb) or not t.equal(a[~fa].nan_to_num(), b[~fb].nan_to_num()):
            return math.inf
        if not bool(fa.any()):
            continue
        da, db = a[fa], b[fb]
        scale = float(da.abs().max())
        diff = float((da - db).abs().max())
        if diff > 0:
            worst = max(worst, math.inf if scale == 0 else diff / scale)
    return worst


def place_truth(size: int, cache_budget: int, free_after: int, compute_s: float) -> str:
    """Where a float64 truth just computed on the device goes: "cache" (stays on the device,
    cached for the next check of the same inputs), "transient" (stays on the device for this
    check only and is computed again next time: a GPU-sized truth that does not fit the
    cache's budget, and whose computing costs less than its trip to the host and back) or
    "host" (cached on the host; the compare pulls it over chunk by chunk). `free_after` is
    what the device has free with the truth on it: the check's own runs need room beside it."""
    if size <= cache_budget and size <= free_after // 4:
        return "cache"
    if size <= free_after // 2 and compute_s < 2 * size / HOST_LINK_BPS:
        return "transient"
    return "host"


torch: Any = None  # imported lazily (after hello has set the cache directories)


def _torch():
    global torch
    if torch is None:
        import torch as _t
        torch = _t
    return torch


def _log(msg: str) -> None:
    sys.stderr.write(f"[kgate_worker] {msg}\n")
    sys.stderr.flush()


def _output_leaves(x, leaves: list) -> bool:
    """Appends x's tensors to `leaves` (see _as_outputs); False for anything else. A
    module-level function on purpose: a nested recursive closure is a reference cycle
    that kept every output it saw (GBs on a GPU) alive until the garbage collector ran."""
    if isinstance(x, torch.Tensor):
        leaves.append(x)
        return True
    if isinstance(x, (list, tuple)):
        return all(_output_leaves(y, leaves) for y in x)
    if isinstance(x, bool):
        leaves.append(torch.tensor(x))
        return True
    if isinstance(x, (int, float)):
        leaves.append(torch.tensor(x, dtype=torch.float64 if isinstance(x, float)
                                   else torch.int64))
        return True
    return False


def _as_outputs(out) -> list | None:
    """The output tensors in order: a tensor, or a (nested) tuple/list of tensors,
    flattened; a Python number (alone or in the tuple) becomes a 0-d tensor (float64 for
    a float). None for anything else."""
    if not isinstance(out, (torch.Tensor, list, tuple)):
        return None
    leaves: list = []
    return leaves if _output_leaves(out, leaves) and leaves else None


def _host_available() -> int:
    """MemAvailable of /proc/meminfo (bytes); 0 when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _bitwise(a, b) -> bool:
    from .stats import bitwise_equal
    return bitwise_equal(a, b)


def _clone_args(args: list) -> list:
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def _same_layout(a, b) -> bool:
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
            and a.dtype == b.dtype and a.device == b.device and a.stride() == b.stride())


def _check_args(p: "Problem", inputs: list) -> list:
    """The inputs of a check call, copied into the same buffers for every call of every
    case (of every slot): a slot that keys its results by its inputs' addresses gets the
    previous case's answer on the next seed and fails there, whatever addresses the
    allocator would have handed out."""
    bufs = p.check_args
    if (bufs is None or len(bufs) != len(inputs)
            or any(isinstance(x, torch.Tensor) and not _same_layout(b, x)
                   for b, x in zip(bufs, inputs))):
        p.check_args = bufs = _clone_args(inputs)
    else:
        for b, x in zip(bufs, inputs):
            if isinstance(x, torch.Tensor):
                b.copy_(x)
    return [b if isinstance(x, torch.Tensor) else x for b, x in zip(bufs, inputs)]


def _nbytes(tensors: list) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


@functools.lru_cache(maxsize=None)
def _peak_bytes_mode():
    """The class of a dispatch mode that follows the bytes a forward allocates beyond its
    inputs and weights (run on the meta device: no memory, no data): each op's fresh
    outputs (returns that alias nothing in the op's schema: no views, no in-place results)
    are live until their tensor is freed; `peak` is the most held at once, outputs
    included. A tensor the mode cannot follow to its end is counted as freed (an estimate
    that errs low, never a problem refused that fits). Built on first use: torch is
    imported by then."""
    import weakref

    import torch  # the enclosing scope's: the module's global may not be set yet
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class PeakBytes(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.live = 0
            self.peak = 0

        def _free(self, n: int) -> None:
            self.live -= n

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            returns = getattr(getattr(func, "_schema", None), "returns", ())
            for k, t in enumerate(tree_leaves(out)):
                if not isinstance(t, torch.Tensor):
                    continue
                if k < len(returns) and returns[k].alias_info is not None:
                    continue
                n = t.numel() * t.element_size()
                try:
                    weakref.finalize(t, self._free, n)
                except TypeError:
                    continue
                self.live += n
                self.peak = max(self.peak, self.live)
            return out

    return PeakBytes


def _f64_nbytes(x) -> int:
    """What a tensor takes in a float64 run (a floating one as float64; 0 for a non-tensor)."""
    if not isinstance(x, torch.Tensor):
        return 0
    return x.numel() * (8 if x.is_floating_point() else x.element_size())


def _f64_out_bytes(output_meta: list) -> int:
    """What the reference's outputs take in float64 (the truth)."""
    return 8 * sum(math.prod(shape) for shape, _ in output_meta)


def _short_repr(v: Any, limit: int = 200) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


OwnError = collections.namedtuple(
    "OwnError", "over_tol worst_abs_err exact rel_l2_err shape_ok dtype compiled_rel_l2_err",
    defaults=(-1.0,))
"""The float32 reference's own error on one output of a case (Worker._own_error); in
compiled mode also torch.compile's model's own rel_l2_err (-1: not measured)."""


class _Phases:
    """Marks the steps of a load: each call records the seconds since the last one (or since
    it was made) under its name, adding to what the name already holds."""

    def __init__(self, into: dict):
        self.into, self.t = into, time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = self.into.get(name, 0.0) + now - self.t
        self.t = now


class Problem:
    def __init__(self, path: str, module, tree: ast.Module, variant_applied: bool):
        self.path = path
        self.module = module
        self.tree = tree
        self.variant_applied = variant_applied
        self.ref_op = lint.reference_op(tree)
        self.reference_op_rule = True  # False: the A/A mode (the candidate is the reference)
        self.init_inputs: list = []
        self.master: dict = {}
        self.ref_model = None
        self.truth_model = None
        self.truth_cache: collections.OrderedDict = collections.OrderedDict()
        self.truth_model_host = None  # the float64 truth on the host (GPU-sized problems)
        self.ref_slot = None          # the reference in a case's dtype (spread, own error)
        self.ref_error: collections.OrderedDict = collections.OrderedDict()
        self.output_meta: list = []   # [(shape, dtype)] of the reference's outputs
        self.oracle_skip = ""         # why the float64 truth is not usable ("" = it is)
        self.truth_note = ""          # where the truth went when not on the device
        self.truth_placed: set = set()  # placements said in the log (place_truth)
        self.truth_rows: str = ""     # the float64 truth in slices of the batch: "" not yet
                                      # asked, "yes" (row-separable), else why not
        self.truth_sliced = False     # the last truth was computed in slices (truth_note: how)
        self.ref_random = False       # forward draws random numbers (output follows the RNG)
        self.forward_peak = 0         # bytes of the forward's intermediates at their peak
                                      # beyond its outputs, sized on the meta device (0: not)
        self.ref_spread = 0.0         # relative spread of two runs on identical inputs
        self.ref_nondeterministic = ""
        self.mode = "model"           # "compiled": dispatch-aware mode (inductor.py)
        self.inventory_only = False   # loaded for `inventory` alone (kgate profile): not probed
        self.defer_truth = False      # loaded to be timed: no float64 truth until a check
        self.kernels_dir = ""
        self.compile_mode = "default"
        self.compiled_ref = None      # inductor.CompiledReference, built on first use
        self.check_args: list | None = None  # the check calls' input buffers (_check_args)
        self.audit_tol: dict = {}     # dtype -> (atol, rtol, extra_atol): the widest the
                                      # checks used, for the timing audit (audit.py)
        self.init_on_host = ""        # why models are constructed on the host (new_model)
        self.load_phases: dict[str, float] = {}  # seconds per step of load_problem (phases_s)

    def new_model(self, cls, device):
        """cls(*init) constructed under MODEL_SEED, in eval mode, on `device`. On a GPU the
        constructor runs under that device (its parameters drawn there: the weight init of
        a GB-sized model takes tens of seconds on the host and milliseconds on the device),
        unless a constructor of this problem has failed there and worked on the host: from
        then on every model of the problem, the reference and the candidates alike, is
        built on the host and moved, so all of them draw their weights from one generator.
        A constructor that fails on the host too raises its own error and changes nothing
        (a broken candidate does not move the problem)."""
        on_device_failed = ""
        if device.type == "cuda" and not self.init_on_host:
            torch.manual_seed(MODEL_SEED)
            try:
                with torch.device(device):
                    m = cls(*self.init_inputs)
                return m.to(device).eval()
            except (Exception, SystemExit) as e:
                on_device_failed = source.exception_message(e).splitlines()[0][:200]
        torch.manual_seed(MODEL_SEED)
        m = cls(*self.init_inputs)
        if on_device_failed:
            self.init_on_host = (f"{cls.__name__}(...) failed when constructed on the "
                                 f"device ({on_device_failed}): built on the host")
            _log(f"{self.path}: {self.init_on_host}")
        return m.to(device).eval()


class Slot:
    """A compiled candidate or baseline: one model, switched between dtypes from a master
    copy of its weights (so f16 then f32 does not round the f32 weights)."""

    def __init__(self, kind: str, model, source_path: str, build_compiled=None, master=None):
        self.kind = kind
        self.model = model
        self.source_path = source_path
        self.dtype = None  # the first model_for sets the weights from the master copy
        self.master = master if master is not None else {
            k: v.detach().clone() for k, v in model.state_dict().items()}
        self.build_compiled = build_compiled  # baseline torch.compile: dtype -> module
        self.compiled: dict = {}

    def model_for(self, dt):
        if self.build_compiled is not None:
            if dt not in self.compiled:
                self.compiled[dt] = self.build_compiled(dt)
            return self.compiled[dt]
        if self.dtype != dt:
            self.model.to(dt)
            sd = self.model.state_dict()
            with torch.no_grad():
                for k, v in self.master.items():
                    if k in sd and sd[k].is_floating_point() and v.is_floating_point():
                        sd[k].copy_(v)
            self.dtype = dt
        return self.model


class CompiledSlot(Slot):
    """A compiled-mode slot: the compiled reference with some kernels swapped in. It runs
    in the problem's own dtype only (the kernels were generated for it)."""

    def __init__(self, kind: str, model, source_path: str, dtype):
        self.kind = kind
        self.model = model
        self.source_path = source_path
        self.dtype = dtype
        self.master = {}
        self.build_compiled = None
        self.compiled = {}

    def model_for(self, dt):
        if dt != self.dtype:
            from .stats import dtype_name
            raise ValueError(f"compiled mode runs the problem's own dtype "
                             f"({dtype_name(self.dtype)}), not {dtype_name(dt)}")
        return self.model


class Worker:
    def __init__(self) -> None:
        self.backend = "host"
        self.device = None
        self.device_info: dict | None = None
        self.problem: Problem | None = None
        self.slots: dict[str, Slot] = {}
        self.modules: list = []
        self.fatal = ""  # non-empty: exit (status 3) after the current answer
        self.memory_cap = 0          # bytes of device memory this worker may take (0: none)
        self.memory_fraction = 0.0   # the same as torch's per-process fraction of the device
        self._fraction_get = self._fraction_set = None  # torch's own, taken at hello

    def handlers(self) -> dict:
        ops = {"hello": self.hello, "load_problem": self.load_problem,
               "inventory": self.inventory, "compile": self._judging(self.compile),
               "check": self._judging(self.check), "time": self._judging(self.time),
               "shutdown": self.shutdown}
        return {name: self._releasing(fn) for name, fn in ops.items()}

    def _judging(self, fn):
        """An op that compiles, checks or times against the reference: refused for a problem
        loaded for its inventory alone (problem.inventory_only), whose reference was not
        probed and whose truth was not placed."""
        def run(params: dict) -> dict:
            if self.problem is not None and self.problem.inventory_only:
                raise bad_request("the problem was loaded for its inventory only "
                                  "(problem.inventory_only): load it again without that to "
                                  "compile, check or time")
            return fn(params)
        return run

    def _releasing(self, fn):
        """The op, then the CUDA caching allocator's free blocks handed back to the driver:
        an idle worker holds only what it keeps (weights, the truth cache), so the other
        workers on the GPU (the fresh one of a final re-measure, the next problem's)
        can allocate a GPU-sized problem's tensors."""
        def run(params: dict) -> dict:
            try:
                return fn(params)
            except (Exception, SystemExit):
                # Answered as `internal` by the request loop; if the device went down with
                # it, the worker must not serve another request.
                if not self.fatal:
                    self._after_candidate_error()
                raise
            finally:
                if self.cuda and not self.fatal:
                    with contextlib.suppress(Exception):
                        torch.cuda.empty_cache()
        return run

    # ---- helpers ---------------------------------------------------------------------
    def _ensure_device(self):
        _torch()
        if self.device is None:
            self.device = torch.device("cpu")
        return self.device

    @property
    def cuda(self) -> bool:
        return self.device is not None and self.device.type == "cuda"

    def sync(self) -> None:
        if self.cuda:
            clocks.original("torch.cuda.synchronize")(self.device)

    def _after_candidate_error(self) -> None:
        """After a candidate (or an op) raised: on CUDA, a failing synchronize means a
        sticky device error (illegal address, ...) that would poison every later request;
        the worker answers the current request and then exits so a fresh one is started."""
        if not self.cuda:
            return
        try:
            torch.cuda.synchronize(self.device)
        except Exception as e:  # noqa: BLE001
            self.fatal = f"CUDA context unusable after the candidate's error: {e}"
            _log(self.fatal + "; exiting after this answer")

    def _need_problem(self) -> Problem:
        if self.problem is None:
            raise WorkerError("no_problem", "no problem loaded (send load_problem first)")
        return self.problem

    def _need_slot(self, slot: str) -> Slot:
        if slot not in self.slots:
            raise WorkerError("no_candidate", f"slot '{slot}' holds nothing compiled "
                                              "(send a successful compile first)")
        return self.slots[slot]

    @staticmethod
    def _dtype(name: str, where: str):
        from .stats import DTYPES
        if name not in DTYPES:
            raise bad_request(f"{where}: unknown dtype '{name}' (expected one of "
                              f"{', '.join(DTYPES)})")
        return DTYPES[name]

    def draw_inputs(self, seed: int, dist: str, dt=None) -> list:
        """get_inputs() under torch.manual_seed(seed), on the device; dist 'signed' flips
        the sign of each floating element at random; floating inputs cast to dt."""
        p = self._need_problem()
        torch.manual_seed(seed)  # seeds the CPU and every CUDA generator
        # On a GPU, get_inputs() draws there: a problem sized for the device (GBs) would
        # take seconds per draw on the host.
        with torch.device(self.device) if self.cuda else contextlib.nullcontext():
            raw = p.module.get_inputs()
        if isinstance(raw, torch.Tensor) or not isinstance(raw, (list, tuple)):
            raw = [raw]
        gen = None
        out = []
        for x in raw:
            if isinstance(x, torch.Tensor):
                x = x.to(self.device)
                if dist == "signed" and x.is_floating_point():
                    if gen is None:
                        gen = torch.Generator(device=self.device)
                        gen.manual_seed((seed ^ SIGN_SALT) & 0xFFFF_FFFF_FFFF_FFFF)
                    flip = torch.randint(0, 2, x.shape, generator=gen, device=self.device,
                                         dtype=torch.uint8).bool()
                    x = torch.where(flip, -x, x)
                if dt is not None and x.is_floating_point():
                    x = x.to(dt)
            out.append(x)
        return out

    def truth(self, seed: int, dist: str, dt, inputs: list) -> list:
        """The truth for these inputs (cached; slot-independent): the reference in float64
        on float64 copies of the inputs, or, when the reference cannot run in float64
        (p.oracle_skip says why), the float32 reference on float32 copies. Raises
        CannotJudge when neither fits the machine."""
        p = self._need_problem()
        key = (seed, dist, str(dt))
        if key in p.truth_cache:
            p.truth_cache.move_to_end(key)
            return p.truth_cache[key]
        self._make_room(p)
        t0 = time.perf_counter()
        outs = None if p.oracle_skip else self._truth_f64(p, inputs)
        if outs is None:
            try:
                outs = self._reference_run(p, self._ref_model(p, torch.float32), inputs,
                                           torch.float32)
            except (Exception, SystemExit) as e:
                if self.cuda and _is_oom(e):
                    raise CannotJudge("out of device memory running the float32 reference: "
                                      + source.exception_message(e).splitlines()[0]) from None
                raise WorkerError("internal", "the reference failed in float32: " +
                                  source.describe_exception(e, p.path)) from None
            if outs is None:
                raise WorkerError("internal", "the reference Model returned no tensor(s)")
        where = self._place_truth(outs, time.perf_counter() - t0)
        if where == "transient":
            return outs
        if where == "host":
            outs = [t.cpu() for t in outs]
        p.truth_cache[key] = outs
        self._trim_truth_cache(p)
        return outs

    def _truth_need(self, p: Problem, inputs: list) -> int:
        """The least a float64 run holds: float64 copies of the inputs and the outputs; on
        the CPU also the forward's intermediates in float64 (twice the float32 peak the
        load sized): there the OOM killer, not an exception kgate could catch, ends a run
        past the host's memory (a GPU's out-of-memory is caught, and the truth sliced)."""
        need = sum(_f64_nbytes(x) for x in inputs) + _f64_out_bytes(p.output_meta)
        return need if self.cuda else need + 2 * p.forward_peak

    def _device_free(self) -> int:
        """Bytes the device can still give: the driver's free memory plus the allocator's
        cached free blocks (the host's available memory on the CPU)."""
        if not self.cuda:
            return self._host_free()
        free, _ = torch.cuda.mem_get_info(self.device)
        allocated = torch.cuda.memory_allocated(self.device)
        avail = int(free + torch.cuda.memory_reserved(self.device) - allocated)
        if self.memory_cap:  # the sandbox's cap on this worker
            avail = max(0, min(avail, self.memory_cap - int(allocated)))
        return avail

    def _host_free(self) -> int:
        """The host's available memory (unbounded when /proc/meminfo does not say)."""
        return _host_available() or (1 << 62)

    def _truth_f64(self, p: Problem, inputs: list) -> list | None:
        """The float64 truth: on the device in one run, or in slices of the batch when one
        run does not fit there (`_sliced_f64`), or on the host; None (p.oracle_skip set)
        when the reference does not run in float64."""
        where, why = plan_truth(self._truth_need(p, inputs), self._device_free(),
                                self._host_free(), self.cuda, p.ref_random)
        if where == "f32":
            self._skip_oracle(p, why)
            return None
        p.truth_sliced = False
        outs = self._sliced_f64(p, inputs, why) if where in ("host", "cannot") else None
        if outs is None and where == "cannot":
            raise CannotJudge(why)
        try:
            if outs is None:
                outs = self._run_f64(p, inputs, host=where == "host")
        except (Exception, SystemExit) as e:
            if not (self.cuda and where == "device" and _is_oom(e)):
                if _is_oom(e):
                    raise CannotJudge("out of memory computing the float64 truth: " +
                                      source.exception_message(e).splitlines()[0]) from None
                self._skip_oracle(p, "the reference does not run in float64: " +
                                  source.describe_exception(e, p.path))
                return None
            msg = source.exception_message(e).splitlines()[0][:200]
            del e
            self._release_device(p)
            if p.ref_random:
                self._skip_oracle(p, f"the float64 truth ran out of device memory ({msg}) "
                                  "and the reference draws random numbers in forward: "
                                  "judged against the float32 reference")
                return None
            why = f"the float64 truth ran out of device memory ({msg})"
            outs = self._sliced_f64(p, inputs, why)
            if outs is None and self._truth_need(p, inputs) > self._host_free():
                raise CannotJudge(f"{why} and needs ~{_gib(self._truth_need(p, inputs))} on "
                                  f"the host, {_gib(self._host_free())} available") from None
            if outs is None:
                why += "; computed on the host"
                try:
                    outs = self._run_f64(p, inputs, host=True)
                except (Exception, SystemExit) as e2:
                    if _is_oom(e2):
                        raise CannotJudge("out of memory computing the float64 truth on the "
                                          "host too") from None
                    raise
        if not p.truth_sliced and (where == "host" or outs and outs[0].device.type == "cpu"
                                   and self.cuda):
            p.truth_note = why
        if outs is None:
            raise WorkerError("internal", "the reference Model returned no tensor(s) in "
                                          "float64")
        lower = [f"output{i} is {t.dtype}".replace("torch.", "") for i, t in enumerate(outs)
                 if (t.is_floating_point() or t.is_complex()) and t.dtype not in (
                     torch.float64, torch.complex128)]
        if lower:
            self._skip_oracle(p, "the reference does not follow .double() (" +
                              ", ".join(lower) + " in its float64 run: a tensor created in "
                              "forward without a dtype, or a plain tensor attribute)")
            return None
        return outs

    def _truth_model(self, p: Problem, host: bool):
        """The reference in float64 (kept): on the device, or on the host for a truth
        computed there."""
        attr = "truth_model_host" if host and self.cuda else "truth_model"
        m = getattr(p, attr)
        if m is None:
            m = p.new_model(p.module.Model, torch.device("cpu") if host else self.device)
            m.load_state_dict(p.master)
            m = m.to(torch.float64)
            setattr(p, attr, m)
        return m

    def _f64_call(self, model, inputs: list, device, rows: tuple | None = None,
                  sliced: list | None = None) -> list | None:
        """One seeded float64 call of `model` on copies of the inputs on `device`; with
        `rows` (start, count), the inputs marked in `sliced` cut to those rows."""
        args = []
        for i, x in enumerate(inputs):
            if isinstance(x, torch.Tensor):
                if rows is not None and sliced[i]:
                    x = x[rows[0]:rows[0] + rows[1]]
                x = x.to(device=device, dtype=torch.float64 if x.is_floating_point()
                         else x.dtype, copy=True)
            args.append(x)
        torch.manual_seed(CALL_SEED)
        outs = _as_outputs(model(*args))
        del args
        self.sync()
        return None if outs is None else [t.detach() for t in outs]

    def _run_f64(self, p: Problem, inputs: list, host: bool) -> list | None:
        return self._f64_call(self._truth_model(p, host), inputs,
                              torch.device("cpu") if host else self.device)

    def _sliced_f64(self, p: Problem, inputs: list, why: str) -> list | None:
        """The float64 truth computed on the device in slices of the batch, for a truth too
        big for one run there (`why`): assembled on the device, or on the host when it does
        not fit beside the check's runs (`plan_slices`). Only for a reference that is
        row-separable, checked once per problem on the reference itself: its first rows
        alone against the same rows in a run of twice as many (SLICE_AGREEMENT); a batch
        statistic, a reduction over the batch or a forward that needs the whole batch fails
        that and the truth is computed whole, on the host. None when slices do not apply
        (the reason is logged once); when they did, p.truth_sliced is set and p.truth_note
        says how."""
        if p.ref_random or p.truth_rows not in ("", "yes"):
            return None
        split = batch_rows(inputs, p.output_meta)
        if isinstance(split, str):
            self._no_slices(p, split)
            return None
        b, sliced = split
        out_bytes = _f64_out_bytes(p.output_meta)  # every output leads with the b rows
        fixed = sum(_f64_nbytes(x) for x, cut in zip(inputs, sliced) if not cut)
        per_row = sum(_f64_nbytes(x) // b for x, cut in zip(inputs, sliced) if cut) + out_bytes // b
        plan = plan_slices(b, fixed, per_row, out_bytes, self._device_free(),
                           self._host_free(), self.cuda)
        if plan is None:
            return None
        rows, dest = plan
        dest_dev = torch.device("cpu") if dest == "host" else self.device
        outs: list | None = None
        try:
            model = self._truth_model(p, host=False)
            if not p.truth_rows:
                h = max(1, min(rows, b) // 2)
                try:
                    part = self._f64_call(model, inputs, self.device, (0, h), sliced)
                    whole = self._f64_call(model, inputs, self.device, (0, 2 * h), sliced)
                except (Exception, SystemExit) as e:
                    if _is_oom(e):
                        raise
                    self._no_slices(p, f"the reference fails on {h} rows of its {b}: " +
                                    source.exception_message(e).splitlines()[0][:200])
                    return None
                gap = (math.inf if part is None or whole is None
                       else row_agreement(part, whole, h))
                del part, whole
                if gap > SLICE_AGREEMENT:
                    self._no_slices(p, f"rows 0-{h - 1} alone " + (
                        f"differ from the same rows of a {2 * h}-row run by {gap:.3g} (max "
                        "|difference| / max |output|)" if gap < math.inf else
                        f"give other shapes, dtypes, integer values or non-finite positions "
                        f"than the same rows of a {2 * h}-row run") +
                        ": the reference is not row-separable")
                    return None
                p.truth_rows = "yes"
            start = slices = 0
            while start < b:
                n = min(rows, b - start)
                try:
                    part = self._f64_call(model, inputs, self.device, (start, n), sliced)
                except (Exception, SystemExit) as e:
                    if not _is_oom(e) or n == 1:
                        raise
                    del e
                    rows = max(1, rows // 2)
                    continue
                if part is None or len(part) != len(p.output_meta) or any(
                        tuple(t.shape) != (n,) + tuple(shape[1:])
                        for t, (shape, _) in zip(part, p.output_meta)):
                    self._no_slices(p, f"its outputs on rows {start}-{start + n - 1} do not "
                                    "have the outputs' shapes cut to those rows")
                    return None
                if outs is None:
                    outs = [torch.empty((b,) + tuple(t.shape[1:]), dtype=t.dtype,
                                        device=dest_dev) for t in part]
                for o, t in zip(outs, part):
                    o[start:start + n].copy_(t)
                del part
                start += n
                slices += 1
        except (Exception, SystemExit) as e:
            outs = None
            if not _is_oom(e):
                self._no_slices(p, "a slice failed: " +
                                source.exception_message(e).splitlines()[0][:200])
            return None
        p.truth_sliced = True
        p.truth_note = (f"{why}: computed {'on the device ' if self.cuda else ''}in {slices} "
                        f"slices of at most {rows} of its {b} rows (the reference is "
                        "row-separable)" + ("; kept on the host" if dest == "host" else ""))
        return outs

    def _no_slices(self, p: Problem, why: str) -> None:
        """This problem's float64 truth is not computed in slices of the batch (why, said
        once)."""
        if not p.truth_rows:
            _log(f"{p.path}: the float64 truth is not computed in slices of the batch: {why}")
            p.truth_rows = why

    def _skip_oracle(self, p: Problem, why: str) -> None:
        """From now on this problem's truth is the float32 reference (entries of the float64
        truth already cached are dropped: one basis per problem)."""
        if not p.oracle_skip:
            _log(f"{p.path}: oracle skipped: {why}")
            p.oracle_skip = why
            p.truth_cache.clear()
            p.truth_model = p.truth_model_host = None

    def _ref_model(self, p: Problem, dt):
        """The reference in dtype dt: the loaded reference model, its weights set from the
        problem's master copy (no second model or copy of the weights); once released
        (_release_device), a fresh Model."""
        if p.ref_slot is None:
            m, p.ref_model = p.ref_model, None
            if m is None:
                m = p.new_model(p.module.Model, self.device)
            p.ref_slot = Slot("reference", m, p.path, master=p.master)
        return p.ref_slot.model_for(dt)

    def _reference_oom(self, p: Problem, dt, inputs: list) -> str:
        """After a slot ran out of device memory on these inputs: "" when the reference
        runs them on the device as the worker stands, else the reference's own message."""
        try:
            outs = self._reference_run(p, self._ref_model(p, dt), inputs, dt)
            del outs
            return ""
        except (Exception, SystemExit) as e:
            msg = source.exception_message(e).splitlines()[0][:300]
            return msg if _is_oom(e) else "the reference failed: " + msg

    def _reference_run(self, p: Problem, model, inputs: list, dt=None) -> list | None:
        """One seeded call of `model` on clones of the inputs (floating ones cast to dt)."""
        args = [x.to(dt) if dt is not None and isinstance(x, torch.Tensor)
                and x.is_floating_point() else x for x in _clone_args(inputs)]
        torch.manual_seed(CALL_SEED)
        outs = _as_outputs(model(*args))
        del args
        self.sync()
        return None if outs is None else [t.detach() for t in outs]

    def _place_truth(self, outs: list, compute_s: float) -> str:
        """Where a truth just computed goes (`place_truth`): a truth already on the host,
        or any truth on the CPU, is cached where it is."""
        if not self.cuda or not outs or outs[0].device.type == "cpu":
            return "cache"
        size = _nbytes(outs)
        where = place_truth(size, self._truth_cache_bytes(), self._device_free(), compute_s)
        p = self._need_problem()
        if where != "cache" and where not in p.truth_placed:
            p.truth_placed.add(where)
            _log(f"{p.path}: a float64 truth of {_gib(size)} ({compute_s:.2f} s to compute) "
                 + ("stays on the device for its check only (computed again next time)"
                    if where == "transient" else "is kept on the host"))
        return where

    def _trim_truth_cache(self, p: Problem) -> None:
        """At most TRUTH_CACHE_ENTRIES, within the device budget (entries on the device)
        and the host budget (entries on the host); the newest entry always stays."""
        def over() -> bool:
            dev = host = 0
            for v in p.truth_cache.values():
                if v and v[0].device.type == "cpu" and self.cuda:
                    host += _nbytes(v)
                else:
                    dev += _nbytes(v)
            return dev > self._truth_cache_bytes() or host > self._host_cache_bytes()
        while len(p.truth_cache) > 1 and (len(p.truth_cache) > TRUTH_CACHE_ENTRIES or over()):
            p.truth_cache.popitem(last=False)

    def _make_room(self, p: Problem) -> None:
        """Before a new truth is computed: the device-resident entries that would push the
        cache past its device budget once the new one (the size of the outputs in float64)
        joins them are dropped first, so they do not sit beside the float64 run."""
        if not self.cuda or not p.truth_cache:
            return
        new = _f64_out_bytes(p.output_meta)
        def on_device() -> int:
            return sum(_nbytes(v) for v in p.truth_cache.values()
                       if v and v[0].device.type != "cpu")
        while p.truth_cache and on_device() and on_device() + new > self._truth_cache_bytes():
            p.truth_cache.popitem(last=False)

    def _release_device(self, p: Problem) -> None:
        """Everything this worker holds on the device and can do without: the truth cache
        moves to the host (within its budget), the float64 and reference models go, the
        allocator's free blocks back to the driver."""
        if not self.cuda:
            return
        for k in list(p.truth_cache):
            p.truth_cache[k] = [t.cpu() for t in p.truth_cache[k]]
        self._trim_truth_cache(p)
        p.check_args = None
        p.truth_model = None
        p.ref_slot = None
        import gc
        gc.collect()
        torch.cuda.empty_cache()

    def _device_held(self, collect: bool = True) -> tuple[int, int]:
        """What the process holds on the device: bytes in live torch tensors, and bytes the
        driver counts as used on the device (allocations made outside torch's allocator
        too; other processes' as well) less the allocator's cached free blocks, so nothing
        is handed back to measure it. With `collect`, after what only the garbage
        collector would free."""
        if collect:
            import gc
            gc.collect()
        free, total = torch.cuda.mem_get_info(self.device)
        allocated = int(torch.cuda.memory_allocated(self.device))
        cached = int(torch.cuda.memory_reserved(self.device)) - allocated
        return allocated, int(total - free) - cached

    def _truth_cache_bytes(self) -> int:
        """Memory the float64 truths may hold: an eighth of the device's (a GPU-sized
        problem's truth can be GBs), 2 GiB of host memory on the CPU."""
        if self.cuda:
            return int(self.memory_cap or (self.device_info or {}).get("memory_bytes")
                       or (16 << 30)) // 8
        return 2 << 30

    def _host_cache_bytes(self) -> int:
        """Host memory for truths kept off the device: an eighth of RAM within 1-16 GiB."""
        total = int((self.device_info or {}).get("host_memory_bytes") or 0) or (
            _host_available() * 2)
        return max(1 << 30, min(16 << 30, total // 8))

    def poison(self, nbytes: int) -> None:
        """Leaves freed allocator memory holding all-ones bits (NaN for every float dtype)
        so an output the candidate never writes shows up as 'unwritten'. The large block is
        bounded by half of what the device has free (a GPU-sized output cannot have twice
        its size poisoned next to its inputs and truth)."""
        if self.cuda:
            big = max(2 * nbytes, 64 << 20)
            big = max(min(big, self._device_free() // 2), 1 << 20)
            try:
                t = torch.empty(big, dtype=torch.uint8, device=self.device).fill_(255)
                small = [torch.empty(512 << 10, dtype=torch.uint8,
                                     device=self.device).fill_(255) for _ in range(4)]
                del t, small
            except Exception as e:  # noqa: BLE001 - best effort, as on the CPU
                if not _is_oom(e):
                    raise
        elif 0 < nbytes <= (64 << 20):
            t = torch.empty(nbytes, dtype=torch.uint8).fill_(255)
            del t

    # ---- hello ---------------------------------------------------------------------
    def hello(self, params: dict) -> dict:
        backend = param(params, "backend", "str", "host")
        if backend not in ("host", "cpu", "cuda"):
            raise bad_request(f"unknown backend '{backend}' (expected cpu, host or cuda)")
        index = param(params, "device_index", "uint", 0)
        cache_dir = param(params, "cache_dir", "str", "")
        if cache_dir:
            cache_dir = os.path.abspath(cache_dir)
            for sub, var in (("inductor", "TORCHINDUCTOR_CACHE_DIR"),
                             ("triton", "TRITON_CACHE_DIR")):
                os.makedirs(os.path.join(cache_dir, sub), exist_ok=True)
                os.environ[var] = os.path.join(cache_dir, sub)
        _torch()
        if backend == "cuda":
            if not torch.cuda.is_available():
                raise WorkerError("unsupported", "backend 'cuda' requested but "
                                                 "torch.cuda.is_available() is false")
            if index >= torch.cuda.device_count():
                raise WorkerError("unsupported", f"no CUDA device {index} (this process "
                                  f"sees {torch.cuda.device_count()})")
            torch.cuda.set_device(index)
            device = torch.device("cuda", index)
            from .device import cuda_info
            info = cuda_info(torch, index)
            self._cap_memory(index, int(info["memory_bytes"]))
            info["memory_cap_bytes"] = self.memory_cap
        else:
            device = torch.device("cpu")
            from .device import cpu_info
            info = cpu_info()
        if self.device is not None and device != self.device:
            self._reset()
        self.device, self.backend = device, backend
        clocks.watch(torch, triton=backend == "cuda")  # before any candidate is imported
        from .device import copy_bandwidth_gbps
        info["copy_bandwidth_gbps"] = copy_bandwidth_gbps(torch, device, self.memory_cap)
        self.device_info = info
        return {"runner": RUNNER_NAME, "version": __version__, "protocol": 1,
                "backend": backend, "device": info,
                "torch": torch.__version__.split("+")[0], "triton": _triton_version(),
                "cuda": str(getattr(torch.version, "cuda", "") or ""),
                "python": platform.python_version()}

    def _cap_memory(self, index: int, total: int) -> None:
        """The sandbox's device memory cap (KGATE_WORKER_GPU_MEMORY_MB, set by kgate from
        KGATE_SANDBOX_GPU_MEMORY_MB): torch's caching allocator is capped at that fraction
        of the device before any candidate is imported, and torch's own getter and setter
        are kept to check after every call that it still is (`_memory_cap_changed`)."""
        raw = os.environ.get("KGATE_WORKER_GPU_MEMORY_MB", "").strip()
        if not raw or raw == "0":
            return
        if not raw.isdigit():
            raise WorkerError("unsupported", f"KGATE_WORKER_GPU_MEMORY_MB={raw}: expected a "
                                             "number of MiB")
        self._fraction_get = getattr(torch._C, "_cuda_getMemoryFraction", None)
        self._fraction_set = getattr(torch._C, "_cuda_setMemoryFraction", None)
        if self._fraction_set is None:
            raise WorkerError("unsupported", "this torch cannot cap the device memory of a "
                                             "process (no torch._C._cuda_setMemoryFraction)")
        self.memory_cap = min(int(raw) << 20, total)
        self.memory_fraction = self.memory_cap / total
        torch.cuda.set_per_process_memory_fraction(self.memory_fraction, index)
        _log(f"device memory capped at {_gib(self.memory_cap)} of {_gib(total)}")

    def _memory_cap_changed(self) -> str:
        """"" while the device memory cap is what hello set (or there is none); else the
        cap is put back and the change is described (rule memory-cap)."""
        if not self.memory_fraction:
            return ""
        index = self.device.index or 0
        why = ""
        if self._fraction_get is None:  # a torch without the getter: what the allocator holds
            reserved = int(torch.cuda.memory_reserved(self.device))
            if reserved <= self.memory_cap:
                return ""
            now = reserved / (self.memory_cap / self.memory_fraction)
            why = f" (the allocator holds {_gib(reserved)}, over the cap)"
        else:
            try:
                now = float(self._fraction_get(index))
            except Exception as e:  # noqa: BLE001
                now, why = -1.0, f" (its getter failed: {e})"
            if abs(now - self.memory_fraction) <= 1e-9:
                return ""
        self._fraction_set(self.memory_fraction, index)
        return (f"memory cap: the worker's device memory cap was changed from "
                f"{self.memory_fraction:.4g} to {now:.4g} of the device{why} "
                "(KGATE_SANDBOX_GPU_MEMORY_MB); the cap is put back")

    def _reset(self) -> None:
        self.slots.clear()
        if self.problem is not None:
            source.forget_module(self.problem.module)
        for m in self.modules:
            source.forget_module(m)
        self.modules.clear()
        self.problem = None

    # ---- load_problem ---------------------------------------------------------------
    def load_problem(self, params: dict) -> dict:
        spec = param(params, "problem", "dict")
        kind = param(spec, "kind", "str", "native", where="problem.")
        if kind == "native":
            op = spec.get("op")
            suffix = f" (op '{op}')" if isinstance(op, str) and op else ""
            raise WorkerError("unsupported", "kgate_worker runs kernelbench problems; "
                                             f"native problems run in kgate-native{suffix}")
        if kind != "kernelbench":
            raise bad_request(f"unknown problem kind '{kind}' (expected kernelbench)")
        path = param(spec, "path", "str", where="problem.")
        variant = param(spec, "variant", "str", "", where="problem.")
        if variant not in ("", "small"):
            raise bad_request(f"unknown variant '{variant}' (expected \"\" or \"small\")")
        if not path:
            raise bad_request("missing parameter 'problem.path'")
        path = os.path.abspath(path)
        if not os.path.isfile(path):
            raise bad_request(f"{path}: no such problem file")
        mode = param(spec, "mode", "str", "model", where="problem.")
        if mode not in PROBLEM_MODES:
            raise bad_request(f"unknown problem.mode '{mode}' (expected model or compiled)")
        kernels_dir = param(spec, "kernels_dir", "str", "", where="problem.")
        from .inductor import COMPILE_MODES
        compile_mode = param(spec, "compile_mode", "str", "default", where="problem.")
        if compile_mode not in COMPILE_MODES:
            raise bad_request(f"unknown problem.compile_mode '{compile_mode}' (expected "
                              f"{' or '.join(COMPILE_MODES)})")
        ref_rule = param(spec, "reference_op_rule", "bool", True, where="problem.")
        inventory_only = param(spec, "inventory_only", "bool", False, where="problem.")
        defer_truth = param(spec, "defer_truth", "bool", False, where="problem.")
        if inventory_only and mode != "compiled":
            raise bad_request("problem.inventory_only needs problem.mode 'compiled' (an inventory "
                              "is of torch.compile's model)")
        self._ensure_device()
        self._reset()

        try:
            text = source.read_source(path)
            tree = source.parse_source(text, path)
        except source.SourceError as e:
            raise bad_request(str(e)) from None
        except (OSError, UnicodeDecodeError) as e:
            raise bad_request(f"{path}: {e}") from None
        applied = False
        if variant == "small":
            try:
                values, line = source.parse_small_line(text)
                if values:
                    matched = source.rewrite_assignments(tree, values)
                    missing = sorted(set(values) - matched)
                    if missing:
                        raise source.SourceError(
                            f"{line}: '# kgate:small' names {', '.join(missing)} but the "
                            "file has no top-level assignment to it")
                    applied = True
            except source.SourceError as e:
                raise bad_request(f"{path}:{e}") from None
        t0 = time.perf_counter()
        try:
            module = source.exec_module(tree, path, "problem")
        except (Exception, SystemExit) as e:
            raise bad_request(source.located_exception(e, path)) from None
        p = Problem(path, module, tree, applied)
        p.load_phases["module"] = time.perf_counter() - t0
        p.mode, p.compile_mode = mode, compile_mode
        p.reference_op_rule = ref_rule
        p.inventory_only = inventory_only
        p.defer_truth = defer_truth
        p.kernels_dir = os.path.abspath(kernels_dir) if kernels_dir else ""
        self.problem = p
        try:
            res = self._prepare_problem(p)
        except BaseException:
            self._reset()
            raise
        res["phases_s"] = {k: round(v, 4) for k, v in p.load_phases.items()}
        return res

    def _prepare_problem(self, p: Problem) -> dict:
        mod, path = p.module, p.path
        if not isinstance(getattr(mod, "Model", None), type):
            raise bad_request(f"{path}: no class Model")
        for fn in ("get_inputs", "get_init_inputs"):
            if not callable(getattr(mod, fn, None)):
                raise bad_request(f"{path}: no {fn}()")
        phase = _Phases(p.load_phases)
        with torch.no_grad():
            try:
                init = mod.get_init_inputs()
                p.init_inputs = list(init) if isinstance(init, (list, tuple)) else [init]
                too_big = self._does_not_fit(p)
                if too_big:
                    raise WorkerError("cannot_judge", too_big)
                phase("sizing")
                p.ref_model = p.new_model(mod.Model, self.device)
                p.master = {k: v.detach().clone() for k, v in p.ref_model.state_dict().items()}
                phase("construct")
                if p.inventory_only:
                    # An inventory needs the model's weights, not the reference's probe runs
                    # or its float64 truth (a GPU-sized problem's truth alone is GBs).
                    return {"inputs": [], "outputs": [], "variant_applied": p.variant_applied,
                            "degenerate": "", "init_inputs": _short_repr(p.init_inputs),
                            "mode": p.mode, "inventory_only": True}
                probe = self._probe_reference(p)
                phase("probe")
            except (WorkerError, CannotJudge):
                raise
            except (Exception, SystemExit) as e:
                raise bad_request(source.located_exception(e, path)) from None
        from .stats import dtype_name
        first_inputs, outs, first_out = probe["inputs"], probe["outputs"], probe["raw"]
        if outs is None:
            raise bad_request(f"{path}: Model.forward must return a tensor or a tuple/list of "
                              f"tensors, got {type(first_out).__name__}")
        p.output_meta = [(tuple(t.shape), t.dtype) for t in outs]
        inputs = []
        for i, x in enumerate(first_inputs):
            inputs.append({"name": f"input{i}", "dtype": dtype_name(x.dtype)
                           if isinstance(x, torch.Tensor) else type(x).__name__})
        outputs = [{"name": f"output{i}", "dtype": dtype_name(t.dtype)}
                   for i, t in enumerate(outs)]
        degenerate = probe["degenerate"]
        del probe, outs, first_out
        # The truth of the first input set (seed 1): finds out here, once per problem,
        # whether the reference runs in float64 (oracle_skip) and where its truth fits --
        # unless the worker is loaded to be timed (defer_truth): a check computes it then.
        truth_where = "deferred" if p.defer_truth else "device"
        try:
            if not p.defer_truth:
                with torch.no_grad():
                    self.truth(DEGENERATE_SEEDS[0], "problem", torch.float32, first_inputs)
        except CannotJudge as e:
            truth_where = "cannot: " + str(e)
        phase("truth")
        if p.oracle_skip:
            truth_where = "float32 reference"
        elif p.truth_note:
            truth_where = "sliced" if p.truth_sliced else "host"
        del first_inputs
        if self.cuda:  # before any candidate code runs (stats.warm_fused)
            from .stats import FUSED_MIN_ELEMENTS, warm_fused
            warm_fused([dt for shape, dt in p.output_meta if math.prod(shape) >= FUSED_MIN_ELEMENTS],
                       torch.float32 if p.oracle_skip else torch.float64, self.device)
            phase("warm_fused")
        return {"inputs": inputs, "outputs": outputs, "variant_applied": p.variant_applied,
                "degenerate": degenerate, "init_inputs": _short_repr(p.init_inputs),
                "reference_op": p.ref_op or "", "reference_op_rule": p.reference_op_rule,
                "mode": p.mode,
                "reference_deterministic": p.ref_spread == 0.0 and not p.ref_random,
                "reference_random": p.ref_random, "reference_spread": p.ref_spread,
                "reference_nondeterministic": p.ref_nondeterministic,
                "oracle_skip": p.oracle_skip, "truth": truth_where,
                "truth_note": p.truth_note}

    def _does_not_fit(self, p: Problem) -> str:
        """Why this machine cannot judge the problem at all, or "". Sized on the meta device
        (no memory, no RNG draws): the reference's weights W, one input set I, its
        outputs O and the peak T of its forward's intermediates (_peak_bytes_mode), against the
        least the worker holds:
        - on the CPU, judging a case: 4W (the reference, a candidate and their master
          copies) + 2I (the drawn inputs and the check's buffers) + 3O (the float64 truth
          and a candidate's output) + T (a forward's own), against the host's available
          memory: past it the kernel's OOM killer, not kgate, would end the worker;
        - on a GPU, loading it: 2W + 2I + 2O (the probe's runs), against the device's whole
          memory (or the worker's cap): an out-of-memory error there is caught and the
          truth can be sliced, so only a problem no free memory could hold is refused;
        - loaded for its inventory alone: 2W + I + O (one run).
        "" when the problem does not build on the meta device (a constructor or forward
        that needs real data): the load then finds out itself."""
        mod = p.module
        try:
            with torch.device("meta"):
                m = mod.Model(*p.init_inputs)
                inputs = mod.get_inputs()
                peak = _peak_bytes_mode()()
                with peak:
                    outs = _as_outputs(m(*inputs)) or []
            w = _nbytes(list(m.state_dict().values()))
            i, o = _nbytes(list(inputs)), _nbytes(outs)
            # The forward's own intermediates at their peak, beyond its outputs.
            t = p.forward_peak = max(0, peak.peak - o)
        except (Exception, SystemExit):
            return ""
        if p.inventory_only:
            need, doing = 2 * w + i + o, "loading it for its inventory"
            held = "the weights twice, one run"
        elif self.cuda:
            need, doing = 2 * (w + i + o), "loading it"
            held = "each twice, the reference's first runs"
        else:
            # Every check runs the reference and the candidate whole, intermediates and all
            # (the OOM killer ends a worker past them, however small the rest); the float64
            # truth's own are its plan's (_truth_need: it may be sliced).
            need, doing, held = 4 * w + 2 * i + 3 * o + t, "judging it", (
                "the weights four times, the reference's and a candidate's with their master "
                "copies; the inputs twice, drawn and in the check's buffers; the outputs three "
                "times, the float64 truth and a candidate's output; the forward's "
                "intermediates once")
        if self.cuda:
            have = int((self.device_info or {}).get("memory_bytes") or 0)
            if self.memory_cap:
                have = min(have, int(self.memory_cap))
            where = "device memory" + (" (this worker's cap)" if self.memory_cap else "")
        else:
            have, where = self._host_free(), "host memory available"
        if not have or need <= have:
            return ""
        inter = f", intermediates {_gib(t)}" if t and not self.cuda and not p.inventory_only else ""
        return (f"{doing} needs at least {_gib(need)} (weights {_gib(w)}, inputs {_gib(i)}, "
                f"outputs {_gib(o)}{inter}: {held}) and this machine has {_gib(have)} of {where}")

    def _probe_reference(self, p: Problem) -> dict:
        """The reference on the inputs of seed 1 (kept: the first input set), again on the
        same inputs (bitwise reproducible? else its relative spread), once more under
        another RNG seed (does forward draw random numbers?), then on seed 2 and on seed 1
        signed for the degenerate-output checks; each later output is compared as it
        comes and dropped (a GPU-sized problem cannot hold five sets)."""
        from .stats import bitwise_equal, relative_spread
        inputs_a = self.draw_inputs(DEGENERATE_SEEDS[0], "problem")

        def call(inputs, seed=CALL_SEED):
            args = _clone_args(inputs)
            torch.manual_seed(seed)
            out = p.ref_model(*args)
            del args
            self.sync()
            return out

        raw = call(inputs_a)
        outs = _as_outputs(raw)
        res = {"inputs": inputs_a, "outputs": outs, "raw": raw, "degenerate": ""}
        if outs is None:
            return res
        again = _as_outputs(call(inputs_a))
        spread = relative_spread(outs, again)
        del again
        if spread > 0:
            p.ref_spread = spread
            p.ref_nondeterministic = (
                f"not bitwise reproducible: two runs on identical inputs differ by "
                f"{spread:.3g} (max |difference| / max |output|)")
        other = _as_outputs(call(inputs_a, CALL_SEED + 1))
        if spread == 0 and relative_spread(outs, other) > 0:
            p.ref_random = True
            p.ref_nondeterministic = ("draws random numbers in forward: its output follows "
                                      "the RNG state (seeded before every checked call)")
        del other
        if p.ref_nondeterministic:
            _log(f"{p.path}: the reference {p.ref_nondeterministic}")
        summ = [_out_summary(outs)]
        invariant = [False] * len(outs)
        for seed, dist in ((DEGENERATE_SEEDS[1], "problem"), (DEGENERATE_SEEDS[0], "signed")):
            ins = self.draw_inputs(seed, dist)
            o = _as_outputs(call(ins))
            if o is None or len(o) != len(outs):
                return res
            if dist == "problem":
                differ = any(isinstance(a, torch.Tensor) and not bitwise_equal(a, b)
                             for a, b in zip(inputs_a, ins))
                invariant = [differ and bitwise_equal(x, y) for x, y in zip(outs, o)]
            summ.append(_out_summary(o, ins))
            del ins, o
        summ[0] = _out_summary(outs, inputs_a)
        res["degenerate"] = _degenerate_from(summ, invariant)
        return res

    # ---- inventory (compiled mode) --------------------------------------------------
    def _compiled_reference(self, p: Problem):
        """torch.compile of a fresh Model with the reference weights, its wrappers and
        kernel inventory: built once per problem, shared by inventory and compiles."""
        if p.compiled_ref is None:
            from .inductor import CompiledReference
            ref = CompiledReference()
            with torch.no_grad():
                m = p.new_model(p.module.Model, self.device)
                m.load_state_dict(p.master)
                ref.build(m, self.draw_inputs(MODEL_SEED, "problem"), p.compile_mode,
                          self.device.type)
            self.sync()
            p.compiled_ref = ref
        return p.compiled_ref

    def inventory(self, params: dict) -> dict:
        out_dir = param(params, "dir", "str", "")
        profile = param(params, "profile", "bool", True)
        iters = param(params, "profile_iters", "int", 5)
        if iters < 1:
            raise bad_request("profile_iters must be >= 1")
        from .inductor import SEED_MODES, inventory_result, write_kernel_files
        seed_mode = param(params, "seed_mode", "str", "")
        if seed_mode and seed_mode not in SEED_MODES:
            raise bad_request(f"unknown seed_mode '{seed_mode}' (expected "
                              f"{' or '.join(SEED_MODES)})")
        # > 0: seed only the kernels worth searching (an Amdahl bound at least this, or no
        # profile to tell): each seeded kernel costs its own autotuning and descent.
        seed_min_bound = param(params, "seed_min_bound", "num", 0.0)
        p = self._need_problem()
        bw = float((self.device_info or {}).get("copy_bandwidth_gbps") or 0.0)
        t0 = time.perf_counter()
        ref = self._compiled_reference(p)
        compile_s = time.perf_counter() - t0
        inputs = self.draw_inputs(MODEL_SEED, "problem")
        res = inventory_result(ref, p.compile_mode, self.device.type, profile, iters, inputs, bw)
        res["compile_s"] = round(compile_s, 3)
        res["seed_compile_s"] = 0.0
        if seed_mode:
            note = self._seed(p, ref, res, seed_mode, seed_min_bound, inputs)
            if note:
                res["seed_note"] = note
        if out_dir:
            write_kernel_files(res, ref, os.path.abspath(out_dir), self.device.type)
        return res

    def _seed(self, p: Problem, ref, inv: dict, seed_mode: str, min_bound: float,
              inputs: list) -> str:
        """Seeds the inventory's kernels worth searching with Inductor's own search
        (kernel_seeds, then apply_seeds; its time in `seed_compile_s`). Returns the note:
        why none was seeded, or which kernels got no seed ("" when every one did). A
        seeding call that fails leaves no seeds: the search starts from Inductor's own."""
        from .inductor import apply_seeds, kernel_seeds, seed_targets
        if not self.cuda:
            return "no Triton kernels to seed on the CPU"
        if not inv["kernels"]:
            return "not seeded: torch.compile generated no Triton kernels"
        names = seed_targets(inv, min_bound)
        if not names:
            return (f"not seeded: no kernel's Amdahl bound reaches {min_bound:g}x "
                    "(none is worth searching)")
        t0 = time.perf_counter()
        try:
            seeds, why = kernel_seeds(ref, names, inputs, seed_mode)
        except Exception as e:
            self.sync()
            return f"{seed_mode} seeding failed: {source.exception_message(e)}"
        finally:
            inv["seed_compile_s"] = round(time.perf_counter() - t0, 3)
        apply_seeds(inv, seeds, seed_mode)
        _log(f"{p.path}: {seed_mode} on {len(names)} kernel(s) for tuner seeds: "
             f"{len(seeds)} configured in {inv['seed_compile_s']:.1f} s")
        return "; ".join(f"{n}: not seeded: {w}" for n, w in why.items())

    # ---- compile --------------------------------------------------------------------
    def compile(self, params: dict) -> dict:
        slot = param(params, "slot", "str", "candidate")
        if slot not in SLOTS:
            raise bad_request(f"unknown slot '{slot}' (expected candidate or baseline)")
        path = param(params, "source_path", "str", "")
        if not path:
            raise bad_request("missing parameter 'source_path'")
        defines = param(params, "defines", "dict", {})
        for k, v in defines.items():
            if not source.is_identifier(k):
                raise bad_request(f"define name '{k}' is not a Python identifier")
            if not isinstance(v, str):
                raise bad_request(f"define '{k}' must be a string value")
        ref_rule = param(params, "reference_op_rule", "bool", None)
        native = param(params, "native", "bool", False)
        screen = param(params, "screen", "bool", False)
        pins = param(params, "pins", "list", [])
        if not all(isinstance(x, str) and x for x in pins):
            raise bad_request("parameter 'pins' must be an array of kernel file paths")
        p = self._need_problem()
        if ref_rule is None:
            ref_rule = p.reference_op_rule
        self.slots.pop(slot, None)  # a failed compile leaves the slot empty
        path = os.path.abspath(path)
        t0 = time.perf_counter()
        with torch.no_grad():
            if native:
                res = self._compile_native(p, path, slot)
            elif slot == "baseline":
                res = self._compile_baseline(p, path, defines, ref_rule, pins)
            elif p.mode == "compiled":
                res = self._compile_compiled(p, path, defines, screen=screen)
            else:
                res = self._compile_candidate(p, path, defines, ref_rule=ref_rule)
        patch = clocks.finding(path)
        changed = self._memory_cap_changed()
        if patch is None and changed:  # the memory cap, at import or in its constructor
            patch = {"line": clocks.source_line(path, [n + " " for n in lint.MEMORY_CAP_NAMES]),
                     "rule": "memory-cap",
                     "message": changed + " while the file was imported or its model built"}
        if patch is not None:  # rebound a clock at import or in its constructor
            self._tampered(slot, patch["message"])
            res = {"compiled": False, "findings": [patch],
                   "log": f"{path}:{patch['line']}: [{patch['rule']}] {patch['message']}\n"}
        res.setdefault("findings", [])
        res.setdefault("cache_hit", False)
        res["compile_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
        return res

    def _compile_baseline(self, p: Problem, path: str, defines: dict,
                          ref_rule: bool = True, pins: list | None = None) -> dict:
        mode_name = defines.get("KGATE_BASELINE", "eager")
        if mode_name == "candidate":
            # The search's current best (a ModelNew file) as the baseline: keep/revert
            # decisions compare a candidate against it, not against the reference model.
            rest = {k: v for k, v in defines.items() if k != "KGATE_BASELINE"}
            if p.mode == "compiled":
                res = self._compile_compiled(p, path, rest, slot="baseline", pins=pins)
            else:
                res = self._compile_candidate(p, path, rest, slot="baseline",
                                              ref_rule=ref_rule)
            res["baseline"] = "candidate"
            return res
        if mode_name not in BASELINE_MODES:
            raise bad_request(f"unknown KGATE_BASELINE '{mode_name}' (expected "
                              f"{', '.join(BASELINE_MODES)} or candidate)")
        if not os.path.isfile(path):
            return {"compiled": False, "log": f"{path}: no such file"}
        mode = BASELINE_MODES[mode_name]
        try:
            eager = p.new_model(p.module.Model, self.device)
            eager.load_state_dict(p.master)
        except (Exception, SystemExit) as e:
            return {"compiled": False, "log": source.located_exception(e, p.path)}
        if mode is None:
            self.slots["baseline"] = Slot("baseline", eager, p.path)
            return {"compiled": True, "log": "", "baseline": mode_name}
        if p.mode == "compiled" and mode == p.compile_mode:
            # The very model the candidates swap kernels into (one wrapper module, one set of
            # autotuned kernels): an A/B then differs by the swapped kernels alone. A second
            # torch.compile is another wrapper with kernels autotuned on their own (and needs
            # a dynamo reset that makes the shared model recompile); on the H200 the search's
            # keeps against one were not confirmed by the final re-measure.
            from . import inductor
            try:
                ref = self._compiled_reference(p)
            except (Exception, SystemExit) as e:
                return {"compiled": False, "log": source.located_exception(e, p.path),
                        "baseline": mode_name}
            if ref.compiled is None:
                return {"compiled": False, "log": f"{p.path}: {ref.error}", "baseline": mode_name}
            self.slots["baseline"] = CompiledSlot("baseline", inductor.SwappedModel(ref.compiled, {}),
                                                  p.path, _torch().float32)
            return {"compiled": True, "log": "", "baseline": mode_name, "cache_hit": False,
                    "shared_with_candidates": True}

        def build(dt):
            m = p.new_model(p.module.Model, self.device)
            m.load_state_dict(p.master)
            return torch.compile(m.to(dt), mode=mode)

        slot = Slot("baseline", eager, p.path, build_compiled=build)
        try:
            import torch._dynamo
            from torch._dynamo.utils import counters
            torch._dynamo.reset()
            hits = counters["inductor"]["fxgraph_cache_hit"]
            model = slot.model_for(torch.float32)
            model(*self.draw_inputs(MODEL_SEED, "problem", torch.float32))
            self.sync()
            cache_hit = counters["inductor"]["fxgraph_cache_hit"] > hits
        except (Exception, SystemExit) as e:
            log = (f"{p.path}: torch.compile(mode={mode!r}) failed: "
                   f"{source.exception_message(e)}\n{source.format_traceback(e)}")
            return {"compiled": False, "log": log, "baseline": mode_name}
        self.slots["baseline"] = slot
        return {"compiled": True, "log": "", "baseline": mode_name, "cache_hit": cache_hit}

    def _compile_native(self, p: Problem, path: str, slot: str) -> dict:
        """A native kgate library (`kgate_run`, built by kgate-native from a candidate
        that passed its gates) as the slot, beside the problem -- a native op's PyTorch
        form -- and its modes: the native problem's reference columns."""
        from . import native
        if not os.path.isfile(path):
            return {"compiled": False, "log": f"{path}: no such file"}
        seal.before_candidate_code()  # the library's constructors run at dlopen
        try:
            ref = p.new_model(p.module.Model, self.device)
            ref.load_state_dict(p.master)
            model = native.NativeModel(path, ref)
        except (Exception, SystemExit) as e:
            return {"compiled": False, "log": f"{path}: {source.exception_message(e)}"}
        self.slots[slot] = Slot(slot, model, path)
        return {"compiled": True, "log": "", "native": True}

    def _compile_candidate(self, p: Problem, path: str, defines: dict,
                           slot: str = "candidate", ref_rule: bool = True) -> dict:
        if not os.path.isfile(path):
            return {"compiled": False, "log": f"{path}: no such file"}
        try:
            text = source.read_source(path)
            tree = source.parse_source(text, path)
        except source.SourceError as e:
            return {"compiled": False, "log": str(e)}
        except (OSError, UnicodeDecodeError) as e:
            return {"compiled": False, "log": f"{path}: {e}"}
        findings = lint.lint(tree, p.ref_op if ref_rule else None, p.tree)
        if findings:
            return {"compiled": False, "findings": [f.as_dict() for f in findings],
                    "log": "".join(f"{path}:{f.line}: [{f.rule}] {f.message}\n"
                                   for f in findings)}
        log_lines = []
        if p.ref_op and not ref_rule:
            log_lines.append(f"{path}: reference-op rule exempt (reference_op_rule: false); "
                             "every other rule applied")
        values = {k: source.parse_value(v) for k, v in defines.items()}
        matched = source.rewrite_assignments(tree, values) if values else set()
        for name in sorted(set(values) - matched):
            log_lines.append(f"{path}: warning: define {name} matches no top-level "
                             "assignment")
        seal.before_candidate_code()
        try:
            module = source.exec_module(tree, path, "candidate")
        except (Exception, SystemExit) as e:
            return {"compiled": False, "log": source.located_exception(e, path) + "\n" +
                    source.format_traceback(e)}
        self.modules.append(module)
        cls = getattr(module, "ModelNew", None)
        if not isinstance(cls, type):
            return {"compiled": False, "log": f"{path}: no class ModelNew"}
        try:
            cand = p.new_model(cls, self.device)
        except (Exception, SystemExit) as e:
            return {"compiled": False, "log": source.located_exception(e, path) + "\n" +
                    source.format_traceback(e)}
        copied = False
        sd = cand.state_dict()
        if set(sd) == set(p.master) and all(
                tuple(sd[k].shape) == tuple(v.shape) for k, v in p.master.items()):
            try:
                cand.load_state_dict(p.master)
                copied = True
            except (Exception, SystemExit) as e:
                log_lines.append(f"{path}: warning: could not copy the reference weights: "
                                 f"{source.exception_message(e)}")
        self.slots[slot] = Slot(slot, cand, path)
        return {"compiled": True, "log": "\n".join(log_lines), "weights_copied": copied,
                "defines_applied": sorted(matched),
                "rules_exempt": ["reference-op"] if not ref_rule else []}

    def _compile_compiled(self, p: Problem, path: str, defines: dict,
                          slot: str = "candidate", screen: bool = False,
                          pins: list | None = None) -> dict:
        """Compiled mode: the compiled reference with the kernel files of kernels_dir (the
        source_path file replacing the one of its NAME, and each of `pins` -- a pair
        experiment's partner files as kept, for the baseline slot -- the one of its) swapped in; an unchanged file is
        dropped, each other one is linted, loaded, pinned to its LAUNCH_* config, checked
        against the call site and tried in one model call. With `screen` (on a GPU), the
        trial also times the edited kernel against the baseline slot's copy of it
        (`screen` in the answer: the orchestrator's kernel-level screen)."""
        from . import inductor
        if not os.path.isfile(path):
            return {"compiled": False, "log": f"{path}: no such file"}
        log_lines: list = []
        matched: set = set()
        try:
            text, tree, own = inductor.read_kernel_file(path)
            if own is None and os.path.realpath(path) != os.path.realpath(p.path):
                raise inductor.CompileFailure(
                    f"{path}:1: not a kernel file (no '# kgate:kernel NAME' line) and not "
                    "the problem file; compiled mode swaps Inductor kernels, not Models")
            values = {k: source.parse_value(v) for k, v in defines.items()}
            if values and own is not None:
                matched = source.rewrite_assignments(tree, values)
                text = ast.unparse(tree)
            for name in sorted(set(values) - matched):
                log_lines.append(f"{path}: warning: define {name} matches no top-level "
                                 "assignment")
            ref = self._compiled_reference(p)
            if ref.compiled is None:
                raise inductor.CompileFailure(f"{p.path}: {ref.error}")
            originals = ref.originals()
            overrides = []
            unchanged: list = []
            for name, (fpath, ftext, ftree) in inductor.override_set(
                    p.kernels_dir, path, own, text, tree, pins or []).items():
                if name in originals and inductor.same_ast(
                        ftree, ast.parse(originals[name])):
                    log_lines.append(f"{fpath}: {name} is Inductor's kernel unchanged; "
                                     "not swapped")
                    unchanged.append(name)
                    continue
                overrides.append(inductor.Override(name, fpath, ftext, ftree))
            if overrides:
                seal.before_candidate_code()  # the compiled reference stays the shared cache's
            for ov in overrides:
                self._prepare_override(ref, ov)
            kernel_check: list = []
            screened = None
            if overrides:
                # A template file is not screened: the template agent judges its points by
                # the model's time (a close loser is tuned, not dropped).
                edited = next((ov for ov in overrides if ov.name == own), None)
                spec = (self._screen(own) if screen and self.cuda and edited is not None
                        and inductor.template_name(edited.tree) is None else None)
                kernel_check, check_log, screened = inductor.trial(
                    ref, overrides, self.draw_inputs(MODEL_SEED, "problem"), True, path,
                    screen=spec)
                log_lines += check_log
        except inductor.CompileFailure as e:
            res = {"compiled": False, "log": "\n".join(log_lines + [e.log])}
            if e.findings:
                res["findings"] = e.findings
            return res
        model = inductor.SwappedModel(ref.compiled, {ov.name: ov.autotuner
                                                     for ov in overrides})
        self.slots[slot] = CompiledSlot(slot, model, path, torch.float32)
        res = {"compiled": True, "log": "\n".join(log_lines),
               "defines_applied": sorted(matched),
               "overrides": [ov.name for ov in overrides], "unchanged": unchanged,
               "kernel": own or ""}
        if overrides:
            res["kernel_check"] = kernel_check
        if screened is not None:
            res["screen"] = screened
        return res

    def _screen(self, name: str):
        """The screen of kernel `name` against the baseline slot's copy of it (Inductor's
        own when that slot does not swap it): each launch timed alone, as the `time` op
        times a model -- L2 flushed, events around it, the host's issue left out by a
        lead --, the two interleaved, SCREEN_SAMPLES each."""
        from . import cuda_timing, inductor
        base = self.slots.get("baseline")
        model = getattr(base, "model", None)
        best = (model.overrides.get(name) if isinstance(model, inductor.SwappedModel)
                else None)
        l2 = (self.device_info or {}).get("l2_bytes") or (32 << 20)

        def time_pair(best_fn, cand_fn) -> dict:
            sampler = cuda_timing.Sampler(torch, self.device, 2 * l2)
            issue = []
            for f in (best_fn, cand_fn, best_fn, cand_fn):
                self.sync()
                t0 = clocks.perf_counter()
                f()
                issue.append((clocks.perf_counter() - t0) * 1e6)
            self.sync()
            sampler.set_lead(cuda_timing.lead_us(issue))
            b: list = []
            c: list = []
            for i in range(SCREEN_SAMPLES):
                for xs, f in ((b, best_fn), (c, cand_fn)) if i % 2 == 0 else \
                        ((c, cand_fn), (b, best_fn)):
                    xs.append(sampler.sample("screen", f))
            return {"best_us": statistics.median(b), "candidate_us": statistics.median(c),
                    "samples": SCREEN_SAMPLES}
        return inductor.Screen(name, best, time_pair)

    def _prepare_override(self, ref, ov) -> None:
        """Lint, the kernel's name, then load + pin + precompile (inductor.load_override);
        raises inductor.CompileFailure."""
        from . import inductor
        findings = lint.lint(ov.tree, None)
        if findings:
            raise inductor.CompileFailure(
                "".join(f"{ov.path}:{f.line}: [{f.rule}] {f.message}\n" for f in findings),
                [f.as_dict() for f in findings])
        if ov.name not in ref.kernels:
            names = ", ".join(ref.kernels) or "none"
            raise inductor.CompileFailure(
                f"{ov.path}:1: kgate:kernel {ov.name} names no Triton kernel of the "
                f"compiled model (kernels: {names})")
        inductor.load_override(ov, ref.kernels[ov.name].source)

    # ---- check ----------------------------------------------------------------------
    def check(self, params: dict) -> dict:
        slot_name = param(params, "slot", "str", "candidate")
        if slot_name not in SLOTS:
            raise bad_request(f"unknown slot '{slot_name}' (expected candidate or baseline)")
        raw_cases = param(params, "cases", "list")
        cases = []
        for i, c in enumerate(raw_cases):
            w = f"cases[{i}]."
            if not isinstance(c, dict):
                raise bad_request(f"cases[{i}] must be an object")
            dist = param(c, "dist", "str", "problem", where=w)
            if dist not in DISTS:
                raise bad_request(f"{w}dist: unknown distribution '{dist}' (expected "
                                  "problem or signed)")
            repeats = param(c, "repeats", "int", 3, where=w)
            if repeats < 1:
                raise bad_request(f"{w}repeats must be >= 1")
            param(c, "dims", "dict", {}, where=w)
            cases.append({"case_id": param(c, "case_id", "str", "", where=w),
                          "seed": param(c, "seed", "uint", 0, where=w),
                          "dtype_name": param(c, "dtype", "str", "f32", where=w),
                          "dist": DISTS[dist], "repeats": repeats,
                          "atol": param(c, "atol", "num", 0.0, where=w),
                          "rtol": param(c, "rtol", "num", 0.0, where=w),
                          "rho": param(c, "rho", "num", REF_RHO, where=w)})
        self._need_problem()
        slot = self._need_slot(slot_name)
        for i, c in enumerate(cases):
            c["dtype"] = self._dtype(c["dtype_name"], f"cases[{i}].dtype")
            self._widen_audit(c["dtype"], c["atol"], c["rtol"])
        results = []
        with torch.no_grad():
            for c in cases:
                results.append(self._check_case(slot, c))
                if self.fatal:  # the device is gone: answer what ran, then exit
                    break
                if self.cuda:  # each case's transients back to the driver (GB-sized cases)
                    torch.cuda.empty_cache()
        return {"cases": results}

    def _widen_audit(self, dt, atol: float, rtol: float, extra: float = 0.0) -> None:
        """The timing audit's tolerance for this dtype grows to what a check used."""
        p = self._need_problem()
        a, r, e = p.audit_tol.get(str(dt), (0.0, 0.0, 0.0))
        p.audit_tol[str(dt)] = (max(a, atol), max(r, rtol), max(e, extra))

    def _check_case(self, slot: Slot, c: dict) -> dict:
        from .stats import compare, relative_spread
        dt = c["dtype"]
        p = self._need_problem()
        res = {"case_id": c["case_id"], "return_code": 0, "error": "",
               "inputs_modified": False, "deterministic": True, "elapsed_ms": 0.0,
               "outputs": [], "determinism": "bitwise", "repeat_spread": 0.0,
               "reference_spread": p.ref_spread, "oracle_skip": "", "cannot_judge": "",
               "notes": []}
        t0 = time.perf_counter()
        try:
            model = slot.model_for(dt)
        except (Exception, SystemExit) as e:
            res.update(return_code=1, error=source.describe_exception(e, slot.source_path))
            return res
        inputs = self.draw_inputs(c["seed"], c["dist"], dt)
        try:
            truth = self.truth(c["seed"], c["dist"], dt, inputs)
        except CannotJudge as e:
            res["cannot_judge"] = str(e)
            res["notes"].append("cannot judge: " + str(e))
            res["elapsed_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
            return res
        res["oracle_skip"] = p.oracle_skip
        if p.oracle_skip:
            res["notes"].append("judged against the float32 reference (oracle skipped: "
                                f"{p.oracle_skip})")
        elif p.truth_note:
            res["notes"].append(p.truth_note)
        # The float32 reference's own error on this case, before the slot runs (one output
        # set on the device at a time): the oracle's bound is rho x that error (in compiled
        # mode rho x the larger of it and torch.compile's model's, oracle_gate.h).
        anchor = not p.oracle_skip
        own, own_why = None, ""
        if anchor:
            own, own_why = self._try_own_error(p, c, inputs, truth)
        out_bytes = sum(t.numel() for t in truth) * torch.empty((), dtype=dt).element_size()
        first = None
        spread = 0.0
        retried = False
        # What the process holds on the device before the slot's first call, and what the
        # worker released of its own for the retry: how much the slot came to keep.
        start = self._device_held(collect=False) if self.cuda else (0, 0)
        released = (0, 0)
        r = 0
        while r < c["repeats"]:
            args = _check_args(p, inputs)
            self.poison(out_bytes)
            try:
                torch.manual_seed(CALL_SEED)
                out = model(*args)
                self.sync()
            except (Exception, SystemExit) as e:
                if self.cuda and _is_oom(e):
                    msg = source.exception_message(e).splitlines()[0][:300]
                    del e, args
                    if not retried:  # what the worker holds may be in the way: free it
                        retried = True
                        before = self._device_held()
                        truth = [t.cpu() for t in truth]
                        self._release_device(p)
                        released = tuple(b - a for b, a in zip(before, self._device_held()))
                        continue
                    # A candidate that took device memory of its own across its failed
                    # calls would make the reference below run out of it too (kgate's own
                    # baseline is never judged so: a case too big for it is not judged).
                    grew = [now - s0 + rel for now, s0, rel
                            in zip(self._device_held(), start, released)]
                    kept = max(grew)
                    if slot.kind == "candidate" and any(
                            g > slack for g, slack in zip(grew, HOARD_SLACK)):
                        res.update(return_code=1, error=hoard_rejection(kept, msg))
                        self._drop_hoarder(slot)
                        break
                    # Not judged only when the reference cannot run these inputs either:
                    # a candidate that runs out of memory on some cases alone (a huge
                    # allocation on inputs it does not want checked) is rejected.
                    ref_oom = self._reference_oom(p, dt, inputs)
                    if not ref_oom:
                        res.update(return_code=1, error=oom_rejection(msg))
                        self._after_candidate_error()
                        break
                    res["cannot_judge"] = ("the slot ran out of device memory with the "
                                           f"worker's own holdings released: {msg}; the "
                                           f"reference on the same inputs: {ref_oom}")
                    res["notes"].append("cannot judge: " + res["cannot_judge"])
                    break
                res.update(return_code=1,
                           error=source.describe_exception(e, slot.source_path))
                self._after_candidate_error()
                break
            r += 1
            if any(isinstance(a, torch.Tensor) and not _bitwise(a, x)
                   for a, x in zip(args, inputs)):
                res["inputs_modified"] = True
            outs = _as_outputs(out)
            other = outs if outs is not None else [out]
            del args, out, outs
            # Later repeats are compared with the first as they come and dropped: a
            # GPU-sized problem cannot hold three sets of outputs next to its truth.
            if first is None:
                first = other
            else:
                sp = relative_spread(first, other)
                if sp > 0:
                    res["deterministic"] = False
                    spread = max(spread, sp)
            del other
        res["elapsed_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
        changed = self._memory_cap_changed()
        if changed:
            res.update(return_code=1, error=changed, cannot_judge="")
            self._tampered(slot.kind, changed)
        if res["return_code"] != 0 or res["cannot_judge"]:
            return res
        n = max(len(first), len(truth))
        for i in range(n):
            got = first[i] if i < len(first) else None
            if i < len(truth):
                res["outputs"].append(compare(f"output{i}", got, truth[i], c["atol"],
                                              c["rtol"]))
            else:  # an output the reference does not have
                e = compare(f"output{i}", None, truth[0], 0, 0)
                e["dtype"] = ""
                res["outputs"].append(e)
        if not res["deterministic"]:
            res["repeat_spread"] = spread
            self._judge_spread(p, res, dt, inputs, spread, c["repeats"])
        over = not p.oracle_skip and any(o["over_tol"] > 0 and o["shape_ok"]
                                         for o in res["outputs"])
        if over and own is None and not own_why:
            own, own_why = self._try_own_error(p, c, inputs, truth)
        if own_why:
            res["notes"].append("the reference's own error could not be measured: " + own_why
                                + ("; the oracle bounds the slot by the baseline's error"
                                   if anchor else ""))
        elif own is not None:
            if over:
                self._judge_ill_conditioned(res, c, own, truth, first)
            for i, o in enumerate(res["outputs"] if anchor else []):
                if i < len(own) and own[i].shape_ok:
                    o["reference_rel_l2_err"] = own[i].rel_l2_err
                    if own[i].compiled_rel_l2_err >= 0:
                        o["compiled_rel_l2_err"] = own[i].compiled_rel_l2_err
                    o["reference_dtype"] = own[i].dtype  # the slot's must be the same
        res["elapsed_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
        return res

    def _judge_spread(self, p: Problem, res: dict, dt, inputs: list, spread: float,
                      repeats: int) -> None:
        """A slot whose repeats differ: the reference itself runs `repeats` times on the
        same inputs (same dtype, same seeding); when it is not bitwise reproducible either,
        a slot within SPREAD_FACTOR x its spread (or the spread measured at load_problem)
        counts as deterministic."""
        from .stats import relative_spread
        ref = 0.0
        try:
            model = self._ref_model(p, dt)
            base = self._reference_run(p, model, inputs)
            for _ in range(max(2, repeats) - 1):
                ref = max(ref, relative_spread(base, self._reference_run(p, model, inputs)))
            del base
        except (Exception, SystemExit) as e:
            res["notes"].append("the reference's own spread could not be measured in this "
                                f"dtype: {source.exception_message(e).splitlines()[0][:200]}")
        bound = max(ref, p.ref_spread)
        res["reference_spread"] = bound
        if bound > 0 and spread <= SPREAD_FACTOR * bound:
            res["deterministic"] = True
            res["determinism"] = "within_reference_spread"
            res["notes"].append(
                f"repeats differ by {spread:.3g} (max |difference| / max |output|), within "
                f"{SPREAD_FACTOR:g} x the reference's own {bound:.3g}: the reference is not "
                "bitwise reproducible either")
        else:
            res["determinism"] = "nondeterministic"
            res["notes"].append(
                f"repeats differ by {spread:.3g} (max |difference| / max |output|); the "
                + ("reference is bitwise reproducible" if bound == 0 else
                   f"reference's own spread is {bound:.3g}"))

    def _try_own_error(self, p: Problem, c: dict, inputs: list, truth: list):
        """(_own_error, "") or (None, why it could not be measured)."""
        try:
            return self._own_error(p, c, inputs, truth), ""
        except (Exception, SystemExit) as e:
            if self.cuda:
                torch.cuda.empty_cache()
            return None, source.exception_message(e).splitlines()[0][:200]

    def _own_error(self, p: Problem, c: dict, inputs: list, truth: list) -> list:
        """The float32 reference's own error on a case (same dtype, same inputs, same
        seeding) against the float64 truth, one OwnError per output; measured once per case
        (seed, distribution, dtype, tolerances) and kept. It anchors the oracle (a slot's
        error is bounded by rho x the reference's, never by a moving best's or a wrong
        starter's) and judges an ill-conditioned reference (_judge_ill_conditioned)."""
        from .stats import compare
        key = (c["seed"], c["dist"], str(c["dtype"]), c["atol"], c["rtol"])
        own = p.ref_error.get(key)
        if own is None:
            routs = self._reference_run(p, self._ref_model(p, c["dtype"]), inputs)
            own = []
            for i, t in enumerate(truth):
                got = routs[i] if routs is not None and i < len(routs) else None
                e = compare(f"output{i}", got, t, c["atol"], c["rtol"])
                own.append(OwnError(e["over_tol"] if e["shape_ok"] else 0, e["worst_abs_err"],
                                    e["exact"], e["rel_l2_err"], e["shape_ok"], e["dtype"]))
            del routs
            if p.mode == "compiled":
                own = self._compiled_own_error(p, c, inputs, truth, own)
            p.ref_error[key] = own
            while len(p.ref_error) > REF_ERROR_ENTRIES:
                p.ref_error.popitem(last=False)
        return own

    def _compiled_own_error(self, p: Problem, c: dict, inputs: list, truth: list,
                            own: list) -> list:
        """Compiled mode: `own` with torch.compile's model's own rel_l2_err on the case, none
        of the search's kernels swapped in (the compiled reference itself). The oracle
        anchors on the larger of it and the reference's, so a candidate as accurate as the
        fallback always passes; a model that cannot run here leaves -1 (the reference's
        error alone anchors)."""
        from .stats import compare
        ref = self._compiled_reference(p)
        if ref.compiled is None:
            return own
        try:
            outs = self._reference_run(p, ref.compiled, inputs)
        except Exception as e:  # noqa: BLE001 -- out of memory beside the slot, say
            if self.cuda:
                torch.cuda.empty_cache()
            _log(f"{p.path}: torch.compile's own error not measured: "
                 + source.exception_message(e).splitlines()[0][:200])
            return own
        for i, t in enumerate(truth):
            if i < len(own) and outs is not None and i < len(outs):
                e = compare(f"output{i}", outs[i], t, c["atol"], c["rtol"])
                if e["shape_ok"]:
                    own[i] = own[i]._replace(compiled_rel_l2_err=e["rel_l2_err"])
        del outs
        return own

    def _judge_ill_conditioned(self, res: dict, c: dict, own: list, truth: list,
                               first: list) -> None:
        """Outputs over tolerance: is the float32 reference itself (`own`, same dtype, same
        inputs) over tolerance against the float64 truth? Then the problem is
        ill-conditioned for this tolerance and the slot is judged relative to the
        reference's own error: every element's tolerance widened by rho x the reference's
        worst error over tolerance (`extra_atol`); `over_tol_strict` keeps the count under
        the plain tolerance."""
        from .stats import compare
        for i, o in enumerate(res["outputs"]):
            if i >= len(own) or o["over_tol"] == 0 or not o["shape_ok"]:
                continue
            ref_over, ref_err, exact = own[i].over_tol, own[i].worst_abs_err, own[i].exact
            if ref_over == 0 or exact or ref_err <= 0:
                continue
            extra = c["rho"] * ref_err
            self._widen_audit(c["dtype"], c["atol"], c["rtol"], extra)
            new = compare(o["name"], first[i], truth[i], c["atol"], c["rtol"],
                          extra_atol=extra)
            new.update(ill_conditioned=True, over_tol_strict=o["over_tol"],
                       reference_over_tol=ref_over, reference_worst_abs_err=ref_err,
                       extra_atol=extra)
            res["outputs"][i] = new
            res["notes"].append(
                f"{o['name']}: the float32 reference itself has {ref_over} elements over "
                f"tolerance against the float64 truth (worst |error| {ref_err:.3g}); judged "
                f"relative to it: tolerance widened by {c['rho']:g} x {ref_err:.3g} "
                f"({o['over_tol']} elements over the plain tolerance, {new['over_tol']} over "
                "the widened one)")

    # ---- time -----------------------------------------------------------------------
    def _drop_hoarder(self, slot: "Slot") -> None:
        """A slot that kept device memory back across its failed calls: its slot goes, its
        module's globals are cleared (what a module-level list held is freed for the
        rest of the answer), and this process is replaced after the answer."""
        for m in [m for m in self.modules if getattr(m, "__file__", None) == slot.source_path]:
            self.modules.remove(m)
            source.forget_module(m)
            m.__dict__.clear()
        self._tampered(slot.kind, "the slot kept device memory back across its failed calls")
        import gc
        gc.collect()
        torch.cuda.empty_cache()

    def _tampered(self, slot: str, why: str) -> None:
        """A slot rebound a clock (clocks.py has put the originals back) or changed the
        device memory cap (put back too): its slot is emptied and this process, which ran
        the change, is replaced after the answer."""
        self.slots.pop(slot, None)
        self.fatal = f"{why}; a fresh worker replaces this one"
        _log(self.fatal)

    def time(self, params: dict) -> dict:
        slots = param(params, "slots", "list", ["candidate", "baseline"])
        if not slots or any(s not in SLOTS for s in slots) or len(set(slots)) != len(slots):
            raise bad_request("'slots' must list distinct slots among candidate, baseline")
        param(params, "dims", "dict", {})
        dt_name = param(params, "dtype", "str", "f32")
        seed = param(params, "seed", "uint", 0)
        warmup_s = param(params, "warmup_s", "num", 0.05)
        min_time_s = param(params, "min_time_s", "num", 0.5)
        max_time_s = param(params, "max_time_s", "num", 5.0)
        min_samples = param(params, "min_samples", "int", 30)
        max_samples = param(params, "max_samples", "int", 2000)
        target_rse = param(params, "target_rse", "num", 0.005)
        flush_l2 = param(params, "flush_l2", "bool", True)
        input_sets = param(params, "input_sets", "int", 2)
        cuda_graph = param(params, "cuda_graph", "bool", True)
        exclude_launch = param(params, "exclude_launch", "bool", False)
        param(params, "pin_cpu", "int", -1)
        if input_sets < 1 or max_samples < 1:
            raise bad_request("input_sets and max_samples must be >= 1")
        p = self._need_problem()
        chosen = {s: self._need_slot(s) for s in slots}
        dt = self._dtype(dt_name, "dtype")
        with torch.no_grad():
            return self._time(p, chosen, dt, seed, warmup_s, min_time_s, max_time_s,
                              max(1, min_samples), max_samples, target_rse, flush_l2,
                              input_sets, cuda_graph, exclude_launch)

    def _time(self, p, chosen, dt, seed, warmup_s, min_time_s, max_time_s, min_samples,
              max_samples, target_rse, flush_l2, input_sets, cuda_graph,
              exclude_launch=False) -> dict:
        from . import cuda_timing
        from .stats import median, rse_of_median
        names = list(chosen)
        res = {"samples_us": {s: [] for s in names},
               "timer": "cuda_event" if self.cuda else "perf_counter", "batch": 1,
               "dropped_throttled": 0, "clock_mhz": [], "side_stream_work": False,
               "min_bytes": 0.0, "flops": 0.0, "elapsed_s": 0.0, "stop_reason": "",
               "return_code": 0, "timer_note": "", "failed_slot": "", "audited": 0,
               "audit_failure": "",
               "audit_note": ""}
        samples = res["samples_us"]
        t_start = clocks.perf_counter()
        current = names[0]
        graphs: dict = {}
        graph_outs: dict = {}
        # the outputs of the round's calls, kept for the audit (audit.py) when `keep`
        held: dict = {}
        keep = False
        auditing = "candidate" in names and "baseline" in names
        tol = audit.tolerance(p.audit_tol, str(dt))
        try:
            # a slot's earlier calls (check, a lazy patch in forward) may have rebound one
            clocks.verify("seen when timing started, after earlier calls of the slots")
            models = {}
            for s in names:
                current = s
                models[s] = chosen[s].model_for(dt)
            sets = [self.draw_inputs((seed + i) & 0xFFFF_FFFF_FFFF_FFFF, "problem", dt)
                    for i in range(input_sets)]
            set_bytes = sum(x.numel() * x.element_size() for x in sets[0]
                            if isinstance(x, torch.Tensor))
            sampler = None
            if self.cuda:
                l2 = (self.device_info or {}).get("l2_bytes") or (32 << 20)
                sampler = cuda_timing.Sampler(torch, self.device, 2 * l2 if flush_l2 else 0)

            def call(s: str, args: list) -> None:
                out = models[s](*args)
                if keep:
                    held[s] = out

            def measure(s: str, args: list) -> float:
                if p.ref_random and auditing:  # the same random draws in every slot
                    torch.manual_seed(CALL_SEED)
                if sampler is not None:
                    if s in graphs:
                        us = sampler.sample(s, lambda: cuda_timing.replay(graphs[s]),
                                            res["batch"])
                    else:
                        us = sampler.sample(s, lambda: call(s, args))
                else:
                    t0 = clocks.perf_counter_ns()
                    call(s, args)
                    us = (clocks.perf_counter_ns() - t0) / 1e3
                clocks.verify(f"after a timed call of slot '{s}'")
                return us

            def audited(where: str) -> bool:
                """Compares the round's outputs of the two slots (held, or the graphs'
                last calls); False when they differ (audit_failure says how)."""
                if graphs:
                    got, want = graph_outs.get("candidate"), graph_outs.get("baseline")
                else:
                    got, want = held.pop("candidate", None), held.pop("baseline", None)
                    held.clear()
                why = audit.outputs_differ(torch, _as_outputs(got), _as_outputs(want), *tol)
                del got, want
                res["audited"] += 1
                if why:
                    res["audit_failure"] = (f"outputs of timed calls differ from the "
                                            f"baseline's on the same inputs ({where}): {why}")
                return not why

            # warm-up (also yields the output size for min_bytes, and on CUDA how much
            # memory a call of each slot takes beyond what is held: the audit's room)
            out_bytes = 0
            transient = 0
            k = 0
            while True:
                for s in names:
                    current = s
                    if k == 0 and self.cuda:
                        torch.cuda.reset_peak_memory_stats(self.device)
                        base = torch.cuda.memory_allocated(self.device)
                    out = models[s](*sets[k % input_sets])
                    self.sync()
                    if k == 0 and self.cuda:
                        transient = max(transient,
                                        torch.cuda.max_memory_allocated(self.device) - base)
                    clocks.verify(f"after a warm-up call of slot '{s}'")
                    if k == 0 and s == names[0]:
                        outs = _as_outputs(out) or []
                        out_bytes = sum(t.numel() * t.element_size() for t in outs)
                        res["min_bytes"] = float(set_bytes + out_bytes)
                        del outs
                    del out
                k += 1
                if clocks.perf_counter() - t_start >= warmup_s:
                    break
            if sampler is not None and exclude_launch:
                # the host's cost of issuing each slot's call (returned, not synchronized)
                issue = []
                for s in names:
                    current = s
                    for i in range(5):
                        t0 = clocks.perf_counter()
                        models[s](*sets[i % input_sets])
                        issue.append((clocks.perf_counter() - t0) * 1e6)
                        self.sync()
                sampler.set_lead(cuda_timing.lead_us(issue))
                clocks.verify("after the slots' issue-time probe")
            if sampler is not None and cuda_graph:
                probe = float("inf")
                for s in names:
                    current = s
                    probe = min(probe, median([measure(s, sets[i % input_sets])
                                               for i in range(5)]))
                if probe < cuda_timing.GRAPH_BELOW_US:
                    batch = cuda_timing.graph_batch(probe)
                    res["timer_note"] = self._capture_graphs(graphs, graph_outs, names, models,
                                                             sets, batch)
                    clocks.verify("after the CUDA graph capture of the slots")
                    if graphs:
                        res["timer"], res["batch"] = "cuda_graph", batch
            if auditing and p.ref_random and self.fatal:
                auditing = False  # seeding would touch the unusable CUDA generators
                res["audit_note"] = "timed outputs not audited: " + self.fatal
            elif auditing and graphs and p.ref_random:
                auditing = False
                res["audit_note"] = ("timed outputs not audited: the reference draws random "
                                     "numbers and each CUDA graph replays its own draws")
            elif auditing and not graphs and self.cuda and (
                    out_bytes + transient + AUDIT_HEADROOM > self._device_free()):
                auditing = False
                res["audit_note"] = (f"timed outputs not audited: no room on the device to "
                                     f"keep an output of {_gib(out_bytes)} while the other "
                                     f"slot's call takes {_gib(transient)}")
            keep = auditing and not graphs
            t_sampling = clocks.perf_counter()
            k = 0
            while True:
                args = sets[k % input_sets]
                # round k visits the slots in rotated order (AB, BA, ...)
                for j in range(len(names)):
                    current = names[(k + j) % len(names)]
                    samples[current].append(measure(current, args))
                if keep and not audited(f"sampling round {k}"):
                    res["stop_reason"] = "audit"
                    break
                k += 1
                n = min(len(v) for v in samples.values())
                now = clocks.perf_counter()
                if (n >= min_samples and now - t_sampling >= min_time_s and
                        all(rse_of_median(v) <= target_rse for v in samples.values())):
                    res["stop_reason"] = "converged"
                    break
                if n >= max_samples:
                    res["stop_reason"] = "max_samples"
                    break
                if now - t_start >= max_time_s:
                    res["stop_reason"] = "max_time"
                    break
            if auditing and graphs:
                audited("the last call of each CUDA graph")
            # Rounds on contents nobody has seen, written into the timed buffers: a slot
            # that returns what it cached by content (or by address) is slower there, or
            # wrong. Their samples are not the timing's.
            if auditing and not res["audit_failure"]:
                if self.fatal:
                    # a failed graph capture left torch's CUDA generators unusable: no draws
                    res["audit_note"] = ("no rounds on fresh inputs: " + self.fatal)
                elif self.cuda and (max(set_bytes, 0 if graphs else out_bytes + transient)
                                    + AUDIT_HEADROOM > self._device_free()):
                    res["audit_note"] = ("no rounds on fresh inputs: no room on the device "
                                         f"for another input set of {_gib(set_bytes)}")
                else:
                    def fresh_rounds() -> dict | None:
                        """FRESH_ROUNDS rounds on new contents: {slot: [us]}, None when
                        an audited round's outputs differed (audit_failure says how)."""
                        nonlocal current, keep
                        fresh_us: dict = {"candidate": [], "candidate_seen": []}
                        for r in range(audit.FRESH_ROUNDS):
                            # Two passes over the very same steps: contents drawn (from
                            # one new seed nobody else knows, the same in both passes) and
                            # written into the timed buffers, a baseline call that settles
                            # whatever that changed (clocks, caches; not counted), the
                            # candidate's call, the baseline's. In the first pass the
                            # candidate has not seen these contents (a cache, if any, has
                            # not); in the second it has: the control, after exactly the
                            # same work, so what that work leaves behind weighs on both (a
                            # stateless op of a few microseconds on a 2-core host ran 1.5x
                            # slower on a first call that followed the draw than on a
                            # second that did not). Both passes' outputs are audited.
                            seed_r = int.from_bytes(os.urandom(8), "little")
                            for k, timed_as in enumerate(("candidate", "candidate_seen")):
                                current = names[0]
                                fresh = self.draw_inputs(seed_r, "problem", dt)
                                targets = sets if graphs else [sets[r % input_sets]]
                                # Written through .data: the buffers' version counters
                                # do not move, so a cache keyed on (pointer, version)
                                # meets new contents under a version it has seen (stale
                                # outputs: the audit) and the same contents again in the
                                # second pass (a copy: the ratio).
                                for st in targets:
                                    for a, x in zip(st, fresh):
                                        if isinstance(a, torch.Tensor):
                                            a.data.copy_(x)
                                del fresh
                                for s in ("settle", timed_as, "baseline"):
                                    slot = "baseline" if s == "settle" else s.replace("_seen", "")
                                    current = slot
                                    keep = s != "settle" and not graphs
                                    us = measure(slot, targets[0])
                                    if s in fresh_us:
                                        fresh_us[s].append(us)
                                if not audited(f"fresh round {r}" + (" again" if k else "")):
                                    return None
                        return fresh_us

                    first = fresh_rounds()
                    if first is not None and audit.cache_finding(samples, first):
                        # confirmed by a second set (a burst of load is not repeated)
                        second = fresh_rounds()
                        if second is not None:
                            res["audit_failure"], note = audit.confirmed_cache(
                                samples, first, second)
                            res["audit_note"] = "; ".join(
                                x for x in (res["audit_note"], note) if x)
            if sampler is not None and sampler.lead_us > 0:
                res["timer_note"] = "; ".join(x for x in (res["timer_note"], (
                    f"host issue excluded: the GPU held {sampler.lead_us:.0f} us before "
                    f"each start event" + (f" (lead doubled after {sampler.lead_short} "
                                           f"samples the host had not issued in time)"
                                           if sampler.lead_short else ""))) if x)
            if sampler is not None:
                res["side_stream_work"] = sampler.side_stream_work()
                if res["side_stream_work"]:
                    res["timer_note"] = "; ".join(
                        x for x in (res["timer_note"], sampler.side_note()) if x)
        except clocks.TimerPatch as e:
            # not a timing of the candidate at all: the gate must fail, so an error answer
            self._tampered(current, str(e))
            raise WorkerError("no_candidate", f"{e}; slot '{current}' emptied") from None
        except (Exception, SystemExit) as e:
            res["return_code"] = 1
            res["failed_slot"] = current
            res["stop_reason"] = "error"
            res["timer_note"] = f"{current}: " + source.describe_exception(
                e, chosen[current].source_path)
            self._after_candidate_error()
        held.clear()
        graph_outs.clear()
        graphs.clear()
        changed = self._memory_cap_changed()
        if changed:  # no timing of the candidate either: the gate must fail
            blamed = "candidate" if "candidate" in chosen else current
            self._tampered(blamed, changed)
            raise WorkerError("no_candidate", f"{changed}; slot '{blamed}' emptied")
        res["elapsed_s"] = round(clocks.perf_counter() - t_start, 6)
        return res

    def _capture_graphs(self, graphs: dict, graph_outs: dict, names: list, models: dict,
                        sets: list, batch: int) -> str:
        """Fills `graphs` with one CUDA graph of `batch` calls per slot (and `graph_outs`
        with the output of each graph's last call), or leaves both empty and says why
        when a slot cannot be captured (the caller then times with events).
        A sticky device error raises (the candidate broke the context)."""
        from . import cuda_timing
        for s in names:
            try:
                graphs[s], graph_outs[s] = cuda_timing.capture(torch, models[s], sets, batch)
            except Exception as e:  # noqa: BLE001 - any capture failure means "use events"
                graphs.clear()
                graph_outs.clear()
                why = source.exception_message(e).splitlines()[0][:300]
                torch.cuda.synchronize(self.device)  # raises on a sticky error
                # a failed capture can leave an error behind in lazily-checked state;
                # one untimed call per slot absorbs it
                for t in names:
                    models[t](*sets[0])
                torch.cuda.synchronize(self.device)
                # torch's CUDA generators stay registered with the abandoned capture ("Offset
                # increment outside graph capture"): every later random draw would fail. This
                # answer is still good; the orchestrator replays the set-up into a fresh
                # worker for the next request.
                self.fatal = ("CUDA graph capture failed; the process's CUDA random state "
                              "is no longer usable")
                _log(self.fatal + "; exiting after this answer")
                return (f"CUDA graph capture not usable (slot '{s}': {why}); "
                        "timed with events")
        return ""

    # ---- shutdown -------------------------------------------------------------------
    def shutdown(self, params: dict) -> dict:
        return {}


def _out_summary(outs: list, inputs: list | None = None) -> dict:
    """What the degenerate checks need of one reference run, so the run can be dropped:
    per output (floating, numel, constant, max |x|), and max |input|."""
    per = []
    for t in outs:
        t = t.detach()
        fl = t.is_floating_point() or t.is_complex()
        const = bool(fl and t.numel() > 1 and bool((t == t.reshape(-1)[0]).all()))
        per.append((fl, t.numel(), const,
                    float(t.abs().max()) if fl and t.numel() else 0.0))
    max_in = 0.0
    for x in inputs or []:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel():
            max_in = max(max_in, float(x.detach().abs().max()))
    return {"outputs": per, "max_in": max_in}


def _degenerate_from(summaries: list, invariant: list) -> str:
    """'' or why the reference output cannot tell a real kernel from one returning zeros;
    summaries of the runs for seed A, seed B, seed A signed; invariant[i]: output i was
    bitwise equal for seeds A and B although their inputs differ."""
    multi = len(summaries[0]["outputs"]) > 1
    max_in = max(s["max_in"] for s in summaries)
    for i in range(len(summaries[0]["outputs"])):
        prefix = f"output{i}: " if multi else ""
        runs = [s["outputs"][i] for s in summaries]
        if not all(r[0] for r in runs):
            continue
        if runs[0][1] > 1 and all(r[2] for r in runs):
            return prefix + "constant output"
        if invariant[i]:
            return prefix + "seed-invariant output"
        if max(r[3] for r in runs) < 1e-6 * max(1.0, max_in):
            return prefix + "near-zero output"
    return ""


def degenerate_reason(runs: list) -> str:
    """'' or why the reference output cannot tell a real kernel from one returning zeros.

    runs: [(inputs, outputs)] for seed A, seed B, seed A signed (same problem dtype)."""
    if any(o is None for _, o in runs):
        return ""
    from .stats import bitwise_equal
    inputs_a, inputs_b = runs[0][0], runs[1][0]
    differ = any(isinstance(a, torch.Tensor) and not bitwise_equal(a, b)
                 for a, b in zip(inputs_a, inputs_b))
    invariant = [differ and bitwise_equal(x, y) for x, y in zip(runs[0][1], runs[1][1])]
    return _degenerate_from([_out_summary(o, i) for i, o in runs], invariant)


def _triton_version() -> str:
    import importlib.metadata
    import importlib.util
    if importlib.util.find_spec("triton") is None:
        return ""
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return ""


def main() -> int:
    from .protocol import serve, take_over_stdio
    proto_in, proto_out = take_over_stdio()
    if os.environ.get("KGATE_WORKER_PRELOAD") == "1":
        # A worker started ahead of its problem (kgate keeps one spare) imports torch while
        # it waits for its hello; a failure here is hello's to report. Nothing it reads at
        # import (Inductor's and Triton's cache directories are read when used) is set yet.
        with contextlib.suppress(Exception):
            _torch()
    worker = Worker()
    try:
        rc = serve(worker.handlers(), proto_in, proto_out, _log,
                   fatal=lambda: worker.fatal)
    except BrokenPipeError:
        rc = 1
    with contextlib.suppress(Exception):
        proto_out.flush()
    sys.stderr.flush()
    return rc
