"""The FIBS bot: the connection and its decisions (bot.py), the tracked match (match.py, bridge.py), the
session's small parts (session.py) and the archive writes (archiving.py)."""

from bot.fibs.archiving import archive_stored, recover_unarchived, render_mat
from bot.fibs.bot import FibsBot
from bot.fibs.match import MatchTracker, TrackerError
from bot.fibs.session import Backoff, FibsEndpoint

__all__ = [
    "Backoff",
    "FibsBot",
    "FibsEndpoint",
    "MatchTracker",
    "TrackerError",
    "archive_stored",
    "recover_unarchived",
    "render_mat",
]
