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

import numpy as np

from engine.bearoff.ranking import board_ranks
from engine.evaluator import LOSE_BG, LOSE_G, WIN, WIN_BG, WIN_G, sanitise
from engine.moves import c_extension, uint8_boards

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


def board_stats_numpy(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``side_stats`` of side 0 and side 1 of (n, 2, 25) boards (the reference of ``board_stats``)."""
    return side_stats(boards[:, 0]), side_stats(boards[:, 1])


def _board_stats_c(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    raw = uint8_boards(boards)
    stats = np.frombuffer(_C.race_stats(raw), dtype=np.int32).reshape(len(raw), 2, 6)
    return stats[:, 0], stats[:, 1]


# In C where engine.moves uses C: numpy's integer product was a third of a race search's time.
_C = c_extension()
board_stats = _board_stats_c if hasattr(_C, "race_stats") else board_stats_numpy


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

    def _most(self, ranks: np.ndarray, home: np.ndarray) -> np.ndarray:
        """Most turns to bear off for sides all home (``home``; ``ranks`` their home boards' bearoff indices),
        else a sentinel no bound reaches."""
        return np.where(home, self.most_rolls[ranks], 10_000)

    def settle(self, boards: np.ndarray, probs: np.ndarray, race: np.ndarray) -> np.ndarray:
        """``probs`` (n, 5, side 0 of ``boards`` on roll) with what is certain set exactly; ``race`` marks the
        rows without contact. Returns ``probs`` itself when nothing applies (most contact positions), else a
        new array; rows of finished games must not be passed."""
        me_all, opp_all = board_stats(boards)
        short = np.stack([me_all[:, COUNT] < 15, opp_all[:, COUNT] < 15], axis=1)  # (n, 2): a chequer off
        if not race.any() and not short.any():
            return probs  # the common case inside a search: keep it cheap
        p = np.array(probs, dtype=np.float64)
        p[short[:, 0], LOSE_G] = p[short[:, 0], LOSE_BG] = 0.0
        p[short[:, 1], WIN_G] = p[short[:, 1], WIN_BG] = 0.0
        if not race.any():
            return p
        every = bool(race.all())  # a race search's batches: no copies in or out
        b = boards if every else boards[race]
        me, opp = (me_all, opp_all) if every else (me_all[race], opp_all[race])
        q = p if every else p[race]
        q[me[:, BACK] == 0, LOSE_BG] = 0.0
        q[opp[:, BACK] == 0, WIN_BG] = 0.0
        # The rules below need one side all home; elsewhere they change nothing: work on those rows only.
        rows = np.flatnonzero((me[:, OUTSIDE] == 0) | (opp[:, OUTSIDE] == 0))
        if len(rows):
            if len(rows) < len(q):
                b, me, opp, r = b[rows], me[rows], opp[rows], q[rows]
            else:
                r = q  # every row (a late race's batches): no copies
            me_home, opp_home = me[:, OUTSIDE] == 0, opp[:, OUTSIDE] == 0
            ranks = board_ranks(b)
            me_most, opp_most = self._most(ranks[:, 0], me_home), self._most(ranks[:, 1], opp_home)
            me_full, opp_full = me[:, COUNT] == 15, opp[:, COUNT] == 15
            # he is off before my first chequer
            gammoned = me_full & (fewest_turns_to_first_off(b[:, 0], me) > opp_most)
            lost = gammoned | (fewest_turns_to_finish(b[:, 0], me) > opp_most)
            gammon_won = opp_full & (me_most <= fewest_turns_to_first_off(b[:, 1], opp))
            won = gammon_won | (me_most <= fewest_turns_to_finish(b[:, 1], opp))
            r[lost, WIN] = r[lost, WIN_G] = r[lost, WIN_BG] = 0.0
            r[gammoned, LOSE_G] = 1.0
            r[won, WIN] = 1.0
            r[won, LOSE_G] = r[won, LOSE_BG] = 0.0
            r[gammon_won, WIN_G] = 1.0
            self._one_turn_left(b, ranks[:, 0], r, me_most, opp_most, me_full, opp_full)
            if r is not q:
                q[rows] = r
            # Keep gnubg's cumulative order (a certain gammon lifts nothing else; a certain loss caps gammons).
            q = sanitise(q)
        if every:
            return q
        p[race] = q
        return p

    def _one_turn_left(
        self,
        boards: np.ndarray,
        my_ranks: np.ndarray,
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
        if len(mine):
            q[mine, LOSE_G] = 1.0 - chances_off_in_one_roll(boards[mine, 0])
        if len(theirs):
            two = self.rolls[my_ranks[theirs], 2].astype(np.float64)
            q[theirs, WIN_G] = 1.0 - two * chances_off_in_one_roll(boards[theirs, 1])


# A chequer off in one roll, without generating plays. In a race (the other side cannot block) every die of a
# 15-chequer side is playable in every state of its turn, so the legal plays are all the ways of using every
# die, and a chequer can be borne off iff some order of the dice bears one off. Non-doubles (two dice): with
# every chequer home, one die bears off (a chequer on its point, or none higher), or one die moves a chequer
# and the other bears off (a chequer landing on its point, or the only chequer above it moving below it); with
# one chequer outside, one die brings it home and the other bears off; with more, no. Doubles: the chequers
# outside need a known number of steps to come home and land on known points, and on the home board a die d
# first bears off after j steps for a chequer on point j*d, or once every chequer is below d (floor(p/d) steps
# for one on p) and one more. Boards are indices 0-23 for points 1-24, 24 for the bar (point 25).
_POINT = np.arange(1, 26, dtype=np.int64)
_NON_DOUBLES = [(a, b) for a in range(1, 7) for b in range(1, a)]
_DOUBLE_STEPS = {}  # die -> (steps home per point 7-25, landing point per point 7-25, floor(p / d) per point 1-6)
for _d in range(1, 7):
    _steps = -(-(_POINT[6:] - 6) // _d)
    _DOUBLE_STEPS[_d] = (_steps, _POINT[6:] - _steps * _d, _POINT[:6] // _d)


def chances_off_in_one_roll(sides: np.ndarray) -> np.ndarray:
    """``chance_off_in_one_roll`` of many sides (n, 25) at once, as float64 (hits / 36.0)."""
    b = np.asarray(sides).reshape(-1, 25)
    if len(b) > 1:
        # A search's batch lists the children of each position together, and the side not moving is the same in
        # all of them: each run of equal rows is computed once (5,424 rows, 290 distinct, in a late race).
        new = np.empty(len(b), dtype=bool)
        new[0] = True
        np.any(b[1:] != b[:-1], axis=1, out=new[1:])
        if not new.all():
            return _chances_off(b[new])[np.cumsum(new) - 1]
    return _chances_off(b)


def _chances_off(sides: np.ndarray) -> np.ndarray:
    b = np.asarray(sides, dtype=np.int64)
    n = len(b)
    home, out = b[:, :6], b[:, 6:]
    outside = out.sum(axis=1)
    top = np.where(home > 0, _POINT[:6], 0).max(axis=1)  # highest home point held (0: none)
    above = np.cumsum(home[:, ::-1], axis=1)[:, ::-1]  # above[:, y] = chequers on points > y (y = 0..5)
    above = np.concatenate([above[:, 1:], np.zeros((n, 1), dtype=np.int64)], axis=1)  # now points > y + 1
    straggler = out @ _POINT[6:]  # the point of the one chequer outside, where there is one
    hits = np.zeros(n, dtype=np.int64)
    for a, b_ in _NON_DOUBLES:
        ok = np.zeros(n, dtype=bool)
        all_home = outside == 0
        for x, y in ((a, b_), (b_, a)):
            on_y = home[:, y - 1] > 0
            # all home: y bears off at once, or x moves a chequer onto y, or x moves the only one above y below it
            first = on_y | (top < y)
            if x + y <= 6:
                first |= home[:, x + y - 1] > 0
            first |= (above[:, y - 1] == 1) & (top < x + y)
            # one outside: x brings it home to p - x, then y bears off
            lands = straggler - x
            brought = (lands <= 6) & (on_y | (lands == y) | ((top < y) & (lands < y)))
            ok |= np.where(all_home, first, (outside == 1) & brought)
        hits += 2 * ok
    for d in range(1, 7):
        steps, landing, below = _DOUBLE_STEPS[d]
        used = out @ steps
        board = home.copy()
        for k in range(6):  # landing points of the chequers outside
            board[:, k] += out[:, landing == k + 1].sum(axis=1)
        need = board @ below + 1  # every chequer below d, then one off
        for j in range(1, 6 // d + 1):  # a chequer on j * d: off after j steps
            need = np.where(board[:, j * d - 1] > 0, np.minimum(need, j), need)
        hits += used + need <= 4
    return hits / 36.0


def chance_off_in_one_roll(side: tuple[int, ...]) -> float:
    """The chance that a side of 15 chequers (25 counts, no contact) can bear a chequer off with its next roll."""
    return float(chances_off_in_one_roll(np.array([side]))[0])
