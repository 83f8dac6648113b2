"""Generation of the two-sided bearoff table: up to 6 chequers a side on 6 points, exact and cubeful.

For every pair (side on roll x, opponent y) of the 924 sides of at most 6 chequers, from the roller's view
before the roll:

* ``win``: P(win) with optimal play by both sides (each move maximises its own winning chance);
* ``centred``, ``owned``, ``opponent_owns``: money equities per unit cube when the roller does not double
  now, with the cube centred, owned by the roller, owned by the opponent; every later move and cube action is
  optimal. These are the numbers gnubg's gnubg_ts0.bd stores. Not doubling, the roller gets
  ND = mean over rolls of the best -E'(y, x'), E' being the opponent's equity after its own cube decision in
  the matching state (centred -> centred, roller owns -> the opponent sees the other side own it, and back).
  A roller who may double gets E = max(ND, min(1, 2 * ND_opponent_owns)): the opponent takes (the cube goes
  over at 2) or passes (+1). No gammons exist here: each side has at least 9 chequers off.

Successor lists depend only on the mover's side and the roll (no contact in a bear-off), so they are built
once per (side, roll). The DP runs by total pip count of both sides, one numpy batch per level.
"""

from __future__ import annotations

import numpy as np

from engine.bearoff.moves import ROLL_WEIGHTS, ROLLS, roll_successors, step_table
from engine.bearoff.ranking import POINTS, all_sides, table_size

CHEQUERS = 6
SIZE = table_size(CHEQUERS)  # 924

# Columns of the value tables, for the side on roll at [x, y] before its cube decision.
WIN, CENTRED, OWNED, OPPONENT_OWNS = range(4)
# The opponent's column each of the roller's columns reads after the roll (the turn passes, the cube stays).
_NEXT_STATE = np.array([WIN, CENTRED, OPPONENT_OWNS, OWNED])

# Pairs per batch: the gathered successor values of a batch are about 75 x 4 floats per pair.
_CHUNK = 16384


def _flat_successors(step: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (side, roll) successor lists of the sides below ``size``, concatenated side by side, roll by roll.

    Returns (succ, side_start, segment_length): side x's 21 lists are succ[side_start[x] : side_start[x + 1]],
    the one for roll r (in ``ROLLS`` order) having segment_length[x, r] entries (never 0).
    """
    per_roll = [roll_successors(step, roll, np.arange(size)) for roll in ROLLS]
    lengths = np.array([[len(per_roll[r][x]) for r in range(len(ROLLS))] for x in range(size)])
    succ = np.concatenate([per_roll[r][x] for x in range(size) for r in range(len(ROLLS))]).astype(np.int64)
    side_start = np.concatenate([[0], np.cumsum(lengths.sum(axis=1))])
    return succ, side_start, lengths


def generate(chequers: int = CHEQUERS) -> np.ndarray:
    """The table: (n, n, 4) float64 [x on roll, y opponent, column], n = C(chequers + 6, 6) (SIZE for 6).

    Columns: WIN = P(win) for x; CENTRED, OWNED, OPPONENT_OWNS = money equity per unit cube when x does not
    double now (with the cube centred, owned by x, owned by y) and everyone acts optimally afterwards. These
    are the numbers a cube decision needs: x's double/take is 2 * [OPPONENT_OWNS], double/pass is +1.
    Sides of fewer chequers only ever move to sides of fewer chequers, so a smaller ``chequers`` gives
    exactly the top-left block of the full table (the ranking is nested).
    """
    size = table_size(chequers)
    sides = all_sides(chequers)
    succ, side_start, seg_len = _flat_successors(step_table(sides), size)
    pips = sides.astype(np.int64) @ np.arange(1, POINTS + 1)
    rolls = len(ROLLS)
    weights = ROLL_WEIGHTS / 36.0

    # ``after_cube`` is what the side on roll expects once its cube decision is made: the table the DP reads.
    no_double = np.zeros((size, size, 4))
    after_cube = np.zeros((size * size, 4))
    won, lost = (1.0, 1.0, 1.0, 1.0), (0.0, -1.0, -1.0, -1.0)
    no_double[0, 1:], no_double[1:, 0] = won, lost
    after_cube.reshape(size, size, 4)[0, 1:] = won
    after_cube.reshape(size, size, 4)[1:, 0] = lost

    xs, ys = np.meshgrid(np.arange(1, size), np.arange(1, size), indexing="ij")
    xs, ys = xs.ravel(), ys.ravel()
    level = pips[xs] + pips[ys]
    order = np.argsort(level, kind="stable")
    xs, ys, level = xs[order], ys[order], level[order]
    bounds = np.searchsorted(level, np.arange(level.max() + 2))
    for total in range(2, level.max() + 1):
        lo, hi = bounds[total], bounds[total + 1]
        for start in range(lo, hi, _CHUNK):
            x, y = xs[start : min(hi, start + _CHUNK)], ys[start : min(hi, start + _CHUNK)]
            count = side_start[x + 1] - side_start[x]
            # Flat positions in ``succ`` of every successor of every pair, pair by pair.
            first = np.repeat(side_start[x] - np.concatenate([[0], np.cumsum(count)[:-1]]), count)
            where = first + np.arange(count.sum())
            # The opponent is then on roll at [y, x']; the roller takes the least the opponent can expect.
            values = np.take(after_cube, np.repeat(y * size, count) + np.take(succ, where), axis=0)
            bounds_in = np.concatenate([[0], np.cumsum(seg_len[x].ravel())[:-1]])
            least = np.minimum.reduceat(values, bounds_in, axis=0).reshape(len(x), rolls, 4)
            mean = np.einsum("r,mrk->mk", weights, least)[:, _NEXT_STATE]
            nd = np.empty_like(mean)
            # Clipped: sums of 36ths of 1.0 can round a hair past a certain result.
            nd[:, WIN] = np.clip(1.0 - mean[:, WIN], 0.0, 1.0)
            nd[:, 1:] = np.clip(-mean[:, 1:], -1.0, 1.0)
            no_double[x, y] = nd
            # A roller with access to the cube doubles when that is worth more; the opponent takes or passes.
            double = np.minimum(1.0, 2.0 * nd[:, OPPONENT_OWNS])
            best = nd.copy()
            best[:, CENTRED] = np.maximum(nd[:, CENTRED], double)
            best[:, OWNED] = np.maximum(nd[:, OWNED], double)
            after_cube[x * size + y] = best
    return no_double
