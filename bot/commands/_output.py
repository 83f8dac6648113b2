"""Shared output helpers: JSON lines for scripts (--json), plain text for people, and --batch loops.

A --batch loop reads one JSON object per line and answers one JSON object per line. Whatever a line holds (not
JSON, nested thousands deep, numbers such as ``1e999`` or ``NaN``, a field of the wrong type, bytes that are not
UTF-8), the answer is ``{"error": ..., "line": N}`` and the loop goes on: the request fields are checked here,
one by one, with a message that names the field.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

# The longest "id" echoed back in an error reply (a position ID with a match ID is 27 characters).
_MAX_ECHO = 200


class RequestError(ValueError):
    """A --batch request line that is not what the command reads: bad JSON, a missing or mistyped field."""


def emit(
    obj: dict[str, Any], as_json: bool, text: Callable[[dict[str, Any]], str], out: TextIO | None = None
) -> None:
    # sys.stdout is looked up at each call, not bound at import: it may be replaced (pytest, redirection).
    out = sys.stdout if out is None else out
    if as_json:
        out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    else:
        out.write(text(obj) + "\n")
    out.flush()


def _no_constant(name: str) -> Any:
    raise RequestError(f"{name} is not a JSON number")


def parse_request(line: str) -> dict[str, Any]:
    """One request line as a JSON object, or RequestError (never RecursionError or OverflowError)."""
    try:
        request = json.loads(line, parse_constant=_no_constant)
    except RecursionError:
        raise RequestError("the JSON is nested too deeply") from None
    except RequestError:
        raise
    except json.JSONDecodeError as exc:
        raise RequestError(f"not JSON: {exc}") from None
    except ValueError:  # Python refuses integers of more than 4300 digits
        raise RequestError("not JSON: a number has too many digits") from None
    if not isinstance(request, dict):
        raise RequestError(f"each line must be a JSON object, not {_kind(request)}")
    return request


def _kind(value: Any) -> str:
    """A short description of a JSON value for messages: never its repr, which may be huge or nested."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = str(value) if value.bit_length() < 64 else "a huge integer"
        return text
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"a string of {len(value)} characters"
    if isinstance(value, list):
        return "a list"
    return "an object"


def check_fields(request: dict[str, Any], allowed: Iterable[str]) -> None:
    """Unknown fields are errors: a typo such as ``"ply"`` would otherwise be silently ignored."""
    unknown = sorted(set(request) - set(allowed))
    if unknown:
        names = ", ".join(repr(k) if len(k) <= 40 else f"{k[:40]!r}..." for k in unknown[:5])
        raise RequestError(
            f"unknown field{'s' if len(unknown) > 1 else ''} {names}; known: {', '.join(allowed)}"
        )


def int_field(request: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    """An integer field in low..high (true/false and 2.0 are not integers here)."""
    value = request.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(f"{name!r} must be an integer in {low}..{high}, not {_kind(value)}")
    return value


def str_field(
    request: dict[str, Any], name: str, default: str | None = None, max_len: int = 200
) -> str | None:
    """A string field (or its default when absent or null), at most max_len characters."""
    value = request.get(name)
    if value is None:
        return default
    if not isinstance(value, str) or len(value) > max_len:
        raise RequestError(f"{name!r} must be a string of at most {max_len} characters, not {_kind(value)}")
    return value


def required_str(request: dict[str, Any], name: str, max_len: int = 200) -> str:
    if name not in request:
        raise RequestError(f"missing field {name!r}")
    value = str_field(request, name, None, max_len)
    if value is None:
        raise RequestError(f"{name!r} must be a string, not null")
    return value


def batch(handle: Callable[[dict[str, Any]], dict[str, Any]], inp: Iterable[str | bytes], out: TextIO) -> int:
    """Answer one JSON object per input line; a bad line answers {"error": ..., "line": N} and the loop goes on.

    ``handle`` signals a bad request by a ValueError (every engine error is one). Anything else is a bug: the
    line is answered ``{"error": "internal error: ...", "internal": true}`` with the traceback on stderr, and
    the loop still goes on. Returns 1 if any line failed, else 0."""
    failures = 0
    for lineno, line in _lines(inp):
        request: dict[str, Any] | None = None
        try:
            if isinstance(line, bytes):
                try:
                    line = line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise RequestError(f"not UTF-8: {exc.reason} at byte {exc.start}") from None
            request = parse_request(line)
            reply = handle(request)
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            failures += 1
            reply = {"error": _message(exc), "line": lineno}
        except Exception as exc:  # a bug: say so, and answer the next line all the same
            failures += 1
            traceback.print_exc(file=sys.stderr)
            reply = {
                "error": f"internal error: {type(exc).__name__}: {exc}",
                "line": lineno,
                "internal": True,
            }
        if "error" in reply and request is not None:
            echo = request.get("id")
            if isinstance(echo, str) and len(echo) <= _MAX_ECHO:
                reply["id"] = echo
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()
    return 1 if failures else 0


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc}"
    if isinstance(exc, RecursionError):
        return "the request is nested too deeply"
    if isinstance(exc, OverflowError):
        return f"a number is out of range: {exc}"
    return str(exc)


def _lines(inp: Iterable[str | bytes]) -> Iterator[tuple[int, str | bytes]]:
    for lineno, line in enumerate(inp, 1):
        if line.strip():
            yield lineno, line
