"""The bgammon client codec, sans-I/O: server events (JSON, one per line or WebSocket frame) in, typed events
out; commands out as text lines.

Over TCP commands and events are separated by newlines; over WebSocket every command is one text frame and
every event one frame (tslocum/bgammon ``PROTOCOL.md``, ``pkg/server/client_websocket.go``).
``BgammonClientProtocol`` keeps only the partial TCP line. Events of a type the codec does not read become
``Unhandled``, lines that are not JSON ``TextLine``, and JSON that does not fit its type ``Malformed``: none
of them is fatal. ``parse_event`` on its own raises ``BgammonEventError`` instead.

Commands are plain functions returning the line without its line end. Names must be letters, digits and
underscores (the server's rule); spaces in a password become underscores, as the protocol asks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.errors import EngineError
from engine.moves import Move
from protocols.bgammon import events as ev
from protocols.bgammon.board import BgammonBoardError, BoardState, step_texts

__all__ = [
    "MAX_LINE",
    "BgammonClientProtocol",
    "BgammonCommandError",
    "BgammonEventError",
    "board",
    "create",
    "disconnect",
    "double",
    "encode_event",
    "join",
    "json_mode",
    "leave",
    "list_matches",
    "login_json",
    "move",
    "ok",
    "parse_event",
    "pong",
    "redact",
    "rematch",
    "reset",
    "resign",
    "roll",
    "say",
]

MAX_LINE = 1 << 20  # a partial TCP line longer than this is read as a line: bounds the buffer
_NAME = re.compile(r"[A-Za-z0-9_]+")
_CLIENT = re.compile(r"[!-~]+")  # "gammond-v0.1.0/en": printable, no spaces
_REDACTED = "********"


class BgammonEventError(ValueError):
    """A server message that is not a well-formed bgammon event; the message names what is wrong."""


class BgammonCommandError(ValueError):
    """A command that cannot be sent: a bad name, a line break in a message, an impossible match length ..."""


# -- events in ------------------------------------------------------------------------------------------------


def _field(data: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = data.get(key, default)
    if value is None:
        return default
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise BgammonEventError(f"{key}: expected an integer, got {value!r}")
    if kind is not int and not isinstance(value, kind):
        raise BgammonEventError(f"{key}: expected {kind.__name__}, got {value!r}")
    return value


def _listing(item: object) -> ev.GameListing:
    if not isinstance(item, dict):
        raise BgammonEventError(f"Games: {item!r} is not an object")
    return ev.GameListing(
        id=_field(item, "ID", int, 0),
        password=_field(item, "Password", bool, False),
        points=_field(item, "Points", int, 1),
        players=_field(item, "Players", int, 0),
        rating=_field(item, "Rating", int, 0),
        name=_field(item, "Name", str, ""),
    )


def _pairs(data: Mapping[str, Any], key: str) -> tuple[tuple[int, int], ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(s, int) and not isinstance(s, bool) for s in p)
        for p in value
    ):
        raise BgammonEventError(f"{key}: expected a list of [from, to] pairs, got {value!r}")
    return tuple((p[0], p[1]) for p in value)


def _from_json(kind: str, data: Mapping[str, Any], player: str) -> ev.BgammonEvent:
    text = lambda key: _field(data, key, str, "")  # noqa: E731 - a short local reader
    number = lambda key: _field(data, key, int, 0)  # noqa: E731
    if kind == "welcome":
        return ev.Welcome(
            player=player, player_name=text("PlayerName"), clients=number("Clients"), games=number("Games")
        )
    if kind == "ping":
        return ev.Ping(player=player, message=text("Message"))
    if kind == "notice":
        return ev.Notice(player=player, message=text("Message"))
    if kind == "say":
        return ev.Say(player=player, message=text("Message"))
    if kind == "list":
        games = _field(data, "Games", list, [])
        return ev.MatchList(player=player, games=tuple(_listing(g) for g in games))
    if kind == "failedmove":
        return ev.FailedMove(
            player=player, reason=text("Reason"), from_space=number("From"), to_space=number("To")
        )
    if kind.startswith("failed") and kind in ev.EVENT_TYPES:
        return ev.EVENT_TYPES[kind](player=player, reason=text("Reason"))  # type: ignore[call-arg]
    if kind == "joined":
        return ev.Joined(player=player, game_id=number("GameID"), player_number=number("PlayerNumber"))
    if kind == "left":
        return ev.Left(player=player)
    if kind == "board":
        try:
            return ev.Board(player=player, state=BoardState.from_json(data))
        except BgammonBoardError as exc:
            raise BgammonEventError(f"board: {exc}") from None
    if kind == "rolled":
        rolls = [number(k) for k in ("Roll1", "Roll2", "Roll3")]
        if not all(0 <= r <= 6 for r in rolls):
            raise BgammonEventError(f"rolled: dice {rolls} outside 0..6")
        return ev.Rolled(
            player=player,
            roll1=rolls[0],
            roll2=rolls[1],
            roll3=rolls[2],
            selected=_field(data, "Selected", bool, False),
        )
    if kind == "moved":
        return ev.Moved(player=player, moves=_pairs(data, "Moves"))
    if kind == "win":
        return ev.Win(
            player=player, points=number("Points"), rating=number("Rating"), resigned=text("Resigned")
        )
    return ev.Unhandled(player=player, type=kind, data=dict(data))


def parse_event(text: str) -> ev.BgammonEvent:
    """One server message as an event: JSON by its ``Type``, anything else a ``TextLine``.

    BgammonEventError when the JSON is broken or a field of a known type is of the wrong kind or range.
    """
    stripped = text.strip()
    if not stripped.startswith("{"):
        return ev.TextLine(text=stripped)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise BgammonEventError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise BgammonEventError("not valid JSON: nested too deeply") from None
    except ValueError:  # an integer of more than 4300 digits, which Python will not convert
        raise BgammonEventError("not valid JSON: a number has too many digits") from None
    if not isinstance(data, dict):
        raise BgammonEventError("a JSON event must be an object")
    kind = data.get("Type")
    if not isinstance(kind, str) or not kind:
        raise BgammonEventError(f"event without a Type: {stripped[:80]!r}")
    player = data.get("Player") or ""
    if not isinstance(player, str):
        raise BgammonEventError(f"Player: expected a string, got {player!r}")
    return _from_json(kind, data, player)


def encode_event(event: ev.BgammonEvent) -> str:
    """An event as the JSON text the server sends (Go's field names and order); the inverse of parse_event."""
    head: dict[str, Any] = {"Type": event.TYPE, "Player": event.player}
    match event:
        case ev.Welcome():
            body: dict[str, Any] = {
                "PlayerName": event.player_name,
                "Clients": event.clients,
                "Games": event.games,
            }
        case ev.Ping() | ev.Notice() | ev.Say():
            body = {"Message": event.message}
        case ev.MatchList():
            body = {
                "Games": [
                    {
                        "ID": g.id,
                        "Password": g.password,
                        "Points": g.points,
                        "Players": g.players,
                        "Rating": g.rating,
                        "Name": g.name,
                    }
                    for g in event.games
                ]
                or None
            }
        case ev.FailedMove():
            body = {"From": event.from_space, "To": event.to_space, "Reason": event.reason}
        case ev.Failure():
            body = {"Reason": event.reason}
        case ev.Joined():
            body = {"GameID": event.game_id, "PlayerNumber": event.player_number}
        case ev.Left():
            body = {}
        case ev.Board():
            body = event.state.to_json()
        case ev.Rolled():
            body = {
                "Roll1": event.roll1,
                "Roll2": event.roll2,
                "Roll3": event.roll3,
                "Selected": event.selected,
            }
        case ev.Moved():
            body = {"Moves": [list(m) for m in event.moves] or None}
        case ev.Win():
            body = {"Points": event.points, "Rating": event.rating, "Resigned": event.resigned}
        case ev.Unhandled():
            head["Type"] = event.type
            body = {k: v for k, v in event.data.items() if k not in ("Type", "Player")}
        case _:
            raise BgammonEventError(f"{type(event).__name__} is not an event the server sends as JSON")
    return json.dumps({**head, **body}, separators=(",", ":"))


class BgammonClientProtocol:
    """Sans-I/O reader: ``receive_data`` for TCP bytes, ``receive_message`` for WebSocket frames."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def __repr__(self) -> str:
        return f"<BgammonClientProtocol buffered={len(self._buffer)}>"

    def receive_data(self, data: bytes) -> list[ev.BgammonEvent]:
        """Events for the complete lines in ``data`` plus what was buffered before."""
        self._buffer += data
        lines = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                break
            lines.append(bytes(self._buffer[:end]))
            del self._buffer[: end + 1]
        if len(self._buffer) > MAX_LINE:
            lines.append(bytes(self._buffer))
            self._buffer.clear()
        return self._events(lines)

    def receive_eof(self) -> list[ev.BgammonEvent]:
        """The connection closed: the event of an unfinished last line, if any."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        return self._events([rest])

    def receive_message(self, message: str | bytes) -> list[ev.BgammonEvent]:
        """A WebSocket frame: one event (several lines are read one by one, to be lenient)."""
        data = message.encode() if isinstance(message, str) else message
        return self._events(data.split(b"\n"))

    @staticmethod
    def _events(lines: Iterable[bytes]) -> list[ev.BgammonEvent]:
        out: list[ev.BgammonEvent] = []
        for raw in lines:
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                out.append(parse_event(text))
            except BgammonEventError as exc:
                out.append(ev.Malformed(text=text[:2000], error=str(exc)))
        return out


# -- commands out -----------------------------------------------------------------------------------------------


def _name(value: str, what: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise BgammonCommandError(f"{what} {value!r} must be letters, digits and underscores")
    return value


def _one_line(text: str, what: str) -> str:
    if not isinstance(text, str) or "\n" in text or "\r" in text:
        raise BgammonCommandError(f"{what} must be one line of text")
    return text.strip()


def login_json(client: str, user: str = "", password: str = "") -> str:
    """``loginjson <client> [user] [password]``: log in and switch to JSON events; no user logs in as a guest
    with a random name, no password as a guest (a ``bot_`` name becomes ``BOT_``)."""
    if not isinstance(client, str) or not _CLIENT.fullmatch(client):
        raise BgammonCommandError(f"client {client!r} must be printable text without spaces")
    parts = ["loginjson", client]
    if user:
        parts.append(_name(user, "user name"))
    if password:
        if not user:
            raise BgammonCommandError("a password needs a user name")
        parts.append(_one_line(password, "password").replace(" ", "_"))
    return " ".join(parts)


def redact(line: str) -> str:
    """A command line fit for a log: the password of a login or register blanked."""
    words = line.split(" ")
    keyword = words[0].lower() if words else ""
    keep = {"loginjson": 3, "lj": 3, "login": 2, "registerjson": 4, "rj": 4, "register": 3, "password": 1}
    if keyword in keep and len(words) > keep[keyword]:
        return " ".join([*words[: keep[keyword]], _REDACTED])
    return line


def json_mode(on: bool = True) -> str:
    return f"json {'on' if on else 'off'}"


def create(points: int, *, password: str = "", name: str = "", variant: int = 0) -> str:
    """``create public|private [password] <points> <variant> [name]``; variant 0 is backgammon."""
    if isinstance(points, bool) or not isinstance(points, int) or not 1 <= points <= 127:
        raise BgammonCommandError(f"match length {points!r} is not 1..127")
    if variant not in (0, 1, 2):
        raise BgammonCommandError(f"variant {variant!r} is not 0 (backgammon), 1 (acey-deucey) or 2 (tabula)")
    kind = "public"
    if password:
        kind = f"private {_one_line(password, 'match password').replace(' ', '_')}"
    line = f"create {kind} {points} {variant}"
    title = _one_line(name, "match name")
    return f"{line} {title}" if title else line


def join(target: int | str, password: str = "") -> str:
    """``join <id|user> [password]``."""
    if isinstance(target, bool):
        raise BgammonCommandError(f"{target!r} is not a match ID or a player")
    if isinstance(target, int):
        if target < 1:
            raise BgammonCommandError(f"match ID {target} must be positive")
        what = str(target)
    else:
        what = _name(target, "player")
    line = f"join {what}"
    if password:
        line += " " + _one_line(password, "match password").replace(" ", "_")
    return line


def move(played: Move) -> str:
    """``move`` with each step of ``played`` (the engine's numbering is the client's: see board.py). The server
    checks every step against the position before the command, so a step that depends on another one of the
    same command is refused: the bot sends one step per command (bot/bgammon/decisions.py, ``next_step``)."""
    if not isinstance(played, Move) or not played:
        raise BgammonCommandError("a move command needs at least one step; confirm a dance with ok")
    try:
        return "move " + " ".join(step_texts(played))
    except EngineError as exc:
        raise BgammonCommandError(str(exc)) from None


def say(message: str) -> str:
    text = _one_line(message, "message")
    if not text:
        raise BgammonCommandError("an empty message")
    return f"say {text}"


def pong(message: str = "") -> str:
    text = _one_line(message, "ping message")
    return f"pong {text}" if text else "pong"


def roll() -> str:
    return "roll"


def ok() -> str:
    """Confirm the moves played (passing the turn), or accept the double offered."""
    return "ok"


def double() -> str:
    return "double"


def resign() -> str:
    """Resign the game (scored as the board stands, see board.py), or decline the double offered."""
    return "resign"


def reset() -> str:
    """Take back the steps played this turn."""
    return "reset"


def leave() -> str:
    return "leave"


def rematch() -> str:
    return "rematch"


def board() -> str:
    return "board"


def list_matches() -> str:
    return "list"


def disconnect() -> str:
    return "disconnect"
