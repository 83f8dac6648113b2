"""Label race positions by bgsage's cubeless rollouts: the race teacher's 2-ply misjudges what only playing out shows.

    python -m train.rollouts sample --positions train/data/round3/positions --n 150000 --out train/data/race_sample.npz
    python -m train.rollouts run --sample train/data/race_sample.npz --out train/data/race_ro --procs 16 \
        --trials 72 --seconds 430
    cp train/data/race_ro/merged.npz train/data/race_rollouts/race_72.npz   # what gammond-v3.1 was fitted on

``sample`` draws distinct race positions outside the bearoff databases' domain (those have exact labels) from
positions shards. ``run`` rolls them out in chunks, one bgsage rollout strategy per worker process (its rollouts
play bgsage's own net, finish at its one-sided bearoff database and use its variance reduction), writes each
chunk's ``boards``/``probs``/``se`` as it completes and skips finished chunks, so it resumes; with ``--seconds`` it
stops taking chunks at that deadline, and it merges what is done into ``merged.npz`` every few chunks, so a run
cut short still leaves a usable file. Probabilities are gnubg's five, for the player on roll before the roll.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np

from train.progress import progress
from train.shards import draw_boards, merge_chunks, save_atomic
from train.teacher import to_bgsage

CHUNK = 250
# The rows of a rollouts file from this fraction on are held out (its samples are in random order).
HELD_OUT = 0.95


def held_out_rows(n: int) -> np.ndarray:
    """Which of ``n`` rolled-out rows ``train.fit --rollouts`` holds out and ``bench.race_rollouts`` scores."""
    return np.arange(n) >= int(n * HELD_OUT)


def sample(positions: list[Path], n: int, seed: int) -> np.ndarray:
    """Up to ``n`` distinct race boards outside the bearoff databases' domain, in a seeded random order."""
    from engine.evaluator import route

    def outside_databases(boards: np.ndarray) -> np.ndarray:
        over, home, contact, _ = route(boards)
        return ~over & ~contact & ~home

    return draw_boards(positions, outside_databases, n, seed)


_RO: object = None
_DB: object = None  # the rollout keeps a bare pointer to its bearoff database: this reference keeps it alive


def _init(trials: int, seed: int) -> None:
    global _RO, _DB
    import bgbot_cpp
    from bgsage.weights import bearoff_db_path, default_weights

    weights = default_weights()
    paths, hiddens = weights.weight_args
    kind = getattr(weights, "strategy_type", "pair")
    _RO = bgbot_cpp.create_rollout(
        kind,
        paths,
        hiddens,
        n_trials=trials,
        decision_ply=1,
        n_threads=1,
        parallelize_trials=False,
        seed=seed,
    )
    path = bearoff_db_path()
    _DB = None
    if path:
        db = bgbot_cpp.BearoffDB()
        if db.load(path):
            bgbot_cpp.rollout_set_bearoff_db(_RO, db)
            _DB = db


def rollout(board: np.ndarray) -> tuple[np.ndarray, float]:
    """(probs, equity standard error) of one pre-roll (2, 25) race board, side 0 on roll.

    bgsage rolls out post-move positions (the side that just moved, the other to roll): the same position seen
    by the opponent, whose probabilities are then turned back to the side on roll. Races only: checked against
    exact values there (tests/test_train_rollouts.py). Contact positions gave probabilities outside [0, 1] and
    once crashed the process while the bearoff database was read after free (see ``_DB``); three checked since
    agree with the teacher, too few to lift the refusal."""
    import bgbot_cpp

    from engine.evaluator import route

    if route(board[None])[2][0]:
        raise ValueError("train.rollouts rolls out races only")

    res = _RO.rollout_position(bgbot_cpp.flip_board(to_bgsage(board)))  # type: ignore[attr-defined]
    return np.array(bgbot_cpp.invert_probs_py(list(res.mean_probs))), float(res.std_error)


def _chunk(job: tuple[np.ndarray, Path, float]) -> int:
    boards, dst, deadline = job
    if time.time() > deadline:
        return 0
    out = [rollout(b) for b in boards]
    probs = np.array([p for p, _ in out], dtype=np.float32)
    se = np.array([s for _, s in out], dtype=np.float32)
    save_atomic(dst, boards=boards, probs=probs, se=se)
    return len(boards)


def merge(folder: Path) -> int:
    return merge_chunks(folder, ("boards", "probs", "se"))


def run(sample_file: Path, out: Path, procs: int, trials: int, seconds: float, seed: int) -> int:
    boards = np.load(sample_file)["boards"]
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + seconds
    jobs = [
        (boards[i : i + CHUNK], out / f"chunk_{i // CHUNK:05d}.npz", deadline)
        for i in range(0, len(boards), CHUNK)
        if not (out / f"chunk_{i // CHUNK:05d}.npz").exists()
    ]
    done, t0 = 0, time.time()
    with mp.get_context("fork").Pool(procs, initializer=_init, initargs=(trials, seed)) as pool:
        chunks = progress(
            pool.imap_unordered(_chunk, jobs), desc=f"rollouts ({CHUNK} a chunk)", total=len(jobs)
        )
        for k, n in enumerate(chunks, 1):
            done += n
            if k % procs == 0:  # a run cut short keeps a usable merged file
                merge(out)
    total = merge(out)
    rate = done / max(time.time() - t0, 1e-9)
    print(
        f"{done} positions rolled out in {time.time() - t0:.0f} s ({rate:.0f} a second); {total} in {out / 'merged.npz'}"
    )
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="draw race positions to roll out")
    s.add_argument("--positions", type=Path, action="append", required=True)
    s.add_argument("--n", type=int, default=150_000)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("run", help="roll the sample out")
    r.add_argument("--sample", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--procs", type=int, default=2)
    r.add_argument("--trials", type=int, default=72)
    r.add_argument("--seconds", type=float, default=float("inf"), help="take no new chunk after this long")
    r.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        boards = sample(args.positions, args.n, args.seed)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, boards=boards)
        print(f"{len(boards)} race positions outside the bearoff databases -> {args.out}")
        return 0
    run(args.sample, args.out, args.procs, args.trials, args.seconds, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
