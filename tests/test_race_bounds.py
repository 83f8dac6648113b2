"""What races make certain: the bounds hold for every dice sequence, and settled outputs are exact."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.analyser import Analyser
from engine.bearoff import BearoffDatabase
from engine.bearoff.ranking import rank
from engine.evaluator import money_equity
from engine.moves import ROLLS, legal_plays
from engine.position import Position
from engine.race_bounds import (
    RaceBounds,
    chance_off_in_one_roll,
    chances_off_in_one_roll,
    fewest_turns_to_finish,
    fewest_turns_to_first_off,
)

ANY = np.array([[0.4, 0.2, 0.05, 0.3, 0.1]])


@pytest.fixture(scope="module")
def db() -> BearoffDatabase:
    return BearoffDatabase.load()


@pytest.fixture(scope="module")
def bounds(db: BearoffDatabase) -> RaceBounds:
    return RaceBounds(db.one_sided.rolls)


def board(me: dict[int, int], opp: dict[int, int]) -> np.ndarray:
    """(1, 2, 25) with the side on roll first; keys are points 1-24 of each side's own numbering, 25 the bar."""
    b = np.zeros((1, 2, 25), dtype=np.uint8)
    for side, points in enumerate((me, opp)):
        for point, n in points.items():
            b[0, side, point - 1] = n
    return b


def settle(bounds: RaceBounds, b: np.ndarray, race: bool = True) -> list[float]:
    return bounds.settle(b, ANY, np.array([race]))[0].tolist()


def test_fewest_turns_count_crossings_and_pips() -> None:
    sides = board({24: 2, 6: 13}, {})[:, 0]
    # two chequers from the 24-point: 3 crossings each to the home board, then one off: 7 dice, two turns
    assert fewest_turns_to_first_off(sides).tolist() == [2]
    assert fewest_turns_to_first_off(board({24: 1, 6: 14}, {})[:, 0]).tolist() == [1]  # 6-6: 24/18/12/6/off
    # 15 chequers on the ace: 15 crossings off the board, four a turn
    assert fewest_turns_to_finish(board({1: 15}, {})[:, 0]).tolist() == [4]
    # 25 pips on the bar alone need two turns (24 pips a turn at most)
    assert fewest_turns_to_finish(board({25: 1}, {})[:, 0]).tolist() == [2]


def test_a_gammon_no_dice_can_save_is_certain(bounds: RaceBounds) -> None:
    # the opponent bears off his last chequer next turn whatever he rolls; two of mine are on my 23-point
    b = board({23: 2, 6: 13}, {1: 1})
    win, win_g, win_bg, lose_g, lose_bg = settle(bounds, b)
    assert (win, win_g, win_bg, lose_g) == (0.0, 0.0, 0.0, 1.0)
    assert lose_bg == pytest.approx(0.1)  # still open: my chequers are in his home board
    # one chequer there: only 6-6 saves it (23/17/11/5/off), and he is off next turn whatever he rolls
    assert settle(bounds, board({23: 1, 6: 14}, {1: 1}))[3] == pytest.approx(35 / 36)


def test_a_race_the_roller_cannot_lose_is_a_certain_win_and_gammon(bounds: RaceBounds) -> None:
    b = board({1: 1}, {13: 15})  # my last chequer goes off now; he has fifteen on the board
    assert settle(bounds, b) == [1.0, 1.0, 0.0, 0.0, 0.0]  # no backgammon: none of his are in my home board
    b = board({1: 2}, {1: 13, 12: 1})  # I need one roll; he needs two at least and has one off
    assert settle(bounds, b) == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_borne_off_chequers_rule_out_gammons_even_in_contact(bounds: RaceBounds) -> None:
    b = board({24: 2, 6: 12}, {24: 1, 1: 13})  # both have borne one off; contact (his 24 against my 24)
    assert settle(bounds, b, race=False) == [0.4, 0.0, 0.0, 0.0, 0.0]
    # without the race flag nothing else is settled, however lopsided (his borne-off chequers end my gammons)
    full = board({23: 2, 6: 13}, {1: 1})
    assert settle(bounds, full, race=False) == pytest.approx([0.4, 0.0, 0.0, 0.3, 0.1])


def _turns(pos: Position, rng: random.Random, db: BearoffDatabase | None, first_off: bool) -> int:
    """Turns for one side alone (the other far away) until it is off (or has one off), random dice; random
    plays, or with ``db`` the play that leaves the fewest expected rolls, as the table plays."""
    turns = 0
    while True:
        if not any(pos.me) or (first_off and sum(pos.me) < 15):
            return turns
        turns += 1
        plays = legal_plays(pos, (rng.randint(1, 6), rng.randint(1, 6)))
        if db is not None:
            play = min(plays, key=lambda p: db.expected_rolls(p.position.me))
        else:
            play = rng.choice(plays)
        pos = play.position


def test_bounds_hold_against_random_play_and_the_tables_worst_case(
    db: BearoffDatabase, bounds: RaceBounds
) -> None:
    rng = random.Random(7)
    waiting = (0,) * 24 + (15,)  # the other side on the bar: it blocks nothing and cannot be hit
    checked_home = 0
    for _ in range(150):
        counts = [0] * 25
        home_only = rng.random() < 0.4
        for _ in range(rng.randint(1, 15)):
            counts[rng.randrange(6 if home_only else 12)] += 1
        position = Position(counts, waiting)
        side = np.array([counts])
        for first_off in (False, True):
            if first_off and sum(counts) < 15:
                continue
            low = fewest_turns_to_first_off(side) if first_off else fewest_turns_to_finish(side)
            assert _turns(position, rng, None, first_off) >= int(low[0])
        if home_only:
            most = int(bounds.most_rolls[rank(counts)])
            for _ in range(3):
                assert _turns(position, rng, db, False) <= most
            checked_home += 1
    assert checked_home > 30


def test_the_shipped_evaluator_settles_a_lost_gammon_exactly() -> None:
    analyser = Analyser.default()
    probs = analyser.evaluator.evaluate_boards(board({23: 2, 6: 13}, {1: 1}))
    assert money_equity(probs)[0] == pytest.approx(-2.0 - probs[0, 4])
    assert probs[0, :4].tolist() == [0.0, 0.0, 0.0, 1.0]


# Races where every play is exactly as good as the best (a certain gammon or loss, or a certain gammon won):
# gnubg 2-ply's choice in each, from bench.agreement (seed 23), which our 0-ply must list first.
GNUBG_TIES = [
    ("AQAA7JWCwgIAAA", (3, 1), "18/15 17/16", -2.0),  # 58 plays lose a gammon for certain
    ("NwAAQOG9SIIAAA", (6, 1), "20/14 15/14", -2.0),
    ("BwAAsHNvAgAAAA", (3, 3), "8/5 6/3(2) 3/off", -1.0),  # a certain single loss
    ("u+UALgALAAAAAA", (5, 1), "2/off 1/off", 2.0),  # a certain gammon won
]


@pytest.mark.parametrize(("position_id", "dice", "gnubg", "equity"), GNUBG_TIES)
def test_exactly_equal_plays_are_listed_in_gnubgs_order(
    position_id: str, dice: tuple[int, int], gnubg: str, equity: float
) -> None:
    from engine.notation import parse_move

    analyser = Analyser.default()
    position = Position.from_id(position_id)
    ranked = analyser.search.rank(position, dice, 0)
    assert ranked[0].equity == pytest.approx(equity, abs=1e-9) == ranked[1].equity  # a tie, settled exactly
    assert ranked[0].play.position == parse_move(gnubg, position, dice).position
    # without gnubg's order the first of them in our own generation order would go first
    assert legal_plays(position, dice)[0].position != ranked[0].play.position


def test_one_roll_to_save_a_gammon_counted_by_hand() -> None:
    # One chequer on the 7, fourteen on the 6: a roll with a six (11/36) brings it in and bears one off, 5-2
    # and 4-3 (4/36) bear it off itself, 3-3 goes 7/4 6/3 6/3 3/off and 2-2 7/5 6/4/2/off (2/36); 1-1, 4-4
    # and 5-5 cannot.
    side = board({7: 1, 6: 14}, {})[0, 0]
    assert chance_off_in_one_roll(tuple(int(x) for x in side)) == pytest.approx(17 / 36)


def test_a_gammon_decided_by_one_turn_is_exact(bounds: RaceBounds) -> None:
    save = 17 / 36  # as above
    # He is off next turn whatever he rolls: I save the gammon only by bearing off now.
    assert settle(bounds, board({7: 1, 6: 14}, {1: 1}))[:4] == pytest.approx([0.0, 0.0, 0.0, 1 - save])
    # I am on roll with four on the ace: off now with a double (6/36), else next turn; he saves only if I need
    # two turns and he bears a chequer off in his one turn between.
    assert settle(bounds, board({1: 4}, {7: 1, 6: 14}))[:2] == pytest.approx([1.0, 1 - 30 / 36 * save])


def chance_off_by_plays(side: tuple[int, ...]) -> float:
    """The reference (engine.race_bounds' first definition): every legal play of every roll, against no
    opponent, and whether any of them bears a chequer off."""
    position = Position(side, (0,) * 25)
    hits = sum(
        weight for dice, weight in ROLLS if any(sum(p.position.me) < 15 for p in legal_plays(position, dice))
    )
    return hits / 36.0


def random_race_side(rng: random.Random) -> tuple[int, ...]:
    """15 chequers: a few (sometimes many) outside, from just outside up to the bar, the rest on some home
    points; weighted to the stragglers and gaps where one roll decides."""
    side = [0] * 25
    outside = rng.choice([0, 0, 1, 1, 1, 2, 2, 3, 4, rng.randint(0, 15)])
    reach = rng.choice([7, 8, 9, 10, 12, 13, 15, 18, 24, 25])
    for _ in range(outside):
        side[rng.randint(6, reach - 1)] += 1
    top = rng.randint(1, 6)
    held = rng.sample(range(top), rng.randint(1, top))
    for _ in range(15 - outside):
        side[rng.choice(held)] += 1
    return tuple(side)


def test_chance_off_in_one_roll_equals_generating_every_play() -> None:
    rng = random.Random(29)
    edges = [
        {6: 15},
        {1: 15},
        {7: 1, 6: 14},
        {25: 1, 1: 14},
        {13: 1, 1: 14},
        {7: 2, 1: 13},
        {8: 3, 1: 12},
        {9: 1, 8: 1, 1: 13},
        {6: 1, 1: 14},
        {5: 1, 3: 14},
        {6: 1, 2: 14},
        {4: 14, 1: 1},
        {12: 1, 6: 1, 1: 13},
        {11: 1, 3: 14},
    ]
    sides = [tuple(int(x) for x in board(e, {})[0, 0]) for e in edges]
    sides += [random_race_side(rng) for _ in range(1500)]
    expected = [chance_off_by_plays(s) for s in sides]
    assert chances_off_in_one_roll(np.array(sides)).tolist() == expected  # bit for bit
    # runs of equal rows (a search's batches) are computed once and spread back
    runs = np.repeat(np.array(sides[:300]), [1, 3, 2] * 100, axis=0)
    assert chances_off_in_one_roll(runs).tolist() == np.repeat(expected[:300], [1, 3, 2] * 100).tolist()
    assert [chance_off_in_one_roll(s) for s in sides[:50]] == expected[:50]
    assert len(set(expected)) > 15  # the sample reaches many different answers, not only 0 and 1


def test_board_stats_in_c_equal_numpys() -> None:
    from engine import race_bounds

    if race_bounds.board_stats is race_bounds.board_stats_numpy:
        pytest.skip("the C extension is not built (or GAMMOND_PURE_PYTHON is set)")
    rng = np.random.default_rng(6)
    boards = rng.integers(0, 4, size=(500, 2, 25)).astype(np.uint8)
    for got, want in zip(race_bounds.board_stats(boards), race_bounds.board_stats_numpy(boards), strict=True):
        assert got.tolist() == want.tolist()


def test_board_ranks_in_c_equal_numpys() -> None:
    from engine.bearoff import ranking

    if ranking.board_ranks is ranking.board_ranks_numpy:
        pytest.skip("the C extension is not built (or GAMMOND_PURE_PYTHON is set)")
    rng = np.random.default_rng(7)
    boards = np.zeros((2000, 2, 25), dtype=np.uint8)
    for row in boards:
        for side in row:
            np.add.at(side, rng.integers(0, 6, rng.integers(0, 16)), 1)  # up to 15 home
            side[rng.integers(6, 25)] += rng.integers(0, 3)  # chequers beyond the six-point are ignored
    assert ranking.board_ranks(boards).tolist() == ranking.board_ranks_numpy(boards).tolist()
    assert ranking.board_ranks(boards).max() > 50_000  # full home boards are in the sample
