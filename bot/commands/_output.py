"""Shared output helpers: JSON lines for scripts (--json), plain text for people, and --batch loops."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO


def emit(
    obj: dict[str, Any], as_json: bool, text: Callable[[dict[str, Any]], str], out: TextIO = sys.stdout
) -> None:
    if as_json:
        out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    else:
        out.write(text(obj) + "\n")
    out.flush()


def batch(handle: Callable[[dict[str, Any]], dict[str, Any]], inp: TextIO, out: TextIO) -> int:
    """Answer one JSON object per input line; a bad line answers {"error": ...} and the loop goes on."""
    failures = 0
    for lineno, line in _lines(inp):
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("each line must be a JSON object")
            reply = handle(request)
        except (ValueError, KeyError, TypeError) as exc:
            failures += 1
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            reply = {"error": detail, "line": lineno}
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()
    return 1 if failures else 0


def _lines(inp: TextIO) -> Iterator[tuple[int, str]]:
    for lineno, line in enumerate(inp, 1):
        if line.strip():
            yield lineno, line
