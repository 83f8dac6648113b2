"""The bridge between the embedded FIBS server and its web clients: one hub per daemon, in the server's loop.

A logged-in web user is one more ``Session`` of the FIBS server (see ``bot.web.connection``): the same
account, the same invitations, seats and watches, so a web user and a telnet user (or the bot) play the same
match. What the web needs beyond the FIBS text comes from the tables themselves: the server tells the hub
after every change of a table (``FibsServer.table_listeners``), and the hub follows each live match's record
(``protocols.web.views.RecordFollower``) to send every player and spectator on the web the events, a board
drawn for them (with the legal plays for the one to move) and, for spectators, the engine's kibitz of each
move. Guests watch without a FIBS session; a logged-in spectator also watches at the FIBS server, so the
players see them there too.

Everything runs in the event loop without awaiting, except the kibitz, which a single worker thread computes
one move at a time so that analysis never holds up play.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bot.server.server import FibsServer
from bot.server.session import Session
from bot.server.table import Table
from bot.web.kibitz import KibitzError, analyse_cube, analyse_move
from engine.analyser import Analyser
from engine.record import ActionKind, MatchRecord
from protocols.web import messages as wm
from protocols.web.views import FollowError, RecordFollower, Step, board_view, event_message

log = logging.getLogger("gammond.web")

LOBBY_INTERVAL = 2.0  # seconds between checks of the lobby for changes the hub was not told about
LOBBY_DELAY = 0.05  # seconds a burst of changes is gathered before the lobby is sent
MAX_KIBITZ_BACKLOG = 500  # moves waiting for analysis before new ones are skipped
OFFERS = (ActionKind.DOUBLE, ActionKind.BEAVER, ActionKind.RESIGN)  # actions that leave a decision open


class Viewer(Protocol):
    """What the hub needs of a web connection (``bot.web.connection.WebConnection``)."""

    session: Session | None
    watching: tuple[str, int] | None  # (match id, seat drawn at the bottom)

    def send(self, message: wm.Message) -> None: ...

    def send_text(self, text: str) -> None: ...


@dataclass(eq=False)
class LiveMatch:
    """The hub's view of one live table: where its record has been followed to and its kibitzes."""

    table: Table
    follower: RecordFollower
    seq: int = 0
    kibitzes: list[wm.Kibitz] = field(default_factory=list)
    cubes: list[wm.CubeKibitz] = field(default_factory=list)
    score: tuple[int, int] | None = None  # the score the lobby last showed
    players: set[Viewer] = field(default_factory=set)  # web connections seated at the table
    spectators: set[Viewer] = field(default_factory=set)
    closed: bool = False
    audience: frozenset[Viewer] = frozenset()  # once closed: who still gets the kibitzes not yet analysed
    held: list[wm.Kibitz | wm.CubeKibitz] = field(default_factory=list)  # verdicts not to be shown yet

    @classmethod
    def start(cls, table: Table) -> LiveMatch:
        """A new match is followed from its start (its first game's start is an event; so is that of a
        match saved before its first move, which looks the same); a resumed one from where it stands."""
        record = table.record
        fresh = len(record.games) <= 1 and not any(g.actions for g in record.games)
        if fresh:
            return cls(table, RecordFollower(record.initial_state()))
        return cls(table, RecordFollower(table.state, record))

    def settled(self, verdict: wm.Kibitz | wm.CubeKibitz, record: MatchRecord | None = None) -> bool:
        """Whether ``verdict`` may be shown: no decision it would help with is still open. A play's verdict
        gives the chances of the position the opponent now decides on (double, take, accept a resignation),
        a double's its take/pass verdict: each waits for the next action that is not an offer (or the end of
        its game). A take, pass or no-double is judged after the fact and shown at once."""
        if isinstance(verdict, wm.CubeKibitz) and verdict.action not in ("double", "beaver"):
            return True
        games = (record or self.table.record).games
        if self.table.finished or len(games) > verdict.game:
            return True
        if len(games) < verdict.game:
            return False
        game = games[verdict.game - 1]
        return game.result is not None or any(a.kind not in OFFERS for a in game.actions[verdict.index :])

    def release(self) -> list[wm.Kibitz | wm.CubeKibitz]:
        """The held verdicts that may now be shown, taken out of ``held``."""
        record = self.table.record  # built once: the table makes it anew each time
        done = [self.settled(k, record) for k in self.held]
        out = [k for k, ok in zip(self.held, done, strict=True) if ok]
        self.held = [k for k, ok in zip(self.held, done, strict=True) if not ok]
        return out

    def follow(self) -> list[Step]:
        try:
            steps = self.follower.follow(self.table.record)
        except FollowError as exc:
            log.warning("match %s: %s; following from its state now", self.table.id, exc)
            self.follower = RecordFollower(self.table.state, self.table.record)
            return []
        if self.follower.state != self.table.state:
            log.warning(
                "match %s: followed state differs from the table's; following from it now", self.table.id
            )
            self.follower = RecordFollower(self.table.state, self.table.record)
        return steps


class WebHub:
    """All web connections of one FIBS server, and the live matches they play or watch."""

    def __init__(
        self,
        server: FibsServer,
        analyser: Analyser | None,
        *,
        kibitz: bool = True,
        accepts: wm.Accepts | None = None,
    ) -> None:
        self.server = server
        self.analyser = analyser if kibitz else None
        self.accepts = accepts  # the bots' invitation policy: the lengths they accept
        self.viewers: set[Viewer] = set()
        self.by_session: dict[Session, Viewer] = {}
        self.matches: dict[str, LiveMatch] = {}
        self._lobby_text = ""
        self._lobby_handle: asyncio.TimerHandle | None = None
        self._kibitz_queue: asyncio.Queue[tuple[LiveMatch, Step]] = asyncio.Queue()
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="gammond-kibitz")
        self._tasks: list[asyncio.Task[None]] = []
        self.kibitz_skipped = 0
        server.table_listeners.append(self.table_changed)

    def __repr__(self) -> str:
        return f"<WebHub viewers={len(self.viewers)} matches={len(self.matches)}>"

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._lobby_loop()))
        if self.analyser is not None:
            self._tasks.append(asyncio.create_task(self._kibitz_worker()))
        for table in list(self.server.tables.values()):  # matches already running when the web starts
            self.table_changed(table)

    async def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.server.table_listeners.remove(self.table_changed)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._lobby_handle is not None:
            self._lobby_handle.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- connections ----------------------------------------------------------------------------------------

    def add(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)

    def remove(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        self.unwatch(viewer)
        for session, v in list(self.by_session.items()):
            if v is viewer:
                del self.by_session[session]
        self.lobby_changed()

    def logged_in(self, viewer: Viewer, session: Session) -> None:
        self.by_session[session] = viewer
        self.lobby_changed()

    def logged_out(self, session: Session) -> None:
        self.by_session.pop(session, None)
        self.lobby_changed()

    # -- spectating -----------------------------------------------------------------------------------------

    def watch(self, viewer: Viewer, match_id: str, seat: int) -> bool:
        """Start sending ``viewer`` the match (its board now and its analysis so far); False if not live."""
        live = self.matches.get(match_id)
        if live is None or live.closed:
            table = self.server.tables.get(match_id)
            if table is None:
                return False
            self.table_changed(table)
            live = self.matches.get(match_id)
            if live is None:
                return False
        self.unwatch(viewer)
        viewer.watching = (match_id, seat)
        live.spectators.add(viewer)
        viewer.send(self._view(live, seat, None))
        viewer.send(wm.Analysis(match_id, tuple(live.kibitzes), tuple(live.cubes)))
        self.lobby_changed()
        return True

    def unwatch(self, viewer: Viewer) -> None:
        if viewer.watching is None:
            return
        live = self.matches.get(viewer.watching[0])
        if live is not None:
            live.spectators.discard(viewer)
        viewer.watching = None
        self.lobby_changed()

    # -- the tables -----------------------------------------------------------------------------------------

    def table_changed(self, table: Table) -> None:
        """The FIBS server's listener: ``table`` changed (or left the server: finished or saved)."""
        in_play = self.server.tables.get(table.id) is table
        live = self.matches.get(table.id)
        if live is None:
            if not in_play:
                return
            live = self.matches[table.id] = LiveMatch.start(table)
            self.lobby_changed()
        live.seq += 1
        steps = live.follow()
        events = [wm.render(event_message(step, match=table.id, seq=live.seq)) for step in steps]
        if self.analyser is not None:
            for step in steps:
                if _wants_kibitz(step):
                    self._queue_kibitz(live, step)
        if table.state.score != live.score:  # the lobby shows the new score at once
            live.score = table.state.score
            self.lobby_changed()
        if in_play:
            self._update_players(live)
        for viewer in live.players | live.spectators:
            for text in events:
                viewer.send_text(text)
        if live.held:  # the actions just sent may settle the verdicts held back
            self._publish(live, live.release())
        if in_play:
            self._send_boards(live)
        else:
            self._close_match(live)

    def _update_players(self, live: LiveMatch) -> None:
        table = live.table
        for name in table.names:
            session = self.server.online.get(name)
            viewer = self.by_session.get(session) if session is not None else None
            if (
                viewer is not None
                and session is not None
                and session.table is table
                and viewer not in live.players
            ):
                live.players.add(viewer)
                self.unwatch(viewer)  # a spectator who sits down plays
        live.players = {
            v
            for v in live.players
            if v.session is not None and v.session.table is table and v in self.viewers
        }

    def _view(self, live: LiveMatch, bottom_seat: int, viewer_seat: int | None) -> wm.BoardView:
        table = live.table
        state = table.state
        may_beaver = (
            table.length == 0
            and table.redoubles > 0
            and state.doubled
            and not state.beavered
            and viewer_seat is not None
            and viewer_seat != state.on_roll
        )
        return board_view(
            state,
            match=table.id,
            seq=live.seq,
            bottom_seat=bottom_seat,
            viewer_seat=viewer_seat,
            joined=table.joined,
            may_beaver=may_beaver,
        )

    def _send_boards(self, live: LiveMatch) -> None:
        for viewer in live.players:
            session = viewer.session
            if session is not None and session.seat in (0, 1):
                viewer.send(self._view(live, session.seat, session.seat))
        rendered: dict[int, str] = {}  # one text per bottom seat, shared by all spectators
        for viewer in live.spectators:
            seat = viewer.watching[1] if viewer.watching else 0
            if seat not in rendered:
                rendered[seat] = wm.render(self._view(live, seat, None))
            viewer.send_text(rendered[seat])

    def _close_match(self, live: LiveMatch) -> None:
        table = live.table
        live.closed = True
        winner = table.state.winner
        closed = wm.MatchClosed(
            table.id,
            "finished" if table.finished else "saved",
            None if winner is None else table.names[winner],
        )
        if table.finished:  # the players get the analysis once the match is over, not when it is saved
            for viewer in live.players:
                viewer.send(wm.Analysis(table.id, tuple(live.kibitzes), tuple(live.cubes)))
            live.audience = frozenset(live.players | live.spectators)
        else:
            live.audience = frozenset(live.spectators)
        for viewer in live.players | live.spectators:
            viewer.send(closed)
        for viewer in live.spectators:
            if viewer.watching and viewer.watching[0] == table.id:
                viewer.watching = None
        live.spectators.clear()
        live.players.clear()
        del self.matches[table.id]
        self.lobby_changed()

    # -- kibitz ---------------------------------------------------------------------------------------------

    def _queue_kibitz(self, live: LiveMatch, step: Step) -> None:
        if self._kibitz_queue.qsize() >= MAX_KIBITZ_BACKLOG:
            self.kibitz_skipped += 1
            return
        self._kibitz_queue.put_nowait((live, step))

    async def _kibitz_worker(self) -> None:
        loop = asyncio.get_running_loop()
        analyser = self.analyser
        assert analyser is not None
        while True:
            live, step = await self._kibitz_queue.get()
            try:
                found = await loop.run_in_executor(self._executor, _kibitz_of, analyser, live.table.id, step)
            except (KibitzError, ValueError) as exc:
                log.warning("kibitz of %s in %s failed: %s", step.action, live.table.id, exc)
                continue
            except RuntimeError:  # the executor was shut down: the hub is closing
                return
            if not found:
                continue
            ready: list[wm.Kibitz | wm.CubeKibitz] = []
            for kibitz in found:
                if not live.settled(kibitz):
                    live.held.append(kibitz)  # sent once settled (a saved match drops it)
                else:
                    ready.append(kibitz)
            self._publish(live, ready)

    def _publish(self, live: LiveMatch, found: Sequence[wm.Kibitz | wm.CubeKibitz]) -> None:
        """Add verdicts on decisions already taken to the match's analysis and send them to its spectators
        (once the match is closed, to its last audience)."""
        if not found:
            return
        for kibitz in found:
            if isinstance(kibitz, wm.CubeKibitz):
                live.cubes.append(kibitz)
            else:
                live.kibitzes.append(kibitz)
        text = [wm.render(k) for k in found]
        for viewer in live.audience if live.closed else live.spectators:
            if viewer in self.viewers:
                for line in text:
                    viewer.send_text(line)

    # -- the lobby ------------------------------------------------------------------------------------------

    def lobby(self) -> wm.Lobby:
        server = self.server
        web_watchers: dict[str, int] = {}
        for live in self.matches.values():
            web_watchers[live.table.id] = sum(1 for v in live.spectators if v.session is None)
        players = []
        for session in sorted(server.online.values(), key=lambda s: (s.name or "").lower()):
            account = session.account
            if account is None:
                continue
            players.append(
                wm.PlayerInfo(
                    name=account.name,
                    bot=account.bot,
                    ready=session.toggles.get("ready", False),
                    away=session.away is not None,
                    playing=session.opponent,
                    watching=session.watching,
                    rating=round(account.rating, 2),
                    experience=account.experience,
                    web=session in self.by_session,
                    accepts=self.accepts if account.bot else None,
                )
            )
        matches = []
        for table in sorted(server.tables.values(), key=lambda t: t.id):
            fibs_watchers = sum(
                1 for s in server.online.values() if s.watching in table.names and s.table is None
            )
            matches.append(
                wm.MatchInfo(
                    id=table.id,
                    players=table.names,
                    length=table.length,
                    score=table.state.score,
                    watchers=fibs_watchers + web_watchers.get(table.id, 0),
                )
            )
        return wm.Lobby(tuple(players), tuple(matches))

    def lobby_changed(self) -> None:
        """Send the lobby soon (a burst of changes makes one message)."""
        if self._lobby_handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._lobby_handle = loop.call_later(LOBBY_DELAY, self._push_lobby)

    def _push_lobby(self) -> None:
        self._lobby_handle = None
        text = wm.render(self.lobby())
        if text == self._lobby_text:
            return
        self._lobby_text = text
        for viewer in self.viewers:
            viewer.send_text(text)

    async def _lobby_loop(self) -> None:
        """Logins, logouts and status changes at the FIBS side reach the web within LOBBY_INTERVAL."""
        while True:
            await asyncio.sleep(LOBBY_INTERVAL)
            try:
                self._push_lobby()
            except Exception:  # one bad lobby must not stop the updates for good (a stale score)
                log.exception("lobby update failed")


CUBE_STEPS = ("double", "take", "drop")


def _wants_kibitz(step: Step) -> bool:
    """A move, a cube action, or a roll that could have been a double (its no-double gets a verdict)."""
    action = step.action
    if action is None:
        return False
    if step.kind in CUBE_STEPS:
        return True
    # a roll, or a move whose roll was not seen apart, may follow a cube decision
    if step.kind in ("roll", "move") and not step.before.dice[0] and step.before.may_double(action.player):
        return True
    return step.kind == "move" and action.kind == ActionKind.MOVE


def _kibitz_of(analyser: Analyser, match: str, step: Step) -> list[wm.Kibitz | wm.CubeKibitz]:
    """The kibitzes of a followed step (run in the worker thread): the no-double before a roll, then the
    move; or the verdict on a double, take or pass."""
    action = step.action
    if action is None:
        return []
    where = {"match": match, "game": step.game, "index": step.index}
    if step.kind in CUBE_STEPS:
        cube = analyse_cube(analyser, step.before, step.kind, **where)  # type: ignore[arg-type]
        return [cube] if cube is not None else []
    found: list[wm.Kibitz | wm.CubeKibitz] = []
    before = step.before
    if not before.dice[0]:
        if before.may_double(action.player):
            cube = analyse_cube(analyser, before, "no_double", **where)  # type: ignore[arg-type]
            if cube is not None:
                found.append(cube)
        if action.dice is None:
            return found
        before = before.roll(action.dice)
    if step.kind == "move" and action.move is not None:
        found.append(analyse_move(analyser, before, action.move, **where))  # type: ignore[arg-type]
    return found
