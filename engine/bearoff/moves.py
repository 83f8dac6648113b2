"""A bear-off move generator over home-board arrays, for all sides of a ranking at once.

In a pure bear-off (every chequer home, no contact) a single die is always playable while a chequer is left:
a chequer above the die's point moves down, one on it bears off, and with none on or above it the highest
chequer bears off. So "play both dice if you can" never bites before the side is empty, and the positions a
roll can reach are just the single-die steps chained: two (in either order) for a non-double, four for a
double. That turns move generation into lookups in one table, ``step[side, die - 1, point - 1]``.
"""

from __future__ import annotations

import numpy as np

from engine.bearoff.ranking import POINTS, rank_array

# The 21 distinct rolls and how many of the 36 dice outcomes each one stands for.
ROLLS: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))
ROLL_WEIGHTS = np.array([1.0 if a == b else 2.0 for a, b in ROLLS])


def step_table(sides: np.ndarray) -> np.ndarray:
    """Single-die successors: (n, 6 dice, 6 source points) int32 ranks, for ``sides`` = ``all_sides(...)``.

    Entry [s, d - 1, p - 1] is the rank of side s after a chequer on point p plays die d. Where that step is
    not legal (no chequer on p, or a die larger than p while a higher point is occupied) it repeats the first
    legal step instead, so a row can be searched with min/max without masks. The empty side steps to itself.
    """
    counts = sides.astype(np.int64)
    n = len(counts)
    occupied = counts > 0
    # 0-based index of the highest occupied point, -1 for the empty side.
    highest = np.where(occupied.any(axis=1), POINTS - 1 - np.argmax(occupied[:, ::-1], axis=1), -1)
    table = np.zeros((n, 6, POINTS), dtype=np.int32)
    for die in range(1, 7):
        legal = np.zeros((n, POINTS), dtype=bool)
        for point in range(1, POINTS + 1):
            ok = occupied[:, point - 1] & ((point >= die) | (highest == point - 1))
            legal[:, point - 1] = ok
            after = counts[ok].copy()
            after[:, point - 1] -= 1
            if point > die:
                after[:, point - die - 1] += 1
            table[ok, die - 1, point - 1] = rank_array(after)
        # Fill the illegal steps with the first legal one (the empty side has none: it stays at rank 0).
        first = np.argmax(legal, axis=1)
        fill = table[np.arange(n), die - 1, first]
        table[:, die - 1, :] = np.where(legal, table[:, die - 1, :], fill[:, None])
    return table


def roll_successors(step: np.ndarray, roll: tuple[int, int], sides: np.ndarray) -> list[np.ndarray]:
    """Distinct sides (ranks) reachable with ``roll`` from each of ``sides`` (ranks): a sorted array for each.

    Used where every successor is wanted (the two-sided database); the one-sided database chains the steps
    instead and never lists them.
    """
    a, b = roll
    sides = np.asarray(sides)
    n = len(sides)
    if a == b:
        reach = sides[:, None]
        for _ in range(4):
            reach = step[reach, a - 1, :].reshape(n, -1)
    else:
        first = step[step[sides, a - 1, :], b - 1, :].reshape(n, -1)
        second = step[step[sides, b - 1, :], a - 1, :].reshape(n, -1)
        reach = np.concatenate([first, second], axis=1)
    return [np.unique(row) for row in reach]
