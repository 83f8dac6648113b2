"""Pruning nets, stage 1: the positions they will judge, labelled by the full nets (distillation).

    python -m train.prune --positions train/data/positions --out train/data/prune --positions-per-shard 2000
    python -m train.fit --net contact --positions train/data/prune/positions --labels train/data/prune/labels \
        --hidden 32 --epochs 12 --run train/runs/prune1
    python -m train.fit --net race    --positions train/data/prune/positions --labels train/data/prune/labels \
        --hidden 32 --epochs 12 --run train/runs/prune1

Inside the n-ply search most evaluations only choose each roll's move (gnubg's FindBestMoveInEval); gnubg
scores those candidates with small "pruning" nets first and gives only the best few to the full net. Our
pruning nets learn the shipped nets' own outputs on exactly such candidates: every legal play of a random roll
from the self-play positions of ``train.positions``, so that they see the bad moves as well as the good ones.
Shards are written in the layout ``train.fit`` reads (``positions/shard_*.npz`` with ``boards``,
``labels/shard_*.npz`` with ``probs``); existing shards are skipped, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from engine.evaluator import MODELS_DIR, NetEvaluator
from engine.moves import roll_children
from engine.position import PositionClass
from train.fit import class_mask
from train.progress import progress


def children_of_random_rolls(boards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every legal play of one random roll (weighted 1/36 or 2/36) of each board, seen by the opponent."""
    kids, counts = roll_children(boards)
    weights = np.array([1 if a == b else 2 for a in range(1, 7) for b in range(a, 0, -1)], dtype=np.float64)
    roll = rng.choice(21, size=len(boards), p=weights / 36.0)
    starts = np.concatenate(([0], np.cumsum(counts.ravel())[:-1])).reshape(counts.shape)
    rows = np.arange(len(boards))
    first, n = starts[rows, roll], counts[rows, roll]
    pick = np.concatenate([np.arange(f, f + k) for f, k in zip(first, n, strict=True)])
    return kids[pick]


def label(nets: NetEvaluator, boards: np.ndarray) -> np.ndarray:
    """The full nets' probabilities for finished-free boards, by class (the crashed net where there is one)."""
    out = np.zeros((len(boards), 5), dtype=np.float32)
    crashed = class_mask(boards, "crashed")
    contact = class_mask(boards, "contact") & ~crashed
    race = class_mask(boards, "race")
    if contact.any():
        out[contact] = nets.evaluate_boards(boards[contact], nets.net_for(PositionClass.CONTACT))
    if crashed.any():
        out[crashed] = nets.evaluate_boards(boards[crashed], nets.net_for(PositionClass.CRASHED))
    if race.any():
        out[race] = nets.evaluate_boards(boards[race], nets.net_for(PositionClass.RACE))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=Path, default=Path("train/data/positions"))
    ap.add_argument("--out", type=Path, default=Path("train/data/prune"))
    ap.add_argument("--models", type=Path, default=MODELS_DIR, help="the full nets to distil")
    ap.add_argument("--positions-per-shard", type=int, default=2000, help="sampled from each positions shard")
    ap.add_argument("--shards", type=int, default=40, help="how many positions shards to use")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    nets = NetEvaluator(args.models)
    (args.out / "positions").mkdir(parents=True, exist_ok=True)
    (args.out / "labels").mkdir(parents=True, exist_ok=True)
    sources = sorted(args.positions.glob("shard_*.npz"))[: args.shards]
    if not sources:
        raise SystemExit(f"no position shards in {args.positions} (run train.positions first)")
    for k, src in enumerate(progress(sources, desc="prune data")):
        pos_path, lab_path = args.out / "positions" / src.name, args.out / "labels" / src.name
        if pos_path.exists() and lab_path.exists():
            continue
        rng = np.random.default_rng([args.seed, k])
        boards = np.load(src)["boards"]
        boards = boards[rng.permutation(len(boards))[: args.positions_per_shard]]
        kids = children_of_random_rolls(boards, rng).astype(np.int8)
        alive = (kids.sum(axis=2) > 0).all(axis=1)  # finished games need no net
        kids = kids[alive]
        np.savez_compressed(pos_path, boards=kids)
        np.savez_compressed(lab_path, probs=label(nets, kids), level=np.array("distilled"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
