"""Match equity: the match equity table (MET) and gnubg's conversions between probabilities, MWC and equity.

Scores are given as "away" counts: the points a player still needs (1 = one point from the match). Every
function looks from one player's side, "me", against "opp". The packaged table is Kazaross-XG2 (gnubg's
default), 25 points long; gnubg recomputes the end of its post-Crawford row with Zadeh's recursion, and so
does this module.

Probabilities are gnubg's five cumulative outputs (win, win gammon, win backgammon, lose gammon, lose
backgammon), gammons including backgammons, for the player the function calls "me".
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from typing import NamedTuple

from engine.errors import EngineError

MAX_AWAY = 25  # the packaged tables are 25 points long; longer matches are refused rather than guessed
DEFAULT_TABLE = "kazaross_xg2"

# gnubg (matchequity.c, InitMatchEquity) rebuilds the post-Crawford row from index length-1 on with Zadeh's
# recursion: trailer gammon rate 0.25, minus the free-drop values at 2-away and 4-away.
POST_CRAWFORD_GAMMON_RATE = 0.25
FREE_DROP_2_AWAY = 0.015
FREE_DROP_4_AWAY = 0.004

_PROB_TOLERANCE = 1e-6


class InvalidScoreError(EngineError):
    """A match score, length or cube the match equity table cannot describe."""


class InvalidProbabilitiesError(EngineError):
    """Five game-outcome probabilities that are not numbers in 0..1 nested win >= gammon >= backgammon."""


class InvalidTableError(EngineError):
    """A match equity table file that does not parse or has the wrong shape."""


class Probs(NamedTuple):
    """gnubg's cumulative outcome probabilities for one player: gammons include backgammons."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float

    @property
    def lose(self) -> float:
        return 1.0 - self.win

    def flipped(self) -> Probs:
        """The same game seen by the other player."""
        return Probs(
            1.0 - self.win, self.lose_gammon, self.lose_backgammon, self.win_gammon, self.win_backgammon
        )

    def outcomes(self) -> tuple[float, float, float, float, float, float]:
        """Exclusive chances: win single, gammon, backgammon; lose single, gammon, backgammon."""
        w, wg, wbg, lg, lbg = self
        return (w - wg, wg - wbg, wbg, 1.0 - w - lg, lg - lbg, lbg)

    def __repr__(self) -> str:
        return f"Probs({', '.join(f'{p!r}' for p in self)})"


def check_probs(probs: Sequence[float]) -> Probs:
    """Validate five cumulative probabilities (allowing float noise of 1e-6); return them as ``Probs``."""
    if isinstance(probs, Probs):
        values: tuple[float, ...] = tuple(probs)
    else:
        try:
            values = tuple(float(p) for p in probs)
        except (TypeError, ValueError):
            raise InvalidProbabilitiesError(f"probabilities must be five numbers, not {probs!r}") from None
    if len(values) != 5:
        raise InvalidProbabilitiesError(f"expected 5 probabilities (w, wg, wbg, lg, lbg), got {len(values)}")
    if not all(math.isfinite(p) and -_PROB_TOLERANCE <= p <= 1 + _PROB_TOLERANCE for p in values):
        raise InvalidProbabilitiesError(f"probabilities {values} are not all in 0..1")
    w, wg, wbg, lg, lbg = values
    if wg > w + _PROB_TOLERANCE or wbg > wg + _PROB_TOLERANCE:
        raise InvalidProbabilitiesError(f"win {w} >= win gammon {wg} >= win backgammon {wbg} does not hold")
    if lg > 1 - w + _PROB_TOLERANCE or lbg > lg + _PROB_TOLERANCE:
        raise InvalidProbabilitiesError(
            f"lose {1 - w} >= lose gammon {lg} >= lose backgammon {lbg} does not hold"
        )
    return Probs(*values)


class GammonPrices(NamedTuple):
    """gnubg's gammon prices at a score and cube: the normalised equity a gammon adds over a single game, and
    a backgammon over a gammon, for wins and for losses (so a won gammon is worth 1 + win_gammon)."""

    win_gammon: float
    lose_gammon: float
    win_backgammon: float
    lose_backgammon: float


def post_crawford_extension(
    known: Sequence[float],
    length: int,
    gammon_rate: float = POST_CRAWFORD_GAMMON_RATE,
    free_drop_2: float = FREE_DROP_2_AWAY,
    free_drop_4: float = FREE_DROP_4_AWAY,
) -> tuple[float, ...]:
    """Extend a post-Crawford row to ``length`` entries with Zadeh's recursion, as gnubg does.

    Entry i is the trailer's MWC at (i+1)-away against a leader at 1-away, after the Crawford game. The
    trailer doubles at once, so a game decides two points, or four with a gammon:
    E[i] = G/2 E[i-4] + (1-G)/2 E[i-2], a term before the start counting 1. The leader's free drop is worth
    1.5% at 2-away and 0.4% at 4-away.
    """
    row = list(known[:length])
    for i in range(len(row), length):
        value = gammon_rate * 0.5 * (row[i - 4] if i >= 4 else 1.0)
        value += (1.0 - gammon_rate) * 0.5 * (row[i - 2] if i >= 2 else 1.0)
        if i == 1:
            value -= free_drop_2
        elif i == 3:
            value -= free_drop_4
        row.append(value)
    return tuple(row)


@dataclass(frozen=True)
class MatchEquityTable:
    """A pre-Crawford table and a post-Crawford row, each indexed by away - 1.

    ``pre_crawford[i][j]`` is the MWC of a player (i+1)-away against one (j+1)-away before a game that is not
    post-Crawford (the 1-away row holds the Crawford game). ``post_crawford[j]`` is the MWC of the trailer
    (j+1)-away against the leader at 1-away once the Crawford game has been played.
    """

    name: str
    pre_crawford: tuple[tuple[float, ...], ...]
    post_crawford: tuple[float, ...]
    resource: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        n = len(self.pre_crawford)
        if n < 1 or any(len(row) != n for row in self.pre_crawford):
            raise InvalidTableError(f"{self.name}: the pre-Crawford table is not square")
        if len(self.post_crawford) != n:
            raise InvalidTableError(
                f"{self.name}: the post-Crawford row has {len(self.post_crawford)} entries, not {n}"
            )
        for value in (*self.post_crawford, *(v for row in self.pre_crawford for v in row)):
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise InvalidTableError(f"{self.name}: match winning chance {value} is not in 0..1")

    @property
    def length(self) -> int:
        return len(self.pre_crawford)

    def __repr__(self) -> str:
        if self.resource is not None:
            return f"MatchEquityTable.load({self.resource!r})"
        return (
            f"MatchEquityTable(name={self.name!r}, pre_crawford={self.pre_crawford!r}, "
            f"post_crawford={self.post_crawford!r})"
        )

    # -- construction ---------------------------------------------------------------------------------------

    @classmethod
    def load(cls, table: str = DEFAULT_TABLE) -> MatchEquityTable:
        """A table shipped in engine/data (``met_<table>.json``); loaded once and cached."""
        return _load_packaged(table)

    @classmethod
    def from_json(cls, text: str, resource: str | None = None) -> MatchEquityTable:
        """Parse the data-file form (engine/data/met_*.json: the fields of ``parse_gnubg_met_xml``)."""
        try:
            data = json.loads(text)
            return cls.from_fields(data["name"], data["pre_crawford"], data["post_crawford"], resource)
        except (ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, InvalidTableError):
                raise
            raise InvalidTableError(f"match equity table JSON: {exc!r}") from None

    @classmethod
    def from_gnubg_xml(cls, text: str) -> MatchEquityTable:
        """Parse an explicit gnubg MET file (met.dtd: explicit pre- and post-Crawford tables of ``<me>``)."""
        data = parse_gnubg_met_xml(text)
        return cls.from_fields(data["name"], data["pre_crawford"], data["post_crawford"])

    @classmethod
    def from_fields(
        cls,
        name: str,
        pre_crawford: Sequence[Sequence[float]],
        post_crawford: Sequence[float],
        resource: str | None = None,
    ) -> MatchEquityTable:
        """Build from a file's values. Like gnubg (InitMatchEquity), keep the first length-1 post-Crawford
        entries and compute the rest with Zadeh's recursion: for Kazaross-XG2 the 25-away entry becomes
        0.1181% instead of the file's 0.1230%."""
        pre = tuple(tuple(float(v) for v in row) for row in pre_crawford)
        post = [float(v) for v in post_crawford]
        n = len(pre)
        if len(post) < n - 1:
            raise InvalidTableError(
                f"{name}: the post-Crawford row needs at least {n - 1} entries, has {len(post)}"
            )
        return cls(str(name), pre, post_crawford_extension(post[: n - 1], n), resource)

    # -- lookups --------------------------------------------------------------------------------------------

    def _check_away(self, away_me: int, away_opp: int) -> None:
        for who, away in (("my", away_me), ("the opponent's", away_opp)):
            if not isinstance(away, int) or isinstance(away, bool):
                raise InvalidScoreError(f"{who} away count {away!r} is not an integer")
            if not 1 <= away <= self.length:
                raise InvalidScoreError(
                    f"{who} away count {away} is outside 1..{self.length} (the table's length)"
                )

    def mwc(self, away_me: int, away_opp: int, crawford_done: bool = False) -> float:
        """My MWC before a game at this score. At 1-away, ``crawford_done`` says the Crawford game is over."""
        self._check_away(away_me, away_opp)
        if crawford_done and away_me != 1 and away_opp != 1:
            raise InvalidScoreError(f"{away_me}-away {away_opp}-away: post-Crawford needs a player at 1-away")
        return self._lookup(away_me, away_opp, crawford_done)

    def _lookup(self, away_me: int, away_opp: int, post_crawford: bool) -> float:
        if away_me <= 0:
            return 1.0
        if away_opp <= 0:
            return 0.0
        if post_crawford:
            if away_me == 1:
                return 1.0 - self.post_crawford[away_opp - 1]
            return self.post_crawford[away_me - 1]
        return self.pre_crawford[away_me - 1][away_opp - 1]

    def mwc_after(self, away_me: int, away_opp: int, points: int) -> float:
        """My MWC once this game is over: ``points`` > 0 won by me, < 0 won by the opponent.

        The next game is post-Crawford when a player is already at 1-away now (this is the Crawford game or a
        post-Crawford one), and the Crawford game when the winner has just reached 1-away (gnubg's getME).
        """
        key = (away_me, away_opp, points)
        exact = type(away_me) is int and type(away_opp) is int  # True == 1 as a key: bools are checked below
        if exact and (value := self._after_memo.get(key)) is not None:
            return value
        self._check_away(away_me, away_opp)
        value = self._after(away_me, away_opp, points)
        if exact:
            self._after_memo[key] = value
        return value

    @cached_property
    def _after_memo(self) -> dict[tuple[int, int, int], float]:
        """``mwc_after`` by its arguments: the cube code asks for the same few dozen values at every 0-ply
        decision (a few microseconds each with the checks). Not a field: equality and hashing ignore it."""
        return {}

    def _after(self, away_me: int, away_opp: int, points: int) -> float:
        post = away_me == 1 or away_opp == 1
        if points >= 0:
            return self._lookup(away_me - points, away_opp, post)
        return self._lookup(away_me, away_opp + points, post)

    # -- conversions ----------------------------------------------------------------------------------------

    def win_lose_mwc(self, away_me: int, away_opp: int, cube: int = 1) -> tuple[float, float]:
        """My MWC after winning and after losing a single game with the cube at ``cube``."""
        self._check_away(away_me, away_opp)
        _check_cube(cube)
        return self._after(away_me, away_opp, cube), self._after(away_me, away_opp, -cube)

    def cubeless_mwc(self, probs: Sequence[float], away_me: int, away_opp: int, cube: int = 1) -> float:
        """My MWC when the game is played out with the cube frozen at ``cube``."""
        p = check_probs(probs)
        self._check_away(away_me, away_opp)
        _check_cube(cube)
        return self._cubeless(p, away_me, away_opp, cube)

    def _cubeless(self, p: Probs, away_me: int, away_opp: int, cube: int) -> float:
        total = 0.0
        for chance, points in zip(p.outcomes(), (1, 2, 3, -1, -2, -3), strict=True):
            total += chance * self._after(away_me, away_opp, points * cube)
        return total

    def mwc2eq(self, mwc: float, away_me: int, away_opp: int, cube: int = 1) -> float:
        """Normalised equity (NEMG): linear in MWC, -1 at losing ``cube`` points, +1 at winning them."""
        win, lose = self.win_lose_mwc(away_me, away_opp, cube)
        return (2.0 * mwc - (win + lose)) / (win - lose)

    def eq2mwc(self, equity: float, away_me: int, away_opp: int, cube: int = 1) -> float:
        """The inverse of ``mwc2eq``."""
        win, lose = self.win_lose_mwc(away_me, away_opp, cube)
        return 0.5 * (equity * (win - lose) + (win + lose))

    def gammon_prices(self, away_me: int, away_opp: int, cube: int = 1) -> GammonPrices:
        """gnubg's gammon and backgammon prices (matchequity.c getGammonPrice), clamped at 0 like gnubg."""
        self._check_away(away_me, away_opp)
        _check_cube(cube)
        return self._gammon_prices(away_me, away_opp, cube)

    def _gammon_prices(self, away_me: int, away_opp: int, cube: int) -> GammonPrices:
        win, win_g, win_bg, lose, lose_g, lose_bg = (
            self._after(away_me, away_opp, k * cube) for k in (1, 2, 3, -1, -2, -3)
        )
        centre = (win + lose) / 2.0
        half = win - centre
        if abs(half) <= 1e-7:
            return GammonPrices(0.0, 0.0, 0.0, 0.0)
        gw = (win_g - centre) / half - 1.0
        gl = (centre - lose_g) / half - 1.0
        bw = (win_bg - centre) / half - (gw + 1.0)
        bl = (centre - lose_bg) / half - (gl + 1.0)
        return GammonPrices(*(max(v, 0.0) for v in (gw, gl, bw, bl)))

    def nemg_table(
        self, away_me: int, away_opp: int, cube: int = 1, mwcs: Iterable[float] = (0.0, 0.25, 0.5, 0.75, 1.0)
    ) -> list[tuple[float, float]]:
        """(MWC, normalised equity) pairs at a score, as in gnubg's manual ("Normalized equity")."""
        return [(m, self.mwc2eq(m, away_me, away_opp, cube)) for m in mwcs]


def _check_cube(cube: int) -> None:
    if not isinstance(cube, int) or isinstance(cube, bool) or cube < 1 or cube & (cube - 1):
        raise InvalidScoreError(f"cube value {cube!r} is not a power of two")


@cache
def _load_packaged(table: str) -> MatchEquityTable:
    if not re.fullmatch(r"[a-z0-9_]+", table):
        raise InvalidTableError(f"table name {table!r} is not a packaged table name")
    path = resources.files("engine") / "data" / f"met_{table}.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidTableError(f"no packaged match equity table {table!r}") from None
    return MatchEquityTable.from_json(text, resource=table)


def parse_gnubg_met_xml(text: str) -> dict[str, object]:
    """The fields of an explicit gnubg MET XML file, plus its leading comment (the notice) as lines."""
    match = re.search(r"<!--(.*?)-->", text, re.S)
    notice = [line.strip() for line in match.group(1).strip().splitlines()] if match else []
    body = re.sub(r"<!DOCTYPE[^>]*>", "", text)
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise InvalidTableError(f"MET XML: {exc}") from None

    def table(tag: str) -> list[list[float]]:
        node = root.find(tag)
        if node is None or node.get("type") != "explicit":
            raise InvalidTableError(f"MET XML: no explicit <{tag}>")
        try:
            return [[float(me.text or "") for me in row.findall("me")] for row in node.findall("row")]
        except ValueError as exc:
            raise InvalidTableError(f"MET XML <{tag}>: {exc}") from None

    post = table("post-crawford-table")
    if not post:
        raise InvalidTableError("MET XML: empty <post-crawford-table>")
    return {
        "name": root.findtext("info/name", "").strip(),
        "description": root.findtext("info/description", "").strip(),
        "notice": notice,
        "length": int(root.findtext("info/length", "0")),
        "pre_crawford": table("pre-crawford-table"),
        "post_crawford": post[0],
    }
