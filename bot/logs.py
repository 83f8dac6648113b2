"""structlog set-up: one event per line, console or JSON, and a last guard that no secret reaches a log."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Hashable, MutableMapping
from typing import Any

import structlog

_SECRET_KEYS = frozenset({"password", "passwd", "secret", "token", "pw"})


def _redact(_logger: object, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in list(event):
        if key.lower() in _SECRET_KEYS:
            event[key] = "********"
    return event


def setup(fmt: str = "console", level: str = "info", stream: Any = None) -> None:
    """Configure structlog for the daemon; ``fmt`` is ``console`` or ``json``."""
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=False)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper(), logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(stream or sys.stderr),
        cache_logger_on_first_use=False,
    )


def get(**context: Any) -> Any:
    """A logger bound to ``context`` (match ID, opponent ...), so every line of a match carries them."""
    return structlog.get_logger("gammond").bind(**context)


class Repeats:
    """Log a repeated event once, then its count: the first occurrence of a key is logged at once, later ones
    within ``window`` seconds only counted, and the count is logged when the next one comes after the window
    (or at ``flush``). A flood of one error (accept() failing on EMFILE, thousands of refused connections)
    then costs a few lines, not one line per occurrence."""

    def __init__(self, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self.clock = clock
        self._seen: dict[Hashable, list[float | int]] = {}  # key -> [window start, occurrences unlogged]

    def __repr__(self) -> str:
        return f"<Repeats {len(self._seen)} keys>"

    def hit(self, key: Hashable) -> int | None:
        """None: do not log this one (it is counted). Otherwise log it, with the returned number of earlier
        occurrences not logged (0 the first time)."""
        now = self.clock()
        entry = self._seen.get(key)
        if entry is None or now - entry[0] >= self.window:
            if len(self._seen) > 1000:  # bounded whatever the keys
                self._seen.clear()
            suppressed = 0 if entry is None else int(entry[1])
            self._seen[key] = [now, 0]
            return suppressed
        entry[1] += 1
        return None

    def flush(self) -> list[tuple[Hashable, int]]:
        """The keys with occurrences not yet logged and their counts; they are forgotten."""
        pending = [(key, int(entry[1])) for key, entry in self._seen.items() if entry[1]]
        self._seen.clear()
        return pending


def collapse_loop_errors(loop: asyncio.AbstractEventLoop, repeats: Repeats | None = None) -> Repeats:
    """Route the loop's unhandled errors (``call_exception_handler``: asyncio logs each accept() that fails
    on EMFILE, ...) through ``Repeats``: one line per kind of error and minute, with the count of the others."""
    repeats = repeats or Repeats()
    log = get()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = str(context.get("message") or "unhandled error in the event loop")
        errno = getattr(exc, "errno", None)
        suppressed = repeats.hit((message, type(exc).__name__, errno))
        if suppressed is None:
            return
        extra = {"repeated": suppressed} if suppressed else {}
        if isinstance(exc, OSError) and errno is not None:
            log.error(message, error=f"{type(exc).__name__}: {exc}", **extra)
        elif exc is not None:
            log.error(message, exc_info=exc, **extra)
        else:
            log.error(message, **extra)

    loop.set_exception_handler(handler)
    return repeats
