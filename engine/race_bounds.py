"""What a position makes certain, whatever a net says: outcomes that no dice can change.

A net's outputs are never exactly 0 or 1, and near certainty it is off by a few hundredths: in a race where the
side on roll cannot save the gammon, the net puts the gammon at 0.97 after one play and 0.99 after another, and
the player picks between them by that noise. gnubg 2-ply, the judge of bench.agreement, scores both exactly -2.
These rules settle such outputs exactly (``settle``):

* a side that has borne off a chequer cannot lose a gammon or a backgammon;
* in a race (no contact: no chequer can be hit again) a side with no chequer on its points 19-24 or the bar
  cannot lose a backgammon, since chequers only move forward;
* in a race, with one side's worst case known exactly (every chequer home: the one-sided bearoff table's most
  rolls, playing as the table does) and the other side's best case bounded (below), the race may be decided
  before it is run: a certain win or loss, or a certain gammon.

Best cases are lower bounds on turns that hold for any dice: each die moves one chequer at most 6 pips, and at
most across one boundary of the quarters 1-6, 7-12, 13-18, 19-24 (the bar counts as a fifth, bearing off as
crossing below the home board); a turn has at most four dice. So a side needs at least max(crossings / 4,
pips / 24) turns, rounded up, to bear off everything, and at least that of its crossings to the home board plus
one (one chequer off) to save a gammon.

The side on roll plays first: if it needs t turns it is done before the other side's t-th turn. It wins for
certain if its most turns are at most the other's fewest; it loses for certain if its fewest exceed the other's
most; likewise for the first chequer off against the other side's finish (gammons).
"""

from __future__ import annotations

import numpy as np

from engine.bearoff.ranking import POINTS, rank_array

WIN, WIN_G, WIN_BG, LOSE_G, LOSE_BG = range(5)

# Quarter of each board index (0-based points 1-24, index 24 the bar): crossings to reach the home board.
_QUARTER = np.array([0] * 6 + [1] * 6 + [2] * 6 + [3] * 6 + [4], dtype=np.int64)
_PIPS = np.arange(1, 26, dtype=np.int64)
_OUTSIDE = np.maximum(_PIPS - 6, 0)  # pips to the six-point


def _ceil_div(a: np.ndarray, b: int) -> np.ndarray:
    return -(-a // b)


def fewest_turns_to_finish(sides: np.ndarray) -> np.ndarray:
    """A lower bound on the turns a side (n, 25) needs to bear off every chequer, whatever the dice."""
    s = sides.astype(np.int64)
    crossings = s @ _QUARTER + s.sum(axis=1)  # each chequer still has to cross off the board
    return np.maximum(_ceil_div(crossings, 4), _ceil_div(s @ _PIPS, 24))


def fewest_turns_to_first_off(sides: np.ndarray) -> np.ndarray:
    """A lower bound on the turns a side with all 15 chequers on (n, 25) needs to bear one off."""
    s = sides.astype(np.int64)
    crossings = s @ _QUARTER + 1
    return np.maximum(_ceil_div(crossings, 4), _ceil_div(s @ _OUTSIDE + 1, 24))


class RaceBounds:
    """The rules above, with the worst cases of home boards read from a one-sided bearoff table's roll-count
    distributions (``rolls[rank, n]``: P(exactly n rolls to bear off))."""

    def __init__(self, rolls: np.ndarray) -> None:
        slots = np.arange(rolls.shape[1])
        # Most rolls with a nonzero chance: the worst case of the table's play (0 for a finished side).
        self.most_rolls = np.where(rolls > 0, slots, 0).max(axis=1)

    def _most(self, sides: np.ndarray, home: np.ndarray) -> np.ndarray:
        """Most turns to bear off for sides all home (``home``), else a sentinel no bound reaches."""
        out = np.full(len(sides), 10_000, dtype=np.int64)
        if home.any():
            out[home] = self.most_rolls[rank_array(sides[home, :POINTS])]
        return out

    def settle(self, boards: np.ndarray, probs: np.ndarray, race: np.ndarray) -> np.ndarray:
        """``probs`` (n, 5, side 0 of ``boards`` on roll) with what is certain set exactly; ``race`` marks the
        rows without contact. Returns a new array; rows of finished games must not be passed."""
        b = np.asarray(boards, dtype=np.int64)
        p = np.array(probs, dtype=np.float64)
        me, opp = b[:, 0], b[:, 1]
        me_full, opp_full = me.sum(axis=1) == 15, opp.sum(axis=1) == 15
        p[~me_full, LOSE_G] = p[~me_full, LOSE_BG] = 0.0
        p[~opp_full, WIN_G] = p[~opp_full, WIN_BG] = 0.0
        if not race.any():
            return p
        me_back, opp_back = me[:, 18:].any(axis=1), opp[:, 18:].any(axis=1)
        p[race & ~me_back, LOSE_BG] = 0.0
        p[race & ~opp_back, WIN_BG] = 0.0
        me_home, opp_home = race & ~me[:, POINTS:].any(axis=1), race & ~opp[:, POINTS:].any(axis=1)
        if not (me_home | opp_home).any():
            return p
        me_most, opp_most = self._most(me, me_home), self._most(opp, opp_home)
        me_fewest, opp_fewest = fewest_turns_to_finish(me), fewest_turns_to_finish(opp)
        me_first, opp_first = fewest_turns_to_first_off(me), fewest_turns_to_first_off(opp)

        gammoned = race & me_full & (me_first > opp_most)  # the other side is off before my first chequer
        lost = gammoned | (race & (me_fewest > opp_most))
        gammon_won = race & opp_full & (me_most <= opp_first)
        won = gammon_won | (race & (me_most <= opp_fewest))
        p[lost, WIN] = p[lost, WIN_G] = p[lost, WIN_BG] = 0.0
        p[gammoned, LOSE_G] = 1.0
        p[won, WIN] = 1.0
        p[won, LOSE_G] = p[won, LOSE_BG] = 0.0
        p[gammon_won, WIN_G] = 1.0
        # Keep gnubg's cumulative order (a certain gammon lifts nothing else; a certain loss caps the gammons).
        p[:, WIN_G] = np.minimum(p[:, WIN_G], p[:, WIN])
        p[:, WIN_BG] = np.minimum(p[:, WIN_BG], p[:, WIN_G])
        p[:, LOSE_G] = np.minimum(p[:, LOSE_G], 1.0 - p[:, WIN])
        p[:, LOSE_BG] = np.minimum(p[:, LOSE_BG], p[:, LOSE_G])
        return p
