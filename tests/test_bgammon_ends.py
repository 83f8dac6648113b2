"""How a bgammon match that does not end at the board ends for the bot: an opponent who leaves and never comes
back, a match the server no longer has after a restart. What was played is archived (partial, with the reason
in its comment) and logged; a match that only waited for an opponent loses nothing and says so."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.archive import Archive
from bot.bgammon import BgammonBot, BgammonOptions, MatchTracker
from bot.bgammon.bot import _Match
from bot.config import ServerConfig
from engine.analyser import Analyser
from engine.bras import BrasEvaluator
from engine.formats.mat import read_mat
from protocols.bgammon import events as ev
from protocols.bgammon.board import BoardState, PlayerInfo
from tests.bgammon_fake_server import FakeBgammonServer, Recorder, RecordingLink, Script, ScriptedOpponent

BOT = "BOT_gammond"
DEADLINE = 120.0


def make_bot(address: str, folder: Path, **changes: Any) -> BgammonBot:
    server = ServerConfig(name="fake", protocol="bgammon", address=address, user="gammond")
    options = BgammonOptions(
        lengths=(3,), create_delay=0.01, backoff_base=0.02, backoff_cap=0.1, read_timeout=DEADLINE, **changes
    )
    bot = BgammonBot(
        server,
        Analyser(BrasEvaluator(), name="bras"),
        Archive(folder),
        options,
        password=lambda: "",
        rng=random.Random(3),
    )
    bot.log = Recorder()
    return bot


async def eventually(check: Callable[[], bool], timeout: float = DEADLINE) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        assert loop.time() < end, "condition not reached"
        await asyncio.sleep(0.005)


async def test_a_match_the_opponent_never_comes_back_to_is_archived_as_far_as_it_went(tmp_path: Path) -> None:
    async with FakeBgammonServer(seed=5) as server:
        bot = make_bot(server.tcp_address, tmp_path, opponent_wait=0.3)
        opponent = ScriptedOpponent(server.tcp_address, "bob", BOT, Script(matches=1, seed=9))
        stop = asyncio.Event()
        task = asyncio.create_task(bot.run(stop))
        play = asyncio.create_task(opponent.run())
        try:
            await eventually(
                lambda: sum(1 for n, line in server.log if n == BOT and line.startswith("move")) >= 4
            )
            server.drop("Guest_bob")  # gone for good, in the middle of the first game
            await eventually(lambda: len(bot.archived) == 1)
            await eventually(
                lambda: sum(1 for n, line in server.log if n == BOT and line.startswith("create")) == 2
            )
        finally:
            stop.set()
            await asyncio.wait_for(task, DEADLINE)
            play.cancel()
            with contextlib.suppress(BaseException):
                await play
    [path] = tmp_path.glob("*.mat")
    record = read_mat(path.read_text())  # replays as far as it goes
    assert record.names == (BOT, "Guest_bob") and len(record.games) == 1 and record.games[0].result is None
    assert "the record stops early: the opponent left and did not come back within 0.3 s" in record.comment
    log: Recorder = bot.log  # type: ignore[assignment]
    [(level, fields)] = log.find("bgammon.abandoned")
    assert level == "warning" and fields["reason"] == "the opponent left and did not come back within 0.3 s"
    assert log.find("bgammon.archived_partly")  # the archive's own line, with the reason


def waiting_match() -> _Match:
    return _Match(4)  # created, no opponent ever joined


async def test_an_empty_match_the_server_forgot_is_no_loss_and_no_warning(tmp_path: Path) -> None:
    bot = make_bot("tcp://127.0.0.1:1", tmp_path)
    link = RecordingLink()
    bot._link, bot._name, bot._match = link, BOT, waiting_match()  # type: ignore[assignment]
    await bot._create()  # after a server restart: logged in, not seated back
    log: Recorder = bot.log  # type: ignore[assignment]
    assert [level for level, _, _ in log.lines if level in ("warning", "error")] == []
    [(level, fields)] = log.find("bgammon.match_gone")
    assert level == "info" and "nothing" in fields["lost"]
    assert link.sent == ["create public 3 0"]
    await bot._on_event(ev.Joined(player=BOT, game_id=1, player_number=1))  # the new match
    assert bot.archived == [] and [level for level, _, _ in log.lines if level in ("warning", "error")] == []


async def test_a_played_match_the_server_forgot_is_archived_when_the_next_one_begins(tmp_path: Path) -> None:
    bot = make_bot("tcp://127.0.0.1:1", tmp_path)
    link = RecordingLink()
    start = BoardState(
        points=3, started=1767225600, player1=PlayerInfo(1, BOT), player2=PlayerInfo(2, "Guest_bob")
    )
    opening = start.replace(turn=1, roll1=3, roll2=1)
    tracker = MatchTracker((BOT, "Guest_bob"), 3)
    for b in (start, opening):
        tracker.on_event(ev.Board(state=b))
    match = _Match(4, tracker=tracker, opponent="Guest_bob", greeted=True, board=opening)
    bot._link, bot._name, bot._match = link, BOT, match  # type: ignore[assignment]
    await bot._create()
    log: Recorder = bot.log  # type: ignore[assignment]
    [(level, _)] = log.find("bgammon.match_lost")
    assert level == "warning" and bot.archived == []  # the server may still seat the bot back in it
    await bot._on_event(ev.Joined(player=BOT, game_id=9, player_number=1))  # it did not: a new match
    [path] = tmp_path.glob("*.mat")
    record = read_mat(path.read_text())
    assert "the server did not seat the bot back in this match" in record.comment and len(bot.archived) == 1
    assert log.find("bgammon.abandoned")[0][0] == "warning"
