"""Dispatch-aware (compiled) mode: torch.compile(Model) is the baseline, each Triton kernel
Inductor generated is a slot a kernel file can replace.

Three layers, so the parts that need no GPU can be tested without one:
  * static: parsing Inductor's wrapper source (kernel definitions, call order, extern and
    fallback calls) and writing / reading kernel files (header, LAUNCH_* defaults, tune
    line). Standard library only.
  * swap: SwappedModel puts replacement kernels into the live wrapper modules for the
    length of one model call (module globals are looked up at call time).
  * torch: building the compiled reference, tapping each kernel's call-site arguments,
    profiling, and compiling a candidate's kernel files into CachingAutotuners.

The private Inductor hooks used here (GraphLowering.save_output_code, PyCodeCache,
CachingAutotuner.configs/launchers) are feature-detected and fail with the torch version.
"""

from __future__ import annotations

import ast
import collections
import copy
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import lint, source, templates

INVENTORY_VERSION = 1
COMPILE_MODES = {"default": None,
                 "max-autotune-no-cudagraphs": "max-autotune-no-cudagraphs"}
# Inductor's own extra search over one kernel, switched on in that kernel's inductor_meta:
# pointwise autotuning over its wider config list, then coordinate descent from the best
# of them -- what max-autotune-no-cudagraphs does to a pointwise or reduction kernel,
# without its GEMM template benchmarking (minutes, and no seeds). Its choice seeds the tuner.
SEED_MODES = {"coordinate-descent": {"max_autotune_pointwise": True,
                                     "coordinate_descent_tuning": True}}
KERNEL_CHECK_TOL = 1e-2

_PREFIX_CATEGORY = {"poi": "pointwise", "red": "reduction", "per": "persistent_reduction",
                    "tem": "template", "for": "foreach", "spl": "split_scan"}
_DECORATOR_CATEGORY = {"pointwise", "reduction", "persistent_reduction", "template",
                       "foreach", "split_scan"}
_NUMEL_OF_BLOCK = {"XBLOCK": ("xnumel",), "YBLOCK": ("ynumel",), "ZBLOCK": ("znumel",),
                   "R0_BLOCK": ("r0_numel", "rnumel"), "RBLOCK": ("rnumel", "r0_numel"),
                   "R1_BLOCK": ("r1_numel",)}
_HEADER_RE = re.compile(r"^\s*#\s*kgate:kernel\b(.*)$")
_ATEN_RE = re.compile(r"Original ATen: \[([^\]]*)\]")
_NODES_RE = re.compile(r"Topologically Sorted Source Nodes: \[([^\]]*)\]")
_BODY_FN_RE = re.compile(r"^(call|partition_\d+)$")
NUM_WARPS, NUM_STAGES = "NUM_WARPS", "NUM_STAGES"
LAUNCH = "LAUNCH_"


# ==== static: the wrapper ===================================================================

@dataclass
class KernelDef:
    """One `NAME = async_compile.triton('FN', '''SRC''', device_str=...)` of a wrapper."""
    name: str
    fn_name: str
    source: str
    device: str
    category: str
    line: int
    aten_ops: list = field(default_factory=list)
    source_nodes: list = field(default_factory=list)
    calls: int = 0


@dataclass
class ParsedWrapper:
    kernels: list            # [KernelDef] in call order (never-called ones last)
    externs: list            # [{"name", "kind", "calls"}] in first-call order
    other_kernels: list      # [{"name", "kind", "calls"}] (cpp and other backends)
    # What one launch writes and later launches read (wrapper_flows): [{"buffer", "producer",
    # "arg", "consumers", "output", "shape", "dtype", "bytes"}], in launch order
    flows: list = field(default_factory=list)


def _comment_block(lines: list[str], lineno: int) -> list[str]:
    """The comment lines directly above 1-based line `lineno`."""
    out: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(lines[i].strip())
        i -= 1
    return list(reversed(out))


def _bracket_list(rx: re.Pattern, comments: list[str]) -> list[str]:
    for c in comments:
        m = rx.search(c)
        if m:
            return [s.strip() for s in m.group(1).split(",") if s.strip()]
    return []


def kernel_category(name: str, src: str) -> str:
    """pointwise/reduction/... from the triton_<xxx>_ prefix, else from the decorator."""
    m = re.match(r"triton_([a-z]{3})_", name)
    if m and m.group(1) in _PREFIX_CATEGORY:
        return _PREFIX_CATEGORY[m.group(1)]
    m = re.search(r"@triton_heuristics\.(\w+)\(", src)
    if m and m.group(1) in _DECORATOR_CATEGORY:
        return m.group(1)
    return "unknown"


def _dotted(node: ast.AST) -> str:
    return lint.dotted(node) or ""


def _async_compile_def(node: ast.stmt) -> tuple[str, str, ast.Call] | None:
    """(global name, backend, call) of a top-level `NAME = async_compile.BACKEND(...)`."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
        return None
    d = _dotted(node.value.func)
    if not d.startswith("async_compile."):
        return None
    return node.targets[0].id, d.split(".", 1)[1], node.value


def _const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def _body_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """The functions that launch kernels: `call` (module level or Runner.call) and the
    cudagraph partition functions."""
    fns = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _BODY_FN_RE.match(node.name):
            fns.append(node)
        elif isinstance(node, ast.ClassDef):
            fns += [n for n in node.body
                    if isinstance(n, ast.FunctionDef) and _BODY_FN_RE.match(n.name)]
    return sorted(fns, key=lambda f: f.lineno)


def _launches(fns: list[ast.FunctionDef], triton: set, other: set) -> list[tuple]:
    """(kind, name) of every launch in the body functions, in source order."""
    found = []
    for fn in fns:
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func, pos = node.func, (node.lineno, node.col_offset)
            if isinstance(func, ast.Attribute) and func.attr == "run" and \
                    isinstance(func.value, ast.Name) and func.value.id in triton:
                found.append((pos, "triton", func.value.id))
                continue
            d = _dotted(func)
            if d.startswith("extern_kernels.") and d.count(".") == 1:
                found.append((pos, "extern", d.split(".", 1)[1]))
            elif re.match(r"^torch\.ops\.\w+\.\w+\.\w+$", d):
                found.append((pos, "fallback", d))
            elif re.match(r"^aten\.\w+\.\w+$", d):  # the wrapper's `aten = torch.ops.aten`
                found.append((pos, "fallback", "torch.ops." + d))
            elif isinstance(func, ast.Name) and func.id in other:
                found.append((pos, "other", func.id))
    found.sort(key=lambda t: t[0])
    return [(kind, name) for _, kind, name in found]


def parse_wrapper(text: str) -> ParsedWrapper:
    """The static inventory of one Inductor wrapper (output code). The kernel sources are
    string constants of the parsed module, so a kernel's own `def call(` (benchmark_kernel)
    cannot be mistaken for the wrapper's."""
    tree = ast.parse(text)
    lines = text.splitlines()
    kernels: dict[str, KernelDef] = {}
    other: dict[str, dict] = {}
    for node in tree.body:
        d = _async_compile_def(node)
        if d is None:
            continue
        name, backend, call = d
        if backend == "triton":
            fn_name = _const_str(call.args[0]) if call.args else None
            src = _const_str(call.args[1]) if len(call.args) > 1 else None
            if fn_name is None or src is None:
                continue
            device = ""
            for kw in call.keywords:
                if kw.arg == "device_str":
                    device = _const_str(kw.value) or ""
            comments = _comment_block(lines, node.lineno)
            kernels[name] = KernelDef(name, fn_name, src, device, kernel_category(name, src),
                                      node.lineno, _bracket_list(_ATEN_RE, comments),
                                      _bracket_list(_NODES_RE, comments))
        else:
            kind = "cpp" if backend.startswith("cpp") or name.startswith("cpp_") else backend
            other[name] = {"name": name, "kind": kind, "calls": 0}
    order: list[str] = []
    externs: dict[tuple, dict] = {}
    for kind, name in _launches(_body_functions(tree), set(kernels), set(other)):
        if kind == "triton":
            kernels[name].calls += 1
            if name not in order:
                order.append(name)
        elif kind == "other":
            other[name]["calls"] += 1
        else:
            e = externs.setdefault((kind, name), {"name": name, "kind": kind, "calls": 0})
            e["calls"] += 1
    order += [n for n in kernels if n not in order]
    return ParsedWrapper([kernels[n] for n in order], list(externs.values()),
                         list(other.values()), wrapper_flows(tree, kernels))


_DTYPE_BYTES = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2,
                "bfloat16": 2, "int16": 2, "int8": 1, "uint8": 1, "bool": 1}


def _storage_of(node: ast.AST, names: dict) -> str | None:
    """The storage an argument expression passes: a buffer's name, or the first argument
    of reinterpret_tensor / as_strided views of one."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Call) and node.args and _dotted(node.func).split(".")[-1] in (
            "reinterpret_tensor", "as_strided"):
        return _storage_of(node.args[0], names)
    return None


def _allocation(node: ast.AST) -> dict | None:
    """{"shape", "dtype", "bytes"} of an `empty_strided_*(shape, stride, dtype)` call."""
    if not (isinstance(node, ast.Call) and _dotted(node.func).startswith("empty_strided")
            and len(node.args) >= 3):
        return None
    try:
        shape = list(ast.literal_eval(node.args[0]))
        stride = list(ast.literal_eval(node.args[1]))
    except (ValueError, TypeError, SyntaxError):
        return None
    dtype = _dotted(node.args[2]).split(".")[-1]
    if not all(isinstance(v, int) for v in shape + stride) or dtype not in _DTYPE_BYTES:
        return {"shape": shape, "dtype": dtype, "bytes": 0}
    span = 1 + sum((n - 1) * st for n, st in zip(shape, stride)) if all(shape) else 0
    return {"shape": shape, "dtype": dtype, "bytes": span * _DTYPE_BYTES[dtype]}


def pair_partners(flows: list, calls: dict) -> dict:
    """CONSUMER -> [{"kernel", "buffers", "bytes"}]: each Triton kernel (of `calls`, NAME ->
    launches per model call) whose every write is an intermediate that only CONSUMER reads
    -- never returned, never read by another launch --, both launched once per call: the
    pairs an experiment may change together (docs/dispatch.md, pair experiments), folding
    them into one pass (the producer doing nothing, the consumer computing what it wrote)."""
    writes: dict = collections.defaultdict(list)
    for f in flows:
        writes[(f.get("graph", 0), f["producer"])].append(f)
    out: dict = {}
    for (graph, producer), fs in writes.items():
        consumers = {c for f in fs for c in f["consumers"]}
        if calls.get(producer) != 1 or len(consumers) != 1 or any(f["output"] for f in fs):
            continue
        (consumer,) = consumers
        if consumer == producer or calls.get(consumer) != 1:
            continue
        out.setdefault(consumer, []).append(
            {"kernel": producer, "buffers": [f["buffer"] for f in fs],
             "bytes": sum(f.get("bytes") or 0 for f in fs)})
    return out


def wrapper_flows(tree: ast.Module, kernels: dict) -> list[dict]:
    """What each launch of the wrapper's body functions writes that later launches read:
    one flow per (writer, storage), with the launches that read that storage before it is
    written again, and whether the call returns it. Storages follow the wrapper's aliases
    (`buf4 = buf0; del buf0  # reuse`) and views (reinterpret_tensor). A Triton kernel writes
    its out/in_out pointers (Inductor's parameter names), an extern call its `out=`, a
    fallback what it is assigned to; everything else a launch is passed, it reads. The base
    of pair experiments: an intermediate one kernel writes and only the next reads."""
    params = {}
    for name, k in kernels.items():
        try:
            fn = jit_function(ast.parse(k.source))
        except SyntaxError:
            fn = None
        params[name] = launch_params(fn) if fn is not None else []
    flows: list[dict] = []
    for fn in _body_functions(tree):
        names: dict = {}            # wrapper name -> storage id
        alloc: dict = {}            # storage id -> allocation
        open_flows: dict = {}       # storage id -> its last flow (reads go to it)
        counter = [0]

        def new_storage(name: str, a: dict | None) -> None:
            counter[0] += 1
            sid = f"{name}#{counter[0]}"
            names[name] = sid
            if a is not None:
                alloc[sid] = a

        def launch(writer: str, reads: list, writes: list) -> None:
            for sid in reads:
                f = open_flows.get(sid)
                if f is not None and writer not in f["consumers"] and f["producer"] != writer:
                    f["consumers"].append(writer)
            for label, sid in writes:
                a = alloc.get(sid, {})
                f = {"buffer": sid.split("#")[0], "producer": writer, "arg": label,
                     "consumers": [], "output": False, "shape": a.get("shape"),
                     "dtype": a.get("dtype"), "bytes": a.get("bytes", 0), "_sid": sid}
                flows.append(f)
                open_flows[sid] = f

        stmts = list(fn.body)
        while stmts:
            st = stmts.pop(0)
            if isinstance(st, (ast.With, ast.If, ast.For)):
                stmts[:0] = list(st.body)
                continue
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                target, value = st.targets[0].id, st.value
                if isinstance(value, ast.Name) and value.id in names:
                    names[target] = names[value.id]        # an alias: the same storage
                    continue
                if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
                        and value.value.id in names:
                    names[target] = names[value.value.id]  # a result tuple's element
                    continue
                a = _allocation(value)
                if a is not None or not isinstance(value, ast.Call):
                    new_storage(target, a)
                    continue
                call = value
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                target, call = None, st.value
            elif isinstance(st, ast.Return) and st.value is not None:
                elts = st.value.elts if isinstance(st.value, ast.Tuple) else [st.value]
                for e in elts:
                    sid = _storage_of(e, names)
                    if sid in open_flows:
                        open_flows[sid]["output"] = True
                continue
            else:
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "run" and \
                    isinstance(func.value, ast.Name) and func.value.id in kernels:
                kname = func.value.id
                ps = params.get(kname, [])
                reads, writes = [], []
                for i, a in enumerate(call.args):
                    sid = _storage_of(a, names)
                    if sid is None:
                        continue
                    p = ps[i] if i < len(ps) else f"arg{i}"
                    if p.startswith("in_out_ptr"):
                        reads.append(sid)
                        writes.append((p, sid))
                    elif p.startswith("out_ptr"):
                        writes.append((p, sid))
                    else:
                        reads.append(sid)
                launch(kname, reads, writes)
                continue
            d = _dotted(func)
            is_extern = d.startswith("extern_kernels.")
            is_fallback = bool(re.match(r"^(torch\.ops|aten)\.", d))
            if not (is_extern or is_fallback):
                if target is not None:
                    new_storage(target, None)
                continue
            who = d.split(".", 1)[1] if is_extern else d
            reads = [sid for a in call.args if (sid := _storage_of(a, names)) is not None]
            writes = []
            for kw in call.keywords:
                sid = _storage_of(kw.value, names)
                if sid is None:
                    continue
                (writes.append(("out", sid)) if kw.arg == "out" else reads.append(sid))
            if target is not None:
                new_storage(target, None)
                writes.append(("result", names[target]))
            launch(who, reads, writes)
    for f in flows:
        del f["_sid"]
    return flows


# ==== static: a kernel's own source =========================================================

def _is_constexpr(annotation: ast.AST | None) -> bool:
    return annotation is not None and _dotted(annotation).split(".")[-1] == "constexpr"


def _is_jit(dec: ast.AST) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return _dotted(target).split(".")[-1] == "jit"


def jit_function(tree: ast.Module) -> ast.FunctionDef | None:
    """The kernel: the top-level (triton.)jit function that Inductor's heuristics decorate
    (a scan's or a custom combine's `_triton_helper_fn_*` helpers come before it, jit
    alone), else the last jit function."""
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and
             any(_is_jit(d) for d in n.decorator_list)]
    decorated = [n for n in found if len(n.decorator_list) > 1]
    return (decorated or found or [None])[-1]


def launch_params(fn: ast.FunctionDef) -> list[str]:
    """The parameters a call site passes: every non-constexpr parameter, in order."""
    return [a.arg for a in fn.args.args if not _is_constexpr(a.annotation)]


def _inductor_meta_node(tree: ast.Module) -> ast.expr | None:
    """The `inductor_meta=` argument of the kernel's heuristics decorator, if any."""
    fn = jit_function(tree)
    for dec in (fn.decorator_list if fn is not None else []):
        if isinstance(dec, ast.Call):
            for kw in dec.keywords:
                if kw.arg == "inductor_meta":
                    return kw.value
    return None


class _EmptySets(ast.NodeTransformer):
    """`set()` (how Inductor writes an empty set, e.g. autotune_hints) as a literal."""

    def visit_Call(self, node: ast.Call):
        if (isinstance(node.func, ast.Name) and node.func.id == "set" and not node.args
                and not node.keywords):
            return ast.copy_location(ast.Set(elts=[]), node)
        return self.generic_visit(node)


def _literal_dict(node: ast.expr | None) -> dict | None:
    try:
        v = ast.literal_eval(_EmptySets().visit(copy.deepcopy(node))) if node is not None else None
    except (ValueError, SyntaxError, TypeError):
        return None
    return v if isinstance(v, dict) else None


def inductor_meta(tree: ast.Module) -> dict:
    """The literal `inductor_meta={...}` of the kernel's heuristics decorator ({} when it
    is not a literal)."""
    return _literal_dict(_inductor_meta_node(tree)) or {}


def with_inductor_meta(kernel_source: str, extra: dict) -> str | None:
    """The kernel's source with the entries of `extra` appended to its decorator's
    `inductor_meta={...}` display, where they override the kernel's own (None when it has
    none): a copy of the kernel that runs with Inductor options its compile did not have.
    The heuristics decorator reads them from there when the module loads (the config list)
    and on the first launch (autotuning, coordinate descent)."""
    try:
        tree = ast.parse(kernel_source)
    except SyntaxError:
        return None
    node = _inductor_meta_node(tree)
    if not isinstance(node, ast.Dict):
        return None
    raw = kernel_source.encode()
    starts = [0]
    for line in raw.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    items = ", ".join(f"{k!r}: {v!r}" for k, v in extra.items())
    # ast's columns are UTF-8 byte offsets; a later key of a dict display wins
    if node.values:
        last = node.values[-1]
        at, text = starts[last.end_lineno - 1] + last.end_col_offset, ", " + items
    else:
        at, text = starts[node.lineno - 1] + node.col_offset + 1, items
    return (raw[:at] + text.encode() + raw[at:]).decode()


def call_site_names(kernel_source: str, nargs: int | None = None) -> list[str]:
    """The names of the arguments at a `.run(` call site: the jit function's non-constexpr
    parameters, then Inductor's extra launcher args (a template's grid ints)."""
    try:
        tree = ast.parse(kernel_source)
    except SyntaxError:
        return [f"arg{i}" for i in range(nargs or 0)]
    fn = jit_function(tree)
    names = launch_params(fn) if fn is not None else []
    names += [str(x) for x in inductor_meta(tree).get("extra_launcher_args", [])]
    if nargs is not None:
        names = names[:nargs] + [f"arg{i}" for i in range(len(names), nargs)]
    return names


def arg_role(name: str, is_tensor: bool, mutated: set) -> str:
    """in / out / in_out / scalar, from Inductor's argument naming."""
    if not is_tensor:
        return "scalar"
    if name.startswith("in_out_ptr"):
        return "in_out"
    if name.startswith("out_ptr"):
        return "out"
    return "in_out" if name in mutated else "in"


# ==== static: kernel files ==================================================================

def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _is_pow2(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0


def tune_values(key: str, value: Any, numels: dict) -> list | None:
    """The tuner's candidate values for one LAUNCH key (ascending, the default included);
    None when the key is not tunable (not a power-of-two block size or warp/stage count)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if key == NUM_WARPS:
        return sorted({1, 2, 4, 8, 16} | {value})
    if key == NUM_STAGES:
        return sorted({1, 2, 3, 4} | {value})
    if not (key.endswith("BLOCK") and _is_pow2(value)):
        return None
    lo, hi = max(1, value // 4), value * 4
    for numel_name in _NUMEL_OF_BLOCK.get(key, ()):
        n = numels.get(numel_name)
        if isinstance(n, int) and n > 0:
            hi = min(hi, next_pow2(n))
            break
    vals = {value}
    v = lo
    while v <= hi:
        vals.add(v)
        v *= 2
    return sorted(vals)


def launch_globals(launch: dict) -> list[tuple[str, Any]]:
    """[(LAUNCH_KEY, value)]: the config's kwargs, then num_warps and num_stages."""
    out = [(LAUNCH + k, v) for k, v in launch.items() if k not in ("num_warps", "num_stages")]
    for k, g in (("num_warps", NUM_WARPS), ("num_stages", NUM_STAGES)):
        if k in launch:
            out.append((LAUNCH + g, launch[k]))
    return out


def seed_point(launch: dict, seed: dict | None) -> dict:
    """LAUNCH_KEY -> value of a seed config (another compile mode's choice for the same
    kernel) where it differs from `launch`; {} when it names other keys (another kernel
    shape) or equals it."""
    if not seed:
        return {}
    mine, theirs = dict(launch_globals(launch)), dict(launch_globals(seed))
    if set(mine) != set(theirs) or mine == theirs:
        return {}
    return theirs


def tune_line(launch: dict, numels: dict, seed: dict | None = None) -> str:
    parts = []
    seeded = seed_point(launch, seed)
    for g, v in launch_globals(launch):
        vals = tune_values(g[len(LAUNCH):], v, numels)
        if vals and g in seeded and seeded[g] not in vals:
            if tune_values(g[len(LAUNCH):], seeded[g], {}) is None:
                seeded = {}  # a value the tuner cannot write: no seed
            else:
                vals = sorted(set(vals) | {seeded[g]})
        if vals:
            parts.append(f"{g}=[{','.join(str(x) for x in vals)}]")
    if not parts:
        return ""
    # tune-local: Inductor's own config is the starting point; the tuner searches around
    # it rather than from random far-away points (slow, often not compilable).
    text = "# kgate:tune " + " ".join(parts) + "\n# kgate:tune-local"
    # tune-seed: max-autotune's choice for this kernel, tried first.
    tunable = {p.split("=")[0] for p in parts}
    if seeded and set(seeded) <= tunable:
        text += "\n# kgate:tune-seed " + " ".join(f"{g}={v}" for g, v in seeded.items())
    return text


def _describe_arg(a: dict) -> str:
    if a["role"] == "scalar":
        return str(a.get("value", ""))
    return (f"{a.get('dtype', '?')}[{', '.join(str(s) for s in a.get('shape', []))}]  "
            f"stride [{', '.join(str(s) for s in a.get('stride', []))}]  "
            f"offset {a.get('offset', 0)}")


def _time_line(entry: dict) -> str:
    us = entry.get("device_us", 0.0)
    if not us:
        return "#   time: not profiled"
    text = (f"#   time: {us:.2f} us per model call, {100 * entry.get('share', 0.0):.1f}% of "
            "the model's GPU time")
    if entry.get("bandwidth_fraction"):
        text += f", {100 * entry['bandwidth_fraction']:.0f}% of copy bandwidth"
    return text


def kernel_header(entry: dict, tune_text: str) -> str:
    """A kernel file's leading comment block: kgate:kernel, the tune lines, the call-site
    contract (Inductor's kernel files and kgate's template files alike)."""
    name = entry["name"]
    args = entry.get("args", [])
    lines = [f"# kgate:kernel {name}"]
    if tune_text:
        lines.append(tune_text)
    lines += ["#",
              "# Call-site contract: a replacement must accept exactly these arguments and "
              "honour these",
              "# layouts (strides and offsets are baked into the index arithmetic below).",
              f"#   {name}.run({', '.join([a['name'] for a in args] + ['stream=...'])})"]
    for a in args:
        lines.append(f"#   {a['name']:<10} {a['role']:<8} {_describe_arg(a)}".rstrip())
    if entry.get("aten_ops"):
        lines.append(f"#   fuses: {', '.join(entry['aten_ops'])}")
    for pa in entry.get("partners", []):
        lines.append(f"#   reads {', '.join(pa['buffers'])} ({pa['bytes']} bytes) from "
                     f"{pa['kernel']}, their only reader")
        lines.append(f"#     (a pair: kernels/{pa['kernel']}.py may change in the same experiment, e.g. do "
                     "nothing while this kernel computes them)")
    lines.append(_time_line(entry))
    lines.append("#")
    return "\n".join(lines) + "\n"


def kernel_file_text(entry: dict, kernel_source: str) -> str:
    """The kernel file `inventory` writes for one Triton kernel: the header, the LAUNCH_*
    defaults, then Inductor's source."""
    numels = {a["name"]: a.get("value") for a in entry.get("args", []) if a["role"] == "scalar"}
    head = kernel_header(entry, tune_line(entry.get("launch", {}), numels,
                                          entry.get("seed_launch")))
    lines = []
    glob = launch_globals(entry.get("launch", {}))
    if glob:
        lines += ["# Launch config: Inductor's choice when this file was written. The kernel "
                  "runs with exactly",
                  "# these values; edit them (or the kernel below) to try another."]
        lines += [f"{g} = {v!r}" for g, v in glob]
    body = kernel_source.lstrip("\n")
    return (head + "".join(line + "\n" for line in lines) + "\n" + body +
            ("" if body.endswith("\n") else "\n"))


def parse_kernel_header(text: str, path: str) -> str | None:
    """NAME of the file's `# kgate:kernel NAME` line (in its leading comment block), None
    when it has none. A malformed or repeated header raises SourceError."""
    found: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = _HEADER_RE.match(line)
        if not m:
            continue
        tokens = m.group(1).split()
        if len(tokens) != 1 or not source.is_identifier(tokens[0]):
            raise source.SourceError(f"{path}:{lineno}: malformed '# kgate:kernel' line "
                                     "(expected '# kgate:kernel NAME')")
        if found is not None:
            raise source.SourceError(f"{path}:{lineno}: a second '# kgate:kernel' line "
                                     "(a kernel file names one kernel)")
        found = tokens[0]
    return found


def launch_config(tree: ast.Module) -> tuple[dict, int | None, int | None]:
    """(kwargs, num_warps, num_stages) from the top-level LAUNCH_* assignments; the last
    assignment of a name wins, as when the module runs."""
    kwargs: dict = {}
    warps = stages = None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith(LAUNCH)):
            continue
        key = node.targets[0].id[len(LAUNCH):]
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, SyntaxError, TypeError):
            raise source.SourceError(f"{node.lineno}: {node.targets[0].id} must be a literal "
                                     "value") from None
        if key == NUM_WARPS:
            warps = value
        elif key == NUM_STAGES:
            stages = value
        else:
            kwargs[key] = value
    return kwargs, warps, stages


def same_ast(a: ast.Module, b: ast.Module) -> bool:
    """Equal programs up to comments and formatting."""
    return ast.dump(a) == ast.dump(b)


# ==== swap =================================================================================

def _code_cache_modules() -> list:
    from torch._inductor.codecache import PyCodeCache
    return PyCodeCache.modules


def is_wrapper_module(mod, name: str) -> bool:
    """A live Inductor wrapper module that launches kernel `name`: it has `call` and the
    global, and is not a kernel module (those import triton_heuristics; with
    benchmark_kernel they define `call` too)."""
    d = getattr(mod, "__dict__", {})
    return (callable(d.get("call")) and name in d and "triton_heuristics" not in d
            and not d.get("__kgate_kernel__", False))


class SwappedModel:
    """The compiled model with some Triton kernels replaced for the length of each call.

    The wrapper's `call` looks its kernels up as module globals on every call, so putting
    an override there takes effect at once; restoring in `finally` means two slots that
    share one wrapper module never see each other's kernels. The wrapper modules are
    re-scanned when the code cache grew (a recompile or cache-hit reload makes new ones)."""

    def __init__(self, compiled: Callable, overrides: dict,
                 modules: Callable[[], list] = _code_cache_modules):
        self.compiled = compiled
        self.overrides = dict(overrides)
        self._modules = modules
        self._seen = -1
        self._targets: list = []
        self.active: dict = {}  # NAME -> the original it replaces, during a call

    def targets(self) -> list:
        mods = self._modules()
        if len(mods) != self._seen:
            self._targets = [(m, n) for m in list(mods) for n in self.overrides
                             if is_wrapper_module(m, n)]
            self._seen = len(mods)
        return self._targets

    def __call__(self, *args):
        if not self.overrides:
            return self.compiled(*args)
        saved = []
        try:
            for mod, name in self.targets():
                orig = mod.__dict__[name]
                saved.append((mod, name, orig))
                self.active[name] = orig
                setattr(mod, name, self.overrides[name])
            return self.compiled(*args)
        finally:
            for mod, name, orig in reversed(saved):
                setattr(mod, name, orig)
            self.active.clear()


# ==== torch: the compiled reference =======================================================

def _torch():
    import torch
    return torch


def _private(what: str, getter: Callable):
    """A private Inductor API, or a loud error naming the torch version."""
    try:
        return getter()
    except (ImportError, AttributeError) as e:
        torch = _torch()
        raise RuntimeError(f"compiled mode needs {what}, which torch {torch.__version__} "
                           f"does not provide ({type(e).__name__}: {e})") from None


def _py_code_cache():
    """Inductor's PyCodeCache: the module cache wrappers and kernel files load through."""
    return _private("PyCodeCache", lambda: __import__(
        "torch._inductor.codecache", fromlist=["PyCodeCache"]).PyCodeCache)


def capture_compile(compiled: Callable, inputs: list) -> list[tuple[str, Any]]:
    """Runs the first (compiling) call with GraphLowering.save_output_code hooked:
    [(wrapper source, live wrapper module)] per Inductor graph. The live module is the
    newest PyCodeCache module loaded from that source's path."""
    torch = _torch()
    GraphLowering = _private("GraphLowering.save_output_code",
                             lambda: __import__("torch._inductor.graph",
                                                fromlist=["GraphLowering"]).GraphLowering)
    PyCodeCache = _py_code_cache()
    if "save_output_code" not in GraphLowering.__dict__:
        raise RuntimeError("compiled mode needs GraphLowering.save_output_code, which torch "
                           f"{torch.__version__} does not have")
    sources: list[str] = []
    prev = GraphLowering.__dict__["save_output_code"]
    GraphLowering.save_output_code = staticmethod(sources.append)
    try:
        with torch.no_grad():
            compiled(*inputs)
    finally:
        GraphLowering.save_output_code = prev
    out = []
    for src in sources:
        _, path = PyCodeCache.write(src)
        mods = [m for m in PyCodeCache.modules if getattr(m, "__file__", None) == path]
        out.append((src, mods[-1] if mods else None))
    return out


def describe_value(v) -> dict:
    """Metadata of one call-site argument (no data is kept)."""
    torch = _torch()
    from .stats import dtype_name
    if isinstance(v, torch.Tensor):
        return {"dtype": dtype_name(v.dtype), "shape": list(v.shape),
                "stride": list(v.stride()), "offset": int(v.storage_offset()),
                "bytes": int(v.numel() * v.element_size())}
    if isinstance(v, (bool, int, float)) or v is None:
        return {"value": v}
    return {"value": repr(v)}


class _StandIn:
    """Stands in for the kernel global NAME of a wrapper module for one model call: the
    wrapper calls its `run`; any other attribute is `kernel`'s."""

    def __init__(self, name: str, kernel):
        self.name, self.kernel = name, kernel

    def __getattr__(self, attr):
        if attr == "kernel":  # not set yet (copy, pickle): no recursion
            raise AttributeError(attr)
        return getattr(self.kernel, attr)


class _Tap(_StandIn):
    """Records the metadata of the first launch's arguments, then launches the real
    kernel."""

    def __init__(self, name: str, kernel, sink: dict):
        super().__init__(name, kernel)
        self.sink = sink

    def run(self, *args, **kwargs):
        if self.name not in self.sink:
            self.sink[self.name] = [describe_value(a) for a in args]
        return self.kernel.run(*args, **kwargs)


def live_launch(kernel) -> dict:
    """The autotuned config a CachingAutotuner launched with: kwargs + warps + stages."""
    launchers = getattr(kernel, "launchers", None) or []
    cfg = getattr(launchers[0], "config", None) if launchers else None
    if cfg is None:
        return {}
    out = dict(getattr(cfg, "kwargs", {}) or {})
    out["num_warps"] = getattr(cfg, "num_warps", None)
    out["num_stages"] = getattr(cfg, "num_stages", None)
    return {k: v for k, v in out.items() if v is not None}


class CompiledReference:
    """torch.compile of a fresh Model with the reference weights, its captured wrappers,
    and the static + tapped inventory of its kernels (built once per worker and problem;
    the inventory op and compiled-mode compiles share it)."""

    def __init__(self):
        self.compiled = None
        self.error = ""
        self.graphs: list = []          # [(source, module)]
        self.parsed: list = []          # [ParsedWrapper]
        self.kernels: dict = {}         # NAME -> KernelDef (first graph that has it)
        self.graph_of: dict = {}        # NAME -> graph index
        self.entries: dict = {}         # NAME -> inventory entry (unprofiled)
        self.ambiguous: list = []       # names two graphs give different programs (no slot)
        self.device = ""
        self._originals: dict | None = None

    # -- build ---------------------------------------------------------------------------
    def build(self, model, inputs: list, compile_mode: str, device: str) -> None:
        torch = _torch()
        import torch._dynamo
        self.device = device
        torch._dynamo.reset()
        self.compiled = torch.compile(model, mode=COMPILE_MODES[compile_mode], dynamic=False)
        try:
            self.graphs = capture_compile(self.compiled, inputs)
        except (Exception, SystemExit) as e:
            self.error = f"torch.compile failed: {source.exception_message(e)}"
            self.compiled = None
            return
        self.index([parse_wrapper(src) for src, _ in self.graphs])
        self._tap(inputs)

    def index(self, parsed: list) -> None:
        """The kernels of the parsed wrappers by name. Inductor numbers kernels per graph,
        so two graphs (a graph break) can each have a kernel of one name: with one program
        it is one slot (an edit applies to both); with two it is no slot at all -- a kernel
        file could not say which it replaces, and a swap by name would put one graph's
        program in the other's place -- and is listed in `ambiguous`."""
        self.parsed = parsed
        self.ambiguous = []
        for i, pw in enumerate(parsed):
            for k in pw.kernels:
                if k.name not in self.kernels:
                    self.kernels[k.name] = k
                    self.graph_of[k.name] = i
                elif self.kernels[k.name].source != k.source and k.name not in self.ambiguous:
                    self.ambiguous.append(k.name)
        for name in self.ambiguous:
            del self.kernels[name], self.graph_of[name]

    def live_kernel(self, name: str):
        mod = self.graphs[self.graph_of[name]][1]
        return getattr(mod, name, None) if mod is not None else None

    def call_standing_in(self, inputs: list, names, make: Callable[[str, Any], Any]) -> dict:
        """One model call (no grad) with the global NAME of each kernel of `names` in its
        own graph's wrapper module replaced by make(NAME, that global), restored after;
        a kernel whose module is not loaded is left out. Returns NAME -> its stand-in."""
        torch = _torch()
        made: dict = {}
        saved = []
        try:
            for name in names:
                kernel = self.live_kernel(name)
                if kernel is None:
                    continue
                mod = self.graphs[self.graph_of[name]][1]
                made[name] = make(name, kernel)
                saved.append((mod, name, kernel))
                setattr(mod, name, made[name])
            with torch.no_grad():
                self.compiled(*inputs)
        finally:
            for mod, name, orig in reversed(saved):
                setattr(mod, name, orig)
        return made

    def _tap(self, inputs: list) -> None:
        """One model call with every kernel global behind a _Tap, then the entries: roles,
        argument metadata, the live autotuned config."""
        sink: dict = {}
        self.call_standing_in(inputs, self.kernels, lambda name, k: _Tap(name, k, sink))
        for name, k in self.kernels.items():
            self.entries[name] = self._entry(k, sink.get(name), self.live_kernel(name))

    def _entry(self, k: KernelDef, values: list | None, live) -> dict:
        meta = dict(getattr(live, "inductor_meta", {}) or {})
        try:
            meta = meta or inductor_meta(ast.parse(k.source))
        except SyntaxError:
            pass
        mutated = set(meta.get("mutated_arg_names", []) or [])
        names = call_site_names(k.source, len(values) if values is not None else None)
        args = []
        for i, n in enumerate(names):
            v = values[i] if values is not None else {}
            is_tensor = "dtype" in v if values is not None else "ptr" in n
            a = {"name": n, "role": arg_role(n, is_tensor, mutated)}
            if is_tensor:
                a.update({key: v[key] for key in ("dtype", "shape", "stride", "offset")
                          if key in v})
                a["_bytes"] = v.get("bytes", 0)
            else:
                a["value"] = v.get("value")
            args.append(a)
        nbytes = sum(a.get("_bytes", 0) * (2 if a["role"] == "in_out" else 1) for a in args)
        for a in args:
            a.pop("_bytes", None)
        return {"name": k.name, "fn_name": k.fn_name, "category": k.category,
                "graph": self.graph_of[k.name], "calls": k.calls, "aten_ops": k.aten_ops,
                "source_nodes": k.source_nodes, "args": args, "launch": live_launch(live),
                "device_us": 0.0, "share": 0.0, "bytes": nbytes,
                "bandwidth_fraction": 0.0, "amdahl_bound": 1.0}

    # -- kernel files --------------------------------------------------------------------
    def originals(self) -> dict:
        """NAME -> the kernel file text `inventory` writes (unprofiled: the timing comment
        differs, the program does not)."""
        if self._originals is None:
            self._originals = {n: kernel_file_text(e, self.kernels[n].source)
                               for n, e in self.entries.items()}
        return self._originals

    # -- the inventory answer ------------------------------------------------------------
    def no_triton_reason(self) -> str:
        if self.error:
            return self.error
        if not self.graphs:
            return "torch.compile produced no Inductor graph"
        if self.kernels:
            return ""
        if self.ambiguous:
            return ("no Triton kernel kgate can swap: two graphs give the kernel name"
                    f"{'s' if len(self.ambiguous) != 1 else ''} {', '.join(self.ambiguous)} "
                    "to different programs")
        cpp = sum(1 for pw in self.parsed for o in pw.other_kernels if o["kind"] == "cpp")
        ext = sum(e["calls"] for pw in self.parsed for e in pw.externs)
        parts = []
        if cpp:
            on = " on the CPU" if self.device == "cpu" else ""
            parts.append(f"{cpp} C++ kernel{'s' if cpp != 1 else ''}{on}")
        if ext:
            parts.append(f"{ext} extern call{'s' if ext != 1 else ''}")
        return "torch.compile generated no Triton kernels" + (
            f" ({', '.join(parts)})" if parts else "")


def _extern_owner_names(name: str, kind: str) -> set[str]:
    """The profiler's CPU-op names an extern or fallback call shows up under."""
    if kind == "fallback":
        op = name.split(".")[3] if name.count(".") >= 4 else name
    else:
        op = {"bias_addmm": "addmm", "mm_dtype": "mm", "bmm_dtype": "bmm",
              "conv1x1_via_mm": "mm"}.get(name, name)
    names = {f"aten::{op}"}
    if op == "convolution":
        names |= {"aten::_convolution", "aten::cudnn_convolution",
                  "aten::cudnn_convolution_transpose", "aten::convolution_overrideable"}
    for sdpa, fwd in (("_scaled_dot_product_cudnn_attention", "_cudnn_attention_forward"),
                      ("_scaled_dot_product_flash_attention", "_flash_attention_forward"),
                      ("_scaled_dot_product_efficient_attention",
                       "_efficient_attention_forward")):
        if op == sdpa:
            names.add(f"aten::{fwd}")
    return names


def profile_model(compiled: Callable, inputs: list, iters: int) -> tuple[dict, float]:
    """(GPU time per CPU owner op, total GPU kernel time), both per model call, from
    torch.profiler over `iters` calls after a warm-up. Each GPU kernel is counted once,
    under the innermost CPU op that launched it; `owner` maps that op to the chain of its
    ancestors so an extern nested under a helper op is still found."""
    torch = _torch()
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        compiled(*inputs)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                compiled(*inputs)
            torch.cuda.synchronize()
    owners: dict = collections.defaultdict(float)
    linked = 0.0
    for ev in prof.events():
        if ev.device_type != DeviceType.CPU or not ev.kernels:
            continue
        chain = []
        p = ev
        while p is not None:
            chain.append(p.name)
            p = p.cpu_parent
        t = sum(k.duration for k in ev.kernels)
        owners[tuple(chain)] += t / iters
        linked += t
    device_total = sum(ev.time_range.elapsed_us() for ev in prof.events()
                       if ev.device_type == DeviceType.CUDA)
    total = max(linked, device_total) / iters
    return dict(owners), total


def apply_profile(entries: list, externs: list, owners: dict, total: float,
                  copy_bw_gbps: float) -> None:
    """Fills device_us/share/bandwidth/amdahl into the kernel and extern rows."""
    by_name = {e["name"]: e for e in entries}
    for chain, us in owners.items():
        if chain[0] in by_name:
            by_name[chain[0]]["device_us"] += us
            continue
        for op in chain:
            hits = [x for x in externs if op in _extern_owner_names(x["name"], x["kind"])]
            if hits:
                calls = sum(x["calls"] for x in hits) or 1
                for x in hits:
                    x["device_us"] += us * x["calls"] / calls
                break
    for row in entries + externs:
        row["share"] = _share(row["device_us"], total)
    for e in entries:
        fill_bandwidth(e, copy_bw_gbps)
    for row in entries + externs:
        row["device_us"] = round(row["device_us"], 3)


def _share(part: float, total: float) -> float:
    """part / total rounded down (so the rows' shares never sum past 1)."""
    return math.floor(part / total * 1e6) / 1e6 if total > 0 else 0.0


def fill_bandwidth(e: dict, copy_bw_gbps: float) -> None:
    us, share = e["device_us"], e["share"]
    if us > 0 and copy_bw_gbps > 0:
        floor_us = e["bytes"] / (copy_bw_gbps * 1e3)
        e["bandwidth_fraction"] = round(floor_us / us, 6)
        # `bytes` counts every tensor argument whole; a kernel reading part of a view
        # (a split of a fused QKV buffer) shows over 100 %. The bound never goes below 1.
        e["amdahl_bound"] = round(1.0 / (1.0 - share + share * min(1.0, floor_us / us)), 6)
    else:
        e["bandwidth_fraction"], e["amdahl_bound"] = 0.0, 1.0


def seed_targets(inv: dict, min_bound: float) -> list[str]:
    """The kernels worth Inductor's extra search, highest Amdahl bound first: those whose
    bound reaches `min_bound` (the keep threshold the plan searches by; 0: all of them),
    or all of them when the profile gave no times to tell. GEMM/conv templates are never
    seeded (coordinate descent leaves them as they are)."""
    kernels = [k for k in inv.get("kernels") or [] if k.get("category") != "template"]
    if min_bound > 0 and any(k.get("device_us", 0.0) > 0 for k in kernels):
        kernels = [k for k in kernels
                   if k.get("amdahl_bound", 0.0) <= 0 or k.get("amdahl_bound", 0.0) >= min_bound]
    return [k["name"] for k in sorted(kernels, key=lambda k: -k.get("amdahl_bound", 0.0))]


def inventory_result(ref: CompiledReference, compile_mode: str, device: str,
                     profile: bool, iters: int, inputs: list, copy_bw_gbps: float) -> dict:
    """The `inventory` op's answer, profiled (its kernel files: write_kernel_files)."""
    torch = _torch()
    from .worker import _triton_version
    entries = [copy.deepcopy(ref.entries[n]) for n in ref.kernels]
    externs, other = [], []
    for i, pw in enumerate(ref.parsed):
        externs += [{"name": x["name"], "kind": x["kind"], "graph": i, "calls": x["calls"],
                     "device_us": 0.0, "share": 0.0} for x in pw.externs]
        other += [{"name": o["name"], "kind": o["kind"], "graph": i}
                  for o in pw.other_kernels]
        other += [{"name": k.name, "kind": "triton-ambiguous", "graph": i}
                  for k in pw.kernels if k.name in ref.ambiguous]
    total = 0.0
    t0 = time.perf_counter()
    if profile and device == "cuda" and ref.compiled is not None and ref.graphs:
        owners, total = profile_model(ref.compiled, inputs, iters)
        apply_profile(entries, externs, owners, total, copy_bw_gbps)
    profile_s = time.perf_counter() - t0
    tri = sum(e["share"] for e in entries)
    ext = sum(x["share"] for x in externs)
    flows = [dict(f, graph=i) for i, pw in enumerate(ref.parsed) for f in pw.flows]
    partners = pair_partners(flows, {e["name"]: e.get("calls", 0) for e in entries})
    for e in entries:
        if e["name"] in partners:
            e["partners"] = partners[e["name"]]
    return {"inventory_version": INVENTORY_VERSION,
            "torch": torch.__version__.split("+")[0], "triton": _triton_version(),
            "device": device, "compile_mode": compile_mode, "graphs": len(ref.graphs),
            "kernels": entries, "externs": externs, "other_kernels": other,
            "model_device_us": round(total, 3),
            "profile_s": round(profile_s, 3),
            "triton_share": round(float(tri), 6), "extern_share": round(float(ext), 6),
            "no_triton_reason": ref.no_triton_reason(),
            "flows": flows,
            "seed_mode": ""}


def apply_seeds(inv: dict, seeds: dict, seed_mode: str) -> int:
    """Each kernel of the inventory that `seeds` (NAME -> launch config) configures
    otherwise than its own compile did gets it as `seed_launch` (its file then carries a
    kgate:tune-seed line). Returns how many did."""
    n = 0
    for e in inv.get("kernels", []):
        launch = seeds.get(e["name"])
        if launch and seed_point(e.get("launch", {}), launch):
            e["seed_launch"], e["seed_mode"] = launch, seed_mode
            n += 1
    inv["seed_mode"] = seed_mode
    return n


def write_kernel_files(inv: dict, ref: CompiledReference, out_dir: str, device: str) -> None:
    """One file per kernel of the inventory in out_dir (each entry's `file`), and the
    template offers beside them."""
    os.makedirs(out_dir, exist_ok=True)
    entries = inv.get("kernels", [])
    for e in entries:
        e["file"] = f"{e['name']}.py"
        with open(os.path.join(out_dir, e["file"]), "w", encoding="utf-8") as f:
            f.write(kernel_file_text(e, ref.kernels[e["name"]].source))
    write_template_offers(entries, out_dir, _device_limits(device),
                          {n: ref.kernels[n].source for n in ref.kernels})


def _device_limits(device: str) -> dict:
    """What the templates size themselves by: SM count and L2 bytes (0 when unknown)."""
    torch = _torch()
    if device != "cuda" or not torch.cuda.is_available():
        return {"num_sms": 0, "l2_bytes": 0}
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {"num_sms": int(props.multi_processor_count),
            "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0)}


TEMPLATES_DIR = "templates"


def write_template_offers(entries: list, kernels_dir: str, device: dict,
                          sources: dict | None = None) -> None:
    """Every template that matches a kernel, instantiated as a kernel file under
    KERNELS_DIR/../templates/NAME/TEMPLATE.py; each entry lists its offers as
    `templates: [{template, why, file}]` (file relative to KERNELS_DIR/..). `sources`:
    kernel name -> Inductor's source of it, which some templates match on."""
    root = os.path.dirname(os.path.abspath(kernels_dir))
    for e in entries:
        found = templates.offers(e, device, kernel_header,
                                 (sources or {}).get(e["name"], ""))
        if not found:
            continue
        e["templates"] = []
        for o in found:
            rel = os.path.join(TEMPLATES_DIR, e["name"], o["template"] + ".py")
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(o["text"])
            e["templates"].append({"template": o["template"], "why": o["why"], "file": rel})


# ==== torch: compiling a candidate's kernel files =========================================

class CompileFailure(Exception):
    """compiled: false with this log (and findings)."""

    def __init__(self, log: str, findings: list | None = None):
        super().__init__(log)
        self.log = log
        self.findings = findings or []


@dataclass
class Override:
    name: str
    path: str
    text: str           # what gets loaded
    tree: ast.Module
    autotuner: Any = None
    cache_path: str = ""


def read_kernel_file(path: str) -> tuple[str, ast.Module, str | None]:
    try:
        text = source.read_source(path)
        tree = source.parse_source(text, path)
        name = parse_kernel_header(text, path)
    except source.SourceError as e:
        raise CompileFailure(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise CompileFailure(f"{path}: {e}") from None
    return text, tree, name


def override_set(kernels_dir: str, path: str, own_name: str | None, own_text: str,
                 own_tree: ast.Module, pins: list | None = None) -> dict:
    """NAME -> (path, text, tree): every kernel file in kernels_dir, the source_path file
    replacing the one of its NAME, and each file of `pins` the one of its NAME (a pair
    experiment's partner as kept, for the baseline: the workspace's copy may be the
    experiment's edit)."""
    found: dict = {}
    if kernels_dir and os.path.isdir(kernels_dir):
        for fn in sorted(os.listdir(kernels_dir)):
            p = os.path.join(kernels_dir, fn)
            if not fn.endswith(".py") or not os.path.isfile(p):
                continue
            if own_name is not None and os.path.realpath(p) == os.path.realpath(path):
                continue
            text, tree, name = read_kernel_file(p)
            if name is None:
                continue
            if name in found:
                raise CompileFailure(f"{p}:1: kgate:kernel {name} is also named by "
                                     f"{found[name][0]}")
            found[name] = (p, text, tree)
    for pin in pins or []:
        if not os.path.isfile(pin):
            raise CompileFailure(f"{pin}: no such file (a pinned partner kernel file)")
        text, tree, name = read_kernel_file(pin)
        if name is None:
            raise CompileFailure(f"{pin}:1: not a kernel file (no '# kgate:kernel NAME' line)")
        if name != own_name:
            found[name] = (pin, text, tree)
    if own_name is not None:
        found[own_name] = (path, own_text, own_tree)
    return found


def _pin_config(k, kwargs: dict, warps, stages, path: str) -> None:
    """Makes the autotuner launch exactly the file's LAUNCH_* config (before its first
    launch; an already-compiled one, the same text loaded again, is left as it is)."""
    torch = _torch()
    if not hasattr(k, "configs") or not hasattr(k, "launchers"):
        raise RuntimeError(f"{path}: cannot pin the launch config: CachingAutotuner in torch "
                           f"{torch.__version__} has no 'configs'/'launchers'")
    if k.launchers or getattr(k, "compile_results", None):
        return
    import triton
    extra = {}
    if warps is not None:
        extra["num_warps"] = int(warps)
    if stages is not None:
        extra["num_stages"] = int(stages)
    k.configs = [triton.Config(dict(kwargs), **extra)]


def _locate(exc: BaseException, files: dict, fallback: str) -> str:
    """'PATH:LINE: ExcType: msg' with PATH the kernel file whose loaded copy the innermost
    frame lies in (files: loaded path -> kernel file), else 'FALLBACK: ExcType: msg'."""
    import traceback
    msg = source.exception_message(exc)
    for fr in reversed(traceback.extract_tb(exc.__traceback__)):
        if fr.filename in files:
            return f"{files[fr.filename]}:{fr.lineno}: {msg}"
    return f"{fallback}: {msg}"


MAX_ELEMENTS_PER_THREAD = 256


def oversized_launch(kwargs: dict, warps, original: tuple) -> str:
    """Why a launch config is not worth compiling ("" when it is): more block elements per
    thread than MAX_ELEMENTS_PER_THREAD (or than the original config, when that is more)
    makes Triton unroll and spill for minutes (R0_BLOCK 16384 x XBLOCK 8 on one warp ran
    past a 120 s compile deadline on the H200) and can only be slower."""
    def per_thread(kw: dict, w) -> float:
        n = 1
        for k, v in kw.items():
            if k.endswith("BLOCK") and isinstance(v, int) and v > 0:
                n *= v
        return n / (32 * max(1, int(w or 4)))
    cap = max(MAX_ELEMENTS_PER_THREAD, per_thread(original[0], original[1]))
    got = per_thread(kwargs, warps)
    if got <= cap:
        return ""
    blocks = " x ".join(f"{k} {v}" for k, v in kwargs.items() if k.endswith("BLOCK"))
    return (f"launch config {blocks} on {int(warps or 4)} warps puts {got:.0f} block elements "
            f"on each thread (at most {cap:.0f}): not compiled")


def load_override(ov: Override, original_source: str) -> None:
    """PyCodeCache.load of the kernel text (Triton's JIT needs a real file); the
    CachingAutotuner is the global named after the jit function; its config pinned, its
    launch signature checked against the call site's, then precompiled."""
    PyCodeCache = _py_code_cache()
    if template_name(ov.tree) is not None:
        return _load_template(ov, original_source, PyCodeCache)
    fn = jit_function(ov.tree)
    if fn is None:
        raise CompileFailure(f"{ov.path}:1: no @triton.jit function")
    orig_fn = jit_function(ast.parse(original_source))
    want = launch_params(orig_fn) if orig_fn is not None else []
    got = launch_params(fn)
    if got != want:
        raise CompileFailure(f"{ov.path}: launch signature ({', '.join(got)}) differs from "
                             f"the call site's ({', '.join(want)})")
    try:
        kwargs, warps, stages = launch_config(ov.tree)
    except source.SourceError as e:
        raise CompileFailure(f"{ov.path}:{e}") from None
    why = oversized_launch(kwargs, warps, launch_config(ast.parse(original_source)))
    if why:
        raise CompileFailure(f"{ov.path}: {why}")
    mod = _load_module(ov, PyCodeCache)
    k = getattr(mod, fn.name, None)
    if k is None or not hasattr(k, "run"):
        raise CompileFailure(f"{ov.path}:{fn.lineno}: {fn.name} is not a kernel Inductor can "
                             "launch (keep the @triton_heuristics decorator)")
    if kwargs or warps is not None or stages is not None:
        _pin_config(k, kwargs, warps, stages, ov.path)
    try:
        k.precompile()
    except (Exception, SystemExit) as e:
        raise CompileFailure(f"{ov.path}: the kernel does not compile: "
                             f"{source.exception_message(e)}\n{source.format_traceback(e)}") \
            from None
    ov.autotuner = k


def _load_module(ov: Override, PyCodeCache):
    """The kernel file's text as a module (PyCodeCache.load: Triton's JIT needs a real
    file), marked as a kernel module so wrapper scans skip it."""
    try:
        mod = PyCodeCache.load(ov.text)
    except (Exception, SystemExit) as e:
        raise CompileFailure(source.located_exception(e, ov.path) + "\n" +
                             source.format_traceback(e)) from None
    mod.__kgate_kernel__ = True
    ov.cache_path = getattr(mod, "__file__", "") or ""
    return mod


def template_name(tree: ast.Module) -> str | None:
    """The file's top-level `KGATE_TEMPLATE = "NAME"` (a kgate template file), else None."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == templates.TEMPLATE_KEY
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    return None


def _load_template(ov: Override, original_source: str, PyCodeCache) -> None:
    """A template file: its global NAME is a launcher whose `run` takes the call site's
    arguments in order (its own Triton kernels compile on the first launch)."""
    import inspect
    orig_fn = jit_function(ast.parse(original_source))
    want = launch_params(orig_fn) if orig_fn is not None else []
    mod = _load_module(ov, PyCodeCache)
    k = getattr(mod, ov.name, None)
    run = getattr(k, "run", None)
    if not callable(run):
        raise CompileFailure(f"{ov.path}:1: template {template_name(ov.tree)}: the module "
                             f"defines no {ov.name} with a run(...) method")
    try:
        params = inspect.signature(run).parameters.values()
    except (TypeError, ValueError) as e:
        raise CompileFailure(f"{ov.path}: {ov.name}.run has no signature: {e}") from None
    got = [q.name for q in params
           if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    if got != want:
        raise CompileFailure(f"{ov.path}: launch signature ({', '.join(got)}) differs from "
                             f"the call site's ({', '.join(want)})")
    ov.autotuner = k


@dataclass
class Screen:
    """The kernel-level screen of the edited kernel `name` in the trial call: its launch
    timed against `best` -- the copy the experiment's baseline runs (a kept kernel), or
    Inductor's own when None -- on the same call-site arguments. `time_pair(best, cand)`
    times two zero-argument launches and answers {best_us, candidate_us, samples}."""
    name: str
    best: Any
    time_pair: Callable[[Callable, Callable], dict]


class _Probe(_StandIn):
    """An override during the trial call: counts launches and, on the first launch, runs
    the original kernel on stride-preserving clones of the arguments and compares every
    tensor argument after both (the kernel-level check); with a screen, it then times the
    override against the kernel it competes with on those clones."""

    def __init__(self, name: str, kernel, swapped_ref: list, arg_names: list, check: bool,
                 screen: Screen | None = None):
        super().__init__(name, kernel)
        self.swapped_ref = swapped_ref
        self.arg_names = arg_names
        self.check = check
        self.screen = screen
        self.launches = 0
        self.result: dict | None = None
        self.screened: dict | None = None

    def run(self, *args, **kwargs):
        self.launches += 1
        if self.launches > 1 or not self.check:
            return self.kernel.run(*args, **kwargs)
        torch = _torch()
        orig = self.swapped_ref[0].active.get(self.name)
        if orig is None:
            return self.kernel.run(*args, **kwargs)
        # The check is advisory (the model-level gates decide): a GPU-sized kernel whose
        # clones do not fit is launched unchecked, and the log says so.
        try:
            clones = [_clone_strided(a) if isinstance(a, torch.Tensor) else a for a in args]
            orig.run(*clones, **kwargs)
        except torch.cuda.OutOfMemoryError:
            clones = None
            torch.cuda.empty_cache()
            self.result = {"kernel": self.name, "ok": True, "max_abs_err": 0.0, "arg": "",
                           "skipped": "out of device memory for the argument clones"}
        out = self.kernel.run(*args, **kwargs)
        if clones is not None:
            try:
                self.result = compare_args(self.name, args, clones, self.arg_names)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                self.result = {"kernel": self.name, "ok": True, "max_abs_err": 0.0, "arg": "",
                               "skipped": "out of device memory for the comparison"}
        # Timed on the clones (the model's own arguments go on as the launch left them: an
        # in-place kernel run again would change them); without clones, not screened. A
        # kernel that computed something else is not screened either: the model-level
        # gates say what is wrong with it, not that it is slow.
        if clones is not None and self.result is not None and self.result["ok"]:
            self._time(orig, clones, kwargs)
        del clones
        return out

    def _time(self, orig, args, kwargs) -> None:
        if self.screen is None:
            return
        best = self.screen.best if self.screen.best is not None else orig
        try:
            t = self.screen.time_pair(lambda: best.run(*args, **kwargs),
                                      lambda: self.kernel.run(*args, **kwargs))
        except _torch().cuda.OutOfMemoryError:
            _torch().cuda.empty_cache()
            return
        self.screened = {"kernel": self.name,
                         "against": "kept" if self.screen.best is not None else "inductor",
                         "best_us": float(t["best_us"]), "candidate_us": float(t["candidate_us"]),
                         "samples": int(t["samples"])}


def _clone_strided(x):
    """A copy with the same sizes, strides and storage offset (the kernel's index
    arithmetic assumes them)."""
    torch = _torch()
    try:
        from torch._inductor.compile_fx import clone_preserve_strides
        return clone_preserve_strides(x)
    except ImportError:
        pass
    if x.numel() == 0:
        return x.clone()
    need = sum((s - 1) * st for s, st in zip(x.size(), x.stride())) + 1
    buf = torch.as_strided(x, (need,), (1,)).clone()
    return torch.as_strided(buf, x.size(), x.stride())


# Elements compared at a time: the temporaries of a GPU-sized argument (GBs) stay small.
COMPARE_CHUNK = 1 << 24


def _chunks(a, b):
    """Matching views of a and b along dim 0, about COMPARE_CHUNK elements each."""
    if a.dim() == 0 or a.shape[0] <= 1 or a.numel() <= COMPARE_CHUNK:
        yield a, b
        return
    step = max(1, COMPARE_CHUNK // max(1, a.numel() // a.shape[0]))
    for i in range(0, a.shape[0], step):
        yield a[i:i + step], b[i:i + step]


def _float_diff(a, b) -> tuple[bool, float]:
    """(allclose at KERNEL_CHECK_TOL, NaN equal to NaN; max |a - b|, inf where one is NaN),
    chunk by chunk, in float32 (float64 for float64 tensors)."""
    torch = _torch()
    good, err = True, 0.0
    for ca, cb in _chunks(a.detach(), b.detach()):
        dt = torch.float64 if ca.dtype == torch.float64 else torch.float32
        fa, fb = ca.to(dt), cb.to(dt)
        good = good and bool(torch.isclose(fa, fb, atol=KERNEL_CHECK_TOL, rtol=KERNEL_CHECK_TOL,
                                           equal_nan=True).all())
        diff = (fa - fb).abs()
        diff = torch.where(torch.isnan(fa) & torch.isnan(fb), torch.zeros_like(diff), diff)
        diff = torch.nan_to_num(diff, nan=math.inf)
        if diff.numel():
            err = max(err, float(diff.max()))
        del fa, fb, diff
    return good, err


def compare_args(name: str, got: list, want: list, arg_names: list) -> dict:
    """The kernel-level verdict: every tensor argument of the candidate's launch against
    the original's (floats allclose atol=rtol=1e-2, others exact); `arg` is the worst."""
    torch = _torch()
    ok, worst, worst_arg = True, 0.0, ""
    for i, (a, b) in enumerate(zip(got, want)):
        if not isinstance(a, torch.Tensor):
            continue
        an = arg_names[i] if i < len(arg_names) else f"arg{i}"
        if a.is_floating_point():
            good, err = _float_diff(a, b)
        else:
            good = bool(torch.equal(a, b))
            err = 0.0 if good else max(float((ca.double() - cb.double()).abs().max())
                                       for ca, cb in _chunks(a, b))
        if (not good and ok) or (good == ok and err > worst):
            worst, worst_arg = err, an
        ok = ok and good
    return {"kernel": name, "ok": ok, "max_abs_err": worst if math.isfinite(worst)
            else 1.7976931348623157e308, "arg": worst_arg}


def trial(ref: CompiledReference, overrides: list, inputs: list, check: bool,
          source_path: str, modules: Callable[[], list] = _code_cache_modules,
          screen: Screen | None = None) -> tuple[list, list, dict | None]:
    """One model call with the overrides behind probes. Returns (kernel_check, log lines,
    the screen's timing of its kernel or None); raises CompileFailure when an override is
    never launched or the call raises."""
    torch = _torch()
    holder: list = []
    probes = {ov.name: _Probe(ov.name, ov.autotuner, holder,
                              [a["name"] for a in ref.entries[ov.name]["args"]], check,
                              screen if screen is not None and screen.name == ov.name else None)
              for ov in overrides}
    sm = SwappedModel(ref.compiled, probes, modules)
    holder.append(sm)
    files = {ov.cache_path: ov.path for ov in overrides if ov.cache_path}
    try:
        with torch.no_grad():
            sm(*inputs)
        if torch.cuda.is_available() and inputs and any(
                isinstance(x, torch.Tensor) and x.is_cuda for x in inputs):
            torch.cuda.synchronize()
    except (Exception, SystemExit) as e:
        raise CompileFailure(_locate(e, files, source_path) + "\n" +
                             source.format_traceback(e)) from None
    by_name = {ov.name: ov for ov in overrides}
    for name, p in probes.items():
        if p.launches == 0:
            raise CompileFailure(f"{by_name[name].path}: {name} was never launched by the "
                                 "model")
    results, log = [], []
    for name, p in probes.items():
        if p.result is None:
            continue
        results.append(p.result)
        if p.result.get("skipped"):
            log.append(f"{by_name[name].path}: kernel-level check of {name} skipped: "
                       f"{p.result['skipped']} (the model-level gates decide)")
        if not p.result["ok"]:
            log.append(f"{by_name[name].path}: kernel-level check: {name} arg "
                       f"{p.result['arg']} max abs err {p.result['max_abs_err']:.3g} "
                       "(first model call)")
    screened = next((p.screened for p in probes.values() if p.screened is not None), None)
    return results, log, screened


class _Seeder(_StandIn):
    """A kernel global during the seeding call (kernel: the model's own; tuner: its copy
    with Inductor's extra search on). On the kernel's first launch the copy runs on
    stride-preserving clones of the arguments -- it autotunes and descends there, on the
    real shapes and strides -- then the model's kernel runs on the arguments."""

    def __init__(self, name: str, kernel, tuner):
        super().__init__(name, kernel)
        self.tuner = tuner
        self.launched = False
        self.launch: dict = {}
        self.error = ""

    def run(self, *args, **kwargs):
        if not self.launched:
            self.launched = True
            torch = _torch()
            clones = None
            try:
                clones = [_clone_strided(a) if isinstance(a, torch.Tensor) else a for a in args]
                self.tuner.run(*clones, **kwargs)
                self.launch = live_launch(self.tuner)
                self.error = "" if self.launch else "it has no launch config to read"
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                self.error = "out of device memory for the argument clones"
            except Exception as e:  # a config that does not compile or launch: no seed
                self.error = source.exception_message(e)
            del clones
        return self.kernel.run(*args, **kwargs)


def kernel_seeds(ref: CompiledReference, names: list, inputs: list,
                 seed_mode: str) -> tuple[dict, dict]:
    """Inductor's own extra search (SEED_MODES[seed_mode]) on each kernel of `names`, in
    one model call: a copy of the kernel with those options in its inductor_meta runs at the
    kernel's first launch on clones of its arguments (the model's kernels, buffers and
    output are left as they are). Each stands in for the global of the wrapper module whose
    source it copies, as the inventory's taps do. Returns (NAME -> the launch config the
    search chose, NAME -> why a kernel got none)."""
    torch = _torch()
    PyCodeCache = _py_code_cache()
    tuners, why = {}, {}
    for n in names:
        if ref.live_kernel(n) is None:
            why[n] = "its wrapper module is not loaded"
            continue
        text = with_inductor_meta(ref.kernels[n].source, SEED_MODES[seed_mode])
        if text is None:
            why[n] = "its source has no literal inductor_meta"
            continue
        tree = ast.parse(text)
        fn = jit_function(tree)
        try:
            loaded = _load_module(Override(n, f"{n} ({seed_mode} copy)", text, tree),
                                  PyCodeCache)
        except CompileFailure as e:
            why[n] = e.log.splitlines()[0] if e.log else "its copy did not load"
            continue
        tuner = getattr(loaded, fn.name, None) if fn is not None else None
        if tuner is None or not hasattr(tuner, "run"):
            why[n] = "its copy defines no kernel Inductor can launch"
            continue
        tuners[n] = tuner
    seeders: dict = {}
    if tuners:
        seeders = ref.call_standing_in(inputs, tuners,
                                       lambda n, k: _Seeder(n, k, tuners[n]))
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    seeds = {}
    for n, sd in seeders.items():
        if sd.launch:
            seeds[n] = sd.launch
        else:
            why[n] = sd.error or "never launched by the model"
    return seeds, why
