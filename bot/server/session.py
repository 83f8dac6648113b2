"""One connection to the embedded server: its login phase, the user it speaks for, toggles, what it watches,
its invitation and its seat, plus the command-rate limiter.

Sessions only hold state and write bytes; the server decides what is written. ``send`` never blocks: a client
that reads too slowly for its output buffer to drain is cut off rather than allowed to hold the server's
memory.
"""

from __future__ import annotations

import asyncio
import enum
import time
from dataclasses import dataclass, field

from bot.server.store import Account
from bot.server.table import Table
from protocols.fibs import server as fs

MAX_OUTPUT_BUFFER = 1 << 20  # bytes queued for one client before it is dropped as too slow

DEFAULT_TOGGLES: dict[str, bool] = {
    "allowpip": True,
    "autoboard": True,
    "autodouble": False,
    "automove": False,
    "bell": False,
    "crawford": True,
    "double": True,
    "greedy": False,
    "moreboards": False,
    "moves": False,
    "notify": True,
    "ratings": False,
    "ready": False,
    "report": True,
    "silent": False,
    "telnet": True,
    "wrap": False,
}
DEFAULT_SETTINGS: dict[str, str] = {
    "boardstyle": "3",
    "linelength": "0",
    "pagelength": "0",
    "redoubles": "none",
    "sortwho": "login",
    "timezone": "UTC",
}


class Phase(enum.Enum):
    LOGIN = "login"  # at the login: prompt
    PASSWORD = "password"  # telnet-mode login: name given, password asked
    GUEST = "guest"  # logged in as guest: may register a name
    GUEST_PASSWORD = "guest password"  # registration: first password
    GUEST_RETYPE = "guest retype"  # registration: the password again
    ONLINE = "online"
    CLOSED = "closed"


@dataclass(slots=True)
class TokenBucket:
    """``rate`` commands a second on average with bursts of ``burst``. ``reserve`` books the next command and
    says how long to wait before running it, or refuses (None) when that wait would pass ``allowed``."""

    rate: float
    burst: float
    tokens: float = 0.0
    stamp: float = 0.0

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def reserve(self, now: float, allowed: float = float("inf")) -> float | None:
        if self.stamp:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        delay = (1.0 - self.tokens) / self.rate if self.tokens < 1.0 else 0.0
        if delay > allowed:
            return None
        self.tokens -= 1.0
        return delay


@dataclass(eq=False, slots=True)
class Session:
    """The state of one client connection (compared by identity)."""

    writer: asyncio.StreamWriter | None
    host: str
    connected: float  # Unix seconds
    bucket: TokenBucket
    reader: fs.ServerLineReader
    phase: Phase = Phase.LOGIN
    account: Account | None = None
    clip: bool = False
    client: str | None = None
    login_time: int = 0
    last_input: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.monotonic)  # the login phase is timed from here
    toggles: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_TOGGLES))
    settings: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    away: str | None = None
    watching: str | None = None
    table: Table | None = None
    seat: int = -1
    invitation: tuple[str, int | None] | None = None  # (invitee, length; None = resume)
    gagged: set[str] = field(default_factory=set)
    blinded: set[str] = field(default_factory=set)
    pending_name: str | None = None  # the name given at login: (telnet) or to 'name' (guest)
    pending_password: str | None = None
    failed_logins: int = 0
    dropped_commands: int = 0
    last_slow_down: float = 0.0
    close_reason: str = "drops connection"
    output_bytes: int = 0
    outbox: set[Session] | None = None  # where a session with queued output registers (the server's)
    _queued: list[bytes] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<Session {self.name or '-'} {self.host} {self.phase.value}>"

    @property
    def name(self) -> str | None:
        return self.account.name if self.account else None

    @property
    def online(self) -> bool:
        return self.phase is Phase.ONLINE

    @property
    def playing(self) -> bool:
        return self.table is not None

    @property
    def opponent(self) -> str | None:
        if self.table is None:
            return None
        return self.table.names[1 - self.seat]

    def send_raw(self, data: bytes) -> None:
        """Queue bytes until ``flush`` (one write per command handled, not one per line)."""
        if self.writer is None or self.phase is Phase.CLOSED:
            return
        self._queued.append(data)
        if self.outbox is not None:
            self.outbox.add(self)
        else:
            self.flush()

    def flush(self) -> None:
        """Write what is queued; a client whose buffer passes MAX_OUTPUT_BUFFER is cut off (it stopped reading)."""
        writer = self.writer
        data = b"".join(self._queued)
        self._queued.clear()
        if writer is None or not data or writer.is_closing():
            return
        self.output_bytes += len(data)
        writer.write(data)
        if writer.transport.get_write_buffer_size() > MAX_OUTPUT_BUFFER:
            self.close_reason = "drops connection"
            writer.transport.abort()

    def send(self, *lines: str) -> None:
        if lines:
            self.send_raw(fs.line_bytes(lines))

    def prompt(self, text: str) -> None:
        """A prompt without a line end (``login: ``, ``> ``, password prompts)."""
        self.send_raw(text.encode("utf-8"))
