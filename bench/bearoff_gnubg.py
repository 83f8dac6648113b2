"""Cross-check engine.bearoff against GNU Backgammon 1.07 and time it; (re)write the test vectors.

    python bench/bearoff_gnubg.py [--n 400] [--seed 1] [--vectors 100] [--out tests/data/gnubg_bearoff.jsonl]
                                  [--no-files] [--no-gnubg]

1. Timings: generation of each table from scratch (one core: numpy is single-threaded here), writing and
   reading the cache, and batch evaluation.
2. gnubg's 0-ply evaluation (shared harness ``gnubg_query.sh``, op "eval") of N seeded random bearoff
   positions, half of them BEAROFF2 (at most 6 chequers a side: gnubg reads its two-sided gnubg_ts0.bd) and
   half BEAROFF1 (its one-sided gnubg_os0.bd; two thirds of them with a side of 15 chequers, so that gammons
   count). Reports the largest absolute difference of each of the 5 outputs per class. The first
   ``--vectors`` of them (half of each class) go to the vector file that tests/test_bearoff.py checks.
3. Unless ``--no-files``: the tables themselves against gnubg's database files (read here only, to compare):
   the one-sided distributions against /usr/share/gnubg/gnubg_os0.bd, the two-sided equities against
   /var/lib/gnubg/gnubg_ts0.bd (both indexed in the same order as ours; see engine/bearoff/ranking.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from engine.bearoff import BearoffDatabase, OneSidedTable, TwoSidedTable  # noqa: E402
from engine.bearoff.ranking import ONE_SIDED_SIZE  # noqa: E402
from engine.bearoff.two_sided import SIZE as TWO_SIDED_SIZE  # noqa: E402
from engine.position import Position, PositionClass  # noqa: E402

HARNESS = ROOT.parent / "shared" / "tools" / "gnubg" / "gnubg_query.sh"
OS_FILE = Path("/usr/share/gnubg/gnubg_os0.bd")
TS_FILE = Path("/var/lib/gnubg/gnubg_ts0.bd")
DEFAULT_OUT = ROOT / "tests" / "data" / "gnubg_bearoff.jsonl"
MONEY_MATCH_ID = "cAkAAAAAAAAA"  # money game, centred cube, player 0 on roll
OUTPUTS = ("win", "wg", "wbg", "lg", "lbg")


def random_side(rng: random.Random, chequers: int) -> list[int]:
    """``chequers`` spread over the 6 home points: uniformly at random, or stacked on fewer points."""
    points = rng.sample(range(6), rng.randint(1, 6))
    side = [0] * 25
    for _ in range(chequers):
        side[rng.choice(points)] += 1
    return side


def sample(rng: random.Random, n: int) -> list[Position]:
    """n/2 BEAROFF2 positions, then n/2 BEAROFF1 ones: two thirds with a side still on 15 (so that gammons
    count), a third of close races."""
    out: list[Position] = []
    while len(out) < n // 2:
        out.append(Position(random_side(rng, rng.randint(1, 6)), random_side(rng, rng.randint(1, 6))))
    while len(out) < n:
        k = len(out) % 3
        if k == 0:  # the roller may gammon: the opponent has everything on board
            me, opp = rng.randint(1, 8), 15
        elif k == 1:  # the roller may be gammoned
            me, opp = 15, rng.randint(1, 8)
        else:
            me, opp = rng.randint(1, 15), rng.randint(7, 15)
        if rng.random() < 0.5:
            me, opp = opp, me
        pos = Position(random_side(rng, me), random_side(rng, opp))
        mine, theirs = pos.pips()
        # Keep the plain races close (a lopsided race tests nothing but 0 and 1).
        close = k < 2 or abs(mine - theirs) <= max(6, (mine + theirs) // 10)
        if close and pos.classify() == PositionClass.BEAROFF1:
            out.append(pos)
    return out


def ask_gnubg(positions: list[Position]) -> list[list[float]]:
    """gnubg's 0-ply cubeless outputs (win, wg, wbg, lg, lbg) for the side on roll of each position."""
    lines = "".join(
        json.dumps({"op": "eval", "gnubgid": f"{p.position_id}:{MONEY_MATCH_ID}", "plies": [0], "prune": 0})
        + "\n"
        for p in positions
    )
    done = subprocess.run(
        [str(HARNESS)], input=lines, capture_output=True, text=True, check=True, env={**os.environ}
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(replies) != len(positions):
        raise RuntimeError(
            f"gnubg answered {len(replies)} of {len(positions)} requests: {done.stderr[-500:]}"
        )
    out = []
    for pos, reply in zip(positions, replies, strict=True):
        board = reply["position"]["board"]
        if tuple(board["on_roll"]) != pos.me or tuple(board["opponent"]) != pos.opp:
            raise RuntimeError(f"gnubg read {pos.position_id} as another board: {board}")
        ev = reply["evals"][0]
        out.append([float(ev[k]) for k in OUTPUTS])
    return out


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def report_timings() -> BearoffDatabase:
    one, t_one = timed(OneSidedTable.generate)
    two, t_two = timed(TwoSidedTable.generate)
    print(f"generate one-sided (54,264 sides): {t_one:.2f} s; two-sided (924 x 924 pairs): {t_two:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        _, t_first = timed(lambda: BearoffDatabase.load(tmp))
        db, t_load = timed(lambda: BearoffDatabase.load(tmp))
        sizes = {p.name: p.stat().st_size for p in Path(tmp).iterdir()}
    assert db.sources["one_sided"] != "generated" and db.sources["two_sided"] != "generated"
    assert np.array_equal(db.one_sided.rolls, one.rolls) and np.array_equal(db.two_sided.table, two.table)
    print(f"load with empty cache (generate + write): {t_first:.2f} s; load from cache: {t_load:.3f} s")
    print("cache files: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sizes.items())))
    rng = random.Random(99)
    batch = sample(rng, 10_000)
    for label, part in (("BEAROFF2", batch[:5000]), ("BEAROFF1", batch[5000:])):
        _, t_eval = timed(lambda part=part: db.evaluate(part))
        print(f"evaluate {len(part)} {label} positions in one batch: {t_eval * 1e3:.1f} ms")
    return db


def report_gnubg(db: BearoffDatabase, n: int, seed: int, vectors: int, out: Path | None) -> None:
    positions = sample(random.Random(seed), n)
    theirs, t_gnubg = timed(lambda: np.array(ask_gnubg(positions)))
    ours = db.evaluate(positions)
    print(f"gnubg 0-ply eval of {n} bearoff positions: {t_gnubg:.1f} s")
    classes = np.array([p.classify().name for p in positions])
    for cls in ("BEAROFF2", "BEAROFF1"):
        rows = classes == cls
        diff = np.abs(ours[rows] - theirs[rows]).max(axis=0)
        worst = int(np.flatnonzero(rows)[np.abs(ours[rows] - theirs[rows]).max(axis=1).argmax()])
        print(
            f"{cls} ({rows.sum()} positions) max |ours - gnubg|: "
            + " ".join(f"{k} {d:.2e}" for k, d in zip(OUTPUTS, diff, strict=True))
            + f"  (worst {positions[worst].position_id})"
        )
    if out is not None and vectors:
        half = vectors // 2
        chosen = list(range(half)) + list(range(n // 2, n // 2 + vectors - half))
        with out.open("w") as f:
            for i in chosen:
                row = {
                    "position_id": positions[i].position_id,
                    "class": str(classes[i]),
                    "gnubg": [round(v, 7) for v in theirs[i]],
                }
                f.write(json.dumps(row) + "\n")
        print(f"wrote {len(chosen)} vectors to {out}")


def read_gnubg_one_sided(path: Path = OS_FILE) -> tuple[np.ndarray, np.ndarray]:
    """gnubg's compressed one-sided file (header "gnubg-OS-06-15-1-1-0"): (P(n rolls), P(first off in n)),
    each (54,264, 32), in our rank order. Layout: 40-byte header, then per side 8 bytes (offset into the
    data in uint16 units, then count and first index of the stored non-zero slots of each distribution),
    then the data, probabilities as uint16 / 65535."""
    raw = path.read_bytes()
    if not raw.startswith(b"gnubg-OS-06-15-1-1-0"):  # 6 points, 15 chequers, gammons, compressed, exact
        raise ValueError(f"{path}: unexpected header {raw[:20]!r}")
    index = np.frombuffer(raw, dtype=np.uint8, count=ONE_SIDED_SIZE * 8, offset=40).reshape(-1, 8)
    offset = index[:, :4].astype(np.int64) @ (256 ** np.arange(4))
    data = np.frombuffer(raw, dtype="<u2", offset=40 + ONE_SIDED_SIZE * 8).astype(np.float64) / 65535
    rolls = np.zeros((ONE_SIDED_SIZE, 32))
    gammon = np.zeros((ONE_SIDED_SIZE, 32))
    for i in range(ONE_SIDED_SIZE):
        o, nz, lo, nzg, log = int(offset[i]), *(int(v) for v in index[i, 4:])
        rolls[i, lo : lo + nz] = data[o : o + nz]
        gammon[i, log : log + nzg] = data[o + nz : o + nz + nzg]
    return rolls, gammon


def read_gnubg_two_sided(path: Path = TS_FILE) -> np.ndarray:
    """gnubg's two-sided file (header "gnubg-TS-06-06-1"): (924, 924, 4) [on roll, opponent] of cubeless
    equity and the no-double money equities with the cube owned, centred, owned by the opponent; uint16 pairs
    after a 40-byte header, equity = value / 32767.5 - 1."""
    with path.open("rb") as f:
        header = f.read(40)
        if not header.startswith(b"gnubg-TS-06-06-1"):
            raise ValueError(f"{path}: unexpected header {header[:16]!r}")
        raw = np.fromfile(f, dtype="<u2")
    return raw.reshape(TWO_SIDED_SIZE, TWO_SIDED_SIZE, 4) / 32767.5 - 1.0


def in_gnubg_columns(table: np.ndarray) -> np.ndarray:
    """Our two-sided table (win, centred, owned, opponent owns) in gnubg's (equity, owned, centred, opp.)."""
    t = table.astype(np.float64)
    return np.stack([2 * t[..., 0] - 1, t[..., 2], t[..., 1], t[..., 3]], axis=-1)


def report_files(db: BearoffDatabase) -> None:
    if OS_FILE.exists():
        rolls, gammon = read_gnubg_one_sided()
        n = np.arange(32)
        d_roll = np.abs(db.one_sided.rolls - rolls).max()
        d_gammon = np.abs(db.one_sided.gammon_rolls - gammon).max()
        d_mean = np.abs(db.one_sided.rolls @ n - rolls @ n).max()
        big = int((np.abs(db.one_sided.rolls - rolls).max(axis=1) > 1e-3).sum())
        print(
            f"one-sided vs {OS_FILE.name}: max |P(n rolls)| diff {d_roll:.2e} ({big} sides above 1e-3), "
            f"first-off {d_gammon:.2e}, mean rolls {d_mean:.2e}"
        )
    else:
        print(f"{OS_FILE} not found: one-sided file check skipped")
    if TS_FILE.exists() and db.two_sided is not None:
        d = np.abs(in_gnubg_columns(db.two_sided.table) - read_gnubg_two_sided())[1:, 1:]
        d = d.reshape(-1, 4).max(axis=0)
        print(
            f"two-sided vs {TS_FILE.name}: max diff cubeless equity {d[0]:.2e}, owned {d[1]:.2e}, "
            f"centred {d[2]:.2e}, opponent owns {d[3]:.2e}"
        )
    else:
        print(f"{TS_FILE} not found: two-sided file check skipped")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="random positions to evaluate with gnubg")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vectors", type=int, default=100, help="how many to write to --out (0: none)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--no-gnubg", action="store_true", help="skip the gnubg evaluations")
    ap.add_argument("--no-files", action="store_true", help="skip reading gnubg's database files")
    args = ap.parse_args()
    db = report_timings()
    if not args.no_gnubg:
        report_gnubg(db, args.n, args.seed, args.vectors, args.out)
    if not args.no_files:
        report_files(db)


if __name__ == "__main__":
    main()
