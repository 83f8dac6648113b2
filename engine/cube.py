"""Cube theory: cubeful equities from cubeless probabilities (Janowski), cube decisions and resignations.

This follows GNU Backgammon's 0-ply cube model (eval.c): the cubeful equity mixes the dead-cube (cubeless)
equity and a fully live-cube one, E = (1 - x) E(dead) + x E(live), x being the cube efficiency. In money play
E(live) is Janowski's piecewise-linear function of the winning chance through the take and cash points; in
match play the same is done in match winning chance (MWC) with cash points from the match equity table,
recursing over the cube levels at which the cube stays alive (gnubg's GetPoints and Cl2CfMatch*).

Probabilities are always those of the player on roll (``CubeInfo.on_roll``), who is the one that may double.
Equities are normalised to the current cube (money: points per cube unit; match: NEMG, -1/+1 = losing/winning
the cube value), as gnubg reports them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum, IntEnum
from typing import Literal

from engine.errors import EngineError
from engine.ids import MatchKey
from engine.met import MAX_AWAY, InvalidScoreError, MatchEquityTable, Probs, check_probs
from engine.position import Position, PositionClass

CENTRED = -1

# Cube efficiency (gnubg eval.c EvalEfficiency and its constants): contact and crashed 0.68; races
# 0.55 + 0.00125 * pips of the player on roll, held to 0.6..0.7 (0.6 at <= 40 pips, 0.7 at >= 120); one-sided
# bearoffs 0.6. For two-sided bearoffs gnubg uses its exact cubeful database instead; without it 0.6 is its
# stand-in (rTSCubeX). A finished game has a dead cube.
CONTACT_X = 0.68
CRASHED_X = 0.68
RACE_X_SLOPE = 0.00125
RACE_X_OFFSET = 0.55
RACE_X_MIN = 0.6
RACE_X_MAX = 0.7
BEAROFF_X = 0.6

OPTIONAL_EPSILON = 1e-5  # gnubg isOptional(): doubling and not doubling tie within this
_DEAD_EPSILON = 1e-7  # gnubg Cl2CfMoney: a win chance this close to 0 or 1 means a dead cube


class InvalidCubeError(EngineError):
    """A cube state that cannot occur, or a cube efficiency outside 0..1."""


@dataclass(frozen=True, slots=True)
class CubeInfo:
    """Cube and score for a cube decision, in gnubg's terms: players 0 and 1, ``owner`` -1 for a centred cube.

    ``on_roll`` is the player whose turn it is (and whose probabilities the functions take). ``crawford``
    marks the Crawford game itself; the games after it are post-Crawford. ``jacoby`` and ``beavers`` apply to
    money play only (``match_length`` 0).
    """

    cube: int = 1
    owner: int = CENTRED
    on_roll: int = 0
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = True
    beavers: bool = True

    def __post_init__(self) -> None:
        cube = self.cube
        if not isinstance(cube, int) or cube < 1 or cube & (cube - 1) or cube > 1 << 15:
            raise InvalidCubeError(f"cube value {cube!r} is not a power of two up to 32768")
        if self.owner not in (CENTRED, 0, 1):
            raise InvalidCubeError(f"cube owner {self.owner!r} is not -1 (centred), 0 or 1")
        if self.on_roll not in (0, 1):
            raise InvalidCubeError(f"player on roll {self.on_roll!r} is not 0 or 1")
        n = self.match_length
        if not isinstance(n, int) or n < 0:
            raise InvalidScoreError(f"match length {n!r} is not a non-negative integer (0 = money)")
        if n > MAX_AWAY:
            raise InvalidScoreError(
                f"match length {n} exceeds the {MAX_AWAY} points the match equity table covers"
            )
        try:
            score = tuple(self.score)
        except TypeError:
            raise InvalidScoreError(f"score {self.score!r} is not two non-negative integers") from None
        if len(score) != 2 or not all(isinstance(s, int) and s >= 0 for s in score):
            raise InvalidScoreError(f"score {self.score!r} is not two non-negative integers")
        object.__setattr__(self, "score", score)  # accept a list (as JSON gives it), keep a tuple
        if n and max(self.score) >= n:
            raise InvalidScoreError(f"score {self.score} is not that of an unfinished {n}-point match")
        if self.crawford:
            if not n:
                raise InvalidScoreError("a money session has no Crawford game")
            if n - 1 not in score or score == (n - 1, n - 1):
                raise InvalidScoreError(
                    f"score {self.score} to {n}: the Crawford game needs one player at 1-away"
                )

    @classmethod
    def money(
        cls, cube: int = 1, owner: int = CENTRED, on_roll: int = 0, jacoby: bool = True, beavers: bool = True
    ) -> CubeInfo:
        return cls(cube, owner, on_roll, 0, (0, 0), False, jacoby, beavers)

    @classmethod
    def from_match_key(cls, key: MatchKey, beavers: bool = True) -> CubeInfo:
        """From a decoded gnubg match ID (its ``move`` is the player on roll)."""
        return cls(
            key.cube,
            key.cube_owner,
            key.move,
            key.match_length,
            key.score if key.match_length else (0, 0),
            key.crawford,
            key.jacoby,
            beavers,
        )

    # -- derived facts --------------------------------------------------------------------------------------

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points each player still needs (players 0 and 1); meaningless in money play."""
        return self.match_length - self.score[0], self.match_length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        return not self.is_money and not self.crawford and self.match_length - 1 in self.score

    @property
    def centred(self) -> bool:
        return self.owner == CENTRED

    @property
    def cube_available(self) -> bool:
        """May the player on roll double (or redouble) now? (gnubg GetDPEq.)"""
        if self.owner not in (CENTRED, self.on_roll):
            return False
        if self.is_money:
            return True
        away_me = self.away[self.on_roll]
        # No cube in the Crawford game; none for a player to whom the current cube already gives the match
        # (that includes the leader after Crawford, at 1-away).
        return not self.crawford and away_me > self.cube

    @property
    def cube_alive(self) -> bool:
        """Does the cube still change anything (gnubg fDoCubeful)? Money: always."""
        if self.is_money:
            return True
        a, b = self.away
        return not (self.crawford or (a <= self.cube and b <= self.cube) or a == b == 2)

    def doubled(self) -> CubeInfo:
        """The state after the player on roll doubles and the opponent takes."""
        return replace(self, cube=self.cube * 2, owner=1 - self.on_roll)

    def swapped(self) -> CubeInfo:
        """The same state with the other player on roll."""
        return replace(self, on_roll=1 - self.on_roll)


class CubeDecisionKind(IntEnum):
    """gnubg's cube decisions (eval.h ``cubedecision``), same names and numbers."""

    DOUBLE_TAKE = 0
    DOUBLE_PASS = 1
    NODOUBLE_TAKE = 2
    TOOGOOD_TAKE = 3
    TOOGOOD_PASS = 4
    DOUBLE_BEAVER = 5
    NODOUBLE_BEAVER = 6
    REDOUBLE_TAKE = 7
    REDOUBLE_PASS = 8
    NO_REDOUBLE_TAKE = 9
    TOOGOODRE_TAKE = 10
    TOOGOODRE_PASS = 11
    NO_REDOUBLE_BEAVER = 12
    NODOUBLE_DEADCUBE = 13
    NO_REDOUBLE_DEADCUBE = 14
    NOT_AVAILABLE = 15
    OPTIONAL_DOUBLE_TAKE = 16
    OPTIONAL_REDOUBLE_TAKE = 17
    OPTIONAL_DOUBLE_BEAVER = 18
    OPTIONAL_DOUBLE_PASS = 19
    OPTIONAL_REDOUBLE_PASS = 20


class DoublerAction(Enum):
    NO_DOUBLE = "no double"
    DOUBLE = "double"
    TOO_GOOD = "too good"
    OPTIONAL_DOUBLE = "optional double"  # doubling and playing on are worth the same
    UNAVAILABLE = "unavailable"  # the cube is dead, not ours, or this is the Crawford game


class TakerAction(Enum):
    TAKE = "take"
    PASS = "pass"
    BEAVER = "beaver"


_K = CubeDecisionKind
_D = DoublerAction
_T = TakerAction
_ACTIONS: dict[CubeDecisionKind, tuple[DoublerAction, TakerAction]] = {
    _K.DOUBLE_TAKE: (_D.DOUBLE, _T.TAKE),
    _K.DOUBLE_PASS: (_D.DOUBLE, _T.PASS),
    _K.NODOUBLE_TAKE: (_D.NO_DOUBLE, _T.TAKE),
    _K.TOOGOOD_TAKE: (_D.TOO_GOOD, _T.TAKE),
    _K.TOOGOOD_PASS: (_D.TOO_GOOD, _T.PASS),
    _K.DOUBLE_BEAVER: (_D.DOUBLE, _T.BEAVER),
    _K.NODOUBLE_BEAVER: (_D.NO_DOUBLE, _T.BEAVER),
    _K.REDOUBLE_TAKE: (_D.DOUBLE, _T.TAKE),
    _K.REDOUBLE_PASS: (_D.DOUBLE, _T.PASS),
    _K.NO_REDOUBLE_TAKE: (_D.NO_DOUBLE, _T.TAKE),
    _K.TOOGOODRE_TAKE: (_D.TOO_GOOD, _T.TAKE),
    _K.TOOGOODRE_PASS: (_D.TOO_GOOD, _T.PASS),
    _K.NO_REDOUBLE_BEAVER: (_D.NO_DOUBLE, _T.BEAVER),
    _K.NODOUBLE_DEADCUBE: (_D.UNAVAILABLE, _T.TAKE),
    _K.NO_REDOUBLE_DEADCUBE: (_D.UNAVAILABLE, _T.TAKE),
    _K.NOT_AVAILABLE: (_D.UNAVAILABLE, _T.TAKE),
    _K.OPTIONAL_DOUBLE_TAKE: (_D.OPTIONAL_DOUBLE, _T.TAKE),
    _K.OPTIONAL_REDOUBLE_TAKE: (_D.OPTIONAL_DOUBLE, _T.TAKE),
    _K.OPTIONAL_DOUBLE_BEAVER: (_D.OPTIONAL_DOUBLE, _T.BEAVER),
    _K.OPTIONAL_DOUBLE_PASS: (_D.OPTIONAL_DOUBLE, _T.PASS),
    _K.OPTIONAL_REDOUBLE_PASS: (_D.OPTIONAL_DOUBLE, _T.PASS),
}


@dataclass(frozen=True, slots=True)
class CubeDecision:
    """The three cubeful equities of a cube decision (normalised, doubler's view) and the verdict."""

    kind: CubeDecisionKind
    no_double: float
    double_take: float
    double_pass: float
    optimal: float

    def __repr__(self) -> str:
        return (
            f"CubeDecision(CubeDecisionKind.{self.kind.name}, {self.no_double!r}, {self.double_take!r}, "
            f"{self.double_pass!r}, {self.optimal!r})"
        )

    @property
    def action(self) -> DoublerAction:
        return _ACTIONS[self.kind][0]

    @property
    def taker_action(self) -> TakerAction:
        """What the opponent should answer to a double (for a too-good position: if doubled anyway)."""
        return _ACTIONS[self.kind][1]

    @property
    def should_double(self) -> bool:
        """Double now (optional doubles are taken: they cost nothing)."""
        return self.action in (DoublerAction.DOUBLE, DoublerAction.OPTIONAL_DOUBLE)


class ResignLevel(IntEnum):
    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


# -- cube efficiency and cubeless equities -------------------------------------------------------------------


def cube_efficiency(position: Position) -> float:
    """gnubg's cube efficiency x for the player on roll in ``position``."""
    pc = position.classify()
    if pc == PositionClass.OVER:
        return 0.0
    if pc == PositionClass.CONTACT:
        return CONTACT_X
    if pc == PositionClass.CRASHED:
        return CRASHED_X
    if pc == PositionClass.RACE:
        x = RACE_X_OFFSET + RACE_X_SLOPE * position.pips()[0]
        return min(RACE_X_MAX, max(RACE_X_MIN, x))
    return BEAROFF_X


def money_equity(probs: Sequence[float]) -> float:
    """Cubeless money equity, gammons and backgammons counting: 2w - 1 + wg - lg + wbg - lbg."""
    w, wg, wbg, lg, lbg = check_probs(probs)
    return 2.0 * w - 1.0 + wg - lg + wbg - lbg


def cubeless_equity(probs: Sequence[float], ci: CubeInfo, met: MatchEquityTable | None = None) -> float:
    """Cubeless equity for the player on roll: money equity, or in match play the cubeless MWC as NEMG."""
    p = check_probs(probs)
    if ci.is_money:
        return money_equity(p)
    s = _Score.of(ci, met)
    return s.to_eq(s.cubeless(p))


def cubeless_mwc(probs: Sequence[float], ci: CubeInfo, met: MatchEquityTable | None = None) -> float:
    """MWC of the player on roll if the game is played out with the cube where it is."""
    p = check_probs(probs)
    return _Score.of(ci, met).cubeless(p)


# -- money play ----------------------------------------------------------------------------------------------


Ownership = Literal["centred", "mine", "theirs"]


def average_win_loss(probs: Sequence[float]) -> tuple[float, float]:
    """Janowski's W and L: the average cubeless value of the games the player wins, and of those he loses.

    W = (P(win) + P(wg) + P(wbg)) / P(win), L = (P(lose) + P(lg) + P(lbg)) / P(lose), with gnubg's cumulative
    gammon outputs (a backgammon counts in both); 1 where the game cannot be won (or lost).
    """
    w, wg, wbg, lg, lbg = check_probs(probs)
    w_value = 1.0 + (wg + wbg) / w if w > 0.0 else 1.0
    l_value = 1.0 + (lg + lbg) / (1.0 - w) if w < 1.0 else 1.0
    return w_value, l_value


def money_live_equity(
    p: float, w_value: float, l_value: float, owner: Ownership = "centred", jacoby: bool = False
) -> float:
    """Janowski's fully live-cube money equity at win chance ``p``, given W and L.

    Piecewise linear through (0, -L), (take point, -1), (cash point, +1) and (1, +W), with take point
    (L - 1/2) / (W + L + 1/2) and cash point (L + 1) / (W + L + 1/2). Owning the cube removes the take-point
    corner (the opponent cannot cash), the opponent owning it removes the cash-point corner. Under the Jacoby
    rule a centred cube wins no gammons, so beyond the two points the line stays at -1 and +1.
    """
    take_point = (l_value - 0.5) / (w_value + l_value + 0.5)
    cash_point = (l_value + 1.0) / (w_value + l_value + 0.5)
    if owner == "centred":
        if p < take_point:
            return -1.0 if jacoby else -l_value + (l_value - 1.0) * p / take_point
        if p < cash_point:
            return -1.0 + 2.0 * (p - take_point) / (cash_point - take_point)
        return 1.0 if jacoby else 1.0 + (w_value - 1.0) * (p - cash_point) / (1.0 - cash_point)
    if owner == "mine":
        if p < cash_point:
            return -l_value + (1.0 + l_value) * p / cash_point
        return 1.0 + (w_value - 1.0) * (p - cash_point) / (1.0 - cash_point)
    if owner == "theirs":
        if p < take_point:
            return -l_value + (l_value - 1.0) * p / take_point
        return -1.0 + (w_value + 1.0) * (p - take_point) / (1.0 - take_point)
    raise InvalidCubeError(f"cube ownership {owner!r} is not 'centred', 'mine' or 'theirs'")


def _ownership(ci: CubeInfo) -> Ownership:
    return "centred" if ci.centred else "mine" if ci.owner == ci.on_roll else "theirs"


def _money_cubeful(p: Probs, ci: CubeInfo, x: float) -> float:
    w, wg, wbg, lg, lbg = p
    jacoby = ci.jacoby and ci.centred
    dead = 2.0 * w - 1.0 + (0.0 if jacoby else wg - lg + wbg - lbg)
    if w <= _DEAD_EPSILON or w >= 1.0 - _DEAD_EPSILON:
        return dead
    w_value, l_value = average_win_loss(p)
    return dead * (1.0 - x) + money_live_equity(w, w_value, l_value, _ownership(ci), jacoby) * x


# -- match play ----------------------------------------------------------------------------------------------


class _Score:
    """A match score seen by the player on roll: MWC lookups for 'me' and for the opponent."""

    __slots__ = ("a", "b", "ci", "cube", "met")

    def __init__(self, ci: CubeInfo, met: MatchEquityTable) -> None:
        if ci.is_money:
            raise InvalidScoreError("match winning chances need a match length, not money play")
        self.ci = ci
        self.met = met
        self.a = ci.away[ci.on_roll]
        self.b = ci.away[1 - ci.on_roll]
        self.cube = ci.cube

    @classmethod
    def of(cls, ci: CubeInfo, met: MatchEquityTable | None) -> _Score:
        return cls(ci, met or MatchEquityTable.load())

    def mine(self, points: int) -> float:
        """My MWC after the game: points > 0 won by me, < 0 by the opponent."""
        return self.met.mwc_after(self.a, self.b, points)

    def of_player(self, k: int, points: int) -> float:
        """Player k's MWC (0 = me, 1 = opponent) after k wins (points > 0) or loses (< 0) that many points."""
        return self.mine(points) if k == 0 else 1.0 - self.mine(-points)

    def cubeless(self, p: Probs) -> float:
        return self.met.cubeless_mwc(p, self.a, self.b, self.cube)

    def to_eq(self, mwc: float) -> float:
        win, lose = self.mine(self.cube), self.mine(-self.cube)
        return (2.0 * mwc - (win + lose)) / (win - lose)


def _gammon_ratios(p: Probs) -> tuple[tuple[float, float], tuple[float, float]]:
    """(gammon-only, backgammon) shares of the games each player wins: mine first, then the opponent's."""
    w, wg, wbg, lg, lbg = p
    mine = ((wg - wbg) / w, wbg / w) if w > 0.0 else (0.0, 0.0)
    theirs = ((lg - lbg) / (1.0 - w), lbg / (1.0 - w)) if w < 1.0 else (0.0, 0.0)
    return mine, theirs


def _live_cash_points(
    s: _Score, ratios: tuple[tuple[float, float], tuple[float, float]], cube: int
) -> tuple[float, float]:
    """Each player's live-cube cash point (own winning chance) at cube level ``cube`` (gnubg GetPoints).

    A player's cash point is where the opponent is indifferent between taking and passing a double. If the
    doubled cube would be dead (a player can win the match with it), it comes from the MWCs of double/take
    and double/pass directly; a player who then would be doubled back for free (he wins the match at 2n, the
    other is far) plays for 4n. Otherwise the opponent's take keeps a live redouble: the take point at this
    level is the opponent's dead take point scaled by his live cash point at the next level.
    """
    away = (s.a, s.b)

    def won(k: int, base: int) -> float:
        g, bg = ratios[k]
        return (
            (1.0 - g - bg) * s.of_player(k, base)
            + g * s.of_player(k, 2 * base)
            + bg * s.of_player(k, 3 * base)
        )

    def lost(k: int, base: int) -> float:
        g, bg = ratios[1 - k]
        return (
            (1.0 - g - bg) * s.of_player(k, -base)
            + g * s.of_player(k, -2 * base)
            + bg * s.of_player(k, -3 * base)
        )

    if away[0] <= 2 * cube or away[1] <= 2 * cube:
        points = []
        for k in (0, 1):
            auto_redouble = away[k] <= 2 * cube < away[1 - k]
            stake = 4 * cube if auto_redouble else 2 * cube
            take_lose, take_win = lost(k, stake), won(k, stake)
            points.append((take_lose - s.of_player(k, cube)) / (take_lose - take_win))
        return points[0], points[1]

    upper = _live_cash_points(s, ratios, 2 * cube)
    points = []
    for k in (0, 1):
        redouble_pass = s.of_player(k, -2 * cube)
        double_pass = s.of_player(k, cube)
        take_win = won(k, 2 * cube)
        points.append(1.0 - upper[1 - k] * (double_pass - take_win) / (redouble_pass - take_win))
    return points[0], points[1]


def live_cash_points(
    probs: Sequence[float], ci: CubeInfo, met: MatchEquityTable | None = None
) -> tuple[float, float]:
    """Live-cube cash points at the current cube and score: (player on roll, opponent), each as his own
    winning chance. The other player's take point is one minus a player's cash point."""
    p = check_probs(probs)
    return _live_cash_points(_Score.of(ci, met), _gammon_ratios(p), ci.cube)


def _match_cubeful(p: Probs, s: _Score, x: float) -> float:
    """Cubeful MWC of the player on roll (gnubg Cl2CfMatch)."""
    ci = s.ci
    dead = s.cubeless(p)
    if not ci.cube_alive:
        return dead
    ratios = _gammon_ratios(p)
    (g0, bg0), (g1, bg1) = ratios
    c = s.cube
    w = p.win
    cash, opp_cash = s.mine(c), s.mine(-c)
    cp_me, cp_opp = _live_cash_points(s, ratios, c)
    opp_too_good = 1.0 - cp_opp  # below this win chance the opponent would cash (if he could double)
    too_good = cp_me

    lose_all = (1.0 - g1 - bg1) * s.mine(-c) + g1 * s.mine(-2 * c) + bg1 * s.mine(-3 * c)
    win_all = (1.0 - g0 - bg0) * s.mine(c) + g0 * s.mine(2 * c) + bg0 * s.mine(3 * c)

    def up_to(point: float, value: float) -> float:  # straight from (0, lose_all) to (point, value)
        return lose_all + (value - lose_all) * w / point if point > 0.0 else lose_all

    def on_from(point: float, value: float) -> float:  # straight from (point, value) to (1, win_all)
        return value + (win_all - value) * (w - point) / (1.0 - point) if point < 1.0 else win_all

    if ci.centred:
        if w <= opp_too_good:
            live = up_to(opp_too_good, opp_cash)
        elif w < too_good:
            live = opp_cash + (cash - opp_cash) * (w - opp_too_good) / (too_good - opp_too_good)
        else:
            live = on_from(too_good, cash)
    elif ci.owner == ci.on_roll:  # no opponent's cash: one corner at my cash point
        live = up_to(too_good, cash) if w <= too_good else on_from(too_good, cash)
    else:  # the opponent owns the cube: one corner at his cash point
        live = up_to(opp_too_good, opp_cash) if w <= opp_too_good else on_from(opp_too_good, opp_cash)
    return dead * (1.0 - x) + live * x


# -- public cubeful API --------------------------------------------------------------------------------------


def _check_x(x: float) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise InvalidCubeError(f"cube efficiency {x!r} is not a number") from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidCubeError(f"cube efficiency {x!r} is not in 0..1")
    return value


def cubeful_mwc(probs: Sequence[float], ci: CubeInfo, x: float, met: MatchEquityTable | None = None) -> float:
    """Cubeful MWC of the player on roll if he does not double now (match play)."""
    p = check_probs(probs)
    return _match_cubeful(p, _Score.of(ci, met), _check_x(x))


def cubeful_equity(
    probs: Sequence[float], ci: CubeInfo, x: float, met: MatchEquityTable | None = None
) -> float:
    """Normalised cubeful equity of the player on roll if he does not double now."""
    p = check_probs(probs)
    x = _check_x(x)
    if ci.is_money:
        return _money_cubeful(p, ci, x)
    s = _Score.of(ci, met)
    return s.to_eq(_match_cubeful(p, s, x))


def cube_decision(
    probs: Sequence[float], ci: CubeInfo, x: float, met: MatchEquityTable | None = None
) -> CubeDecision:
    """The doubling decision of the player on roll, and the answer the opponent should give (gnubg 0-ply).

    Equities are normalised to the current cube from the doubler's side: no double, double/take (the cube
    doubled and owned by the taker) and double/pass (+1). The decision follows gnubg FindBestCubeDecision.
    """
    p = check_probs(probs)
    x = _check_x(x)
    taken = ci.doubled()
    if ci.is_money:
        nd = _money_cubeful(p, ci, x)
        dt = 2.0 * _money_cubeful(p, taken, x)
        dp = 1.0
    else:
        s = _Score.of(ci, met)
        nd = s.to_eq(_match_cubeful(p, s, x))
        dt = s.to_eq(_match_cubeful(p, _Score(taken, s.met), x))
        dp = s.to_eq(s.mine(ci.cube))
    return decide(p, ci, nd, dt, dp)


def decide(probs: Sequence[float], ci: CubeInfo, nd: float, dt: float, dp: float) -> CubeDecision:
    """gnubg's verdict (FindBestCubeDecision) from the three normalised equities of the doubler, however they
    were found: the 0-ply model above, or the n-ply cubeful search (engine.search)."""
    kind, optimal = _classify(check_probs(probs), ci, nd, dt, dp)
    return CubeDecision(kind, nd, dt, dp, optimal)


def _classify(p: Probs, ci: CubeInfo, nd: float, dt: float, dp: float) -> tuple[CubeDecisionKind, float]:
    centred = ci.centred
    if not ci.cube_available:
        if not ci.is_money and ci.owner in (CENTRED, ci.on_roll):
            return (_K.NODOUBLE_DEADCUBE if centred else _K.NO_REDOUBLE_DEADCUBE), nd
        return _K.NOT_AVAILABLE, nd
    can_gammon = p.win_gammon > 0.0
    beaver = ci.is_money and ci.beavers and -2.0 <= dt <= 0.0
    if dt >= nd and dp >= nd:
        if dp > dt:  # double, take
            optional = abs(dt - nd) <= OPTIONAL_EPSILON
            if beaver:
                if 2.0 * dt < nd:  # after the beaver the doubler would be worse off than not doubling
                    return _K.NODOUBLE_BEAVER, nd
                return (_K.OPTIONAL_DOUBLE_BEAVER if optional else _K.DOUBLE_BEAVER), dt
            if optional:
                return (_K.OPTIONAL_DOUBLE_TAKE if centred else _K.OPTIONAL_REDOUBLE_TAKE), dt
            return (_K.DOUBLE_TAKE if centred else _K.REDOUBLE_TAKE), dt
        # double, pass; optional when playing on is worth the cash and gammons can still come
        if abs(nd - dp) <= OPTIONAL_EPSILON and can_gammon and not (ci.is_money and centred and ci.jacoby):
            return (_K.OPTIONAL_DOUBLE_PASS if centred else _K.OPTIONAL_REDOUBLE_PASS), dp
        return (_K.DOUBLE_PASS if centred else _K.REDOUBLE_PASS), dp
    if nd > dt:
        if dt > dp:  # too good, pass
            if can_gammon:
                return (_K.TOOGOOD_PASS if centred else _K.TOOGOODRE_PASS), nd
            return (_K.DOUBLE_PASS if centred else _K.REDOUBLE_PASS), nd
        if nd > dp:  # too good, take
            if can_gammon:
                return (_K.TOOGOOD_TAKE if centred else _K.TOOGOODRE_TAKE), nd
            return (_K.NODOUBLE_TAKE if centred else _K.NO_REDOUBLE_TAKE), nd
        if beaver:
            return (_K.NODOUBLE_BEAVER if centred else _K.NO_REDOUBLE_BEAVER), nd
        return (_K.NODOUBLE_TAKE if centred else _K.NO_REDOUBLE_TAKE), nd
    # dt >= nd > dp: too good, pass
    if can_gammon:
        return (_K.TOOGOOD_PASS if centred else _K.TOOGOODRE_PASS), nd
    return (_K.DOUBLE_PASS if centred else _K.REDOUBLE_PASS), nd


def take_decision(
    probs: Sequence[float], ci: CubeInfo, x: float, met: MatchEquityTable | None = None
) -> TakerAction:
    """The answer to a double by the player on roll (``probs`` and ``ci`` are the doubler's, before it)."""
    decision = cube_decision(probs, ci, x, met)
    if decision.taker_action == TakerAction.BEAVER:
        return TakerAction.BEAVER
    return TakerAction.PASS if decision.double_take >= decision.double_pass else TakerAction.TAKE


# -- resignations --------------------------------------------------------------------------------------------


def _resign_values(
    probs: Sequence[float], ci: CubeInfo, x: float, resigner: int | None, met: MatchEquityTable | None
) -> tuple[float, dict[ResignLevel, float], int]:
    """Playing on, and each resignation, as normalised equity of the player on roll; and the resigner's side
    (+1: the player on roll resigns, -1: his opponent does)."""
    if resigner is None:
        resigner = ci.on_roll
    if resigner not in (0, 1):
        raise InvalidCubeError(f"resigning player {resigner!r} is not 0 or 1")
    side = 1 if resigner == ci.on_roll else -1
    play_on = cube_decision(probs, ci, x, met).optimal
    values: dict[ResignLevel, float] = {}
    if ci.is_money:
        jacoby = ci.jacoby and ci.centred  # gammons do not count until the cube is turned
        for level in ResignLevel:
            values[level] = -side * (1.0 if jacoby else float(level))
    else:
        s = _Score.of(ci, met)
        for level in ResignLevel:
            values[level] = s.to_eq(s.mine(-side * int(level) * ci.cube))
    return play_on, values, side


def _check_level(level: int) -> ResignLevel:
    try:
        return ResignLevel(level)
    except ValueError:
        raise InvalidCubeError(
            f"resignation level {level!r} is not 1 (single), 2 (gammon) or 3 (backgammon)"
        ) from None


def accept_resignation(
    level: int,
    probs: Sequence[float],
    ci: CubeInfo,
    x: float,
    *,
    resigner: int | None = None,
    tolerance: float = 1e-6,
    met: MatchEquityTable | None = None,
) -> bool:
    """Should the opponent of ``resigner`` (default: the player on roll resigns) accept ``level``?

    Yes when what the resignation gives him is at least his cubeful equity of playing on (less ``tolerance``).
    ``probs`` and ``ci`` describe the position with ``ci.on_roll`` to play, before any roll.
    """
    lvl = _check_level(level)
    play_on, values, side = _resign_values(probs, ci, x, resigner, met)
    # The acceptor's value is -side times the on-roll player's normalised equity (same scale, opposite sign).
    return -side * values[lvl] >= -side * play_on - tolerance


def resign_decision(
    probs: Sequence[float],
    ci: CubeInfo,
    x: float,
    *,
    resigner: int | None = None,
    tolerance: float = 1e-6,
    met: MatchEquityTable | None = None,
) -> ResignLevel | None:
    """The resignation ``resigner`` (default: the player on roll) should offer, or None.

    The lowest level the opponent should accept, offered only when playing on is not better for the
    resigner (within ``tolerance``): in practice when the game can no longer be won and the gammons left
    are certain.
    """
    play_on, values, side = _resign_values(probs, ci, x, resigner, met)
    for level in ResignLevel:
        if -side * values[level] >= -side * play_on - tolerance:  # the opponent would accept this one
            return level if side * values[level] >= side * play_on - tolerance else None
    return None
