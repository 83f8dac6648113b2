"""BRAS, the Backgammon Relative Advantage Score: a cheap, explainable, antisymmetric static evaluation.

Source and status. The structure is the seed's (the article "Backgammon Relative Advantage Score
(BRAS)", uc4n.com, October 2025): eleven features f_i in [-1, 1] named pip, bar, off, hb, prime, anch,
blot, stack, out, x1, x2 (x1 and x2 interaction terms), a linear sum D = sum_i w_i f_i, the transform
g = tanh(D / sigma) with sigma = 3, and S_me = 50 + 50 g, S_op = 100 - S_me. **The feature formulas,
normalisations and weights below are gammond's own, because the seed's are not available**; the weights
were fitted to the teacher (see WEIGHTS).

Perspective. The article scores a board for "me" against "op"; here "me" is the player on roll, side 0
of a (n, 2, 25) board array (``Position.me``), each side in its own numbering: index i = point i + 1 (a
side moves from its high points to its low ones), index 24 = bar, chequers off = 15 minus the rest. The
opponent's index j is my point 24 - j, so their 25 cells reversed are their chequers in my numbering,
with their bar as my "point 0".

Antisymmetry by construction. Every feature is v(me, op) - v(op, me) (or its negation) of a per-side
value v computed by the same array code for both sides, so swapping the sides negates every feature
exactly, D is negated, and S(swap) = 100 - S. Hence the opening (a symmetric board) scores exactly 50.
Being on roll is worth something but would break the antisymmetry, so S leaves it out; the probability
calibration adds it.

The features (made = a point holding two or more; "mine minus theirs" unless said otherwise):

========  ==============================================================================================
pip       tanh(K_PIP * (P_op - P_me) / (P_me + P_op)), P = pip count (bar = 25): the relative race lead
bar       q_op - q_me, q = min(on bar, 3) / 3 * (1 + other side's home points made) / 7
off       (off_me - off_op) / 15
hb        (home points made by me - by op) / 6: own points 1-6
prime     (L_me - L_op) / 6, L = longest run of made points, at most 6
anch      h_op - h_me, h = min(back chequers, 3) / 3 when the side holds no anchor, else 0; back
          chequers are those on the bar and on own points 19-24 (the other side's home board), an
          anchor is a point made there
blot      e_op - e_me, e = min(sum over own blots of 1 with an opposing chequer 1-6 pips behind it (a
          direct shot), else 1/2 with one 7-12 pips behind (an indirect shot), 3) / 3; the opponent's
          bar counts as point 0 of my numbering
stack     s_op - s_me, s = sum over own points of max(count - 3, 0) / 12 (12 = all 15 on one point)
out       c_me - c_op, c = min(made points in the own outfield, points 7-12, 3) / 3
x1        t_me - t_op, prime x trapped: t = max over runs of made points of min(run, 6) / 6 * min(opposing
          chequers behind the run, 4) / 4, "behind" = on lower points of the side's numbering, where
          the other side comes from (its bar included): a prime only counts for what it holds
x2        u_op - u_me, blot x board: u = min(own blots with a direct shot, 3) / 3 * (other side's home
          points made) / 6: being hit hurts more against a strong board
========  ==============================================================================================

Every feature is oriented so that a larger value is better for the player on roll, and every weight is
positive, so each monotonicity that holds feature by feature holds for S (see ``tests/test_bras.py``).

The 5-output calibration (``bras_probs``, ``BrasEvaluator``) is a heuristic, fitted once to the teacher
and rounded, for the evaluator of last resort (no model file), not a substitute for a net:

* p(win) = logistic(P_SLOPE * D / sigma + P_TEMPO) for the player on roll before rolling; P_TEMPO is
  the value of being on roll, which S leaves out (P_SLOPE = 2 and P_TEMPO = 0 would give S / 100);
* a win is a gammon with share clip(G_BASE + G_PIPS * loser's pips to come home / 100 + G_OFF *
  winner's chequers off / 15, 0, G_MAX), and none once the loser has borne a chequer off;
* a gammon is a backgammon with share min(BG_BACK * loser's chequers on the bar or in the winner's home
  board / 15, 1);
* a finished game (one side with no chequers left) is scored exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine import encoding
from engine.errors import InvalidPositionError
from engine.position import CHEQUERS, Position

SIGMA = 3.0
FEATURE_NAMES: tuple[str, ...] = (
    "pip", "bar", "off", "hb", "prime", "anch", "blot", "stack", "out", "x1", "x2",
)  # fmt: skip
N_FEATURES = len(FEATURE_NAMES)

# Scale of the relative pip lead inside the pip feature's tanh: a 10 % lead (r = 0.05) gives f = 0.38.
K_PIP = 8.0

# Fitted by maximum likelihood of logistic(2 D / sigma) against the teacher's (bgsage 1-ply) win chance,
# symmetrised over who is on roll, on 2,000 positions of random play and 2,000 of noisy teacher play, each
# weight kept at least W_FLOOR, then rounded to 0.05 (``python -m bench.bras --fit`` reruns it). The floor
# keeps every feature in the score and in kibitz text: anch, blot, stack and x2 add little on top of the
# others there (blot and stack even fit slightly negative: a side that attacks leaves blots, a side that
# bears in stacks), and backgammon sense says they count.
W_FLOOR = 0.25
#                    pip   bar   off    hb    prime anch  blot  stack out   x1    x2
WEIGHTS = np.array([0.60, 2.45, 13.45, 1.70, 0.40, 0.25, 0.25, 0.25, 0.90, 2.85, 0.25])

# The 5-output calibration, fitted by ``python -m bench.bras --fit`` and rounded (see the module docstring).
P_SLOPE = 2.0  # fitted 1.98: S / 100 itself is already close to calibrated
P_TEMPO = 0.24  # the value of being on roll: p(win) = 0.56 at S = 50
G_BASE = 0.03
G_PIPS = 0.50
G_OFF = 0.75
G_MAX = 0.9  # never sure of a gammon from so crude a measure
BG_BACK = 0.30


def positions_to_array(positions: Sequence[Position]) -> np.ndarray:
    """(n, 2, 25) int16 boards (pip sums need more than int8), by ``engine.encoding.positions_to_array``."""
    return encoding.positions_to_array(positions, np.int16)


def _as_boards(positions: Sequence[Position] | np.ndarray) -> np.ndarray:
    """Positions to boards; a board array is checked for shape, type and counts (not for shared points)."""
    if isinstance(positions, np.ndarray):
        if positions.ndim != 3 or positions.shape[1:] != (2, 25):
            raise InvalidPositionError(f"boards must have shape (n, 2, 25), not {positions.shape}")
        if positions.dtype.kind not in "iu":
            raise InvalidPositionError(f"boards must hold integer counts, not {positions.dtype}")
        if positions.size and positions.min() < 0:
            raise InvalidPositionError(f"boards hold a negative count ({positions.min()})")
        if positions.size and positions.sum(axis=2).max() > CHEQUERS:
            most = positions.sum(axis=2).max()
            raise InvalidPositionError(f"boards hold {most} chequers on a side, at most 15")
        return positions.astype(np.int16, copy=False)
    if isinstance(positions, Position):
        raise InvalidPositionError("expected a sequence of positions, not one Position")
    return positions_to_array(positions)


def _board_constants() -> dict[str, np.ndarray]:
    """Matrices that turn per-side sums into one matmul each (rows: a side's 25 cells, own numbering)."""
    k = np.arange(24)  # own point k + 1
    cell = 24 - np.arange(25)  # the other side's index j in this side's numbering (their bar: cell 0)
    # Sums over a side's own cells: pips, chequers left, back chequers (points 19-24 and bar), on the bar.
    own = np.zeros((25, 4))
    own[:, 0] = np.arange(1, 26)
    own[:, 1] = 1.0
    own[18:25, 2] = 1.0
    own[24, 3] = 1.0
    # Sums over the other side's cells, for each own point k + 1: chequers in cells 0..k (behind a run
    # starting there), 1-6 pips behind it (direct shots at a blot), 7-12 pips behind it (indirect shots).
    gap = (k + 1)[None, :] - cell[:, None]
    other = np.concatenate([(gap >= 1), (gap >= 1) & (gap <= 6), (gap >= 7) & (gap <= 12)], axis=1)
    # Sums over a side's made points: home board, outfield (points 7-12), anchors (19-24), and the bit mask.
    made = np.zeros((24, 4))
    made[0:6, 0] = 1.0
    made[6:12, 1] = 1.0
    made[18:24, 2] = 1.0
    made[:, 3] = 2.0**k
    return {"own": own, "other": other.astype(np.float64), "made": made}


_M = _board_constants()

# +1 where a larger per-side value is good for that side, -1 where it is bad (the pip column is redone below).
_SIGN = np.array([-1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, 1.0, 1.0, -1.0])


def _side_values(b: np.ndarray) -> np.ndarray:
    """Per-side values (n, 2, 11) of the feature table, each side scored against the other.

    Column 0 is the raw pip count; the others are the per-side values of the table, already in [0, 1].
    The work is done on (2n, 25) rows, one per side, so that every sum is one matmul and swapping the
    sides swaps rows exactly.
    """
    n = b.shape[0]
    x = b.reshape(2 * n, 25).astype(np.float64)
    lin = x @ _M["own"]
    # The other side's cells summed in this side's numbering: computed per row, then swapped between partners.
    seen = (x @ _M["other"]).reshape(n, 2, 72)[:, ::-1].reshape(2 * n, 72)
    behind, direct, indirect = seen[:, :24], seen[:, 24:48], seen[:, 48:]
    points = x[:, :24]
    made = points >= 2.0
    counts = made.astype(np.float64) @ _M["made"]
    home = counts[:, 0] / 6.0
    home_other = home.reshape(n, 2)[:, ::-1].reshape(2 * n)

    blots = points == 1.0
    hit_direct = blots & (direct > 0.0)
    n_direct = hit_direct.sum(axis=1)
    n_indirect = (blots & (indirect > 0.0) & ~hit_direct).sum(axis=1)

    # Runs of made points from the bit mask: at step j, `linked` has bit k set when points k + 1 .. k + j are
    # all made. As the chequers behind a point only grow with k, each length's best trap is at its top bit.
    mask = counts[:, 3].astype(np.int64)
    held = np.minimum(behind, 4.0)
    rows = np.arange(2 * n)
    longest = np.zeros(2 * n)
    trap = np.zeros(2 * n)
    linked = mask
    for j in range(1, 7):
        if j > 1:
            linked = linked & (mask >> (j - 1))
        alive = linked > 0
        top = np.frexp(linked.astype(np.float64))[1] - 1  # index of the highest set bit (-1 when none)
        longest += alive
        np.maximum(trap, j * held[rows, np.maximum(top, 0)] * alive, out=trap)

    v = np.empty((2 * n, N_FEATURES))
    v[:, 0] = lin[:, 0]
    v[:, 1] = np.minimum(lin[:, 3], 3.0) * (1.0 + 6.0 * home_other) / 21.0
    v[:, 2] = (CHEQUERS - lin[:, 1]) / CHEQUERS
    v[:, 3] = home
    v[:, 4] = longest / 6.0
    v[:, 5] = np.minimum(lin[:, 2], 3.0) * (counts[:, 2] == 0.0) / 3.0  # back chequers with no anchor
    v[:, 6] = np.minimum(n_direct + 0.5 * n_indirect, 3.0) / 3.0
    v[:, 7] = np.maximum(points - 3.0, 0.0).sum(axis=1) / 12.0
    v[:, 8] = np.minimum(counts[:, 1], 3.0) / 3.0
    v[:, 9] = trap / 24.0
    v[:, 10] = np.minimum(n_direct, 3) * home_other / 3.0
    return v.reshape(n, 2, N_FEATURES)


def bras_features(positions: Sequence[Position] | np.ndarray) -> np.ndarray:
    """The 11 features (n, 11) in FEATURE_NAMES order, each in [-1, 1], positive = good for the side on roll.

    Takes a sequence of positions, or an (n, 2, 25) board array (side 0 on roll) as
    ``positions_to_array`` makes it.
    """
    v = _side_values(_as_boards(positions))
    diff = v[:, 0, :] - v[:, 1, :]  # mine minus theirs: swapping the sides negates it exactly
    f = diff * _SIGN
    total = np.maximum(v[:, 0, 0] + v[:, 1, 0], 1.0)
    f[:, 0] = np.tanh(K_PIP * -diff[:, 0] / total)
    return f


def score_from_d(d: np.ndarray | float) -> np.ndarray:
    """The seed's transform: S = 50 + 50 tanh(D / sigma), sigma = 3 (D = -0.1265 gives S = 47.893)."""
    return 50.0 + 50.0 * np.tanh(np.asarray(d, dtype=np.float64) / SIGMA)


def bras_d(positions: Sequence[Position] | np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The linear advantage D = sum_i w_i f_i (n,), antisymmetric like every feature."""
    w = WEIGHTS if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (N_FEATURES,):
        raise ValueError(f"weights must have shape ({N_FEATURES},), not {w.shape}")
    return (bras_features(positions) * w).sum(axis=1)


def bras_score(positions: Sequence[Position] | np.ndarray) -> np.ndarray:
    """S in [0, 100] (n,) for the player on roll; the opponent's score is 100 - S."""
    return score_from_d(bras_d(positions))


def explain(position: Position) -> dict[str, Any]:
    """The named features of one position with their weights and weighted contributions, for kibitz text.

    ``{"score": S, "d": D, "features": {name: {"value": f, "weight": w, "contribution": w * f}}}``,
    features in FEATURE_NAMES order; the contributions add up to D.
    """
    if not isinstance(position, Position):
        raise InvalidPositionError(f"expected a Position, not a {type(position).__name__}")
    f = bras_features([position])[0] + 0.0  # + 0.0 turns the -0.0 of a negated zero into 0.0 for display
    contributions = f * WEIGHTS + 0.0
    d = float(contributions.sum())
    return {
        "score": float(score_from_d(d)),
        "d": d,
        "features": {
            name: {"value": float(f[i]), "weight": float(WEIGHTS[i]), "contribution": float(contributions[i])}
            for i, name in enumerate(FEATURE_NAMES)
        },
    }


WIN, WIN_G, WIN_BG, LOSE_G, LOSE_BG = range(5)  # gnubg's output order, as in engine.evaluator


def _gammon_shares(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2) shares of side s's wins that are gammons and of those gammons that are backgammons."""
    loser = b[:, ::-1, :].astype(np.float64)  # for side s's wins the loser is side 1 - s
    winner_off = CHEQUERS - b.sum(axis=2)
    loser_off = CHEQUERS - loser.sum(axis=2)
    to_come_home = loser[:, :, 6:25] @ np.arange(1, 20, dtype=np.float64)  # pips until each is home
    gammon = np.clip(G_BASE + G_PIPS * to_come_home / 100.0 + G_OFF * winner_off / CHEQUERS, 0.0, G_MAX)
    gammon = np.where(loser_off > 0, 0.0, gammon)
    backgammon = np.minimum(BG_BACK * loser[:, :, 18:25].sum(axis=2) / CHEQUERS, 1.0)
    return gammon, backgammon


def bras_probs(positions: Sequence[Position] | np.ndarray) -> np.ndarray:
    """Heuristic gnubg-style outputs (n, 5): win, win gammon, win backgammon, lose gammon, lose backgammon.

    For the player on roll before rolling, cumulative as gnubg reports them; see the module docstring.
    """
    b = _as_boards(positions)
    win = 1.0 / (1.0 + np.exp(-(P_SLOPE * bras_d(b) / SIGMA + P_TEMPO)))
    gammon, backgammon = _gammon_shares(b)
    out = np.empty((b.shape[0], 5))
    out[:, WIN] = win
    out[:, WIN_G] = win * gammon[:, 0]
    out[:, WIN_BG] = out[:, WIN_G] * backgammon[:, 0]
    out[:, LOSE_G] = (1.0 - win) * gammon[:, 1]
    out[:, LOSE_BG] = out[:, LOSE_G] * backgammon[:, 1]

    # A finished game is no estimate: the side with no chequers left has won, a gammon if the loser has
    # none off, a backgammon if the loser also has one on the bar or in the winner's home board.
    left = b.sum(axis=2)
    for side, (w, g, bg) in enumerate(((WIN, WIN_G, WIN_BG), (None, LOSE_G, LOSE_BG))):
        done = left[:, side] == 0
        if not done.any():
            continue
        loser = b[done, 1 - side]
        is_gammon = loser.sum(axis=1) == CHEQUERS
        out[done] = 0.0
        if w is not None:
            out[done, w] = 1.0
        out[done, g] = is_gammon
        out[done, bg] = is_gammon & (loser[:, 18:25].sum(axis=1) > 0)
    return out


class BrasEvaluator:
    """The evaluator of last resort: ``evaluate(positions)`` -> (n, 5) from BRAS, no model file needed."""

    name = "bras"

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        return bras_probs(positions)

    def __repr__(self) -> str:
        return "BrasEvaluator()"
