"""The bgammon bot against the real bgammon server (tslocum/bgammon's ``bgammon-server``, a test peer kept in
``../shared/tools/bgammon-server/bin/``, or under ``$GAMMOND_SHARED/tools``), started on a free loopback port
with no database (a bot logs in without a password there). A scripted human written here joins the bot's
matches over the JSON protocol and plays random legal steps from the server's ``Available``, doubling and
dropping now and then. Four whole matches of 3 and 1 points are played: the server refuses none of the bot's
moves, every play the bot makes is the one its engine chose (the ``bgammon.play`` log lines against the
archived moves), and each match is archived once as a .mat that replays to the server's result.

Skips, saying why, where the binary is absent or cannot run."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import random
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.archive import Archive
from bot.bgammon import BgammonBot, BgammonOptions
from bot.config import ServerConfig
from bot.state import StateStore
from engine.analyser import Analyser
from engine.formats.mat import read_mat
from engine.levels import parse_level
from engine.moves import apply_move
from engine.notation import parse_move
from engine.position import Position
from engine.record import ActionKind
from tests.bgammon_fake_server import Recorder

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("GAMMOND_SHARED", ROOT.parent / "shared"))
BINARY = SHARED / "tools" / "bgammon-server" / "bin" / "bgammon-server"
BOT = "BOT_gammond"
DEADLINE = 90.0  # for the whole run; it takes a few seconds on a quiet machine
LENGTHS = (3, 1)  # the bot creates matches of these lengths in turn
MATCHES = 4

pytestmark = pytest.mark.skipif(
    not (BINARY.is_file() and os.access(BINARY, os.X_OK)),
    reason=f"needs the real bgammon server at {BINARY} (put shared/ beside the checkout or set GAMMOND_SHARED)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def real_server(log: Path) -> Any:
    """``bgammon-server -tcp 127.0.0.1:PORT -verbose`` with no database; yields the port once it listens."""
    port = free_port()
    env = {**os.environ, "BGAMMON_SALT_RESET": "r", "BGAMMON_SALT_PASSWORD": "p", "BGAMMON_SALT_IP": "i"}
    env.pop("BGAMMON_DB", None)
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            str(BINARY), "-tcp", f"127.0.0.1:{port}", "-verbose", stdout=out, stderr=out, env=env
        )
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 15
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                if proc.returncode is not None or loop.time() > end:
                    pytest.skip(f"the real bgammon server did not start: {log.read_text()[-500:]}")
                await asyncio.sleep(0.05)
            else:
                writer.close()
                break
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 5)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


class Human:
    """A guest on the real server, over TCP, JSON events: joins the bot's match, plays random steps from the
    server's ``Available`` one per command, doubles now and then when it may, takes most doubles, and leaves
    after each match, joining the bot's next one until ``matches`` are played."""

    def __init__(self, port: int, matches: int, seed: int) -> None:
        self.port, self.matches, self.rng = port, matches, random.Random(seed)
        self.name = ""
        self.finished: list[dict[str, Any]] = []  # the final board of each match
        self.errors: list[str] = []
        self.in_match = False
        self._last: tuple[Any, ...] | None = None
        self._over = False
        self._game: Any = None  # the ID of the game joined last
        self._finished_games: set[Any] = set()
        self._writer: asyncio.StreamWriter | None = None
        self.transcript: collections.deque[str] = collections.deque(maxlen=40)  # shown with an error

    async def send(self, line: str) -> None:
        assert self._writer is not None
        self.transcript.append(f"<- {line}")
        self._writer.write(line.encode() + b"\n")
        await self._writer.drain()

    async def join_soon(self, delay: float = 0.1) -> None:
        await asyncio.sleep(delay)
        if not self.in_match and len(self.finished) < self.matches:
            await self.send(f"join {BOT}")

    async def run(self) -> None:
        reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 22)
        await self.send("loginjson human-test/en alice")
        tasks: set[asyncio.Task[None]] = set()
        try:
            while not (len(self.finished) >= self.matches and not self.in_match):
                line = await reader.readline()
                if not line:
                    raise ConnectionError("the server closed the human's connection")
                text = line.decode(errors="replace").strip()
                if text.startswith("{"):
                    later = await self.on_event(json.loads(text))
                    if later is not None:
                        task = asyncio.ensure_future(later)
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(OSError):
                await self.send("disconnect")
            self._writer.close()

    async def on_event(self, e: dict[str, Any]) -> Any:
        kind = e.get("Type")
        if kind != "board":
            self.transcript.append(f"-> {json.dumps(e)[:160]}")
        else:
            self.transcript.append(
                f"-> board turn={e['Turn']} roll={e['Roll1']},{e['Roll2']} winner={e['Winner']}"
                f" spectating={e.get('Spectating')} opponent={e['Player2'].get('Name')!r}"
            )
        if kind == "ping":
            await self.send("pong " + (e.get("Message") or "human"))
        elif kind == "welcome":
            self.name = e["PlayerName"]
            return self.join_soon()
        elif kind == "failedjoin":
            return self.join_soon(0.2)  # the bot's next match is not created yet
        elif kind == "joined":
            self._last = None
            if e.get("Player") == self.name:
                self.in_match, self._over, self._game = True, False, e.get("GameID")
        elif kind == "left" and e.get("Player") == self.name:
            self.in_match = False
            return self.join_soon()
        elif kind in ("failedmove", "failedok", "failedroll", "faileddouble", "failedresign"):
            self.errors.append(f"{kind}: {e.get('Reason')}\n" + "\n".join(self.transcript))
            self._last = None
            await self.send("board")
        elif kind == "board" and self.in_match and not e.get("Spectating"):
            await self.on_board(e)
        return None

    async def on_board(self, b: dict[str, Any]) -> None:
        if b.get("Winner"):
            if not self._over:
                self._over = True
                if self._game not in self._finished_games:  # not a finished match joined again (a race)
                    self._finished_games.add(self._game)
                    self.finished.append(b)
                self.in_match = False  # no game command after our leave, whatever board comes before "left"
                await self.send("leave")
            return
        if not b["Player2"].get("Name"):
            return  # the bot is away
        key = (b["Turn"], b["Roll1"], b["Roll2"], tuple(b["Board"]), b["DoubleOffered"], b["DoubleValue"])
        key += (len(b.get("Moves") or []), b["Player1"]["Points"], b["Player2"]["Points"])
        if key == self._last:
            return
        command = None
        if b["Turn"] == 0:
            command = "roll" if b["Roll1"] == 0 else None
        elif b["DoubleOffered"]:
            if b["Turn"] == 2:  # the bot doubled us
                command = "ok" if self.rng.random() < 0.75 else "resign"
        elif b["Turn"] == 1:
            if b["Roll1"] == 0 and b["Roll2"] == 0:
                may_double = (
                    b["Points"] > 1
                    and b["Crawford"] != 1
                    and b["DoubleValue"] < 64
                    and b["DoublePlayer"] in (0, 1)
                )
                command = "double" if may_double and self.rng.random() < 0.1 else "roll"
            elif b.get("Available"):
                src, dst = self.rng.choice(b["Available"])
                command = f"move {src}/{dst}"
            else:
                command = "ok"
        if command:
            self._last = key
            await self.send(command)


async def test_the_bot_plays_whole_matches_on_the_real_server(tmp_path: Path) -> None:
    recorder = Recorder()
    store = StateStore.open(
        tmp_path / "state"
    )  # as the daemon runs the bot: the match stored before each action
    async with real_server(tmp_path / "server.log") as port:
        server = ServerConfig(
            name="real", protocol="bgammon", address=f"tcp://127.0.0.1:{port}", user="gammond"
        )
        options = BgammonOptions(
            lengths=LENGTHS,
            create_delay=0.05,
            rematch_wait=0.3,
            backoff_base=0.05,
            backoff_cap=0.5,
            keepalive=10.0,
            read_timeout=DEADLINE,
        )
        bot = BgammonBot(
            server,
            Analyser.default(),
            Archive(tmp_path / "archive"),
            options,
            level=lambda _opponent: parse_level("expert"),  # 0-ply: quick
            rng=random.Random(3),
            password=lambda: "",  # no database: a bot logs in without a password
            store=store,
        )
        bot.log = recorder
        human = Human(port, matches=MATCHES, seed=11)
        stop = asyncio.Event()
        task = asyncio.create_task(bot.run(stop))
        try:
            await asyncio.wait_for(human.run(), DEADLINE)
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while len(bot.archived) < MATCHES and loop.time() < end:
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await asyncio.wait_for(task, 10)
    server_log = (tmp_path / "server.log").read_text(errors="replace")
    why = "\n".join(recorder.problems()[-20:]) + "\n" + server_log[-3000:]

    # the server's own log: no move refused, and each move command held one step
    refusals = [line for line in server_log.splitlines() if '"Type":"failedmove"' in line]
    assert not refusals, "\n".join(refusals[:10]) + "\n" + why
    commands = [line.split("<- ", 1)[1] for line in server_log.splitlines() if "<- move " in line]
    assert commands and all(len(c.split()) == 2 for c in commands)
    assert not human.errors, "\n\n".join(human.errors) + "\n" + why

    # each match archived once; the archive replays to the server's result
    assert len(human.finished) == MATCHES
    paths = sorted((tmp_path / "archive").glob("*.mat"))
    assert len(paths) == MATCHES and len(set(bot.archived)) == MATCHES, why
    by_key = {read_mat(p.read_text()).match_id: read_mat(p.read_text()) for p in paths}
    records = [by_key[key] for key in bot.archived]  # in the order played
    assert [r.length for r in records] == [LENGTHS[i % len(LENGTHS)] for i in range(MATCHES)]
    for record, final in zip(records, human.finished, strict=True):
        assert record.names == (BOT, "Guest_alice") and not record.partial, record.comment
        state = record.final_state()  # replays every action through the engine's rules
        assert state.match_over
        assert state.winner == (
            0 if final["Winner"] == 2 else 1
        )  # the human's board: the bot is its player 2

    # every play the bot made is the one its engine chose
    chosen: Counter[tuple[str, tuple[int, ...], Position]] = Counter()
    for fields in recorder.events("bgammon.play"):
        start = Position.from_id(fields["position"])
        target = parse_move(fields["move"], start, fields["dice"]).position
        chosen[(fields["position"], tuple(sorted(fields["dice"])), target)] += 1
    made: Counter[tuple[str, tuple[int, ...], Position]] = Counter()
    for record in records:
        for step in record.steps():
            action = step.action
            if action.kind == ActionKind.MOVE and action.player == 0 and action.move:
                start = step.before.position
                assert action.dice is not None
                made[
                    (
                        start.position_id,
                        tuple(sorted(action.dice)),
                        apply_move(start, action.dice, action.move),
                    )
                ] += 1
    assert made and made == chosen, why
    assert not store.active("real", bot.user)  # every stored match archived
    store.close()
    assert bot.refused_moves == 0 and bot.plays_differing == 0, why
    assert not recorder.events("bgammon.play_off_course"), why


class HoldingHuman(Human):
    """The human, who while ``watching`` rolls without doubling and stops after the first step of its turn
    (``stepped``) until ``release``; a turn it cannot move in is handed back with ``dance``."""

    def __init__(self, port: int, matches: int, seed: int) -> None:
        super().__init__(port, matches, seed)
        self.watching = False
        self.stepped, self.release = asyncio.Event(), asyncio.Event()
        self.dance: Any = None

    async def on_board(self, b: dict[str, Any]) -> None:
        if not self.watching or b.get("Winner") or b["Turn"] != 1 or b["DoubleOffered"]:
            await super().on_board(b)
        elif b["Roll1"] == 0:
            await self.send("roll")
        elif b.get("Moves"):
            self.watching = False
            self.stepped.set()
            await self.release.wait()
            self._last = None
            await self.send("board")  # the board is old by now
        else:
            if not b.get("Available"):
                self.watching = False
                self.dance()  # no step to stop after: another turn
            await super().on_board(b)


async def test_a_bot_killed_after_its_ok_and_the_humans_first_step_archives_the_whole_match(
    tmp_path: Path,
) -> None:
    """Issue 27's flaky restart, forced on the real server: the bot sends ``ok`` and reads nothing more; the
    human plays one step; the bot is killed (its connection closed) and started again with its state store.
    The server seats it back with a board that shows the human's step (it refuses moves while the bot is
    away), under which the end of the bot's turn lies. The match is archived whole."""
    store = StateStore.open(tmp_path / "state")
    async with real_server(tmp_path / "server.log") as port:
        server = ServerConfig(
            name="real", protocol="bgammon", address=f"tcp://127.0.0.1:{port}", user="gammond"
        )
        options = BgammonOptions(
            lengths=(5,), create_delay=0.05, rematch_wait=0.3, backoff_base=0.05, backoff_cap=0.5, keepalive=10.0,
            read_timeout=DEADLINE,
        )  # fmt: skip

        def make_bot(recorder: Recorder) -> BgammonBot:
            bot = BgammonBot(
                server, Analyser.default(), Archive(tmp_path / "archive"), options,
                level=lambda _opponent: parse_level("expert"), rng=random.Random(3), password=lambda: "", store=store,
            )  # fmt: skip
            bot.log = recorder
            return bot

        human = HoldingHuman(port, matches=1, seed=5)
        play = asyncio.create_task(human.run())
        first = make_bot(Recorder())
        frozen, thaw = asyncio.Event(), asyncio.Event()
        moves = 0
        send, on_event = first._send, first._on_event

        def dance() -> None:  # the human could not move: the bot reads on, and stops at a later ok
            frozen.clear()
            thaw.set()

        human.dance = dance

        async def stops_after_its_ok(line: str, log_line: bool = True) -> None:
            nonlocal moves
            moves += line.startswith("move ")
            b = first._board
            turn_over = (
                b is not None and b.turn == 1 and b.rolled and not b.available and not b.double_offered
            )
            if (
                line == "ok"
                and turn_over
                and moves >= 4
                and not frozen.is_set()
                and not human.stepped.is_set()
            ):
                frozen.set()
                thaw.clear()
                human.watching = True
            await send(line, log_line)

        async def reads_nothing_once_frozen(event: Any) -> None:
            if frozen.is_set():
                await thaw.wait()  # forever, unless the human's turn was a dance
            await on_event(event)

        first._send = stops_after_its_ok  # type: ignore[method-assign]
        first._on_event = reads_nothing_once_frozen  # type: ignore[method-assign]
        stop = asyncio.Event()
        task = asyncio.create_task(first.run(stop))
        try:
            await asyncio.wait_for(human.stepped.wait(), DEADLINE)
            task.cancel()  # as kill -9: the connection closes, nothing more sent
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.5)  # the server sees the close before the human sends again
            human.release.set()
            recorder = Recorder()
            second = make_bot(recorder)
            boards: list[Any] = []
            second_on_event = second._on_event

            async def keeps_boards(event: Any) -> None:
                if type(event).__name__ == "Board":
                    boards.append(event.state)
                await second_on_event(event)

            second._on_event = keeps_boards  # type: ignore[method-assign]
            task = asyncio.create_task(second.run(stop))
            await asyncio.wait_for(play, DEADLINE)
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while not second.archived and loop.time() < end:
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            play.cancel()
    server_log = (tmp_path / "server.log").read_text(errors="replace")
    why = "\n".join(recorder.problems()[-20:]) + "\n" + server_log[-3000:]
    back = boards[0]  # the board the server seats the bot back with: the human's step is on it
    assert back.turn == 2 and len(back.moves) == 1, (back, why)
    [path] = (tmp_path / "archive").glob("*.mat")
    record = read_mat(path.read_text())
    assert not record.partial, (record.comment, why)
    state = record.final_state()
    assert state.match_over and state.winner == (0 if human.finished[0]["Winner"] == 2 else 1)
    assert recorder.events("bgammon.match_restored") and not store.active("real", second.user)
    store.close()
