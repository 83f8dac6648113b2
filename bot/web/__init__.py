"""The web page and WebSocket endpoint beside the embedded FIBS server: ``start_web`` (the daemon's entry point)
and ``WebService``."""

from bot.web.server import WebService, start_web

__all__ = ["WebService", "start_web"]
