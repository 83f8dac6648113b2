"""The bearoff databases behind the small API the evaluator calls.

``BearoffDatabase.load()`` reads the tables from the cache directory, or generates them (about 1 s for the
one-sided table, 5 s for the two-sided one) and caches them. Then, for positions where both sides have every
chequer on their own 6 home points (gnubg's classes BEAROFF1 and BEAROFF2):

* ``evaluate(positions)`` -> (n, 5) gnubg outputs (win, win gammon, win bg, lose gammon, lose bg; cumulative).
  With at most 6 chequers a side it is the exact two-sided P(win) (no gammon can happen: 9 chequers are off).
  Otherwise it combines the two one-sided roll-count distributions as gnubg does: the roller wins if it needs
  no more rolls than the opponent; it wins a gammon if it is off before the opponent has borne off a chequer,
  which only a side with all 15 chequers on the board can fail to do. The two sides' counts are independent
  in a race, so this is exact when each side plays to minimise its expected rolls (its rolls to a first
  chequer off, for the gammon figures): close to, but not quite, optimal play (within 2e-5 of gnubg).
* ``cubeful_equities(position)`` -> exact money equities for each cube position (two-sided range only).
* ``expected_rolls(side)`` -> mean number of rolls to bear a side off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.bearoff import cache
from engine.bearoff import one_sided as one_sided_dp
from engine.bearoff import two_sided as two_sided_dp
from engine.bearoff.ranking import (
    ONE_SIDED_SIZE,
    POINTS,
    BearoffRangeError,
    board_ranks,
    rank,
    rank_array,
)
from engine.errors import EngineError
from engine.position import Position

# Bump the format number whenever generation or layout changes: old cache files then no longer match.
ONE_SIDED_KEY = "gammond bearoff one-sided 6 points x 15 chequers, mean-minimising play, 32 slots, format 1"
TWO_SIDED_KEY = (
    "gammond bearoff two-sided 6 points x 6 chequers, win + money no-double equities, float32, format 1"
)
ONE_SIDED_FILE = "bearoff-one-sided-6x15.npz"
TWO_SIDED_FILE = "bearoff-two-sided-6x6.npz"
MAX_ROLLS = one_sided_dp.MAX_ROLLS
TWO_SIDED_CHEQUERS = two_sided_dp.CHEQUERS
TWO_SIDED_SIZE = two_sided_dp.SIZE

WIN, WIN_GAMMON, WIN_BACKGAMMON, LOSE_GAMMON, LOSE_BACKGAMMON = range(5)


class BearoffDataError(EngineError):
    """Tables of the wrong shape or content handed to a bearoff database."""


@dataclass(frozen=True, slots=True)
class CubefulEquities:
    """Exact money equities per unit cube for the side on roll, before its cube decision (two-sided range).

    ``centred``, ``owned``, ``opponent_owns``: the roller does not double now, the cube being centred, the
    roller's, or the opponent's; all later checker and cube decisions are optimal (gnubg's gnubg_ts0.bd holds
    the same numbers). Doubling now is worth min(double_take, double_pass) to a roller who may double.
    """

    cubeless: float
    centred: float
    owned: float
    opponent_owns: float

    @property
    def double_take(self) -> float:
        """The roller doubles and the opponent takes: the cube goes over at twice the value."""
        return 2.0 * self.opponent_owns

    @property
    def double_pass(self) -> float:
        return 1.0

    @property
    def centred_optimal(self) -> float:
        """Equity with a centred cube once the roller's cube decision is made."""
        return max(self.centred, min(self.double_take, self.double_pass))

    @property
    def owned_optimal(self) -> float:
        """Equity with the cube on the roller's side once its cube decision is made."""
        return max(self.owned, min(self.double_take, self.double_pass))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class OneSidedTable:
    """Roll-count distributions of all sides of up to 15 chequers on 6 points (see ``one_sided``)."""

    def __init__(self, rolls: np.ndarray, gammon_rolls: np.ndarray) -> None:
        shape = (ONE_SIDED_SIZE, MAX_ROLLS)
        for name, a in (("rolls", rolls), ("gammon_rolls", gammon_rolls)):
            if a.shape != shape or a.dtype != np.float64:
                raise BearoffDataError(f"{name}: expected float64 {shape}, got {a.dtype} {a.shape}")
        self.rolls = _frozen(rolls)
        self.gammon_rolls = _frozen(gammon_rolls)
        # P(N >= i) of both, once (28 MB), as the cumulation of each reversed row, read reversed: the layout of
        # a batch's rows cumulated on the fly, so that einsum sums them in the same order, bit for bit (a
        # contiguous copy changes the last bit). Cumulating each batch's rows was half of a 2-ply search in
        # bearoff positions.
        self._rolls_from_end = _frozen(np.cumsum(self.rolls[:, ::-1], axis=1))
        self._gammon_from_end = _frozen(np.cumsum(self.gammon_rolls[:, ::-1], axis=1))

    @classmethod
    def generate(cls) -> OneSidedTable:
        return cls(*one_sided_dp.generate())

    def arrays(self) -> dict[str, np.ndarray]:
        return {"rolls": self.rolls, "gammon_rolls": self.gammon_rolls}

    def distribution(self, side: Sequence[int]) -> np.ndarray:
        """P(exactly n rolls to bear off every chequer), n = 0 .. 31, for a side of 6 or 25 counts."""
        return self.rolls[rank(side)].copy()

    def gammon_distribution(self, side: Sequence[int]) -> np.ndarray:
        """P(exactly n rolls to bear off the first chequer); all at n = 0 once a chequer is off."""
        return self.gammon_rolls[rank(side)].copy()

    def expected_rolls(self, side: Sequence[int]) -> float:
        return float(self.rolls[rank(side)] @ np.arange(MAX_ROLLS))

    def probabilities(self, me: np.ndarray, opp: np.ndarray) -> np.ndarray:
        """gnubg's 5 outputs for the roller with side ranks ``me`` against ``opp`` (arrays of ranks)."""
        mine, theirs = self.rolls[me], self.rolls[opp]
        out = np.zeros((len(me), 5))
        # I need i rolls; the opponent has had i - 1 by then, so I win if they need at least i.
        out[:, WIN] = np.einsum("ni,ni->n", mine, self._rolls_from_end[opp][:, ::-1])
        # ... and win a gammon if they have not borne a chequer off in i - 1 rolls either.
        out[:, WIN_GAMMON] = np.einsum("ni,ni->n", mine, self._gammon_from_end[opp][:, ::-1])
        # They finish on their j-th roll, after my j-th: I am gammoned if my first chequer needs more than j.
        mine_first_later = np.zeros_like(mine)
        mine_first_later[:, :-1] = self._gammon_from_end[me][:, ::-1][:, 1:]
        out[:, LOSE_GAMMON] = np.einsum("ni,ni->n", theirs, mine_first_later)
        return np.clip(out, 0.0, 1.0, out=out)  # a certain result can sum to 1 + 1e-16


class TwoSidedTable:
    """Exact P(win) and money equities of all pairs of sides of up to 6 chequers (see ``two_sided``)."""

    def __init__(self, table: np.ndarray) -> None:
        shape = (TWO_SIDED_SIZE, TWO_SIDED_SIZE, 4)
        if table.shape != shape or table.dtype != np.float32:
            raise BearoffDataError(
                f"two-sided table: expected float32 {shape}, got {table.dtype} {table.shape}"
            )
        self.table = _frozen(table)

    @classmethod
    def generate(cls) -> TwoSidedTable:
        # float32 keeps 7 significant digits (gnubg's file keeps 16 bits) and halves memory and cache size.
        return cls(two_sided_dp.generate().astype(np.float32))

    def arrays(self) -> dict[str, np.ndarray]:
        return {"table": self.table}

    def probabilities(self, me: np.ndarray, opp: np.ndarray) -> np.ndarray:
        out = np.zeros((len(me), 5))
        out[:, WIN] = self.table[me, opp, two_sided_dp.WIN]
        return out

    def cubeful(self, me: int, opp: int) -> CubefulEquities:
        win, centred, owned, opponent_owns = (float(v) for v in self.table[me, opp])
        return CubefulEquities(2.0 * win - 1.0, centred, owned, opponent_owns)


def _sides(positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
    """Home-board counts (n, 6) of roller and opponent; BearoffRangeError for a non-bearoff position."""
    if not positions:
        empty = np.zeros((0, POINTS), dtype=np.int64)
        return empty, empty
    try:
        boards = np.array([(p.me, p.opp) for p in positions], dtype=np.int64)
    except AttributeError:
        raise BearoffRangeError("bearoff positions must be engine.position.Position values") from None
    outside = boards[:, :, POINTS:].any(axis=(1, 2))
    finished = ~boards[:, :, :POINTS].any(axis=2).all(axis=1)
    bad = np.flatnonzero(outside | finished)
    if len(bad):
        pos = positions[int(bad[0])]
        why = "a chequer is outside its home board" if outside[bad[0]] else "the game is over"
        raise BearoffRangeError(f"{pos.position_id} is not a bearoff position: {why}")
    return boards[:, 0, :POINTS], boards[:, 1, :POINTS]


class BearoffDatabase:
    """Exact bearoff evaluation for positions with every chequer of both sides on their home boards."""

    def __init__(self, one_sided_table: OneSidedTable, two_sided_table: TwoSidedTable | None = None) -> None:
        self.one_sided = one_sided_table
        self.two_sided = two_sided_table
        # Where each table came from ("generated" or a cache path): for logs and benchmarks.
        self.sources: dict[str, str] = {}

    @classmethod
    def generate(cls, two_sided: bool = True) -> BearoffDatabase:
        """Build the tables in memory, without touching the cache."""
        db = cls(OneSidedTable.generate(), TwoSidedTable.generate() if two_sided else None)
        db.sources = {"one_sided": "generated", **({"two_sided": "generated"} if two_sided else {})}
        return db

    @classmethod
    def load(cls, cache_dir: Path | str | None = None, two_sided: bool = True) -> BearoffDatabase:
        """Read the tables from ``cache_dir`` (default ``cache.default_cache_dir()``), generating and storing
        whichever is missing, stale or damaged. A cache that cannot be written is not an error."""
        folder = Path(cache_dir) if cache_dir is not None else cache.default_cache_dir()
        rolls = ((ONE_SIDED_SIZE, MAX_ROLLS), "<f8")
        stored = cache.read(folder / ONE_SIDED_FILE, ONE_SIDED_KEY, {"rolls": rolls, "gammon_rolls": rolls})
        if stored is not None:
            db = cls(OneSidedTable(stored["rolls"], stored["gammon_rolls"]))
            db.sources["one_sided"] = str(folder / ONE_SIDED_FILE)
        else:
            db = cls(OneSidedTable.generate())
            cache.write(folder / ONE_SIDED_FILE, ONE_SIDED_KEY, db.one_sided.arrays())
            db.sources["one_sided"] = "generated"
        if two_sided:
            table = ((TWO_SIDED_SIZE, TWO_SIDED_SIZE, 4), "<f4")
            stored = cache.read(folder / TWO_SIDED_FILE, TWO_SIDED_KEY, {"table": table})
            if stored is not None:
                db.two_sided = TwoSidedTable(stored["table"])
                db.sources["two_sided"] = str(folder / TWO_SIDED_FILE)
            else:
                db.two_sided = TwoSidedTable.generate()
                # Dense floats: compression would save a fifth of 14 MB and cost a second each way.
                cache.write(folder / TWO_SIDED_FILE, TWO_SIDED_KEY, db.two_sided.arrays(), compress=False)
                db.sources["two_sided"] = "generated"
        return db

    def __repr__(self) -> str:
        kinds = "one-sided 6x15" + (" + two-sided 6x6" if self.two_sided is not None else "")
        return f"<BearoffDatabase {kinds}>"

    # -- the evaluator's API ----------------------------------------------------------------------------

    def applies(self, position: Position) -> bool:
        """Both sides have chequers left, all of them on their own points 1-6 (gnubg's BEAROFF1/BEAROFF2)."""
        me, opp = position.me, position.opp
        return any(me) and any(opp) and not any(me[POINTS:]) and not any(opp[POINTS:])

    def is_two_sided(self, position: Position) -> bool:
        """``applies`` and the exact two-sided table covers it (loaded, at most 6 chequers a side)."""
        return (
            self.two_sided is not None
            and self.applies(position)
            and sum(position.me) <= TWO_SIDED_CHEQUERS
            and sum(position.opp) <= TWO_SIDED_CHEQUERS
        )

    def two_sided_mask(self, boards: np.ndarray) -> np.ndarray:
        """Which (n, 2, 25) boards (player on roll first) the two-sided table covers: ``is_two_sided``."""
        b = np.asarray(boards)
        if self.two_sided is None or not len(b):
            return np.zeros(len(b), dtype=bool)
        counts = b.sum(axis=2)
        inside = ~b[:, :, POINTS:].any(axis=(1, 2))
        return inside & (counts >= 1).all(axis=1) & (counts <= TWO_SIDED_CHEQUERS).all(axis=1)

    def two_sided_rows(self, boards: np.ndarray) -> np.ndarray:
        """(n, 4) float64 rows of the two-sided table for (n, 2, 25) boards: P(win), then the roller's money
        equities with the cube centred, owned by him, owned by the opponent; NaN where it does not apply."""
        b = np.asarray(boards)
        out = np.full((len(b), 4), np.nan)
        mask = self.two_sided_mask(b)
        if mask.any():
            assert self.two_sided is not None
            ranks = board_ranks(b[mask])
            out[mask] = self.two_sided.table[ranks[:, 0], ranks[:, 1]]
        return out

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        """gnubg's 5 cumulative outputs for the side on roll of each position: float64 (n, 5).

        Raises BearoffRangeError if a position is not a bearoff position (see ``applies``).
        """
        me, opp = _sides(positions)
        return self._evaluate_sides(me, opp)

    def evaluate_boards(self, boards: np.ndarray) -> np.ndarray:
        """``evaluate`` for (n, 2, 25) boards (player on roll first) that ``applies`` to, unchecked: the
        search's path, with no Position objects."""
        ranks = board_ranks(boards)
        b = np.asarray(boards)
        return self._evaluate_sides(b[:, 0, :POINTS], b[:, 1, :POINTS], ranks)

    def _evaluate_sides(self, me: np.ndarray, opp: np.ndarray, ranks: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros((len(me), 5))
        if not len(me):
            return out
        me_rank, opp_rank = (rank_array(me), rank_array(opp)) if ranks is None else (ranks[:, 0], ranks[:, 1])
        exact = np.zeros(len(me), dtype=bool)
        if self.two_sided is not None:
            exact = (me.sum(axis=1) <= TWO_SIDED_CHEQUERS) & (opp.sum(axis=1) <= TWO_SIDED_CHEQUERS)
            if exact.any():
                out[exact] = self.two_sided.probabilities(me_rank[exact], opp_rank[exact])
        if not exact.all():
            rest = ~exact
            out[rest] = self.one_sided.probabilities(me_rank[rest], opp_rank[rest])
        return out

    def cubeful_equities(self, position: Position) -> CubefulEquities:
        """Exact money equities of the side on roll; BearoffRangeError outside the two-sided table."""
        if self.two_sided is None:
            raise BearoffRangeError("the two-sided bearoff table is not loaded")
        me, opp = _sides([position])
        if me.sum() > TWO_SIDED_CHEQUERS or opp.sum() > TWO_SIDED_CHEQUERS:
            limit = TWO_SIDED_CHEQUERS
            raise BearoffRangeError(f"{position.position_id}: the two-sided table has at most {limit} a side")
        return self.two_sided.cubeful(int(rank_array(me)[0]), int(rank_array(opp)[0]))

    def expected_rolls(self, side: Sequence[int]) -> float:
        """Mean rolls to bear off a side (6 home counts or a ``Position`` side), playing to minimise it."""
        return self.one_sided.expected_rolls(side)
