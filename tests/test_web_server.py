"""The web port end to end on loopback: static files, the WebSocket protocol against the embedded FIBS server,
and the bridge between them (a web user against a telnet user or the bot, FIBS and web spectators, chat,
refusals, logins that replace each other, leaving and dropping), plus the engine's kibitz."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import websockets

from bench.spectator_verdicts import too_early
from bot.config import EmbeddedServerConfig, PolicyConfig
from bot.server.scripted import RandomPlayer, ScriptedClient
from bot.server.server import FibsServer
from bot.server.store import WEB_LOGINS_KEPT, Store
from bot.web import start_web
from bot.web.kibitz import KibitzError, analyse_cube, analyse_move
from bot.web.server import WebService
from engine.analyser import Analyser
from engine.dice import MersenneDice
from engine.match import MatchState, Rules
from engine.moves import Move, legal_plays
from engine.notation import format_fibs
from engine.position import Position
from protocols.fibs import events as ev
from protocols.fibs.board import Side
from protocols.web import messages as wm

FAST_HASH = 1 << 8
PASSWORD = "secret1"


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser.default()


class WebClient:
    """A WebSocket client reading the server through the protocol codec (each message checked)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.messages: list[wm.Message] = []
        self.times: list[float] = []
        self._cursor = 0
        self._arrived = asyncio.Event()
        self.closed = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                self.messages.append(wm.parse_server(text))
                self.times.append(time.perf_counter())
                self._arrived.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed.set()
            self._arrived.set()

    async def send(self, message: wm.Message | dict[str, Any] | str) -> None:
        if isinstance(message, wm.Message):
            message = wm.render(message)
        elif isinstance(message, dict):
            message = json.dumps(message)
        await self.ws.send(message)

    async def expect(
        self, what: type[wm.Message] | Callable[[wm.Message], bool], timeout: float = 5.0
    ) -> Any:
        """The next unread message of that type (or passing the test); earlier ones are skipped."""
        test = (lambda m: isinstance(m, what)) if isinstance(what, type) else what
        deadline = time.monotonic() + timeout
        while True:
            while self._cursor < len(self.messages):
                message = self.messages[self._cursor]
                self._cursor += 1
                if test(message):
                    return message
            if self.closed.is_set():
                raise AssertionError(f"closed while waiting; last: {self.messages[-3:]}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"nothing matching within {timeout} s; last: {self.messages[-3:]}")
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)

    def seen(self, kind: type[wm.Message]) -> list[Any]:
        return [m for m in self.messages if isinstance(m, kind)]

    async def close(self) -> None:
        await self.ws.close()
        await self._task


class Harness:
    def __init__(self, path: Path, analyser: Analyser | None, policy: PolicyConfig | None = None) -> None:
        seeds = itertools.count(1)
        self.fibs = FibsServer(
            path,
            port=0,
            scrypt_n=FAST_HASH,
            login_delay=0.01,
            max_commands_per_second=1000.0,
            dice_factory=lambda: MersenneDice(next(seeds)),
        )
        self.web = WebService(self.fibs, analyser, port=0, policy=policy)
        self.clients: list[WebClient | ScriptedClient] = []

    async def start(self) -> None:
        await self.fibs.start()
        await self.web.start()

    async def guest(self) -> WebClient:
        ws = await websockets.connect(f"ws://127.0.0.1:{self.web.port}/ws")
        client = WebClient(ws)
        self.clients.append(client)
        await client.send(wm.Hello(wm.PROTOCOL_VERSION, "test"))
        await client.expect(wm.Welcome)
        await client.expect(wm.Lobby)
        return client

    async def user(self, name: str, *, ready: bool = True) -> WebClient:
        await self.fibs.ensure_account(name, PASSWORD)
        client = await self.guest()
        await client.send(wm.Login(name, PASSWORD))
        await client.expect(wm.LoggedIn)
        if ready:
            await client.send(wm.Ready(True))
            await client.expect(
                lambda m: isinstance(m, wm.Lobby) and any(p.name == name and p.ready for p in m.players)
            )
        return client

    async def telnet(self, name: str, *, ready: bool = True, bot: bool = False) -> ScriptedClient:
        await self.fibs.ensure_account(name, PASSWORD, bot=bot)
        client = ScriptedClient(name, PASSWORD, port=self.fibs.port)
        await client.connect()
        await client.login()
        if ready:
            client.send("toggle ready")
            await client.expect(lambda e: "ready" in e.raw)
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        await self.web.close()
        await self.fibs.close()


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(tmp_path / "server.sqlite3", None)
    await h.start()
    yield h
    await h.close()


@pytest.fixture
async def kibitz_harness(tmp_path: Path, analyser: Analyser) -> AsyncIterator[Harness]:
    h = Harness(tmp_path / "server.sqlite3", analyser)
    await h.start()
    yield h
    await h.close()


async def play_web(
    client: WebClient,
    rng: random.Random,
    until: Callable[[wm.Message], bool],
    board: wm.BoardView | None = None,
) -> wm.Message:
    """Answer every board as a player would (random legal plays), starting with ``board`` if given, until a
    message passes ``until``."""
    message: wm.Message | None = board
    while True:
        if message is None:
            message = await client.expect(lambda m: isinstance(m, wm.BoardView) or until(m), timeout=20)
        if until(message):
            return message
        assert isinstance(message, wm.BoardView)
        actions = message.actions
        if "move" in actions:
            await client.send(wm.MovePlay(rng.choice(message.legal).steps))
        elif "roll" in actions:
            await client.send(wm.Roll())
        elif "take" in actions:
            await client.send(wm.Take())
        elif "accept_resign" in actions:
            await client.send(wm.AcceptResign())
        elif "next_game" in actions:
            await client.send(wm.NextGame())
        message = None


# -- static files -------------------------------------------------------------------------------------------


async def http_get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


async def test_the_page_and_its_files_are_served_and_nothing_else(harness: Harness) -> None:
    port = harness.web.port
    status, headers, body = await http_get(port, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b'<svg id="board"' in body and b'src="/app.js"' in body
    assert "default-src 'self'" in headers["content-security-policy"]
    status, headers, body = await http_get(port, "/app.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert b"PROTOCOL_VERSION = 1" in body
    assert (await http_get(port, "/style.css"))[0] == 200
    status, headers, body = await http_get(port, "/favicon.ico")  # browsers ask for it: no 404 in the log
    assert status == 200 and headers["content-type"] == "image/x-icon"
    assert body[:4] == b"\x00\x00\x01\x00" and int(headers["content-length"]) == len(body)
    for path in ("/../server.py", "/static/app.js", "/nope", "/hub.py"):
        assert (await http_get(port, path))[0] == 404


# -- the protocol -------------------------------------------------------------------------------------------


async def test_hello_is_required_and_versioned(harness: Harness) -> None:
    url = f"ws://127.0.0.1:{harness.web.port}/ws"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 99}))
        error = wm.parse_server(await ws.recv())
        assert isinstance(error, wm.Error) and error.code == "version" and "99" in error.message
        with pytest.raises(websockets.ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 5)
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"type": "roll"}))
        error = wm.parse_server(await ws.recv())
        assert isinstance(error, wm.Error) and error.code == "unknown_type" and "hello" in error.message


async def test_bad_messages_get_typed_errors_and_the_connection_goes_on(harness: Harness) -> None:
    client = await harness.guest()
    for text, code in (
        ("{", "bad_json"),
        ('{"type":"jump"}', "unknown_type"),
        ('{"type":"move"}', "bad_field"),
    ):
        await client.send(text)
        assert (await client.expect(wm.Error)).code == code
    await client.send(wm.Invite("bob", 1))
    error = await client.expect(wm.Error)
    assert error.code == "not_logged_in" and error.request == "invite"
    await client.send(wm.ListLobby())
    assert isinstance(await client.expect(wm.Lobby), wm.Lobby)


async def test_login_register_and_logout_use_the_fibs_accounts(harness: Harness) -> None:
    await harness.fibs.ensure_account("alice", PASSWORD)
    client = await harness.guest()
    await client.send(wm.Login("alice", "wrong1"))
    error = await client.expect(wm.Error)
    assert error.code == "login_failed" and "alice" not in harness.fibs.online
    await client.send(wm.Login("alice", PASSWORD))
    me = await client.expect(wm.LoggedIn)
    assert me.name == "alice" and harness.fibs.online["alice"].client == "gammond-web"
    lobby = await client.expect(
        lambda m: isinstance(m, wm.Lobby) and any(p.name == "alice" for p in m.players)
    )
    assert [p.web for p in lobby.players if p.name == "alice"] == [True]
    await client.send(wm.Logout())
    assert (await client.expect(wm.LoggedOut)).reason == "logs out"
    assert "alice" not in harness.fibs.online
    await client.send(wm.Register("alice", PASSWORD))
    assert "alice" in (await client.expect(wm.Error)).message  # the name is taken
    await client.send(wm.Register("carol", "pass99"))
    assert (await client.expect(wm.LoggedIn)).name == "carol"
    telnet = ScriptedClient("carol", "pass99", port=harness.fibs.port)  # the same account over telnet
    await telnet.connect()
    await telnet.login()
    harness.clients.append(telnet)
    assert (await client.expect(wm.LoggedOut)).reason == "closed old connection"


async def test_a_web_user_plays_a_telnet_user_and_both_kinds_of_spectator_see_it(harness: Harness) -> None:
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    fibs_watcher = await harness.telnet("carol", ready=False)
    bob.send("invite alice 1")
    invitation = await web.expect(wm.Invitation)
    assert invitation == wm.Invitation("bob", 1)
    await web.send(wm.AcceptInvitation("bob"))
    board = await web.expect(wm.BoardView)
    assert board.player and board.names == ("alice", "bob") and board.seats == (1, 0)
    guest = await harness.guest()
    await guest.send(wm.Watch(board.match))
    watched = await guest.expect(wm.BoardView)
    assert not watched.player and watched.names == ("bob", "alice") and watched.match == board.match
    assert (await guest.expect(wm.Analysis)).kibitzes == ()  # no analyser in this harness
    fibs_watcher.send("watch alice")
    await fibs_watcher.expect(ev.Board)
    bob_task = asyncio.create_task(RandomPlayer(bob, random.Random(2)).play(30))
    closed = await play_web(web, random.Random(1), lambda m: isinstance(m, wm.MatchClosed), board)
    assert closed.reason == "finished" and closed.winner in ("alice", "bob")
    assert isinstance(await bob_task, ev.MatchWon)
    # every board of the player reached the guest too, each with the same seq and the same chequers
    web_boards = {b.seq: b for b in web.seen(wm.BoardView)}
    guest_boards = {b.seq: b for b in guest.seen(wm.BoardView)}
    later = [s for s in web_boards if s > watched.seq]
    assert later and all(s in guest_boards for s in later)
    for seq in later:
        assert guest_boards[seq].points == tuple(-n for n in reversed(web_boards[seq].points))
    assert (await guest.expect(wm.MatchClosed)).winner == closed.winner
    end = [e for e in web.seen(wm.GameEvent) if e.kind == "match_end"]
    assert len(end) == 1 and end[0].name == closed.winner
    assert fibs_watcher.seen(ev.MatchWon) or await fibs_watcher.expect(ev.MatchWon)
    assert len(fibs_watcher.seen(ev.Board)) > 3  # the telnet watcher saw the web user's match board by board


async def test_the_bot_and_a_web_user_play_through_the_same_server(kibitz_harness: Harness) -> None:
    h = kibitz_harness
    bot = await h.telnet("gammond")
    web = await h.user("alice")
    guest = await h.guest()
    await web.send(wm.Invite("gammond", 1))
    await bot.expect(ev.Invitation)
    bot.send("join alice")
    board = await web.expect(wm.BoardView)
    await guest.send(wm.Watch(board.match, 0))
    bot_task = asyncio.create_task(RandomPlayer(bot, random.Random(3)).play(30))
    await play_web(web, random.Random(4), lambda m: isinstance(m, wm.MatchClosed), board)
    await bot_task
    moves = [e for e in web.seen(wm.GameEvent) if e.kind == "move"]
    (analysis,) = web.seen(wm.Analysis)  # the players get the analysis when the match is over
    kibitzes = {(k.game, k.index): k for k in analysis.kibitzes}
    wanted = {(m.game, m.index) for m in moves}
    deadline = time.monotonic() + 10
    while set(kibitzes) != wanted and time.monotonic() < deadline:  # moves still being analysed come after
        kibitzes.update({(k.game, k.index): k for k in web.seen(wm.Kibitz)})
        await asyncio.sleep(0.05)
    assert set(kibitzes) == wanted
    for move in moves:
        k = kibitzes[(move.game, move.index)]
        assert k.name == move.name and k.equity_lost >= 0 and 0 <= k.win <= 1 and k.mwc is not None
        assert k.played == (move.text or "no move")
    spectated = {(k.game, k.index) for k in guest.seen(wm.Kibitz)}
    assert spectated and spectated <= set(kibitzes)
    assert not any(isinstance(m, wm.Kibitz) for m in web.messages[: web.messages.index(analysis)])


async def test_the_cube_and_a_resignation_cross_over_to_the_telnet_side(harness: Harness) -> None:
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    await web.send(wm.Invite("bob", 3))
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    bob_task = asyncio.create_task(RandomPlayer(bob, random.Random(6), take=1.0).play(30))
    rng = random.Random(7)
    board = await web.expect(wm.BoardView)
    while "double" not in board.actions:
        if "move" in board.actions:
            await web.send(wm.MovePlay(rng.choice(board.legal).steps))
        board = await web.expect(wm.BoardView)
    await web.send(wm.Double())
    taken = await web.expect(lambda m: isinstance(m, wm.GameEvent) and m.kind == "take")
    assert taken.name == "bob" and taken.cube == 2
    board = await web.expect(wm.BoardView)
    assert board.cube == 2 and board.cube_owner == 1  # bob owns it: the top side
    assert "move" in board.actions and "double" not in board.actions  # rolled for alice: she cannot double
    await web.send(wm.Resign("single"))
    end = await web.expect(lambda m: isinstance(m, wm.GameEvent) and m.kind == "game_end")
    assert end.name == "bob" and end.points == 2 and end.score == (0, 2)  # a single game at a 2-cube
    board = await web.expect(wm.BoardView)
    assert board.state == "between" and board.score == (0, 2)
    bob_task.cancel()


async def test_refusals_come_back_as_errors_for_the_request(harness: Harness) -> None:
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    await web.send(wm.Invite("nobody", 1))
    error = await web.expect(wm.Error)
    assert error.request == "invite" and error.code == "refused" and "nobody" in error.message
    await web.send(wm.Roll())
    assert (await web.expect(wm.Error)).request == "roll"
    await web.send(wm.Invite("bob", 3))
    assert "invited bob" in (await web.expect(wm.Notice)).text
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    board = await web.expect(wm.BoardView)
    waiting = board if "move" not in board.actions else None
    if waiting is None:  # alice opened: make her move, then she waits for bob
        await web.send(wm.MovePlay(board.legal[0].steps))
        waiting = await web.expect(lambda m: isinstance(m, wm.BoardView) and "move" not in m.actions)
    await web.send(wm.MovePlay(((24, 23),)))
    error = await web.expect(wm.Error)
    assert error.request == "move" and error.code == "refused"
    await web.send(wm.Double())
    assert (await web.expect(wm.Error)).request == "double"
    await web.send(wm.Chat("good luck", "kibitz"))
    assert await web.expect(wm.ChatLine) == wm.ChatLine("alice", "kibitz", "good luck")  # the echo
    said = await bob.expect(ev.Kibitzes)
    assert said.sender == "alice" and said.message == "good luck"
    bob.send("say thanks")
    assert await web.expect(wm.ChatLine) == wm.ChatLine("bob", "say", "thanks")


async def test_an_illegal_play_is_refused_before_it_reaches_the_table(harness: Harness) -> None:
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    await web.send(wm.Invite("bob", 1))
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    bob_task = asyncio.create_task(RandomPlayer(bob, random.Random(5)).play(30))
    board = await web.expect(lambda m: isinstance(m, wm.BoardView) and "move" in m.actions)
    empty = next(p for p in range(24, 1, -1) if board.points[p - 1] <= 0)
    await web.send(wm.MovePlay(((empty, empty - 1),)))  # no chequer of hers is there
    error = await web.expect(wm.Error)
    assert error.code == "illegal_move" and error.request == "move" and "not a legal play" in error.message
    await web.send(wm.MovePlay(board.legal[0].steps))  # the game goes on
    assert await web.expect(lambda m: isinstance(m, wm.BoardView) and m.seq > board.seq)
    bob_task.cancel()


async def test_leaving_or_dropping_saves_the_match_and_closes_it_for_spectators(harness: Harness) -> None:
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    guest = await harness.guest()
    await web.send(wm.Invite("bob", 3))
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    board = await web.expect(wm.BoardView)
    if "move" in board.actions:  # one move is played, so that the saved match has a history
        await web.send(wm.MovePlay(board.legal[0].steps))
    else:
        seen = await bob.expect(lambda e: isinstance(e, ev.Board) and e.board.on_roll is Side.PLAYER)
        first = legal_plays(seen.board.position_for_me(), seen.board.dice)[0].move
        bob.send("move " + format_fibs(first, seen.board.direction))
    await web.expect(lambda m: isinstance(m, wm.GameEvent) and m.kind == "move")
    await guest.send(wm.Watch(board.match))
    await guest.expect(wm.BoardView)
    await web.send(wm.Leave())
    assert (await web.expect(wm.MatchClosed)).reason == "saved"
    assert (await guest.expect(wm.MatchClosed)).reason == "saved"
    assert "alice has left the game" in (await bob.expect(ev.GameSaved)).raw
    assert harness.fibs.store.saved_match_between("alice", "bob") is not None
    # resumed from the web, then the web client just goes away: saved again
    await web.send(wm.Invite("bob", None))
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    before = len(web.messages)
    resumed = await web.expect(wm.BoardView)
    assert resumed.match == board.match
    assert resumed.position_id == _last_board(web, board.match, before).position_id
    assert not any(isinstance(m, wm.GameEvent) for m in web.messages[before:])  # no history replayed
    await web.close()
    assert "alice drops connection" in (await bob.expect(ev.GameSaved)).raw
    assert harness.fibs.tables == {}


async def test_a_web_client_too_slow_for_its_fibs_output_is_logged_out(harness: Harness) -> None:
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    (viewer,) = harness.web.hub.by_session.values()
    viewer.queued_bytes = 1 << 24  # as if megabytes were waiting for the browser
    bob.send("tell alice are you there?")
    assert (await web.expect(wm.LoggedOut)).reason == "drops connection"
    await asyncio.sleep(0.05)
    assert "alice" not in harness.fibs.online and all(s.name != "alice" for s in harness.fibs.sessions)


def _last_board(client: WebClient, match: str, before: int) -> wm.BoardView:
    return [m for m in client.messages[:before] if isinstance(m, wm.BoardView) and m.match == match][-1]


async def test_start_web_follows_the_config(harness: Harness) -> None:
    assert await start_web(harness.fibs, None, EmbeddedServerConfig(web_port=0)) is None
    service = await start_web(harness.fibs, None, EmbeddedServerConfig(web_port=_free_port()))
    assert service is not None and service.port > 0
    assert (await http_get(service.port, "/"))[0] == 200
    await service()  # the closer
    with pytest.raises(OSError):
        await http_get(service.port, "/")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- kibitz -------------------------------------------------------------------------------------------------


def test_the_kibitz_names_the_best_move_and_the_equity_lost(analyser: Analyser) -> None:
    state = MatchState.new_match(5, Rules(crawford=True, jacoby=False, beavers=False), ("a", "b")).new_game(
        (3, 1)
    )
    best = analyser.hint(state.position, state.dice, _ci(state))[0]
    good = analyse_move(analyser, state, best.play.move, match="m", game=1, index=1)
    assert good.played == good.best == "8/5 6/5" and good.equity_lost == 0.0
    assert 0.5 < good.win < 0.6 and good.mwc is not None and abs(good.probs[0] - good.win) < 1e-9
    bad = analyse_move(analyser, state, Move(((24, 21), (21, 20))), match="m", game=1, index=1)
    assert bad.played == "24/20" and bad.best == "8/5 6/5" and bad.equity_lost > 0.05
    second = state.move(best.play.move).roll((6, 5))  # seat 1 moves: chances are still seat 0's
    k = analyse_move(analyser, second, Move(((24, 18), (18, 13))), match="m", game=1, index=2)
    assert k.player == 1 and abs(k.win - (1 - k.probs[0])) < 1e-9
    with pytest.raises(KibitzError, match="not fit"):
        analyse_move(analyser, state, Move(((24, 18),)), match="m", game=1, index=1)
    with pytest.raises(KibitzError, match="not rolled"):
        analyse_move(analyser, state.move(best.play.move), best.play.move, match="m", game=1, index=1)


def _ci(state: MatchState) -> Any:
    from engine.player import cube_info

    return cube_info(state)


def test_the_cube_verdict_gives_the_three_equities_and_who_erred(analyser: Analyser) -> None:
    rules = Rules(crawford=True, jacoby=False, beavers=False)
    opening = MatchState.new_match(5, rules, ("a", "b")).new_game((3, 1))
    start = opening.replace(position=Position.initial(), dice=(0, 0))
    quiet = analyse_cube(analyser, start, "no_double", match="m", game=1, index=2)
    assert quiet is not None and quiet.verdict == "No double, take" and quiet.best == "no_double"
    assert quiet.equity_lost == 0.0 and quiet.no_double > quiet.double_take
    wasted = analyse_cube(analyser, start, "double", match="m", game=1, index=2)
    assert wasted is not None and wasted.best == "no_double" and wasted.equity_lost > 0.05
    # a bear-off race far ahead (45 pips to 75, no gammons left): double, pass
    far = Position.from_points({1: 3, 2: 3, 3: 3, 4: 3, 5: 3, 19: -5, 20: -5, 21: -5})
    ahead = start.replace(position=far)
    verdict = analyse_cube(analyser, ahead, "no_double", match="m", game=1, index=2)
    assert verdict is not None and verdict.best == "double" and verdict.equity_lost > 0.01
    assert verdict.verdict.endswith("pass") and verdict.double_pass < verdict.double_take
    taker = ahead.double()
    drop = analyse_cube(analyser, taker, "drop", match="m", game=1, index=3)
    take = analyse_cube(analyser, taker, "take", match="m", game=1, index=3)
    assert drop is not None and take is not None and drop.player == take.player == 1 and drop.doubler == 0
    assert drop.best == take.best == "drop" and drop.equity_lost == 0.0 < take.equity_lost
    owned = analyse_cube(analyser, ahead.replace(cube=2, cube_owner=0), "double", match="m", game=1, index=4)
    assert owned is not None and owned.verdict.startswith("Redouble") and owned.action == "double"
    crawford = start.replace(match_length=5, score=(4, 0), crawford=True)
    assert analyse_cube(analyser, crawford, "no_double", match="m", game=1, index=2) is None  # no cube


async def test_a_spectator_gets_the_cube_verdicts(kibitz_harness: Harness) -> None:
    web = await kibitz_harness.user("alice")
    bob = await kibitz_harness.telnet("bob")
    guest = await kibitz_harness.guest()
    await web.send(wm.Invite("bob", 3))
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    bob_task = asyncio.create_task(RandomPlayer(bob, random.Random(6), take=1.0).play(30))
    rng = random.Random(7)
    board = await web.expect(wm.BoardView)
    await guest.send(wm.Watch(board.match, 0))
    while "double" not in board.actions:
        if "move" in board.actions:
            await web.send(wm.MovePlay(rng.choice(board.legal).steps))
        board = await web.expect(wm.BoardView)
    await web.send(wm.Double())
    await web.expect(lambda m: isinstance(m, wm.GameEvent) and m.kind == "take")
    double = await guest.expect(lambda m: isinstance(m, wm.CubeKibitz) and m.action == "double", timeout=10)
    assert double.name == "alice" and double.player == double.doubler == 0
    assert double.verdict and double.best in ("double", "no_double") and double.equity_lost >= 0
    take = await guest.expect(lambda m: isinstance(m, wm.CubeKibitz) and m.action == "take", timeout=10)
    assert take.name == "bob" and take.player == 1 and take.doubler == 0 and take.index == double.index + 1
    player = asyncio.create_task(play_web(web, rng, lambda m: False))
    held = await guest.expect(lambda m: isinstance(m, wm.CubeKibitz) and m.player == 1, timeout=20)
    player.cancel()
    assert held.action in ("no_double", "double") and held.doubler == 1  # bob's rolls with his cube
    assert not web.seen(wm.CubeKibitz)  # the players get no help while they play
    late = await kibitz_harness.guest()  # a spectator who comes later gets them with the analysis
    await late.send(wm.Watch(board.match, 1))
    analysis = await late.expect(wm.Analysis)
    assert {k.action for k in analysis.cubes} >= {"double", "take", held.action}
    bob_task.cancel()


async def test_a_bots_lengths_are_in_the_lobby_and_its_refusal_is_an_error(tmp_path: Path) -> None:
    h = Harness(tmp_path / "server.sqlite3", None, PolicyConfig(min_length=1, max_length=5))
    await h.start()
    try:
        bot = await h.telnet("gammond", bot=True)
        web = await h.user("alice")
        await web.send(wm.ListLobby())
        lobby = await web.expect(wm.Lobby)
        rows = {p.name: p for p in lobby.players}
        assert rows["gammond"].accepts == wm.Accepts(1, 5, False) and rows["alice"].accepts is None
        await web.send(wm.Invite("gammond", 7))  # outside the policy: refused at once, the bot never asked
        error = await web.expect(wm.Error)
        assert error.request == "invite" and "7-point" in error.message and "1..5" in error.message
        await web.send(wm.Invite("gammond", 3))
        await bot.expect(ev.Invitation)
        bot.send("tell alice Sorry, I am playing a match; please try again later.")
        error = await web.expect(lambda m: isinstance(m, wm.Error | wm.ChatLine))
        assert isinstance(error, wm.Error) and error.request == "invite" and error.code == "refused"
        assert "gammond declined" in error.message and "playing a match" in error.message
        bot.send("tell alice Anything else is chat.")
        assert await web.expect(lambda m: isinstance(m, wm.Error | wm.ChatLine)) == wm.ChatLine(
            "gammond", "say", "Anything else is chat."
        )
    finally:
        await h.close()


async def test_the_lobby_shows_a_new_score_at_once(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.web.hub

    monkeypatch.setattr(bot.web.hub, "LOBBY_INTERVAL", 3600.0)  # only pushes from the changes themselves
    web = await harness.user("alice")
    bob = await harness.telnet("bob")
    await web.send(wm.Invite("bob", 3))
    await bob.expect(ev.Invitation)
    bob.send("join alice")
    board = await web.expect(wm.BoardView)
    while "resign" not in board.actions:
        board = await web.expect(wm.BoardView)
    await web.send(wm.Resign("single"))
    bob.send("accept")
    await web.expect(lambda m: isinstance(m, wm.GameEvent) and m.kind == "game_end")
    lobby = await web.expect(lambda m: isinstance(m, wm.Lobby) and bool(m.matches), timeout=1.0)
    while lobby.matches[0].score == (0, 0):
        lobby = await web.expect(lambda m: isinstance(m, wm.Lobby) and bool(m.matches), timeout=1.0)
    assert lobby.matches[0].score == (0, 1)


async def test_no_spectator_sees_a_verdict_before_the_decision_it_judges(kibitz_harness: Harness) -> None:
    """Whole matches with doubles, takes, passes and resignations, each decision taken 50 ms after it is
    asked for: a guest spectator gets every verdict, none before the decisions it bears on."""
    h = kibitz_harness
    alice = await h.telnet("alice")
    bob = await h.telnet("bob")
    guest = await h.guest()
    for seed in (21, 22):
        alice.send("invite bob 3")
        await bob.expect(ev.Invitation)
        bob.send("join alice")
        while not h.fibs.tables:
            await asyncio.sleep(0.005)
        (table,) = h.fibs.tables.values()
        await guest.send(wm.Watch(table.id, 0))
        players = [
            RandomPlayer(c, random.Random(seed * 10 + k), double=0.3, take=0.6, resign=0.02, think=0.05)
            for k, c in enumerate((alice, bob))
        ]
        await asyncio.gather(*(p.play(120) for p in players))
        closed = await guest.expect(lambda m, t=table.id: isinstance(m, wm.MatchClosed) and m.match == t, 10)
        assert closed.reason == "finished"
        doubles = [e for e in guest.seen(wm.GameEvent) if e.match == table.id and e.kind == "double"]
        assert doubles  # the seeds give cube decisions to judge
        deadline = time.monotonic() + 10  # verdicts still being analysed come after the match's end
        while time.monotonic() < deadline:
            judged = {(c.game, c.index) for c in guest.seen(wm.CubeKibitz) if c.match == table.id}
            if {(d.game, d.index) for d in doubles} <= judged:
                break
            await asyncio.sleep(0.05)
        assert {(d.game, d.index) for d in doubles} <= judged
    stream = [m for m in guest.messages if isinstance(m, wm.GameEvent | wm.Kibitz | wm.CubeKibitz)]
    matches = {m.match for m in stream}
    assert len(matches) == 2
    for match in matches:
        assert too_early([m for m in stream if m.match == match]) == []


async def test_a_saved_login_survives_a_restart_and_ends_with_logout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 28 item 14: after a daemon restart the page reconnected logged out, silently
    caplog.set_level("DEBUG")
    path = tmp_path / "server.sqlite3"
    first = Harness(path, None)
    await first.start()
    web = await first.user("alice", ready=False)
    logged_in = next(m for m in web.messages if isinstance(m, wm.LoggedIn))
    token = logged_in.token
    assert token and len(token) >= 40 and "********" in repr(logged_in)
    await first.close()  # the daemon stops ...
    second = Harness(path, None)  # ... and starts again on the same database
    await second.start()
    try:
        page = await second.guest()
        await page.send(wm.Resume("alice", token[:-1] + ("A" if token[-1] != "A" else "B")))
        assert (await page.expect(wm.Error)).code == "login_failed"
        await page.send(wm.Resume("bob", token))  # another account's name with it
        assert (await page.expect(wm.Error)).request == "resume"
        await page.send(wm.Resume("alice", token))
        again = await page.expect(wm.LoggedIn)
        assert again.name == "alice" and again.token is None
        assert "alice" in second.fibs.online
        await page.send(wm.Logout())
        await page.expect(wm.LoggedOut)
        await page.send(wm.Resume("alice", token))  # logging out ended it
        assert (await page.expect(wm.Error)).code == "login_failed"
    finally:
        await second.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("server.sqlite3*"))
    assert token.encode() not in stored  # only its digest is kept
    assert token not in caplog.text and token not in capsys.readouterr().out  # never logged


def test_saved_logins_end_when_unused_and_are_kept_per_account() -> None:
    store = Store(":memory:")
    day = 86400.0
    store.add_web_login("d0", "alice", now=0.0, max_age=30 * day)
    assert store.web_login("d0", now=29 * day, max_age=30 * day) == "alice"  # used: 30 days from now on
    assert store.web_login("d0", now=58 * day, max_age=30 * day) == "alice"
    assert store.web_login("d0", now=89 * day, max_age=30 * day) is None  # unused for 31 days
    assert store.web_login("nope", now=0.0, max_age=30 * day) is None
    for k in range(WEB_LOGINS_KEPT + 3):  # one per browser: the oldest go
        store.add_web_login(f"b{k}", "bob", now=100 * day + k, max_age=30 * day)
    kept = [k for k in range(WEB_LOGINS_KEPT + 3) if store.web_login(f"b{k}", 100 * day + 20, 30 * day)]
    assert kept == list(range(3, WEB_LOGINS_KEPT + 3))
    store.drop_web_login("b5")
    assert store.web_login("b5", 100 * day + 30, 30 * day) is None
