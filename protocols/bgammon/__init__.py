"""bgammon.org client codec, sans-I/O: JSON events to typed events, commands to text lines, the board to and
from the engine's types, and a tracker that turns a match's events into a match record."""

from protocols.bgammon.board import BgammonBoardError, BoardState, PlayerInfo, spaces_of, win_level
from protocols.bgammon.codec import (
    BgammonClientProtocol,
    BgammonCommandError,
    BgammonEventError,
    encode_event,
    parse_event,
)
from protocols.bgammon.tracker import MatchTracker

__all__ = [
    "BgammonBoardError",
    "BgammonClientProtocol",
    "BgammonCommandError",
    "BgammonEventError",
    "BoardState",
    "MatchTracker",
    "PlayerInfo",
    "encode_event",
    "parse_event",
    "spaces_of",
    "win_level",
]
