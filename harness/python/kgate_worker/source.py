"""Source handling: AST rewrites of top-level constants, module loading, error locations.

Pure standard library; nothing here imports torch.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import sys
import traceback
import types
from typing import Any

_SMALL_RE = re.compile(r"^\s*#\s*kgate:small\b(.*)$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_module_counter = itertools.count(1)


class SourceError(Exception):
    """A problem with a source file; the message is already 'PATH:LINE: ...' formatted."""


def is_identifier(name: str) -> bool:
    return bool(_IDENT_RE.match(name))


def parse_value(text: str) -> Any:
    """A define/variant value: a Python literal when it is one, else the string itself."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def parse_small_line(source: str) -> tuple[dict[str, Any] | None, int]:
    """Finds '# kgate:small NAME=VALUE ...'. Returns (values, line) or (None, 0).

    Raises SourceError on a malformed entry.
    """
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = _SMALL_RE.match(line)
        if not m:
            continue
        values: dict[str, Any] = {}
        for token in m.group(1).split():
            name, sep, value = token.partition("=")
            if not sep or not is_identifier(name) or value == "":
                raise SourceError(f"{lineno}: malformed '# kgate:small' entry {token!r} "
                                  "(expected NAME=VALUE)")
            values[name] = parse_value(value)
        return values, lineno
    return None, 0


def _value_node(value: Any) -> ast.expr:
    if isinstance(value, (str, bytes, int, float, complex, bool)) or value is None:
        return ast.Constant(value)
    # Containers of literals (lists, tuples, dicts, sets) round-trip through repr.
    return ast.parse(repr(value), mode="eval").body


def rewrite_assignments(tree: ast.Module, values: dict[str, Any]) -> set[str]:
    """Replaces the value of top-level `NAME = expr` (and `NAME: T = expr`) assignments.

    Every top-level assignment to a name in `values` is rewritten (a later re-assignment
    would otherwise undo the first). Returns the names that matched at least once.
    """
    matched: set[str] = set()
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, ast.Assign):
            if all(isinstance(t, ast.Name) for t in node.targets):
                names = [t.id for t in node.targets]  # type: ignore[union-attr]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                names = [node.target.id]
        hits = [n for n in names if n in values]
        if not hits:
            continue
        if len(set(values[n] for n in hits if _hashable(values[n]))) > 1:
            raise SourceError(f"{node.lineno}: chained assignment {' = '.join(names)} "
                              "gets different values")
        new_value = _value_node(values[hits[0]])
        ast.copy_location(new_value, node.value)  # type: ignore[arg-type]
        node.value = new_value  # type: ignore[union-attr]
        matched.update(hits)
    ast.fix_missing_locations(tree)
    return matched


def _hashable(v: Any) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def read_source(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def parse_source(source: str, path: str) -> ast.Module:
    """ast.parse with a SyntaxError turned into SourceError('PATH:LINE: SyntaxError: msg')."""
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as e:
        raise SourceError(format_syntax_error(e, path)) from None
    except ValueError as e:  # e.g. null bytes
        raise SourceError(f"{path}:1: {type(e).__name__}: {e}") from None


def format_syntax_error(e: SyntaxError, path: str) -> str:
    line = e.lineno or 1
    text = f"{e.filename or path}:{line}: {type(e).__name__}: {e.msg}"
    if e.text:
        text += f"\n    {e.text.rstrip()}"
    return text


def exec_module(tree: ast.Module, path: str, prefix: str) -> types.ModuleType:
    """Executes `tree` as a fresh module with a unique name, registered in sys.modules.

    The module's directory is not added to sys.path. Exceptions propagate.
    """
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_kgate_{prefix}_{next(_module_counter)}_{stem}"
    module = types.ModuleType(name)
    module.__file__ = path
    module.__dict__["__builtins__"] = __builtins__
    code = compile(tree, path, "exec")
    sys.modules[name] = module  # torch.compile / pickling look modules up by name
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def forget_module(module: types.ModuleType | None) -> None:
    if module is not None:
        sys.modules.pop(module.__name__, None)


def exception_location(exc: BaseException, path: str | None) -> tuple[str, int] | None:
    """(file, line) of the innermost traceback frame in `path`, else the innermost frame."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return exc.filename or (path or "?"), exc.lineno
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    if path is not None:
        real = os.path.realpath(path)
        for fr in reversed(frames):
            if fr.filename == path or os.path.realpath(fr.filename) == real:
                return fr.filename, fr.lineno or 0
    fr = frames[-1]
    return fr.filename, fr.lineno or 0


def exception_message(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg}"
    text = str(exc).strip()
    # Keep messages to one readable paragraph; tracebacks go to the log separately.
    if len(text) > 2000:
        text = text[:2000] + " ..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def describe_exception(exc: BaseException, path: str | None) -> str:
    """'ExcType: message (file:line)' with the innermost frame in `path`."""
    loc = exception_location(exc, path)
    msg = exception_message(exc)
    return f"{msg} ({loc[0]}:{loc[1]})" if loc else msg


def located_exception(exc: BaseException, path: str) -> str:
    """'PATH:LINE: ExcType: message' (the compiler-log style); 'PATH: ...' when no
    traceback frame lies in PATH (e.g. a constructor called with the wrong arguments)."""
    loc = exception_location(exc, path)
    if loc is None or not _same_file(loc[0], path):
        return f"{path}: {exception_message(exc)}"
    return f"{loc[0]}:{loc[1]}: {exception_message(exc)}"


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


_OWN_DIR = os.path.dirname(os.path.abspath(__file__))


def format_traceback(exc: BaseException) -> str:
    """The traceback from the frame after the worker's own last one (the worker's frames,
    and what called them, tell the author of a kernel nothing); "" when at most one frame
    is left, which the located message (located_exception, describe_exception) names."""
    tb = start = exc.__traceback__
    while tb is not None:
        if os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename)) == _OWN_DIR:
            start = tb.tb_next
        tb = tb.tb_next
    tb = start
    if len(traceback.extract_tb(tb)) <= 1:
        return ""
    return "".join(traceback.format_exception(type(exc), exc, tb))
