"""Cube theory: Janowski's cubeful equities, cube decisions and resignations, checked against gnubg's manual
and against gnubg 1.07's 0-ply cube decisions (tests/data/gnubg_cube.jsonl, built by bench/cube_gnubg.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cube import (
    CubeDecision,
    CubeDecisionKind,
    CubeInfo,
    DoublerAction,
    InvalidCubeError,
    ResignLevel,
    TakerAction,
    accept_resignation,
    average_win_loss,
    cube_decision,
    cube_efficiency,
    cubeful_equity,
    cubeful_mwc,
    cubeless_equity,
    cubeless_mwc,
    live_cash_points,
    money_equity,
    money_live_equity,
    resign_decision,
    take_decision,
)
from engine.ids import MatchKey
from engine.met import InvalidProbabilitiesError, InvalidScoreError, MatchEquityTable
from engine.position import Position

DATA = Path(__file__).parent / "data"
MANUAL_PROBS = (0.454, 0.103, 0.001, 0.106, 0.003)  # gnubg manual, "Cubeful example 1"
CONTACT_X = 0.68


# -- the manual's worked numbers -----------------------------------------------------------------------------


def test_average_win_and_loss() -> None:
    w_value, l_value = average_win_loss(MANUAL_PROBS)
    assert round(w_value, 3) == 1.229
    # The manual prints L = (0.556 + 0.106 + 0.003) / 0.556 = 1.196, but P(lose) is 1 - 0.454 = 0.546:
    assert round(l_value, 4) == 1.1996
    assert round((0.556 + 0.106 + 0.003) / 0.556, 3) == 1.196
    assert average_win_loss((0.7, 0.0, 0.0, 0.0, 0.0)) == (1.0, 1.0)  # gammon-free: W = L = 1
    assert average_win_loss((1.0, 0.2, 0.0, 0.0, 0.0)) == (1.2, 1.0)  # no losses: L stays 1


def test_manual_money_example() -> None:
    # "the cubeless equity is -0.097 and the live cube equity ... -0.157. Thus, the cubeful equity is -0.138"
    # (the manual's W = 1.229, L = 1.196, x = 0.68).
    assert money_equity(MANUAL_PROBS) == pytest.approx(-0.097)
    live = money_live_equity(0.454, 1.229, 1.196)
    assert round(live, 3) == -0.157
    assert round(0.32 * -0.097 + 0.68 * live, 3) == -0.138
    # With the correct L the cubeful equity is -0.140.
    ci = CubeInfo.money(jacoby=False)
    assert cubeful_equity(MANUAL_PROBS, ci, CONTACT_X) == pytest.approx(-0.1398, abs=1e-4)
    assert cubeful_equity(MANUAL_PROBS, ci, 0.0) == pytest.approx(-0.097)


def test_money_live_equity_corners() -> None:
    w_value, l_value = 1.2, 1.1
    take_point = (l_value - 0.5) / (w_value + l_value + 0.5)
    cash_point = (l_value + 1.0) / (w_value + l_value + 0.5)
    assert money_live_equity(0.0, w_value, l_value) == pytest.approx(-l_value)
    assert money_live_equity(take_point, w_value, l_value) == pytest.approx(-1.0)
    assert money_live_equity(cash_point, w_value, l_value) == pytest.approx(1.0)
    assert money_live_equity(1.0, w_value, l_value) == pytest.approx(w_value)
    assert money_live_equity(cash_point, w_value, l_value, "mine") == pytest.approx(1.0)
    assert money_live_equity(take_point, w_value, l_value, "theirs") == pytest.approx(-1.0)
    assert money_live_equity(0.95, w_value, l_value, jacoby=True) == 1.0  # centred cube, no gammons
    # Gammon-free: the classic 20% take point and 80% cash point.
    assert money_live_equity(0.2, 1.0, 1.0) == pytest.approx(-1.0)
    assert money_live_equity(0.8, 1.0, 1.0) == pytest.approx(1.0)
    with pytest.raises(InvalidCubeError):
        money_live_equity(0.5, 1.0, 1.0, "nobody")  # type: ignore[arg-type]


def test_manual_match_example_with_woolsey_table() -> None:
    # gnubg manual, "Live cube equities": 3-0 to 7, Woolsey's MET, the position above seen by Black (on roll,
    # 0 points). Live take points: cube 4: Black 0%, White 41%; cube 2: 15%, 38.5%; cube 1: 24.5%, 27.3%.
    woolsey = MatchEquityTable.from_gnubg_xml((DATA / "met_woolsey.xml").read_text(encoding="utf-8"))
    expected = {4: (0.0, 0.41), 2: (0.15, 0.385), 1: (0.245, 0.273)}
    for cube, (black_tp, white_tp) in expected.items():
        ci = CubeInfo(cube, -1, 0, 7, (0, 3))
        cp_black, cp_white = live_cash_points(MANUAL_PROBS, ci, woolsey)
        assert 1.0 - cp_white == pytest.approx(black_tp, abs=5e-4)
        assert 1.0 - cp_black == pytest.approx(white_tp, abs=5e-4)
    # "the cubeless MWC is 29.1% ... the live cube MWC to be 29.2%. Using x=0.68 ... a cubeful MWC of 29.17%."
    ci = CubeInfo(1, -1, 0, 7, (0, 3))
    assert round(cubeless_mwc(MANUAL_PROBS, ci, woolsey), 3) == 0.291
    assert round(cubeful_mwc(MANUAL_PROBS, ci, 1.0, woolsey), 3) == 0.292
    assert round(cubeful_mwc(MANUAL_PROBS, ci, CONTACT_X, woolsey), 4) == 0.2917


# -- cube efficiency -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("points", "x"),
    [
        ({7: 5}, 0.6),  # race, 35 pips: below 40 the floor 0.6
        ({8: 5}, 0.6),  # 40 pips
        ({10: 8}, 0.65),  # 80 pips: 0.55 + 0.00125 * 80
        ({12: 5, 8: 5}, 0.675),  # 100 pips
        ({12: 10}, 0.7),  # 120 pips
        ({20: 7}, 0.7),  # 140 pips: capped
        ({6: 7, 5: 3}, 0.6),  # one-sided bearoff
        ({1: 2}, 0.6),  # two-sided bearoff (gnubg would use its exact database)
    ],
)
def test_race_and_bearoff_efficiency(points: dict[int, int], x: float) -> None:
    pos = Position.from_points({**points, 24: -5})
    assert cube_efficiency(pos) == pytest.approx(x)


def test_contact_crashed_and_over_efficiency() -> None:
    assert cube_efficiency(Position.initial()) == 0.68
    crashed = Position.from_id("BycCRg/9HwgQCA")
    assert crashed.classify().name == "CRASHED"
    assert cube_efficiency(crashed) == 0.68
    assert cube_efficiency(Position([0] * 25, [0] * 5 + [3] + [0] * 19)) == 0.0


# -- CubeInfo ------------------------------------------------------------------------------------------------


def test_cubeinfo_value_type() -> None:
    ci = CubeInfo(2, 1, 0, 7, (3, 5), jacoby=False, beavers=False)
    assert eval(repr(ci)) == ci
    assert ci.away == (4, 2)
    assert ci.doubled() == CubeInfo(4, 1, 0, 7, (3, 5), jacoby=False, beavers=False)
    assert ci.swapped().on_roll == 1
    assert hash(ci) == hash(eval(repr(ci)))
    key = MatchKey.decode("cAkAAAAAAAAA")
    assert CubeInfo.from_match_key(key) == CubeInfo.money(on_roll=key.move, jacoby=key.jacoby)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"cube": 3}, InvalidCubeError),
        ({"cube": 0}, InvalidCubeError),
        ({"owner": 2}, InvalidCubeError),
        ({"on_roll": -1}, InvalidCubeError),
        ({"match_length": 31}, InvalidScoreError),
        ({"match_length": -1}, InvalidScoreError),
        ({"match_length": 5, "score": (5, 0)}, InvalidScoreError),
        ({"match_length": 5, "score": (1,)}, InvalidScoreError),
        ({"match_length": 5, "score": 3}, InvalidScoreError),
        ({"crawford": True}, InvalidScoreError),
        ({"match_length": 5, "score": (2, 2), "crawford": True}, InvalidScoreError),
        ({"match_length": 5, "score": (4, 4), "crawford": True}, InvalidScoreError),
    ],
)
def test_cubeinfo_rejects_impossible_states(kwargs: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        CubeInfo(**kwargs)


def test_cube_availability() -> None:
    assert CubeInfo.money().cube_available
    assert CubeInfo.money(2, 0, 0).cube_available
    assert not CubeInfo.money(2, 1, 0).cube_available
    assert not CubeInfo(1, -1, 0, 5, (4, 2), crawford=True).cube_available  # Crawford game
    assert not CubeInfo(1, -1, 0, 5, (4, 2)).cube_available  # post-Crawford leader
    assert CubeInfo(1, -1, 1, 5, (4, 2)).cube_available  # post-Crawford trailer
    assert not CubeInfo(2, 0, 0, 5, (3, 0)).cube_available  # I am 2-away: the 2-cube gives me the match
    assert CubeInfo(1, -1, 0, 5, (3, 3)).cube_available and not CubeInfo(1, -1, 0, 5, (3, 3)).cube_alive


# -- cube decisions ------------------------------------------------------------------------------------------


def test_money_opening_like_gnubg() -> None:
    # gnubg 1.07 0-ply, opening position, money, Jacoby on: no double 0.0844, double/take -0.1911.
    probs = (
        0.521513819694519,
        0.1539212316274643,
        0.007563344202935696,
        0.12984727323055267,
        0.007545731496065855,
    )
    d = cube_decision(probs, CubeInfo.money(beavers=False), CONTACT_X)
    assert d.kind == CubeDecisionKind.NODOUBLE_TAKE
    assert d.no_double == pytest.approx(0.08437647670507431, abs=1e-6)
    assert d.double_take == pytest.approx(-0.1911320686340332, abs=1e-6)
    assert d.double_pass == 1.0 and d.optimal == d.no_double
    assert not d.should_double and d.taker_action == TakerAction.TAKE
    assert cube_decision(probs, CubeInfo.money(), CONTACT_X).kind == CubeDecisionKind.NODOUBLE_BEAVER
    # Without Jacoby gammons count while the cube is centred too (gnubg: 0.0921).
    assert cubeful_equity(probs, CubeInfo.money(jacoby=False), CONTACT_X) == pytest.approx(
        0.09208578, abs=1e-6
    )
    rebuilt = eval(repr(d))
    assert isinstance(rebuilt, CubeDecision) and rebuilt == d


def test_too_good_and_jacoby() -> None:
    probs = (0.85, 0.5, 0.02, 0.01, 0.0)
    d = cube_decision(probs, CubeInfo.money(jacoby=False), CONTACT_X)
    assert d.kind == CubeDecisionKind.TOOGOOD_PASS and d.action == DoublerAction.TOO_GOOD
    assert d.optimal == d.no_double > 1.0
    # Under Jacoby a centred cube wins no gammons: cash.
    d = cube_decision(probs, CubeInfo.money(jacoby=True), CONTACT_X)
    assert d.kind == CubeDecisionKind.DOUBLE_PASS and d.should_double and d.optimal == 1.0
    d = cube_decision(probs, CubeInfo.money(2, 0, 0), CONTACT_X)
    assert d.kind == CubeDecisionKind.TOOGOODRE_PASS
    # No gammons left: never too good, just double.
    assert cube_decision((0.9, 0, 0, 0, 0), CubeInfo.money(), 0.7).kind == CubeDecisionKind.DOUBLE_PASS


def test_double_take_and_take_decision() -> None:
    probs = (0.72, 0.05, 0.0, 0.02, 0.0)
    d = cube_decision(probs, CubeInfo.money(), 0.7)
    assert d.kind == CubeDecisionKind.DOUBLE_TAKE
    assert d.no_double < d.double_take < d.double_pass and d.optimal == d.double_take
    assert take_decision(probs, CubeInfo.money(), 0.7) == TakerAction.TAKE
    assert take_decision((0.85, 0.05, 0.0, 0.02, 0.0), CubeInfo.money(), 0.7) == TakerAction.PASS
    assert cube_decision(probs, CubeInfo.money(2, 0, 0), 0.7).kind == CubeDecisionKind.REDOUBLE_TAKE
    opp_owns = cube_decision(probs, CubeInfo.money(2, 1, 0), 0.7)
    assert opp_owns.kind == CubeDecisionKind.NOT_AVAILABLE and opp_owns.action == DoublerAction.UNAVAILABLE


def test_crawford_game_has_no_cube() -> None:
    ci = CubeInfo(1, -1, 0, 5, (4, 1), crawford=True)
    probs = (0.7, 0.2, 0.0, 0.1, 0.0)
    d = cube_decision(probs, ci, CONTACT_X)
    assert d.kind == CubeDecisionKind.NODOUBLE_DEADCUBE and not d.should_double
    assert d.optimal == d.no_double == pytest.approx(cubeless_equity(probs, ci))
    assert cubeful_mwc(probs, ci, CONTACT_X) == pytest.approx(cubeless_mwc(probs, ci))


def test_post_crawford_trailer_doubles_and_leader_drops_free() -> None:
    probs_for = {p: (p, 0.1 * p, 0.0, 0.1 * (1 - p), 0.0) for p in (0.3, 0.45, 0.55, 0.7)}
    for trailer_away in (3, 5):  # odd away: the trailer doubles at once, and it is a take
        ci = CubeInfo(1, -1, 1, 7, (6, 7 - trailer_away))
        for probs in probs_for.values():
            assert cube_decision(probs, ci, CONTACT_X).kind == CubeDecisionKind.DOUBLE_TAKE
    ci = CubeInfo(1, -1, 1, 7, (6, 5))  # trailer 2-away: the leader's free drop
    assert cube_decision(probs_for[0.45], ci, CONTACT_X).kind == CubeDecisionKind.DOUBLE_TAKE
    assert cube_decision(probs_for[0.55], ci, CONTACT_X).kind == CubeDecisionKind.DOUBLE_PASS
    # The leader never doubles after Crawford.
    leader = CubeInfo(1, -1, 0, 7, (6, 2))
    assert cube_decision(probs_for[0.7], leader, CONTACT_X).kind == CubeDecisionKind.NODOUBLE_DEADCUBE


def test_match_equities_are_normalised() -> None:
    ci = CubeInfo(1, -1, 0, 7, (2, 4))
    probs = (0.6, 0.18, 0.01, 0.1, 0.005)
    d = cube_decision(probs, ci, CONTACT_X)
    assert d.double_pass == pytest.approx(1.0)
    assert cubeful_equity(probs, ci, CONTACT_X) == pytest.approx(d.no_double)
    # x = 0 is the dead cube: cubeful = cubeless.
    assert cubeful_equity(probs, ci, 0.0) == pytest.approx(cubeless_equity(probs, ci))
    with pytest.raises(InvalidScoreError):
        cubeless_mwc(probs, CubeInfo.money())


@pytest.mark.parametrize("x", [-0.1, 1.5, float("nan"), "high"])
def test_bad_efficiency(x: object) -> None:
    with pytest.raises(InvalidCubeError):
        cube_decision((0.5, 0.1, 0, 0.1, 0), CubeInfo.money(), x)  # type: ignore[arg-type]


def test_bad_probabilities() -> None:
    with pytest.raises(InvalidProbabilitiesError):
        cube_decision((0.5, 0.6, 0, 0.1, 0), CubeInfo.money(), 0.68)


# -- agreement with gnubg ------------------------------------------------------------------------------------


def _vectors() -> list[dict]:
    return [json.loads(line) for line in (DATA / "gnubg_cube.jsonl").read_text().splitlines() if line]


def test_agrees_with_gnubg_0ply() -> None:
    vectors = _vectors()
    assert len(vectors) >= 200
    decisions = set()
    borderline = 0
    for vec in vectors:
        ci = CubeInfo(**vec["cubeinfo"])
        gci = vec["gnubg_cubeinfo"]  # gnubg read the same cube state from the ID
        assert (gci["cube"], gci["cubeowner"], gci["move"], gci["matchto"]) == (
            ci.cube,
            ci.owner,
            ci.on_roll,
            ci.match_length,
        )
        x = cube_efficiency(Position.from_id(vec["gnubgid"].split(":")[0]))
        d = cube_decision(vec["probs"], ci, x)
        eq = vec["equity"]
        context = f"{vec['gnubgid']} {ci!r}"
        assert d.no_double == pytest.approx(eq["no_double"], abs=1e-3), context
        assert d.double_take == pytest.approx(eq["double_take"], abs=1e-3), context
        assert d.double_pass == pytest.approx(eq["double_pass"], abs=1e-3), context
        assert d.optimal == pytest.approx(eq["optimal"], abs=1e-3), context
        assert cubeless_equity(vec["probs"], ci) == pytest.approx(vec["cubeless_equity"], abs=1e-4), context
        decisions.add(vec["decision_code"])
        if int(d.kind) != vec["decision_code"]:
            nd, dt, dp = eq["no_double"], eq["double_take"], eq["double_pass"]
            assert min(abs(nd - dt), abs(nd - dp), abs(dt - dp), abs(dt)) < 1e-3, context
            borderline += 1
    assert borderline <= 3
    assert len(decisions) >= 10  # the file exercises most of gnubg's verdicts


# -- resignations --------------------------------------------------------------------------------------------

LOST_GAMMON = (0.0, 0.0, 0.0, 1.0, 0.0)
LOST_SINGLE = (0.0, 0.0, 0.0, 0.0, 0.0)
LOST_BACKGAMMON = (0.0, 0.0, 0.0, 1.0, 1.0)
GAMMON_OR_SINGLE = (0.0, 0.0, 0.0, 0.5, 0.0)


def test_resign_the_lowest_level_that_loses_nothing() -> None:
    money = CubeInfo.money(jacoby=False)
    assert resign_decision(LOST_SINGLE, money, 0.6) == ResignLevel.SINGLE
    assert resign_decision(LOST_GAMMON, money, 0.6) == ResignLevel.GAMMON
    assert resign_decision(LOST_BACKGAMMON, money, 0.6) == ResignLevel.BACKGAMMON
    assert resign_decision(GAMMON_OR_SINGLE, money, 0.6) is None  # the gammon may still be saved
    assert resign_decision((0.01, 0.0, 0.0, 0.0, 0.0), money, 0.6) is None  # still a chance to win
    # Jacoby with a centred cube: gammons do not count, a single resignation is enough.
    assert resign_decision(LOST_GAMMON, CubeInfo.money(jacoby=True), 0.6) == ResignLevel.SINGLE
    assert resign_decision(LOST_GAMMON, CubeInfo.money(2, 1, 0, jacoby=True), 0.6) == ResignLevel.GAMMON
    # Match play: the opponent 1-away takes the match with any win, so a single is enough.
    assert resign_decision(LOST_BACKGAMMON, CubeInfo(1, -1, 0, 7, (2, 6)), 0.6) == ResignLevel.SINGLE
    assert resign_decision(LOST_GAMMON, CubeInfo(1, -1, 0, 7, (2, 2)), 0.6) == ResignLevel.GAMMON


def test_accept_when_the_offer_covers_playing_on() -> None:
    money = CubeInfo.money(jacoby=False)
    # The player on roll resigns; his opponent would win 1.5 points on average by playing on.
    assert not accept_resignation(1, GAMMON_OR_SINGLE, money, 0.6)
    assert accept_resignation(2, GAMMON_OR_SINGLE, money, 0.6)
    assert accept_resignation(ResignLevel.BACKGAMMON, GAMMON_OR_SINGLE, money, 0.6)
    # A resigner with real chances: any offer is welcome.
    assert accept_resignation(1, (0.3, 0.05, 0.0, 0.1, 0.0), money, 0.68)
    # The opponent of the player on roll resigns: the player on roll judges with his own probabilities.
    winner = (1.0, 1.0, 0.0, 0.0, 0.0)
    assert not accept_resignation(1, winner, money, 0.6, resigner=1)
    assert accept_resignation(2, winner, money, 0.6, resigner=1)
    assert resign_decision(winner, money, 0.6, resigner=1) == ResignLevel.GAMMON
    with pytest.raises(InvalidCubeError):
        accept_resignation(4, winner, money, 0.6)
    with pytest.raises(InvalidCubeError):
        resign_decision(winner, money, 0.6, resigner=2)
