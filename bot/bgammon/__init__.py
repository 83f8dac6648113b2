"""The bgammon bot: the connection and its events (bot.py), the server's address, backoff and options
(session.py), the TCP and WebSocket transports (link.py), the bot's decisions that need no connection
(decisions.py), the match tracked from the server's events into an engine record (match.py) and its archive
write (archiving.py)."""

from bot.bgammon.archiving import archive_match
from bot.bgammon.bot import BgammonBot, make_bgammon_bot, run_bgammon_bot
from bot.bgammon.decisions import bgammon_take
from bot.bgammon.match import MatchTracker
from bot.bgammon.session import (
    BgammonAddress,
    BgammonAddressError,
    BgammonOptions,
    backoff_delay,
    parse_address,
)

__all__ = [
    "BgammonAddress",
    "BgammonAddressError",
    "BgammonBot",
    "BgammonOptions",
    "MatchTracker",
    "archive_match",
    "backoff_delay",
    "bgammon_take",
    "make_bgammon_bot",
    "parse_address",
    "run_bgammon_bot",
]
