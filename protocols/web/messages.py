"""The gammond WebSocket protocol, sans-I/O: JSON messages as typed values, both ways (docs/websocket-protocol.md).

Every message is one JSON object in one text frame, with ``type`` naming it. A client opens with ``hello``
(carrying ``PROTOCOL_VERSION``); the server answers ``welcome``. ``parse_client`` and ``parse_server`` turn
text into message values, checking every field (a typed ``WebProtocolError`` names what is wrong, with a
``code`` the server repeats in its ``error`` reply); ``render`` turns any message back into text. Unknown
fields are ignored so that a later minor version may add optional ones.

The codec is generic over the dataclasses below: a field's annotation says how it is read (str, int,
float, bool, ``X | None``, ``Literal``, ``tuple[X, ...]``, fixed tuples and nested message parts), and each
class's ``__post_init__`` adds the checks of range and meaning.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Literal

PROTOCOL_VERSION = 1
MAX_MESSAGE = 16 * 1024  # characters of one client message
MAX_STRING = 1000  # characters of any string field unless a check says less
MAX_ITEMS = 5000  # items of any list field (the legal plays of a double stay well below)
MAX_CHAT = 400  # characters of chat text (the FIBS server keeps as many)
MAX_NAME = 20  # account names, as at the FIBS server
MAX_PASSWORD = 128
MAX_TOKEN = 128
MAX_LENGTH = 99  # match length in an invitation (0 = unlimited)

Step = tuple[int, int]
ResignName = Literal["single", "gammon", "backgammon"]
ChatScope = Literal["say", "kibitz", "whisper", "shout", "tell"]
RESIGN_LEVELS: dict[str, int] = {"single": 1, "gammon": 2, "backgammon": 3}


class WebProtocolError(ValueError):
    """A message that cannot be read; ``code`` is the short name the server's ``error`` reply carries."""

    code = "bad_message"


class MessageSyntaxError(WebProtocolError):
    """Not a JSON object, or too long."""

    code = "bad_json"


class UnknownMessageError(WebProtocolError):
    """A ``type`` this version does not know."""

    code = "unknown_type"


class MessageFieldError(WebProtocolError):
    """A field missing, of the wrong kind or out of range; the message names it."""

    code = "bad_field"


class VersionError(WebProtocolError):
    """A ``hello`` for a protocol version this server does not speak."""

    code = "version"


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every message; subclasses set ``TYPE``."""

    TYPE: ClassVar[str] = ""


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise MessageFieldError(message)


def _check_name(name: str, where: str) -> None:
    _check(0 < len(name) <= MAX_NAME and name.isprintable() and " " not in name, f"{where}: not a user name")


def _check_steps(steps: tuple[Step, ...]) -> None:
    _check(1 <= len(steps) <= 4, f"steps: a move has 1 to 4 steps, not {len(steps)}")
    for src, dst in steps:
        _check(1 <= src <= 25 and 0 <= dst <= 24 and dst < src, f"steps: {src}/{dst} is not a forward step")


# -- client to server ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """The first message of a connection."""

    TYPE: ClassVar[str] = "hello"
    version: int
    client: str = ""

    def __post_init__(self) -> None:
        _check(len(self.client) <= 80, "client: at most 80 characters")


@dataclass(frozen=True, slots=True)
class Login(Message):
    TYPE: ClassVar[str] = "login"
    name: str
    password: str

    def __repr__(self) -> str:  # never shows the password
        return f"Login(name={self.name!r}, password='********')"

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        _check(0 < len(self.password) <= MAX_PASSWORD, "password: 1 to 128 characters")
        _check(" " not in self.password and self.password.isprintable(), "password: no blanks")


@dataclass(frozen=True, slots=True)
class Register(Message):
    """A new account (the same accounts as the FIBS server's), logged in at once."""

    TYPE: ClassVar[str] = "register"
    name: str
    password: str

    def __repr__(self) -> str:
        return f"Register(name={self.name!r}, password='********')"

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        _check(4 <= len(self.password) <= MAX_PASSWORD, "password: 4 to 128 characters")
        _check(" " not in self.password and self.password.isprintable(), "password: no blanks")


@dataclass(frozen=True, slots=True)
class Resume(Message):
    """Log in again with the saved login a ``logged_in`` gave (a page reconnecting, the daemon restarted)."""

    TYPE: ClassVar[str] = "resume"
    name: str
    token: str

    def __repr__(self) -> str:  # never shows the token
        return f"Resume(name={self.name!r}, token='********')"

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        _check(0 < len(self.token) <= MAX_TOKEN and self.token.isascii(), "token: 1 to 128 ASCII characters")


@dataclass(frozen=True, slots=True)
class Logout(Message):
    """Log out; a saved login of this connection ends with it."""

    TYPE: ClassVar[str] = "logout"


@dataclass(frozen=True, slots=True)
class ListLobby(Message):
    """Ask for the lobby now (it is also pushed whenever it changes)."""

    TYPE: ClassVar[str] = "list"


@dataclass(frozen=True, slots=True)
class Invite(Message):
    """``length`` 0 = unlimited (money play); None = resume the saved match with that player."""

    TYPE: ClassVar[str] = "invite"
    name: str
    length: int | None = 1

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        _check(self.length is None or 0 <= self.length <= MAX_LENGTH, f"length: 0 to {MAX_LENGTH} or null")


@dataclass(frozen=True, slots=True)
class AcceptInvitation(Message):
    TYPE: ClassVar[str] = "accept_invitation"
    name: str

    def __post_init__(self) -> None:
        _check_name(self.name, "name")


@dataclass(frozen=True, slots=True)
class Ready(Message):
    """Whether others may invite you (the FIBS ``ready`` toggle)."""

    TYPE: ClassVar[str] = "ready"
    on: bool


@dataclass(frozen=True, slots=True)
class Roll(Message):
    TYPE: ClassVar[str] = "roll"


@dataclass(frozen=True, slots=True)
class Double(Message):
    TYPE: ClassVar[str] = "double"


@dataclass(frozen=True, slots=True)
class Take(Message):
    TYPE: ClassVar[str] = "take"


@dataclass(frozen=True, slots=True)
class Drop(Message):
    TYPE: ClassVar[str] = "drop"


@dataclass(frozen=True, slots=True)
class Beaver(Message):
    """Take and redouble at once (unlimited matches only; FIBS ``redouble``)."""

    TYPE: ClassVar[str] = "beaver"


@dataclass(frozen=True, slots=True)
class MovePlay(Message):
    """A whole play: steps (from, to) in the mover's own numbering, 25 = bar, 0 = off (one of ``board.legal``)."""

    TYPE: ClassVar[str] = "move"
    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        _check_steps(self.steps)


@dataclass(frozen=True, slots=True)
class Resign(Message):
    TYPE: ClassVar[str] = "resign"
    level: ResignName = "single"


@dataclass(frozen=True, slots=True)
class AcceptResign(Message):
    TYPE: ClassVar[str] = "accept_resign"


@dataclass(frozen=True, slots=True)
class RejectResign(Message):
    TYPE: ClassVar[str] = "reject_resign"


@dataclass(frozen=True, slots=True)
class NextGame(Message):
    """Ready for the next game of the match (FIBS ``join`` between games)."""

    TYPE: ClassVar[str] = "next_game"


@dataclass(frozen=True, slots=True)
class Leave(Message):
    """Stop playing: the match is saved and may be resumed later."""

    TYPE: ClassVar[str] = "leave"


@dataclass(frozen=True, slots=True)
class Watch(Message):
    """Spectate a live match (by its id from ``lobby``), drawn with seat ``seat`` at the bottom."""

    TYPE: ClassVar[str] = "watch"
    match: str
    seat: int = 0

    def __post_init__(self) -> None:
        _check(0 < len(self.match) <= 200, "match: not a match id")
        _check(self.seat in (0, 1), "seat: 0 or 1")


@dataclass(frozen=True, slots=True)
class Unwatch(Message):
    TYPE: ClassVar[str] = "unwatch"


@dataclass(frozen=True, slots=True)
class Chat(Message):
    """``say`` to the opponent, ``kibitz`` to a match's players and watchers, ``whisper`` to its watchers,
    ``shout`` to everyone, ``tell`` to the user ``to``."""

    TYPE: ClassVar[str] = "chat"
    text: str
    scope: ChatScope = "kibitz"
    to: str | None = None

    def __post_init__(self) -> None:
        _check(
            0 < len(self.text) <= MAX_CHAT and "\n" not in self.text, "text: 1 to 400 characters, one line"
        )
        _check((self.scope == "tell") == (self.to is not None), "to: needed for tell, and only there")
        if self.to is not None:
            _check_name(self.to, "to")


CLIENT_MESSAGES: tuple[type[Message], ...] = (
    Hello,
    Login,
    Register,
    Resume,
    Logout,
    ListLobby,
    Invite,
    AcceptInvitation,
    Ready,
    Roll,
    Double,
    Take,
    Drop,
    Beaver,
    MovePlay,
    Resign,
    AcceptResign,
    RejectResign,
    NextGame,
    Leave,
    Watch,
    Unwatch,
    Chat,
)

# -- server to client ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome(Message):
    TYPE: ClassVar[str] = "welcome"
    version: int
    server: str


@dataclass(frozen=True, slots=True)
class LoggedIn(Message):
    """``token``: after a login with the password, a saved login for ``resume`` (keep it like a password)."""

    TYPE: ClassVar[str] = "logged_in"
    name: str
    rating: float
    experience: int
    ready: bool
    token: str | None = None

    def __repr__(self) -> str:  # never shows the token
        token = None if self.token is None else "'********'"
        return (
            f"LoggedIn(name={self.name!r}, rating={self.rating!r}, experience={self.experience!r}, "
            f"ready={self.ready!r}, token={token})"
        )


@dataclass(frozen=True, slots=True)
class LoggedOut(Message):
    """Back to a guest: ``reason`` is logout, elsewhere (the account logged in again) or closed."""

    TYPE: ClassVar[str] = "logged_out"
    reason: str


@dataclass(frozen=True, slots=True)
class Error(Message):
    """A request that failed: ``code`` (bad_json, unknown_type, bad_field, version, not_logged_in,
    login_failed, refused, illegal_move, no_match), ``request`` the type it answers, if known."""

    TYPE: ClassVar[str] = "error"
    code: str
    message: str
    request: str | None = None


@dataclass(frozen=True, slots=True)
class Notice(Message):
    """A server line with no message of its own (shown as it is)."""

    TYPE: ClassVar[str] = "notice"
    text: str


@dataclass(frozen=True, slots=True)
class Accepts:
    """The match lengths a bot accepts an invitation to (its invitation policy): ``min_length..max_length``,
    and unlimited matches when ``unlimited``."""

    min_length: int
    max_length: int
    unlimited: bool


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    name: str
    bot: bool
    ready: bool
    away: bool
    playing: str | None  # the opponent
    watching: str | None
    rating: float
    experience: int
    web: bool  # connected through the web page
    accepts: Accepts | None = None  # a bot's accepted lengths (null: a person, or not known)


@dataclass(frozen=True, slots=True)
class MatchInfo:
    id: str
    players: tuple[str, str]  # seats 0 and 1
    length: int  # 0 = unlimited
    score: tuple[int, int]
    watchers: int


@dataclass(frozen=True, slots=True)
class Lobby(Message):
    TYPE: ClassVar[str] = "lobby"
    players: tuple[PlayerInfo, ...]
    matches: tuple[MatchInfo, ...]


@dataclass(frozen=True, slots=True)
class Invitation(Message):
    """``inviter`` asks you to play: ``length`` 0 = unlimited, None = resume your saved match."""

    TYPE: ClassVar[str] = "invitation"
    inviter: str
    length: int | None


@dataclass(frozen=True, slots=True)
class ChatLine(Message):
    TYPE: ClassVar[str] = "chat"
    sender: str
    scope: ChatScope
    text: str


@dataclass(frozen=True, slots=True)
class LegalPlay:
    steps: tuple[Step, ...]  # the mover's numbering, one die each, 25 = bar, 0 = off
    text: str  # gnubg notation


@dataclass(frozen=True, slots=True)
class BoardView(Message):
    """The whole state of one match as one viewer sees it. Sides: 0 = the bottom player (the viewer, or the
    seat a spectator chose), 1 = the top player. ``points[i]`` is point i+1 in the bottom player's numbering
    (they move 24 -> 1): > 0 their chequers, < 0 the top player's."""

    TYPE: ClassVar[str] = "board"
    match: str
    seq: int  # the match's update number: the same board has the same seq for every viewer
    names: tuple[str, str]
    seats: tuple[int, int]  # the table seats of the bottom and top players
    player: bool  # the viewer plays the bottom side (False: a spectator)
    length: int
    score: tuple[int, int]
    crawford: bool
    game: int
    state: Literal["playing", "between", "over"]
    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]
    pips: tuple[int, int]
    on_roll: int | None
    to_act: int | None
    dice: tuple[int, int] | None
    cube: int
    cube_owner: int  # -1 centred
    doubled: bool
    resigned: int  # level offered by the side not to act (0 none)
    position_id: str
    match_id: str
    actions: tuple[str, ...]
    legal: tuple[LegalPlay, ...]
    winner: int | None  # side, once the match is over

    def __post_init__(self) -> None:
        _check(len(self.points) == 24, "points: 24 counts")


@dataclass(frozen=True, slots=True)
class GameEvent(Message):
    """Something that happened in a match, in order. ``player`` is a table seat (``board.seats`` maps it to a
    side); ``steps`` are in the mover's numbering; ``score`` (seat order) comes with game and match ends."""

    TYPE: ClassVar[str] = "event"
    match: str
    seq: int
    game: int
    kind: Literal[
        "game_start",
        "roll",
        "move",
        "double",
        "beaver",
        "take",
        "drop",
        "resign",
        "accept_resign",
        "reject_resign",
        "game_end",
        "match_end",
    ]
    index: int = 0  # the action's number in its game (as in ``kibitz``); 0 for a game's start
    player: int | None = None
    name: str | None = None
    dice: tuple[int, int] | None = None
    steps: tuple[Step, ...] | None = None
    text: str | None = None
    cube: int | None = None
    level: int | None = None
    points: int | None = None
    score: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Kibitz(Message):
    """The engine on one move: ``probs`` are the mover's (win, win gammon, win backgammon, lose gammon,
    lose backgammon) after the move played; ``win`` and ``mwc`` are seat 0's game and (cubeless) match
    winning chances then (``mwc`` null in unlimited play)."""

    TYPE: ClassVar[str] = "kibitz"
    match: str
    game: int
    index: int  # the action's number in its game, from 1
    player: int
    name: str
    dice: tuple[int, int]
    played: str
    best: str
    equity_lost: float
    probs: tuple[float, float, float, float, float]
    win: float
    mwc: float | None
    plies: int


CubeAction = Literal["no_double", "double", "take", "drop", "beaver"]


@dataclass(frozen=True, slots=True)
class CubeKibitz(Message):
    """The engine on one cube decision: ``action`` what ``name`` (table seat ``player``) did, ``best`` what
    the engine would have done, ``verdict`` gnubg's words for the position ("No double, take", "Double,
    pass", "Too good, pass" ...). The three equities are the doubler's cubeful equities (normalised:
    money units of the cube, or match equity as EMG), ``equity_lost`` the decider's loss by the action."""

    TYPE: ClassVar[str] = "cube_kibitz"
    match: str
    game: int
    index: int  # the action's number in its game (a no-double is the index of the roll that followed)
    player: int
    name: str
    doubler: int  # table seat of the player who had the cube decision
    action: CubeAction
    best: CubeAction
    verdict: str
    no_double: float
    double_take: float
    double_pass: float
    equity_lost: float
    plies: int


@dataclass(frozen=True, slots=True)
class Analysis(Message):
    """Every kibitz of a match so far: sent to a new spectator, and to the players when the match ends."""

    TYPE: ClassVar[str] = "analysis"
    match: str
    kibitzes: tuple[Kibitz, ...]
    cubes: tuple[CubeKibitz, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchClosed(Message):
    """The match is no longer live: ``finished`` (``winner`` set) or ``saved`` (a player left or dropped)."""

    TYPE: ClassVar[str] = "match_closed"
    match: str
    reason: Literal["finished", "saved"]
    winner: str | None = None


SERVER_MESSAGES: tuple[type[Message], ...] = (
    Welcome,
    LoggedIn,
    LoggedOut,
    Error,
    Notice,
    Lobby,
    Invitation,
    ChatLine,
    BoardView,
    GameEvent,
    Kibitz,
    CubeKibitz,
    Analysis,
    MatchClosed,
)

_CLIENT_TYPES = {cls.TYPE: cls for cls in CLIENT_MESSAGES}
_SERVER_TYPES = {cls.TYPE: cls for cls in SERVER_MESSAGES}


# -- reading ------------------------------------------------------------------------------------------------


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is str:
        _check(isinstance(value, str), f"{where}: expected a string")
        _check(len(value) <= MAX_STRING, f"{where}: longer than {MAX_STRING} characters")
        return value
    if hint is bool:
        _check(isinstance(value, bool), f"{where}: expected true or false")
        return value
    if hint is int:
        _check(isinstance(value, int) and not isinstance(value, bool), f"{where}: expected an integer")
        _check(abs(value) < 1 << 53, f"{where}: out of range")
        return value
    if hint is float:
        _check(isinstance(value, int | float) and not isinstance(value, bool), f"{where}: expected a number")
        _check(math.isfinite(value), f"{where}: not a finite number")
        return float(value)
    if origin is Literal:
        _check(
            value in typing.get_args(hint), f"{where}: one of {', '.join(map(str, typing.get_args(hint)))}"
        )
        return value
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None:
            _check(type(None) in options, f"{where}: may not be null")
            return None
        inner = [h for h in options if h is not type(None)]
        return _decode(value, inner[0], where)
    if origin is tuple:
        args = typing.get_args(hint)
        _check(isinstance(value, list), f"{where}: expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            _check(len(value) <= MAX_ITEMS, f"{where}: more than {MAX_ITEMS} items")
            return tuple(_decode(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        _check(len(value) == len(args), f"{where}: expected {len(args)} items")
        return tuple(_decode(v, h, f"{where}[{i}]") for i, (v, h) in enumerate(zip(value, args, strict=True)))
    if dataclasses.is_dataclass(hint):
        _check(isinstance(value, dict), f"{where}: expected an object")
        return _build(hint, value, where)  # type: ignore[arg-type]
    raise TypeError(f"{where}: no reader for {hint!r}")  # pragma: no cover - a programming error


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            values[f.name] = _decode(data[f.name], hints[f.name], f"{where}.{f.name}" if where else f.name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise MessageFieldError(f"{where}.{f.name}: missing" if where else f"{f.name}: missing")
    try:
        return cls(**values)
    except MessageFieldError as exc:
        raise MessageFieldError(f"{where}.{exc}" if where else str(exc)) from None


def _parse(text: str | bytes, registry: dict[str, type[Message]], limit: int | None) -> Message:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise MessageSyntaxError("a message must be UTF-8 text") from None
    if limit is not None and len(text) > limit:
        raise MessageSyntaxError(f"a message is at most {limit} characters")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise MessageSyntaxError(f"not JSON: {getattr(exc, 'msg', 'too deep')}") from None
    except ValueError:  # an integer of more than 4300 digits, which Python will not convert
        raise MessageSyntaxError("not JSON: a number has too many digits") from None
    if not isinstance(data, dict):
        raise MessageSyntaxError("a message must be a JSON object")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise MessageSyntaxError("a message needs a string 'type'")
    cls = registry.get(kind)
    if cls is None:
        raise UnknownMessageError(f"unknown message type {kind[:40]!r}")
    return typing.cast(Message, _build(cls, data, ""))


def parse_client(text: str | bytes) -> Message:
    """A message from a client (at most ``MAX_MESSAGE`` characters); WebProtocolError if it is not one."""
    return _parse(text, _CLIENT_TYPES, MAX_MESSAGE)


def parse_server(text: str | bytes) -> Message:
    """A message from the server (what a Python client or a test reads)."""
    return _parse(text, _SERVER_TYPES, None)


def check_hello(message: Message) -> Hello:
    """The opening message: a ``hello`` of this version, or VersionError / UnknownMessageError."""
    if not isinstance(message, Hello):
        raise UnknownMessageError(f"the first message must be hello, not {message.TYPE}")
    if message.version != PROTOCOL_VERSION:
        raise VersionError(f"protocol version {message.version} is not spoken here (only {PROTOCOL_VERSION})")
    return message


# -- writing ------------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def to_json(message: Message) -> dict[str, Any]:
    """The message as a JSON object (``type`` first)."""
    return {"type": message.TYPE, **_plain(message)}


def render(message: Message) -> str:
    """The message as the text of one WebSocket frame."""
    return json.dumps(to_json(message), separators=(",", ":"), ensure_ascii=False)
