"""The FIBS bot: one asyncio task per server account that logs in over telnet (CLIP), plays one match at a
time, resumes saved matches, watches and kibitzes, and archives what it plays.

``FibsBot.run()`` connects, and reconnects after every loss with jittered, capped exponential backoff (reset
after a session that stayed logged in). Within a session one reader task turns bytes into events
(``protocols.fibs.FibsClientProtocol``) and queues them; the session loop handles them in order, then runs
its timers (keepalive, stalls, idle opponents, invitations) and, when the match wants the bot to act, decides
in a worker thread - the loop never blocks on the engine. The match itself is a ``MatchTracker``
(bot/fibs/match.py): the bot records its own action there and stores the match (bot/state.py) *before* the
command is sent; the server's echo confirms it, an error line or a board that shows otherwise undoes it.

What FIBS forgets, the bot asks again (../shared/reference/fibs-protocol.md section 1.6): the board (``board``,
or ``b`` on a server that does not know ``board``, or none: then it decides again from its own view) after a
resume, after "can't move", after a rejected resignation and after ``daemon.stall_timeout`` seconds without
progress on the bot's turn; ``roll`` when the resumed match waits for a roll (no prompt is needed: BaldLies
sends none in the Crawford game); ``join`` for the next game. Invitations, watching and tells live in
bot/fibs/social.py: a saved match is resumed by joining an invitation to resume it or by inviting the
opponent, never by joining a new match offered over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import random
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import structlog
import telnetlib3

from bot import logs
from bot.archive import Archive
from bot.config import Config, ConfigError
from bot.fibs.archiving import archive_stored
from bot.fibs.match import CubeMade, Desync, MatchTracker, MoveMade, Note, OwnRefused, TrackerError
from bot.fibs.session import (
    Backoff,
    FibsEndpoint,
    LoginRejected,
    PendingInvite,
    Session,
    decide,
    event_names,
)
from bot.fibs.social import RESUME_RETRY, RESUME_WAIT, SocialMixin
from bot.kibitz import Limiter, fill
from bot.state import MatchStatus, StateStore, StoredMatch
from engine.analyser import Analyser
from engine.errors import EngineError
from engine.ids import GameState
from engine.levels import Level, parse_level
from engine.match import MatchState
from engine.player import Player
from engine.record import Action, ActionKind
from protocols.fibs import events as ev
from protocols.fibs.client import BOARD_COMMANDS, FibsClientProtocol, FibsCommandError

# Toggles the bot needs (reference section 1.5): boards after every move and roll, no automatic doubles,
# moves or bear-offs (every move is the bot's own), the Crawford rule, the roll-or-double question.
WANTED_TOGGLES = {
    "autoboard": True,
    "autodouble": False,
    "automove": False,
    "bell": False,
    "crawford": True,
    "double": True,
    "greedy": False,
    "moreboards": True,
    "moves": False,
    "notify": True,
}
# The events _handle answers itself (its isinstance ladder); every other event goes to the match.
SESSION_EVENTS = frozenset(
    {
        ev.AwayReminder, ev.ConnectionTimedOut, ev.GameSaved, ev.Invitation, ev.JoinHint, ev.JoinNextGame,
        ev.LoginFailed, ev.LoginPrompt, ev.MatchJoined, ev.MatchResumed, ev.NoSavedGames, ev.NothingToWatch,
        ev.OwnInfo, ev.PlayerLeftGame, ev.PlayerLoggedOut, ev.Prompt, ev.SavedCount, ev.SavedMatch,
        ev.SavedMatchWarning, ev.SavedMatchesHeader, ev.Says, ev.ServerNotice, ev.ServerShutdown,
        ev.StoppedWatching, ev.Unknown, ev.UnknownCommand, ev.Watching, ev.Welcome, ev.WhoInfo,
    }
)  # fmt: skip
GOOD_SESSION = 60.0  # seconds logged in after which the next reconnect starts from the first delay again
TICK = 0.25  # seconds between timer checks while nothing arrives
LEFT_PAUSE = 300.0  # GammonBot: no resume invitation for 5 minutes after the opponent left the game
_ERROR_PREFIXES = (
    "You can't",
    "It's not your turn",
    "You have to",
    "You must",
    "Please don't give",
    "You can only double",
    "Please wait until",
    "You're not allowed",
    "There's nothing",
)
_EOF = object()
_WAKE = object()


class FibsBot(SocialMixin):
    """One account on one FIBS-style server; see the module docstring."""

    def __init__(
        self,
        endpoint: FibsEndpoint,
        config: Config,
        analyser: Analyser,
        store: StateStore,
        archive: Archive | None,
        *,
        executor: Executor | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.endpoint = endpoint
        self.config = config
        self.analyser = analyser
        self.store = store
        self.archive = archive  # None: someone else archives (the embedded server)
        self.executor = executor
        self.rng = rng or random.Random()
        self.clock = clock
        self.log = logs.get(server=endpoint.name, user=endpoint.user)
        d = config.daemon
        self.backoff = Backoff(d.reconnect_initial, d.reconnect_max, self.rng)
        self.limiter = Limiter(config.kibitz.min_interval, clock)
        self.connected = False
        self.logged_in = False
        self.sessions = 0
        self.matches_finished = 0
        self._session: Session | None = None
        self._draining = False
        self._drain_deadline: float | None = None
        self._stopped = asyncio.Event()
        self._match: MatchTracker | None = None
        self._watch: MatchTracker | None = None
        self._watching: str | None = None
        self._match_asked_at = -1e9  # when the bot last joined or invited someone (no watch soon after)
        self._watch_over: tuple[str, str] | None = None  # the players of the last watched match that ended
        self._watch_asked_at = -1e9
        self._acted: tuple[str, int] | None = None
        self._progress_at = 0.0
        self._joined_after_game = False
        self._idle_warned = False
        self._invites: dict[str, PendingInvite] = {}
        self._last_invite: str | None = None
        self._resume_pause: dict[str, float] = {}  # opponent -> no resume invitation before this time
        self._players: dict[str, Player] = {}
        self._background: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"<FibsBot {self.endpoint.user}@{self.endpoint.name} logged_in={self.logged_in}>"

    # -- status and control -------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        m = self._match
        return {
            "server": self.endpoint.name,
            "user": self.endpoint.user,
            "connected": self.connected,
            "logged_in": self.logged_in,
            "match": None if m is None else {"key": m.key, "opponent": m.names[1], "gnubg_id": m.gnubg_id},
            "watching": self._watching,
            "draining": self._draining,
            "matches_finished": self.matches_finished,
        }

    @property
    def active_match(self) -> bool:
        return self._match is not None and not self._match.finished

    def drain(self, grace: float) -> None:
        """Stop taking invitations; finish the running match within ``grace`` seconds or save it; log out."""
        if self._draining:
            return
        self._draining = True
        self._drain_deadline = self.clock() + grace
        self.log.info("draining", grace=grace, match=self._match.key if self._match else None)
        if self._session is None:
            self._stopped.set()  # not connected: stop waiting for the next attempt
        self._wake()

    def _wake(self) -> None:
        if self._session is not None:
            self._session.queue.put_nowait(_WAKE)

    # -- the reconnect loop ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect and play until drained (the task is cancelled to abort)."""
        while not self._draining:
            started = self.clock()
            try:
                await self._connect_and_serve()
                error = None
            except ConfigError as exc:
                self.log.error("cannot log in", error=str(exc))
                return
            except (
                LoginRejected
            ) as exc:  # the operator must act: say so loudly, keep retrying with the backoff
                self.log.error(
                    "login refused: wrong password (or no such account) for the bot's own user",
                    account=self.endpoint.user,
                    host=self.endpoint.host,
                    port=self.endpoint.port,
                )
                error = f"{type(exc).__name__}: {exc}"
            except (OSError, ConnectionError, TimeoutError, EOFError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # a bug must not end the bot: log it, reconnect after the backoff
                self.log.exception("session failed")
                error = f"{type(exc).__name__}: {exc}"
            finally:
                self.connected = self.logged_in = False
                self._session = None
                if self._match is not None:
                    self._persist(self._match)  # the server saves a match when the connection goes
                    self._end()
                self._watch = self._watching = None
                self._watch_asked_at = -1e9  # watching ends with the connection: ask again at once
                self._invites.clear()
            if self._draining:
                break
            if self.clock() - started >= GOOD_SESSION:
                self.backoff.reset()
            delay = self.backoff.next()
            self.log.info("reconnecting", delay=round(delay, 2), error=error)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._stopped.wait()
        for task in list(self._background):
            task.cancel()
        self.log.info("stopped")

    async def _connect_and_serve(self) -> None:
        d = self.config.daemon
        async with asyncio.timeout(d.login_timeout):
            reader, writer = await telnetlib3.open_connection(
                self.endpoint.host, self.endpoint.port, encoding=False, connect_maxwait=0.05
            )
        self.connected = True
        self.sessions += 1
        session = Session(FibsClientProtocol(), writer, asyncio.Queue(), self.clock())
        self._session = session
        self.log.info("connected", host=self.endpoint.host, port=self.endpoint.port)
        reader_task = asyncio.create_task(self._read(reader, session))
        try:
            await self._serve(session)
        finally:
            reader_task.cancel()
            with contextlib.suppress(Exception):
                writer.close()
            # asyncio.wait neither raises the reader's end nor swallows a cancellation of this task
            await asyncio.wait([reader_task])

    async def _read(self, reader: Any, session: Session) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                for event in session.protocol.receive_data(bytes(data)):
                    session.queue.put_nowait(event)
            for event in session.protocol.receive_eof():
                session.queue.put_nowait(event)
        except (OSError, ConnectionError) as exc:
            self.log.info("read failed", error=str(exc))
        finally:
            session.queue.put_nowait(_EOF)

    async def _serve(self, session: Session) -> None:
        d = self.config.daemon
        while True:
            if session.logged_in_at is None and self.clock() - session.connected_at > d.login_timeout:
                raise TimeoutError(f"not logged in after {d.login_timeout:.0f} s")
            # asyncio.timeout, not wait_for: in Python 3.11 wait_for can swallow a cancellation that races
            # with the queue's answer, and a cancelled bot must stop
            try:
                async with asyncio.timeout(TICK):
                    item = await session.queue.get()
            except TimeoutError:
                item = _WAKE
            batch = [item]
            while not session.queue.empty():
                batch.append(session.queue.get_nowait())
            for event in batch:
                if event is _EOF:
                    raise EOFError("the server closed the connection")
                if isinstance(event, ev.FibsEvent):
                    await self._handle(session, event)
            if session.logged_in_at is not None:
                await self._timers(session)
                await self._maybe_act(session)
                if self._draining and await self._drained(session):
                    await self._wait_for_close(session, 2.0)
                    return

    async def _wait_for_close(self, session: Session, timeout: float) -> None:
        """After ``bye``: let the server read it and close the connection (or give up after ``timeout``)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while (left := end - loop.time()) > 0:
            try:
                async with asyncio.timeout(left):
                    item = await session.queue.get()
            except TimeoutError:
                return
            if item is _EOF:
                return

    # -- sending --------------------------------------------------------------------------------------------

    async def _send(self, session: Session, data: bytes, what: str | None = None) -> None:
        if not data:
            return
        self.store.commit()  # what led to this command is stored before it goes (StateStore.commit_later)
        spacing = self.config.daemon.command_spacing
        wait = session.last_sent + spacing - self.clock()
        if wait > 0:
            await asyncio.sleep(wait)
        session.writer.write(data)
        session.last_sent = self.clock()
        if what is not None:
            self.log.debug("sent", command=what)
        drain = getattr(session.writer, "drain", None)
        if drain is not None:
            with contextlib.suppress(ConnectionError):
                await drain()

    async def _command(self, session: Session, data: bytes) -> None:
        """Send a command that carries no secret: it is logged as sent."""
        await self._send(session, data, data.decode("utf-8", "replace").strip())

    # -- events ---------------------------------------------------------------------------------------------

    async def _handle(self, session: Session, event: ev.FibsEvent) -> None:
        kind = type(event)  # every event class derives from FibsEvent directly: the type is exact
        if kind is ev.WhoInfo:  # most lines a bot reads: the who updates of every user on the server
            session.who[event.name] = event  # type: ignore[attr-defined]
            return
        if kind not in SESSION_EVENTS:  # a match's events: no walk down the ladder below
            await self._on_match_event(session, event)
            return
        p = session.protocol
        if isinstance(event, ev.LoginPrompt | ev.Prompt | ev.LoginFailed):
            if session.logged_in_at is not None:
                return
            if session.login_sent:
                raise LoginRejected(f"the server refused the login of {self.endpoint.user}")
            password = self.endpoint.password()
            await self._send(session, p.login(self.endpoint.client_name, self.endpoint.user, password))
            session.login_sent = True
            return
        if isinstance(event, ev.Welcome):
            session.logged_in_at = self.clock()
            self.logged_in = True
            self.log.info("logged in", last_login=event.last_login)
            return
        if isinstance(event, ev.OwnInfo):
            await self._set_up(session, event)
            return
        if isinstance(event, ev.PlayerLoggedOut):
            session.who.pop(event.name, None)
            if event.name == self._watching:  # not every server says "You're not watching anymore"
                self.log.info("the watched player logged out", player=event.name)
                self._watching = None
                self._watch = None
            m = self._match
            if m is not None and not m.finished and event.name == m.names[1]:
                # FIBS also says "... The game was saved."; BaldLies sends only this CLIP 8 line
                self.log.info("match saved by the server", reason="the opponent logged out", by=event.name)
                self._persist(m)
                self._end()
            return
        if isinstance(event, ev.SavedMatch):
            session.saved_on_server[event.opponent] = event
            return
        if isinstance(event, ev.NoSavedGames | ev.SavedMatchesHeader):
            session.saved_on_server.clear()  # each listing replaces the last one
            return
        if isinstance(event, ev.AwayReminder):
            await self._command(session, p.back())
            return
        if isinstance(event, ev.Invitation | ev.JoinHint | ev.SavedMatchWarning | ev.SavedCount):
            self._on_invitation_line(session, event)
            return
        if isinstance(event, ev.MatchJoined):
            await self._on_match_joined(session, event)
            return
        if isinstance(event, ev.MatchResumed):
            await self._on_match_resumed(session, event)
            return
        if isinstance(event, ev.Says):
            await self._on_tell(session, event)
            return
        if isinstance(event, ev.Watching):
            self._watching = event.player
            self._watch_over = None  # a new watch sees no last board of a match that ended before it
            self.log.info("watching", player=event.player)
            if self.active_match:  # a watch asked for before the match began: play only
                await self._stop_watching(session)
            return
        if isinstance(event, ev.StoppedWatching | ev.NothingToWatch):
            if self._watching == event.player or isinstance(event, ev.NothingToWatch):
                self._watching = None
                self._watch = None
            return
        if isinstance(event, ev.GameSaved | ev.PlayerLeftGame):
            await self._on_saved(session, event)
            return
        if isinstance(event, ev.ServerNotice):
            await self._on_notice(session, event)
            return
        if isinstance(event, ev.JoinNextGame):
            m = self._match
            if m is not None and not m.finished and not self._joined_after_game:
                self._joined_after_game = True
                await self._command(session, p.join())
            return
        if isinstance(event, ev.UnknownCommand):
            await self._on_unknown_command(session, event)
            return
        if isinstance(event, ev.Unknown):
            if event.reason:
                self.log.warning("unreadable line", line=event.raw[:200], reason=event.reason)
            return
        if isinstance(event, ev.ServerShutdown | ev.ConnectionTimedOut):
            self.log.warning("server notice", text=event.raw)
            return
        await self._on_match_event(session, event)

    async def _set_up(self, session: Session, info: ev.OwnInfo) -> None:
        """Toggles from CLIP 2 made what the bot needs, sending only those that differ."""
        p = session.protocol
        await self._command(session, p.set_variable("boardstyle", 3))
        wanted = {**WANTED_TOGGLES, "ready": not self._draining}
        for name, value in wanted.items():
            with contextlib.suppress(FibsCommandError):
                await self._command(session, p.set_toggle(name, value))
        if info.away:
            await self._command(session, p.back())
        await self._command(session, p.show_saved())
        session.set_up = True

    # -- the match ------------------------------------------------------------------------------------------

    def _new_tracker(self, opponent: str, length: int) -> MatchTracker:
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        shared = self.endpoint.match_key(self.endpoint.user, opponent) if self.endpoint.match_key else None
        if shared:
            return MatchTracker(
                key=shared,
                server=self.endpoint.name,
                names=(self.endpoint.user, opponent),
                length=length,
                started=now,
            )
        # the random tail keeps two matches begun in the same second apart (in the store and the archive)
        key = f"{self.endpoint.name}/{self.endpoint.user}-{opponent}/{now:%Y%m%dT%H%M%SZ}-{self.rng.getrandbits(16):04x}"
        return MatchTracker(
            key=key,
            server=self.endpoint.name,
            names=(self.endpoint.user, opponent),
            length=length,
            started=now,
        )

    def _stored_tracker(self, opponent: str) -> MatchTracker | None:
        stored = self.store.find_active(self.endpoint.name, self.endpoint.user, opponent)
        if stored is None:
            return None
        try:
            return MatchTracker.restore(stored.snapshot)
        except TrackerError as exc:
            self.log.error("cannot restore a stored match", match=stored.key, error=str(exc))
            self.store.set_status(stored.key, MatchStatus.ABANDONED)
            return None

    def _begin(self, tracker: MatchTracker) -> None:
        self._match = tracker
        self._acted = None
        self._progress_at = self.clock()
        self._joined_after_game = False
        self._idle_warned = False
        structlog.contextvars.bind_contextvars(match=tracker.key, opponent=tracker.names[1])
        self._persist(tracker)

    def _end(self) -> None:
        self._match = None
        self._acted = None
        structlog.contextvars.unbind_contextvars("match", "opponent")

    async def _on_match_joined(self, session: Session, event: ev.MatchJoined) -> None:
        old = self._stored_tracker(event.opponent)
        if old is not None:
            # Joining a new match discards the saved one on FIBS: keep what we have of it.
            self.log.warning("a new match replaces a saved one", old=old.key)
            await self._close_match(old, MatchStatus.ABANDONED, "the server replaced it by a new match")
        self._match_began(session, event.opponent)
        await self._stop_watching(session)
        length = 0 if event.unlimited or event.length is None else event.length
        tracker = self._new_tracker(event.opponent, length)
        self._begin(tracker)
        self.log.info("match started", length=length)
        greeting = self.config.kibitz.greeting
        if greeting:
            text = fill(greeting, opponent=event.opponent, me=self.endpoint.user, length=length)
            await self._say(session, event.opponent, text)

    async def _on_match_resumed(self, session: Session, event: ev.MatchResumed) -> None:
        self._match_began(session, event.opponent)
        await self._stop_watching(session)
        tracker = self._stored_tracker(event.opponent)
        if tracker is None:
            self._end()  # the first board tells what match this is
        else:
            self._begin(tracker)
        self.log.info("match resumed", opponent=event.opponent, known=tracker is not None)
        await self._request_board(session)

    def _tracker_for_board(self, board: Any) -> MatchTracker | None:
        """The played match a ``board:You:...`` line belongs to, created when the bot had lost track of it."""
        m = self._match
        if m is not None and not m.finished:
            if m.names[1] == board.opponent:
                return m
            # never another match's board in ours, nor in its place (issue 28 item 8: BaldLies had the bot
            # playing and watching at once)
            self.log.warning("a board of another match is ignored", line=board.line()[:120])
            return None
        if board.turn == 0:
            return None  # between games or after a match: nothing to follow
        tracker = self._stored_tracker(board.opponent)
        if tracker is None:
            length = 0 if board.unlimited else board.match_length
            tracker = self._new_tracker(board.opponent, length)
            self.log.info("following a match the bot had no record of", length=length)
        self._begin(tracker)
        return tracker

    async def _on_match_event(self, session: Session, event: ev.FibsEvent) -> None:
        if isinstance(event, ev.Board):
            board = event.board
            if board.watching:
                await self._on_watched_event(session, event)
                return
            tracker = self._tracker_for_board(board)
            if tracker is None:
                return
            self._progress_at = self.clock()
        else:
            tracker = self._match
            names = event_names(event)
            if tracker is None or (names and not ({ev.YOU, *tracker.names} & names)):
                await self._on_watched_event(session, event)
                return
        before = tracker.version
        notes = tracker.feed(event)
        if isinstance(event, ev.CannotMove) and event.player == ev.YOU:
            await self._request_board(session)
        if isinstance(event, ev.ResignRejected) and event.player != ev.YOU:
            await self._request_board(session)  # FIBS may not send a board after a rejected resignation
        await self._after_feed(session, tracker, notes, before)

    async def _after_feed(
        self, session: Session, tracker: MatchTracker, notes: list[Note], before: int
    ) -> None:
        if tracker.version != before:
            self._progress_at = self.clock()
            self._idle_warned = False
        for note in notes:
            if isinstance(note, Desync):
                self.log.warning("match view corrected", reason=note.reason)
            elif isinstance(note, OwnRefused):
                self.log.warning("the server did not take an action", action=str(note.action))
            elif isinstance(note, MoveMade | CubeMade) and note.player != 0:
                self._comment(session, tracker, note)
        if tracker.state is not None and tracker.state.game_state == GameState.PLAYING:
            self._joined_after_game = False
        if tracker.finished:
            await self._finish(session, tracker)
        elif tracker.version != before:
            self._persist(tracker)

    def _persist(self, tracker: MatchTracker, status: MatchStatus = MatchStatus.ACTIVE) -> None:
        self.store.put(
            StoredMatch(
                key=tracker.key,
                server=tracker.server,
                player=tracker.names[0],
                opponent=tracker.names[1],
                length=tracker.length,
                status=status,
                snapshot=tracker.snapshot_text(),  # the steps encoded once, not again at every event
                started=tracker.started.isoformat(),
                watched=tracker.watching,
                gnubg_id=tracker.gnubg_id,
            )
        )

    async def _finish(self, session: Session, tracker: MatchTracker) -> None:
        state = tracker.state
        score = list(state.score) if state is not None else None
        self.log.info("match over", score=score, complete_record=not tracker.record_note)
        await self._close_match(tracker, MatchStatus.FINISHED, "")
        if tracker is self._match:
            self.matches_finished += 1
            farewell = self.config.kibitz.farewell
            if farewell:
                text = fill(farewell, opponent=tracker.names[1], me=self.endpoint.user, length=tracker.length)
                await self._say(session, tracker.names[1], text)
            self._end()

    async def _close_match(self, tracker: MatchTracker, status: MatchStatus, why: str) -> None:
        """Store the match as over (or abandoned), then archive it and mark it archived: exactly once, since a
        crash in between leaves a FINISHED row that ``recover_unarchived`` completes."""
        if why:
            tracker.record_note = tracker.record_note or why
        if self.archive is None:  # the server archives it: one write, no FINISHED row for a restart to redo
            self._persist(tracker, MatchStatus.ARCHIVED if status == MatchStatus.FINISHED else status)
            return
        self._persist(tracker, MatchStatus.FINISHED if status == MatchStatus.FINISHED else status)
        stored = self.store.get(tracker.key)
        assert stored is not None
        try:
            name = archive_stored(self.archive, stored, self.log)
        except (TrackerError, EngineError, OSError) as exc:
            self.log.error("archiving failed; retried at the next start", error=str(exc))
            return
        final = MatchStatus.ARCHIVED if status == MatchStatus.FINISHED else status
        self.store.set_status(tracker.key, final, name)
        self.log.info("archived", file=name or None, complete=not tracker.record_note)

    async def _on_saved(self, session: Session, event: ev.GameSaved | ev.PlayerLeftGame) -> None:
        m = self._match
        if isinstance(event, ev.PlayerLeftGame):
            if self._watch is not None and event.player in self._watch.names:
                self._watch = None
            return
        if m is None:
            return
        self.log.info("match saved by the server", reason=event.reason, by=event.player)
        if event.player != ev.YOU:
            self._resume_pause[m.names[1]] = self.clock() + (LEFT_PAUSE if event.reason == "left" else 0.0)
        self._persist(m)
        self._end()

    async def _on_notice(self, session: Session, event: ev.ServerNotice) -> None:
        text = event.text
        if text.startswith("There's no saved match with "):
            name = text[len("There's no saved match with ") :].split(".")[0].strip()
            session.saved_on_server.pop(name, None)
            await self._lost_match(name)
            return
        if text.endswith("is refusing games.") or "is already playing" in text:
            name = text.split()[0]
            self._resume_pause[name] = self.clock() + RESUME_RETRY
            return
        if self._match is not None and text.startswith(_ERROR_PREFIXES):
            # The board the bot asks for shows whether its last action was taken (bot/fibs/match.py).
            self.log.warning("server error", text=text)
            await self._request_board(session)

    async def _lost_match(self, opponent: str) -> None:
        """The server has no saved match that the store holds: it ended (or expired) while the bot was away."""
        tracker = self._stored_tracker(opponent)
        if tracker is None:
            return
        finished = tracker.state is not None and tracker.state.match_over
        self.log.warning("the server no longer knows a stored match", match=tracker.key, finished=finished)
        if finished:
            tracker.finished = True
            await self._close_match(tracker, MatchStatus.FINISHED, "")
        else:
            await self._close_match(tracker, MatchStatus.ABANDONED, "the server no longer knows this match")

    async def _request_board(self, session: Session) -> None:
        """Ask for the board; on a server without one, the bot decides again from its own view (a roll or move
        it sent again is refused harmlessly) and the next board the server sends corrects it."""
        if self._match is not None:
            self._match.board_requested()
        self._acted = None
        if session.board_command is not None:
            await self._command(session, session.protocol.board(session.board_command))

    async def _say(self, session: Session, opponent: str, text: str) -> None:
        """Say ``text`` to the opponent of the match: by kibitz, or by tell where the server has no kibitz."""
        p = session.protocol
        with contextlib.suppress(FibsCommandError):
            if session.has_kibitz:
                session.last_kibitz = (opponent, text)
                await self._command(session, p.kibitz(text))
            else:
                await self._command(session, p.tell(opponent, text))

    async def _on_unknown_command(self, session: Session, event: ev.UnknownCommand) -> None:
        """Learn that the server lacks kibitz (tell the opponent instead, the lost line too), whisper (say
        nothing to watchers) or the board command in use (take the next one, ``b``, or none)."""
        word = event.command.strip().lower()
        if word in ("kibitz", "k") and session.has_kibitz:
            session.has_kibitz = False
            lost, session.last_kibitz = session.last_kibitz, None
            self.log.info("the server has no kibitz: the opponent is told instead", line=event.raw)
            if lost is not None:
                await self._say(session, *lost)
            return
        if word == "whisper" and session.has_whisper:
            session.has_whisper = False
            self.log.info("the server has no whisper: watchers get no verdicts", line=event.raw)
            return
        used = session.board_command
        if used is None or word != used:
            return
        following = BOARD_COMMANDS.index(used) + 1
        session.board_command = BOARD_COMMANDS[following] if following < len(BOARD_COMMANDS) else None
        self.log.info("the server has no board command", command=used, instead=session.board_command)
        if self._match is not None and not self._match.finished:
            await self._request_board(session)

    # -- acting ---------------------------------------------------------------------------------------------

    def _player_for(self, opponent: str) -> Player:
        player = self._players.get(opponent)
        if player is None:
            engine = self.config.engine
            level: Level = parse_level(engine.opponent_levels.get(opponent) or engine.level)
            if engine.cube_level:  # cube decisions at their own depth and noise
                cube = parse_level(engine.cube_level)
                level = dataclasses.replace(level, cube_plies=cube.cube_depth, cube_noise=cube.cube_noise)
            player = Player(self.analyser, level, rng=random.Random(self.rng.random()))
            self._players[opponent] = player
        return player

    async def _run_engine(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, fn, *args)

    async def _maybe_act(self, session: Session) -> None:
        m = self._match
        if m is None or not m.due():
            return
        mark = (m.key, m.version)
        if self._acted == mark:
            return
        state = m.state
        assert state is not None
        try:
            action: Action | None = await self._run_engine(decide, self._player_for(m.names[1]), state)
        except EngineError as exc:
            self.log.error("the engine failed", error=str(exc), state=state.gnubg_id)
            self._acted = mark
            return
        if self._match is not m or m.version != mark[1] or session is not self._session:
            return  # the match moved on while the engine thought: decide again on the new state
        self._acted = mark
        await self._perform(session, m, state, action)

    async def _perform(
        self, session: Session, m: MatchTracker, state: MatchState, action: Action | None
    ) -> None:
        p = session.protocol
        if action is None:
            await self._command(session, p.roll())
            return
        kind = action.kind
        if kind == ActionKind.MOVE and not action.move:
            return  # no legal play: the server passes by itself ("You can't move.")
        try:
            m.act(action)
        except EngineError as exc:  # a view the engine's rules refuse: ask the server rather than act
            self.log.error("the bot's action does not apply", action=str(action), error=str(exc))
            await self._request_board(session)
            return
        self._persist(m)  # stored before acting
        if kind == ActionKind.MOVE:
            assert action.move is not None
            await self._command(session, p.move(action.move, m.direction))
        elif kind == ActionKind.DOUBLE:
            await self._command(session, p.double())
        elif kind in (ActionKind.TAKE, ActionKind.ACCEPT):
            await self._command(session, p.accept())
        elif kind in (ActionKind.DROP, ActionKind.REJECT):
            await self._command(session, p.reject())
        elif kind == ActionKind.RESIGN:
            await self._command(session, p.resign(action.level))

    # -- timers ---------------------------------------------------------------------------------------------

    async def _timers(self, session: Session) -> None:
        now = self.clock()
        d = self.config.daemon
        p = session.protocol
        if not session.set_up:
            return
        await self._decide_invitations(session)
        m = self._match
        if m is not None and not m.finished and m.state is not None:
            idle = now - self._progress_at
            s = m.state
            ours = (s.game_state == GameState.PLAYING and s.turn == 0) or m.awaiting_echo
            if ours and idle > d.stall_timeout:
                self.log.info("no progress: asking for the board", seconds=round(idle, 1))
                self._progress_at = now
                await self._request_board(session)
            elif s.game_state != GameState.PLAYING and idle > d.stall_timeout and not self._joined_after_game:
                self._joined_after_game = True
                await self._command(session, p.join())
            elif not ours:
                await self._idle_opponent(session, m, idle)
        elif not self._draining and not self.active_match:  # a match begun, its first board still to come
            await self._invite_saved(session)
            if now - self._match_asked_at > RESUME_WAIT:  # a match may begin: watch later
                await self._watch_by_config(session)
        if now - session.last_sent > d.keepalive:
            await self._command(session, p.show_saved())

    async def _idle_opponent(self, session: Session, m: MatchTracker, idle: float) -> None:
        policy = self.config.policy
        opponent = m.names[1]
        if idle > policy.idle_leave:
            self.log.info("opponent idle: leaving (the match is saved)", seconds=round(idle))
            await self._say(session, opponent, f"{opponent}, you seem away; the match is saved.")
            await self._command(session, session.protocol.leave())
            self._resume_pause[opponent] = self.clock() + RESUME_RETRY
            self._persist(m)
            self._end()
        elif idle > policy.idle_warning and not self._idle_warned:
            self._idle_warned = True
            await self._say(session, opponent, f"Are you there, {opponent}?")

    async def _drained(self, session: Session) -> bool:
        """During a drain: once no match runs (or the grace is over, the match saved by ``leave``), log out."""
        p = session.protocol
        if session.set_up and p.toggles.get("ready"):
            await self._command(session, p.set_toggle("ready", False))
        overdue = self._drain_deadline is not None and self.clock() >= self._drain_deadline
        if self.active_match and not overdue:
            return False
        if self.active_match and overdue:
            m = self._match
            assert m is not None
            self.log.info("grace over: saving the match")
            await self._command(session, p.leave())
            self._persist(m)
            self._end()
        if not session.bye_sent:
            session.bye_sent = True
            await self._command(session, p.bye())
        self._stopped.set()
        return True
