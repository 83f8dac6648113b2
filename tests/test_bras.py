"""BRAS: the seed's documented properties, hand-computed features, monotonicity, the calibration."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench._positions import random_cases
from engine import bras
from engine.bras import LOSE_BG, LOSE_G, WIN, WIN_BG, WIN_G
from engine.errors import InvalidPositionError
from engine.position import BAR, Position

PIP, BAR_F, OFF, HB, PRIME, ANCH, BLOT, STACK, OUT, X1, X2 = range(11)


def mixed_positions(n: int, seed: int) -> list[Position]:
    """Every kind of bench._positions: contact, race, bearoff, bar, closed board, random play."""
    return [pos for _, pos, _ in random_cases(n, seed)]


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal board: 0-15 chequers a side anywhere (bar included), never two sides on one point."""
    me = [0] * 25
    for _ in range(draw(st.integers(0, 15))):
        me[draw(st.integers(0, 24))] += 1
    free = [j for j in range(25) if j == BAR or not me[23 - j]]
    opp = [0] * 25
    for _ in range(draw(st.integers(0, 15))):
        opp[draw(st.sampled_from(free))] += 1
    return Position(me, opp)


# -- the seed's transform and its documented properties ------------------------------------------------------


def test_worked_example_transform() -> None:
    # The seed's worked figure: D = -0.1265 gives S_me = 47.893 (and S_op = 52.107) through sigma = 3.
    s = float(bras.score_from_d(-0.1265))
    assert round(s, 3) == 47.893
    assert round(100.0 - s, 3) == 52.107
    assert bras.score_from_d(0.0) == 50.0
    assert bras.SIGMA == 3.0


def test_opening_scores_exactly_50() -> None:
    start = Position.initial()
    assert np.all(bras.bras_features([start]) == 0.0)
    assert bras.bras_score([start])[0] == 50.0


def test_antisymmetry_over_1000_random_positions() -> None:
    ps = mixed_positions(1000, seed=41)
    swapped = [p.swap() for p in ps]
    s = bras.bras_score(ps)
    s_swapped = bras.bras_score(swapped[::-1])[::-1]  # in another order, so batch layout cannot hide anything
    assert np.abs(s + s_swapped - 100.0).max() < 1e-12
    assert np.array_equal(bras.bras_features(ps), -bras.bras_features(swapped))
    assert s.std() > 10.0  # the scores really spread: the property is not met by a constant


@settings(max_examples=300, deadline=None)
@given(positions())
def test_features_and_score_in_range(pos: Position) -> None:
    f = bras.bras_features([pos])
    assert f.shape == (1, bras.N_FEATURES)
    assert np.all(f >= -1.0) and np.all(f <= 1.0)
    s = bras.bras_score([pos])[0]
    assert 0.0 <= s <= 100.0
    assert abs(s + bras.bras_score([pos.swap()])[0] - 100.0) < 1e-12


def test_every_feature_varies() -> None:
    f = bras.bras_features(mixed_positions(1200, seed=5))
    assert np.all(np.abs(f).max(axis=0) > 0.4), np.abs(f).max(axis=0)
    assert np.all((f != 0.0).mean(axis=0) > 0.05), (f != 0.0).mean(axis=0)


# -- hand-computed feature vectors ---------------------------------------------------------------------------


def test_feature_vector_of_a_middle_game() -> None:
    # Me: 4 on 6, 3 on 8, 5 on 13, 2 on 22 (an anchor), a blot on 24. Them (in my numbering): 5 on 19,
    # 3 on 17, 5 on 12, 2 on 1. Pips 181 against 167.
    pos = Position.from_points({6: 4, 8: 3, 13: 5, 22: 2, 24: 1, 19: -5, 17: -3, 12: -5, 1: -2})
    assert pos.pips() == (181, 167)
    expected = np.zeros(11)
    expected[PIP] = math.tanh(bras.K_PIP * (167 - 181) / (181 + 167))
    expected[BLOT] = -1 / 3  # my blot on 24 has their 19 five pips behind it: a direct shot
    expected[STACK] = (4 - 3) / 12  # they have 2 + 2 spare chequers over 3, I have 1 + 2
    expected[X2] = -(1 / 3) * (1 / 6)  # that blot against their one home point
    # Equal: no bar, none off, one home point each, no runs longer than one, anchored back chequers on both
    # sides, one outfield point each, and single-point "primes" that each hold 15 chequers behind them.
    np.testing.assert_allclose(bras.bras_features([pos])[0], expected, atol=1e-15)
    d = float(expected @ bras.WEIGHTS)
    assert bras.bras_score([pos])[0] == pytest.approx(50 + 50 * math.tanh(d / 3), abs=1e-12)


def test_feature_vector_on_the_bar_against_a_closed_board() -> None:
    # Me: 2 on the bar, 5 on 6, 3 on 8, 5 on 13. Them: their whole home board (my 19-24) with 2 each,
    # and 3 on my 12.
    pos = Position.from_points(
        {6: 5, 8: 3, 13: 5, 12: -3, 19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2}, bar=(2, 0)
    )
    assert pos.pips() == (169, 81)
    expected = np.zeros(11)
    expected[PIP] = math.tanh(bras.K_PIP * (81 - 169) / (169 + 81))
    expected[BAR_F] = -(2 / 3) * (1 + 6) / 7
    expected[HB] = (1 - 6) / 6
    expected[PRIME] = (1 - 6) / 6
    expected[ANCH] = -2 / 3  # my two back chequers (on the bar) have no anchor
    expected[STACK] = -(2 + 2) / 12
    expected[OUT] = 1 / 3  # my 8 point; their 13 is not in their outfield
    # Their 6-prime holds my 2 bar chequers: 1 * 2/4; my 13 point holds their 3 on my 12: 1/6 * 3/4.
    expected[X1] = (1 / 6) * (3 / 4) - 1.0 * (2 / 4)
    np.testing.assert_allclose(bras.bras_features([pos])[0], expected, atol=1e-15)
    assert bras.bras_score([pos])[0] < 10.0


@pytest.mark.parametrize(
    ("distance", "exposure"), [(1, 1.0), (6, 1.0), (7, 0.5), (12, 0.5), (13, 0.0), (20, 0.0)]
)
def test_blot_exposure_by_distance(distance: int, exposure: float) -> None:
    # Their two chequers on my 2 point (their 23: no home board), my blot `distance` pips in front of them.
    pos = Position.from_points({1: 14, 2: -2, 2 + distance: 1})
    f = bras.bras_features([pos])[0]
    assert f[BLOT] == pytest.approx(-exposure / 3)
    assert f[X2] == 0.0  # they have no home board to be hit into


@pytest.mark.parametrize(("point", "exposure"), [(6, 1.0), (7, 0.5), (12, 0.5), (13, 0.0)])
def test_the_bar_shoots_from_point_0(point: int, exposure: float) -> None:
    pos = Position.from_points({1: 14, point: 1}, bar=(0, 1))
    assert bras.bras_features([pos])[0][BLOT] == pytest.approx(-exposure / 3)


def test_outfield_is_points_7_to_12() -> None:
    pos = Position.from_points({1: 9, 7: 2, 12: 2, 13: 2, 24: -15})
    assert bras.bras_features([pos])[0][OUT] == pytest.approx(2 / 3)
    stacked = Position.from_points({7: 3, 8: 3, 9: 3, 10: 3, 11: 3, 24: -15})  # five outfield points count 3
    assert bras.bras_features([stacked])[0][OUT] == pytest.approx(1.0)


# -- monotonicity: each change leaves every other feature alone or moves it the same way ---------------------


def _scored_pairs(pairs: list[tuple[Position, Position]]) -> tuple[np.ndarray, np.ndarray]:
    assert len(pairs) > 100, "too few cases to mean anything"
    before = bras.bras_score([a for a, _ in pairs])
    after = bras.bras_score([b for _, b in pairs])
    return before, after


def _moved(side: tuple[int, ...], src: int, dst: int | None) -> list[int]:
    out = list(side)
    out[src] -= 1
    if dst is not None:
        out[dst] += 1
    return out


def _has_blots(side: tuple[int, ...]) -> bool:
    return 1 in side[:24]


POOL = mixed_positions(600, seed=7)


def test_one_more_chequer_off_never_lowers_s() -> None:
    # Bear off one chequer from a home point that holds 3 or more.
    pairs = [(p, Position(_moved(p.me, i, None), p.opp)) for p in POOL for i in range(6) if p.me[i] >= 3]
    before, after = _scored_pairs(pairs)
    assert np.all(after > before)


def test_fewer_pips_never_lowers_s() -> None:
    # Move a chequer from a point with 3 or more down to a point holding exactly 2: no point, blot, stack or
    # shot changes (both points stay occupied), only fewer pips and perhaps one more chequer home.
    pairs = [
        (p, Position(_moved(p.me, i, j), p.opp))
        for p in POOL
        for i in range(24)
        if p.me[i] >= 3
        for j in range(i)
        if p.me[j] == 2
    ]
    before, after = _scored_pairs(pairs)
    assert np.all(after > before)


def test_fewer_blots_never_lowers_s() -> None:
    # Safe a blot onto a lower point holding exactly 2, against an opponent with no blots (a blot that leaves
    # its point gives up the shots it had at theirs, which can matter).
    pairs = [
        (p, Position(_moved(p.me, i, j), p.opp))
        for p in POOL
        if not _has_blots(p.opp)
        for i in range(24)
        if p.me[i] == 1
        for j in range(i)
        if p.me[j] == 2
    ]
    before, after = _scored_pairs(pairs)
    assert np.all(after >= before)
    assert np.mean(after > before) > 0.9


def test_entering_from_the_bar_never_lowers_s() -> None:
    # A chequer from the bar onto one of my points 19-24 that holds exactly 2, while another stays on the
    # bar or the opponent has no blots (a bar left empty gives up its shots at their home board).
    pool = [pos for _, pos, _ in random_cases(2000, seed=8, kinds=("bar",))]
    pairs = [
        (p, Position(_moved(p.me, BAR, j), p.opp))
        for p in pool
        if p.me[BAR] >= 2 or (p.me[BAR] and not _has_blots(p.opp))
        for j in range(18, 24)
        if p.me[j] == 2
    ]
    before, after = _scored_pairs(pairs)
    assert np.all(after > before)


def test_opponent_on_the_bar_never_lowers_s() -> None:
    # One of their chequers from a point they hold with exactly 3 to their bar, while I have no blots.
    pairs = [
        (p, Position(p.me, _moved(p.opp, j, BAR)))
        for p in POOL
        if not _has_blots(p.me)
        for j in range(24)
        if p.opp[j] == 3
    ]
    before, after = _scored_pairs(pairs)
    assert np.all(after > before)


# -- batches, inputs and errors ------------------------------------------------------------------------------


def test_array_input_and_batch_independence() -> None:
    ps = mixed_positions(300, seed=9)
    whole = bras.bras_score(ps)
    assert np.array_equal(whole, bras.bras_score(bras.positions_to_array(ps)))
    one_by_one = np.array([bras.bras_score([p])[0] for p in ps[:50]])
    np.testing.assert_allclose(one_by_one, whole[:50], rtol=0, atol=1e-12)


def test_positions_to_array_layout() -> None:
    p = Position.from_points({6: 2, 19: -1}, bar=(1, 2))
    arr = bras.positions_to_array([p, p.swap()])
    assert arr.shape == (2, 2, 25)
    assert tuple(arr[0, 0]) == p.me and tuple(arr[0, 1]) == p.opp
    assert tuple(arr[1, 0]) == p.opp and tuple(arr[1, 1]) == p.me
    assert bras.positions_to_array([]).shape == (0, 2, 25)
    assert bras.bras_score([]).shape == (0,)
    assert bras.bras_features([]).shape == (0, bras.N_FEATURES)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([Position.initial(), "4HPwATDgc/ABMA"], "item 1 is a str"),
        ([None], "item 0 is a NoneType"),
        (Position.initial(), "not one Position"),
        (np.zeros((3, 25)), r"shape \(n, 2, 25\)"),
        (np.full((1, 2, 25), -1), "negative count"),
        (np.zeros((1, 2, 25)), "integer counts"),
        (np.full((1, 2, 25), 1), "25 chequers on a side"),
    ],
)
def test_bad_input_raises_a_typed_error(bad: object, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        bras.bras_score(bad)  # type: ignore[arg-type]


def test_bad_weights_raise_value_error() -> None:
    with pytest.raises(ValueError, match="weights must have shape"):
        bras.bras_d([Position.initial()], weights=np.ones(3))


def test_weights_are_documented_and_non_negative() -> None:
    assert bras.FEATURE_NAMES == (
        "pip", "bar", "off", "hb", "prime", "anch", "blot", "stack", "out", "x1", "x2",
    )  # fmt: skip
    assert bras.WEIGHTS.shape == (11,)
    assert np.all(bras.WEIGHTS >= bras.W_FLOOR)
    for name in bras.FEATURE_NAMES:
        assert f"\n{name} " in bras.__doc__  # each feature has a line in the module's feature table


# -- explanation ---------------------------------------------------------------------------------------------


def test_explain_adds_up() -> None:
    pos = random.Random(3).choice(mixed_positions(50, seed=3))
    info = bras.explain(pos)
    assert list(info["features"]) == list(bras.FEATURE_NAMES)
    total = sum(item["contribution"] for item in info["features"].values())
    assert info["d"] == pytest.approx(total, abs=1e-12)
    assert info["d"] == pytest.approx(bras.bras_d([pos])[0], abs=1e-12)
    assert info["score"] == pytest.approx(bras.bras_score([pos])[0], abs=1e-12)
    for name, item in info["features"].items():
        assert item["contribution"] == pytest.approx(item["value"] * item["weight"]), name
    opening = bras.explain(Position.initial())
    assert opening["score"] == 50.0
    assert all(math.copysign(1.0, item["value"]) == 1.0 for item in opening["features"].values())  # no -0.0
    with pytest.raises(InvalidPositionError):
        bras.explain("4HPwATDgc/ABMA")  # type: ignore[arg-type]


# -- the 5-output calibration --------------------------------------------------------------------------------


def test_probs_are_consistent_and_follow_s() -> None:
    ps = mixed_positions(600, seed=11)
    probs = bras.bras_probs(ps)
    assert probs.shape == (600, 5)
    assert np.all(probs >= 0.0) and np.all(probs <= 1.0)
    assert np.all(probs[:, WIN_G] <= probs[:, WIN]) and np.all(probs[:, WIN_BG] <= probs[:, WIN_G])
    assert np.all(probs[:, LOSE_G] <= 1.0 - probs[:, WIN]) and np.all(probs[:, LOSE_BG] <= probs[:, LOSE_G])
    s = bras.bras_score(ps)
    order = np.argsort(s)
    assert np.all(np.diff(probs[order, WIN]) >= 0.0)  # p(win) is a monotone function of S
    # No gammon for a side once the loser has borne a chequer off.
    opp_off = np.array([p.off[1] > 0 for p in ps])
    assert opp_off.any() and np.all(probs[opp_off, WIN_G] == 0.0)
    assert np.array_equal(bras.BrasEvaluator().evaluate(ps), probs)


def test_probs_at_the_opening_include_the_tempo() -> None:
    p = bras.bras_probs([Position.initial()])[0]
    assert p[WIN] == pytest.approx(1 / (1 + math.exp(-bras.P_TEMPO)))
    assert 0.5 < p[WIN] < 0.6
    assert p[WIN_G] / p[WIN] == pytest.approx(p[LOSE_G] / (1 - p[WIN]))  # the same heuristic for both sides
    equity = 2 * p[WIN] - 1 + p[WIN_G] - p[LOSE_G] + p[WIN_BG] - p[LOSE_BG]
    assert 0.0 < equity < 0.2  # the side on roll is a little ahead


def test_finished_games_are_scored_exactly() -> None:
    empty = [0] * 25
    gammon_with_bg = [0] * 25
    gammon_with_bg[20] = 15  # all 15 on their own 21 point: in my home board
    single = [0] * 25
    single[3] = 10  # five off
    rows = bras.bras_probs(
        [Position(empty, gammon_with_bg), Position(empty, single), Position(single, empty)]
    )
    np.testing.assert_array_equal(rows[0], [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(rows[1], [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(rows[2], [0, 0, 0, 0, 0])
    assert rows[:, LOSE_BG].sum() == 0.0
