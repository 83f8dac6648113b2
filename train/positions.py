"""Stage 1: positions by self-play, with exploration, saved in resumable shards.

    python -m train.positions --out train/data/positions --shards 40 --games 250 --seed 1

Each shard is one .npz file of pre-roll boards (n, 2, 25) int8, side 0 on roll. A shard that exists is skipped,
so an interrupted run resumes where it stopped. Moves are chosen by the teacher at 1-ply (gnubg's 0-ply) with
Gaussian noise on the equities, and a share of uniformly random moves, so that races, bearoffs, crashed boards and
back games all appear.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np

from engine.encoding import positions_to_array
from engine.evaluator import money_equity
from engine.moves import legal_plays
from engine.position import Position
from train import teacher
from train.progress import progress
from train.shards import shard_range


def play_game(rng: random.Random, explore: float, noise: float, threads: int) -> list[Position]:
    """One cubeless game; returns every pre-roll position of it (the side on roll first)."""
    pos = Position.initial()
    seen: list[Position] = []
    d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
    while d1 == d2:
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
    first = True
    while True:
        if not first:
            seen.append(pos)
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        first = False
        plays = legal_plays(pos, (d1, d2))
        if len(plays) == 1:
            choice = plays[0]
        elif rng.random() < explore:
            choice = rng.choice(plays)
        else:
            after = [p.position.swap() for p in plays]
            eq = -money_equity(teacher.evaluate_positions(after, "1ply", threads))
            if noise:
                eq = eq + np.array([rng.gauss(0.0, noise) for _ in eq])
            choice = plays[int(np.argmax(eq))]
        nxt = choice.position
        if not any(nxt.me):
            return seen
        pos = nxt.swap()


def make_shard(path: Path, games: int, seed: int, explore: float, noise: float, threads: int) -> int:
    rng = random.Random(seed)
    boards: set[Position] = set()
    for _ in range(games):
        boards.update(play_game(rng, explore, noise, threads))
    ordered = sorted(boards, key=lambda p: p.position_id)
    arr = positions_to_array(ordered)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, boards=arr, seed=seed, games=games)
    tmp.replace(path)
    return len(arr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("train/data/positions"))
    ap.add_argument("--shards", type=int, default=40)
    ap.add_argument("--games", type=int, default=250, help="games per shard")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--explore", type=float, default=0.08, help="share of uniformly random moves")
    ap.add_argument("--noise", type=float, default=0.03, help="sigma of the equity noise on teacher choices")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--only", help="only these shard numbers, e.g. 40-79 (one process per range fills the cores)"
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = shard_range(args.only) if args.only else range(args.shards)
    todo = [i for i in wanted if not (args.out / f"shard_{i:04d}.npz").exists()]
    total = 0
    t0 = time.time()
    for i in progress(todo, desc="shards"):
        total += make_shard(
            args.out / f"shard_{i:04d}.npz",
            args.games,
            args.seed * 100_003 + i,
            args.explore,
            args.noise,
            args.threads,
        )
    print(f"{len(todo)} shards, {total} positions in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
