"""Our noise levels against our own expert: cubeless money games with gammons, duplicate dice.

    python -m bench.levels --levels beginner,intermediate,advanced --games 1000 --workers 2 --seed 1

gnubg's own figures against its expert (cubeless money with gammons): beginner -0.89, intermediate -0.56,
advanced -0.15 points per game. Here each level L plays our expert, both our engine at the level's plies,
moves ranked by cubeless money equity (``Search.rank``): a DIAGNOSTIC ranking, not the daemon's path (the
daemon's ``Player`` ranks cubefully; ``bench.strength --mode cubeless-ranking`` is the same diagnostic against
gnubg, and the two rankings score the same there: -0.002 +- 0.022 ppg apart over 4,000 games). The games have
no cube and no resignations, and gammons and backgammons count. Each dice sequence is played twice with the seats
swapped, a pair's result is the mean of its two games, and the figure is L's points per game with a 95%
interval over pairs.

The level's noise is random (``deterministic=False``) rather than the bot's per-position hash, so that the two
games of a pair, which reach many of the same positions, do not share their errors; each game draws from its
own generator, seeded from ``--seed``, the level and the game, so a run is reproducible whatever the number
of workers. All levels play the same dice sequences.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.strength import dice_sequence, game_result, summarise  # noqa: E402
from engine.evaluator import money_equity  # noqa: E402
from engine.levels import Level, LevelError, parse_level  # noqa: E402
from engine.moves import legal_plays  # noqa: E402
from engine.position import Position  # noqa: E402

OPPONENT = "expert"
# gnubg's points per game of its levels against its expert (cubeless money with gammons).
GNUBG_PPG: dict[str, float] = {"beginner": -0.89, "intermediate": -0.56, "advanced": -0.15}
MAX_TURNS = 2000  # a game longer than this is a loop, not a game
DEFAULT_OUT = HERE / "results" / "levels.jsonl"

Dice = tuple[int, int]
Chooser = Callable[[Position, Dice], Position]  # the mover's position after its chosen play (mover's view)


class BenchOptionError(ValueError):
    """A bench option out of range."""


def parse_levels(text: str) -> list[Level]:
    """Levels to bench, comma-separated names (``beginner,advanced``), or separated by ``;`` when a level has
    options of its own (``beginner;expert,noise=0.02``). LevelError for an empty list, an unknown level or a
    repeated one."""
    parts = [p.strip() for p in text.split(";" if ";" in text else ",") if p.strip()]
    if not parts:
        raise LevelError("no levels given")
    levels = [parse_level(p) for p in parts]
    names = [lv.name for lv in levels]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise LevelError(f"level listed twice: {', '.join(repeated)}")
    return levels


def pair_seeds(seed: int, pairs: int) -> list[int]:
    """Dice seeds of the duplicate pairs (the same scheme as bench.strength's money duel)."""
    return [seed * 1_000_003 + i for i in range(pairs)]


def noise_rng(seed: int, level: str, pair: int, game: int) -> random.Random:
    """The generator of one game's noise: a string seed, hashed by ``random`` itself, so it is stable across
    processes and Python runs (unlike ``hash``)."""
    return random.Random(f"gammond-levels:{seed}:{level}:{pair}:{game}")


def random_noise(level: Level) -> Level:
    """``level`` with fresh Gaussian draws at every decision instead of the per-position hash."""
    return replace(level, deterministic=False)


def play_duel(
    rolls: Sequence[Dice],
    seats: tuple[Chooser, Chooser],
    on_turn: Callable[[Position, int], None] | None = None,
) -> int:
    """One cubeless game from the opening with these dice; the points won by seat 0 (negative if seat 1 won).

    ``on_turn(position, seat)`` sees each position before its roll, from the side of the player on roll.
    Forced plays are made without asking the chooser.
    """
    pos = Position.initial()
    seat = 0
    for turn, dice in enumerate(rolls):
        if turn > MAX_TURNS:
            break
        if on_turn is not None:
            on_turn(pos, seat)
        plays = legal_plays(pos, dice)
        after = plays[0].position if len(plays) == 1 else seats[seat](pos, dice)
        if not any(after.me):
            points = game_result(after)
            return points if seat == 0 else -points
        pos = after.swap()
        seat = 1 - seat
    raise RuntimeError(f"game not over after {len(rolls)} rolls")


def duplicate_pair(
    rolls: Sequence[Dice], level: Callable[[int], Chooser], opponent: Chooser
) -> tuple[int, int]:
    """The level's points in both games of one dice sequence: first in seat 0, then in seat 1.

    ``level(game)`` makes the level's chooser for game 0 or 1 (each with its own noise).
    """
    first = play_duel(rolls, (level(0), opponent))
    second = -play_duel(rolls, (opponent, level(1)))
    return first, second


def pair_value(points: tuple[int, int]) -> float:
    """A pair's result: the mean of its two games."""
    return (points[0] + points[1]) / 2.0


def hint_chooser(
    analyser: Any, level: Level, perturb: Any = None, clock: list[float] | None = None
) -> Chooser:
    """The level's move in a cubeless money game, ranked by cubeless money equity (the diagnostic ranking of
    ``bench.strength --mode cubeless-ranking``) at the level's plies, filter and noise; ``clock`` gets
    [decisions, seconds] added."""

    def choose(pos: Position, dice: Dice) -> Position:
        t0 = time.perf_counter()
        ranked = analyser.search.rank(
            pos, dice, level.plies, level.move_filter, equity=money_equity, perturb=perturb
        )
        if clock is not None:
            clock[0] += 1
            clock[1] += time.perf_counter() - t0
        return ranked[0].play.position

    return choose


# -- workers -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairTask:
    level: str  # the level's text, parsed again in the worker
    pair: int  # index of the dice sequence
    dice_seed: int
    run_seed: int


@dataclass(frozen=True, slots=True)
class PairOutcome:
    level: str
    pair: int
    points: tuple[int, int]
    level_moves: int
    level_seconds: float
    opponent_moves: int
    opponent_seconds: float
    seconds: float


_WORKER: dict[str, Any] = {}


def _init_worker(models: str | None) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from engine.analyser import Analyser

    _WORKER["analyser"] = Analyser.default(Path(models) if models else None, threads=1)


def _play_pair(task: PairTask) -> PairOutcome:
    analyser = _WORKER["analyser"]
    t0 = time.perf_counter()
    level = random_noise(parse_level(task.level))
    opponent = parse_level(OPPONENT)
    level_clock, opp_clock = [0, 0.0], [0, 0.0]

    def make_level(game: int) -> Chooser:
        perturb = level.chequer_perturber(noise_rng(task.run_seed, level.name, task.pair, game))
        return hint_chooser(analyser, level, perturb, level_clock)

    points = duplicate_pair(
        dice_sequence(task.dice_seed), make_level, hint_chooser(analyser, opponent, None, opp_clock)
    )
    return PairOutcome(
        task.level,
        task.pair,
        points,
        int(level_clock[0]),
        level_clock[1],
        int(opp_clock[0]),
        opp_clock[1],
        time.perf_counter() - t0,
    )


def _progress(total: int) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="pair", smoothing=0.05)


def run(
    levels: Sequence[Level], games: int, seed: int, workers: int, models: str | None
) -> dict[str, list[PairOutcome]]:
    """Every level's pairs, in dice order."""
    seeds = pair_seeds(seed, games // 2)
    tasks = [PairTask(lv.name, i, s, seed) for lv in levels for i, s in enumerate(seeds)]
    done: dict[str, list[PairOutcome]] = {lv.name: [] for lv in levels}
    bar = _progress(len(tasks))
    with mp.get_context("spawn").Pool(workers, initializer=_init_worker, initargs=(models,)) as pool:
        for out in pool.imap_unordered(_play_pair, tasks):
            done[out.level].append(out)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return {name: sorted(outs, key=lambda o: o.pair) for name, outs in done.items()}


def level_summary(level: Level, outcomes: Sequence[PairOutcome], seed: int) -> dict[str, Any]:
    """One JSON line: the level's points per game against expert over its pairs, and its timing."""
    summary: dict[str, Any] = {"level": level.name, "opponent": OPPONENT}
    summary.update(summarise([pair_value(o.points) for o in outcomes]))
    moves = sum(o.level_moves + o.opponent_moves for o in outcomes)
    seconds = sum(o.level_seconds + o.opponent_seconds for o in outcomes)
    summary.update(
        ppg=round(summary["ppg"], 4),
        ci95=round(summary["ci95"], 4),
        seat0_ppg=round(sum(o.points[0] for o in outcomes) / max(1, len(outcomes)), 4),
        seat1_ppg=round(sum(o.points[1] for o in outcomes) / max(1, len(outcomes)), 4),
        gnubg_ppg=GNUBG_PPG.get(level.name),
        chequer_noise=level.chequer_noise,
        plies=level.plies,
        noise="random",
        cube="none (moves ranked by cubeless money equity)",
        seed=seed,
        ms_per_move=round(1000 * seconds / max(1, moves), 3),
        worker_seconds=round(sum(o.seconds for o in outcomes), 1),
    )
    return summary


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    w = max([14, *(len(r["level"]) for r in rows)])
    lines = [f"{'level':<{w}} {'games':>6} {'ppg vs expert':>18} {'gnubg':>7}"]
    for r in rows:
        gnubg = "" if r["gnubg_ppg"] is None else f"{r['gnubg_ppg']:+.2f}"
        lines.append(f"{r['level']:<{w}} {r['games']:>6} {r['ppg']:>+9.3f} ± {r['ci95']:<6.3f} {gnubg:>7}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--levels", default="beginner,intermediate,advanced", help="levels to play against expert"
    )
    ap.add_argument(
        "--games", type=int, default=1000, help="games per level in all (twice the dice sequences)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--models", help="model folder (default: the shipped nets)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="append one JSON line per level here")
    args = ap.parse_args(argv)
    try:
        levels = parse_levels(args.levels)
        if args.games < 2:
            raise BenchOptionError(f"--games must be at least 2 (one pair), not {args.games}")
        if args.workers < 1:
            raise BenchOptionError(f"--workers must be at least 1, not {args.workers}")
    except ValueError as exc:
        ap.error(str(exc))
    t0 = time.time()
    results = run(levels, args.games, args.seed, args.workers, args.models)
    wall = round(time.time() - t0, 1)
    rows = [level_summary(lv, results[lv.name], args.seed) | {"wall_seconds": wall} for lv in levels]
    for row in rows:
        append_json_line(args.out, row)
    print(format_table(rows))
    print(
        f"{wall} s wall for {len(levels)} level(s) on {args.workers} worker(s); lines appended to {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
