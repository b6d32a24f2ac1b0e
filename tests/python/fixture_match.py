"""Matcher for protocol fixtures (tests/fixtures/protocol/README.md): placeholders
"<any>", "<number>", "<string>", "<bool>", "<array>", "<object>", "<contains:TEXT>";
objects match when every expected key matches (extra actual keys allowed); arrays need
the same length; numbers compare as doubles."""

from __future__ import annotations

import json
from pathlib import Path


def match(expected, actual, path: str = "$") -> list[str]:
    """The list of mismatches (empty when `actual` matches `expected`)."""
    if isinstance(expected, str) and expected.startswith("<") and expected.endswith(">"):
        tag = expected[1:-1]
        if tag == "any":
            return []
        if tag.startswith("contains:"):
            text = tag[len("contains:"):]
            if isinstance(actual, str) and text in actual:
                return []
            return [f"{path}: expected a string containing {text!r}, got {actual!r}"]
        checks = {
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "string": lambda v: isinstance(v, str),
            "bool": lambda v: isinstance(v, bool),
            "array": lambda v: isinstance(v, list),
            "object": lambda v: isinstance(v, dict),
        }
        if tag in checks:
            return [] if checks[tag](actual) else [f"{path}: expected {expected}, got "
                                                   f"{actual!r}"]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        errors = []
        for k, v in expected.items():
            if k not in actual:
                errors.append(f"{path}.{k}: missing")
            else:
                errors += match(v, actual[k], f"{path}.{k}")
        return errors
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected an array of {len(expected)}, got {actual!r}"]
        errors = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            errors += match(e, a, f"{path}[{i}]")
        return errors
    if isinstance(expected, bool) or isinstance(actual, bool):
        ok = type(expected) is type(actual) and expected == actual
    elif isinstance(expected, (int, float)):
        ok = isinstance(actual, (int, float)) and float(expected) == float(actual)
    else:
        ok = expected == actual
    return [] if ok else [f"{path}: expected {expected!r}, got {actual!r}"]


def load_session(name: str, fixtures: Path, cache_dir: Path) -> tuple[list, list]:
    """(request lines, expected responses) of tests/fixtures/protocol/<name>.*.json."""
    def load(kind: str):
        text = (fixtures / "protocol" / f"{name}.{kind}.json").read_text(encoding="utf-8")
        text = text.replace("${FIXTURES}", str(fixtures)).replace("${CACHE_DIR}",
                                                                   str(cache_dir))
        return json.loads(text)
    requests = [r if isinstance(r, str) else json.dumps(r, separators=(",", ":"))
                for r in load("request")]
    return requests, load("response")
