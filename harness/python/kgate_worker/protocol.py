"""Protocol v1 envelope: stdout discipline, request parsing, parameter checks, the loop."""

from __future__ import annotations

import io
import json
import math
import os
import sys
import time
from typing import Any, Callable

from . import PROTOCOL_VERSION

ERROR_KINDS = ("bad_request", "unsupported", "no_problem", "no_candidate", "internal",
               "cannot_judge")
_MISSING = object()


class WorkerError(Exception):
    """An error answer: {"ok": false, "error": {"kind": kind, "message": message}}."""

    def __init__(self, kind: str, message: str):
        assert kind in ERROR_KINDS, kind
        super().__init__(message)
        self.kind = kind
        self.message = message


def bad_request(message: str) -> WorkerError:
    return WorkerError("bad_request", message)



# ---- parameter access -----------------------------------------------------------------

def _type_name(v: Any) -> str:
    return {bool: "bool", int: "integer", float: "number", str: "string", list: "array",
            dict: "object", type(None): "null"}.get(type(v), type(v).__name__)


def param(params: dict, key: str, kind: str, default: Any = _MISSING, where: str = "") -> Any:
    """Typed parameter: kind in str|int|uint|num|bool|dict|list. Missing and no default, or
    the wrong type -> bad_request naming the parameter."""
    label = f"{where}{key}"
    if key not in params or params[key] is None:
        if default is _MISSING:
            raise bad_request(f"missing parameter '{label}'")
        return default
    v = params[key]
    ok = {
        "str": isinstance(v, str),
        "int": isinstance(v, int) and not isinstance(v, bool),
        "uint": isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "num": isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
        "bool": isinstance(v, bool),
        "dict": isinstance(v, dict),
        "list": isinstance(v, list),
    }[kind]
    if not ok:
        want = {"str": "a string", "int": "an integer", "uint": "a non-negative integer",
                "num": "a finite number", "bool": "a bool", "dict": "an object",
                "list": "an array"}[kind]
        raise bad_request(f"parameter '{label}' must be {want}, got {_type_name(v)}")
    return float(v) if kind == "num" else v


# ---- JSON output ----------------------------------------------------------------------

def _sanitize(v: Any) -> Any:
    """JSON has no NaN/Inf: non-finite floats become +-DBL_MAX (NaN -> +DBL_MAX)."""
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return -1.7976931348623157e308 if v < 0 else 1.7976931348623157e308
    if isinstance(v, dict):
        return {str(k): _sanitize(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_sanitize(x) for x in v]
    return v


def ok_response(rid: int, result: dict) -> dict:
    return {"v": PROTOCOL_VERSION, "id": rid, "ok": True, "result": result}


def error_response(rid: int, kind: str, message: str) -> dict:
    return {"v": PROTOCOL_VERSION, "id": rid, "ok": False,
            "error": {"kind": kind, "message": message}}


def encode(obj: dict) -> str:
    return json.dumps(_sanitize(obj), separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False, default=str)


# ---- envelope -------------------------------------------------------------------------

def parse_request(line: bytes | str) -> tuple[int, str, dict]:
    """(id, op, params) or WorkerError('bad_request') with the id attached as .rid."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        obj = json.loads(text)
    except (UnicodeDecodeError, ValueError) as e:
        err = bad_request(f"malformed JSON: {e}")
        err.rid = 0  # type: ignore[attr-defined]
        raise err from None
    if not isinstance(obj, dict):
        err = bad_request(f"a request must be a JSON object, got {_type_name(obj)}")
        err.rid = 0  # type: ignore[attr-defined]
        raise err
    rid = obj.get("id")
    if not (isinstance(rid, int) and not isinstance(rid, bool)):
        err = bad_request("missing or invalid 'id' (an integer)")
        err.rid = 0  # type: ignore[attr-defined]
        raise err
    v = obj.get("v")
    if v != PROTOCOL_VERSION or isinstance(v, bool):
        err = bad_request(f"unsupported protocol version {json.dumps(v)} "
                          f"(this worker speaks version {PROTOCOL_VERSION})")
        err.rid = rid  # type: ignore[attr-defined]
        raise err
    op = obj.get("op")
    if not isinstance(op, str):
        err = bad_request("missing or invalid 'op' (a string)")
        err.rid = rid  # type: ignore[attr-defined]
        raise err
    params = {k: x for k, x in obj.items() if k not in ("v", "id", "op")}
    return rid, op, params


def take_over_stdio() -> tuple[io.BufferedReader, io.TextIOWrapper]:
    """Keeps private copies of fd 0/1 for the protocol; fd 1 then points at stderr and fd 0
    at /dev/null, so candidate prints (Python or C-level) and reads cannot touch the
    protocol stream."""
    sys.stdout.flush()
    proto_out_fd = os.dup(1)
    proto_in_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd in (proto_out_fd, proto_in_fd):
        os.set_inheritable(fd, False)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")
    proto_in = os.fdopen(proto_in_fd, "rb", buffering=0)
    proto_out = os.fdopen(proto_out_fd, "w", encoding="utf-8", newline="\n")
    return proto_in, proto_out  # type: ignore[return-value]


def _read_line(stream) -> bytes:
    """One line from an unbuffered binary stream (b'' at EOF)."""
    chunks = []
    while True:
        b = stream.readline()
        if not b:
            return b"".join(chunks)
        chunks.append(b)
        if b.endswith(b"\n"):
            return b"".join(chunks)


_traced_problem = [""]  # the problem the last load named: later requests act on it


def _trace(path: str, op: str, params: dict, seconds: float, result=None) -> None:
    spec = params.get("problem") if isinstance(params, dict) else None
    if isinstance(spec, dict) and isinstance(spec.get("path"), str):
        _traced_problem[0] = spec["path"]
    entry = {"pid": os.getpid(), "op": op, "problem": _traced_problem[0], "s": round(seconds, 4)}
    result = result if isinstance(result, dict) else {}
    phases = result.get("phases_s")
    if isinstance(phases, dict) and phases:
        entry["phases"] = phases
    # A check's errors against the float64 truth, per output: the slot's, the reference's
    # and (compiled mode) torch.compile's model's, the oracle's anchors (None: not measured).
    outs = result.get("outputs")
    if op == "check" and isinstance(outs, list):
        entry["errors"] = [[o.get(k) for k in ("rel_l2_err", "reference_rel_l2_err",
                                              "compiled_rel_l2_err")]
                           for o in outs if isinstance(o, dict)]
    line = json.dumps(entry)
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    except OSError:
        pass  # a trace that cannot be written never fails the request


def serve(handlers: dict[str, Callable[[dict], dict]], proto_in, proto_out,
          log: Callable[[str], None], fatal: Callable[[], str] = lambda: "") -> int:
    """The request loop. Returns the exit status: 0 on EOF or shutdown, 3 when `fatal()`
    reports (after an answer) that the process must not serve another request.

    With KGATE_WORKER_TRACE naming a file, each request appends one JSON line to it (pid,
    op, the problem the worker last loaded, seconds in the handler, the handler's own
    `phases_s` where it reports them, as load_problem does, and a check's errors): where a
    run's time goes, per request kind."""
    trace = os.environ.get("KGATE_WORKER_TRACE", "")
    while True:
        line = _read_line(proto_in)
        if not line:
            return 0
        if not line.strip():
            continue
        rid = 0
        stop = False
        try:
            rid, op, params = parse_request(line)
            handler = handlers.get(op)
            if handler is None:
                raise bad_request(f"unknown op '{op}'")
            t0 = time.perf_counter()
            result = handler(params)
            if trace:
                _trace(trace, op, params, time.perf_counter() - t0, result)
            response = ok_response(rid, result)
            stop = op == "shutdown"
        except WorkerError as e:
            rid = getattr(e, "rid", rid)
            response = error_response(rid, e.kind, e.message)
        except (Exception, SystemExit) as e:  # the worker keeps serving
            import traceback
            log("internal error:\n" + "".join(traceback.format_exception(e)))
            response = error_response(rid, "internal", f"{type(e).__name__}: {e}")
        try:
            text = encode(response)
        except (TypeError, ValueError) as e:
            text = encode(error_response(rid, "internal", f"unencodable result: {e}"))
        proto_out.write(text + "\n")
        proto_out.flush()
        if stop:
            return 0
        if fatal():
            return 3
