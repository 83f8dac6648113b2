"""The vectorised cube model and gnubg's n-ply cubeful recursion (engine.cubeful, Search.cubeful).

engine.cube's one-position functions are the reference: the batch versions must agree to 1e-12, and a 1-ply
cubeful value must equal a plain loop over the rolls written here with those functions.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

from engine import cube as C
from engine import cubeful as cf
from engine.analyser import Analyser
from engine.bearoff import BearoffDatabase
from engine.encoding import positions_to_array
from engine.evaluator import invert
from engine.met import MatchEquityTable
from engine.moves import ROLLS, legal_plays, roll_children
from engine.position import Position
from engine.search import Search, first_best
from tests.test_search import PipEvaluator
from tests.test_search import _sample_positions as sample_positions

MET = MatchEquityTable.load()


def random_probs(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 1.0, n)
    w[:4] = (0.0, 1.0, 0.5, 0.999)  # dead cubes and the middle
    wg = w * rng.uniform(0.0, 0.5, n)
    lg = (1.0 - w) * rng.uniform(0.0, 0.5, n)
    return np.stack([w, wg, wg * rng.uniform(0, 0.2, n), lg, lg * rng.uniform(0, 0.2, n)], axis=1)


def cube_states() -> list[C.CubeInfo]:
    states = [
        C.CubeInfo.money(cube, owner, 0, jacoby=jacoby)
        for cube, owner, jacoby in itertools.product((1, 2, 4), (-1, 0, 1), (True, False))
    ]
    for length in (3, 5, 7, 11):
        for a, b, cube, owner, crawford in itertools.product(
            range(length), range(length), (1, 2, 4), (-1, 0, 1), (False, True)
        ):
            with contextlib.suppress(ValueError):  # impossible states (Crawford without a 1-away player ...)
                states.append(C.CubeInfo(cube, owner, 0, length, (a, b), crawford))
    return states


# -- the batch cube model against engine.cube ----------------------------------------------------------------


def test_batch_values_equal_the_one_position_model() -> None:
    probs = random_probs(120, 1)
    x = np.random.default_rng(2).uniform(0.5, 0.75, len(probs))
    states = cube_states()
    assert len(states) > 1000
    for ci in states[::3]:
        if ci.is_money:
            got = cf.money_values(probs, x, ci)
            ref = [C.cubeful_equity(p, ci, e, MET) for p, e in zip(probs, x, strict=True)]
        else:
            got = cf.match_values(probs, x, ci, MET)
            ref = [C.cubeful_mwc(p, ci, e, MET) for p, e in zip(probs, x, strict=True)]
        assert np.abs(got - np.array(ref)).max() < 1e-12, ci
    # and the comparison has teeth: another efficiency gives other numbers
    ci = C.CubeInfo.money()
    assert np.abs(cf.money_values(probs, x + 0.01, ci) - cf.money_values(probs, x, ci)).max() > 1e-4


def test_batch_cubeless_mwc_and_efficiency() -> None:
    probs = random_probs(50, 3)
    ci = C.CubeInfo(2, 1, 0, 7, (3, 4))
    ref = [C.cubeless_mwc(p, ci, MET) for p in probs]
    assert np.allclose(cf.cubeless_mwc(probs, ci, MET), ref, atol=1e-12)
    positions = [*sample_positions(400, 4), Position.from_points({1: 2, 2: 1, 24: -3})]
    got = cf.efficiencies(positions_to_array(positions))
    assert np.array_equal(got, [C.cube_efficiency(p) for p in positions])
    assert {0.68, 0.6}.issubset(set(got.tolist()))


def test_collapse_takes_the_best_cube_action() -> None:
    ci = C.CubeInfo.money()
    states = cf.expand([ci], top=False)
    assert states == [ci, ci.doubled()]
    values = np.array(
        [
            [0.50, 0.30],  # double/take 0.60 beats no double 0.50, the taker prefers taking: 0.60
            [0.50, 0.70],  # double/take 1.40: the taker passes, 1.00
            [1.20, 0.70],  # too good: keep the 1.20
            [0.50, 0.20],  # double/take 0.40 < 0.50: no double
        ]
    )
    assert np.allclose(cf.collapse(values, [ci], MET)[:, 0], [0.60, 1.00, 1.20, 0.50])
    # a player who cannot double keeps his no-double value; at the top the caller lists the doubled state
    theirs = C.CubeInfo.money(2, 1, 0)
    assert cf.expand([theirs], top=False) == [theirs, None]
    assert cf.expand([ci], top=True) == [ci, None]


# -- the recursion -------------------------------------------------------------------------------------------


def reference_node(ev: PipEvaluator, pos: Position, ci: C.CubeInfo, plies: int) -> float:
    """The value of ``ci`` for the player on roll after his best cube action, plies 0 or 1, one position
    at a time with engine.cube: the recursion of Search.cubeful written out plainly. Money values are equities
    per unit cube, match values the player's MWC."""

    def no_double(probs: np.ndarray, state: C.CubeInfo, x: float) -> float:
        if state.is_money:
            return C.cubeful_equity(probs, state, x, MET)
        return C.cubeful_mwc(probs, state, x, MET)

    def best_action(state: C.CubeInfo, nd: float, taken: float) -> float:
        take = 2.0 * taken if state.is_money else taken
        cash = 1.0 if state.is_money else MET.mwc_after(*_away(state), state.cube)
        return min(take, cash) if take >= nd and cash >= nd else nd

    def leaf(p: Position, state: C.CubeInfo) -> float:
        probs = ev.evaluate([p])[0]
        x = C.cube_efficiency(p)
        nd = no_double(probs, state, x)
        if not state.cube_available:
            return nd
        return best_action(state, nd, no_double(probs, state.doubled(), x))

    if plies == 0 or pos.is_over():
        return leaf(pos, ci)
    reply = ci.swapped()

    def no_cube_action(state: C.CubeInfo) -> float:
        total = 0.0
        for dice, weight in ROLLS:
            kids = [play.position.swap() for play in legal_plays(pos, dice)]
            best = min(kids, key=lambda k: leaf(k, reply))  # first of equals, as the search
            theirs = leaf(best, state.swapped())
            total += weight / 36.0 * (-theirs if state.is_money else 1.0 - theirs)
        return total

    nd = no_cube_action(ci)
    if not ci.cube_available:
        return nd
    return best_action(ci, nd, no_cube_action(ci.doubled()))


def _away(state: C.CubeInfo) -> tuple[int, int]:
    """(player on roll, opponent) points to go."""
    a, b = state.away
    return (a, b) if state.on_roll == 0 else (b, a)


@pytest.mark.parametrize(
    "ci",
    [
        C.CubeInfo.money(),
        C.CubeInfo.money(2, 0, 0),
        C.CubeInfo.money(2, 1, 0),
        C.CubeInfo.money(jacoby=False),
        C.CubeInfo(1, -1, 0, 7, (2, 4)),
        C.CubeInfo(2, 0, 0, 7, (5, 3)),
        C.CubeInfo(1, -1, 0, 5, (2, 4)),  # post-Crawford, the trailer on roll
        C.CubeInfo(1, -1, 0, 5, (4, 2), crawford=True),
    ],
)
def test_one_ply_cubeful_equals_the_plain_recursion(ci: C.CubeInfo) -> None:
    ev = PipEvaluator()
    search = Search(ev)
    positions = [
        Position.from_points({6: 3, 5: 3, 4: 2, 20: 1, 19: -4, 18: -3, 3: -2}),
        Position.from_points({8: 2, 6: 4, 3: 2, 1: 1, 22: -3, 21: -2, 17: -3}),
    ]
    _, values = search.cubeful(positions_to_array(positions), [ci], 1, ci)
    for pos, got in zip(positions, values[:, 0], strict=True):
        assert got == pytest.approx(reference_node(ev, pos, ci, 1), abs=1e-12)
    # top: no double folded in for the root player
    _, top = search.cubeful(positions_to_array(positions), [ci], 1, ci, top=True)
    assert np.all(top[:, 0] <= values[:, 0] + 1e-12)


def test_zero_ply_evaluation_is_the_one_position_cube_model() -> None:
    analyser = Analyser(PipEvaluator(), name="pips")
    states = [
        C.CubeInfo.money(),
        C.CubeInfo.money(2, 0, 0),
        C.CubeInfo(1, -1, 0, 7, (2, 4)),
        C.CubeInfo(2, 1, 0, 5, (1, 0)),
    ]
    for i, pos in enumerate(sample_positions(80, 6)):
        ci = states[i % len(states)]
        got = analyser.evaluate(pos, ci, 0)
        probs = PipEvaluator().evaluate([pos])[0]
        x = C.cube_efficiency(pos)
        assert got.cubeful == pytest.approx(C.cubeful_equity(probs, ci, x, MET), abs=1e-12)
        if ci.cube_available:
            ref = C.cube_decision(probs, ci, x, MET)
            assert got.decision is not None and got.decision.kind == ref.kind
            assert got.decision.double_take == pytest.approx(ref.double_take, abs=1e-12)


def test_two_sided_bearoffs_use_the_exact_cubeful_equities() -> None:
    db = BearoffDatabase.load()
    analyser = Analyser(PipEvaluator(), bearoff=db, name="pips")
    pos = Position.from_points({1: 2, 2: 1, 4: 1, 24: -2, 22: -1})  # 4 chequers against 3, all home
    exact = db.cubeful_equities(pos)
    ci = C.CubeInfo.money()
    ev = analyser.evaluate(pos, ci, 2)  # exact positions are not searched
    assert ev.cubeful == pytest.approx(exact.centred, abs=1e-6)
    assert ev.decision is not None
    assert ev.decision.double_take == pytest.approx(exact.double_take, abs=1e-6)
    owned = analyser.evaluate(pos, C.CubeInfo.money(2, 0, 0), 0)
    assert owned.cubeful == pytest.approx(exact.owned, abs=1e-6)
    # match play keeps the MET model, with the efficiency read off the exact money equities
    match = analyser.evaluate(pos, C.CubeInfo(1, -1, 0, 7, (0, 0)), 0)
    assert -1.0 <= match.cubeful <= 1.0


@pytest.mark.parametrize(
    "ci",
    [
        C.CubeInfo(1, -1, 0, 7, (0, 0)),
        C.CubeInfo(2, 1, 0, 7, (5, 3)),
        C.CubeInfo(1, -1, 0, 5, (4, 2), crawford=True),
        C.CubeInfo(1, -1, 0, 5, (2, 4)),  # post-Crawford, the trailer may double
    ],
)
def test_match_play_two_ply_is_sane(ci: C.CubeInfo) -> None:
    analyser = Analyser(PipEvaluator(), name="pips")
    pos = Position.from_points({6: 4, 5: 3, 4: 3, 3: 2, 24: -4, 23: -4, 22: -3})
    ev = analyser.evaluate(pos, ci, 2)
    assert np.isfinite(ev.cubeful) and -1.5 <= ev.cubeful <= 3.0
    assert (ev.decision is None) == (not ci.cube_available)
    ranked = analyser.hint(pos, (6, 5), ci, plies=1)
    assert ranked[0].plies == 1 and all(np.isfinite(r.equity) for r in ranked)


# -- the children of every roll --------------------------------------------------------------------------------


def test_roll_children_are_the_legal_plays_of_every_roll() -> None:
    positions = sample_positions(60, 7)
    kids, counts = roll_children(positions_to_array(positions))
    assert counts.shape == (60, 21) and counts.min() >= 1 and len(kids) == counts.sum()
    i = 0
    for pos, row in zip(positions, counts, strict=True):
        for (dice, _), n in zip(ROLLS, row, strict=True):
            plays = legal_plays(pos, dice)
            assert n == len(plays)
            expected = positions_to_array([p.position.swap() for p in plays])
            assert np.array_equal(kids[i : i + n], expected)
            i += n


def test_roll_children_rejects_impossible_boards() -> None:
    from engine.errors import InvalidPositionError

    bad = np.zeros((1, 2, 25), dtype=np.uint8)
    bad[0, 0, 5] = 16
    with pytest.raises(InvalidPositionError):
        roll_children(bad)
    with pytest.raises(InvalidPositionError):
        roll_children(np.zeros((2, 25)))


def test_first_best_picks_the_first_maximum_of_each_run() -> None:
    values = np.array([0.1, 0.3, 0.3, -1.0, 5.0, 2.0, 2.0, 0.0])
    assert list(first_best(values, np.array([3, 1, 1, 3]))) == [1, 3, 4, 5]


def test_first_best_gives_equal_values_to_the_larger_secondary() -> None:
    values = np.array([0.1, 0.3, 0.3, -1.0, 5.0, 2.0, 2.0, 0.0])
    second = np.array([9.0, 0.1, 0.2, 0.0, 0.0, 0.5, 0.5, 9.0])
    assert list(first_best(values, np.array([3, 1, 1, 3]), second)) == [2, 3, 4, 5]


def test_evaluate_boards_and_positions_agree() -> None:
    analyser = Analyser.default()
    positions = sample_positions(50, 8)
    a = analyser.search.evaluate(positions, 1)
    b = analyser.search.evaluate_boards(positions_to_array(positions, np.uint8), 1)
    assert np.array_equal(a, b)
    assert np.allclose(invert(invert(a)), a)


def reference_value(
    ev: PipEvaluator, pos: Position, state: C.CubeInfo, mover: C.CubeInfo, plies: int, memo: dict
) -> float:
    """``reference_node`` to any depth, one position at a time: the value of ``state`` for the player on roll
    after his best cube action, his moves chosen for the cube state ``mover`` (each roll's move minimises the
    opponent's 0-ply value after his cube action), the children's values averaged over the rolls."""
    key = (pos.position_id, state, mover, plies)
    if key in memo:
        return memo[key]
    if plies == 0 or pos.is_over():
        memo[key] = reference_node(ev, pos, state, 0)
        return memo[key]
    reply = mover.swapped()
    chosen = []
    for dice, weight in ROLLS:
        kids = [play.position.swap() for play in legal_plays(pos, dice)]
        values = [reference_value(ev, k, reply, reply, 0, memo) for k in kids]
        chosen.append((kids[int(np.argmin(values))], weight))  # the first of equals, as the search

    def no_cube_action(s: C.CubeInfo) -> float:
        total = 0.0
        for kid, weight in chosen:
            theirs = reference_value(ev, kid, s.swapped(), reply, plies - 1, memo)
            total += weight / 36.0 * (-theirs if s.is_money else 1.0 - theirs)
        return total

    nd = no_cube_action(state)
    if state.cube_available:
        take = 2.0 * no_cube_action(state.doubled()) if state.is_money else no_cube_action(state.doubled())
        cash = 1.0 if state.is_money else MET.mwc_after(*_away(state), state.cube)
        if take >= nd and cash >= nd:
            nd = min(take, cash)
    memo[key] = nd
    return nd


@pytest.mark.parametrize(
    "ci", [C.CubeInfo.money(), C.CubeInfo.money(2, 1, 0), C.CubeInfo(1, -1, 0, 5, (2, 3))]
)
def test_three_ply_cubeful_equals_the_plain_recursion(ci: C.CubeInfo) -> None:
    # A short race (two chequers against two): small enough to recurse one position at a time, with
    # transpositions (41 and 32 both moving one chequer 5) that the search evaluates once.
    ev = PipEvaluator()
    pos = Position.from_points({9: 1, 4: 1, 21: -1, 17: -1})
    _, values = Search(ev).cubeful(positions_to_array([pos]), [ci], 3, ci)
    assert values[0, 0] == pytest.approx(reference_value(ev, pos, ci, ci, 3, {}), abs=1e-12)
