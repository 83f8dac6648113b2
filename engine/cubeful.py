"""Cubeful values of many positions at once: the search's side of the cube model.

``engine.cube`` computes gnubg's 0-ply cube model for one position; the n-ply search needs the same numbers for
thousands of leaves per decision, so this module computes them over a batch of probability rows with numpy,
and keeps the bookkeeping of gnubg's cubeful recursion (eval.c EvaluatePositionCubeful4):

* a node carries a list of cube states for its player on roll; each state is *expanded* into itself (no
  double) and, where that player may double, the doubled state (the cube turned and taken);
* values travel in the unit the recursion sums: money equity normalised to the state's own cube, or the
  match winning chance (MWC) of the player on roll;
* ``collapse`` then gives each state its value after the player's best cube action: double when both double/take
  and double/pass are at least no double, the opponent answering with the smaller (gnubg GetECF3).

The single-position functions of ``engine.cube`` stay the reference; the tests hold both to 1e-12.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.cube import (
    BEAROFF_X,
    CONTACT_X,
    RACE_X_MAX,
    RACE_X_MIN,
    RACE_X_OFFSET,
    RACE_X_SLOPE,
    CubeInfo,
    _live_cash_points,
    _Score,
)
from engine.evaluator import LOSE_BG, LOSE_G, WIN, WIN_BG, WIN_G, route
from engine.met import MatchEquityTable

_DEAD_EPSILON = 1e-7  # as engine.cube: a win chance this close to 0 or 1 leaves the cube dead
_PIPS = np.arange(1, 26, dtype=np.int32)

# Two-sided bearoff table columns (engine.bearoff.two_sided): P(win), then money equities with the cube
# centred, owned by the roller, owned by the opponent.
TS_WIN, TS_CENTRED, TS_OWNED, TS_OPPONENT = range(4)


def efficiencies(boards: np.ndarray) -> np.ndarray:
    """gnubg's cube efficiency x of (n, 2, 25) boards, player on roll first (``cube.cube_efficiency``)."""
    over, home, contact, _ = route(boards)
    pips = boards[:, 0, :].astype(np.int32) @ _PIPS
    x = np.clip(RACE_X_OFFSET + RACE_X_SLOPE * pips, RACE_X_MIN, RACE_X_MAX)
    x[home] = BEAROFF_X
    x[contact] = CONTACT_X  # crashed positions use the same 0.68
    x[over] = 0.0
    return x


def _columns(probs: np.ndarray) -> tuple[np.ndarray, ...]:
    p = np.asarray(probs, dtype=np.float64)
    return p[:, WIN], p[:, WIN_G], p[:, WIN_BG], p[:, LOSE_G], p[:, LOSE_BG]


def money_values(probs: np.ndarray, x: np.ndarray, ci: CubeInfo) -> np.ndarray:
    """Janowski's money equity of not doubling now, per unit of ``ci.cube`` (``cube.cubeful_equity``)."""
    w, wg, wbg, lg, lbg = _columns(probs)
    jacoby = ci.jacoby and ci.centred
    dead = 2.0 * w - 1.0 + (0.0 if jacoby else wg - lg + wbg - lbg)
    with np.errstate(divide="ignore", invalid="ignore"):
        wv = np.where(w > 0.0, 1.0 + (wg + wbg) / w, 1.0)
        lv = np.where(w < 1.0, 1.0 + (lg + lbg) / (1.0 - w), 1.0)
        tp = (lv - 0.5) / (wv + lv + 0.5)  # take point
        cp = (lv + 1.0) / (wv + lv + 0.5)  # cash point
        from_zero_to_tp = -lv + (lv - 1.0) * w / tp
        from_cp_to_one = 1.0 + (wv - 1.0) * (w - cp) / (1.0 - cp)
        if ci.centred:
            live = np.where(
                w < tp,
                -1.0 if jacoby else from_zero_to_tp,
                np.where(w < cp, -1.0 + 2.0 * (w - tp) / (cp - tp), 1.0 if jacoby else from_cp_to_one),
            )
        elif ci.owner == ci.on_roll:
            live = np.where(w < cp, -lv + (1.0 + lv) * w / cp, from_cp_to_one)
        else:
            live = np.where(w < tp, from_zero_to_tp, -1.0 + (wv + 1.0) * (w - tp) / (1.0 - tp))
    out = dead * (1.0 - x) + live * x
    return np.where((w <= _DEAD_EPSILON) | (w >= 1.0 - _DEAD_EPSILON), dead, out)


def cubeless_mwc(probs: np.ndarray, ci: CubeInfo, met: MatchEquityTable) -> np.ndarray:
    """MWC of the player on roll with the cube frozen where it is (``cube.cubeless_mwc``)."""
    s = _Score(ci, met)
    w, wg, wbg, lg, lbg = _columns(probs)
    c = ci.cube
    return (
        (w - wg) * s.mine(c)
        + (wg - wbg) * s.mine(2 * c)
        + wbg * s.mine(3 * c)
        + (1.0 - w - lg) * s.mine(-c)
        + (lg - lbg) * s.mine(-2 * c)
        + lbg * s.mine(-3 * c)
    )


def match_values(probs: np.ndarray, x: np.ndarray, ci: CubeInfo, met: MatchEquityTable) -> np.ndarray:
    """Cubeful MWC of not doubling now: gnubg's Cl2CfMatch, as ``cube.cubeful_mwc`` for one position."""
    dead = cubeless_mwc(probs, ci, met)
    if not ci.cube_alive:
        return dead
    s = _Score(ci, met)
    w, wg, wbg, lg, lbg = _columns(probs)
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.where(w > 0.0, (wg - wbg) / w, 0.0)
        bg0 = np.where(w > 0.0, wbg / w, 0.0)
        g1 = np.where(w < 1.0, (lg - lbg) / (1.0 - w), 0.0)
        bg1 = np.where(w < 1.0, lbg / (1.0 - w), 0.0)
        c = s.cube
        cash, opp_cash = s.mine(c), s.mine(-c)
        # engine.cube's recursion over cube levels only does arithmetic on the ratios: arrays go through.
        too_good, cp_opp = _live_cash_points(s, ((g0, bg0), (g1, bg1)), c)  # type: ignore[arg-type]
        opp_too_good = 1.0 - cp_opp
        lose_all = (1.0 - g1 - bg1) * s.mine(-c) + g1 * s.mine(-2 * c) + bg1 * s.mine(-3 * c)
        win_all = (1.0 - g0 - bg0) * s.mine(c) + g0 * s.mine(2 * c) + bg0 * s.mine(3 * c)

        def up_to(point: np.ndarray, value: float) -> np.ndarray:
            return np.where(point > 0.0, lose_all + (value - lose_all) * w / point, lose_all)

        def on_from(point: np.ndarray, value: float) -> np.ndarray:
            return np.where(point < 1.0, value + (win_all - value) * (w - point) / (1.0 - point), win_all)

        if ci.centred:
            middle = opp_cash + (cash - opp_cash) * (w - opp_too_good) / (too_good - opp_too_good)
            live = np.where(
                w <= opp_too_good,
                up_to(opp_too_good, opp_cash),
                np.where(w < too_good, middle, on_from(too_good, cash)),
            )
        elif ci.owner == ci.on_roll:
            live = np.where(w <= too_good, up_to(too_good, cash), on_from(too_good, cash))
        else:
            live = np.where(w <= opp_too_good, up_to(opp_too_good, opp_cash), on_from(opp_too_good, opp_cash))
    return dead * (1.0 - x) + live * x


def leaf_values(
    probs: np.ndarray,
    x: np.ndarray,
    ci: CubeInfo,
    met: MatchEquityTable,
    two_sided: np.ndarray | None = None,
) -> np.ndarray:
    """0-ply value of not doubling now in state ``ci`` (money per unit cube, or MWC).

    ``two_sided``: rows of the exact two-sided bearoff table (NaN where it does not apply). Money play takes
    their exact cubeful equities. Match play has none, so, as gnubg does, the exact money equities give the
    position's cube efficiency (where Janowski's money formula would meet them) for the match formula.
    """
    rows = ~np.isnan(two_sided[:, 0]) if two_sided is not None else np.zeros(len(probs), dtype=bool)
    column = TS_CENTRED if ci.centred else TS_OWNED if ci.owner == ci.on_roll else TS_OPPONENT
    if ci.is_money:
        out = money_values(probs, x, ci)
        if rows.any():
            assert two_sided is not None
            out[rows] = two_sided[rows, column]
        return out
    if rows.any():
        assert two_sided is not None
        x = np.array(x, dtype=np.float64)
        money = CubeInfo.money(1, ci.owner, ci.on_roll, jacoby=False)
        p = probs[rows]
        cubeless = 2.0 * p[:, WIN] - 1.0  # no gammons in a two-sided bearoff
        live = money_values(p, np.ones(len(p)), money)
        exact = two_sided[rows, column]
        with np.errstate(divide="ignore", invalid="ignore"):
            guess = (exact - cubeless) / (live - cubeless)
        # gnubg keeps the guess within 0..the usual efficiency; a flat formula keeps the usual one.
        guess = np.where(np.abs(live - cubeless) > 1e-4, guess, x[rows])
        x[rows] = np.clip(guess, 0.0, x[rows])
    return match_values(probs, x, ci, met)


def expand(states: Sequence[CubeInfo | None], top: bool) -> list[CubeInfo | None]:
    """Each state, then the doubled state where its player on roll may double (None otherwise; never at the
    top of a cube decision, whose doubled state the caller lists itself): gnubg MakeCubePos."""
    out: list[CubeInfo | None] = []
    for ci in states:
        out.append(ci)
        out.append(ci.doubled() if ci is not None and not top and ci.cube_available else None)
    return out


def double_pass_value(ci: CubeInfo, met: MatchEquityTable) -> float:
    """What the doubler gets when the double is passed: one cube (money), or the MWC after winning it."""
    if ci.is_money:
        return 1.0
    return _Score(ci, met).mine(ci.cube)


def collapse(values: np.ndarray, states: Sequence[CubeInfo | None], met: MatchEquityTable) -> np.ndarray:
    """(n, 2k) values of the expanded states -> (n, k): each state after its player's best cube action."""
    n = values.shape[0]
    out = np.full((n, len(states)), np.nan)
    for i, ci in enumerate(states):
        if ci is None:
            continue
        no_double = values[:, 2 * i]
        doubled = values[:, 2 * i + 1]
        if np.isnan(doubled).all():
            out[:, i] = no_double
            continue
        take = 2.0 * doubled if ci.is_money else doubled
        cash = double_pass_value(ci, met)
        doubles = (take >= no_double) & (cash >= no_double)
        out[:, i] = np.where(doubles, np.minimum(take, cash), no_double)
    return out


def flip(values: np.ndarray, states: Sequence[CubeInfo | None]) -> np.ndarray:
    """The other player's values of the same states: minus the equity, or one minus the MWC."""
    out = np.array(values, dtype=np.float64)
    for i, ci in enumerate(states):
        if ci is not None:
            out[:, i] = -out[:, i] if ci.is_money else 1.0 - out[:, i]
    return out


def to_equity(values: np.ndarray, ci: CubeInfo, met: MatchEquityTable) -> np.ndarray:
    """Normalised equity of the player on roll in ``ci`` (money: as is; match: MWC as NEMG)."""
    if ci.is_money:
        return np.asarray(values, dtype=np.float64)
    return _Score(ci, met).to_eq(np.asarray(values, dtype=np.float64))  # type: ignore[arg-type]
