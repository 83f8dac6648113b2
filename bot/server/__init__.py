"""The embedded FIBS-compatible server: ``FibsServer`` (asyncio), its store, tables and ratings."""

from bot.server.server import FibsServer
from bot.server.store import Store

__all__ = ["FibsServer", "Store"]
