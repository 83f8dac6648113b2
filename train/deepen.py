"""Label boards by the engine's own n-ply search: depth distilled into the 0-ply nets.

    python -m train.deepen run --boards train/data/race_sample.npz --out train/data/race_2ply --plies 2 --procs 2
    python -m train.deepen sample --positions train/data/round3/positions --net crashed --n 150000 --seed 1 \
        --out train/data/crashed_sample.npz

Our 2-ply sees what our 0-ply misses in races where a gammon is at stake (where the last chequers go to save
one: the 0-ply race net loses 1.6 mEMG a move there by gnubg 2-ply's judgement, its own 2-ply 0.4), and costs
about 15 ms a race position on one core, so 150,000 positions take 20 minutes on two. The labels are the
cubeless probabilities of ``Search.evaluate_boards`` (each roll's reply chosen by cubeless money equity, as the
search does), for the player on roll before the roll, from the nets in ``--models`` (default: the shipped ones).

Boards go in chunks, one worker process each at a time; a finished chunk's file is skipped when the command runs
again, so it resumes, and ``merged.npz`` (``boards``, ``probs``, in the input's order) is rewritten as chunks
finish. ``train.fit --deep`` reads it. ``sample`` draws distinct boards of one net's class from positions shards
(``train.rollouts sample`` drew the race boards).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np

from train.progress import progress
from train.shards import draw_boards, merge_chunks, save_atomic

CHUNK = 500

_SEARCH: object = None


def _init(models: Path | None) -> None:
    global _SEARCH
    from engine.analyser import Analyser

    _SEARCH = Analyser.default(models, threads=1).search


def _chunk(job: tuple[np.ndarray, Path, int]) -> int:
    boards, dst, plies = job
    probs = _SEARCH.evaluate_boards(boards.astype(np.uint8), plies)  # type: ignore[attr-defined]
    save_atomic(dst, boards=boards, probs=probs.astype(np.float32))
    return len(boards)


def merge(folder: Path) -> int:
    return merge_chunks(folder, ("boards", "probs"))


def run(boards_file: Path, out: Path, plies: int, procs: int, models: Path | None) -> int:
    boards = np.load(boards_file)["boards"]
    out.mkdir(parents=True, exist_ok=True)
    jobs = [
        (boards[i : i + CHUNK], out / f"chunk_{i // CHUNK:05d}.npz", plies)
        for i in range(0, len(boards), CHUNK)
        if not (out / f"chunk_{i // CHUNK:05d}.npz").exists()
    ]
    done = 0
    with mp.get_context("fork").Pool(procs, initializer=_init, initargs=(models,)) as pool:
        for k, n in enumerate(progress(pool.imap(_chunk, jobs), desc=f"{plies}-ply labels", total=len(jobs))):
            done += n
            if k % 20 == 19:
                merge(out)
    merge(out)
    return done


def sample(positions: list[Path], net: str, n: int, seed: int) -> np.ndarray:
    """Up to ``n`` distinct boards that ``net`` evaluates (train.fit's class mask), in a seeded random order."""
    from train.fit import class_mask

    return draw_boards(positions, lambda boards: class_mask(boards, net), n, seed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="draw distinct boards of one net's class")
    s.add_argument("--positions", type=Path, action="append", required=True, help="a positions folder")
    s.add_argument("--net", choices=["contact", "crashed", "race"], required=True)
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("run", help="label boards by the n-ply search")
    r.add_argument(
        "--boards", type=Path, required=True, help="an .npz with boards (n, 2, 25), side 0 on roll"
    )
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--plies", type=int, default=2)
    r.add_argument("--procs", type=int, default=os.cpu_count() or 1)
    r.add_argument("--models", type=Path, help="the nets whose search labels (default: the shipped nets)")
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        boards = sample(args.positions, args.net, args.n, args.seed)
        np.savez_compressed(args.out, boards=boards)
        print(f"{len(boards)} {args.net} boards in {args.out}")
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.time()
    n = run(args.boards, args.out, args.plies, args.procs, args.models)
    print(f"labelled {n} boards at {args.plies} plies in {time.time() - t0:.0f} s; {args.out / 'merged.npz'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
