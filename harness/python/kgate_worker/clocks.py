"""The worker's clocks, taken before any candidate is imported, and the check that a
candidate left them alone (issue 16: timer patching).

A candidate runs in the worker's process, so it can rebind `time.perf_counter`,
`torch.cuda.Event.elapsed_time` & co. (through `setattr`, `importlib`, `__dict__`, ...).
The worker therefore times only with the references kept here (`perf_counter`,
`perf_counter_ns`, `original(label)`), and `tampered()` compares every watched module or
class attribute with the object it held when `watch` ran: identity, not behaviour. A
change is a timer patch; `restore()` puts the originals back.

Pure standard library: torch and triton are passed in or looked up in sys.modules.
"""

from __future__ import annotations

import ast
import re
import sys
import time as _time
import types
from dataclasses import dataclass
from typing import Any

# The references the worker times with: the real functions, bound at the worker's import.
perf_counter = _time.perf_counter
perf_counter_ns = _time.perf_counter_ns
monotonic = _time.monotonic

TIME_NAMES = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time",
              "time_ns", "process_time", "process_time_ns", "thread_time",
              "thread_time_ns", "clock_gettime", "clock_gettime_ns")
# Below `torch`: what the CUDA sampler and graph capture call (cuda_timing.py). Names a
# torch build lacks are skipped.
TORCH_NAMES = ("cuda", "cuda.Event", "cuda.Event.__new__", "cuda.Event.record",
               "cuda.Event.synchronize", "cuda.Event.elapsed_time", "cuda.Event.query",
               "cuda.Event.wait", "cuda.synchronize", "cuda.current_stream", "cuda.Stream",
               "cuda.stream", "cuda._sleep", "cuda.CUDAGraph", "cuda.CUDAGraph.replay", "cuda.graph",
               "_C._cuda_synchronize", "_C._CUDAGraph.replay", "Event")
TRITON_NAMES = ("testing", "testing.do_bench")
SYS_MODULES = ("time", "torch", "torch.cuda", "triton", "triton.testing")
OWN_NAMES = ("perf_counter", "perf_counter_ns", "monotonic")

_MISSING = object()


class TimerPatch(Exception):
    """A watched clock is not the object it was when the worker took it."""


@dataclass
class _Watch:
    label: str        # "time.perf_counter", "torch.cuda.Event.elapsed_time", "sys.modules['time']"
    owner: Any        # the module, class or dict that holds it
    name: str
    original: Any
    where: str        # "module attribute", "class attribute", "sys.modules entry"
    defining: Any = None  # a class attribute: the class in the MRO whose __dict__ held it


_watched: dict[str, _Watch] = {}
_roots: set[str] = set()
# The same facts in the cheapest form, for the check after every timed sample: (mapping,
# name, expected) -- `expected` is _MISSING where a class before the defining one must not
# hold the name -- and (function, code object).
_entries: list[tuple[Any, str, Any]] = []
_codes: list[tuple[Any, Any]] = []


def _lookup(owner: Any, name: str) -> Any:
    """The attribute as stored (no descriptor call, no module __getattr__): the first
    class in the MRO that defines it, or the module's/dict's own entry (a function's code
    object: its attribute)."""
    if isinstance(owner, types.FunctionType):
        return getattr(owner, name, _MISSING)
    if isinstance(owner, type):
        for k in owner.__mro__:
            if name in k.__dict__:
                return k.__dict__[name]
        return _MISSING
    d = owner if isinstance(owner, dict) else getattr(owner, "__dict__", None)
    return d.get(name, _MISSING) if isinstance(d, dict) else _MISSING


def _add(label: str, owner: Any, name: str, where: str) -> Any:
    value = _lookup(owner, name)
    if value is not _MISSING and label not in _watched:
        defining = (next(k for k in owner.__mro__ if name in k.__dict__)
                    if isinstance(owner, type) else None)
        _watched[label] = _Watch(label, owner, name, value, where, defining)
        if defining is None:
            _entries.append((owner if isinstance(owner, dict) else vars(owner), name, value))
        else:
            for k in owner.__mro__[:owner.__mro__.index(defining)]:
                _entries.append((k.__dict__, name, _MISSING))
            _entries.append((defining.__dict__, name, value))
        if isinstance(value, types.FunctionType):  # same object, other code: a patch too
            _watched[label + ".__code__"] = _Watch(label + ".__code__", value, "__code__",
                                                   value.__code__, "function code")
            _codes.append((value, value.__code__))
    return value


def _add_tree(root: str, module: Any, names: tuple) -> None:
    for path in names:
        owner, parts = module, path.split(".")
        label = root
        for i, part in enumerate(parts):
            prefix = label
            label = f"{prefix}.{part}"
            known = _watched.get(label)
            if known is not None:
                owner = known.original
                continue
            where = "class attribute" if isinstance(owner, type) else "module attribute"
            value = _add(label, owner, part, where)
            if value is _MISSING:
                break
            owner = value


def watch(torch: Any = None, triton: bool = False) -> None:
    """Takes the references of every clock importable now (time always; torch when given;
    triton.testing when `triton` and it is installed). Each root is taken once, on its
    first call: call it before any candidate is imported, later calls add nothing that
    was already taken (a candidate's rebinding never becomes the 'original')."""
    if "time" not in _roots:
        _roots.add("time")
        _add_tree("time", _time, TIME_NAMES)
        _add_tree("kgate_worker.clocks", sys.modules[__name__], OWN_NAMES)
    if torch is not None and "torch" not in _roots:
        _roots.add("torch")
        _add_tree("torch", torch, TORCH_NAMES)
    if triton and "triton" not in _roots:
        _roots.add("triton")
        import importlib
        import importlib.util
        try:
            if importlib.util.find_spec("triton") is not None:
                importlib.import_module("triton.testing")
        except Exception:  # noqa: BLE001 - a broken triton is not ours to judge here
            pass
        if "triton" in sys.modules:
            _add_tree("triton", sys.modules["triton"], TRITON_NAMES)
    for name in SYS_MODULES:
        if name in sys.modules:
            _add(f"sys.modules['{name}']", sys.modules, name, "sys.modules entry")


def original(label: str) -> Any:
    """The object `label` ("torch.cuda.Event.record") held when it was taken; a class
    attribute comes as stored (a plain function: call it with the instance)."""
    return _watched[label].original


def tampered() -> list[str]:
    """One line per watched attribute that is no longer its original, e.g. "time.perf_counter
    was rebound by the candidate (module attribute replaced)"; [] when all are intact."""
    if (all(d.get(n, _MISSING) is v for d, n, v in _entries)
            and all(f.__code__ is c for f, c in _codes)):
        return []
    out = []
    for w in _watched.values():
        now = _lookup(w.owner, w.name)
        if now is w.original:
            continue
        how = "deleted" if now is _MISSING else "replaced"
        out.append(f"{w.label} was rebound by the candidate ({w.where} {how})")
    return out


def _class_attr(cls: type, name: str, value: Any = _MISSING) -> None:
    """Sets (or, without a value, deletes) a class attribute past any __setattr__ a
    candidate put on the class, through type's own slot; a class whose metaclass is
    pybind11's (torch.cuda.Event, torch.cuda.CUDAGraph and their bases) refuses that slot,
    so it goes through its metaclass."""
    try:
        if value is _MISSING:
            type.__delattr__(cls, name)
        else:
            type.__setattr__(cls, name, value)
    except TypeError:
        if value is _MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, value)


def restore() -> None:
    """Puts every original back (the worker keeps serving with the clocks it took)."""
    for w in _watched.values():
        if _lookup(w.owner, w.name) is w.original:
            continue
        if isinstance(w.owner, dict):
            w.owner[w.name] = w.original
            continue
        if isinstance(w.owner, type):
            # entries on classes before the defining one shadow it (they did not exist
            # when the original was taken); the defining class gets the original back
            for k in w.owner.__mro__:
                if k is w.defining:
                    break
                if w.name in k.__dict__:
                    _class_attr(k, w.name)
            if w.defining.__dict__.get(w.name, _MISSING) is not w.original:
                _class_attr(w.defining, w.name, w.original)
            continue
        setattr(w.owner, w.name, w.original)


def message(changes: list[str]) -> str:
    return "timer patch: " + "; ".join(changes)


def verify(when: str = "") -> None:
    """Raises TimerPatch naming every changed clock (`when` appended: "after timing slot
    'candidate'"), after restoring the originals."""
    changes = tampered()
    if changes:
        restore()
        raise TimerPatch(message(changes) + (f" ({when})" if when else ""))


def source_line(path: str, changes: list[str]) -> int:
    """The first line of the candidate file that mentions a changed clock's name (as an
    attribute, a name or a word in a string), else 1: where the finding of a patch seen at
    run time points."""
    names = {re.findall(r"[A-Za-z_]\w*", c.split(" ", 1)[0])[-1] for c in changes}
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return 1
    word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    lines = [n.lineno for n in ast.walk(tree)
             if (isinstance(n, ast.Attribute) and n.attr in names)
             or (isinstance(n, ast.Constant) and isinstance(n.value, str)
                 and word.search(n.value))  # also inside an exec'd string
             or (isinstance(n, ast.Name) and n.id in names)]
    return min(lines) if lines else 1


def finding(path: str) -> dict | None:
    """A compile finding (rule `timer-patch`) when a watched clock changed while `path`
    was imported or its model built, with the originals restored; None when intact."""
    changes = tampered()
    if not changes:
        return None
    restore()
    return {"line": source_line(path, changes), "rule": "timer-patch",
            "message": message(changes) + " while the file was imported or its model "
                       "built; the worker times with its own references"}
