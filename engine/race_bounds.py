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
  before it is run: a certain win or loss, or a certain gammon;
* and where a gammon hangs on one turn of the side that must save it (the other side is off within the next
  turn or two), its chance is counted exactly: the rolls with which that side can bear a chequer off.

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

import functools

import numpy as np

from engine.bearoff.ranking import POINTS, rank_array
from engine.evaluator import LOSE_BG, LOSE_G, WIN, WIN_BG, WIN_G, sanitise

# Per board index (0-based points 1-24, index 24 the bar), the columns one product gives for a side: its
# crossings to the home board (the quarter it is in), pips, pips to the six-point, chequers back (in the
# other side's home board or on the bar), chequers outside its home board, chequers.
_QUARTER = np.array([0] * 6 + [1] * 6 + [2] * 6 + [3] * 6 + [4], dtype=np.int64)
_PIPS = np.arange(1, 26, dtype=np.int64)
_STATS = np.stack(
    [
        _QUARTER,
        _PIPS,
        np.maximum(_PIPS - 6, 0),
        (_PIPS > 18).astype(np.int64),
        (_PIPS > 6).astype(np.int64),
        np.ones(25, dtype=np.int64),
    ],
    axis=1,
)
CROSS, PIPS, OUTSIDE_PIPS, BACK, OUTSIDE, COUNT = range(6)


def _ceil_div(a: np.ndarray, b: int) -> np.ndarray:
    return -(-a // b)


def side_stats(sides: np.ndarray) -> np.ndarray:
    """(n, 6) integer columns of (n, 25) sides, as named above."""
    return np.asarray(sides, dtype=np.int64) @ _STATS


def fewest_turns_to_finish(sides: np.ndarray, stats: np.ndarray | None = None) -> np.ndarray:
    """A lower bound on the turns a side (n, 25) needs to bear off every chequer, whatever the dice."""
    st = side_stats(sides) if stats is None else stats
    crossings = st[:, CROSS] + st[:, COUNT]  # each chequer still has to cross off the board
    return np.maximum(_ceil_div(crossings, 4), _ceil_div(st[:, PIPS], 24))


def fewest_turns_to_first_off(sides: np.ndarray, stats: np.ndarray | None = None) -> np.ndarray:
    """A lower bound on the turns a side with all 15 chequers on (n, 25) needs to bear one off."""
    st = side_stats(sides) if stats is None else stats
    return np.maximum(_ceil_div(st[:, CROSS] + 1, 4), _ceil_div(st[:, OUTSIDE_PIPS] + 1, 24))


class RaceBounds:
    """The rules above, with the worst cases of home boards read from a one-sided bearoff table's roll-count
    distributions (``rolls[rank, n]``: P(exactly n rolls to bear off))."""

    def __init__(self, rolls: np.ndarray) -> None:
        slots = np.arange(rolls.shape[1])
        # Most rolls with a nonzero chance: the worst case of the table's play (0 for a finished side).
        self.most_rolls = np.where(rolls > 0, slots, 0).max(axis=1)
        self.rolls = rolls

    def _most(self, sides: np.ndarray, home: np.ndarray) -> np.ndarray:
        """Most turns to bear off for sides all home (``home``), else a sentinel no bound reaches."""
        out = np.full(len(sides), 10_000, dtype=np.int64)
        if home.any():
            out[home] = self.most_rolls[rank_array(sides[home, :POINTS])]
        return out

    def settle(self, boards: np.ndarray, probs: np.ndarray, race: np.ndarray) -> np.ndarray:
        """``probs`` (n, 5, side 0 of ``boards`` on roll) with what is certain set exactly; ``race`` marks the
        rows without contact. Returns ``probs`` itself when nothing applies (most contact positions), else a
        new array; rows of finished games must not be passed."""
        counts = boards.sum(axis=2, dtype=np.int64)
        short = counts < 15  # (n, 2): a chequer off
        if not race.any() and not short.any():
            return probs  # the common case inside a search: keep it cheap
        p = np.array(probs, dtype=np.float64)
        p[short[:, 0], LOSE_G] = p[short[:, 0], LOSE_BG] = 0.0
        p[short[:, 1], WIN_G] = p[short[:, 1], WIN_BG] = 0.0
        if not race.any():
            return p
        b = boards[race]
        me, opp = side_stats(b[:, 0]), side_stats(b[:, 1])
        q = p[race]
        q[me[:, BACK] == 0, LOSE_BG] = 0.0
        q[opp[:, BACK] == 0, WIN_BG] = 0.0
        me_home, opp_home = me[:, OUTSIDE] == 0, opp[:, OUTSIDE] == 0
        if (me_home | opp_home).any():
            me_most, opp_most = self._most(b[:, 0], me_home), self._most(b[:, 1], opp_home)
            me_full, opp_full = ~short[race, 0], ~short[race, 1]
            # he is off before my first chequer
            gammoned = me_full & (fewest_turns_to_first_off(b[:, 0], me) > opp_most)
            lost = gammoned | (fewest_turns_to_finish(b[:, 0], me) > opp_most)
            gammon_won = opp_full & (me_most <= fewest_turns_to_first_off(b[:, 1], opp))
            won = gammon_won | (me_most <= fewest_turns_to_finish(b[:, 1], opp))
            q[lost, WIN] = q[lost, WIN_G] = q[lost, WIN_BG] = 0.0
            q[gammoned, LOSE_G] = 1.0
            q[won, WIN] = 1.0
            q[won, LOSE_G] = q[won, LOSE_BG] = 0.0
            q[gammon_won, WIN_G] = 1.0
            self._one_turn_left(b, q, me_most, opp_most, me_full, opp_full)
            # Keep gnubg's cumulative order (a certain gammon lifts nothing else; a certain loss caps gammons).
            q = sanitise(q)
        p[race] = q
        return p

    def _one_turn_left(
        self,
        boards: np.ndarray,
        q: np.ndarray,
        me_most: np.ndarray,
        opp_most: np.ndarray,
        me_full: np.ndarray,
        opp_full: np.ndarray,
    ) -> None:
        """Gammons decided by a single turn of the side that must save them, computed exactly (in place).

        The other side is off next turn for sure: the side on roll saves its gammon only by bearing a chequer
        off now. The side on roll is off within two turns and takes two only with the table's chance of
        that: the other side saves only if so, and only by bearing a chequer off in its one turn between."""
        mine = np.flatnonzero(me_full & (opp_most == 1))
        theirs = np.flatnonzero(opp_full & (me_most == 2))
        for i in mine:
            q[i, LOSE_G] = 1.0 - chance_off_in_one_roll(tuple(int(x) for x in boards[i, 0]))
        for i in theirs:
            two = float(self.rolls[rank_array(boards[i, 0, :POINTS])][2])
            q[i, WIN_G] = 1.0 - two * chance_off_in_one_roll(tuple(int(x) for x in boards[i, 1]))


@functools.lru_cache(maxsize=65_536)
def chance_off_in_one_roll(side: tuple[int, ...]) -> float:
    """The chance that a side of 15 chequers (25 counts, no contact) can bear a chequer off with its next roll."""
    from engine.moves import ROLLS, legal_plays
    from engine.position import Position

    position = Position(side, (0,) * 25)  # the other side cannot block or be hit in a race
    hits = sum(
        weight for dice, weight in ROLLS if any(sum(p.position.me) < 15 for p in legal_plays(position, dice))
    )
    return hits / 36.0
