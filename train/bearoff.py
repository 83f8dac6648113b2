"""Exact labels for the race net from the bearoff databases: positions where the net and the database both apply.

    python -m train.bearoff --out train/data/bearoff --shards 10 --per-shard 20000 --seed 1
    python -m train.fit --net race --run train/runs/v2 --extra train/data/bearoff ...

Self-play reaches few small endings (a handful of chequers a side), so the race net learnt them badly although
the databases answer them exactly. Half the positions pair two sides drawn uniformly from all 54,264 one-sided
sides (mostly many chequers), half two sides of 1..6 chequers (the two-sided table's range), the count drawn
first so that the smallest endings are as common as the rest. Labels are the
databases' five probabilities (``BearoffDatabase.evaluate``). Shards use ``train.fit``'s layout
(``positions/shard_*.npz`` and ``labels/shard_*.npz``); existing shards are skipped.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from engine.bearoff import BearoffDatabase
from engine.bearoff.ranking import all_sides
from engine.encoding import positions_to_array
from engine.position import Position
from train.progress import progress

TWO_SIDED_MAX = 6


def sample_boards(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 2, 25) int8 bearoff boards, every side with at least one chequer, all of them on points 1-6."""
    sides = all_sides()
    half = n // 2
    counts = sides.sum(axis=1)
    by_count = [np.flatnonzero(counts == k) for k in range(TWO_SIDED_MAX + 1)]

    def small(m: int) -> np.ndarray:
        # A chequer count 1..6 first, then a spread: the one- and two-chequer endings are rare among ranks.
        k = rng.integers(1, TWO_SIDED_MAX + 1, m)
        return np.array([rng.choice(by_count[c]) for c in k], dtype=np.int64)

    me = np.concatenate([rng.integers(1, len(sides), half), small(n - half)])
    opp = np.concatenate([rng.integers(1, len(sides), half), small(n - half)])
    boards = np.zeros((n, 2, 25), dtype=np.int8)
    boards[:, 0, :6] = sides[me]
    boards[:, 1, :6] = sides[opp]
    return boards


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("train/data/bearoff"))
    ap.add_argument("--shards", type=int, default=10)
    ap.add_argument("--per-shard", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    db = BearoffDatabase.load()
    (args.out / "positions").mkdir(parents=True, exist_ok=True)
    (args.out / "labels").mkdir(parents=True, exist_ok=True)
    for k in progress(range(args.shards), desc="bearoff labels"):
        name = f"shard_{k:04d}.npz"
        if (args.out / "labels" / name).exists():
            continue
        boards = sample_boards(args.per_shard, np.random.default_rng([args.seed, k]))
        positions = [Position(tuple(b[0]), tuple(b[1])) for b in boards.tolist()]
        assert np.array_equal(positions_to_array(positions), boards)
        np.savez_compressed(args.out / "positions" / name, boards=boards)
        probs = db.evaluate(positions).astype(np.float32)
        np.savez_compressed(args.out / "labels" / name, probs=probs, level=np.array("bearoff-exact"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
