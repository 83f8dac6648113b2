"""One WebSocket client: its messages in, the hub's and the FIBS server's output out.

A guest may list, watch and read. Logging in attaches a ``Session`` to the FIBS server whose writer is a
``SessionSink``: the server logs it in with the same ``login`` line a CLIP client sends, runs its commands
through the same code as a telnet user's, and writes its output to the sink, where the FIBS client codec reads
it back into events; the few the page needs (invitations, chat, refusals, notices) become protocol messages.
Everything about the matches themselves comes from the hub.

Output goes through a bounded queue drained by one sender task: a client that stops reading is dropped
rather than allowed to hold the daemon's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from bot.server.session import Phase, Session, TokenBucket
from bot.server.store import AccountExistsError, StoreError, hash_password
from bot.web.hub import WebHub
from engine.errors import EngineError
from engine.moves import Move, find_play
from engine.notation import format_fibs
from protocols.fibs import events as ev
from protocols.fibs import server as fs
from protocols.fibs.client import CLIP_VERSION, FibsClientProtocol
from protocols.fibs.server import Msg, render
from protocols.web import messages as wm

log = logging.getLogger("gammond.web")

CLIENT_NAME = "gammond-web"  # the client name the FIBS server shows for web users
HELLO_TIMEOUT = 10.0  # seconds for the first message
MAX_QUEUED = 2000  # messages waiting for one client before it is dropped as too slow
MAX_LAG = 2.0  # seconds a rate-limited message may wait; past that it is refused
ANSWER_WINDOW = 60.0  # seconds after an invitation in which the invitee's tell is its refusal
SAVED_LOGIN_AGE = 30 * 86400.0  # seconds: a saved web login unused this long has ended
RESIGN_WORDS = {"single": "n", "gammon": "g", "backgammon": "b"}
# Plain FIBS commands for the messages that need no argument.
SIMPLE_COMMANDS: dict[type[wm.Message], str] = {
    wm.Roll: "roll",
    wm.Double: "double",
    wm.Take: "accept",
    wm.Drop: "reject",
    wm.Beaver: "redouble",
    wm.AcceptResign: "accept",
    wm.RejectResign: "reject",
    wm.NextGame: "join",
    wm.Leave: "leave",
}
# FIBS lines the page shows as they are.
NOTICE_EVENTS = (
    ev.YouInvited,
    ev.PlayerAway,
    ev.WatcherJoined,
    ev.WatcherLeft,
    ev.PlayerLeftGame,
    ev.GameSaved,
    ev.WaitingForJoin,
    ev.MessageSaved,
    ev.MessageDelivered,
    ev.AlreadyLoggedIn,
    ev.ServerShutdown,
    ev.Unknown,
)
CHAT_EVENTS: dict[type[ev.FibsEvent], wm.ChatScope] = {
    ev.Says: "say",
    ev.Shouts: "shout",
    ev.Whispers: "whisper",
    ev.Kibitzes: "kibitz",
}
OWN_CHAT_EVENTS: dict[type[ev.FibsEvent], wm.ChatScope] = {
    ev.YouSaid: "say",
    ev.YouShouted: "shout",
    ev.YouWhispered: "whisper",
    ev.YouKibitzed: "kibitz",
}


class SessionSink:
    """Stands in for a Session's StreamWriter (write, close, is_closing, transport): the FIBS server's bytes
    go to ``on_data``; ``on_close`` runs once when the server closes the session (logout, a second login of
    the account, a client too slow)."""

    def __init__(
        self, on_data: Callable[[bytes], None], on_close: Callable[[], None], queued: Callable[[], int]
    ) -> None:
        self.on_data = on_data
        self.on_close = on_close
        self.queued = queued
        self.closed = False

    def __repr__(self) -> str:
        return f"<SessionSink closed={self.closed}>"

    @property
    def transport(self) -> SessionSink:
        return self

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.on_data(data)

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return self.queued()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.on_close()

    abort = close


class WebConnection:
    """One WebSocket client of the hub: ``await run()`` serves it until it goes."""

    def __init__(self, hub: WebHub, ws: ServerConnection, *, idle_timeout: float = 3600.0) -> None:
        self.hub = hub
        self.ws = ws
        self.idle_timeout = idle_timeout
        address = ws.remote_address
        self.host = str(address[0]) if isinstance(address, tuple) and address else "unknown"
        self.session: Session | None = None
        self.watching: tuple[str, int] | None = None
        self.codec: FibsClientProtocol | None = None
        self.request: str | None = None  # the message being handled: a refusal answers it
        self.notices: list[str] | None = None  # '** ...' lines gathered while a request runs
        self.seen: set[type[ev.FibsEvent]] = set()  # the kinds of FIBS lines seen meanwhile
        self.sink: SessionSink | None = None
        self.bucket = TokenBucket(hub.server.rate, max(2.0, 2 * hub.server.rate))
        self.outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.queued_bytes = 0
        self.closing = False
        self.invited: dict[str, float] = {}  # invitee (folded) -> when: a bot declines by a tell
        self.saved_login: str | None = None  # the digest of the saved login this connection logged in with

    def __repr__(self) -> str:
        return f"<WebConnection {self.name or 'guest'} {self.host}>"

    @property
    def name(self) -> str | None:
        return self.session.name if self.session is not None else None

    # -- output ---------------------------------------------------------------------------------------------

    def send(self, message: wm.Message) -> None:
        self.send_text(wm.render(message))

    def send_text(self, text: str) -> None:
        if self.closing:
            return
        if self.outbox.qsize() >= MAX_QUEUED:
            log.warning("%s reads too slowly: dropped", self)
            self.closing = True
            self.outbox.put_nowait(None)
            return
        self.queued_bytes += len(text)
        self.outbox.put_nowait(text)

    async def _sender(self) -> None:
        while True:
            text = await self.outbox.get()
            if text is None:
                await self.ws.close(1008, "too slow")
                return
            self.queued_bytes -= len(text)
            await self.ws.send(text)

    # -- the connection -------------------------------------------------------------------------------------

    async def run(self) -> None:
        sender = asyncio.create_task(self._sender())
        self.hub.add(self)
        try:
            if await self._hello():
                await self._serve()
        except ConnectionClosed:
            pass
        finally:
            self.closing = True
            self._end_session("drops connection")
            self.hub.remove(self)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await sender

    async def _hello(self) -> bool:
        try:
            text = await asyncio.wait_for(self.ws.recv(), HELLO_TIMEOUT)
            wm.check_hello(wm.parse_client(text))
        except TimeoutError:
            await self.ws.close(1008, "no hello")
            return False
        except wm.WebProtocolError as exc:
            self.send(wm.Error(exc.code, str(exc), "hello"))
            await self._flush_and_close(1002, "bad hello")
            return False
        self.send(wm.Welcome(wm.PROTOCOL_VERSION, self.hub.server.name))
        self.send(self.hub.lobby())
        return True

    async def _flush_and_close(self, code: int, reason: str) -> None:
        deadline = time.monotonic() + 1.0
        while not self.outbox.empty() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await self.ws.close(code, reason)

    async def _serve(self) -> None:
        while not self.closing:
            try:
                text = await asyncio.wait_for(self.ws.recv(), self.idle_timeout)
            except TimeoutError:
                self.send(wm.Notice("Connection timed out."))
                await self._flush_and_close(1000, "idle")
                return
            delay = self.bucket.reserve(time.monotonic(), MAX_LAG)
            if delay is None:
                self.send(wm.Error("slow_down", "Too many messages: slow down."))
                continue
            if delay:
                await asyncio.sleep(delay)
            try:
                message = wm.parse_client(text)
            except wm.WebProtocolError as exc:
                self.send(wm.Error(exc.code, str(exc)))
                continue
            self.request = message.TYPE
            try:
                await self._handle(message)
            finally:
                self.request = None

    # -- messages -------------------------------------------------------------------------------------------

    async def _handle(self, message: wm.Message) -> None:
        match message:
            case wm.Hello():
                self.send(wm.Error("bad_message", "hello was said already", "hello"))
            case wm.ListLobby():
                self.send(self.hub.lobby())
            case wm.Login(name=name, password=password):
                await self._login(name, password)
            case wm.Register(name=name, password=password):
                await self._register(name, password)
            case wm.Resume(name=name, token=token):
                await self._resume(name, token)
            case wm.Watch(match=match_id, seat=seat):
                await self._watch(match_id, seat)
            case wm.Unwatch():
                if self.session is not None and self.session.watching:
                    await self._command("unwatch")
                self.hub.unwatch(self)
            case _ if self.session is None:
                self.send(wm.Error("not_logged_in", "Log in first.", message.TYPE))
            case wm.Logout():
                if self.saved_login is not None:  # logging out ends the saved login too
                    self.hub.server.store.drop_web_login(self.saved_login)
                    self.saved_login = None
                await self._command("bye")
            case wm.Invite(name=name, length=length):
                await self._invite(name, length)
            case wm.AcceptInvitation(name=name):
                await self._request(
                    f"join {name}", lambda: self.session is not None and self.session.table is not None
                )
            case wm.Ready(on=on):
                if self.session.toggles.get("ready", False) != on:
                    await self._command("toggle ready")
                self.hub.lobby_changed()
            case wm.Chat(text=text, scope=scope, to=to):
                line = f"tell {to} {text}" if scope == "tell" else f"{scope} {text}"
                await self._request(line, lambda: bool(self.seen & set(OWN_CHAT_EVENTS)))
            case wm.MovePlay(steps=steps):
                await self._move(Move(steps))
            case wm.Resign(level=level):
                await self._game_request(f"resign {RESIGN_WORDS[level]}")
            case _:
                await self._game_request(SIMPLE_COMMANDS[type(message)])

    async def _invite(self, name: str, length: int | None) -> None:
        """Invite; a bot's policy is checked first (a clear error instead of its later tell), and the tell
        with which a bot declines afterwards comes back as an error of this request (see ``_translate``)."""
        accepts = self.hub.accepts
        invitee = self.hub.server.online.get(name)
        is_bot = invitee is not None and invitee.account is not None and invitee.account.bot
        if is_bot and accepts is not None and length is not None:
            unlimited_ok = length == 0 and accepts.unlimited
            if not unlimited_ok and not accepts.min_length <= length <= accepts.max_length:
                what = "unlimited matches" if length == 0 else f"{length}-point matches"
                span = f"{accepts.min_length}..{accepts.max_length}"
                self.send(
                    wm.Error("refused", f"{name} does not play {what} (it plays {span} points).", "invite")
                )
                return
        size = "" if length is None else f" {length or 'unlimited'}"
        await self._request(f"invite {name}{size}", lambda: ev.YouInvited in self.seen)
        if is_bot and ev.YouInvited in self.seen:  # a person's tell is just chat
            self.invited[name.casefold()] = time.monotonic()

    def _refusal_of_invitation(self, sender: str) -> bool:
        """A tell from a player this user invited in the last ANSWER_WINDOW, before any match began."""
        when = self.invited.get(sender.casefold())
        if when is None:
            return False
        if time.monotonic() - when > ANSWER_WINDOW or (self.session is not None and self.session.table):
            del self.invited[sender.casefold()]
            return False
        del self.invited[sender.casefold()]
        return True

    async def _command(self, line: str) -> None:
        session = self.session
        if session is not None:
            await self.hub.server.feed(session, line)

    async def _request(self, line: str, succeeded: Callable[[], bool]) -> None:
        """Send ``line``; the server's '** ...' lines meanwhile are the refusal unless ``succeeded()``."""
        self.notices, self.seen = [], set()
        try:
            await self._command(line)
        finally:
            notices, self.notices = self.notices, None
        if succeeded():
            for text in notices:
                self.send(wm.Notice(text))
        else:
            self.send(wm.Error("refused", " ".join(notices) or "The server did not do it.", self.request))

    async def _game_request(self, line: str) -> None:
        """A table action succeeded when the table changed (the server tells the hub of every change)."""
        before = self._table_seq()
        await self._request(line, lambda: self._table_seq() != before)

    def _table_seq(self) -> tuple[str, int] | None:
        table = self.session.table if self.session is not None else None
        live = self.hub.matches.get(table.id) if table is not None else None
        return (live.table.id, live.seq) if live is not None else None

    async def _move(self, move: Move) -> None:
        """Check the play against the table (a clear error without a round trip), then send it as FIBS does."""
        session = self.session
        assert session is not None
        table = session.table
        if table is None:
            self.send(wm.Error("no_match", "You are not playing.", "move"))
            return
        state = table.state
        if state.on_roll != session.seat or state.turn != session.seat or not state.dice[0]:
            self.send(wm.Error("refused", "It is not your turn to move.", "move"))
            return
        try:
            play = find_play(state.position, state.dice, move)
        except EngineError as exc:
            self.send(wm.Error("illegal_move", str(exc), "move"))
            return
        await self._game_request("move " + format_fibs(play.move, table.direction(session.seat)))

    async def _watch(self, match_id: str, seat: int) -> None:
        table = self.hub.server.tables.get(match_id)
        if table is None:
            self.send(wm.Error("no_match", f"No live match {match_id}.", "watch"))
            return
        session = self.session
        if session is not None:
            if session.table is not None:
                self.send(wm.Error("refused", "You cannot watch while you play.", "watch"))
                return
            target = table.names[seat]
            if session.watching != target:
                await self._request(f"watch {target}", lambda: session.watching == target)
                if session.watching != target:
                    return  # refused (blinded, ...): the error is sent
        if not self.hub.watch(self, match_id, seat):
            self.send(wm.Error("no_match", f"No live match {match_id}.", "watch"))

    # -- logging in -----------------------------------------------------------------------------------------

    def _new_session(self) -> Session:
        """A FIBS session for this connection, attached to the server in its login phase."""
        server = self.hub.server
        codec = FibsClientProtocol()
        session = Session(
            writer=None,
            host=self.host,
            connected=server.clock(),
            bucket=TokenBucket(server.rate, max(2.0, 2 * server.rate)),
            reader=fs.ServerLineReader(server.max_line),
        )
        sink = SessionSink(
            lambda data: self._from_server(codec, data),
            lambda: self._session_closed(session),
            lambda: self.queued_bytes,
        )
        session.writer = sink  # type: ignore[assignment]  # duck-typed: see SessionSink
        self.session, self.codec, self.sink = session, codec, sink
        server.attach(session)
        return session

    async def _login(self, name: str, password: str) -> None:
        self._end_session("logs out")
        server = self.hub.server
        session = self._new_session()
        await server.feed(session, f"login {CLIENT_NAME} {CLIP_VERSION} {name} {password}")
        if self.session is not session:
            return  # closed meanwhile
        if session.phase is not Phase.ONLINE or session.account is None:
            self._end_session("drops connection", tell=False)
            self.send(wm.Error("login_failed", "Login incorrect.", "login"))
            return
        # a saved login, so that the page logs back in when it reconnects (the daemon restarted): the store
        # keeps only its digest, and neither is ever logged
        token = secrets.token_urlsafe(32)
        digest = _digest(token)
        try:
            server.store.add_web_login(digest, session.account.name, server.clock(), SAVED_LOGIN_AGE)
        except (StoreError, OSError, sqlite3.Error) as exc:
            # the login stands; only the saved login is missing
            log.warning("saving a web login for %s failed: %s", session.account.name, exc)
            self._logged_in(session, None)
            return
        self.saved_login = digest
        self._logged_in(session, token)

    async def _resume(self, name: str, token: str) -> None:
        """Log in with a saved login (no password): its digest must be stored for ``name``."""
        self._end_session("logs out")
        server = self.hub.server
        digest = _digest(token)
        try:
            owner = server.store.web_login(digest, server.clock(), SAVED_LOGIN_AGE)
        except (StoreError, OSError, sqlite3.Error) as exc:
            log.warning("reading a saved web login failed: %s", exc)
            owner = None
        account = server.store.account(name) if owner == name else None
        if account is None:
            self.send(wm.Error("login_failed", "Your saved login has ended: log in again.", "resume"))
            return
        session = self._new_session()
        server.enter(session, account, client=CLIENT_NAME)
        if self.session is not session or session.phase is not Phase.ONLINE:
            return  # closed meanwhile
        log.info("%s logged in with a saved login from the web (%s)", account.name, self.host)
        self.saved_login = digest
        self._logged_in(session, None)

    def _logged_in(self, session: Session, token: str | None) -> None:
        self.hub.logged_in(self, session)
        account = session.account
        assert account is not None
        ready = session.toggles["ready"]
        self.send(wm.LoggedIn(account.name, round(account.rating, 2), account.experience, ready, token))

    async def _register(self, name: str, password: str) -> None:
        server = self.hub.server
        problem = fs.check_new_name(name)
        if problem is None and server.store.name_taken(name):
            problem = render(Msg.NAME_TAKEN, name=name)
        if problem is not None:
            self.send(wm.Error("refused", problem.lstrip("* "), "register"))
            return
        hashed = await asyncio.to_thread(hash_password, password, server.scrypt_n)
        try:
            server.store.create_account(name, hashed, now=server.clock())
        except (AccountExistsError, StoreError) as exc:
            self.send(wm.Error("refused", str(exc), "register"))
            return
        log.info("registered %s from the web (%s)", name, self.host)
        await self._login(name, password)

    def _end_session(self, reason: str, *, tell: bool = True) -> None:
        """Leave the FIBS server (the match is saved there); back to a guest."""
        session, sink = self.session, self.sink
        self.session, self.codec, self.sink = None, None, None
        if session is None:
            return
        if sink is not None:
            sink.closed = True  # nothing more is read from it, and its close reports nothing
        self.hub.logged_out(session)
        if session.phase is not Phase.CLOSED:
            self.hub.server.detach(session, reason)
        if tell and not self.closing:
            self.send(wm.LoggedOut(reason))

    def _session_closed(self, session: Session) -> None:
        """The FIBS server closed the session: bye, the same account logged in elsewhere, too slow."""
        if self.session is not session:
            return
        self.session, self.codec, self.sink = None, None, None
        self.hub.logged_out(session)
        if session.phase is not Phase.CLOSED:
            # Cut off while writing (a client too slow): the server has not forgotten it yet. Not from
            # here, in the middle of the server's handler, but as soon as that is done.
            asyncio.get_running_loop().call_soon(self.hub.server.detach, session, session.close_reason)
        if not self.closing:
            self.send(wm.LoggedOut(session.close_reason))

    # -- FIBS output ----------------------------------------------------------------------------------------

    def _from_server(self, codec: FibsClientProtocol, data: bytes) -> None:
        if codec is not self.codec:
            return
        for event in codec.receive_data(data):
            message = self._translate(event)
            if message is not None:
                self.send(message)

    def _translate(self, event: ev.FibsEvent) -> wm.Message | None:
        self.seen.add(type(event))
        if self.notices is not None and isinstance(event, ev.ServerNotice | ev.UnknownCommand | ev.Unknown):
            self.notices.append(event.raw.lstrip("* "))
            return None
        match event:
            case ev.Invitation(inviter=inviter, length=length, unlimited=unlimited, resume=resume):
                return wm.Invitation(inviter, None if resume else 0 if unlimited else length)
            case ev.Says(sender=sender, message=text) if self._refusal_of_invitation(sender):
                return wm.Error("refused", f"{sender} declined your invitation: {text}", "invite")
            case ev.Says() | ev.Shouts() | ev.Whispers() | ev.Kibitzes():
                return wm.ChatLine(event.sender, CHAT_EVENTS[type(event)], event.message)  # type: ignore[attr-defined]
            case ev.YouSaid() | ev.YouShouted() | ev.YouWhispered() | ev.YouKibitzed():
                return wm.ChatLine(self.name or "", OWN_CHAT_EVENTS[type(event)], event.message)  # type: ignore[attr-defined]
            case ev.StoredMessage(sender=sender, message=text):
                return wm.ChatLine(sender, "tell", text)
            case ev.WhoInfo() | ev.PlayerLoggedIn() | ev.PlayerLoggedOut():
                self.hub.lobby_changed()
                return None
            case ev.ServerNotice(text=text):
                return wm.Notice(text)
            case _ if isinstance(event, NOTICE_EVENTS) and event.raw.strip():
                return wm.Notice(event.raw.lstrip("* "))
        return None


def _digest(token: str) -> str:
    """What the store keeps of a saved login: a random 256-bit token needs no slow hash."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
