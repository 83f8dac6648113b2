"""Stage 2: label every position shard with the teacher's cubeless probabilities, resumably.

    python -m train.label --positions train/data/positions --out train/data/labels --level 2ply

For each positions shard ``shard_NNNN.npz`` a labels shard of the same name is written holding ``probs`` (n, 5)
float32 for the player on roll. Existing label shards are skipped, so the stage resumes after an interruption.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from train import teacher
from train.progress import progress

CHUNK = 2_000


def label_shard(src: Path, dst: Path, level: str, threads: int) -> int:
    boards = np.load(src)["boards"]
    parts = [teacher.evaluate(boards[i : i + CHUNK], level, threads) for i in range(0, len(boards), CHUNK)]
    probs = np.concatenate(parts) if parts else np.zeros((0, 5))
    tmp = dst.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, probs=probs.astype(np.float32), level=level)
    tmp.replace(dst)
    return len(boards)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=Path, default=Path("train/data/positions"))
    ap.add_argument("--out", type=Path, default=Path("train/data/labels"))
    ap.add_argument("--level", default="2ply", choices=["1ply", "2ply", "3ply"])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    todo = [p for p in sorted(args.positions.glob("shard_*.npz")) if ".tmp" not in p.name]
    todo = [p for p in todo if not (args.out / p.name).exists()]
    t0 = time.time()
    n = sum(label_shard(p, args.out / p.name, args.level, args.threads) for p in progress(todo, desc="label"))
    print(f"labelled {n} positions in {len(todo)} shards at {args.level} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
