"""The FIBS (CLIP) client codec, sans-I/O: bytes from the server in, typed events out; commands out as bytes.

``FibsClientProtocol`` does no I/O and keeps only what reading needs: the partial line, a half-received telnet
sequence, whether the message of the day is running, the cube of the last board (to read resignation levels)
and the toggles the server has reported. It handles the quirks of real servers
(../shared/reference/fibs-protocol.md sections 1.1 and 1.3):

* prompts without a line end (``login: ``, ``> ``, password prompts) are reported as soon as they arrive;
* telnet IAC sequences, BEL and NUL bytes are dropped; CR LF, LF, CR NUL and a lone CR all end a line;
* trailing spaces are removed; lines FIBS glued together are split again (``lines.split_glued``), also
  after the echo of the client's own chat, which BaldLies sends without a line end (the client remembers the
  echoes it expects);
* a known password is blanked in every line before it is read, so no event can carry it.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque

from engine.moves import Move
from engine.notation import format_fibs
from protocols.fibs import events as ev
from protocols.fibs.lines import TOGGLE_NAMES, parse_line, split_glued

CLIP_VERSION = 1008
BOARD_COMMANDS = ("board", "b")  # tried in this order: a server that knows neither has no board on request
MAX_LINE = 65536  # a partial line longer than this is read as a line: bounds the buffer

IAC, SB, SE = 255, 250, 240
_WILL_WONT_DO_DONT = range(251, 255)
_PROMPTS = re.compile(rb"login: |> |.*[Pp]assword: ")
_LINE_END = re.compile(rb"\r\n|\r\x00|\n|\r")
_BEL, _NUL = b"\x07", b"\x00"  # NUL follows a bare CR in telnet NVT
_REDACTED = "********"
_ECHOES_KEPT = 16  # the echoes of the last chat commands sent, looked for at the start of a glued line


class FibsCommandError(ValueError):
    """A command that cannot be sent: a bad name, a line break in a message, an unknown toggle state ..."""


class FibsClientProtocol:
    """Sans-I/O FIBS client: feed ``receive_data``; send what the command methods return."""

    def __init__(self) -> None:
        self._telnet = bytearray()  # bytes of an unfinished IAC sequence
        self._buffer = bytearray()  # received text not yet ended by a line end
        self._in_motd = False
        self._motd_lines = 0
        self._cube = 1
        self._password: str | None = None
        self._echoes: deque[str] = deque(maxlen=_ECHOES_KEPT)
        self.name: str | None = None
        self.toggles: dict[str, bool] = {}

    def __repr__(self) -> str:  # never shows the password
        return f"<FibsClientProtocol name={self.name!r} buffered={len(self._buffer)}>"

    # -- receiving ------------------------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> list[ev.FibsEvent]:
        """Events for the complete lines (and prompts) in ``data`` plus what was buffered before."""
        self._buffer += self._strip_telnet(data).translate(None, _BEL)
        events: list[ev.FibsEvent] = []
        for raw in self._complete_lines():
            events.extend(self._line_events(raw))
        if _PROMPTS.fullmatch(self._buffer.replace(_NUL, b"")) or len(self._buffer) > MAX_LINE:
            raw = bytes(self._buffer)
            self._buffer.clear()
            events.extend(self._line_events(raw))
        return events

    def receive_eof(self) -> list[ev.FibsEvent]:
        """The connection closed: the events of an unfinished last line."""
        raw = bytes(self._buffer)
        self._buffer.clear()
        self._telnet.clear()
        return self._line_events(raw.rstrip(b"\r"))

    def _strip_telnet(self, data: bytes) -> bytes:
        if not self._telnet and IAC not in data:
            return data
        pending = self._telnet + data
        out = bytearray()
        i, n = 0, len(pending)
        while i < n:
            byte = pending[i]
            if byte != IAC:
                out.append(byte)
                i += 1
                continue
            if i + 1 >= n:
                break
            command = pending[i + 1]
            if command == IAC:  # an escaped 255 data byte
                out.append(IAC)
                i += 2
            elif command in _WILL_WONT_DO_DONT:
                if i + 2 >= n:
                    break
                i += 3
            elif command == SB:  # subnegotiation runs to IAC SE
                end = pending.find(bytes((IAC, SE)), i + 2)
                if end < 0:
                    break
                i = end + 2
            else:
                i += 2
        self._telnet = pending[i:]
        return bytes(out)

    def _complete_lines(self) -> list[bytes]:
        """Take the complete lines out of the buffer."""
        buf = self._buffer
        lines = []
        start = 0
        for end in _LINE_END.finditer(buf):
            if end.end() == len(buf) and end[0] == b"\r":
                break  # a CR at the end may be half of CR LF: wait for the next byte
            lines.append(bytes(buf[start : end.start()]))
            start = end.end()
        del buf[:start]
        return lines

    def _line_events(self, raw: bytes) -> list[ev.FibsEvent]:
        text = raw.replace(_NUL, b"").decode("utf-8", "replace").rstrip()
        if not text:
            return []
        if self._password:
            text = _redact(text, self._password)
        if len(raw) > MAX_LINE:  # no FIBS line is this long; the line rules would scan megabytes for seconds
            return [ev.Unknown(raw=text, reason=f"a line of {len(raw)} bytes, over {MAX_LINE}")]
        if self._in_motd:
            if text == "4" or self._motd_lines >= 500:
                self._in_motd = False
            else:
                self._motd_lines += 1
                return [ev.MotdLine(raw=text, text=text)]
        pieces = split_glued(text, self._echoes)
        if self._echoes and pieces[0] in self._echoes:
            self._echoes.remove(pieces[0])
        return [self._observe(parse_line(piece.rstrip())) for piece in pieces]

    def _observe(self, event: ev.FibsEvent) -> ev.FibsEvent:
        """Keep the little state reading needs; complete events that need it."""
        if isinstance(event, ev.MotdStart):
            self._in_motd, self._motd_lines = True, 0
        elif isinstance(event, ev.Board):
            self._cube = event.board.cube
        elif isinstance(event, ev.ResignOffer) and event.points is not None and event.level is None:
            level, rest = divmod(event.points, self._cube)
            if not rest and 1 <= level <= 3:
                return dataclasses.replace(event, level=level)
        elif isinstance(event, ev.Welcome):
            self.name = event.name
        elif isinstance(event, ev.OwnInfo):
            self.name = event.name
            self.toggles.update(event.toggles())
        elif isinstance(event, ev.ToggleValue):
            self.toggles[event.name] = event.value
        elif isinstance(event, ev.WhoInfo) and event.name == self.name:
            self.toggles["ready"] = event.ready
        return event

    # -- commands -------------------------------------------------------------------------------------------

    def login(self, client: str, name: str, password: str) -> bytes:
        """``login <client> 1008 <name> <password>`` (CLIP login); the password is then blanked in events."""
        _check_word(client, "client name")
        if len(client) > 20:
            raise FibsCommandError(f"client name {client!r} is longer than 20 characters")
        _check_word(name, "user name")
        _check_word(password, "password")
        self._password = password
        self.name = name
        return _line(f"login {client} {CLIP_VERSION} {name} {password}")

    def toggle(self, name: str) -> bytes:
        """``toggle <name>``: flips it (not idempotent; see ``set_toggle``)."""
        if name not in TOGGLE_NAMES:
            raise FibsCommandError(f"{name!r} is not a FIBS toggle")
        if name in self.toggles:
            self.toggles[name] = not self.toggles[name]
        return _line(f"toggle {name}")

    def set_toggle(self, name: str, value: bool) -> bytes:
        """The command that makes toggle ``name`` equal ``value``: b"" if it already is, else ``toggle name``.

        The state comes from CLIP 2, a ``toggle`` listing and CLIP 5 (``ready``); before any of these arrive,
        send ``toggles()`` and wait, or FibsCommandError is raised.
        """
        if name not in TOGGLE_NAMES:
            raise FibsCommandError(f"{name!r} is not a FIBS toggle")
        current = self.toggles.get(name)
        if current is None:
            raise FibsCommandError(f"the state of toggle {name!r} is unknown: send toggles() first")
        if current == value:
            return b""
        return self.toggle(name)

    def toggles_list(self) -> bytes:
        """``toggle`` alone: the server lists every toggle (read back as ToggleValue events)."""
        return _line("toggle")

    def set_variable(self, name: str, value: str | int) -> bytes:
        """``set <name> <value>``, e.g. ``set boardstyle 3``."""
        _check_word(name, "variable name")
        _check_word(str(value), "value")
        return _line(f"set {name} {value}")

    def invite(self, name: str, length: int | str | None = None) -> bytes:
        """``invite <name> <length>``; ``"unlimited"``; None resumes a saved match."""
        _check_word(name, "user name")
        if length is None:
            return _line(f"invite {name}")
        if length != "unlimited" and not (isinstance(length, int) and length >= 1):
            raise FibsCommandError(f"match length {length!r} is not a positive number or 'unlimited'")
        return _line(f"invite {name} {length}")

    def join(self, name: str | None = None) -> bytes:
        """``join <name>`` accepts an invitation; ``join`` alone starts the next game."""
        if name is None:
            return _line("join")
        _check_word(name, "user name")
        return _line(f"join {name}")

    def move(self, move: Move, direction: int) -> bytes:
        """``move 24-18 13-11``: ``move`` in the mover's own numbering, ``direction`` as on the board."""
        if direction not in (-1, 1):
            raise FibsCommandError(f"direction {direction!r} is not -1 or 1")
        if not move:
            raise FibsCommandError("an empty move has no FIBS command: the server plays a dance by itself")
        return _line(f"move {format_fibs(move, direction)}")

    def resign(self, level: int | str) -> bytes:
        """``resign n|g|b``; ``level`` 1/2/3 or the letter."""
        letter = {1: "n", 2: "g", 3: "b", "n": "n", "g": "g", "b": "b"}.get(level)
        if letter is None:
            raise FibsCommandError(f"resignation level {level!r} is not 1, 2, 3 or n, g, b")
        return _line(f"resign {letter}")

    def roll(self) -> bytes:
        return _line("roll")

    def double(self) -> bytes:
        return _line("double")

    def redouble(self) -> bytes:
        return _line("redouble")

    def accept(self) -> bytes:
        return _line("accept")

    def reject(self) -> bytes:
        return _line("reject")

    def board(self, command: str = "board") -> bytes:
        """``board``, or its alias ``b`` (BaldLies answers ``board`` with "Unknown command" but knows ``b``)."""
        if command not in BOARD_COMMANDS:
            raise FibsCommandError(f"{command!r} is not a board command ({', '.join(BOARD_COMMANDS)})")
        return _line(command)

    def leave(self) -> bytes:
        return _line("leave")

    def back(self) -> bytes:
        return _line("back")

    def bye(self) -> bytes:
        return _line("bye")

    def who(self) -> bytes:
        """``rawwho``: unlike ``who`` it always ends with CLIP 6."""
        return _line("rawwho")

    def show_saved(self) -> bytes:
        return _line("show saved")

    def show_savedcount(self, name: str) -> bytes:
        _check_word(name, "user name")
        return _line(f"show savedcount {name}")

    def watch(self, name: str) -> bytes:
        _check_word(name, "user name")
        return _line(f"watch {name}")

    def unwatch(self) -> bytes:
        return _line("unwatch")

    def look(self, name: str) -> bytes:
        _check_word(name, "user name")
        return _line(f"look {name}")

    def away(self, message: str) -> bytes:
        return _line(f"away {_text(message)}")

    def tell(self, name: str, message: str) -> bytes:
        _check_word(name, "user name")
        text = _text(message)
        self._expect_echo(f"16 {name} {text}")
        return _line(f"tell {name} {text}")

    def say(self, message: str) -> bytes:
        return _line(f"say {_text(message)}")

    def kibitz(self, message: str) -> bytes:
        text = _text(message)
        self._expect_echo(f"19 {text}")
        return _line(f"kibitz {text}")

    def whisper(self, message: str) -> bytes:
        text = _text(message)
        self._expect_echo(f"18 {text}")
        return _line(f"whisper {text}")

    def shout(self, message: str) -> bytes:
        text = _text(message)
        self._expect_echo(f"17 {text}")
        return _line(f"shout {text}")

    def _expect_echo(self, echo: str) -> None:
        """The server answers a chat command with this CLIP echo, which may come without a line end."""
        echo = echo.rstrip()
        if self._password:
            echo = _redact(echo, self._password)
        self._echoes.append(echo)

    def message(self, name: str, text: str) -> bytes:
        """``message <name> <text>``: mail for a user who may be offline (CLIP 10/11 answer)."""
        _check_word(name, "user name")
        return _line(f"message {name} {_text(text)}")


def _line(command: str) -> bytes:
    return command.encode("utf-8") + b"\r\n"


def _check_word(word: str, what: str) -> None:
    if not isinstance(word, str) or not word or any(c.isspace() for c in word) or not word.isprintable():
        raise FibsCommandError(f"{what} {word!r} must be one printable word")


def _text(message: str) -> str:
    """Chat text for one command line: a line break would start a second command, so it is refused."""
    if "\r" in message or "\n" in message:
        raise FibsCommandError("a message cannot hold a line break")
    if not message.strip():
        raise FibsCommandError("an empty message")
    return "".join(c if c.isprintable() else " " for c in message)


def _redact(text: str, password: str) -> str:
    # Only where no letter or digit touches it, so that a password such as "1500" leaves "15000" alone.
    if password not in text:  # nearly every line: no regex to build and run
        return text
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(password)}(?![A-Za-z0-9])", _REDACTED, text)
