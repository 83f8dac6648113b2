"""The FIBS (CLIP) server codec, sans-I/O: client lines to typed commands, and every line the server sends.

The mirror of ``protocols.fibs.client``. ``ServerLineReader`` turns received bytes into command lines
(telnet IAC sequences dropped, CR LF / LF / CR NUL line ends, a bound on the line length);
``parse_command`` reads one line into a typed ``Command`` (FIBS abbreviations accepted, see ``COMMANDS``);
one renderer per server message returns its text without the line end (``line_bytes`` adds CR LF).

Wording: word for word from ../shared/reference/fibs-protocol.md sections 1.2-1.6 (SPEC first, then the real
fibs.com 2020 log, then the BaldLies transcripts) wherever a line is documented. Lines the reference does not
give (a few refusals, the toggle confirmations beyond the three documented, registration errors) use FIBS's
``** ...`` shape in our own words; their renderers say so.

Lengths are ints with 0 for an unlimited match, as in ``engine.match.MatchState``. Names are FIBS user names;
the client's own user is "You" in the lines that address it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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
    """Lines as the wire carries them: each ends with CR LF."""
    return b"".join(line.encode("utf-8", "replace") + CRLF for line in lines)


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


def name_taken(name: str) -> str:
    """Own wording."""
    return f"** Please use another name. '{name}' is already used by someone else."


def passwords_differ() -> str:
    """Own wording."""
    return "** The two passwords were not identical. Please give them again."


def password_too_short(minimum: int = 4) -> str:
    """Own wording (SPEC: the minimum length is 4)."""
    return f"** Your password must be at least {minimum} characters long."


def guest_only_name() -> str:
    """Own wording."""
    return "** You are a guest. Please register with 'name username' or type 'bye'."


def login_incorrect() -> str:
    """JIBS's line; FIBS itself only sends ``login: `` again (the server sends both)."""
    return "Login incorrect."


def already_logged_in() -> str:
    return "** Warning: You are already logged in."


def goodbye(server_name: str = "gammond") -> str:
    return f"Thanks for using {server_name}!"


def connection_timed_out() -> str:
    return "Connection timed out."


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


def clip_motd_start() -> str:
    return "3"


def clip_motd_end() -> str:
    return "4"


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


def clip_who_end() -> str:
    return "6"


def clip_login(name: str) -> str:
    """CLIP 7."""
    return f"7 {name} {name} logs in."


def clip_logout(name: str, how: str = "logs out") -> str:
    """CLIP 8; ``how`` is ``logs out`` or ``drops connection``."""
    return f"8 {name} {name} {how}."


def clip_message(sender: str, time: int, text: str) -> str:
    """CLIP 9: a stored ``message``."""
    return f"9 {sender} {int(time)} {text}"


def clip_message_delivered(recipient: str) -> str:
    return f"10 {recipient}"


def clip_message_saved(recipient: str) -> str:
    return f"11 {recipient}"


def clip_says(sender: str, text: str) -> str:
    """CLIP 12: ``tell`` or ``say`` to you."""
    return f"12 {sender} {text}"


def clip_shouts(sender: str, text: str) -> str:
    return f"13 {sender} {text}"


def clip_whispers(sender: str, text: str) -> str:
    return f"14 {sender} {text}"


def clip_kibitzes(sender: str, text: str) -> str:
    return f"15 {sender} {text}"


def clip_you_say(recipient: str, text: str) -> str:
    """CLIP 16: the echo of ``tell`` (and of ``say``, naming the opponent)."""
    return f"16 {recipient} {text}"


def clip_you_shout(text: str) -> str:
    return f"17 {text}"


def clip_you_whisper(text: str) -> str:
    return f"18 {text}"


def clip_you_kibitz(text: str) -> str:
    return f"19 {text}"


def heard_by(count: int) -> str:
    """After a whisper or kibitz: ``** n users heard you.`` / ``** But nobody heard you.``"""
    if count <= 0:
        return "** But nobody heard you."
    return f"** {count} user{'s' if count != 1 else ''} heard you."


# Telnet-mode (non-CLIP) forms of the chat lines, for people on a plain terminal. Own wording after FIBS.


def text_says(sender: str, text: str) -> str:
    return f"{sender} tells you: {text}"


def text_shouts(sender: str, text: str) -> str:
    return f"{sender} shouts: {text}"


def text_whispers(sender: str, text: str) -> str:
    return f"{sender} whispers: {text}"


def text_kibitzes(sender: str, text: str) -> str:
    return f"{sender} kibitzes: {text}"


def text_message(sender: str, when: str, text: str) -> str:
    return f"Message from {sender} at {when}: {text}"


def text_logs_in(name: str) -> str:
    return f"{name} logs in."


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


# -- chat refusals ------------------------------------------------------------------------------------------


def no_one_called(name: str) -> str:
    return f"** There is no one called {name}"


def wont_listen(name: str) -> str:
    return f"** {name} won't listen to you."


def say_outside_game() -> str:
    return "** 'say' can't be used outside a game"


def not_watching_or_playing() -> str:
    return "** You're not watching or playing."


def player_away(name: str, message: str) -> str:
    return f"{name} is away: {message}"


def unknown_command(word: str) -> str:
    return f"** Unknown command: '{word}'"


def you_are_away() -> str:
    return "You're away. Please type 'back'"


def away_set(message: str) -> str:
    """Own wording: confirms ``away``."""
    return f"You're away now: {message}"


def welcome_back() -> str:
    return "Welcome back."


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


def join_hint(inviter: str) -> str:
    return f"Type 'join {inviter}' to accept."


def saved_match_warning(length: int) -> str:
    what = "unlimited" if length == 0 else f"{length} point"
    return f"WARNING: Don't accept if you want to continue the saved {what} match!"


def you_invited(invitee: str, length: int | None) -> str:
    if length is None:
        return f"** You invited {invitee} to resume a saved match."
    return f"** You invited {invitee} to {_a_match(length)}."


def no_saved_match(name: str) -> str:
    return f"** There's no saved match with {name}. Please give a match length."


def refusing_games(name: str) -> str:
    return f"** {name} is refusing games."


def already_playing_with_someone_else(name: str) -> str:
    return f"** {name} is already playing with someone else."


def you_are_already_playing() -> str:
    return "** You are already playing."


def cannot_invite_yourself() -> str:
    """Own wording."""
    return "** You can't invite yourself."


def you_are_now_playing(opponent: str, length: int) -> str:
    """The joiner's line; no final period, as on FIBS."""
    return f"** You are now playing {_a_match(length)} with {opponent}"


def player_joined_you(joiner: str, length: int) -> str:
    if length == 0:
        return f"Player {joiner} has joined you for an unlimited match."
    return f"** Player {joiner} has joined you for a {length} point match."


def you_resumed(opponent: str) -> str:
    return f"You are now playing with {opponent}. Your running match was loaded."


def opponent_resumed(joiner: str) -> str:
    return f"{joiner} has joined you. Your running match was loaded."


def didnt_invite_you(name: str) -> str:
    return f"** {name} didn't invite you."


def join_who() -> str:
    return "** Error: Join who?"


def cant_find_player(name: str) -> str:
    """GIBBON-T's line for ``join`` naming nobody online."""
    return f"** Error: can't find player {name}"


def join_busy(name: str) -> str:
    return f"** Error: {name} is already playing with someone else."


def saved_match_corrupt() -> str:
    return "** ERROR: Saved match is corrupt. Please start another one."


def cannot_play_two_games() -> str:
    return "** You can't play two games at once"


def too_many_saved(limit: int) -> str:
    """Own wording, after BaldLies's MOTD."""
    return f"** You have {limit} or more unfinished games; finish one of them before starting a new one."


def resume_turn(name: str) -> str:
    return f"turn: {name}."


def resume_length(length: int) -> str:
    return "unlimited matchlength" if length == 0 else f"match length: {length}"


def resume_points(name: str, points: int) -> str:
    return f"points for user {name}: {points}"


# -- a game -------------------------------------------------------------------------------------------------


def starting_new_game(opponent: str) -> str:
    return f"Starting a new game with {opponent}."


def opening_roll(first: str, first_die: int, second: str, second_die: int) -> str:
    """``You rolled 3, user rolled 1`` (a watcher sees the two names)."""
    return f"{first} rolled {first_die}, {second} rolled {second_die}"


def your_turn_to_move() -> str:
    return "It's your turn to move."


def makes_first_move(name: str) -> str:
    return f"{name} makes the first move."


def roll_or_double() -> str:
    return "It's your turn. Please roll or double"


def cube_now(value: int) -> str:
    return f"The number on the doubling cube is now {value}"


def you_roll(d1: int, d2: int) -> str:
    return f"You roll {d1} and {d2}."


def rolls(name: str, d1: int, d2: int) -> str:
    return f"{name} rolls {d1} and {d2}."


def please_move(count: int) -> str:
    return f"Please move {count} piece{'s' if count != 1 else ''}."


def you_cant_move() -> str:
    return "You can't move."


def cant_move(name: str) -> str:
    return f"{name} can't move."


def only_possible_move(text: str) -> str:
    return f"The only possible move is {text} ."


def moves(name: str, text: str) -> str:
    """``user moves 24-18 13-11 .`` (FIBS's trailing space and period)."""
    return f"{name} moves {text} ."


# Roll and move refusals.


def not_your_turn_to_move() -> str:
    return "** It's not your turn to move."


def roll_before_moving() -> str:
    return "** You have to roll the dice before moving."


def must_give_moves(count: int) -> str:
    return f"** You must give {count} moves."


def too_many_moves(count: int) -> str:
    return f"** Please don't give more than {count} moves."


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


def move_syntax(text: str) -> str:
    """Own wording: a move that does not read as steps."""
    return f"** Can't understand the move '{text}'. Give it as from-to pairs, e.g. 'move 13-8 24-23'."


def already_rolled() -> str:
    return "** You did already roll the dice."


def not_your_turn_to_roll() -> str:
    """Own wording."""
    return "** It's not your turn to roll the dice."


def not_playing() -> str:
    """Own wording, after FIBS."""
    return "** You're not playing."


def wait_for_answer(name: str) -> str:
    """Own wording: an action while the opponent must answer a double or resignation."""
    return f"** Please wait for {name} to answer."


# -- the cube -----------------------------------------------------------------------------------------------


def you_double(opponent: str) -> str:
    return f"You double. Please wait for {opponent} to accept or reject."


def doubles(name: str, may_redouble: bool = False) -> str:
    """What the doubled player sees."""
    if may_redouble:
        return f"{name} doubles. Type 'accept', 'reject' or 'redouble'."
    return f"{name} doubles. Type 'accept' or 'reject'."


def doubles_watcher(name: str) -> str:
    return f"{name} doubles."


def redoubles(name: str, cube: int) -> str:
    return f"{name} redoubles to {cube}. Type 'accept', 'reject' or 'redouble'."


def you_accept_and_redouble(cube: int) -> str:
    return f"You accept the double to {cube} and redouble."


def you_accept_double(cube: int) -> str:
    return f"You accept the double. The cube shows {cube}."


def accepts_double(name: str, cube: int) -> str:
    return f"{name} accepts the double. The cube shows {cube}."


def you_accept_redouble(cube: int) -> str:
    return f"You accept the redouble. The cube shows {cube}."


def accepts_redouble(name: str, cube: int) -> str:
    return f"{name} accepts the redouble. The cube shows {cube}."


def accepts_double_watcher(name: str) -> str:
    return f"{name} accepts the double."


def gives_up(name: str, winner: str, points: int) -> str:
    """A rejected double: ``You give up. user wins n points.`` / ``user gives up. You win n points.``"""
    verb = "give" if name == "You" else "gives"
    win = "win" if winner == "You" else "wins"
    return f"{name} {verb} up. {winner} {win} {points} point{'s' if points != 1 else ''}."


def double_before_roll() -> str:
    return "** You can only double before you roll the dice."


def not_your_turn_to_double() -> str:
    return "** It's not your turn to double"


def wait_until_moved(name: str) -> str:
    return f"** Please wait until {name} has moved."


def crawford_no_double() -> str:
    """GAMMONBOT watches for the prefix ``** The Crawford rule doesn``."""
    return "** The Crawford rule doesn't allow you to double in this game."


def opponent_owns_cube() -> str:
    """Own wording."""
    return "** You can't double. Your opponent owns the cube."


def cube_dead() -> str:
    """Own wording: the doubler would win the match on the present cube."""
    return "** You can't double. Doubling is of no use to you at this score."


def cube_at_maximum(value: int) -> str:
    """Own wording."""
    return f"** You can't double. The cube is at {value} already."


def redouble_unlimited_only() -> str:
    """Own wording."""
    return "** Redoubles are allowed in unlimited matches only."


def no_redoubles_left() -> str:
    """Own wording."""
    return "** You can't redouble now."


def nothing_to_accept() -> str:
    """Own wording."""
    return "** There's nothing to accept."


def nothing_to_reject() -> str:
    """Own wording."""
    return "** There's nothing to reject."


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


def you_reject_resign() -> str:
    return "You reject. The game continues."


def rejects_resign(name: str) -> str:
    return f"{name} rejects. The game continues."


def wanted_to_resign(name: str) -> str:
    return f"** {name} wanted to resign. Type 'accept' or 'reject'."


def resign_refused(reason: str) -> str:
    """Own wording."""
    return f"** You can't resign now: {reason}."


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


def join_next_game() -> str:
    return "Type 'join' if you want to play the next game, type 'leave' if you don't."


def wait_for_join(name: str) -> str:
    return f"** Please wait for {name} to join too."


def you_win_match(length: int, score: int, other: int) -> str:
    return f"You win the {length} point match {score}-{other} ."


def wins_match(name: str, length: int, score: int, other: int) -> str:
    return f"{name} wins the {length} point match {score}-{other} ."


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


# -- leaving and saving -------------------------------------------------------------------------------------


def you_terminated() -> str:
    return "** You terminated the game. The game was saved."


def player_left(name: str) -> str:
    return f"** Player {name} has left the game. The game was saved."


def logs_out_saved(name: str) -> str:
    return f"{name} logs out. The game was saved."


def drops_connection_saved(name: str) -> str:
    return f"{name} drops connection. The game was saved."


def timed_out_saved(name: str) -> str:
    return f"Connection with {name} timed out. The game was saved."


def closed_old_connection_saved(name: str) -> str:
    return f"Closed old connection with user {name}. The game was saved."


def your_game_saved(name: str) -> str:
    """To a player whose match the server saved while shutting down."""
    return f"Your game with {name} was saved."


def left_game_report(name: str, opponent: str) -> str:
    """What a watcher (and everyone with ``report``) sees."""
    return f"{name} has left the game with {opponent}."


def server_shutdown(seconds: int) -> str:
    return f"*** ATTENTION ! The server will shut down in {seconds} seconds."


# -- watching -----------------------------------------------------------------------------------------------


def now_watching(name: str) -> str:
    return f"You're now watching {name}."


def nothing_interesting(name: str) -> str:
    return f"{name} is not doing anything interesting."


def watch_who() -> str:
    return "** Watch who?"


def doesnt_want_you_to_watch(name: str) -> str:
    return f"** {name} doesn't want you to watch."


def cant_watch_while_playing() -> str:
    return "** You can't watch another game while you're playing."


def cant_watch_yourself() -> str:
    """Own wording."""
    return "** You can't watch yourself."


def stop_watching(name: str) -> str:
    return f"You stop watching {name}."


def not_watching() -> str:
    """Own wording."""
    return "** You're not watching."


def is_watching_you(name: str) -> str:
    return f"{name} is watching you."


def stops_watching_you(name: str) -> str:
    return f"{name} stops watching you."


def starts_watching(watcher: str, player: str) -> str:
    return f"{watcher} starts watching {player}."


def stops_watching(watcher: str, player: str) -> str:
    return f"{watcher} stops watching {player}."


def bans_you(name: str) -> str:
    return f"{name} bans you from watching."


def watched_logs_out(name: str) -> str:
    return f"{name} logs out.. You're not watching anymore."


# -- saved matches, toggles, settings -----------------------------------------------------------------------


def saved_header() -> str:
    return "  opponent          matchlength   score (your points first)"


def saved_row(opponent: str, length: int, mine: int, theirs: int, *, online: bool, playing: bool) -> str:
    """One ``show saved`` row: ``**`` the opponent is online, `` *`` you play the match now."""
    mark = " *" if playing else "**" if online else "  "
    size = "unlimited" if length == 0 else str(length)
    return f"{mark}{opponent:<24}{size:>3}{'':16}{mine:>2} - {theirs:>2}"


def no_saved_games() -> str:
    return "no saved games."


def saved_count(name: str, count: int) -> str:
    if count == 0:
        return f"{name} has no saved games."
    return f"{name} has {count} saved game{'s' if count != 1 else ''}."


def games_header() -> str:
    """Own wording (``show games``)."""
    return "List of games:"


def games_row(player: str, opponent: str, length: int, score: tuple[int, int]) -> str:
    what = "unlimited" if length == 0 else f"{length} point match"
    return f"{player:>20} - {opponent:<20} ({what}) {score[0]}-{score[1]}"


def no_games() -> str:
    """Own wording."""
    return "No games are being played."


def watchers_list(entries: Sequence[tuple[str, str]]) -> list[str]:
    """``show watchers``: (watcher, watched) pairs (own wording)."""
    if not entries:
        return ["Nobody is watching."]
    return ["Watching players:", *(f"{w} is watching {p}." for w, p in entries)]


def toggles_header() -> str:
    return "The current settings are:"


def toggle_value(name: str, value: bool) -> str:
    return f"{name:<16}{'YES' if value else 'NO'}"


def toggles_list(values: dict[str, bool]) -> list[str]:
    return [toggles_header(), *(toggle_value(name, values[name]) for name in TOGGLES)]


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


def unknown_toggle(name: str) -> str:
    """Own wording."""
    return f"** Don't know how to toggle {name}."


def settings_header() -> str:
    return "Settings of variables:"


def setting_value(name: str, value: str) -> str:
    return f"{name}: {value}"


def settings_list(values: dict[str, str]) -> list[str]:
    return [settings_header(), *(setting_value(name, values[name]) for name in SETTINGS)]


def setting_set(name: str, value: str) -> str:
    return f"Value of '{name}' set to {value}."


def unknown_setting(name: str) -> str:
    """Own wording."""
    return f"** Unknown variable '{name}'. Known: {', '.join(SETTINGS)}."


def bad_setting_value(name: str, allowed: str) -> str:
    """Own wording."""
    return f"** Valid values for '{name}' are {allowed}."


# -- odds and ends ------------------------------------------------------------------------------------------


def line_too_long(limit: int) -> str:
    """Own wording."""
    return f"** Your line was longer than {limit} characters and was ignored."


def slow_down() -> str:
    """Own wording: the command rate limit."""
    return "** Please slow down: too many commands. That command was ignored."


def pip_count(mine: int, theirs: int, opponent: str) -> str:
    """Own wording (``pip``)."""
    return f"Pipcounts: You {mine} - {opponent} {theirs}"


def pip_not_allowed(name: str) -> str:
    """Own wording."""
    return f"** {name} doesn't allow the use of 'pip'."


def time_line(text: str) -> str:
    return text


def help_lines(topic: str = "") -> list[str]:
    """``help`` (the commands), ``help beginner`` (a first match step by step); own wording."""
    topic = topic.strip().lower()
    if topic == "beginner":
        return BEGINNER_HELP
    if topic:
        return [f"** No help on '{topic[:40]}'. Try 'help' (the commands) or 'help beginner' (how to play)."]
    return [
        "Commands: who, rawwho, invite <user> <n|unlimited>, invite <user> (resume), join <user>, roll,",
        "  move <from-to ...>, double, accept, reject, redouble, resign n|g|b, board, pip, leave, join,",
        "  watch <user>, unwatch, look <user>, tell <user> <text>, say, kibitz, whisper, shout,",
        "  message <user> <text>, away <text>, back, toggle [name], set [name value], show saved|games|",
        "  watchers|savedcount <user>, oldmoves [user], gag <user>, blind <user>, time, bye.",
        "Moves use absolute points 1-24, 'bar' and 'off': O moves from 24 to 1, X from 1 to 24.",
        "New here? 'help beginner' walks you through a first match.",
    ]


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


def no_oldmoves(name: str) -> str:
    """Own wording."""
    return f"** There is no game with {name} to show."
