"""Legal-move generator speed: move lists per second on one core, non-doubles and doubles apart.

    python -m bench.movegen [--positions 1000] [--seed 7] [--repeats 7]

The fixed set: ``--positions`` distinct contact positions from seeded random play (bench/_positions.py),
each with all 15 non-double rolls and, separately, all 6 doubles. Every call is the public
``legal_plays(pos, roll)`` (dice check and Play objects included); the figure is the median over ``--repeats``
passes. Both generators are measured, the C extension when it is built and the pure-Python reference always.
Target: 20,000 non-double lists per second (50 µs each). Exits 1 when legal_plays misses the target.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import engine.moves as moves
from bench._positions import DOUBLES, NON_DOUBLES, Roll, contact_positions
from engine.position import Position

TARGET_PER_S = 20_000


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


def time_pass(
    generate: Callable[[Position, int, int], list], cases: list[tuple[Position, Roll]]
) -> tuple[float, int]:
    """Seconds for one pass of legal_plays over ``cases`` with ``generate`` behind it, and plays returned."""
    saved = moves._generate
    moves._generate = generate
    legal_plays = moves.legal_plays
    try:
        gc.collect()
        plays = 0
        start = time.perf_counter()
        for pos, roll in cases:
            plays += len(legal_plays(pos, roll))
        return time.perf_counter() - start, plays
    finally:
        moves._generate = saved


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)

    pinned = pin_to_one_core()
    positions = contact_positions(args.positions, args.seed)
    sets = {
        "non-doubles": [(p, r) for p in positions for r in NON_DOUBLES],
        "doubles": [(p, r) for p in positions for r in DOUBLES],
    }
    impls: list[tuple[str, Callable[[Position, int, int], list]]] = [("python", moves._legal_plays_python)]
    if moves._legal_plays_c is not None:
        impls.insert(0, ("c", moves._legal_plays_c))
    print(
        f"{len(positions)} contact positions (seed {args.seed}), median of {args.repeats} passes, {pinned}; "
        f"Python {platform.python_version()} on {platform.machine()}; legal_plays: {moves.IMPLEMENTATION}"
    )
    print(f"{'generator':<9} {'rolls':<12} {'lists':>7} {'plays/list':>10} {'lists/s':>10} {'µs/list':>8}")
    worst = None
    for name, generate in impls:
        for label, cases in sets.items():
            passes = [time_pass(generate, cases) for _ in range(args.repeats)]
            seconds = statistics.median(t for t, _ in passes)
            rate = len(cases) / seconds
            print(
                f"{name:<9} {label:<12} {len(cases):>7} {passes[0][1] / len(cases):>10.1f} {rate:>10,.0f} "
                f"{1e6 / rate:>8.1f}"
            )
            if name == moves.IMPLEMENTATION and label == "non-doubles":
                worst = rate
    ok = worst is not None and worst >= TARGET_PER_S
    print(
        f"target {TARGET_PER_S:,} non-double lists/s with legal_plays ({moves.IMPLEMENTATION}): "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
