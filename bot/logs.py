"""structlog set-up: one event per line, console or JSON, and a last guard that no secret reaches a log."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
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
