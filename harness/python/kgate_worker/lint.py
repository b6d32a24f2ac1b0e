"""Static lint of candidate files (gate 1): AST rules, each finding with a line number.

Rules: reference-op, stream, swallow, monkeypatch, thread, subprocess, network.
Pure standard library.
"""

from __future__ import annotations

import ast
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
_PATCH_ROOTS = {"torch", "time", "triton"}
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


def lint(tree: ast.Module, ref_op: str | None) -> list[Finding]:
    """All findings for a candidate module, sorted by line."""
    bound = _imports(tree)
    findings: list[Finding] = []
    seen: set[tuple[int, str]] = set()

    def add(line: int, rule: str, message: str) -> None:
        if (line, rule) not in seen:
            seen.add((line, rule))
            findings.append(Finding(line, rule, message))

    # reference-op: every class but a copied reference `Model`, plus module-level code.
    if ref_op is not None:
        scopes: list[ast.AST] = []
        self_mods: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                if node.name == "Model":
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
            for m in mods:
                _check_import(m, node.lineno, add)
        elif isinstance(node, ast.Attribute):
            d = dotted(node)
            if d is not None:
                r = _resolve(d, bound)
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
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute):
                        _check_patch(sub, node.lineno, bound, add)
                        break
        elif isinstance(node, ast.Call):
            _check_call(node, bound, add)
    findings.sort(key=lambda f: (f.line, f.rule))
    return findings


def _check_import(module: str, line: int, add) -> None:
    top = module.split(".")[0]
    if top in _THREAD_MODULES or module in _THREAD_MODULES or module.startswith(
            "torch.multiprocessing"):
        add(line, "thread", f"imports {module} (no threads or processes in candidates)")
    elif top in _SUBPROCESS_MODULES:
        add(line, "subprocess", f"imports {module}")
    elif top in _NETWORK_MODULES:
        add(line, "network", f"imports {module}")


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
