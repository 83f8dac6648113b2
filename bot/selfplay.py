"""Self-play: the bot against itself, whole matches with the cube, each archived as a .mat file.

It exercises the engine (decisions at a level), the record (every action checked by the match state), the writer
and the archive together, and makes realistic match files for tests and benchmarks.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.archive import Archive, archive_name
from engine.dice import MersenneDice
from engine.formats.mat import write_mat
from engine.match import Rules
from engine.player import Action, Player
from engine.record import MatchRecord, RecordBuilder

MAX_ACTIONS = 5000  # a game longer than this is a bug, not a game


@dataclass(frozen=True, slots=True)
class SelfplayResult:
    record: MatchRecord
    path: Path | None


def play_match(
    players: tuple[Player, Player],
    length: int,
    seed: int,
    names: tuple[str, str],
    money_games: int = 3,
    site: str = "gammond selfplay",
    match_id: str = "",
) -> MatchRecord:
    """One match (``length`` > 0) or money session of ``money_games`` games, decided by ``players``."""
    dice = MersenneDice(seed)
    now = dt.datetime.now(dt.UTC)
    builder = RecordBuilder(
        length,
        names,
        Rules(),
        site=site,
        match_id=match_id,
        date=now.date(),
        time=now.time().replace(microsecond=0),
    )
    games = 0
    while not builder.state.match_over and (length or games < money_games):
        a, b = dice.opening()
        builder.start_game((a, b))
        games += 1
        for _ in range(MAX_ACTIONS):
            state = builder.state
            if not builder.in_game:
                break
            who = state.turn
            decision = players[who].decide(state)
            act = decision.action
            if act == Action.ROLL:
                builder.add_roll(who, dice.roll())
            elif act == Action.MOVE:
                assert decision.move is not None
                builder.add_move(who, decision.move.play.move)
            elif act == Action.DOUBLE:
                builder.add_double(who)
            elif act == Action.TAKE:
                builder.add_take(who)
            elif act == Action.DROP:
                builder.add_drop(who)
            elif act == Action.BEAVER:
                builder.add_beaver(who)
            elif act == Action.RESIGN:
                builder.add_resign(who, decision.level)
            elif act == Action.ACCEPT:
                builder.add_accept(who)
            elif act == Action.REJECT:
                builder.add_reject(who)
        else:
            raise RuntimeError(f"game {games} of seed {seed} did not end in {MAX_ACTIONS} actions")
    return builder.record()


def selfplay(
    players: tuple[Player, Player],
    matches: int,
    length: int,
    seed: int,
    out: Path,
    names: tuple[str, str] = ("gammond-a", "gammond-b"),
    progress: Callable[[int, MatchRecord, Path | None], None] | None = None,
) -> list[SelfplayResult]:
    archive = Archive(out)
    results = []
    for i in range(matches):
        key = f"selfplay-{seed}-{i}-{length}"
        record = play_match(players, length, seed * 1_000_003 + i, names, match_id=key)
        when = dt.datetime.combine(record.date or dt.date.today(), record.time or dt.time(), dt.UTC)
        name = archive_name(when, "selfplay", names[0], names[1], length)
        path = archive.store_text(key, name, write_mat(record))
        results.append(SelfplayResult(record, path))
        if progress:
            progress(i, record, path)
    return results
