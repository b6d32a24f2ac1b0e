"""Static lint of candidate files (gate 1): AST rules, each finding with a line number.

Rules: reference-op, stream, swallow, monkeypatch (a patch of one of the worker's clocks
says "timer patch: ..."), ctypes, thread, subprocess, network, introspection, memory-cap.
Pure standard library.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# Tensor methods / calls that move or describe data rather than compute the problem's op.
_NON_COMPUTE = {
    "view", "reshape", "size", "dim", "contiguous", "to", "float", "half", "double",
    "bfloat16", "int", "long", "bool", "type", "unsqueeze", "squeeze", "flatten",
    "permute", "transpose", "t", "expand", "expandas", "viewas", "reshapeas", "clone",
    "detach", "cpu", "cuda", "numel", "stride", "isfinite", "item", "tolist", "chunk",
    "split", "narrow", "select", "dataptr", "elementsize", "newempty", "newzeros",
    "emptylike", "empty", "super", "len", "range", "isinstance", "getattr", "tuple",
    "list", "print", "zip", "enumerate",
}
# Module containers: calling them runs several ops.
_CONTAINERS = {"sequential", "modulelist", "moduledict"}
_ALIASES = {"mm": "matmul", "bmm": "matmul", "matmul": "matmul", "@": "matmul"}

_THREAD_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "asyncio",
                   "torch.multiprocessing"}
_SUBPROCESS_MODULES = {"subprocess", "pty"}
_NETWORK_MODULES = {"socket", "urllib", "urllib2", "urllib3", "http", "requests", "ssl",
                    "httpx", "aiohttp", "ftplib", "smtplib", "telnetlib", "xmlrpc"}
_OS_PROCESS_CALLS = {"system", "popen", "fork", "forkpty", "spawnl", "spawnle", "spawnlp",
                     "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn",
                     "posix_spawnp", "execl", "execle", "execlp", "execlpe", "execv", "execve",
                     "execvp", "execvpe"}
_PATCH_ROOTS = {"torch", "time", "triton", "kgate_worker"}
# What the worker times with (clocks.py watches the same objects at run time): a patch of
# one of these, or of anything below it, is a timer patch.
_CLOCKS = ("time", "torch.cuda.Event", "torch.cuda.synchronize", "torch.cuda.current_stream",
           "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.CUDAGraph",
           "torch.cuda.graph", "torch._C._cuda_synchronize", "torch._C._CUDAGraph",
           "torch._C._CudaEventBase", "torch.Event", "triton.testing", "kgate_worker")
# Owners whose attribute named at run time (setattr(torch.cuda, name, ...)) may be a clock.
_CLOCK_OWNERS = {"time", "torch", "torch.cuda", "torch._C", "torch.cuda.Event",
                 "torch.cuda.CUDAGraph", "triton", "triton.testing", "sys.modules"}
_CTYPES_MODULES = {"ctypes", "_ctypes", "cffi"}
# What hands a candidate the worker's own objects (its inputs' originals, the float64
# truth, the timer's state): the garbage collector's object lists and the call stack's
# frames. gc.collect() and the rest of gc and inspect stay allowed.
_INTROSPECTION = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "gc.garbage",
                  "sys._getframe", "sys._current_frames", "inspect.currentframe",
                  "inspect.stack", "inspect.trace", "inspect.getouterframes",
                  "inspect.getinnerframes", "inspect.getframeinfo"}
_FRAME_ATTRS = {"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame",
                "cr_frame", "ag_frame"}
_INTROSPECTION_WHY = "(it reaches the worker's own objects: the inputs, the float64 truth)"
# Builtins that reach attributes by name; resolved as "builtins.<name>" unless rebound.
_BUILTINS = {"setattr", "delattr", "getattr", "vars", "__import__", "object", "type"}
_SETTERS = {"builtins.setattr": "setattr() on", "builtins.delattr": "delattr() on",
            "builtins.object.__setattr__": "object.__setattr__() on",
            "builtins.object.__delattr__": "object.__delattr__() on",
            "builtins.type.__setattr__": "type.__setattr__() on",
            "builtins.type.__delattr__": "type.__delattr__() on"}
_DICT_WRITES = {"update", "__setitem__", "setdefault", "pop", "popitem", "clear",
                "__delitem__"}
_DYNAMIC = "<name computed at run time>"
# What changes the device memory a worker may take (KGATE_SANDBOX_GPU_MEMORY_MB) or the
# allocator that enforces it: named anywhere in the file (an attribute, a name, an import,
# or a word inside a string: getattr(torch.cuda, "set_per_process_" + ...) is caught at
# run time instead, where the worker checks its cap after each call).
MEMORY_CAP_NAMES = {"set_per_process_memory_fraction", "_cuda_setMemoryFraction",
                     "setMemoryFraction", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
                     "_set_allocator_settings", "CUDAPluggableAllocator",
                     "change_current_allocator"}
_MEMORY_CAP_WORD = re.compile(r"\b(" + "|".join(sorted(MEMORY_CAP_NAMES)) + r")\b")
_STREAM_SUFFIXES = ("cuda.Stream", "cuda.stream", "cuda.ExternalStream", "cuda.set_stream",
                    "torch.Stream", "torch.set_stream")
_STREAM_NAMES = {"Stream", "stream", "ExternalStream", "set_stream"}


@dataclass
class Finding:
    line: int
    rule: str
    message: str

    def as_dict(self) -> dict:
        return {"line": self.line, "rule": self.rule, "message": self.message}


def normalize_op(name: str) -> str:
    """'log_softmax' / 'LogSoftmax' / 'relu_' -> 'logsoftmax' / 'logsoftmax' / 'relu'."""
    n = name.lower().replace("_", "")
    return _ALIASES.get(n, n)


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted module/object path bound by import statements anywhere."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    bound[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                bound[a.asname or a.name] = f"{node.module}.{a.name}"
    return bound


def dotted(node: ast.AST) -> str | None:
    """'a.b.c' for a Name/Attribute chain, None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _resolve(dotted: str, bound: dict[str, str]) -> str:
    head, _, rest = dotted.partition(".")
    if head in bound:
        return bound[head] + ("." + rest if rest else "")
    return dotted


def _root_of(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def _is_torch_module_class(resolved: str) -> bool:
    """'torch.nn.Conv2d' style: a module class constructor (capitalised final name)."""
    last = resolved.rsplit(".", 1)[-1]
    return resolved.startswith("torch.nn.") and last[:1].isupper()


def _self_modules(cls: ast.ClassDef, bound: dict[str, str]) -> dict[str, str]:
    """self.ATTR -> normalized module class name, from `self.ATTR = nn.X(...)`."""
    mods: dict[str, str] = {}
    for node in ast.walk(cls):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        d = dotted(node.value.func)
        if d is None:
            continue
        resolved = _resolve(d, bound)
        if not _is_torch_module_class(resolved):
            continue
        for t in node.targets:
            if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                    and t.value.id == "self"):
                mods[t.attr] = normalize_op(resolved.rsplit(".", 1)[-1])
    return mods


def _is_triton(name: str | None, bound: dict[str, str]) -> bool:
    return name is not None and bound.get(name, name).split(".")[0] == "triton"


def _ops_in(nodes: list[ast.AST], bound: dict[str, str],
            self_mods: dict[str, str]) -> list[tuple[str, int]]:
    """(normalized op, line) for every compute call in `nodes` (torch calls, tensor
    methods, self.<module>(...) calls, the @ operator). Constructors of nn modules and
    calls on triton names are not ops."""
    ops: list[tuple[str, int]] = []
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                ops.append(("matmul", node.lineno))
                continue
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute):
                if isinstance(func.value, ast.Name) and func.value.id == "self":
                    if func.attr in self_mods:
                        ops.append((self_mods[func.attr], node.lineno))
                    continue
                root = _root_of(func)
                if _is_triton(root, bound):
                    continue
                d = dotted(func)
                if d is not None and _is_torch_module_class(_resolve(d, bound)):
                    continue  # nn.Conv2d(...) constructs parameters, it computes nothing
                name = normalize_op(func.attr)
                if name in _NON_COMPUTE:
                    continue
                ops.append((name, node.lineno))
            elif isinstance(func, ast.Name):
                target = bound.get(func.id)
                if target and target.split(".")[0] == "torch":
                    if _is_torch_module_class(target):
                        continue
                    name = normalize_op(target.rsplit(".", 1)[-1])
                    if name not in _NON_COMPUTE:
                        ops.append((name, node.lineno))
    return ops


def _find_class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node  # type: ignore[return-value]
    return None


def reference_op(problem_tree: ast.Module) -> str | None:
    """The single op of a single-op problem (normalized), else None.

    A single-op problem's forward is that one op and nothing else: one distinct op, no
    arithmetic on tensors, no other calls (a custom submodule, a helper function, a lambda), no
    control flow. A GEMM followed by a scaling, a conv inside a fusion, LayerNorm inside a
    transformer block are not single-op problems: calling cuBLAS/cuDNN for their op is
    what a dispatch-aware candidate does."""
    cls = _find_class(problem_tree, "Model")
    if cls is None:
        return None
    fwd = _method(cls, "forward")
    if fwd is None:
        return None
    bound = _imports(problem_tree)
    self_mods = _self_modules(cls, bound)
    calls = _ops_in(list(fwd.body), bound, self_mods)
    ops = {op for op, _ in calls}
    if len(ops) != 1:
        return None
    op = next(iter(ops))
    if op in _CONTAINERS or _does_more(fwd, bound, self_mods):
        return None
    return op


_CONTROL_FLOW = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
                 ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp,
                 ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.IfExp)


def _does_more(fwd: ast.FunctionDef, bound: dict[str, str],
               self_mods: dict[str, str]) -> bool:
    """True when forward does anything besides its op call and data movement: arithmetic
    or comparisons on values (not on sizes inside view/reshape arguments or subscripts),
    calls that are neither torch ops nor data movement (custom submodules, methods,
    helper functions), control flow."""
    shape_args: set[int] = set()  # nodes inside a non-compute call's arguments / a slice
    for node in ast.walk(fwd):
        if isinstance(node, ast.Call):
            name = (node.func.attr if isinstance(node.func, ast.Attribute)
                    else node.func.id if isinstance(node.func, ast.Name) else "")
            if normalize_op(name) in _NON_COMPUTE:
                for a in list(node.args) + [k.value for k in node.keywords]:
                    shape_args.update(id(n) for n in ast.walk(a))
        elif isinstance(node, ast.Subscript):
            shape_args.update(id(n) for n in ast.walk(node.slice))
        elif isinstance(node, ast.keyword):
            shape_args.update(id(n) for n in ast.walk(node.value)
                              if isinstance(n, (ast.BinOp, ast.UnaryOp)))
    body = list(fwd.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, _CONTROL_FLOW) or isinstance(node, ast.AugAssign):
                return True
            if id(node) in shape_args:
                continue
            if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):
                return True
            if isinstance(node, (ast.Compare, ast.BoolOp)):
                return True
            if isinstance(node, ast.UnaryOp) and not isinstance(node.operand, ast.Constant):
                return True
            if isinstance(node, ast.Call) and not _known_call(node, bound, self_mods):
                return True
    return False


def _known_call(node: ast.Call, bound: dict[str, str], self_mods: dict[str, str]) -> bool:
    """A torch op, a tensor method, an nn module of self, or data movement; not a custom
    submodule, a method of the model, a lambda attribute or a helper function."""
    func = node.func
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            return func.attr in self_mods and self_mods[func.attr] not in _CONTAINERS
        return True  # torch.x / F.x / tensor.method
    if isinstance(func, ast.Name):
        if normalize_op(func.id) in _NON_COMPUTE:
            return True
        target = bound.get(func.id)
        return bool(target) and target.split(".")[0] == "torch"
    return False


def _model_uses(tree: ast.Module) -> list[ast.stmt]:
    """The top-level statements, other than `class Model` itself, that name `Model`."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            continue
        if any(isinstance(n, ast.Name) and n.id == "Model" for n in ast.walk(node)):
            out.append(node)
    return out


def _model_exempt(tree: ast.Module, reference_tree: ast.Module | None) -> bool:
    """Whether a candidate's `class Model` stays outside the reference-op rule: a copy
    nothing uses (a leftover of the problem file), or the problem's reference itself as
    its own candidate (`Model` unchanged and `ModelNew = Model` its only use: the A/A mode
    and a reference starter, which can only ever measure the reference). A Model that
    ModelNew subclasses, wraps or calls is checked like the rest of the file."""
    uses = _model_uses(tree)
    if not uses:
        return True
    mine = _find_class(tree, "Model")
    ref = _find_class(reference_tree, "Model") if reference_tree is not None else None
    if reference_tree is not None:  # the problem file's own uses of its Model come along
        own = {ast.dump(n) for n in _model_uses(reference_tree)}
        uses = [u for u in uses if ast.dump(u) not in own]
    if mine is None or ref is None or ast.dump(mine) != ast.dump(ref):
        return False
    return all(isinstance(u, ast.Assign) and len(u.targets) == 1
               and isinstance(u.targets[0], ast.Name) and u.targets[0].id == "ModelNew"
               and isinstance(u.value, ast.Name) and u.value.id == "Model" for u in uses)


def lint(tree: ast.Module, ref_op: str | None,
         reference_tree: ast.Module | None = None) -> list[Finding]:
    """All findings for a candidate module, sorted by line. `reference_tree` is the
    problem file (its `Model` tells the reference itself from a candidate built on it)."""
    bound = _imports(tree)
    env = _aliases(tree, bound)
    findings: list[Finding] = []
    seen: set[tuple[int, str]] = set()

    def add(line: int, rule: str, message: str) -> None:
        if (line, rule) not in seen:
            seen.add((line, rule))
            findings.append(Finding(line, rule, message))

    # reference-op: every class (but a copied reference `Model` nothing builds on), plus
    # module-level code.
    if ref_op is not None:
        scopes: list[ast.AST] = []
        self_mods: dict[str, str] = {}
        model_exempt = _model_exempt(tree, reference_tree)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                if node.name == "Model" and model_exempt:
                    continue
                self_mods.update(_self_modules(node, bound))
            scopes.append(node)
        for op, line in _ops_in(scopes, bound, self_mods):
            if op == ref_op:
                add(line, "reference-op",
                    f"calls '{ref_op}', the problem's reference op; the candidate must "
                    "implement it")

    for node in ast.walk(tree):
        # imports: thread / subprocess / network, and stream names from torch.cuda
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                mods = [node.module or ""]
                base = node.module or ""
                if base in ("torch", "torch.cuda") and any(a.name in _STREAM_NAMES
                                                           for a in node.names):
                    add(node.lineno, "stream", f"imports CUDA stream API from {base}")
                if base == "os":
                    for a in node.names:
                        if a.name in _OS_PROCESS_CALLS:
                            add(node.lineno, "subprocess", f"imports os.{a.name}")
                if base == "torch":
                    mods += [f"torch.{a.name}" for a in node.names]
                for a in node.names:
                    if f"{base}.{a.name}" in _INTROSPECTION:
                        add(node.lineno, "introspection",
                            f"imports {base}.{a.name} {_INTROSPECTION_WHY}")
            for m in mods:
                _check_import(m, node.lineno, add)
        elif isinstance(node, ast.Attribute):
            if node.attr in _FRAME_ATTRS:
                add(node.lineno, "introspection", f"reads a frame's .{node.attr} "
                                                  f"{_INTROSPECTION_WHY}")
            d = dotted(node)
            if d is not None:
                r = _resolve(d, bound)
                if r in _INTROSPECTION:
                    add(node.lineno, "introspection", f"uses {r} {_INTROSPECTION_WHY}")
                if r.endswith(_STREAM_SUFFIXES) or d.endswith(_STREAM_SUFFIXES):
                    add(node.lineno, "stream", f"uses {d} (candidates must run on the "
                                               "current stream)")
        elif isinstance(node, ast.ExceptHandler):
            if all(_is_trivial(s) for s in node.body):
                add(node.lineno, "swallow", "except handler swallows the exception "
                                            "(body is only pass/.../continue)")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                       else [node.target])
            verb = "deletes" if isinstance(node, ast.Delete) else "assigns to"
            for t in targets:
                if _check_target(t, node.lineno, env, verb, add):
                    continue
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute):
                        _check_patch(sub, node.lineno, bound, add)
                        break
        elif isinstance(node, ast.Call):
            _check_setter(node, env, add)
            _check_call(node, bound, add)
            _check_introspective_getattr(node, bound, add)
        _check_memory_cap(node, add)
    findings.sort(key=lambda f: (f.line, f.rule))
    return findings


def _check_memory_cap(node: ast.AST, add) -> None:
    """memory-cap: the file names what raises the worker's GPU memory cap or replaces the
    allocator that keeps it (torch.cuda.set_per_process_memory_fraction, the allocator's
    settings, a pluggable allocator), as a name, an attribute, an import or in a string."""
    name = None
    if isinstance(node, ast.Attribute) and node.attr in MEMORY_CAP_NAMES:
        name = node.attr
    elif isinstance(node, ast.Name) and node.id in MEMORY_CAP_NAMES:
        name = node.id
    elif isinstance(node, ast.alias) and node.name.rpartition(".")[2] in MEMORY_CAP_NAMES:
        name = node.name.rpartition(".")[2]
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = _MEMORY_CAP_WORD.search(node.value)
        name = m.group(1) if m else None
    if name is not None:
        add(getattr(node, "lineno", 1), "memory-cap",
            f"names {name} (it changes the worker's GPU memory cap or the allocator that "
            "keeps it)")


def _check_import(module: str, line: int, add) -> None:
    top = module.split(".")[0]
    if top in _THREAD_MODULES or module in _THREAD_MODULES or module.startswith(
            "torch.multiprocessing"):
        add(line, "thread", f"imports {module} (no threads or processes in candidates)")
    elif top in _SUBPROCESS_MODULES:
        add(line, "subprocess", f"imports {module}")
    elif top in _NETWORK_MODULES:
        add(line, "network", f"imports {module}")
    elif top in _CTYPES_MODULES:
        add(line, "ctypes", f"imports {module} (raw memory and C calls reach past every "
                            "check: the worker's clocks, the inputs, its state)")
    elif top == "kgate_worker":
        add(line, "monkeypatch", f"imports {module} (candidates must not reach into the "
                                 "kgate worker)")


def _check_introspective_getattr(node: ast.Call, bound: dict[str, str], add) -> None:
    """getattr(gc, "get_objects"), or getattr(gc / sys / inspect, <computed name>)."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2):
        return
    owner = dotted(node.args[0])
    if owner is None:
        return
    owner = _resolve(owner, bound)
    name = _const_str(node.args[1])
    if name is None and owner in ("gc", "sys", "inspect"):
        add(node.lineno, "introspection", f"getattr() on {owner} with a name computed at "
                                          f"run time {_INTROSPECTION_WHY}")
    elif name is not None and (f"{owner}.{name}" in _INTROSPECTION or name in _FRAME_ATTRS):
        add(node.lineno, "introspection", f"getattr() reaches {owner}.{name} "
                                          f"{_INTROSPECTION_WHY}")


def _is_trivial(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Pass, ast.Continue)):
        return True
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and (stmt.value.value is Ellipsis or isinstance(stmt.value.value, str)))


def _check_patch(target: ast.Attribute, line: int, bound: dict[str, str], add) -> None:
    root = _root_of(target)
    if root is None or root not in bound:
        return
    top = bound[root].split(".")[0]
    if top in _PATCH_ROOTS:
        d = dotted(target)
        shown = _resolve(d, bound) if d else bound[root] + ".<...>"
        add(line, "monkeypatch", f"assigns to {shown} (patching {top} is not allowed)")


def _check_call(node: ast.Call, bound: dict[str, str], add) -> None:
    func = node.func
    d = dotted(func)
    resolved = _resolve(d, bound) if d else None
    if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
        root = _root_of(node.args[0])
        if root is not None and bound.get(root, "").split(".")[0] in _PATCH_ROOTS:
            add(node.lineno, "monkeypatch",
                f"{func.id}() on {bound[root]} (patching is not allowed)")
    if resolved is not None:
        mod, _, name = resolved.rpartition(".")
        if mod == "os" and name in _OS_PROCESS_CALLS:
            add(node.lineno, "subprocess", f"calls os.{name}")
        if resolved in ("__import__", "importlib.import_module") and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                _check_import(arg.value, node.lineno, add)


# ---- patches through aliases, importlib, getattr, __dict__ ---------------------------------

def _const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _path(node: ast.AST, env: dict[str, str]) -> str | None:
    """The dotted path of the object an expression names, as far as it can be seen
    statically: 'time' for `importlib.import_module("time")`, `__import__("time")`,
    `sys.modules["time"]` or a name bound to one of them; 'torch.cuda.Event' for
    `getattr(torch.cuda, "Event")`; 'time.__dict__' for `vars(time)`; a key of a
    `__dict__` as an attribute. None for anything else (calls, locals, literals)."""
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        return f"builtins.{node.id}" if node.id in _BUILTINS else None
    if isinstance(node, ast.NamedExpr):
        return _path(node.value, env)
    if isinstance(node, ast.Attribute):
        base = _path(node.value, env)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):
        base, key = _path(node.value, env), _const_str(node.slice)
        if base == "sys.modules":
            return key
        if base and base.endswith(".__dict__") and key:
            return f"{base[:-len('.__dict__')]}.{key}"
        return None
    if isinstance(node, ast.Call) and node.args:
        func = _path(node.func, env)
        first = _const_str(node.args[0])
        if func in ("importlib.import_module", "sys.modules.get"):
            return first
        if func == "builtins.__import__" and first:
            fromlist = len(node.args) > 3 or any(k.arg == "fromlist" for k in node.keywords)
            return first if fromlist else first.split(".")[0]
        if func == "builtins.getattr" and len(node.args) >= 2:
            base = _path(node.args[0], env)
            return f"{base}.{_const_str(node.args[1]) or _DYNAMIC}" if base else None
        if func == "builtins.vars":
            base = _path(node.args[0], env)
            return f"{base}.__dict__" if base else None
    return None


def _tracked(path: str | None) -> bool:
    return path is not None and path.split(".")[0] in (
        _PATCH_ROOTS | {"sys", "importlib", "builtins"})


def _aliases(tree: ast.Module, bound: dict[str, str]) -> dict[str, str]:
    """`bound` plus every name assigned one of the tracked objects anywhere in the file
    (`t = importlib.import_module("time")`, `E = getattr(torch.cuda, "Event")`,
    `d = vars(time)`, `s = setattr`), to a fixed point. Scopes are not told apart: a lint
    errs towards seeing a patch."""
    env = dict(bound)
    pairs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs += [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            pairs.append((node.target, node.value))
    for _ in range(8):
        changed = False
        for target, value in pairs:
            p = _path(value, env)
            if isinstance(target, ast.Name) and _tracked(p) and env.get(target.id) != p:
                env[target.id] = p  # type: ignore[assignment]
                changed = True
        if not changed:
            break
    return env


def _is_clock(path: str) -> bool:
    return path == "torch.cuda" or any(path == c or path.startswith(c + ".")
                                       for c in _CLOCKS)


def _report(owner: str, attr: str, line: int, verb: str, add, via: str = "") -> bool:
    """A finding for changing `attr` of `owner` when owner lies below a patch root; True
    when it did."""
    root = owner.split(".")[0]
    if root not in _PATCH_ROOTS:
        return False
    shown = f"{owner}.{attr}{via}"
    if _is_clock(f"{owner}.{attr}") or (attr == _DYNAMIC and owner in _CLOCK_OWNERS):
        add(line, "monkeypatch", f"timer patch: {verb} {shown} (the worker times with "
                                 "these; it keeps its own references and rejects a "
                                 "candidate that changes one)")
    else:
        add(line, "monkeypatch", f"{verb} {shown} (patching {root} is not allowed)")
    return True


def _report_module_entry(key: str | None, line: int, verb: str, add) -> bool:
    """A write to sys.modules: replacing a patch root's module is a patch of it."""
    name = key or _DYNAMIC
    if key is not None and key.split(".")[0] not in _PATCH_ROOTS:
        return False
    what = "timer patch: " if key is None or _is_clock(key) or key == "torch" else ""
    add(line, "monkeypatch", f"{what}{verb} sys.modules['{name}'] (replacing a module the "
                             "worker relies on is not allowed)")
    return True


def _check_target(t: ast.AST, line: int, env: dict[str, str], verb: str, add) -> bool:
    """An assignment/deletion target: `X.attr`, `X.__dict__[k]`, `vars(X)[k]`,
    `sys.modules[k]`, with X resolved through aliases, importlib and getattr."""
    if isinstance(t, (ast.Tuple, ast.List)):
        return any([_check_target(e, line, env, verb, add) for e in t.elts])
    if isinstance(t, ast.Starred):
        return _check_target(t.value, line, env, verb, add)
    if isinstance(t, ast.Attribute):
        owner = _path(t.value, env)
        return owner is not None and _report(owner, t.attr, line, verb, add)
    if isinstance(t, ast.Subscript):
        base, key = _path(t.value, env), _const_str(t.slice)
        if base == "sys.modules":
            return _report_module_entry(key, line, verb, add)
        if base is not None and base.endswith(".__dict__"):
            return _report(base[:-len(".__dict__")], key or _DYNAMIC, line, verb, add,
                           f" through {base}")
    return False


def _check_setter(node: ast.Call, env: dict[str, str], add) -> None:
    """setattr/delattr/object.__setattr__/type.__setattr__(X, name, ...), X.__setattr__(name,
    ...), and writes through X.__dict__ / vars(X) / sys.modules methods."""
    func = _path(node.func, env)
    if func in _SETTERS and node.args:
        owner = _path(node.args[0], env)
        name = _const_str(node.args[1]) if len(node.args) > 1 else None
        if owner is not None:
            _report(owner, name or _DYNAMIC, node.lineno, _SETTERS[func], add)
        return
    if not isinstance(node.func, ast.Attribute):
        return
    method = node.func.attr
    base = _path(node.func.value, env)
    if base is None:
        return
    key = _const_str(node.args[0]) if node.args else None
    if method in ("__setattr__", "__delattr__"):
        _report(base, key or _DYNAMIC, node.lineno, f"{method}() on", add)
    elif method in _DICT_WRITES and base == "sys.modules":
        _report_module_entry(key if method != "update" else None, node.lineno,
                             f"{method}() on", add)
    elif method in _DICT_WRITES and base.endswith(".__dict__"):
        keys = [key] if method not in ("update", "clear", "popitem") else []
        if method == "update":
            keys = [k.arg for k in node.keywords if k.arg]
            if node.args and isinstance(node.args[0], ast.Dict):
                keys += [_const_str(k) for k in node.args[0].keys]
        owner = base[:-len(".__dict__")]
        for k in keys or [None]:
            _report(owner, k or _DYNAMIC, node.lineno, "writes", add,
                    f" through {base}.{method}()")
