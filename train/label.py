"""Stage 2: label every position shard with the teacher's cubeless probabilities, resumably.

    python -m train.label --positions train/data/positions --out train/data/labels --level 2ply

For each positions shard ``shard_NNNN.npz`` a labels shard of the same name is written holding ``probs`` (n, 5)
float32 for the player on roll. Existing label shards are skipped, so the stage resumes after an interruption.

``--race-from DIR`` labels only the contact rows at ``--level`` and copies the race rows' labels from DIR's shard
of the same name: a deeper labelling (3-ply costs about 20 ms a position on one core, 40 times 2-ply) then goes
where the contact nets learn, and the race net keeps the labels it was fitted on.

    python -m train.label --positions train/data/positions --out train/data/labels3 --level 3ply \
        --race-from train/data/labels --threads 2
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from train import teacher
from train.progress import progress
from train.shards import shard_range

CHUNK = 2_000


def label_shard(src: Path, dst: Path, level: str, threads: int, race_from: Path | None = None) -> int:
    boards = np.load(src)["boards"]
    rows = np.arange(len(boards))
    probs = np.zeros((len(boards), 5))
    source = level  # what the shard records about its labels
    if race_from is not None:
        from train.fit import class_mask

        rows = np.flatnonzero(class_mask(boards, "contact"))
        probs[:] = np.load(race_from / src.name)["probs"]
        source = f"{level} contact, race from {race_from}"
    for i in range(0, len(rows), CHUNK):
        chunk = rows[i : i + CHUNK]
        probs[chunk] = teacher.evaluate(boards[chunk], level, threads)
    tmp = dst.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, probs=probs.astype(np.float32), level=source)
    tmp.replace(dst)
    return len(boards)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=Path, default=Path("train/data/positions"))
    ap.add_argument("--out", type=Path, default=Path("train/data/labels"))
    ap.add_argument("--level", default="2ply", choices=["1ply", "2ply", "3ply"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--race-from", type=Path, help="copy race rows' labels from this labels folder")
    ap.add_argument("--shards", help="only these shard numbers, e.g. 8-39")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    todo = [p for p in sorted(args.positions.glob("shard_*.npz")) if ".tmp" not in p.name]
    todo = [p for p in todo if not (args.out / p.name).exists()]
    if args.shards:
        wanted = shard_range(args.shards)
        todo = [p for p in todo if int(p.stem.split("_")[1]) in wanted]
    t0 = time.time()
    n = sum(
        label_shard(p, args.out / p.name, args.level, args.threads, args.race_from)
        for p in progress(todo, desc="label")
    )
    print(f"labelled {n} positions in {len(todo)} shards at {args.level} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
