"""The FIBS (CLIP) server codec, sans-I/O: client lines to typed commands, and every line the server sends.

The mirror of ``protocols.fibs.client``. ``ServerLineReader`` turns received bytes into command lines
(telnet IAC sequences dropped, CR LF / LF / CR NUL line ends, a bound on the line length);
``parse_command`` reads one line into a typed ``Command`` (FIBS abbreviations accepted, see ``COMMANDS``);
every server message is text without the line end (``line_bytes`` adds CR LF): ``render(Msg.X, **fields)``
for the messages of one wording, whose templates make up the ``Msg`` table, and a function for each message
whose wording depends on its arguments (plurals, unlimited matches, CLIP fields, multi-line texts).

Wording: word for word from ../shared/reference/fibs-protocol.md sections 1.2-1.6 (SPEC first, then the real
fibs.com 2020 log, then the BaldLies transcripts) wherever a line is documented. Lines the reference does not
give (a few refusals, the toggle confirmations beyond the three documented, registration errors) use FIBS's
``** ...`` shape in our own words; their table entries or functions say so.

Lengths are ints with 0 for an unlimited match, as in ``engine.match.MatchState``. Names are FIBS user names;
the client's own user is "You" in the lines that address it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum, unique
from string import Formatter
from typing import Final

from engine.position import BAR
from protocols.fibs.board import FibsBoard, Side
from protocols.fibs.events import OWN_INFO_TOGGLES

IAC, SB, SE, WILL, WONT, DO, DONT = 255, 250, 240, 251, 252, 253, 254
ECHO = 1
ECHO_OFF: Final = bytes((IAC, WILL, ECHO))  # the server echoes (that is: nothing) while a password is typed
ECHO_ON: Final = bytes((IAC, WONT, ECHO))
CRLF: Final = b"\r\n"

ORDINALS = ("first", "second", "third", "fourth")
# The toggles a user can set: those own-info reports, and the two about the terminal.
TOGGLES: tuple[str, ...] = (*OWN_INFO_TOGGLES, "telnet", "wrap")
SETTINGS: tuple[str, ...] = ("boardstyle", "linelength", "pagelength", "redoubles", "sortwho", "timezone")
SORTWHO = ("login", "name", "rating", "rrating")
MAX_NAME = 20
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,19}")
RESERVED_NAMES = frozenset({"you", "guest", "login", "name", "bye", "all"})


class ServerCodecError(ValueError):
    """Base class of the codec's errors."""


class CommandSyntaxError(ServerCodecError):
    """A command that does not parse; ``reply`` is the line the server answers with."""

    def __init__(self, reply: str) -> None:
        super().__init__(reply)
        self.reply = reply


# -- reading client bytes -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OverlongLine:
    """Stands in the reader's output for a line that passed the limit; ``length`` is how long it got."""

    length: int


class ServerLineReader:
    """Client bytes to text lines: telnet sequences are dropped, any of CR LF, LF, CR NUL and a lone CR ends a
    line, and a line longer than ``max_line`` bytes is discarded and reported as ``OverlongLine`` once."""

    def __init__(self, max_line: int = 1024) -> None:
        if max_line < 1:
            raise ServerCodecError(f"max_line must be positive, not {max_line}")
        self.max_line = max_line
        self._buffer = bytearray()
        self._telnet = bytearray()
        self._discarding = 0  # > 0: inside an overlong line, this many bytes seen
        self._after_cr = False

    def __repr__(self) -> str:
        return f"<ServerLineReader max_line={self.max_line} buffered={len(self._buffer)}>"

    def feed(self, data: bytes) -> list[str | OverlongLine]:
        out: list[str | OverlongLine] = []
        for byte in self._strip_telnet(data):
            if self._after_cr:
                self._after_cr = False
                if byte in (0, 10):  # CR NUL or CR LF: the CR ended the line already
                    continue
            if byte in (10, 13):
                self._after_cr = byte == 13
                if self._discarding:
                    out.append(OverlongLine(self._discarding))
                    self._discarding = 0
                else:
                    out.append(self._buffer.decode("utf-8", "replace"))
                self._buffer.clear()
                continue
            if byte == 0:
                continue
            if self._discarding:
                self._discarding += 1
            elif len(self._buffer) >= self.max_line:
                self._discarding = len(self._buffer) + 1
                self._buffer.clear()
            else:
                self._buffer.append(byte)
        return out

    def _strip_telnet(self, data: bytes) -> bytes:
        if not self._telnet and IAC not in data:
            return data
        pending = bytes(self._telnet) + data
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
            if command == IAC:
                out.append(IAC)
                i += 2
            elif command in (WILL, WONT, DO, DONT):
                if i + 2 >= n:
                    break
                i += 3
            elif command == SB:
                end = pending.find(bytes((IAC, SE)), i + 2)
                if end < 0:
                    if n - i > 4096:  # a subnegotiation that never ends: drop it rather than buffer forever
                        i = n
                    break
                i = end + 2
            else:
                i += 2
        self._telnet = bytearray(pending[i:])
        return bytes(out)


def line_bytes(lines: Iterable[str]) -> bytes:
    """Lines as the wire carries them: each ends with CR LF. A ``Msg`` with fields is a template that skipped
    ``render`` (a ``Msg`` is a ``str``, so the type checker lets it through): ``MessageFieldsError``, not braces
    on a client's screen."""
    out = []
    for line in lines:
        if isinstance(line, Msg) and _FIELDS[line]:
            raise MessageFieldsError(line, _FIELDS[line], ())
        out.append(line.encode("utf-8", "replace") + CRLF)
    return b"".join(out)


# -- commands -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    """Base class of parsed client commands."""


@dataclass(frozen=True, slots=True)
class Login(Command):
    """``login <client> <clip_version> <name> <password>``: the CLIP login."""

    client: str
    clip_version: int
    name: str
    password: str = field(repr=False)

    def __repr__(self) -> str:  # never shows the password
        return f"Login(client={self.client!r}, clip_version={self.clip_version}, name={self.name!r}, password=...)"


@dataclass(frozen=True, slots=True)
class Invite(Command):
    """``invite user [n|unlimited]``; ``length`` None resumes a saved match, 0 is unlimited."""

    name: str
    length: int | None


@dataclass(frozen=True, slots=True)
class Join(Command):
    """``join user`` accepts an invitation; ``join`` alone starts the next game."""

    name: str | None = None


@dataclass(frozen=True, slots=True)
class Roll(Command):
    pass


@dataclass(frozen=True, slots=True)
class MoveCommand(Command):
    """``move 24-18 13-11`` (or without ``move``): the text is resolved against the board by the server."""

    text: str


@dataclass(frozen=True, slots=True)
class Double(Command):
    pass


@dataclass(frozen=True, slots=True)
class Redouble(Command):
    """``redouble`` (also ``beaver``, ``raccoon``, ``otter``: FIBS treats them alike)."""

    word: str = "redouble"


@dataclass(frozen=True, slots=True)
class Accept(Command):
    pass


@dataclass(frozen=True, slots=True)
class Reject(Command):
    pass


@dataclass(frozen=True, slots=True)
class Resign(Command):
    """``resign n|g|b``: 1 single (normal), 2 gammon, 3 backgammon."""

    level: int


@dataclass(frozen=True, slots=True)
class Board(Command):
    pass


@dataclass(frozen=True, slots=True)
class Leave(Command):
    pass


@dataclass(frozen=True, slots=True)
class Pip(Command):
    pass


@dataclass(frozen=True, slots=True)
class Who(Command):
    """``who`` / ``rawwho``, optionally for one user; ``raw`` ends the list with CLIP 6."""

    raw: bool = False
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Toggle(Command):
    """``toggle`` alone lists the toggles; with names it flips each."""

    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Set(Command):
    """``set`` alone lists the variables; ``set name value`` sets one."""

    name: str | None = None
    value: str | None = None


@dataclass(frozen=True, slots=True)
class Watch(Command):
    name: str


@dataclass(frozen=True, slots=True)
class Unwatch(Command):
    pass


@dataclass(frozen=True, slots=True)
class Look(Command):
    name: str


@dataclass(frozen=True, slots=True)
class Tell(Command):
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Say(Command):
    text: str


@dataclass(frozen=True, slots=True)
class Kibitz(Command):
    text: str


@dataclass(frozen=True, slots=True)
class Whisper(Command):
    text: str


@dataclass(frozen=True, slots=True)
class Shout(Command):
    text: str


@dataclass(frozen=True, slots=True)
class Message(Command):
    """``message user text``: delivered now, or stored for an offline user."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Away(Command):
    """``away text``; without text it lists who is away."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class Back(Command):
    pass


@dataclass(frozen=True, slots=True)
class Show(Command):
    """``show games|saved|watchers|savedcount user``."""

    topic: str
    argument: str | None = None


@dataclass(frozen=True, slots=True)
class Oldmoves(Command):
    """``oldmoves [user]``: the moves of the last game with that user."""

    name: str | None = None


@dataclass(frozen=True, slots=True)
class Gag(Command):
    """``gag user``: stop hearing that user's tells (again: hear them)."""

    name: str


@dataclass(frozen=True, slots=True)
class Blind(Command):
    """``blind user``: stop that user watching (again: allow it)."""

    name: str


@dataclass(frozen=True, slots=True)
class Name(Command):
    """``name user``: a guest chooses a name to register."""

    name: str


@dataclass(frozen=True, slots=True)
class Time(Command):
    pass


@dataclass(frozen=True, slots=True)
class Help(Command):
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Bye(Command):
    pass


@dataclass(frozen=True, slots=True)
class Empty(Command):
    """A blank line."""


@dataclass(frozen=True, slots=True)
class UnknownCommand(Command):
    word: str


# Command words in the order a prefix is tried, with the shortest prefix each accepts: "m" is move, "r" roll,
# "k" kibitz. Words that end or lose something (bye, leave, resign, reject) need more letters.
COMMANDS: tuple[tuple[str, int], ...] = (
    ("move", 1),
    ("roll", 1),
    ("kibitz", 1),
    ("double", 1),
    ("accept", 1),
    ("join", 1),
    ("invite", 1),
    ("board", 1),
    ("tell", 1),
    ("tellx", 5),
    ("pip", 1),
    ("help", 1),
    ("gag", 1),
    ("who", 2),
    ("whisper", 3),
    ("watch", 2),
    ("say", 2),
    ("shout", 2),
    ("show", 4),
    ("set", 2),
    ("toggle", 2),
    ("time", 2),
    ("reject", 3),
    ("resign", 3),
    ("redouble", 3),
    ("rawwho", 3),
    ("beaver", 2),
    ("raccoon", 3),
    ("otter", 2),
    ("leave", 3),
    ("look", 2),
    ("unwatch", 2),
    ("oldmoves", 4),
    ("message", 3),
    ("away", 2),
    ("back", 3),
    ("blind", 2),
    ("name", 4),
    ("login", 5),
    ("bye", 3),
)
_COMMAND_NAMES = frozenset(name for name, _ in COMMANDS)
_RESIGN_LEVELS = {
    "n": 1, "normal": 1, "s": 1, "single": 1, "1": 1,
    "g": 2, "gammon": 2, "2": 2,
    "b": 3, "backgammon": 3, "3": 3,
}  # fmt: skip
_SHOW_TOPICS = ("games", "saved", "savedcount", "watchers", "max")
MAX_INVITE_LENGTH = 64  # the engine's (and gnubg's) longest match


def command_word(word: str) -> str | None:
    """The full command a (possibly abbreviated) word stands for, or None."""
    word = word.lower()
    if word in _COMMAND_NAMES:
        return word
    for name, shortest in COMMANDS:
        if len(word) >= shortest and name.startswith(word):
            return name
    return None


def _name_arg(args: str, missing: str) -> str:
    name = args.split(None, 1)[0] if args.strip() else ""
    if not name:
        raise CommandSyntaxError(missing)
    return name


def _text_arg(args: str, missing: str) -> str:
    text = args.strip()
    if not text:
        raise CommandSyntaxError(missing)
    return text


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


def parse_command(line: str) -> Command:
    """One client line as a typed command; CommandSyntaxError carries the reply for a malformed one.

    Unknown words give ``UnknownCommand`` (the server answers ``** Unknown command: 'word'``). Text arguments
    keep their spacing; unprintable characters in them become spaces.
    """
    text = _printable(line).strip()
    if not text:
        return Empty()
    word, _, args = text.partition(" ")
    args = args.strip()
    name = command_word(word)
    if name is None:
        if re.fullmatch(r"(?:bar|b|\d{1,2})[-/](?:\d{1,2}|off|o|home)", word, re.IGNORECASE):
            return MoveCommand(text)  # "move" may be left out
        return UnknownCommand(word[:40])
    match name:
        case "login":
            parts = args.split()
            if len(parts) != 4 or not parts[1].isdigit():
                raise CommandSyntaxError("** Usage: login <client> <clip_version> <name> <password>")
            return Login(parts[0], int(parts[1]), parts[2], parts[3])
        case "move":
            return MoveCommand(args)
        case "roll":
            return Roll()
        case "double":
            return Double()
        case "redouble" | "beaver" | "raccoon" | "otter":
            return Redouble(name)
        case "accept":
            return Accept()
        case "reject":
            return Reject()
        case "resign":
            level = _RESIGN_LEVELS.get(args.lower())
            if level is None:
                raise CommandSyntaxError("** Usage: resign [n|g|b]")
            return Resign(level)
        case "invite":
            parts = args.split()
            if not parts:
                raise CommandSyntaxError("** invite who?")
            if len(parts) == 1:
                return Invite(parts[0], None)
            size = parts[1].lower()
            if "unlimited".startswith(size):
                return Invite(parts[0], 0)
            if not size.isdigit() or not 1 <= int(size) <= MAX_INVITE_LENGTH:
                raise CommandSyntaxError(
                    f"** The match length must be 1 to {MAX_INVITE_LENGTH} points, or 'unlimited'."
                )
            return Invite(parts[0], int(size))
        case "join":
            return Join(args.split()[0] if args else None)
        case "board":
            return Board()
        case "leave":
            return Leave()
        case "pip":
            return Pip()
        case "who" | "rawwho":
            return Who(raw=name == "rawwho", name=args.split()[0] if args else None)
        case "toggle":
            return Toggle(tuple(w.lower() for w in args.split()))
        case "set":
            parts = args.split(None, 1)
            if not parts:
                return Set()
            return Set(parts[0].lower(), parts[1].strip() if len(parts) > 1 else None)
        case "watch":
            return Watch(_name_arg(args, "** Watch who?"))
        case "unwatch":
            return Unwatch()
        case "look":
            return Look(_name_arg(args, "** Look at who?"))
        case "tell" | "tellx":
            who, _, message = args.partition(" ")
            if not who:
                raise CommandSyntaxError("** tell who?")
            return Tell(who, _text_arg(message, f"** Tell {who} what?"))
        case "say":
            return Say(_text_arg(args, "** Say what?"))
        case "kibitz":
            return Kibitz(_text_arg(args, "** Kibitz what?"))
        case "whisper":
            return Whisper(_text_arg(args, "** Whisper what?"))
        case "shout":
            return Shout(_text_arg(args, "** Shout what?"))
        case "message":
            who, _, message = args.partition(" ")
            if not who:
                raise CommandSyntaxError("** message who?")
            return Message(who, _text_arg(message, f"** What is the message for {who}?"))
        case "away":
            return Away(args)
        case "back":
            return Back()
        case "show":
            parts = args.split()
            topic = parts[0].lower() if parts else ""
            if topic not in _SHOW_TOPICS:
                raise CommandSyntaxError(f"** Usage: show {'|'.join(_SHOW_TOPICS)}")
            if topic == "savedcount" and len(parts) < 2:
                raise CommandSyntaxError("** Usage: show savedcount <user>")
            return Show(topic, parts[1] if len(parts) > 1 else None)
        case "oldmoves":
            return Oldmoves(args.split()[0] if args else None)
        case "gag":
            return Gag(_name_arg(args, "** Gag who?"))
        case "blind":
            return Blind(_name_arg(args, "** Blind who?"))
        case "name":
            return Name(_name_arg(args, "** Usage: name <username>"))
        case "time":
            return Time()
        case "help":
            return Help(args)
        case "bye":
            return Bye()
    return UnknownCommand(word[:40])  # pragma: no cover - every table word has a case above


def check_new_name(name: str) -> str | None:
    """Why ``name`` cannot be registered (None: it can). Names start with a letter; no blanks or colons."""
    if not NAME_PATTERN.fullmatch(name):
        return (
            f"** Names are 1 to {MAX_NAME} letters, digits or '_', starting with a letter; "
            "they may not contain blanks ' ' or colons ':'."
        )
    if name.lower() in RESERVED_NAMES:
        return f"** The name '{name}' is reserved. Please choose another one."
    return None


# -- the message table --------------------------------------------------------------------------------------
# Every message whose text is one wording with arguments dropped in is a ``Msg`` template, filled in by
# ``render``; the messages that choose between wordings (plurals, unlimited matches, who is "You"), loop or
# format CLIP fields stay functions, in the sections after the table. A comment gives a line's provenance
# where it is not the reference's.


class MessageFieldsError(ServerCodecError):
    """``render`` was given other fields than the template has: a caller's bug, never the client's."""

    def __init__(self, msg: Msg, missing: Iterable[str], unexpected: Iterable[str]) -> None:
        self.msg = msg
        self.missing = tuple(sorted(missing))
        self.unexpected = tuple(sorted(unexpected))
        super().__init__(
            f"Msg.{msg.name}: missing fields {self.missing}, unexpected fields {self.unexpected}"
        )


@unique  # two messages with the same wording would silently be one member
class Msg(StrEnum):
    """A server message of one wording: the value is its ``str.format`` template, named fields only."""

    # the login phase
    NAME_TAKEN = "** Please use another name. '{name}' is already used by someone else."  # own wording
    PASSWORDS_DIFFER = "** The two passwords were not identical. Please give them again."  # own wording
    GUEST_ONLY_NAME = "** You are a guest. Please register with 'name username' or type 'bye'."  # own wording
    # JIBS's line; FIBS itself only sends ``login: `` again (the server sends both)
    LOGIN_INCORRECT = "Login incorrect."
    ALREADY_LOGGED_IN = "** Warning: You are already logged in."
    CONNECTION_TIMED_OUT = "Connection timed out."

    # CLIP (1, 2, 5 and 9 format their fields: functions below)
    CLIP_MOTD_START = "3"
    CLIP_MOTD_END = "4"
    CLIP_WHO_END = "6"
    CLIP_LOGIN = "7 {name} {name} logs in."
    CLIP_MESSAGE_DELIVERED = "10 {recipient}"
    CLIP_MESSAGE_SAVED = "11 {recipient}"
    CLIP_SAYS = "12 {sender} {text}"  # ``tell`` or ``say`` to you
    CLIP_SHOUTS = "13 {sender} {text}"
    CLIP_WHISPERS = "14 {sender} {text}"
    CLIP_KIBITZES = "15 {sender} {text}"
    CLIP_YOU_SAY = "16 {recipient} {text}"  # the echo of ``tell`` (and of ``say``, naming the opponent)
    CLIP_YOU_SHOUT = "17 {text}"
    CLIP_YOU_WHISPER = "18 {text}"
    CLIP_YOU_KIBITZ = "19 {text}"
    # Telnet-mode (non-CLIP) forms of the chat lines, for people on a plain terminal: own wording after FIBS.
    TEXT_SAYS = "{sender} tells you: {text}"
    TEXT_SHOUTS = "{sender} shouts: {text}"
    TEXT_WHISPERS = "{sender} whispers: {text}"
    TEXT_KIBITZES = "{sender} kibitzes: {text}"
    TEXT_MESSAGE = "Message from {sender} at {when}: {text}"
    TEXT_LOGS_IN = "{name} logs in."

    # chat and its refusals
    NO_ONE_CALLED = "** There is no one called {name}"
    WONT_LISTEN = "** {name} won't listen to you."
    SAY_OUTSIDE_GAME = "** 'say' can't be used outside a game"
    NOT_WATCHING_OR_PLAYING = "** You're not watching or playing."
    PLAYER_AWAY = "{name} is away: {message}"
    UNKNOWN_COMMAND = "** Unknown command: '{word}'"
    YOU_ARE_AWAY = "You're away. Please type 'back'"
    AWAY_SET = "You're away now: {message}"  # own wording: confirms ``away``
    WELCOME_BACK = "Welcome back."

    # invitations and joining
    JOIN_HINT = "Type 'join {inviter}' to accept."
    NO_SAVED_MATCH = "** There's no saved match with {name}. Please give a match length."
    REFUSING_GAMES = "** {name} is refusing games."
    ALREADY_PLAYING_WITH_SOMEONE_ELSE = "** {name} is already playing with someone else."
    YOU_ARE_ALREADY_PLAYING = "** You are already playing."
    CANNOT_INVITE_YOURSELF = "** You can't invite yourself."  # own wording
    YOU_RESUMED = "You are now playing with {opponent}. Your running match was loaded."
    OPPONENT_RESUMED = "{joiner} has joined you. Your running match was loaded."
    DIDNT_INVITE_YOU = "** {name} didn't invite you."
    JOIN_WHO = "** Error: Join who?"
    CANT_FIND_PLAYER = (
        "** Error: can't find player {name}"  # GIBBON-T's line for ``join`` naming nobody online
    )
    JOIN_BUSY = "** Error: {name} is already playing with someone else."
    SAVED_MATCH_CORRUPT = "** ERROR: Saved match is corrupt. Please start another one."
    CANNOT_PLAY_TWO_GAMES = "** You can't play two games at once"
    # own wording, after BaldLies's MOTD
    TOO_MANY_SAVED = (
        "** You have {limit} or more unfinished games; finish one of them before starting a new one."
    )
    RESUME_TURN = "turn: {name}."
    RESUME_POINTS = "points for user {name}: {points}"

    # a game
    STARTING_NEW_GAME = "Starting a new game with {opponent}."
    OPENING_ROLL = "{first} rolled {first_die}, {second} rolled {second_die}"  # a watcher sees two names
    YOUR_TURN_TO_MOVE = "It's your turn to move."
    MAKES_FIRST_MOVE = "{name} makes the first move."
    ROLL_OR_DOUBLE = "It's your turn. Please roll or double"
    CUBE_NOW = "The number on the doubling cube is now {value}"
    YOU_ROLL = "You roll {d1} and {d2}."
    ROLLS = "{name} rolls {d1} and {d2}."
    YOU_CANT_MOVE = "You can't move."
    CANT_MOVE = "{name} can't move."
    ONLY_POSSIBLE_MOVE = "The only possible move is {text} ."
    MOVES = "{name} moves {text} ."  # FIBS's trailing space and period
    # roll and move refusals
    NOT_YOUR_TURN_TO_MOVE = "** It's not your turn to move."
    ROLL_BEFORE_MOVING = "** You have to roll the dice before moving."
    MUST_GIVE_MOVES = "** You must give {count} moves."
    TOO_MANY_MOVES = "** Please don't give more than {count} moves."
    # own wording: a move that does not read as steps
    MOVE_SYNTAX = "** Can't understand the move '{text}'. Give it as from-to pairs, e.g. 'move 13-8 24-23'."
    ALREADY_ROLLED = "** You did already roll the dice."
    NOT_YOUR_TURN_TO_ROLL = "** It's not your turn to roll the dice."  # own wording
    NOT_PLAYING = "** You're not playing."  # own wording, after FIBS
    # own wording: an action while the opponent must answer a double or resignation
    WAIT_FOR_ANSWER = "** Please wait for {name} to answer."

    # the cube
    YOU_DOUBLE = "You double. Please wait for {opponent} to accept or reject."
    DOUBLES_WATCHER = "{name} doubles."
    REDOUBLES = "{name} redoubles to {cube}. Type 'accept', 'reject' or 'redouble'."
    YOU_ACCEPT_AND_REDOUBLE = "You accept the double to {cube} and redouble."
    YOU_ACCEPT_DOUBLE = "You accept the double. The cube shows {cube}."
    ACCEPTS_DOUBLE = "{name} accepts the double. The cube shows {cube}."
    YOU_ACCEPT_REDOUBLE = "You accept the redouble. The cube shows {cube}."
    ACCEPTS_REDOUBLE = "{name} accepts the redouble. The cube shows {cube}."
    ACCEPTS_DOUBLE_WATCHER = "{name} accepts the double."
    DOUBLE_BEFORE_ROLL = "** You can only double before you roll the dice."
    NOT_YOUR_TURN_TO_DOUBLE = "** It's not your turn to double"
    WAIT_UNTIL_MOVED = "** Please wait until {name} has moved."
    # GAMMONBOT watches for the prefix ``** The Crawford rule doesn``
    CRAWFORD_NO_DOUBLE = "** The Crawford rule doesn't allow you to double in this game."
    OPPONENT_OWNS_CUBE = "** You can't double. Your opponent owns the cube."  # own wording
    # own wording: the doubler would win the match on the present cube
    CUBE_DEAD = "** You can't double. Doubling is of no use to you at this score."
    CUBE_AT_MAXIMUM = "** You can't double. The cube is at {value} already."  # own wording
    REDOUBLE_UNLIMITED_ONLY = "** Redoubles are allowed in unlimited matches only."  # own wording
    NO_REDOUBLES_LEFT = "** You can't redouble now."  # own wording
    NOTHING_TO_ACCEPT = "** There's nothing to accept."  # own wording
    NOTHING_TO_REJECT = "** There's nothing to reject."  # own wording

    # resignations
    YOU_REJECT_RESIGN = "You reject. The game continues."
    REJECTS_RESIGN = "{name} rejects. The game continues."
    WANTED_TO_RESIGN = "** {name} wanted to resign. Type 'accept' or 'reject'."
    RESIGN_REFUSED = "** You can't resign now: {reason}."  # own wording

    # game and match ends
    JOIN_NEXT_GAME = "Type 'join' if you want to play the next game, type 'leave' if you don't."
    WAIT_FOR_JOIN = "** Please wait for {name} to join too."
    YOU_WIN_MATCH = "You win the {length} point match {score}-{other} ."
    WINS_MATCH = "{name} wins the {length} point match {score}-{other} ."

    # leaving and saving
    YOU_TERMINATED = "** You terminated the game. The game was saved."
    PLAYER_LEFT = "** Player {name} has left the game. The game was saved."
    LOGS_OUT_SAVED = "{name} logs out. The game was saved."
    DROPS_CONNECTION_SAVED = "{name} drops connection. The game was saved."
    TIMED_OUT_SAVED = "Connection with {name} timed out. The game was saved."
    CLOSED_OLD_CONNECTION_SAVED = "Closed old connection with user {name}. The game was saved."
    YOUR_GAME_SAVED = "Your game with {name} was saved."  # its match saved as the server shuts down
    LEFT_GAME_REPORT = "{name} has left the game with {opponent}."  # to watchers and everyone with ``report``
    SERVER_SHUTDOWN = "*** ATTENTION ! The server will shut down in {seconds} seconds."

    # watching
    NOW_WATCHING = "You're now watching {name}."
    NOTHING_INTERESTING = "{name} is not doing anything interesting."
    WATCH_WHO = "** Watch who?"
    DOESNT_WANT_YOU_TO_WATCH = "** {name} doesn't want you to watch."
    CANT_WATCH_WHILE_PLAYING = "** You can't watch another game while you're playing."
    CANT_WATCH_YOURSELF = "** You can't watch yourself."  # own wording
    STOP_WATCHING = "You stop watching {name}."
    NOT_WATCHING = "** You're not watching."  # own wording
    IS_WATCHING_YOU = "{name} is watching you."
    STOPS_WATCHING_YOU = "{name} stops watching you."
    STARTS_WATCHING = "{watcher} starts watching {player}."
    STOPS_WATCHING = "{watcher} stops watching {player}."
    BANS_YOU = "{name} bans you from watching."
    WATCHED_LOGS_OUT = "{name} logs out.. You're not watching anymore."

    # saved matches, toggles, settings
    SAVED_HEADER = "  opponent          matchlength   score (your points first)"
    NO_SAVED_GAMES = "no saved games."
    GAMES_HEADER = "List of games:"  # own wording (``show games``)
    NO_GAMES = "No games are being played."  # own wording
    TOGGLES_HEADER = "The current settings are:"
    UNKNOWN_TOGGLE = "** Don't know how to toggle {name}."  # own wording
    SETTINGS_HEADER = "Settings of variables:"
    SETTING_VALUE = "{name}: {value}"
    SETTING_SET = "Value of '{name}' set to {value}."
    UNKNOWN_SETTING = "** Unknown variable '{name}'. Known: " + ", ".join(SETTINGS) + "."  # own wording
    BAD_SETTING_VALUE = "** Valid values for '{name}' are {allowed}."  # own wording

    # odds and ends
    LINE_TOO_LONG = "** Your line was longer than {limit} characters and was ignored."  # own wording
    # own wording: the command rate limit
    SLOW_DOWN = "** Please slow down: too many commands. That command was ignored."
    PIP_COUNT = "Pipcounts: You {mine} - {opponent} {theirs}"  # own wording (``pip``)
    PIP_COUNT_WATCHED = "Pipcounts: {name} {mine} - {opponent} {theirs}"  # own wording (``pip`` of a watcher)
    PIP_NOT_ALLOWED = "** {name} doesn't allow the use of 'pip'."  # own wording
    TIME_LINE = "{text}"  # ``time``: the server's clock as the caller words it
    NO_OLDMOVES = "** There is no game with {name} to show."  # own wording

    @property
    def fields(self) -> frozenset[str]:
        """The names ``render`` needs for this message."""
        return _FIELDS[self]


# Parsed once: ``render`` compares the given names with these on every call.
_FIELDS: Final[dict[Msg, frozenset[str]]] = {
    msg: frozenset(name for _, name, _, _ in Formatter().parse(msg.value) if name is not None) for msg in Msg
}


def render(msg: Msg, /, **fields: object) -> str:
    """The text of ``msg`` with ``fields`` filled in. Exactly the template's fields must be given, else
    ``MessageFieldsError``: a misspelt or forgotten field fails loudly, not as a line with a hole in it."""
    expected = _FIELDS[msg]
    if fields.keys() != expected:
        raise MessageFieldsError(msg, expected - fields.keys(), fields.keys() - expected)
    return msg.value.format_map(fields)


# -- the login phase ----------------------------------------------------------------------------------------


def banner(server_name: str = "gammond") -> list[str]:
    title = f"* Welcome to {server_name}! *"
    return [
        " " * 27 + "*" * len(title),
        " " * 27 + title,
        " " * 27 + "*" * len(title),
        "",
        "Please login as guest if you do not have an account on this server.",
        "",
    ]


LOGIN_PROMPT: Final = "login: "  # sent without a line end
PROMPT: Final = "> "  # telnet mode, without a line end
PASSWORD_PROMPT: Final = "password: "


def guest_welcome(server_name: str = "gammond") -> list[str]:
    """What a ``guest`` login sees (BaldLies's wording, after FIBS)."""
    return [
        f"Welcome to {server_name}. You just logged in as guest.",
        "Please register before using this server:",
        "",
        "Type 'name username' where name is the word 'name' and",
        "username is the login name you want to use.",
        "The username may not contain blanks ' ' or colons ':'.",
        "The system will then ask you for your password twice.",
        "Please make sure that you don't forget your password. All",
        "passwords are encrypted before they are saved. If you forget",
        "your password there is no way to find out what it was.",
        "Please type 'bye' if you don't want to register now.",
        "",
        "ONE USERNAME PER PERSON ONLY!!!",
    ]


def your_name_will_be(name: str) -> list[str]:
    return [
        f"Your name will be {name}",
        "Type in no password and hit Enter/Return if you want to change it now.",
    ]


GIVE_PASSWORD: Final = "Please give your password: "
RETYPE_PASSWORD: Final = "Please retype your password: "


def registered() -> list[str]:
    return ["You are registered.", "Type 'help beginner' to get started."]


def password_too_short(minimum: int = 4) -> str:
    """Own wording (SPEC: the minimum length is 4)."""
    return f"** Your password must be at least {minimum} characters long."


def goodbye(server_name: str = "gammond") -> str:
    return f"Thanks for using {server_name}!"


# -- CLIP 1-19 ----------------------------------------------------------------------------------------------


def _flag(value: bool) -> str:
    return "1" if value else "0"


def _opt(value: str | None) -> str:
    return value if value else "-"


def clip_welcome(name: str, last_login: int, last_host: str) -> str:
    """CLIP 1: ``1 name last_login last_host``."""
    return f"1 {name} {int(last_login)} {_opt(last_host)}"


def clip_own_info(
    name: str,
    toggles: dict[str, bool],
    *,
    away: bool,
    experience: int,
    rating: float,
    redoubles: str,
    timezone: str,
) -> str:
    """CLIP 2: ``2 name allowpip autoboard autodouble automove away bell crawford double experience greedy
    moreboards moves notify rating ratings ready redoubles report silent timezone``."""
    t = toggles
    fields = (
        name,
        *(_flag(t[k]) for k in ("allowpip", "autoboard", "autodouble", "automove")),
        _flag(away),
        *(_flag(t[k]) for k in ("bell", "crawford", "double")),
        str(experience),
        *(_flag(t[k]) for k in ("greedy", "moreboards", "moves", "notify")),
        f"{rating:.2f}",
        _flag(t["ratings"]),
        _flag(t["ready"]),
        redoubles_field(redoubles),
        _flag(t["report"]),
        _flag(t["silent"]),
        timezone,
    )
    return "2 " + " ".join(fields)


def redoubles_field(value: str) -> str:
    """The ``redoubles`` setting as CLIP 2 writes it: a number (``none`` is 0) or ``unlimited``."""
    return "0" if value == "none" else value


def motd(server_name: str = "gammond") -> list[str]:
    """The message of the day between CLIP 3 and 4 (a framed box, as FIBS sends it)."""
    text = [
        "",
        f"Welcome to {server_name}, a FIBS-compatible backgammon server.",
        "",
        "Type 'who' to see who is here, 'invite <user> <n>' to play,",
        "'watch <user>' to watch a game and 'help' for the commands.",
        "",
    ]
    rule = "+" + "-" * 68 + "+"
    return [rule, *(f"|  {line:<66}|" for line in text), rule]


def clip_who_info(
    name: str,
    *,
    opponent: str | None,
    watching: str | None,
    ready: bool,
    away: bool,
    rating: float,
    experience: int,
    idle: int,
    login: int,
    hostname: str,
    client: str | None,
    email: str | None = None,
) -> str:
    """CLIP 5: ``5 name opponent watching ready away rating experience idle login hostname client email``."""
    return (
        f"5 {name} {_opt(opponent)} {_opt(watching)} {_flag(ready)} {_flag(away)} {rating:.2f} {experience} "
        f"{max(0, int(idle))} {int(login)} {_opt(hostname)} {_opt(client)} {_opt(email)}"
    )


def clip_logout(name: str, how: str = "logs out") -> str:
    """CLIP 8; ``how`` is ``logs out`` or ``drops connection``."""
    return f"8 {name} {name} {how}."


def clip_message(sender: str, time: int, text: str) -> str:
    """CLIP 9: a stored ``message``."""
    return f"9 {sender} {int(time)} {text}"


def heard_by(count: int) -> str:
    """After a whisper or kibitz: ``** n users heard you.`` / ``** But nobody heard you.``"""
    if count <= 0:
        return "** But nobody heard you."
    return f"** {count} user{'s' if count != 1 else ''} heard you."


# The telnet-mode forms of CLIP 8 and 5, for people on a plain terminal: own wording after FIBS.


def text_logs_out(name: str, how: str = "logs out") -> str:
    return f"{name} {how}."


def text_who_line(
    name: str,
    opponent: str | None,
    watching: str | None,
    rating: float,
    experience: int,
    ready: bool,
    away: bool,
) -> str:
    state = "playing " + opponent if opponent else "watching " + watching if watching else ""
    flags = ("ready" if ready else "") + (" away" if away else "")
    return f"{name:<20} {rating:8.2f} {experience:6d}  {flags.strip():<10} {state}".rstrip()


# -- chat ---------------------------------------------------------------------------------------------------


def away_list(entries: Sequence[tuple[str, str]]) -> list[str]:
    """``away`` without text: the users who are away (own wording)."""
    if not entries:
        return ["None of the users is away."]
    return ["The following users are away:", *(f"{name:<20} {message}" for name, message in entries)]


def gagged(name: str, on: bool) -> str:
    """Own wording."""
    return f"** You won't hear {name} any more." if on else f"** You will hear {name} again."


def blinded(name: str, on: bool) -> str:
    """Own wording."""
    return f"** {name} can't watch you any more." if on else f"** {name} may watch you again."


# -- invitations and joining --------------------------------------------------------------------------------


def _a_match(length: int) -> str:
    return "an unlimited match" if length == 0 else f"a {length} point match"


def invitation(inviter: str, length: int | None) -> str:
    """``user wants to play a n point match with you.`` (0: unlimited, None: resume)."""
    if length is None:
        return f"{inviter} wants to resume a saved match with you."
    return f"{inviter} wants to play {_a_match(length)} with you."


def saved_match_warning(length: int) -> str:
    what = "unlimited" if length == 0 else f"{length} point"
    return f"WARNING: Don't accept if you want to continue the saved {what} match!"


def you_invited(invitee: str, length: int | None) -> str:
    if length is None:
        return f"** You invited {invitee} to resume a saved match."
    return f"** You invited {invitee} to {_a_match(length)}."


def you_are_now_playing(opponent: str, length: int) -> str:
    """The joiner's line; no final period, as on FIBS."""
    return f"** You are now playing {_a_match(length)} with {opponent}"


def player_joined_you(joiner: str, length: int) -> str:
    if length == 0:
        return f"Player {joiner} has joined you for an unlimited match."
    return f"** Player {joiner} has joined you for a {length} point match."


def resume_length(length: int) -> str:
    return "unlimited matchlength" if length == 0 else f"match length: {length}"


# -- a game -------------------------------------------------------------------------------------------------


def please_move(count: int) -> str:
    return f"Please move {count} piece{'s' if count != 1 else ''}."


# Move refusals: the move is named by its place in the command.


def cant_move_from(point: str, ordinal: int) -> str:
    return f"** You can't move from {point} in your {ORDINALS[ordinal]} move."


def cant_move_points(distance: int, ordinal: int) -> str:
    return f"** You can't move {distance} points in your {ORDINALS[ordinal]} move."


def cant_move_to(point: str, ordinal: int) -> str:
    return f"** You can't move to {point} in your {ORDINALS[ordinal]} move."


def remove_from_bar_first(ordinal: int) -> str:
    return f"** You have to remove pieces from the bar in your {ORDINALS[ordinal]} move."


def cant_remove_piece(ordinal: int) -> str:
    return f"** You can't remove this piece in your {ORDINALS[ordinal]} move."


# -- the cube -----------------------------------------------------------------------------------------------


def doubles(name: str, may_redouble: bool = False) -> str:
    """What the doubled player sees."""
    if may_redouble:
        return f"{name} doubles. Type 'accept', 'reject' or 'redouble'."
    return f"{name} doubles. Type 'accept' or 'reject'."


def gives_up(name: str, winner: str, points: int) -> str:
    """A rejected double: ``You give up. user wins n points.`` / ``user gives up. You win n points.``"""
    verb = "give" if name == "You" else "gives"
    win = "win" if winner == "You" else "wins"
    return f"{name} {verb} up. {winner} {win} {points} point{'s' if points != 1 else ''}."


# -- resignations -------------------------------------------------------------------------------------------


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def wants_to_resign(name: str, points: int) -> str:
    """What the opponent sees."""
    return f"{name} wants to resign. You will win {_points(points)}. Type 'accept' or 'reject'."


def wants_to_resign_watcher(name: str, winner: str, points: int) -> str:
    return f"{name} wants to resign. {winner} will win {_points(points)}."


def you_want_to_resign(opponent: str, points: int) -> str:
    return f"You want to resign. {opponent} will win {_points(points)}."


def you_accept_and_win(points: int) -> str:
    return f"You accept and win {_points(points)}."


def accepts_and_wins(name: str, points: int) -> str:
    return f"{name} accepts and wins {_points(points)}."


# -- game and match ends ------------------------------------------------------------------------------------


def you_win_game(points: int) -> str:
    return f"You win the game and get {_points(points)}. Congratulations!"


def wins_game(name: str, points: int) -> str:
    """What the loser sees."""
    return f"{name} wins the game and gets {_points(points)}. Sorry."


def wins_game_watcher(name: str, points: int) -> str:
    return f"{name} wins the game and gets {_points(points)}."


def match_score(length: int, first: str, first_score: int, second: str, second_score: int) -> str:
    what = "unlimited" if length == 0 else f"{length} point"
    return f"score in {what} match: {first}-{first_score} {second}-{second_score}"


def match_report(winner: str, loser: str, length: int, score: int, other: int) -> str:
    """The report to everyone with ``report`` on (two spaces before the score, as on FIBS)."""
    what = "an unlimited" if length == 0 else f"a {length} point"
    return f"{winner} wins {what} match against {loser}  {score}-{other} ."


def match_start_report(player: str, opponent: str, length: int) -> str:
    return f"{player} and {opponent} start {_a_match(length)}."


def match_resume_report(player: str, opponent: str, length: int) -> str:
    what = "unlimited" if length == 0 else f"{length}-point"
    return f"{player} and {opponent} are resuming their {what} match."


@dataclass(frozen=True, slots=True)
class RatingChange:
    """The figures of one FIBS rating calculation, as the ``ratings`` toggle shows them."""

    winner: str
    loser: str
    difference: float  # D, the absolute rating difference
    length: int  # N
    winner_experience: int
    loser_experience: int
    underdog_probability: float  # Pu
    probability: float  # P: 1 - Pu if the underdog won, Pu if the favourite did
    winner_k: float
    winner_change: float
    loser_k: float
    loser_change: float


def rating_calculation(rc: RatingChange) -> list[str]:
    """The ``rating calculation:`` block, as in SPEC "End of a Match"."""
    return [
        "rating calculation:",
        f"rating difference D={rc.difference:.6f}",
        f"match length      N={rc.length}",
        f"Experience: {rc.winner} {rc.winner_experience} - {rc.loser} {rc.loser_experience}",
        f"Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)={rc.underdog_probability:.6f}",
        f"P={rc.probability:.6f} is 1-Pu if underdog wins and Pu if favorite wins",
        f"K=max(1 , -Experience/100+5) for {rc.winner}: {rc.winner_k:.6f}",
        f"change for {rc.winner}: 4*K*sqrt(N)*P={rc.winner_change:.6f}",
        f"K=max(1 , -Experience/100+5) for {rc.loser}: {rc.loser_k:.6f}",
        f"change for {rc.loser}: -4*K*sqrt(N)*P={rc.loser_change:.6f}",
    ]


# -- saved matches, toggles, settings -----------------------------------------------------------------------


def saved_row(opponent: str, length: int, mine: int, theirs: int, *, online: bool, playing: bool) -> str:
    """One ``show saved`` row: ``**`` the opponent is online, `` *`` you play the match now."""
    mark = " *" if playing else "**" if online else "  "
    size = "unlimited" if length == 0 else str(length)
    return f"{mark}{opponent:<24}{size:>3}{'':16}{mine:>2} - {theirs:>2}"


def saved_count(name: str, count: int) -> str:
    if count == 0:
        return f"{name} has no saved games."
    return f"{name} has {count} saved game{'s' if count != 1 else ''}."


def games_row(player: str, opponent: str, length: int, score: tuple[int, int]) -> str:
    what = "unlimited" if length == 0 else f"{length} point match"
    return f"{player:>20} - {opponent:<20} ({what}) {score[0]}-{score[1]}"


def watchers_list(entries: Sequence[tuple[str, str]]) -> list[str]:
    """``show watchers``: (watcher, watched) pairs (own wording)."""
    if not entries:
        return ["Nobody is watching."]
    return ["Watching players:", *(f"{w} is watching {p}." for w, p in entries)]


def toggle_value(name: str, value: bool) -> str:
    return f"{name:<16}{'YES' if value else 'NO'}"


def toggles_list(values: dict[str, bool]) -> list[str]:
    return [render(Msg.TOGGLES_HEADER), *(toggle_value(name, values[name]) for name in TOGGLES)]


_TOGGLE_REPLIES: dict[str, tuple[str, str]] = {
    # (on, off). ready, notify and autoboard are FIBS's documented lines; the others are FIBS's as we
    # remember them (own wording where unsure).
    "allowpip": ("** You allow the use of the server's 'pip' command.",
                 "** You don't allow the use of the server's 'pip' command."),
    "autoboard": ("** The board will be refreshed after every move.",
                  "** The board won't be refreshed after every move."),
    "autodouble": ("** You agree that doublets during opening double the cube.",
                   "** You don't agree that doublets during opening double the cube."),
    "automove": ("** Forced moves will be done automatically.",
                 "** Forced moves won't be done automatically."),
    "bell": ("** Your terminal will ring the bell if someone talks to you or invites you",
             "** Your terminal won't ring the bell if someone talks to you or invites you"),
    "crawford": ("** You insist on playing with the Crawford rule.",
                 "** You would like to play without using the Crawford rule."),
    "double": ("** You will be asked if you want to double.", "** You won't be asked if you want to double."),
    "greedy": ("** Will use automatic greedy bearoffs.", "** Won't use automatic greedy bearoffs."),
    "moreboards": ("** Will send rawboards after rolling.", "** Won't send rawboards after rolling."),
    "moves": ("** You want a list of moves after this game.",
              "** You won't see a list of moves after this game."),
    "notify": ("** You'll be notified when new users log in.",
               "** You won't be notified when new users log in."),
    "ratings": ("** You'll see how the rating changes are calculated.",
                "** You won't see how the rating changes are calculated."),
    "ready": ("** You're now ready to invite or join someone.", "** You're now refusing to play with someone."),
    "report": ("** You will be informed about starting and ending matches.",
               "** You won't be informed about starting and ending matches."),
    "silent": ("** You won't hear what other players shout.", "** You will hear what other players shout."),
    "telnet": ("** You use telnet and don't need extra 'newlines'.",
               "** You use a client program and will receive extra 'newlines'."),
    "wrap": ("** The server will wrap long lines.", "** Your terminal knows how to wrap long lines."),
}  # fmt: skip


def toggle_reply(name: str, value: bool) -> str:
    """The confirmation after ``toggle name`` set it to ``value``."""
    on, off = _TOGGLE_REPLIES[name]
    return on if value else off


def settings_list(values: dict[str, str]) -> list[str]:
    return [
        render(Msg.SETTINGS_HEADER),
        *(render(Msg.SETTING_VALUE, name=name, value=values[name]) for name in SETTINGS),
    ]


# -- odds and ends ------------------------------------------------------------------------------------------


def help_lines(topic: str = "") -> list[str]:
    """``help`` (the commands), ``help <command>`` (one command, abbreviations too), ``help beginner`` (a first
    match step by step); own wording."""
    topic = topic.strip().lower()
    if topic == "beginner":
        return BEGINNER_HELP
    if topic:
        word = command_word(topic.split()[0])
        if word is not None:
            return COMMAND_HELP[word]
        return [f"** No help on '{topic[:40]}'. Try 'help' (the commands) or 'help beginner' (how to play)."]
    return [
        "Commands: who, rawwho, invite <user> <n|unlimited>, invite <user> (resume), join <user>, roll,",
        "  move <from-to ...>, double, accept, reject, redouble, resign n|g|b, board, pip, leave, join,",
        "  watch <user>, unwatch, look <user>, tell <user> <text>, say, kibitz, whisper, shout,",
        "  message <user> <text>, away <text>, back, toggle [name], set [name value], show saved|games|",
        "  watchers|savedcount <user>, oldmoves [user], gag <user>, blind <user>, time, bye.",
        "Moves use absolute points 1-24, 'bar' and 'off': O moves from 24 to 1, X from 1 to 24.",
        "'help <command>' says what one command does.",
        "New here? 'help beginner' walks you through a first match.",
    ]


_REDOUBLE_HELP = [
    "redouble (also beaver, raccoon, otter): in an unlimited match, take the double offered to you and",
    "  double back at once; the 'redoubles' variable caps how often (set redoubles <n|none|unlimited>).",
]
# ``help <command>``: what each command does, in the server's own words.
COMMAND_HELP: dict[str, list[str]] = {
    "move": [
        "move <from-to> ...: play your roll, one step per die ('move 13-7 13-11', 'm 8-5 8-5 6-3 6-3' for",
        "  doubles). Points are 1-24 as the board shows them; 'bar' enters, 'off' bears off. 'move' may be",
        "  left out: '24-18 13-11' works too.",
    ],
    "roll": ["roll: roll the dice at the start of your turn (instead of doubling)."],
    "kibitz": ["kibitz <text>: say something to the players and everyone watching their match."],
    "double": ["double: offer to double the stakes, at the start of your turn before you roll."],
    "accept": ["accept: take the double offered to you, or accept your opponent's resignation."],
    "join": [
        "join <user>: accept <user>'s invitation (or resume your saved match with <user>).",
        "join: start the next game of your match.",
    ],
    "invite": [
        "invite <user> <n>: ask <user> for an n-point match (1-64); 'invite <user> unlimited' for a money",
        "  session; 'invite <user>' alone resumes the match you saved with <user>.",
    ],
    "board": ["board: show the board of the match you play or watch again."],
    "tell": ["tell <user> <text>: send <user> a private line (only if <user> is logged in)."],
    "tellx": ["tellx <user> <text>: the same as tell (the form some clients send)."],
    "pip": ["pip: the pip counts of the match you play or watch (your opponent can forbid it: allowpip)."],
    "help": [
        "help: the list of commands; help <command>: what one command does; help beginner: a first match.",
    ],
    "gag": ["gag <user>: stop hearing what <user> tells, says or shouts to you; again to hear it."],
    "who": ["who [user]: the players online (or one of them): opponent, watching, rating, experience."],
    "whisper": ["whisper <text>: say something to the people watching your match, not to the players."],
    "watch": ["watch <user>: follow <user>'s match board by board (you cannot watch while you play)."],
    "say": ["say <text>: say something to your opponent."],
    "shout": ["shout <text>: say something to everyone logged in."],
    "show": [
        "show games: the matches being played; show saved: your saved matches; show watchers: who",
        "  watches whom; show savedcount <user>: how many saved matches <user> has; show max: the most",
        "  saved matches one may have.",
    ],
    "set": [
        "set: list the variables; set <name> <value> changes one of:",
        "  " + ", ".join(SETTINGS) + ".",
    ],
    "toggle": [
        "toggle: list the toggles; toggle <name> ...: switch each on or off (ready, double, autoboard, ...).",
    ],
    "time": ["time: the server's date and time."],
    "reject": [
        "reject: refuse the double offered to you (you lose the game at the cube before it) or a resignation."
    ],
    "resign": [
        "resign n|g|b: offer to give up the game for a single game, a gammon or a backgammon; your",
        "  opponent accepts or rejects.",
    ],
    "redouble": _REDOUBLE_HELP,
    "beaver": _REDOUBLE_HELP,
    "raccoon": _REDOUBLE_HELP,
    "otter": _REDOUBLE_HELP,
    "rawwho": [
        "rawwho [user]: the players online as CLIP lines ('5 name opponent watching ...'), ended by '6'.",
    ],
    "leave": ["leave: stop playing; the match is saved and 'invite <user>' later resumes it."],
    "look": ["look <user>: one board of <user>'s match, without watching it."],
    "unwatch": ["unwatch: stop watching."],
    "oldmoves": ["oldmoves [user]: the moves of your last game (with <user>)."],
    "message": ["message <user> <text>: a line for <user>, delivered now or at <user>'s next login."],
    "away": ["away <text>: say you are away (others are told <text>); away alone lists who is away."],
    "back": ["back: you are no longer away."],
    "blind": ["blind <user>: stop <user> watching you; again to allow it."],
    "name": ["name <user>: as guest, choose the name to register; you are then asked for a password."],
    "login": ["login <client> <clip_version> <name> <password>: the CLIP login, sent by clients."],
    "bye": ["bye: log out (a match in play is saved)."],
}


BEGINNER_HELP = [
    "Your first match, step by step:",
    " 1. 'who' lists the players; a bot such as gammond is always ready to play.",
    " 2. 'invite gammond 3' asks for a 3-point match (first to 3 points wins; 1 to 13 are usual).",
    "    Someone invites you? 'join <name>' accepts.",
    " 3. Each game starts with one die each; the higher die moves first with both dice.",
    " 4. The board: your home board is at the bottom right and you bear off to the right;",
    "    your letter (X or O) is on the line 'You (O)' under the board. Type 'board' to see it again.",
    " 5. When the server says 'Please move', type the points you move from and to, one per die:",
    "    'move 13-7 13-11' (or 'm 13-7 13-11'), 'move bar-22' from the bar, 'move 6-off' to bear off.",
    "    Doubles move four times: 'm 8-5 8-5 6-3 6-3'. 'pip' shows the pip counts.",
    " 6. At the start of your turn you may 'double' the stakes instead of rolling ('roll' otherwise);",
    "    when doubled, 'accept' plays on for twice the points, 'reject' gives up the game.",
    " 7. 'resign n' (or g, b) offers to give up a game; 'leave' stops, and the match is saved:",
    "    'invite <name>' later resumes it.",
    " 8. 'watch <user>' watches a match, 'kibitz <text>' talks to everyone there, 'tell <user> <text>' to one.",
    "'help' lists every command; 'bye' logs out.",
]


def oldmoves_lines(
    length: int,
    score: tuple[int, int],
    names: tuple[str, str],
    colours: tuple[str, str],
    turns: Sequence[tuple[str, str]],
) -> list[str]:
    """The ``oldmoves`` dump (SPEC "Oldmoves"): ``score`` and ``names`` in the same order, ``colours`` their
    letters (``X``/``O``), ``turns`` (letter, text) such as ("O", "(5 1) 13-8 24-23") or ("X", "doubles")."""
    what = "unlimited match" if length == 0 else f"{length} point match"
    out = [f"Score is {score[0]}-{score[1]} in a {what}."]
    x_name = names[0] if colours[0] == "X" else names[1]
    o_name = names[1] if colours[0] == "X" else names[0]
    out.append(f"{x_name} is X - {o_name} is O")
    out.append("")
    out.extend(f"{letter}: {text}" for letter, text in turns)
    return out


def ascii_board(board: FibsBoard) -> list[str]:
    """A board drawn for a person at a terminal (``set boardstyle 1`` or ``2``; own layout after FIBS's): the
    viewer's home at the bottom right, point labels in FIBS's absolute numbering, stacks over 5 counted."""
    position = board.position_for_me()
    mine, theirs = ("O", "X") if board.colour == 1 else ("X", "O")

    def label(point: int) -> str:
        return f"{point if board.direction == -1 else 25 - point:^4}"

    def cell(point: int, row: int) -> str:
        if position.me[point - 1]:
            letter, count = mine, position.me[point - 1]
        elif position.opp[24 - point]:
            letter, count = theirs, position.opp[24 - point]
        else:
            return "    "
        if count <= row:
            return "    "
        return f"{count:^4}" if row == 4 and count > 5 else f"{letter:^4}"

    def bar_cell(count: int, letter: str, row: int) -> str:
        # Stacked from the middle of the board outwards; five and more show their count in the fifth row.
        depth = 4 - row
        if count <= depth:
            return "   "
        return f"{count:^3}" if depth == 4 and count > 5 else f"{letter:^3}"

    def half_rows(left: range, right: range, rows: Iterable[int], bar: tuple[int, str]) -> list[str]:
        return [
            "  |"
            + "".join(cell(p, r) for p in left)
            + f"|{bar_cell(*bar, r)}|"
            + "".join(cell(p, r) for p in right)
            + "|"
            for r in rows
        ]

    rule = "  +" + "-" * 24 + "+---+" + "-" * 24 + "+"
    top_left, top_right = range(13, 19), range(19, 25)
    bottom_left, bottom_right = range(12, 6, -1), range(6, 0, -1)
    you = board.player if board.watching else "You"
    length = "unlimited match" if board.unlimited else f"{board.match_length}-point match"
    off_me, off_them = position.off
    dice = board.dice
    if dice is None:
        roll = (
            ""
            if board.on_roll is None
            else f"  {you if board.on_roll is Side.PLAYER else board.opponent} to roll."
        )
    else:
        who = you if board.on_roll is Side.PLAYER else board.opponent
        roll = f"  {who} rolled {dice[0]} {dice[1]}."
    return [
        ("   " + "".join(map(label, top_left)) + "     " + "".join(map(label, top_right))).rstrip(),
        rule,
        # Chequers on the bar sit on the side where they enter: the viewer's in the top half, facing the
        # opponent's home board, the opponent's in the bottom half.
        *half_rows(top_left, top_right, range(5), (position.me[BAR], mine)),
        "  |" + " " * 24 + "|BAR|" + " " * 24 + "|",
        *half_rows(bottom_left, bottom_right, range(4, -1, -1), (position.opp[BAR], theirs)),
        rule,
        ("   " + "".join(map(label, bottom_left)) + "     " + "".join(map(label, bottom_right))).rstrip(),
        f"  {you} ({mine}): {board.player_score}   {board.opponent} ({theirs}): {board.opponent_score}   {length}",
        f"  BAR: {mine}-{position.me[BAR]} {theirs}-{position.opp[BAR]}   OFF: {mine}-{off_me} {theirs}-{off_them}"
        f"   Cube: {board.cube}{roll}",
    ]
