"""The embedded FIBS-compatible server: asyncio streams, one task per connection, all state in one event loop.

A person plays with ``telnet 127.0.0.1 4321`` or any FIBS client; the daemon's bot logs in like anyone else.
Every handler runs to completion without awaiting (bar the password hash, which runs in a thread), so the
lobby and the tables never see two commands interleaved. A connection's errors stay in its own task: the
session is dropped, its match saved, and everyone else goes on.

Safety: a client acts only through its own session (its seat, its watch); lines are bounded
(``max_line``), commands are rate limited (``max_commands_per_second``, a token bucket: commands past the rate
wait, and are dropped past a lag of MAX_COMMAND_LAG), password checks are throttled per account and per
address without ever making the owner wait behind the guessers (``bot.server.logins``), the login phase times
out from the connection's start, idle connections time out, and a client that does not read its output is
dropped once its queue passes a bound. Output is queued per session and written once per command handled.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime
import itertools
import resource
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

import structlog

from bot.config import EmbeddedServerConfig
from bot.logs import Repeats
from bot.server import ratings
from bot.server.logins import LoginGate
from bot.server.session import DEFAULT_SETTINGS, DEFAULT_TOGGLES, Phase, Session, TokenBucket
from bot.server.store import (
    SCRYPT_N,
    Account,
    AccountExistsError,
    FinishedRow,
    SavedRow,
    Store,
    StoreError,
    hash_password,
    verify_password,
)
from bot.server.table import (
    BoardAt,
    SavedMatchError,
    Table,
    TableRefusal,
    oldmoves_text,
    record_from_json,
    record_to_json,
)
from engine.dice import DiceSource, MersenneDice
from engine.record import MatchRecord
from protocols.fibs import server as fs
from protocols.fibs.server import Msg, render

log = structlog.get_logger("gammond.server")  # lazy: bot.logs.setup configures it at start

MatchFinished = Callable[[MatchRecord], Awaitable[None]]
MIN_PASSWORD = 4
MAX_LOGIN_FAILURES = 5  # a connection is closed after this many failed logins
LOGIN_PHASE_TIMEOUT = 120.0  # seconds from the connection's start to a login, whatever it sends
ARCHIVE_RETRY_INITIAL = 5.0  # seconds before a failed archive write is tried again (doubling)
ARCHIVE_RETRY_MAX = 300.0
ACCEPT_RATE = 200.0  # connections accepted per second at most (bursts of ACCEPT_BURST)
ACCEPT_BURST = 100.0
LISTEN_BACKLOG = 1024  # connections the kernel holds for us meanwhile
TOO_MANY_CONNECTIONS = "** Too many connections from your address or to this server; try again later."
MAX_SAVED = 8  # "If you have 8 or more unfinished games, you will be unable to start new games."
SYSTEM = "System"  # the sender of the server's own announcements
MAX_TEXT = 400  # characters of chat text kept (the line limit bounds it anyway)
MAX_COMMAND_LAG = 2.0  # seconds a rate-limited command may wait before it is dropped


def _default_dice() -> DiceSource:
    return MersenneDice(secrets.randbits(32))


FAILURE_MEMORY = 600.0  # seconds after which failed logins are forgotten

# The chat line of each ``_chat`` kind, to a CLIP client and to a person at a terminal.
_CLIP_CHAT: dict[str, Msg] = {
    "says": Msg.CLIP_SAYS,
    "shouts": Msg.CLIP_SHOUTS,
    "whispers": Msg.CLIP_WHISPERS,
    "kibitzes": Msg.CLIP_KIBITZES,
}
_TEXT_CHAT: dict[str, Msg] = {
    "says": Msg.TEXT_SAYS,
    "shouts": Msg.TEXT_SHOUTS,
    "whispers": Msg.TEXT_WHISPERS,
    "kibitzes": Msg.TEXT_KIBITZES,
}
# What the opponent of a player whose match was saved reads, by the reason; any other is a dropped connection.
_SAVED_BECAUSE: dict[str, Msg] = {
    "left": Msg.PLAYER_LEFT,
    "logs out": Msg.LOGS_OUT_SAVED,
    "timed out": Msg.TIMED_OUT_SAVED,
    "closed old connection": Msg.CLOSED_OLD_CONNECTION_SAVED,
    "shutdown": Msg.YOUR_GAME_SAVED,
}


class FibsServer:
    """The embedded FIBS (CLIP) server. ``await start()``, then ``port`` is the port bound (0 asks the system);
    ``await close()`` saves every running match and disconnects everyone."""

    def __init__(
        self,
        store: Store | str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 4321,
        name: str = "gammond",
        idle_timeout: float = 3600.0,
        max_line: int = 1024,
        max_commands_per_second: float = 20.0,
        on_match_finished: MatchFinished | None = None,
        dice_factory: Callable[[], DiceSource] = _default_dice,
        scrypt_n: int = SCRYPT_N,
        login_delay: float = 1.0,
        clock: Callable[[], float] = time.time,
        max_connections: int = 1000,
        max_connections_per_address: int = 64,
        login_timeout: float = LOGIN_PHASE_TIMEOUT,
    ) -> None:
        self._own_store = not isinstance(store, Store)
        self.store = store if isinstance(store, Store) else Store(store)
        self.host = host
        self.port = port
        self.name = name
        self.idle_timeout = idle_timeout
        self.max_line = max_line
        self.rate = max_commands_per_second
        self.on_match_finished = on_match_finished
        self.dice_factory = dice_factory
        self.scrypt_n = scrypt_n
        self.login_delay = login_delay
        self.clock = clock
        self.max_connections = max_connections
        self.max_connections_per_address = max_connections_per_address
        self.login_timeout = login_timeout
        self._by_host: dict[str, dict[Session, None]] = {}  # socket sessions per address, oldest first
        self._connections = 0
        self.refused = 0  # connections refused or displaced by the caps
        self._repeats = Repeats(60.0)  # floods log a line a minute with their count, not a line each
        self.pending_archives: dict[str, int] = {}  # finished matches whose archive write failed: tries
        self.archive_retry = ARCHIVE_RETRY_INITIAL
        self.online: dict[str, Session] = {}
        self.sessions: set[Session] = set()
        self.tables: dict[str, Table] = {}
        self.last_tables: dict[frozenset[str], Table] = {}
        self._outbox: set[Session] = set()  # sessions with output queued: written once per command handled
        self.table_listeners: list[Callable[[Table], None]] = []  # in-process observers (bot.web)
        # password checks: <= 1 per login_delay per account after a failure, the owner first (bot.server.logins)
        self.logins = LoginGate(spacing=login_delay, base=login_delay, memory=FAILURE_MEMORY)
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self.errors = 0  # connection tasks that ended in an unexpected exception
        self.handling_times: collections.deque[float] = collections.deque(
            maxlen=100_000
        )  # seconds a command took

    def __repr__(self) -> str:
        return f"<FibsServer {self.name} {self.host}:{self.port} online={len(self.online)}>"

    @classmethod
    def from_config(
        cls, config: EmbeddedServerConfig, state_dir: Path, on_match_finished: MatchFinished | None = None
    ) -> FibsServer:
        """From ``bot.config.EmbeddedServerConfig`` and the daemon's state folder (``server.sqlite3`` in it)."""
        return cls(
            Path(state_dir) / "server.sqlite3",
            host=config.host,
            port=config.port,
            name=config.name,
            idle_timeout=config.idle_timeout,
            max_line=config.max_line,
            max_commands_per_second=config.max_commands_per_second,
            on_match_finished=on_match_finished,
            max_connections=config.max_connections,
            max_connections_per_address=config.max_connections_per_address,
            login_timeout=config.login_timeout,
        )

    # -- life cycle -----------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._fit_file_limit()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._listener = socket.create_server((self.host, self.port), family=family, backlog=LISTEN_BACKLOG)
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._accepting = asyncio.ensure_future(self._accept(self._listener))
        self._spawn(self._deliver_unarchived())

    async def _accept(self, listener: socket.socket) -> None:
        """Accept connections one at a time, at most ACCEPT_RATE a second (bursts of ACCEPT_BURST): past it the
        kernel's queue holds them, then refuses new ones. A flood of connections (20,000 in a minute) then
        costs the loop a bounded share, and the players already in are served on between two accepts."""
        loop = asyncio.get_running_loop()
        bucket = TokenBucket(ACCEPT_RATE, ACCEPT_BURST)
        while True:
            try:
                conn, _ = await loop.sock_accept(listener)
            except OSError as exc:  # EMFILE, ENFILE, ENOBUFS ... : a line a minute, and a pause
                repeated = self._repeats.hit(("accept", exc.errno))
                if repeated is not None:
                    log.error("accept_failed", error=f"{type(exc).__name__}: {exc}", repeated=repeated)
                await asyncio.sleep(0.5)
                continue
            try:
                conn.setblocking(False)
                reader, writer = await asyncio.open_connection(sock=conn, limit=1 << 16)
            except OSError:
                conn.close()
                continue
            self._spawn(self._connection(reader, writer))
            delay = bucket.reserve(time.monotonic())
            if delay:
                await asyncio.sleep(delay)

    async def close(self) -> None:
        """Stop listening, save every running match, close every connection, wait for their tasks."""
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        if self._listener is not None:
            self._listener.close()
        for session in list(self.sessions):
            if session.table is not None:
                self._leave(session, "shutdown")
            if session.writer is not None:
                session.send(fs.goodbye(self.name))
                session.flush()
                session.phase = Phase.CLOSED
                session.writer.close()
        self._flush_output()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5.0)
        for task in list(self._tasks):
            task.cancel()
        if self._own_store:
            self.store.close()

    async def __aenter__(self) -> FibsServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def ensure_account(self, name: str, password: str, *, bot: bool = False) -> Account:
        """Create ``name`` (or set its password and bot flag): how the daemon seats its bot accounts."""
        problem = fs.check_new_name(name)
        if problem:
            raise StoreError(problem)
        hashed = await asyncio.to_thread(hash_password, password, self.scrypt_n)
        account = self.store.account(name)
        if account is None:
            return self.store.create_account(name, hashed, bot=bot, now=self.clock())
        account.password, account.bot = hashed, bot
        self.store.save_account(account)
        return account

    def announce_shutdown(self, grace: float) -> None:
        """Shout to everyone online (as FIBS's operators did) that the server is going down and that running
        matches will be saved: sent when the daemon gets its first SIGTERM, at the start of the grace period."""
        text = (
            f"The server is shutting down in {grace:.0f} seconds. Running matches will be saved: "
            "resume them with 'invite' when it is back."
        )
        for session in list(self.online.values()):
            session.send(
                render(Msg.CLIP_SHOUTS if session.clip else Msg.TEXT_SHOUTS, sender=SYSTEM, text=text)
            )
        self._flush_output()
        log.info("shutdown_announced", grace=grace, online=len(self.online))

    def match_id_between(self, a: str, b: str) -> str | None:
        """The ID of the running (or else saved) match of ``a`` and ``b``: the in-process bot keys its own record
        of the match by it, so that one match has one ID in the logs, the stores and the archive."""
        pair = {a, b}
        for table in self.tables.values():
            if set(table.names) == pair:
                return table.id
        saved = self.store.saved_match_between(a, b)
        return None if saved is None else saved.id

    def _flush_output(self) -> None:
        """Write every session's queued output (called whenever a handler is done or about to wait)."""
        while self._outbox:
            self._outbox.pop().flush()

    # -- in-process sessions (the web bridge, bot.web) -------------------------------------------------------

    def attach(self, session: Session) -> None:
        """Add a session with no socket: its ``writer`` is any object with StreamWriter's ``write``, ``close``,
        ``is_closing`` and ``transport.get_write_buffer_size``/``abort``. It starts at the login prompt."""
        self.sessions.add(session)

    async def feed(self, session: Session, line: str) -> None:
        """One line from an attached session's client, handled as if its connection had read it."""
        if session not in self.sessions or session.phase is Phase.CLOSED:
            return
        arrived = session.last_input = time.monotonic()
        try:
            await self._line(session, line[: self.max_line], arrived)
        finally:
            self._flush_output()

    def enter(self, session: Session, account: Account, *, client: str | None) -> None:
        """Log an attached session in its login phase in as ``account``, whose identity the caller checked
        (the web page's saved login): as a CLIP login, without a password."""
        if session in self.sessions and session.phase is Phase.LOGIN:
            try:
                self._enter(session, account, clip=True, client=client)
            finally:
                self._flush_output()

    def detach(self, session: Session, reason: str = "drops connection") -> None:
        """An attached session's client has gone: its match is saved and the others are told."""
        session.close_reason = reason
        self._disconnect(session)
        self._flush_output()

    def _tell_listeners(self, table: Table) -> None:
        """After every change of a table (and when it leaves: finished or saved), each listener is called."""
        for listener in list(self.table_listeners):
            try:
                listener(table)
            except Exception:  # an observer's bug must not break the match it observes
                log.exception("table listener %r failed on %s", listener, table.id)

    # -- connections ----------------------------------------------------------------------------------------

    def _fit_file_limit(self) -> None:
        """Keep max_connections below the process's file limit (raised to its hard limit if need be), with
        room for the store, the archive, the web port and the bots: past it accept() fails on EMFILE and so
        does every file the daemon opens, an archive write included."""
        reserve = 256
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            wanted = 2 * self.max_connections + 2 * reserve  # the web port takes as many
            if soft != resource.RLIM_INFINITY and soft < wanted:
                raised = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
        except (ValueError, OSError):
            return
        if soft != resource.RLIM_INFINITY and 2 * self.max_connections > soft - 2 * reserve:
            fitted = max(16, (soft - 2 * reserve) // 2)
            log.warning(
                "max_connections lowered to fit the file limit",
                configured=self.max_connections,
                used=fitted,
                file_limit=soft,
            )
            self.max_connections = fitted

    def _admit(self, host: str) -> bool:
        """Room for a new connection from ``host``: when its address has max_connections_per_address
        connections at the login prompt, its oldest one is closed to make room; when the server is full, the
        oldest one at the login prompt of the fullest address. Logged-in connections are never displaced and do
        not count per address (the bots and local players share 127.0.0.1); a newcomer finding none to
        displace is refused."""
        waiting = [s for s in self._by_host.get(host, {}) if not s.online]
        if len(waiting) >= self.max_connections_per_address:
            self._displace(waiting[0], "address full")
        if self._connections >= self.max_connections:
            victim = None
            for sessions in sorted(self._by_host.values(), key=len, reverse=True):
                victim = next((s for s in sessions if not s.online), None)
                if victim is not None:
                    break
            if victim is None:
                return self._refuse(host, "server full")
            self._displace(victim, "server full")
        return True

    def _refuse(self, host: str, reason: str) -> bool:
        self.refused += 1
        repeated = self._repeats.hit(("refused", reason))
        if repeated is not None:
            log.warning("connection_refused", reason=reason, host=host, repeated=repeated)
        return False

    def _displace(self, victim: Session, reason: str) -> None:
        self.refused += 1
        repeated = self._repeats.hit(("displaced", reason))
        if repeated is not None:
            log.warning("login_connection_displaced", reason=reason, host=victim.host, repeated=repeated)
        victim.send(TOO_MANY_CONNECTIONS)
        victim.flush()
        self._close(victim, "drops connection")
        self._forget_connection(victim)
        self.logins.wake()  # a displaced attempt waiting for its password check leaves the line

    def _forget_connection(self, session: Session) -> None:
        sessions = self._by_host.get(session.host)
        if sessions is not None and session in sessions:
            del sessions[session]
            self._connections -= 1
            if not sessions:
                del self._by_host[session.host]

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        peer = writer.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        if not self._admit(host):
            with contextlib.suppress(Exception):
                writer.write(fs.line_bytes([TOO_MANY_CONNECTIONS]))
                writer.close()
            return
        session = Session(
            writer=writer,
            host=host,
            connected=self.clock(),
            bucket=TokenBucket(self.rate, max(2.0, 2 * self.rate)),
            reader=fs.ServerLineReader(self.max_line),
            outbox=self._outbox,
        )
        self.sessions.add(session)
        self._by_host.setdefault(host, {})[session] = None
        self._connections += 1
        try:
            session.send(*fs.banner(self.name))
            session.prompt(fs.LOGIN_PROMPT)
            self._flush_output()
            await self._serve(session, reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            session.close_reason = "drops connection"
        except asyncio.CancelledError:
            session.close_reason = "drops connection"
            raise
        except Exception:
            self.errors += 1
            session.close_reason = "drops connection"
            log.exception("connection_failed", session=repr(session))
        finally:
            self._forget_connection(session)
            self._disconnect(session)
            self._flush_output()
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve(
        self, session: Session, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while session.phase is not Phase.CLOSED:
            if session.online:
                wait = self.idle_timeout - (time.monotonic() - session.last_input)
            else:  # from the connection's start: a byte now and then (slowloris) does not extend it
                wait = min(self.idle_timeout, self.login_timeout) - (time.monotonic() - session.started)
            try:
                data = await asyncio.wait_for(reader.read(4096), timeout=max(0.0, wait))
            except TimeoutError:
                session.send(render(Msg.CONNECTION_TIMED_OUT))
                session.flush()
                session.close_reason = "timed out"
                return
            if not data:
                session.close_reason = "drops connection"
                return
            arrived = session.last_input = time.monotonic()
            for item in session.reader.feed(data):
                if session.phase is Phase.CLOSED:
                    break
                if isinstance(item, fs.OverlongLine):
                    session.send(render(Msg.LINE_TOO_LONG, limit=self.max_line))
                    continue
                await self._line(session, item, arrived)
                self._flush_output()
            self._flush_output()
            if session.phase is not Phase.CLOSED:
                await writer.drain()

    def _disconnect(self, session: Session) -> None:
        """Forget a session whose connection ended: save its match, end its watches, tell the others."""
        if session not in self.sessions:
            return
        self.sessions.discard(session)
        was_online = session.online
        session.phase = Phase.CLOSED
        name = session.name
        if session.table is not None:
            self._leave(session, session.close_reason)
        if not was_online or name is None or self.online.get(name) is not session:
            return
        del self.online[name]
        if session.watching:
            watched = self.online.get(session.watching)
            if watched is not None:
                self._to(watched, render(Msg.STOPS_WATCHING_YOU, name=name))
        for other in self.online.values():
            if other.watching == name:
                other.watching = None
                self._to(other, render(Msg.WATCHED_LOGS_OUT, name=name))
                self._who_update(other)
        how = "logs out" if session.close_reason == "logs out" else "drops connection"
        for other in self.online.values():
            if other.toggles["notify"]:
                other.send(fs.clip_logout(name, how) if other.clip else fs.text_logs_out(name, how))
        self._save_account(session)

    # -- input ----------------------------------------------------------------------------------------------

    async def _line(self, session: Session, line: str, arrived: float) -> None:
        if session.phase is Phase.ONLINE:
            # Commands past the rate wait their turn (reading stops meanwhile, so TCP pushes back); one that
            # would run more than MAX_COMMAND_LAG after it arrived is dropped, with a notice at most once a second.
            now = time.monotonic()
            delay = session.bucket.reserve(now, MAX_COMMAND_LAG - (now - arrived))
            if delay is None:
                session.dropped_commands += 1
                if now - session.last_slow_down >= 1.0:
                    session.last_slow_down = now
                    session.send(render(Msg.SLOW_DOWN))
                return
            if delay > 0:
                self._flush_output()
                await asyncio.sleep(delay)
                if session.phase is not Phase.ONLINE:
                    return
            started = time.perf_counter()
            self._command(session, line)
            self.handling_times.append(time.perf_counter() - started)
            if session.phase is Phase.ONLINE and not session.clip:
                session.prompt(fs.PROMPT)
            return
        await self._login_phase(session, line)

    # -- login and registration -----------------------------------------------------------------------------

    async def _login_phase(self, session: Session, line: str) -> None:
        phase = session.phase
        if phase is Phase.LOGIN:
            text = line.strip()
            word = text.split(None, 1)[0].lower() if text else ""
            if not text:
                session.prompt(fs.LOGIN_PROMPT)
            elif word == "login":
                try:
                    command = fs.parse_command(text)
                except fs.CommandSyntaxError:
                    await self._login_failed(session)
                    return
                assert isinstance(command, fs.Login)
                await self._try_login(
                    session, command.name, command.password, clip=True, client=command.client
                )
            elif word == "guest":
                session.phase = Phase.GUEST
                session.send(*fs.guest_welcome(self.name))
                session.prompt(fs.PROMPT)
            elif word == "bye":
                self._close(session, "logs out")
            elif len(text.split()) == 1 and len(text) <= fs.MAX_NAME:
                session.pending_name = text
                session.phase = Phase.PASSWORD
                session.send_raw(fs.ECHO_OFF)
                session.prompt(fs.PASSWORD_PROMPT)
            else:
                await self._login_failed(session)
        elif phase is Phase.PASSWORD:
            session.send_raw(fs.ECHO_ON + fs.CRLF)
            name, session.pending_name = session.pending_name or "", None
            session.phase = Phase.LOGIN
            await self._try_login(session, name, line, clip=False, client=None)
        elif phase is Phase.GUEST:
            await self._guest(session, line)
        elif phase is Phase.GUEST_PASSWORD:
            session.send_raw(fs.ECHO_ON + fs.CRLF)
            if not line:
                session.pending_name = None
                session.phase = Phase.GUEST
                session.prompt(fs.PROMPT)
            elif len(line) < MIN_PASSWORD:
                session.send(fs.password_too_short(MIN_PASSWORD))
                session.send_raw(fs.ECHO_OFF)
                session.prompt(fs.GIVE_PASSWORD)
            else:
                session.pending_password = line
                session.phase = Phase.GUEST_RETYPE
                session.send_raw(fs.ECHO_OFF)
                session.prompt(fs.RETYPE_PASSWORD)
        elif phase is Phase.GUEST_RETYPE:
            session.send_raw(fs.ECHO_ON + fs.CRLF)
            await self._register(session, line)

    async def _guest(self, session: Session, line: str) -> None:
        try:
            command = fs.parse_command(line)
        except fs.CommandSyntaxError as exc:
            session.send(exc.reply)
            session.prompt(fs.PROMPT)
            return
        if isinstance(command, fs.Bye):
            self._close(session, "logs out")
            return
        if isinstance(command, fs.Name):
            problem = fs.check_new_name(command.name)
            if problem is None and self.store.name_taken(command.name):
                problem = render(Msg.NAME_TAKEN, name=command.name)
            if problem:
                session.send(problem)
                session.prompt(fs.PROMPT)
                return
            session.pending_name = command.name
            session.phase = Phase.GUEST_PASSWORD
            session.send(*fs.your_name_will_be(command.name))
            session.send_raw(fs.ECHO_OFF)
            session.prompt(fs.GIVE_PASSWORD)
            return
        if not isinstance(command, fs.Empty):
            session.send(render(Msg.GUEST_ONLY_NAME))
        session.prompt(fs.PROMPT)

    async def _register(self, session: Session, retyped: str) -> None:
        name, password = session.pending_name or "", session.pending_password or ""
        session.pending_password = None
        if retyped != password:
            session.send(render(Msg.PASSWORDS_DIFFER))
            session.phase = Phase.GUEST_PASSWORD
            session.send_raw(fs.ECHO_OFF)
            session.prompt(fs.GIVE_PASSWORD)
            return
        self._flush_output()
        hashed = await asyncio.to_thread(hash_password, password, self.scrypt_n)
        if session.phase is Phase.CLOSED:
            return
        try:
            account = self.store.create_account(name, hashed, now=self.clock())
            account.settings["boardstyle"] = (
                "1"  # registered at a terminal: a person, who wants a drawn board
            )
        except AccountExistsError:
            session.send(render(Msg.NAME_TAKEN, name=name))
            session.phase = Phase.GUEST
            session.prompt(fs.PROMPT)
            return
        session.pending_name = None
        session.send(*fs.registered())
        log.info("registered", user=name, host=session.host)
        self._enter(session, account, clip=False, client=None)
        session.prompt(fs.PROMPT)

    async def _try_login(
        self, session: Session, name: str, password: str, *, clip: bool, client: str | None
    ) -> None:
        account = self.store.account(name) if fs.NAME_PATTERN.fullmatch(name) else None
        key = name[: fs.MAX_NAME].casefold()
        # the address the account last logged in from is trusted: its attempts pass before any guesser's
        trusted = account is not None and bool(account.last_host) and account.last_host == session.host
        self._flush_output()
        deadline = session.started + self.login_timeout
        alive = lambda: session.phase is not Phase.CLOSED  # noqa: E731
        if not await self.logins.turn(key, session.host, trusted=trusted, deadline=deadline, alive=alive):
            self._login_timed_out(session)
            return
        if session.phase is Phase.CLOSED:
            self.logins.release(key)
            return
        ok = False
        try:
            if account is not None:  # the session is open: checked just above, nothing awaited since
                ok = await asyncio.to_thread(verify_password, password, account.password)
        except StoreError:
            ok = False
        finally:
            delay = self.logins.done(key, session.host, ok)
        if session.phase is Phase.CLOSED:
            return
        if not ok or account is None:
            await self._login_failed(session, delay)
            return
        fresh = self.store.account(account.name) or account  # ratings may have changed during the hash
        self._enter(session, fresh, clip=clip, client=client)
        if not clip:
            session.prompt(fs.PROMPT)

    def _login_timed_out(self, session: Session) -> None:
        """The login phase lasted LOGIN_PHASE_TIMEOUT from the connection's start (bytes do not extend it)."""
        if session.phase is Phase.CLOSED:
            return
        session.send(render(Msg.CONNECTION_TIMED_OUT))
        self._close(session, "timed out")

    async def _login_failed(self, session: Session, delay: float | None = None) -> None:
        """Answer after the address's cost (it doubles per failure of the address, up to the cap, whatever the
        connection: ``bot.server.logins``); close the connection after a few failures. ``delay`` None: a login
        refused without a password check, which costs the address all the same."""
        session.failed_logins += 1
        if delay is None:
            delay = self.logins.failed(session.host)
        self._flush_output()
        await asyncio.sleep(delay)
        if session.phase is Phase.CLOSED:
            return
        session.send(render(Msg.LOGIN_INCORRECT))
        if session.failed_logins >= MAX_LOGIN_FAILURES:
            self._close(session, "drops connection")
            return
        session.phase = Phase.LOGIN
        session.prompt(fs.LOGIN_PROMPT)

    def _enter(self, session: Session, account: Account, *, clip: bool, client: str | None) -> None:
        """The login succeeded: the CLIP welcome sequence, stored messages, the who burst, the others told."""
        name = account.name
        old = self.online.get(name)
        if old is not None and old is not session:
            session.send(render(Msg.ALREADY_LOGGED_IN))
            old.close_reason = "closed old connection"
            old.flush()
            self._disconnect(old)
            if old.writer is not None:
                old.writer.close()
        session.account = account
        session.clip = clip
        session.client = client[:20] if client else None
        session.phase = Phase.ONLINE
        session.login_time = int(self.clock())
        session.toggles = {
            **DEFAULT_TOGGLES,
            **{k: v for k, v in account.toggles.items() if k in DEFAULT_TOGGLES},
        }
        session.settings = {
            **DEFAULT_SETTINGS,
            **{k: v for k, v in account.settings.items() if k in DEFAULT_SETTINGS},
        }
        last_login, last_host = account.last_login, account.last_host
        account.last_login, account.last_host = session.login_time, session.host
        self.online[name] = session
        self._save_account(session)
        if clip:
            session.send(
                fs.clip_welcome(name, last_login or session.login_time, last_host or session.host),
                self._own_info(session),
                render(Msg.CLIP_MOTD_START),
                *fs.motd(self.name),
                render(Msg.CLIP_MOTD_END),
            )
        else:
            session.send(*fs.motd(self.name))
        for sender, when, text in self.store.take_messages(name):
            self._to(
                session,
                fs.clip_message(sender, when, text)
                if clip
                else render(Msg.TEXT_MESSAGE, sender=sender, when=_time_text(when), text=text),
            )
        if clip:
            session.send(*(self._who_line(s) for s in self._sorted_online(session)), render(Msg.CLIP_WHO_END))
        for other in self.online.values():
            if other is session:
                continue
            if other.toggles["notify"]:
                self._to(other, render(Msg.CLIP_LOGIN if other.clip else Msg.TEXT_LOGS_IN, name=name))
            if other.clip:
                other.send(self._who_line(session), render(Msg.CLIP_WHO_END))
        log.info("login", user=name, host=session.host, client=client or "telnet")

    def _close(self, session: Session, reason: str) -> None:
        session.close_reason = reason
        if session.online:
            session.send(fs.goodbye(self.name))
        session.flush()
        self._disconnect(session)
        if session.writer is not None:
            session.writer.close()

    # -- output helpers -------------------------------------------------------------------------------------

    def _to(self, session: Session, *lines: str) -> None:
        session.send(*lines)

    def _own_info(self, session: Session) -> str:
        account = session.account
        assert account is not None
        return fs.clip_own_info(
            account.name,
            session.toggles,
            away=session.away is not None,
            experience=account.experience,
            rating=account.rating,
            redoubles=session.settings["redoubles"],
            timezone=session.settings["timezone"],
        )

    def _who_line(self, s: Session) -> str:
        account = s.account
        assert account is not None
        return fs.clip_who_info(
            account.name,
            opponent=s.opponent,
            watching=s.watching,
            ready=s.toggles["ready"],
            away=s.away is not None,
            rating=account.rating,
            experience=account.experience,
            idle=int(time.monotonic() - s.last_input),
            login=s.login_time,
            hostname=s.host,
            client=s.client,
        )

    def _who_update(self, session: Session) -> None:
        """CLIP 5 (and 6) about ``session`` to every CLIP user: its state changed."""
        if not session.online:
            return
        line = self._who_line(session)
        for other in self.online.values():
            if other.clip:
                other.send(line, render(Msg.CLIP_WHO_END))

    def _sorted_online(self, viewer: Session) -> list[Session]:
        sessions = list(self.online.values())
        key = viewer.settings["sortwho"]
        if key == "name":
            sessions.sort(key=lambda s: (s.name or "").lower())
        elif key in ("rating", "rrating"):
            sessions.sort(key=lambda s: s.account.rating if s.account else 0.0, reverse=key == "rating")
        else:
            sessions.sort(key=lambda s: s.login_time)
        return sessions

    def _report(self, line: str, exclude: Iterable[Session] = ()) -> None:
        skip = set(exclude)
        for other in self.online.values():
            if other not in skip and other.toggles["report"]:
                other.send(line)

    def _chat(self, session: Session, kind: str, sender: str, text: str) -> None:
        """A chat line in CLIP or telnet form: kind is says, shouts, whispers or kibitzes."""
        msg = (_CLIP_CHAT if session.clip else _TEXT_CHAT)[kind]
        session.send(render(msg, sender=sender, text=text))

    def _save_account(self, session: Session) -> None:
        account = session.account
        if account is None:
            return
        account.toggles = {k: v for k, v in session.toggles.items() if DEFAULT_TOGGLES.get(k) != v}
        account.settings = {k: v for k, v in session.settings.items() if DEFAULT_SETTINGS.get(k) != v}
        try:
            self.store.save_account(account)
        except Exception:  # the store failing must not take the connection's cleanup down with it
            log.exception("account_save_failed", user=account.name)

    # -- commands -------------------------------------------------------------------------------------------

    def _command(self, session: Session, line: str) -> None:
        try:
            command = fs.parse_command(line[: self.max_line])
        except fs.CommandSyntaxError as exc:
            session.send(exc.reply)
            return
        handler = self._handlers.get(type(command))
        if handler is None:
            word = command.word if isinstance(command, fs.UnknownCommand) else line.split()[0]
            session.send(render(Msg.UNKNOWN_COMMAND, word=word))
        else:
            handler(self, session, command)
        if session.away is not None and not isinstance(command, fs.Back | fs.Away | fs.Empty):
            session.send(render(Msg.YOU_ARE_AWAY))

    def _cmd_empty(self, session: Session, command: fs.Command) -> None:
        pass

    def _cmd_bye(self, session: Session, command: fs.Command) -> None:
        self._close(session, "logs out")

    def _cmd_help(self, session: Session, command: fs.Help) -> None:
        session.send(*fs.help_lines(command.topic))

    def _cmd_time(self, session: Session, command: fs.Command) -> None:
        session.send(render(Msg.TIME_LINE, text=_time_text(self.clock())))

    # who, toggles, settings

    def _cmd_who(self, session: Session, command: fs.Who) -> None:
        sessions = self._sorted_online(session)
        if command.name is not None:
            sessions = [s for s in sessions if s.name == command.name]
        if session.clip or command.raw:  # rawwho is the CLIP block in either mode
            session.send(*(self._who_line(s) for s in sessions))
            if command.raw:
                session.send(render(Msg.CLIP_WHO_END))
            return
        for s in sessions:
            account = s.account
            assert account is not None
            name = account.name + (" (bot)" if account.bot else "")
            session.send(
                fs.text_who_line(
                    name,
                    s.opponent,
                    s.watching,
                    account.rating,
                    account.experience,
                    s.toggles["ready"],
                    s.away is not None,
                )
            )

    def _cmd_toggle(self, session: Session, command: fs.Toggle) -> None:
        if not command.names:
            session.send(*fs.toggles_list(session.toggles))
            return
        changed_ready = False
        for name in command.names:
            if name not in session.toggles:
                session.send(render(Msg.UNKNOWN_TOGGLE, name=name))
                continue
            session.toggles[name] = not session.toggles[name]
            session.send(fs.toggle_reply(name, session.toggles[name]))
            changed_ready |= name == "ready"
        self._save_account(session)
        if changed_ready:
            self._who_update(session)

    def _cmd_set(self, session: Session, command: fs.Set) -> None:
        name, value = command.name, command.value
        if name is None:
            session.send(*fs.settings_list(session.settings))
            return
        if name not in session.settings:
            session.send(render(Msg.UNKNOWN_SETTING, name=name))
            return
        if value is None:
            session.send(render(Msg.SETTING_VALUE, name=name, value=session.settings[name]))
            return
        checked = _check_setting(name, value)
        if isinstance(checked, tuple):
            session.send(render(Msg.BAD_SETTING_VALUE, name=name, allowed=checked[0]))
            return
        session.settings[name] = checked
        self._save_account(session)
        session.send(render(Msg.SETTING_SET, name=name, value=checked))

    def _cmd_away(self, session: Session, command: fs.Away) -> None:
        if not command.text:
            entries = [(s.name or "", s.away or "") for s in self.online.values() if s.away is not None]
            session.send(*fs.away_list(entries))
            return
        session.away = command.text[:MAX_TEXT]
        session.send(render(Msg.AWAY_SET, message=session.away))
        self._who_update(session)

    def _cmd_back(self, session: Session, command: fs.Command) -> None:
        session.away = None
        session.send(render(Msg.WELCOME_BACK))
        self._who_update(session)

    def _cmd_gag(self, session: Session, command: fs.Gag) -> None:
        on = command.name not in session.gagged
        (session.gagged.add if on else session.gagged.discard)(command.name)
        session.send(fs.gagged(command.name, on))

    def _cmd_blind(self, session: Session, command: fs.Blind) -> None:
        name, me = command.name, session.name or ""
        on = name not in session.blinded
        (session.blinded.add if on else session.blinded.discard)(name)
        session.send(fs.blinded(name, on))
        watcher = self.online.get(name)
        if on and watcher is not None and watcher.watching == me:
            watcher.watching = None
            watcher.send(render(Msg.BANS_YOU, name=me))
            self._who_update(watcher)

    # chat

    def _cmd_tell(self, session: Session, command: fs.Tell) -> None:
        me = session.name or ""
        target = self.online.get(command.name)
        if target is None:
            session.send(render(Msg.NO_ONE_CALLED, name=command.name))
            return
        if me in target.gagged:
            session.send(render(Msg.WONT_LISTEN, name=command.name))
            return
        text = command.text[:MAX_TEXT]
        self._chat(target, "says", me, text)
        if session.clip:
            session.send(render(Msg.CLIP_YOU_SAY, recipient=target.name or "", text=text))
        if target.away is not None:
            session.send(render(Msg.PLAYER_AWAY, name=command.name, message=target.away))

    def _cmd_say(self, session: Session, command: fs.Say) -> None:
        if session.table is None:
            session.send(render(Msg.SAY_OUTSIDE_GAME))
            return
        opponent = self.online.get(session.opponent or "")
        text = command.text[:MAX_TEXT]
        if opponent is not None and (session.name or "") not in opponent.gagged:
            self._chat(opponent, "says", session.name or "", text)
        if session.clip:
            session.send(render(Msg.CLIP_YOU_SAY, recipient=session.opponent or "", text=text))

    def _game_audience(self, session: Session) -> tuple[Table, list[Session], list[Session]] | None:
        """The table ``session`` plays or watches, its players' sessions and its watchers' sessions."""
        table = session.table
        if table is None and session.watching:
            watched = self.online.get(session.watching)
            table = watched.table if watched is not None else None
        if table is None:
            return None
        players = [s for s in (self.online.get(n) for n in table.names) if s is not None and s.table is table]
        watchers = [s for s in self.online.values() if s.watching in table.names and s.table is None]
        return table, players, watchers

    def _cmd_kibitz(self, session: Session, command: fs.Kibitz) -> None:
        audience = self._game_audience(session)
        if audience is None:
            session.send(render(Msg.NOT_WATCHING_OR_PLAYING))
            return
        _, players, watchers = audience
        text = command.text[:MAX_TEXT]
        heard = 0
        for other in players + watchers:
            if other is not session:
                self._chat(other, "kibitzes", session.name or "", text)
                heard += 1
        if session.clip:
            session.send(render(Msg.CLIP_YOU_KIBITZ, text=text))
        session.send(fs.heard_by(heard))

    def _cmd_whisper(self, session: Session, command: fs.Whisper) -> None:
        audience = self._game_audience(session)
        if audience is None:
            session.send(render(Msg.NOT_WATCHING_OR_PLAYING))
            return
        _, _, watchers = audience
        text = command.text[:MAX_TEXT]
        heard = 0
        for other in watchers:
            if other is not session:
                self._chat(other, "whispers", session.name or "", text)
                heard += 1
        if session.clip:
            session.send(render(Msg.CLIP_YOU_WHISPER, text=text))
        session.send(fs.heard_by(heard))

    def _cmd_shout(self, session: Session, command: fs.Shout) -> None:
        text = command.text[:MAX_TEXT]
        for other in self.online.values():
            if (
                other is not session
                and not other.toggles["silent"]
                and (session.name or "") not in other.gagged
            ):
                self._chat(other, "shouts", session.name or "", text)
        if session.clip:
            session.send(render(Msg.CLIP_YOU_SHOUT, text=text))

    def _cmd_message(self, session: Session, command: fs.Message) -> None:
        me = session.name or ""
        if self.store.account(command.name) is None:
            session.send(render(Msg.NO_ONE_CALLED, name=command.name))
            return
        text = command.text[:MAX_TEXT]
        now = int(self.clock())
        target = self.online.get(command.name)
        if target is not None:
            target.send(
                fs.clip_message(me, now, text)
                if target.clip
                else render(Msg.TEXT_MESSAGE, sender=me, when=_time_text(now), text=text)
            )
            session.send(render(Msg.CLIP_MESSAGE_DELIVERED, recipient=command.name))
        else:
            self.store.add_message(command.name, me, now, text)
            session.send(render(Msg.CLIP_MESSAGE_SAVED, recipient=command.name))

    # watching

    def _cmd_watch(self, session: Session, command: fs.Watch) -> None:
        me = session.name or ""
        target = self.online.get(command.name)
        if target is None:
            session.send(render(Msg.NO_ONE_CALLED, name=command.name))
            return
        if target is session:
            session.send(render(Msg.CANT_WATCH_YOURSELF))
            return
        if session.table is not None:
            session.send(render(Msg.CANT_WATCH_WHILE_PLAYING))
            return
        if me in target.blinded:
            session.send(render(Msg.DOESNT_WANT_YOU_TO_WATCH, name=command.name))
            return
        if session.watching and session.watching != command.name:
            self._stop_watching(session, quiet=True)
        session.watching = command.name
        self._who_update(session)
        session.send(render(Msg.NOW_WATCHING, name=command.name))
        table = target.table
        if table is None:
            session.send(render(Msg.NOTHING_INTERESTING, name=command.name))
        else:
            session.send(*self._board_lines(session, table, target.seat, watcher=True))
            opponent = self.online.get(target.opponent or "")
            if opponent is not None:
                opponent.send(render(Msg.STARTS_WATCHING, watcher=me, player=command.name))
        target.send(render(Msg.IS_WATCHING_YOU, name=me))

    def _stop_watching(self, session: Session, quiet: bool = False) -> None:
        watched_name, session.watching = session.watching, None
        if watched_name is None:
            return
        watched = self.online.get(watched_name)
        if watched is not None:
            watched.send(render(Msg.STOPS_WATCHING_YOU, name=session.name or ""))
        if not quiet:
            session.send(render(Msg.STOP_WATCHING, name=watched_name))
        self._who_update(session)

    def _cmd_unwatch(self, session: Session, command: fs.Command) -> None:
        if session.watching is None:
            session.send(render(Msg.NOT_WATCHING))
            return
        self._stop_watching(session)

    def _cmd_look(self, session: Session, command: fs.Look) -> None:
        target = self.online.get(command.name)
        if target is None:
            session.send(render(Msg.NO_ONE_CALLED, name=command.name))
        elif target.table is None:
            session.send(render(Msg.NOTHING_INTERESTING, name=command.name))
        else:
            session.send(*self._board_lines(session, target.table, target.seat, watcher=True))

    def _cmd_board(self, session: Session, command: fs.Command) -> None:
        if session.table is not None:
            session.send(*self._board_lines(session, session.table, session.seat))
            return
        if session.watching:
            target = self.online.get(session.watching)
            if target is not None and target.table is not None:
                session.send(*self._board_lines(session, target.table, target.seat, watcher=True))
                return
            session.send(render(Msg.NOTHING_INTERESTING, name=session.watching))
            return
        session.send(render(Msg.NOT_WATCHING_OR_PLAYING))

    def _board_lines(
        self, viewer: Session, table: Table, seat: int, watcher: bool = False, at: BoardAt | None = None
    ) -> list[str]:
        """The board as ``viewer`` asked for it: the CLIP line (boardstyle 3) or drawn (1 and 2)."""
        if viewer.settings["boardstyle"] == "3":
            return [table.board(seat, watcher=watcher, at=at)]
        return fs.ascii_board(table.board_value(seat, watcher=watcher, at=at))

    def _cmd_pip(self, session: Session, command: fs.Command) -> None:
        table = session.table
        if table is None:
            watched = self.online.get(session.watching or "")
            if watched is not None and watched.table is not None:  # a watcher sees the board anyway
                mine, theirs = watched.table.pips(watched.seat)
                name = watched.name or ""
                opponent = watched.opponent or ""
                text = render(Msg.PIP_COUNT_WATCHED, name=name, mine=mine, opponent=opponent, theirs=theirs)
                session.send(text)
                return
            session.send(render(Msg.NOT_PLAYING))
            return
        opponent = self.online.get(session.opponent or "")
        if opponent is not None and not opponent.toggles["allowpip"]:
            session.send(render(Msg.PIP_NOT_ALLOWED, name=opponent.name or ""))
            return
        mine, theirs = table.pips(session.seat)
        session.send(render(Msg.PIP_COUNT, mine=mine, theirs=theirs, opponent=session.opponent or ""))

    # saved matches and history

    def _cmd_show(self, session: Session, command: fs.Show) -> None:
        me = session.name or ""
        if command.topic == "saved":
            rows = self.store.saved_matches(me)
            if not rows:
                session.send(render(Msg.NO_SAVED_GAMES))
                return
            session.send(render(Msg.SAVED_HEADER))
            for row in rows:
                seat = 0 if row.player0 == me else 1
                opponent = row.player1 if seat == 0 else row.player0
                playing = session.table is not None and session.table.id == row.id
                session.send(
                    fs.saved_row(
                        opponent,
                        row.length,
                        row.score[seat],
                        row.score[1 - seat],
                        online=opponent in self.online,
                        playing=playing,
                    )
                )
        elif command.topic == "savedcount":
            name = command.argument or me
            session.send(fs.saved_count(name, self.store.saved_count(name)))
        elif command.topic == "games":
            tables = sorted(self.tables.values(), key=lambda t: t.id)
            if not tables:
                session.send(render(Msg.NO_GAMES))
                return
            session.send(render(Msg.GAMES_HEADER))
            for table in tables:
                session.send(fs.games_row(table.names[0], table.names[1], table.length, table.state.score))
        elif command.topic == "watchers":
            entries = sorted((s.name or "", s.watching) for s in self.online.values() if s.watching)
            session.send(*fs.watchers_list(entries))
        else:
            session.send(f"maximum number of saved games: {MAX_SAVED}")

    def _cmd_oldmoves(self, session: Session, command: fs.Oldmoves) -> None:
        me = session.name or ""
        other = command.name or session.opponent
        if other is None:
            recent = [t for key, t in self.last_tables.items() if me in key]
            if session.watching:
                target = self.online.get(session.watching)
                if target is not None and target.table is not None:
                    recent.append(target.table)
            if not recent:
                session.send(render(Msg.NO_OLDMOVES, name=me))
                return
            table = recent[-1]
            session.send(*table.oldmoves())
            return
        table = session.table if session.table is not None and other in session.table.names else None
        table = table or self.last_tables.get(frozenset((me, other)))
        if table is not None and table.record.games:
            session.send(*table.oldmoves())
            return
        row = self.store.last_finished_between(me, other)
        if row is None:
            session.send(render(Msg.NO_OLDMOVES, name=other))
            return
        try:
            record = record_from_json(row.data["record"])
            colours = [int(c) for c in row.data.get("colours", [])]
            session.send(*oldmoves_text(record, len(record.games) - 1, colours[-1] if colours else 1))
        except (KeyError, ValueError, IndexError):
            session.send(render(Msg.NO_OLDMOVES, name=other))

    # invitations

    def _cmd_invite(self, session: Session, command: fs.Invite) -> None:
        me = session.name or ""
        name, length = command.name, command.length
        target = self.online.get(name)
        if target is None:
            session.send(render(Msg.NO_ONE_CALLED, name=name))
            return
        if target is session:
            session.send(render(Msg.CANNOT_INVITE_YOURSELF))
            return
        if session.table is not None:
            session.send(render(Msg.YOU_ARE_ALREADY_PLAYING))
            return
        saved = self.store.saved_match_between(me, name)
        if length is None and saved is None:
            session.send(render(Msg.NO_SAVED_MATCH, name=name))
            return
        if not target.toggles["ready"]:
            session.send(render(Msg.REFUSING_GAMES, name=name))
            return
        if target.table is not None:
            session.send(render(Msg.ALREADY_PLAYING_WITH_SOMEONE_ELSE, name=name))
            return
        if length is not None and saved is None and self.store.saved_count(me) >= MAX_SAVED:
            session.send(render(Msg.TOO_MANY_SAVED, limit=MAX_SAVED))
            return
        session.invitation = (name, length)
        session.send(fs.you_invited(name, length))
        if not session.toggles["ready"]:
            session.toggles["ready"] = True  # any invite turns ready on; FIBS shows only the CLIP 5 line
            self._who_update(session)
        target.send(fs.invitation(me, length), render(Msg.JOIN_HINT, inviter=me))
        if length is not None and saved is not None:
            target.send(fs.saved_match_warning(saved.length))
        if target.away is not None:
            session.send(render(Msg.PLAYER_AWAY, name=name, message=target.away))

    def _cmd_join(self, session: Session, command: fs.Join) -> None:
        if command.name is None:
            if session.table is not None:
                self._table_action(session, lambda t, seat: t.join_next(seat))
            else:
                session.send(render(Msg.JOIN_WHO))
            return
        me, name = session.name or "", command.name
        if session.table is not None:
            session.send(render(Msg.CANNOT_PLAY_TWO_GAMES))
            return
        inviter = self.online.get(name)
        if inviter is None:
            session.send(render(Msg.CANT_FIND_PLAYER, name=name))
            return
        if inviter.invitation is None or inviter.invitation[0] != me:
            session.send(render(Msg.DIDNT_INVITE_YOU, name=name))
            return
        if inviter.table is not None:
            session.send(render(Msg.JOIN_BUSY, name=name))
            return
        length = inviter.invitation[1]
        inviter.invitation = None
        if session.watching:
            self._stop_watching(session, quiet=True)
        if inviter.watching:
            self._stop_watching(inviter, quiet=True)
        saved = self.store.saved_match_between(me, name)
        if length is None:
            self._resume(inviter, session, saved)
            return
        if saved is not None:
            self.store.delete_match(saved.id)  # accepting a new match discards the saved one (FIBS)
        table = Table(
            self._new_match_id(),
            (name, me),
            length,
            self.dice_factory(),
            self._prefs_for((name, me)),
            crawford=inviter.toggles["crawford"] or session.toggles["crawford"],
            redoubles=_redoubles_limit(inviter.settings["redoubles"], session.settings["redoubles"]),
            site=self.name,
        )
        self._seat(inviter, table, 0)
        self._seat(session, table, 1)
        session.send(fs.you_are_now_playing(name, length))
        inviter.send(fs.player_joined_you(me, length))
        self._who_update(session)
        self._who_update(inviter)
        self._report(fs.match_start_report(name, me, length), exclude=(session, inviter))
        table.start_game()
        self._persist(table)
        self._flush(table)

    def _resume(self, inviter: Session, joiner: Session, saved: SavedRow | None) -> None:
        me, name = joiner.name or "", inviter.name or ""
        if saved is None:
            joiner.send(render(Msg.SAVED_MATCH_CORRUPT))
            return
        try:
            table = Table.from_json(
                saved.data,
                saved.gnubg_id,
                self.dice_factory(),
                self._prefs_for((saved.player0, saved.player1)),
            )
        except SavedMatchError as exc:
            log.warning("saved_match_corrupt", match=saved.id, players=[name, me], error=str(exc))
            for s in (joiner, inviter):
                s.send(render(Msg.SAVED_MATCH_CORRUPT))
            return
        for s in (inviter, joiner):
            self._seat(s, table, table.seat_of(s.name or "") or 0)
        joiner.send(render(Msg.YOU_RESUMED, opponent=name))
        inviter.send(render(Msg.OPPONENT_RESUMED, joiner=me))
        self._who_update(joiner)
        self._who_update(inviter)
        self._report(fs.match_resume_report(name, me, table.length), exclude=(joiner, inviter))
        state = table.state
        synopsis = (
            render(Msg.RESUME_TURN, name=table.names[state.on_roll]),
            fs.resume_length(table.length),
            render(Msg.RESUME_POINTS, name=table.names[0], points=state.score[0]),
            render(Msg.RESUME_POINTS, name=table.names[1], points=state.score[1]),
        )
        for s in (inviter, joiner):
            s.send(*synopsis)
        table.resume()
        self._persist(table)
        self._flush(table)

    def _seat(self, session: Session, table: Table, seat: int) -> None:
        session.table, session.seat = table, seat
        self.tables[table.id] = table

    def _new_match_id(self) -> str:
        stamp = datetime.datetime.fromtimestamp(self.clock(), datetime.UTC).strftime("%Y%m%dT%H%M%S")
        return f"{self.name}-{stamp}-{secrets.token_hex(4)}-{next(self._ids)}"

    def _prefs_for(self, names: tuple[str, str]) -> Callable[[int, str], bool]:
        def prefs(seat: int, toggle: str) -> bool:
            session = self.online.get(names[seat])
            return (
                session.toggles.get(toggle, False)
                if session is not None
                else DEFAULT_TOGGLES.get(toggle, False)
            )

        return prefs

    # the game

    def _table_action(self, session: Session, action: Callable[[Table, int], None]) -> None:
        table = session.table
        if table is None:
            session.send(render(Msg.NOT_PLAYING))
            return
        try:
            action(table, session.seat)
        except TableRefusal as refusal:
            table.take()  # nothing was changed; drop anything queued before the refusal
            session.send(refusal.line)
            return
        # The store is the one truth of a running match: written (committed) before any line that tells of the
        # action leaves, so a crash at any instant resumes from what the players were last shown, never before.
        if not table.finished:
            self._persist(table)
        self._flush(table)
        if table.finished:
            self._finish(table)

    def _cmd_roll(self, session: Session, command: fs.Command) -> None:
        self._table_action(session, lambda t, seat: t.roll(seat))

    def _cmd_move(self, session: Session, command: fs.MoveCommand) -> None:
        self._table_action(session, lambda t, seat: t.move(seat, command.text))

    def _cmd_double(self, session: Session, command: fs.Command) -> None:
        self._table_action(session, lambda t, seat: t.double(seat))

    def _cmd_redouble(self, session: Session, command: fs.Command) -> None:
        self._table_action(session, lambda t, seat: t.redouble(seat))

    def _cmd_accept(self, session: Session, command: fs.Command) -> None:
        self._table_action(session, lambda t, seat: t.accept(seat))

    def _cmd_reject(self, session: Session, command: fs.Command) -> None:
        self._table_action(session, lambda t, seat: t.reject(seat))

    def _cmd_resign(self, session: Session, command: fs.Resign) -> None:
        self._table_action(session, lambda t, seat: t.resign(seat, command.level))

    def _cmd_leave(self, session: Session, command: fs.Command) -> None:
        if session.table is None:
            session.send(render(Msg.NOT_PLAYING))
            return
        self._leave(session, "left")

    def _flush(self, table: Table) -> None:
        """Deliver the table's queued output: seats, then the watchers of each seat."""
        players = [self._seat_session(table, seat) for seat in (0, 1)]
        for target, text in table.take():
            if target < 2:
                s = players[target]
                if s is not None:
                    lines = [text] if isinstance(text, str) else self._board_lines(s, table, target, at=text)
                    s.send(*lines)
                continue
            seat = target - 2
            watched = table.names[seat]
            board: str | None = None
            for s in self.online.values():
                if s.watching == watched and s.table is None:
                    if isinstance(text, str):
                        s.send(text)
                    elif s.settings["boardstyle"] == "3":
                        board = board or table.board(seat, watcher=True, at=text)  # one rendering for all
                        s.send(board)
                    else:
                        s.send(*self._board_lines(s, table, seat, watcher=True, at=text))
        self._tell_listeners(table)

    def _seat_session(self, table: Table, seat: int) -> Session | None:
        s = self.online.get(table.names[seat])
        return s if s is not None and s.table is table else None

    def _persist(self, table: Table) -> None:
        state = table.state
        row = SavedRow(
            id=table.id,
            player0=table.names[0],
            player1=table.names[1],
            length=table.length,
            score=state.score,
            gnubg_id=state.gnubg_id,
            data=table.to_json_text(),  # each action encoded once, not the whole record at every move
        )
        now = self.clock()
        try:
            self.store.save_match(row, now=now)
        except Exception:
            log.exception("match_save_failed", match=table.id)

    def _leave(self, session: Session, reason: str) -> None:
        """The match of ``session`` is saved and both players are freed (leave, logout, drop, timeout)."""
        table = session.table
        if table is None:
            return
        me, seat = session.name or "", session.seat
        opponent = table.names[1 - seat]
        other = self._seat_session(table, 1 - seat)
        self._persist(table)
        self._unseat(table)
        if reason == "left":
            session.send(render(Msg.YOU_TERMINATED))
        elif reason == "shutdown":
            session.send(render(Msg.YOUR_GAME_SAVED, name=opponent))
        if other is not None:
            other.send(render(_SAVED_BECAUSE.get(reason, Msg.DROPS_CONNECTION_SAVED), name=me))
        self._report(
            render(Msg.LEFT_GAME_REPORT, name=me, opponent=opponent),
            exclude=(session, other) if other else (session,),
        )
        for s in (session, other):
            if s is not None:
                self._who_update(s)

    def _unseat(self, table: Table) -> None:
        for name in table.names:
            s = self.online.get(name)
            if s is not None and s.table is table:
                s.table, s.seat = None, -1
        for s in list(self.sessions):
            if s.table is table:
                s.table, s.seat = None, -1
        self.tables.pop(table.id, None)
        self.last_tables[frozenset(table.names)] = table
        if len(self.last_tables) > 1000:
            self.last_tables.pop(next(iter(self.last_tables)))
        self._tell_listeners(table)

    def _finish(self, table: Table) -> None:
        """Match over: ratings, the result lines and reports, the store, the archive callback."""
        state = table.state
        winner = state.winner
        assert winner is not None
        loser = 1 - winner
        names = table.names
        ws, ls = state.score[winner], state.score[loser]
        sessions = [self._seat_session(table, seat) for seat in (0, 1)]
        accounts = [self.store.account(n) for n in names]
        new_ratings: dict[str, tuple[float, int]] = {}
        change = None
        if table.length and accounts[0] is not None and accounts[1] is not None:
            wa, la = accounts[winner], accounts[loser]
            assert wa is not None and la is not None
            change = ratings.rating_change(
                names[winner], names[loser], wa.rating, la.rating, wa.experience, la.experience, table.length
            )
            new_ratings[wa.name] = (wa.rating + change.winner_change, wa.experience + table.length)
            new_ratings[la.name] = (la.rating + change.loser_change, la.experience + table.length)
        for seat, s in enumerate(sessions):
            if s is None:
                continue
            if change is not None and s.toggles["ratings"]:
                s.send(*fs.rating_calculation(change))
            if seat == winner:
                s.send(render(Msg.YOU_WIN_MATCH, length=table.length, score=ws, other=ls))
            else:
                s.send(render(Msg.WINS_MATCH, name=names[winner], length=table.length, score=ws, other=ls))
        for s in self.online.values():
            if s.table is None and s.watching in names:
                s.send(render(Msg.WINS_MATCH, name=names[winner], length=table.length, score=ws, other=ls))
        self._report(
            fs.match_report(names[winner], names[loser], table.length, ws, ls),
            exclude=[s for s in sessions if s is not None],
        )
        record = table.record
        row = FinishedRow(
            key=table.id,
            player0=names[0],
            player1=names[1],
            length=table.length,
            score=state.score,
            data={"record": record_to_json(record), "colours": table.colours},
        )
        try:
            self.store.finish_match(row, table.id, new_ratings, now=self.clock())
        except Exception:
            log.exception("match_finish_store_failed", match=table.id)
        for s in sessions:
            if s is not None and s.account is not None and s.account.name in new_ratings:
                s.account.rating, s.account.experience = new_ratings[s.account.name]
        self._unseat(table)
        for s in sessions:
            if s is not None:
                self._who_update(s)
        log.info("match_finished", match=table.id, winner=names[winner], score=f"{ws}-{ls}")
        self._spawn(self._deliver(table.id, record))

    async def _deliver(self, key: str, record: MatchRecord) -> None:
        """Hand a finished match to the archive; a failed write (disk full, no file handle left) is tried
        again while running, ``archive_retry`` doubling to ARCHIVE_RETRY_MAX, and counted in
        ``pending_archives`` meanwhile (the daemon's /healthz). The store keeps it unarchived until it is written,
        so a restart also finishes the job."""
        if self.on_match_finished is None:
            return
        delay = self.archive_retry
        tries = 0
        while True:
            try:
                await self.on_match_finished(record)
                self.store.mark_archived(key)
            except Exception as exc:
                tries += 1
                self.pending_archives[key] = tries
                if tries == 1:
                    log.exception("archive_write_failed", match=key, retry_in=round(delay, 1))
                else:
                    log.error("archive_write_failed_again", match=key, tries=tries, error=str(exc)[:200])
                await asyncio.sleep(delay)
                delay = min(2 * delay, ARCHIVE_RETRY_MAX)
                continue
            break
        if self.pending_archives.pop(key, None) is not None:
            log.info("archive_written_after_retry", match=key, tries=tries + 1)

    async def _deliver_unarchived(self) -> None:
        """Finished matches a previous run stored but did not hand to the archive."""
        if self.on_match_finished is None:
            return
        for row in self.store.unarchived():
            try:
                record = record_from_json(row.data["record"])
            except (KeyError, ValueError) as exc:
                log.warning("finished_match_unreadable", match=row.key, error=str(exc))
                continue
            await self._deliver(row.key, record)

    _handlers: ClassVar[dict[type, Callable[[FibsServer, Session, Any], None]]] = {}


FibsServer._handlers = {
    fs.Empty: FibsServer._cmd_empty,
    fs.Bye: FibsServer._cmd_bye,
    fs.Help: FibsServer._cmd_help,
    fs.Time: FibsServer._cmd_time,
    fs.Who: FibsServer._cmd_who,
    fs.Toggle: FibsServer._cmd_toggle,
    fs.Set: FibsServer._cmd_set,
    fs.Away: FibsServer._cmd_away,
    fs.Back: FibsServer._cmd_back,
    fs.Gag: FibsServer._cmd_gag,
    fs.Blind: FibsServer._cmd_blind,
    fs.Tell: FibsServer._cmd_tell,
    fs.Say: FibsServer._cmd_say,
    fs.Kibitz: FibsServer._cmd_kibitz,
    fs.Whisper: FibsServer._cmd_whisper,
    fs.Shout: FibsServer._cmd_shout,
    fs.Message: FibsServer._cmd_message,
    fs.Watch: FibsServer._cmd_watch,
    fs.Unwatch: FibsServer._cmd_unwatch,
    fs.Look: FibsServer._cmd_look,
    fs.Board: FibsServer._cmd_board,
    fs.Pip: FibsServer._cmd_pip,
    fs.Show: FibsServer._cmd_show,
    fs.Oldmoves: FibsServer._cmd_oldmoves,
    fs.Invite: FibsServer._cmd_invite,
    fs.Join: FibsServer._cmd_join,
    fs.Roll: FibsServer._cmd_roll,
    fs.MoveCommand: FibsServer._cmd_move,
    fs.Double: FibsServer._cmd_double,
    fs.Redouble: FibsServer._cmd_redouble,
    fs.Accept: FibsServer._cmd_accept,
    fs.Reject: FibsServer._cmd_reject,
    fs.Resign: FibsServer._cmd_resign,
    fs.Leave: FibsServer._cmd_leave,
}


def _time_text(when: float) -> str:
    return datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%A, %B %d %H:%M:%S UTC")


def _redoubles_limit(a: str, b: str) -> int:
    """The instant redoubles an unlimited match allows: the smaller of the two players' settings."""

    def value(text: str) -> int:
        if text == "unlimited":
            return 99
        return int(text) if text.isdigit() else 0

    return min(value(a), value(b))


def _check_setting(name: str, value: str) -> str | tuple[str]:
    """The normalised value, or (allowed values,) when ``value`` is not one of them."""
    value = value.strip()
    if name == "boardstyle":
        return value if value in ("1", "2", "3") else ("1, 2 or 3",)
    if name in ("linelength", "pagelength"):
        return value if value.isdigit() and int(value) <= 1000 else ("0 to 1000",)
    if name == "redoubles":
        if value in ("none", "unlimited") or (value.isdigit() and 0 < int(value) < 100):
            return value
        return ("none, unlimited or 1 to 99",)
    if name == "sortwho":
        return value if value in fs.SORTWHO else (", ".join(fs.SORTWHO),)
    if name == "timezone":
        return value if value and len(value) <= 40 and " " not in value else ("a zone name such as UTC",)
    return ("nothing",)
