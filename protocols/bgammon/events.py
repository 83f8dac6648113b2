"""Typed events of the bgammon client codec: one frozen dataclass per JSON event type the bot uses
(tslocum/bgammon ``event.go``), plus ``Unhandled`` (any other type, kept as data), ``TextLine`` (a line that
is not JSON, like the TCP greeting ``hello ...``) and ``Malformed`` (JSON that does not fit its type).

``player`` is the ``Player`` field every bgammon event carries: the name of the player it concerns (the sender
of ``say``, the roller of ``rolled``, the winner of ``win`` ...), ``""`` when none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from protocols.bgammon.board import BoardState


@dataclass(frozen=True, slots=True, kw_only=True)
class BgammonEvent:
    TYPE: ClassVar[str] = ""
    player: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(BgammonEvent):
    """Sent once after a login: the name the server gave us (``bot_x`` logs in as ``BOT_x``)."""

    TYPE: ClassVar[str] = "welcome"
    player_name: str
    clients: int = 0
    games: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(BgammonEvent):
    """Answer with ``pong <message>``; some command must reach the server at least every 40 s anyway."""

    TYPE: ClassVar[str] = "ping"
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice(BgammonEvent):
    TYPE: ClassVar[str] = "notice"
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Say(BgammonEvent):
    TYPE: ClassVar[str] = "say"
    message: str


@dataclass(frozen=True, slots=True)
class GameListing:
    id: int
    password: bool = False
    points: int = 1
    players: int = 0
    rating: int = 0
    name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchList(BgammonEvent):
    TYPE: ClassVar[str] = "list"
    games: tuple[GameListing, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure(BgammonEvent):
    """Base of the ``failed*`` events: a command the server refused, with its reason."""

    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedCreate(Failure):
    TYPE: ClassVar[str] = "failedcreate"


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedJoin(Failure):
    TYPE: ClassVar[str] = "failedjoin"


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedLeave(Failure):
    TYPE: ClassVar[str] = "failedleave"


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedRoll(Failure):
    TYPE: ClassVar[str] = "failedroll"


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedMove(Failure):
    TYPE: ClassVar[str] = "failedmove"
    from_space: int = 0
    to_space: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedOk(Failure):
    TYPE: ClassVar[str] = "failedok"


@dataclass(frozen=True, slots=True, kw_only=True)
class Joined(BgammonEvent):
    """``player`` joined match ``game_id``; ``player_number`` 1 is ourselves, 2 the opponent arriving."""

    TYPE: ClassVar[str] = "joined"
    game_id: int
    player_number: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Left(BgammonEvent):
    TYPE: ClassVar[str] = "left"


@dataclass(frozen=True, slots=True, kw_only=True)
class Board(BgammonEvent):
    TYPE: ClassVar[str] = "board"
    state: BoardState


@dataclass(frozen=True, slots=True, kw_only=True)
class Rolled(BgammonEvent):
    """``player`` rolled; during the opening roll ``roll1`` is the receiving client's die."""

    TYPE: ClassVar[str] = "rolled"
    roll1: int = 0
    roll2: int = 0
    roll3: int = 0
    selected: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Moved(BgammonEvent):
    """Steps ``player`` just played, in the receiving client's spaces (a backward step undoes one)."""

    TYPE: ClassVar[str] = "moved"
    moves: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Win(BgammonEvent):
    """``player`` won the game; ``points`` as scored (0 in a 1-point match), ``resigned`` the loser's name when
    the game ended by a resignation or a declined double."""

    TYPE: ClassVar[str] = "win"
    points: int = 0
    rating: int = 0
    resigned: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Unhandled(BgammonEvent):
    """A JSON event of a type the bot does not use (help, settings, replay ... or one not known at all)."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextLine(BgammonEvent):
    """A line that is not JSON: the TCP greeting ``hello ...``, or a human-readable event."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed(BgammonEvent):
    """JSON that could not be read as its event type; ``error`` says why."""

    text: str
    error: str


EVENT_TYPES: dict[str, type[BgammonEvent]] = {
    cls.TYPE: cls
    for cls in (
        Welcome,
        Ping,
        Notice,
        Say,
        MatchList,
        FailedCreate,
        FailedJoin,
        FailedLeave,
        FailedRoll,
        FailedMove,
        FailedOk,
        Joined,
        Left,
        Board,
        Rolled,
        Moved,
        Win,
    )
}
