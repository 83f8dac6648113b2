"""BRAS: speed, agreement with the teacher, and the fit of its weights.

    OMP_NUM_THREADS=1 python -m bench.bras   # positions per second, batches of 1,000 and 64
    python -m bench.bras --check             # Spearman of S with the teacher's P(win) (needs bgsage)
    python -m bench.bras --fit               # refit WEIGHTS and the calibration (needs bgsage, scipy)

Speed: 10,000 seeded positions of every kind in ``bench._positions`` scored in batches, the median of repeats,
from Position objects (conversion included) and from a ready (n, 2, 25) array. The target is 100,000 positions
per second; the seed reports 0.78 ms per position.

Agreement and fit: fresh positions from random legal play (``bench._positions.played``) and from noisy teacher
play (``train.positions.play_game``), a fit set and a held-out set of each, labelled by the teacher at 1-ply.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np

from bench._positions import played, random_cases
from engine import bras
from engine.position import Position

TARGET_PER_S = 100_000
SEED_MS_PER_POSITION = 0.78
FIT_SEEDS = {"random": 1, "teacher": 11}
HELD_OUT_SEEDS = {"random": 2, "teacher": 12}


# -- speed ---------------------------------------------------------------------------------------------------


def _rates(run: Callable[[], object], n: int, repeats: int) -> tuple[float, float]:
    """Positions per second by the median wall-clock time and by the median CPU time of this process."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return n / statistics.median(wall), n / statistics.median(cpu)


def speed(n: int, batches: Sequence[int], repeats: int, seed: int) -> None:
    positions = [pos for _, pos, _ in random_cases(n, seed)]
    boards = bras.positions_to_array(positions)
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"BRAS speed: {n} positions (seed {seed}), median of {repeats} runs, OMP_NUM_THREADS={threads},")
    print(f"load average {load:.1f} on {os.cpu_count()} cores (CPU time is the fairer figure under load)")
    seed_rate = 1000.0 / SEED_MS_PER_POSITION
    head = ("batch", "input", "pos/s wall", "pos/s CPU", "us/pos CPU", "x 100k/s", "x seed")
    print("{:>6} {:>10} {:>11} {:>10} {:>11} {:>9} {:>7}".format(*head))
    for batch in batches:
        for label, data in (("positions", positions), ("array", boards)):

            def run(data: Sequence[Position] | np.ndarray = data, batch: int = batch) -> None:
                for i in range(0, n, batch):
                    bras.bras_score(data[i : i + batch])

            wall, cpu = _rates(run, n, repeats)
            row = (batch, label, f"{wall:,.0f}", f"{cpu:,.0f}", f"{1e6 / cpu:.2f}")
            ratios = (f"{cpu / TARGET_PER_S:.2f}", f"{cpu / seed_rate:.0f}")
            print("{:>6} {:>10} {:>11} {:>10} {:>11} {:>9} {:>7}".format(*row, *ratios))
    print(
        f"(x 100k/s: CPU rate over the 100,000/s target; x seed: over the seed's {SEED_MS_PER_POSITION} ms)"
    )


# -- agreement and fit ---------------------------------------------------------------------------------------


def random_play(n: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    return [played(rng) for _ in range(n)]


def teacher_play(n: int, seed: int) -> list[Position]:
    from train.positions import play_game

    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < n:
        out += play_game(rng, explore=0.08, noise=0.03, threads=1)
    return out[:n]


def labelled(n: int, seeds: dict[str, int]) -> dict[str, tuple[list[Position], np.ndarray, np.ndarray]]:
    """{set: (positions, teacher probs with the side on roll, P(win) symmetrised over who is on roll)}."""
    from train.teacher import evaluate_positions

    sets = {"random": random_play(n, seeds["random"]), "teacher": teacher_play(n, seeds["teacher"])}
    out = {}
    for name, positions in sets.items():
        probs = evaluate_positions(positions)
        swapped = evaluate_positions([p.swap() for p in positions])
        out[name] = (positions, probs, (probs[:, 0] + 1.0 - swapped[:, 0]) / 2.0)
    return out


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 with ties sharing their mean rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(len(x))
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(_ranks(np.asarray(a)), _ranks(np.asarray(b)))[0, 1])


def check(n: int) -> None:
    print(f"Spearman of BRAS S with the teacher (bgsage 1-ply), {n} held-out positions a set")
    for name, (positions, probs, sym) in labelled(n, HELD_OUT_SEEDS).items():
        s = bras.bras_score(positions)
        p = bras.bras_probs(positions)
        race = np.array([pos.is_race() for pos in positions])
        on_roll, symmetrised = spearman(s, probs[:, 0]), spearman(s, sym)
        races, contact = spearman(s[race], probs[race, 0]), spearman(s[~race], probs[~race, 0])
        print(f"  {name} play: S vs P(win) on roll {on_roll:.3f}, vs P(win) symmetrised {symmetrised:.3f},")
        print(f"    races only ({race.sum()}) {races:.3f}, contact only {contact:.3f}")
        errors = np.abs(p - probs).mean(axis=0)
        print("    calibrated outputs, mean abs error: " + ", ".join(f"{e:.3f}" for e in errors))


def _logistic_fit(x: np.ndarray, p: np.ndarray, lower: Sequence[float | None]) -> np.ndarray:
    """Maximum likelihood of soft labels p under logistic(x @ c), with lower bounds on c."""
    from scipy.optimize import minimize

    def loss(c: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ c
        q = 1.0 / (1.0 + np.exp(-z))
        return float(np.sum(np.logaddexp(0.0, z) - p * z)), x.T @ (q - p)

    res = minimize(
        loss, np.ones(x.shape[1]), jac=True, bounds=[(lo, None) for lo in lower], method="L-BFGS-B"
    )
    return np.asarray(res.x)


def fit(n: int) -> None:
    data = labelled(n, FIT_SEEDS)
    positions = [pos for ps, _, _ in data.values() for pos in ps]
    probs = np.vstack([pr for _, pr, _ in data.values()])
    sym = np.concatenate([s for _, _, s in data.values()])
    feats = bras.bras_features(positions)

    # S / 100 = logistic(2 D / sigma): fit w on 2 f / sigma against the symmetrised win chance.
    w = _logistic_fit(2.0 * feats / bras.SIGMA, sym, [bras.W_FLOOR] * bras.N_FEATURES)
    w = np.round(w / 0.05) * 0.05
    print("WEIGHTS =", ", ".join(f"{name}={v:.2f}" for name, v in zip(bras.FEATURE_NAMES, w, strict=True)))

    # Calibration with the side on roll: P(win) = logistic(slope * D / sigma + tempo).
    d = (feats * w).sum(axis=1) / bras.SIGMA
    slope, tempo = _logistic_fit(np.c_[d, np.ones_like(d)], probs[:, 0], [None, None])
    print(f"P_SLOPE = {slope:.2f}, P_TEMPO = {tempo:.3f}")

    # Gammon share of the player on roll's wins (where a gammon is still possible and wins are not rare).
    b = bras.positions_to_array(positions)
    loser, winner = b[:, 1].astype(np.float64), b[:, 0]
    ok = (loser.sum(axis=1) == 15) & (probs[:, 0] > 0.05)
    share = probs[ok, 1] / probs[ok, 0]
    x = np.c_[
        np.ones(ok.sum()), loser[ok, 6:25] @ np.arange(1, 20) / 100.0, (15 - winner[ok].sum(axis=1)) / 15
    ]
    g = np.linalg.lstsq(x, share, rcond=None)[0]
    print(f"G_BASE = {g[0]:.3f}, G_PIPS = {g[1]:.3f}, G_OFF = {g[2]:.3f}  (gammon share, r = "
          f"{np.corrcoef(x @ g, share)[0, 1]:.3f}, max seen {share.max():.2f})")  # fmt: skip
    okg = ok & (probs[:, 1] > 0.02)
    bg_share = probs[okg, 2] / probs[okg, 1]
    back = loser[okg, 18:25].sum(axis=1) / 15.0
    k = float(back @ bg_share / (back @ back))
    print(f"BG_BACK = {k:.3f}  (backgammon share of gammons through the origin)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--check", action="store_true", help="Spearman of S with the teacher on held-out positions"
    )
    ap.add_argument("--fit", action="store_true", help="refit the weights and the calibration, print them")
    ap.add_argument("-n", type=int, default=None, help="positions (speed: 10000; check/fit: 2000 a set)")
    ap.add_argument("--batches", type=int, nargs="+", default=[1000, 64])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=2025)
    args = ap.parse_args(argv)
    if args.fit:
        fit(args.n or 2000)
    elif args.check:
        check(args.n or 2000)
    else:
        speed(args.n or 10_000, args.batches, args.repeats, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
