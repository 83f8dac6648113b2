"""bgammon.org client codec, sans-I/O: JSON events to typed events, commands to text lines, the board to and
from the engine's types. The tracker that turns a match's events into a match record is the bot's
(bot/bgammon/match.py)."""

from protocols.bgammon.board import BgammonBoardError, BoardState, PlayerInfo, spaces_of, win_level
from protocols.bgammon.codec import (
    BgammonClientProtocol,
    BgammonCommandError,
    BgammonEventError,
    encode_event,
    parse_event,
)

__all__ = [
    "BgammonBoardError",
    "BgammonClientProtocol",
    "BgammonCommandError",
    "BgammonEventError",
    "BoardState",
    "PlayerInfo",
    "encode_event",
    "parse_event",
    "spaces_of",
    "win_level",
]
