"""Generation of the one-sided bearoff tables: roll-count distributions for every side of up to 15 chequers.

For each side (rank as in ``ranking``) two distributions of the number of rolls, as gnubg's gnubg_os0.bd has:

* ``rolls[s, n]``: P(the side needs exactly n rolls to bear off all its chequers), playing every roll so as to
  minimise the expected number of rolls (gnubg's choice);
* ``gammon_rolls[s, n]``: P(exactly n rolls to bear off its first chequer), playing to minimise that
  expectation. A side with fewer than 15 chequers already has one off: n = 0 with certainty.

Dynamic programming by pip count: every die moves at least one pip, so a side's successors all have fewer pips
and are final when its pip level comes up. The best play for a roll is found without listing plays: with
``V1[d](s)`` = the least expectation after one step of d from s, ``V2``, ``V3`` likewise over two and three
steps, a non-double a-b is min(min over a-steps of V1[b], min over b-steps of V1[a]) and a double d is the min
over d-steps of V3[d]. Each pip level is one batch of numpy operations: the whole table takes about a second.
"""

from __future__ import annotations

import numpy as np

from engine.bearoff.moves import ROLL_WEIGHTS, ROLLS, step_table
from engine.bearoff.ranking import POINTS, all_sides

# 15 chequers on the 6-point take at most 30 rolls (2-1 every time); index 31 stays 0, as in gnubg's 32 slots.
MAX_ROLLS = 32


def _solve(step: np.ndarray, pips: np.ndarray, finished: np.ndarray) -> np.ndarray:
    """Roll-count distributions (n, MAX_ROLLS) until a side is ``finished``, minimising the expected count."""
    n = len(pips)
    dist = np.zeros((n, MAX_ROLLS))
    dist[finished, 0] = 1.0
    mean = np.zeros(n)
    # Least expectation reachable with k more steps of die d, and the side where that best line ends.
    best = np.zeros((3, 6, n))
    best_end = np.zeros((3, 6, n), dtype=np.int64)
    weights = ROLL_WEIGHTS / 36.0
    order = np.argsort(pips, kind="stable")
    bounds = np.searchsorted(pips[order], np.arange(pips.max() + 2))
    for level in range(pips.max() + 1):
        sides = order[bounds[level] : bounds[level + 1]]
        if not len(sides):
            continue
        todo = sides[~finished[sides]]
        if len(todo):
            acc = np.zeros((len(todo), MAX_ROLLS - 1))
            for (a, b), w in zip(ROLLS, weights, strict=True):
                if a == b:
                    mids = step[todo, a - 1, :]
                    values, ends = best[2, a - 1][mids], best_end[2, a - 1][mids]
                else:
                    mids = np.concatenate([step[todo, a - 1, :], step[todo, b - 1, :]], axis=1)
                    dice = np.repeat([b - 1, a - 1], POINTS)
                    values, ends = best[0, dice, mids], best_end[0, dice, mids]
                pick = np.argmin(values, axis=1)
                end = ends[np.arange(len(todo)), pick]
                acc += w * dist[end, :-1]
            dist[todo, 1:] = acc
            mean[todo] = dist[todo] @ np.arange(MAX_ROLLS)
        for die in range(6):
            succ = step[sides, die, :]
            values = mean[succ]
            ends = succ
            for k in range(3):
                pick = np.argmin(values, axis=1)
                rows = np.arange(len(sides))
                best[k, die, sides] = values[rows, pick]
                best_end[k, die, sides] = ends[rows, pick]
                if k < 2:
                    values, ends = best[k, die][succ], best_end[k, die][succ]
    return dist


def generate() -> tuple[np.ndarray, np.ndarray]:
    """(rolls, gammon_rolls), each (54,264, MAX_ROLLS) float64 indexed by ``ranking.rank``."""
    sides = all_sides()
    step = step_table(sides)
    counts = sides.astype(np.int64)
    pips = counts @ np.arange(1, POINTS + 1)
    on_board = counts.sum(axis=1)
    rolls = _solve(step, pips, on_board == 0)
    gammon_rolls = _solve(step, pips, on_board < 15)
    return rolls, gammon_rolls
