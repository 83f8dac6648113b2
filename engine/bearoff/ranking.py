"""Combinatorial ranking of one side's home board: up to 15 chequers on 6 points <-> 0 .. 54,263.

A side's home board is the counts c1..c6 on its points 1..6 (the rest of its 15 chequers are off). Read the
counts from the 6-point down as a row of stars and bars: k-1 bars, then the chequers of points 6, 5, ..., 7-k.
The k-th bar (k = 1..6) then sits at

    b_k = (k - 1) + c6 + c5 + ... + c(7-k)          so 0 <= b_1 < b_2 < ... < b_6 = 5 + (chequers on board)

and the position's rank is the colexicographic rank of the 6-subset {b_1, ..., b_6}:

    rank = C(b_1, 1) + C(b_2, 2) + ... + C(b_6, 6).

Colex ranks are nested: the sides with at most n chequers are exactly the ranks below C(n + 6, 6), so the
empty side is 0, the 924 sides of at most 6 chequers (the two-sided database) come first, and the 54,264
sides of at most 15 chequers fill 0 .. C(21, 6) - 1 with no gaps. It is the same order gnubg's
``PositionBearoff`` gives, which lets a cross-check read gnubg's own database files by index.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np

from engine.errors import InvalidPositionError
from engine.moves import c_extension, uint8_boards

POINTS = 6
MAX_CHEQUERS = 15


def table_size(chequers: int) -> int:
    """Number of sides with at most ``chequers`` chequers on the 6 home points (the empty side included)."""
    return comb(chequers + POINTS, POINTS)


ONE_SIDED_SIZE = table_size(MAX_CHEQUERS)  # 54,264

# _BINOM[n, k] = C(n, k) for every b_k that can occur (n <= 5 + 15).
_BINOM = np.array(
    [[comb(n, k) for k in range(POINTS + 1)] for n in range(MAX_CHEQUERS + POINTS)], dtype=np.int64
)
_OFFSETS = np.arange(POINTS, dtype=np.int64)
_KS = np.arange(1, POINTS + 1)


class BearoffRangeError(InvalidPositionError):
    """A side that is not a bearoff side: chequers outside the home board, or too many of them."""


def home_counts(side: Sequence[int], max_chequers: int = MAX_CHEQUERS) -> tuple[int, ...]:
    """The 6 home-board counts of a side given as 25 counts (a ``Position`` side) or as 6 counts.

    Raises BearoffRangeError for chequers beyond the 6-point or on the bar, negative counts, or more than
    ``max_chequers`` chequers.
    """
    try:
        counts = tuple(int(c) for c in side)
    except (TypeError, ValueError):
        raise BearoffRangeError(f"a side is 6 or 25 integer counts, not {side!r}") from None
    if len(counts) == 25:
        if any(counts[POINTS:]):
            raise BearoffRangeError("a bearoff side has no chequers beyond its 6-point or on the bar")
        counts = counts[:POINTS]
    elif len(counts) != POINTS:
        raise BearoffRangeError(f"a side is 6 or 25 counts, not {len(counts)}")
    if min(counts) < 0:
        raise BearoffRangeError(f"negative chequer count in {counts}")
    if sum(counts) > max_chequers:
        raise BearoffRangeError(f"{sum(counts)} chequers on the home board, at most {max_chequers}")
    return counts


def rank(side: Sequence[int]) -> int:
    """Rank of one side (6 or 25 counts) among the sides of at most 15 chequers."""
    counts = home_counts(side)
    total = 0
    b = -1
    for k in range(1, POINTS + 1):
        b += 1 + counts[POINTS - k]
        total += int(_BINOM[b, k])
    return total


def rank_array(counts: np.ndarray) -> np.ndarray:
    """Ranks of many sides at once: ``counts`` (..., 6) of non-negative ints (unchecked) -> (...) int64."""
    c = np.asarray(counts, dtype=np.int64)
    b = np.cumsum(c[..., ::-1], axis=-1) + _OFFSETS
    return _BINOM[b, _KS].sum(axis=-1)


def unrank(index: int) -> tuple[int, ...]:
    """The 6 home-board counts of rank ``index``; BearoffRangeError outside 0 .. 54,263."""
    if not isinstance(index, int | np.integer) or not 0 <= index < ONE_SIDED_SIZE:
        raise BearoffRangeError(f"bearoff index {index!r} is not in 0..{ONE_SIDED_SIZE - 1}")
    rest = int(index)
    bars = [0] * POINTS
    for k in range(POINTS, 0, -1):
        b = k - 1
        while b + 1 < len(_BINOM) and _BINOM[b + 1, k] <= rest:
            b += 1
        bars[k - 1] = b
        rest -= int(_BINOM[b, k])
    counts = [0] * POINTS
    previous = -1
    for k in range(1, POINTS + 1):
        counts[POINTS - k] = bars[k - 1] - previous - 1
        previous = bars[k - 1]
    return tuple(counts)


def all_sides(max_chequers: int = MAX_CHEQUERS) -> np.ndarray:
    """Every side of at most ``max_chequers`` chequers, row i the side of rank i: (C(n + 6, 6), 6) int8."""
    rows: list[tuple[int, ...]] = []

    def fill(prefix: tuple[int, ...], left: int) -> None:
        if len(prefix) == POINTS:
            rows.append(prefix)
            return
        for n in range(left + 1):
            fill((*prefix, n), left - n)

    fill((), max_chequers)
    sides = np.array(rows, dtype=np.int8)
    out = np.empty_like(sides)
    out[rank_array(sides)] = sides
    return out


def board_ranks_numpy(boards: np.ndarray) -> np.ndarray:
    """(n, 2) ranks of both sides' points 1-6 of (n, 2, 25) boards (the reference of ``board_ranks``)."""
    return rank_array(np.asarray(boards)[:, :, :POINTS])


def _board_ranks_c(boards: np.ndarray) -> np.ndarray:
    raw = uint8_boards(boards)
    return np.frombuffer(_C.home_ranks(raw), dtype=np.int64).reshape(len(raw), 2)


# In C where engine.moves uses C: one call for a batch instead of numpy's cumulative sum and gathers.
_C = c_extension()
board_ranks = _board_ranks_c if hasattr(_C, "home_ranks") else board_ranks_numpy
