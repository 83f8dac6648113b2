"""The bgammon bot: the bot on a bgammon server (bgammon.org and its clones), over TCP or WebSocket.

One ``BgammonBot`` per ``[servers.<name>]`` entry with ``protocol = "bgammon"``; the daemon starts
``run_bgammon_bot`` as one asyncio task per entry. What the bot does, as bgammon expects of bots
(../shared/reference/engines-and-strength.md, section 2):

* logs in with ``loginjson`` as a ``bot_`` account (the server shows it as ``BOT_...``);
* creates public matches of the configured lengths, one at a time, and waits: bots may not join players'
  matches;
* plays at the configured level (per opponent if ``engine.opponent_levels`` names them), doubles, takes with
  ``ok`` and drops with ``resign``, weighing a drop at what bgammon charges for it (protocols/bgammon/board.py, ``win_level``);
* when a match ends, archives it as ``.mat`` (match.py builds the record; a record the
  tracker could not follow to the end is archived as far as it goes, marked partial, with the reason in its
  comment), says goodbye and offers a rematch; with none accepted in ``rematch_wait`` seconds it leaves and
  creates the next match;
* writes something at least every ``keepalive`` seconds (the server drops clients silent for 40 s), answers
  pings, and treats ``read_timeout`` seconds without any event as a dead connection;
* reconnects after any failure with capped, jittered exponential backoff; the server puts a returning player
  back into its match, and the record of that match goes on.

Engine decisions run in an executor (a worker thread) so that the connection stays served meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from bot import logs
from bot.archive import Archive
from bot.bgammon import decisions, persist
from bot.bgammon.archiving import archive_match
from bot.bgammon.link import Closed, Link, open_link
from bot.bgammon.match import MatchTracker
from bot.bgammon.session import BgammonOptions, backoff_delay, parse_address
from bot.config import Config, ConfigError, ServerConfig
from bot.state import MatchStatus, StateStore
from engine.analyser import Analyser
from engine.errors import EngineError
from engine.levels import Level, parse_level
from engine.moves import Move, legal_plays
from engine.player import Action, Player
from engine.position import Position
from protocols.bgammon import codec
from protocols.bgammon import events as ev
from protocols.bgammon.board import BgammonBoardError, BoardState, win_level

__all__ = ["BgammonBot", "make_bgammon_bot", "run_bgammon_bot"]


class _Placeholders(dict[str, object]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fill(template: str, **values: object) -> str:
    """``template`` with ``{opponent}``, ``{me}`` and ``{length}`` filled; other braces are left as written."""
    try:
        return template.format_map(_Placeholders(values))
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


_NOT_SEATED = "the server did not seat the bot back in this match after a reconnection (a server restart?)"


@dataclass(frozen=True, slots=True)
class _Plan:
    """The engine's play for one turn: the position and dice it was chosen for, and where it leads."""

    start: Position
    dice: tuple[int, int]
    move: Move
    target: Position


@dataclass
class _Match:
    """The match we sit in: its ID, its tracker, and what we are waiting for."""

    game_id: int
    tracker: MatchTracker | None = None
    opponent: str = ""
    player: Player | None = None
    over: bool = False
    archived: bool = False
    greeted: bool = False
    key: str = ""  # the row in the state store ("" until the opponent is known)
    started: str = ""  # the row's start time, kept in every rewrite ("" until first stored)
    board: BoardState | None = None  # the last board seen


class BgammonBot:
    """The bot for one bgammon server. ``run(stop)`` connects, plays and reconnects until ``stop`` is set."""

    def __init__(
        self,
        server: ServerConfig,
        analyser: Analyser,
        archive: Archive,
        options: BgammonOptions | None = None,
        *,
        level: Callable[[str], Level] | None = None,
        rng: random.Random | None = None,
        password: Callable[[], str] | None = None,
        executor: Executor | None = None,
        store: StateStore | None = None,
    ) -> None:
        self.server = server
        self.store = store  # the match is kept there before each action (None: only in memory)
        self.address = parse_address(server.address)
        self.analyser = analyser
        self.archive = archive
        self.options = options or BgammonOptions()
        self._level = level or (lambda _opponent: parse_level("expert"))
        self._rng = rng or random.Random()
        self._password = password or server.password
        self.executor = executor  # engine work runs here (None: asyncio's default thread pool)
        self.log = logs.get(server=server.name, protocol="bgammon", address=str(self.address))
        self.user = server.user if server.user.lower().startswith("bot_") else f"bot_{server.user}"
        # kept across reconnections
        self.matches_created = 0
        self.archived: list[str] = []  # archive keys written by this bot
        self.connections = 0
        self.attempts = 0
        self._match: _Match | None = None
        self._lost: _Match | None = None  # given up after a reconnection; the server may still seat us in it
        # per connection
        self._link: Link | None = None
        self._name = ""
        self._last_sent = 0.0
        self._acted: tuple[Any, ...] | None = None
        self._failures = 0
        self._plan: _Plan | None = None  # the engine's play of this turn, sent one step at a time
        self._board: BoardState | None = None  # the last board of our match, for the logs
        self.refused_moves = 0  # ``failedmove`` answers to our steps, since the bot started
        self.plays_differing = 0  # turns that ended in another position than the engine's play
        self._win_seen = False
        self._rejoined = False
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self._stop: asyncio.Event | None = None
        # for the daemon's health and drain
        self.connected = False
        self.logged_in = False
        self.error: str | None = None  # why the last login or connection failed, in the server's words
        self.draining = False
        self._persisted = ""  # the last row written, to skip unchanged ones

    def __repr__(self) -> str:
        return f"<BgammonBot {self.server.name} {self.address} user={self.user}>"

    # -- status, drain and the state store ---------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """For the daemon's /healthz and heartbeat, in the FIBS bots' form."""
        m = self._match
        return {
            "server": self.server.name,
            "protocol": "bgammon",
            "user": self.user,
            "connected": self.connected,
            "logged_in": self.logged_in,
            "error": self.error,
            "match": None
            if m is None or m.over or not m.opponent
            else {"key": m.key, "opponent": m.opponent, "game": m.game_id},
            "draining": self.draining,
            "matches_finished": len(self.archived),
        }

    def drain(self, grace: float) -> None:
        """The daemon's first SIGTERM: create no match and offer no rematch; a running match has ``grace``
        seconds to end (it is stored before every action either way), then the bot disconnects. ``disconnect``
        leaves the server's seat open (unlike ``leave``): the bot is seated back when it logs in again."""
        if self.draining:
            return
        self.draining = True
        m = self._match
        running = m is not None and not m.over and bool(m.opponent) and self._link is not None
        self.log.info("bgammon.draining", grace=grace, game=m.game_id if running and m else None)
        self._cancel("create")
        self._cancel("rematch")
        if running:
            self._later("drain", grace, self._drained)
        else:
            self._drained()

    def _drained(self) -> None:
        m = self._match
        if m is not None and not m.over and m.opponent:
            self.log.info("bgammon.match_saved", game=m.game_id, key=m.key)
        if self._stop is not None:
            self._stop.set()

    def _persist(self, match: _Match, b: BoardState, status: MatchStatus = MatchStatus.ACTIVE) -> None:
        """Store ``match`` as of board ``b`` (before the bot acts on it); unchanged rows are not written again."""
        if self.store is None or match.tracker is None:
            return
        if not match.key:
            match.key = persist.new_key(self.server.name, match.game_id)
        row = persist.stored_match(
            match.key,
            self.server.name,
            self.user,
            match.game_id,
            match.opponent,
            match.tracker,
            b,
            status,
            match.started,
        )
        # encoded once, as StateStore.put would: compared with the last row, then written as it is
        snapshot = json.dumps(row.snapshot, separators=(",", ":"))
        text = f"{row.status} {snapshot}"
        if text == self._persisted:
            return
        match.started = row.started
        self.store.put(dataclasses.replace(row, snapshot=snapshot))
        self._persisted = text

    def _restore(self) -> None:
        """At start: archive what a crash left finished; take back the newest unfinished match (the server
        seats the bot in it again at login); older ones cannot be played on."""
        if self.store is None:
            return
        recovered = persist.recover_unarchived(self.store, self.archive, self.log, self.server.name)
        if recovered:
            self.log.info("bgammon.recovered", archived=recovered)
        rows = [r for r in self.store.active(self.server.name, self.user) if persist.is_bgammon(r)]
        for stored in rows[:-1] if self._match is None else rows:
            self.log.error(
                "bgammon.match_abandoned", key=stored.key, reason="a newer match was stored after it"
            )
            self.store.set_status(stored.key, MatchStatus.ABANDONED)
        if self._match is not None or not rows:
            return
        stored = rows[-1]
        try:
            game_id, opponent, tracker = persist.restore(stored)
        except EngineError as exc:
            self.log.error("bgammon.restore_failed", key=stored.key, error=str(exc))
            self.store.set_status(stored.key, MatchStatus.ABANDONED)
            return
        self._match = _Match(
            game_id,
            tracker,
            opponent,
            Player(self.analyser, self._level(opponent), self._rng),
            greeted=True,
            key=stored.key,
            started=stored.started,
            board=persist.last_board(stored),  # for the archive key, should the server not seat us again
        )
        self.log.info("bgammon.match_restored", game=game_id, key=stored.key, opponent=opponent)

    # -- connection loop ---------------------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        attempt = 0
        self._stop = stop
        self._restore()
        while not stop.is_set():
            welcomed = False
            self.attempts += 1
            try:
                link = await open_link(self.address, self.options.connect_timeout)
            except Exception as exc:  # refused, unreachable, TLS or WebSocket handshake failures alike
                self.error = f"cannot connect: {type(exc).__name__}: {exc}"
                self.log.warning("bgammon.connect_failed", error=f"{type(exc).__name__}: {exc}")
            else:
                self.connections += 1
                self.connected = True
                self.log.info("bgammon.connected", connection=self.connections)
                try:
                    await self._session(link, stop)
                except (TimeoutError, Closed, OSError) as exc:
                    self.log.warning("bgammon.disconnected", error=f"{type(exc).__name__}: {exc}")
                except ConfigError as exc:
                    self.log.error("bgammon.config_error", error=str(exc))
                    return
                except Exception:  # a bug must not end the task: log it and start afresh
                    self.log.exception("bgammon.session_error")
                finally:
                    welcomed = bool(self._name)
                    self.connected = self.logged_in = False
                    self._end_session()
                    await link.close()
            if stop.is_set():
                break
            if welcomed:
                attempt = 0
            delay = backoff_delay(attempt, self.options.backoff_base, self.options.backoff_cap, self._rng)
            attempt += 1
            self.log.info("bgammon.reconnect_wait", seconds=round(delay, 2), attempt=attempt)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
        self.log.info("bgammon.stopped", archived=len(self.archived))

    async def _session(self, link: Link, stop: asyncio.Event) -> bool:
        """One connection: log in, then handle events until it closes or ``stop`` is set."""
        self._link = link
        self._name = ""
        self._acted = None
        self._failures = 0
        self._rejoined = False
        password = self._password()
        await self._send(codec.login_json(self.options.client, self.user, password), log_line=False)
        self.log.info("bgammon.login", user=self.user)
        keepalive = asyncio.create_task(self._keepalive())
        stopper = asyncio.create_task(stop.wait())
        receive: asyncio.Future[list[ev.BgammonEvent]] | None = None
        try:
            while not stop.is_set():
                receive = asyncio.ensure_future(link.receive())
                done, _ = await asyncio.wait(
                    {receive, stopper}, timeout=self.options.read_timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if receive not in done:
                    receive.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Closed, OSError):
                        await receive
                    if stop.is_set():
                        break
                    raise TimeoutError(f"nothing from the server for {self.options.read_timeout} s")
                for event in receive.result():
                    await self._on_event(event)
            if stop.is_set():
                with contextlib.suppress(Closed, OSError):
                    await self._send(codec.disconnect())
        finally:
            keepalive.cancel()
            stopper.cancel()
            if receive is not None:
                receive.cancel()  # a read left pending by an abort: its error would go unretrieved
            with contextlib.suppress(asyncio.CancelledError):
                await keepalive
        return bool(self._name)

    def _end_session(self) -> None:
        self._link = None
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()

    async def _keepalive(self) -> None:
        while True:
            idle = time.monotonic() - self._last_sent
            if idle >= self.options.keepalive:
                with contextlib.suppress(Closed, OSError):
                    await self._send(codec.pong("keepalive"))
                idle = 0.0
            await asyncio.sleep(max(0.05, self.options.keepalive - idle))

    async def _send(self, line: str, log_line: bool = True) -> None:
        if self._link is None:
            return
        if self.store is not None:
            self.store.commit()  # what led to this command is stored before it goes (StateStore.commit_later)
        if log_line:
            self.log.debug("bgammon.send", line=codec.redact(line))
        self._last_sent = time.monotonic()
        await self._link.send(line)

    def _later(self, name: str, delay: float, action: Callable[[], Any]) -> None:
        """Run ``action`` (sync or async) in ``delay`` seconds, replacing a timer of the same name."""
        self._cancel(name)

        def fire() -> None:
            self._timers.pop(name, None)
            result = action()
            if asyncio.iscoroutine(result):
                task = asyncio.ensure_future(self._guard(result))
                self._tasks.add(task)  # keep a reference until it is done
                task.add_done_callback(self._tasks.discard)

        self._timers[name] = asyncio.get_running_loop().call_later(delay, fire)

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except (Closed, OSError) as exc:
            self.log.warning("bgammon.send_failed", error=str(exc))

    def _cancel(self, name: str) -> None:
        handle = self._timers.pop(name, None)
        if handle is not None:
            handle.cancel()

    # -- events ------------------------------------------------------------------------------------------------

    async def _on_event(self, event: ev.BgammonEvent) -> None:
        match event:
            case ev.Ping():
                await self._send(codec.pong(event.message))
            case ev.Welcome():
                self._name = event.player_name
                self.logged_in, self.error = True, None
                self.log.info("bgammon.welcome", name=self._name, clients=event.clients, games=event.games)
                if not self.draining:
                    self._later("create", self.options.create_delay, self._create)
            case ev.Joined():
                await self._on_joined(event)
            case ev.Left():
                await self._on_left(event)
            case ev.Board():
                await self._on_board(event.state)
            case ev.Win():
                self._on_win(event)
            case ev.Failure():
                await self._on_failure(event)
            case ev.Say():
                self.log.info("bgammon.say", player=event.player, message=event.message[:200])
            case ev.Notice() if event.message.startswith("Connection terminated"):
                # the server's last words before it closes the connection: a refused login (no such account,
                # a wrong password, the name in use, a ban) or a kick
                self.error = event.message[:300]
                what = "bgammon.terminated" if self._name else "bgammon.login_refused"
                self.log.error(what, user=self.user, reason=event.message[:300])
            case ev.Notice():
                self.log.info("bgammon.notice", message=event.message[:300])
            case ev.Malformed():
                self.log.warning("bgammon.malformed", error=event.error, text=event.text[:200])
            case ev.Unhandled() | ev.TextLine() | ev.MatchList() | ev.Rolled() | ev.Moved():
                self.log.debug("bgammon.event", kind=type(event).__name__)

    async def _create(self) -> None:
        if self._link is None or self.draining:
            return
        if self._match is not None:
            if self._rejoined:
                return
            # we were in a match before the connection broke and the server did not put us back (yet: on a
            # slow link its ``joined`` may come after create_delay, and then the match and its record go on)
            if self._played(self._match):
                self.log.warning("bgammon.match_lost", game=self._match.game_id, reason=_NOT_SEATED)
            else:  # a match that only waited for an opponent
                self.log.info(
                    "bgammon.match_gone", game=self._match.game_id, lost="nothing: no game was played"
                )
            self._lost, self._match = self._match, None
            if self.store is not None and self._lost.key:
                self.store.set_status(self._lost.key, MatchStatus.ABANDONED)  # active again if taken back
                self._persisted = ""
        length = self.options.lengths[self.matches_created % len(self.options.lengths)]
        self.matches_created += 1
        self.log.info("bgammon.create", length=length)
        await self._send(codec.create(length, name=self.options.match_name))

    async def _on_joined(self, event: ev.Joined) -> None:
        if event.player_number == 1 and event.player == self._name:
            lost, self._lost = self._lost, None
            if self._match is None and lost is not None and lost.game_id == event.game_id and not lost.over:
                self._match = lost
            current = self._match
            self._rejoined = True
            if current is not None and current.game_id == event.game_id and not current.over:
                self.log.info("bgammon.rejoined", game=event.game_id)  # back after a reconnection
            else:
                self._match = _Match(event.game_id)
                self.log.info("bgammon.joined", game=event.game_id)
                if lost is not None and lost is not current and not lost.over and self._played(lost):
                    self._abandon(lost, _NOT_SEATED)  # not taken back: it is over for us
            self._cancel("create")
            self._cancel("rematch")
            self._acted = None
        elif event.player_number == 2 and self._match is not None:
            self._cancel("opponent_gone")
            self._acted = None  # what we sent while the opponent was away was ignored: decide again
            self.log.info("bgammon.opponent_joined", opponent=event.player, game=self._match.game_id)

    async def _on_left(self, event: ev.Left) -> None:
        match = self._match
        if event.player == self._name:
            self.log.info("bgammon.left", game=match.game_id if match else None)
            self._match = None
            self._acted = None
            self._later("create", 0.0, self._create)
        elif match is not None and event.player == match.opponent:
            if match.over:
                self._cancel("rematch")
                await self._send(codec.leave())
            else:
                self.log.info("bgammon.opponent_left", opponent=event.player, wait=self.options.opponent_wait)
                self._later("opponent_gone", self.options.opponent_wait, self._give_up)

    async def _give_up(self) -> None:
        reason = f"the opponent left and did not come back within {self.options.opponent_wait:g} s"
        self.log.warning("bgammon.leaving", reason=reason)
        if self._match is not None and not self._match.over:
            self._abandon(self._match, reason)
        await self._send(codec.leave())

    async def _on_failure(self, event: ev.Failure) -> None:
        if isinstance(event, ev.FailedMove):
            # never expected: every step goes out alone, listed by the server as available. The next board
            # gives the steps of the same play again (``_decide``)
            self.refused_moves += 1
            b = self._board
            self.log.error(
                "bgammon.move_refused",
                line=codec.encode_event(event)[:300],
                board=list(b.board) if b else None,
                dice=b.dice if b else None,
                steps=b.moves if b else None,
                plan=str(self._plan.move) if self._plan else None,
            )
        else:
            self.log.warning("bgammon.refused", kind=event.TYPE, reason=event.reason[:300])
        if isinstance(event, ev.FailedCreate):
            self.matches_created -= 1  # the same length again
            self._later("create", self.options.create_retry, self._create)
            return
        if isinstance(event, ev.FailedJoin | ev.FailedLeave):
            return
        self._failures += 1
        if self._failures >= self.options.max_failures:
            self.log.error("bgammon.giving_up_match", failures=self._failures)
            self._failures = 0
            if self._match is not None and not self._match.over:
                self._abandon(
                    self._match, f"the server refused {self.options.max_failures} commands in a row"
                )
            await self._send(codec.leave())
            return
        self._acted = None  # decide again on a fresh board
        await self._send(codec.board())

    def _on_win(self, event: ev.Win) -> None:
        self._win_seen = True
        match = self._match
        if match is not None and match.tracker is not None:
            match.tracker.on_event(event)
            if match.board is not None and not match.over:
                self._persist(match, match.board)  # a restart must not see the next game begin unended
        self.log.info("bgammon.game_won", winner=event.player, points=event.points, resigned=event.resigned)

    async def _on_board(self, b: BoardState) -> None:
        match = self._match
        if match is None or b.spectating:
            return
        if b.player2.name and not match.opponent:
            match.opponent = b.player2.name
        if match.opponent and match.tracker is None and self._name:
            names = (self._name, match.opponent)
            match.tracker = MatchTracker(names, b.points, site=self.server.name, event="bgammon")
            match.player = Player(self.analyser, self._level(match.opponent), self._rng)
        self._board = b
        if match.tracker is not None:
            match.tracker.on_event(ev.Board(state=b))
            match.board = b
            if not b.winner and not match.over:
                self._persist(match, b)  # before acting on it: a restart goes on from here
        if match.opponent and not match.greeted and b.player2.name:
            match.greeted = True
            await self._say(self.options.greeting, match, b.points)
        if b.winner:
            if self._win_seen and not match.over:
                await self._match_over(match, b)
            self._win_seen = False
            return
        self._win_seen = False
        await self._act(match, b)

    async def _say(self, template: str, match: _Match, length: int) -> None:
        if not template:
            return
        text = _fill(template, opponent=match.opponent, me=self._name, length=length)
        try:
            await self._send(codec.say(text))
        except codec.BgammonCommandError as exc:
            self.log.warning("bgammon.say_failed", error=str(exc))

    # -- the match's end ------------------------------------------------------------------------------------

    async def _match_over(self, match: _Match, b: BoardState) -> None:
        match.over = True
        won = b.winner == 1
        self.log.info("bgammon.match_over", opponent=match.opponent, won=won, score=b.score, length=b.points)
        self._archive(match, b)
        await self._say(self.options.farewell, match, b.points)
        if self.draining:  # no rematch: the drain is over with this match
            self._cancel("drain")
            self._drained()
            return
        await self._send(codec.rematch())
        self._later("rematch", self.options.rematch_wait, self._leave_after_match)

    async def _leave_after_match(self) -> None:
        if self._match is not None and self._match.over:
            await self._send(codec.leave())

    @staticmethod
    def _played(match: _Match) -> bool:
        record = match.tracker.record() if match.tracker is not None else None
        return record is not None and bool(record.games)

    def _abandon(self, match: _Match, reason: str) -> None:
        """A match left before its end: what was played is archived, marked partial with ``reason``."""
        match.over = True
        if not self._played(match) or match.board is None:
            self.log.info(
                "bgammon.abandoned", game=match.game_id, reason=reason, lost="nothing: no game was played"
            )
            return
        self.log.warning("bgammon.abandoned", game=match.game_id, reason=reason, opponent=match.opponent)
        self._archive(match, match.board, reason)

    def _archive(self, match: _Match, b: BoardState, reason: str | None = None) -> None:
        # stored as finished first: a crash before the file is written leaves a row the next start archives
        self._persist(match, b, MatchStatus.FINISHED)
        key = archive_match(
            self.archive,
            self.server.name,
            match.game_id,
            match.opponent,
            match.tracker,
            b,
            self.log,
            reason=reason,
        )
        if key is not None:
            match.archived = True
            self.archived.append(key)
            if self.store is not None and match.key:
                self.store.set_status(match.key, MatchStatus.ARCHIVED, key)

    # -- decisions ------------------------------------------------------------------------------------------

    async def _act(self, match: _Match, b: BoardState) -> None:
        what = decisions.situation(b)
        if what is None:
            if b.turn == 2:
                self._plan = None
                self._failures = 0
            return
        key = (what, b.board, b.turn, b.dice, b.moves, b.double_value, b.double_player, b.score)
        if key == self._acted:
            return
        self._acted = key
        line = await self._decide(match, b, what)
        if line:
            await self._send(line)

    async def _decide(self, match: _Match, b: BoardState, what: str) -> str | None:
        if what == "opening":
            return codec.roll()
        if what == "confirm":
            self._check_play(b)
            return codec.ok()
        plan = self._plan
        if plan is not None and plan.dice == b.dice and (what == "reset" or plan.start == b.position(1)):
            return self._step(plan, b)  # the next step of the play chosen for this turn
        if what == "reset":
            return codec.reset()  # steps we did not choose (we came back into the turn): start afresh
        player = match.player
        try:
            if player is None:
                raise BgammonBoardError("no player for this match")
            state = b.match_state((self._name, match.opponent or b.player2.name))
            if what == "answer":
                level = win_level(b.position(2))
                take = await self._engine(decisions.answer, player, state, level)
                self.log.info("bgammon.answer", take=take, cube=state.cube * 2, drop_level=level)
                return codec.ok() if take else codec.resign()
            decision = await self._engine(player.decide, state)
        except EngineError as exc:
            # a state the engine cannot judge (a match longer than its equity table ...): play on safely
            self.log.error("bgammon.no_decision", situation=what, error=str(exc))
            if what != "move":
                return {"answer": codec.ok(), "cube": codec.roll()}[what]
            play = legal_plays(b.position(1), b.dice)[0]  # any legal play, sent as any other
            return self._step(self._new_plan(b, play.move, play.position), b)
        if what == "cube":
            if decision.action == Action.RESIGN and win_level(b.position(2)) <= decision.level:
                self.log.info("bgammon.resign", level=decision.level)
                return codec.resign()
            if decision.action == Action.DOUBLE and b.may_double():
                self.log.info("bgammon.double", cube=state.cube * 2)
                return codec.double()
            return codec.roll()
        if decision.move is None or not decision.move.play.move:
            self.log.error("bgammon.no_play", dice=b.dice, available=b.available)  # the server lists steps
            return codec.ok()
        play = decision.move.play
        return self._step(self._new_plan(b, play.move, play.position), b)

    def _new_plan(self, b: BoardState, move: Move, target: Position) -> _Plan:
        start = b.position(1)
        self._plan = _Plan(start, b.dice, move, target)
        self.log.info("bgammon.play", position=start.position_id, dice=b.dice, move=str(move))
        return self._plan

    def _step(self, plan: _Plan, b: BoardState) -> str:
        """The next step of ``plan`` from board ``b``, alone in its ``move`` command; ``reset`` (take the steps
        back) when the board is off the way to the play."""
        step = decisions.next_step(b, plan.target, plan.move)
        if step is not None:
            return codec.move(Move.of(step))
        self.log.error(
            "bgammon.play_off_course", plan=str(plan.move), dice=b.dice, steps=b.moves, board=list(b.board)
        )
        if b.moves:
            return codec.reset()
        # the server will not let the play be made at all (its rules and the engine's differ): the first
        # legal play it does allow, as a last resort, logged as a play of its own
        for play in legal_plays(b.position(1), b.dice):
            step = decisions.next_step(b, play.position, play.move)
            if step is not None:
                self._new_plan(b, play.move, play.position)
                return codec.move(Move.of(step))
        return codec.ok()

    def _check_play(self, b: BoardState) -> None:
        """At the end of our turn: the position is the one the engine's play leads to."""
        plan, self._plan = self._plan, None
        if plan is None or plan.dice != b.dice:
            return
        if b.position(1) != plan.target:
            self.plays_differing += 1
            self.log.error(
                "bgammon.play_differs", plan=str(plan.move), steps=b.moves, board=list(b.board), dice=b.dice
            )

    async def _engine(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)


def make_bgammon_bot(
    server_config: ServerConfig,
    config: Config,
    analyser: Analyser,
    archive: Archive,
    *,
    options: BgammonOptions | None = None,
    executor: Executor | None = None,
    store: StateStore | None = None,
) -> BgammonBot:
    """The bot of one ``[servers.<name>]`` entry with ``protocol = "bgammon"``, as the daemon runs it (its
    ``status()`` in /healthz, ``drain(grace)`` on the first SIGTERM). A bad address raises BgammonAddressError
    (a ConfigError) at once. ``executor`` runs the engine's decisions: pass the one the FIBS bots use to share
    (and serialise) it; ``store`` keeps the match across restarts."""
    engine = config.engine

    def level_for(opponent: str) -> Level:
        return parse_level(engine.opponent_levels.get(opponent) or engine.level)

    return BgammonBot(
        server_config,
        analyser,
        archive,
        options or BgammonOptions.from_config(config),
        level=level_for,
        executor=executor,
        store=store,
    )


async def run_bgammon_bot(
    server_config: ServerConfig,
    config: Config,
    analyser: Analyser,
    archive: Archive,
    stop_event: asyncio.Event,
    *,
    options: BgammonOptions | None = None,
    executor: Executor | None = None,
    store: StateStore | None = None,
) -> None:
    """Plays on that server until ``stop_event`` is set, then disconnects (the server seats the bot in its match
    again when it logs in within the server's grace); see ``make_bgammon_bot``."""
    bot = make_bgammon_bot(
        server_config, config, analyser, archive, options=options, executor=executor, store=store
    )
    await bot.run(stop_event)
