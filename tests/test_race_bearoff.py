"""bench.race_bearoff: the pure pieces (position generators, breakdown masks, error statistics)."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from bench.levels import BenchOptionError
from bench.race_bearoff import (
    ErrorStats,
    error_report,
    groups,
    random_home_side,
    random_positions,
    selfplay_positions,
)
from engine.bearoff import BearoffDatabase
from engine.moves import legal_plays
from engine.position import Position

PAD = (0,) * 19


@pytest.fixture(scope="module")
def db() -> BearoffDatabase:
    return BearoffDatabase.load()


def side(*home: int) -> tuple[int, ...]:
    return tuple(home) + PAD


def test_random_home_side_spreads_uniformly() -> None:
    import random

    rng = random.Random(3)
    for chequers in (1, 7, 15):
        s = random_home_side(rng, chequers)
        assert len(s) == 6 and sum(s) == chequers and min(s) >= 0
    # Two chequers have 21 spreads over 6 points, each equally likely.
    seen = Counter(random_home_side(rng, 2) for _ in range(4200))
    assert len(seen) == 21 and min(seen.values()) > 120 and max(seen.values()) < 290
    for bad in (0, 16):
        with pytest.raises(BenchOptionError):
            random_home_side(rng, bad)


def test_random_positions_are_bearoff_positions(db: BearoffDatabase) -> None:
    positions = random_positions(2000, seed=5)
    assert all(db.applies(p) for p in positions)
    counts = {sum(p.me) for p in positions} | {sum(p.opp) for p in positions}
    assert counts == set(range(1, 16))
    assert positions == random_positions(2000, seed=5) and positions != random_positions(2000, seed=6)


def test_selfplay_positions_keeps_only_database_positions(db: BearoffDatabase) -> None:
    class FirstPlay:  # stands in for the analyser's search: the first legal play, ranked as rank ranks
        def rank(self, pos, dice, plies, move_filter, equity=None, perturb=None):  # type: ignore[no-untyped-def]
            return [SimpleNamespace(play=p) for p in legal_plays(pos, dice)]

    class Analyser:
        search = FirstPlay()

    positions, games = selfplay_positions(40, 2, Analyser(), db)
    assert len(positions) == 40 and games >= 1
    assert all(db.applies(p) for p in positions)


def test_groups_split_two_sided_and_gammon_ranges() -> None:
    positions = [
        Position(side(1, 1, 1, 1, 1, 1), side(0, 0, 0, 0, 0, 6)),  # 6 v 6: two-sided, no gammon
        Position(side(3, 3, 3, 2, 2, 2), side(0, 0, 1, 0, 0, 0)),  # 15 v 1: one-sided, gammon possible
        Position(side(0, 0, 0, 0, 0, 7), side(2, 0, 0, 0, 0, 0)),  # 7 v 2: one-sided, no gammon
    ]
    masks = groups(positions)
    assert masks["two_sided"].tolist() == [True, False, False]
    assert masks["one_sided_only"].tolist() == [False, True, True]
    assert masks["gammon_possible"].tolist() == [False, True, False]
    assert masks["no_gammon"].tolist() == [True, False, True]
    assert masks["all"].all()


def test_error_stats_on_a_hand_made_case() -> None:
    exact = np.array([[0.5, 0.1, 0.0, 0.2, 0.0], [0.9, 0.0, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0, 0.3, 0.0]])
    net = np.array([[0.52, 0.1, 0.0, 0.1, 0.0], [0.8, 0.04, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0, 0.3, 0.0]])
    s = ErrorStats.of(net, exact)
    assert s.n == 3
    assert s.mae_win == pytest.approx(0.04)
    assert s.max_win == pytest.approx(0.1)
    assert s.bias_win == pytest.approx((0.02 - 0.1) / 3)
    assert s.mae_win_gammon == pytest.approx(0.04 / 3)
    assert s.mae_lose_gammon == pytest.approx(0.1 / 3)
    assert ErrorStats.of(net[:0], exact[:0]) == ErrorStats(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    with pytest.raises(BenchOptionError):
        ErrorStats.of(net[:, :4], exact[:, :4])
    assert eval(repr(s)) == s


def test_error_report_groups_the_errors() -> None:
    positions = [
        Position(side(1, 0, 0, 0, 0, 0), side(1, 0, 0, 0, 0, 0)),
        Position(side(3, 3, 3, 2, 2, 2), side(0, 0, 1, 0, 0, 0)),
    ]
    exact = np.array([[1.0, 0, 0, 0, 0], [0.1, 0, 0, 0.5, 0]])
    net = np.array([[0.9, 0, 0, 0, 0], [0.1, 0, 0, 0.45, 0]])
    report = error_report(positions, net, exact)
    assert report["two_sided"].mae_win == pytest.approx(0.1) and report["two_sided"].n == 1
    assert report["one_sided_only"].mae_win == 0.0
    assert report["gammon_possible"].mae_lose_gammon == pytest.approx(0.05)
    assert report["all"].mae_win == pytest.approx(0.05)
