"""Rules of the legal-move generator on hand-made positions, for both generators (pure Python and C)."""

from __future__ import annotations

import random

import pytest

import engine.moves as moves
from bench._positions import ALL_ROLLS, random_cases
from engine.errors import IllegalMoveError, InvalidDiceError, InvalidPositionError
from engine.moves import Move, Play, apply_move, find_play, legal_plays, single_step
from engine.position import Position

GENERATORS = ["python", "c"]


@pytest.fixture(params=GENERATORS, autouse=True)
def generator(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs once per generator behind the public legal_plays."""
    monkeypatch.setattr(moves, "_turn_plays", {})  # find_play's memo: each generator computes its own plays
    if request.param == "c":
        if moves._legal_plays_c is None:
            pytest.skip("engine._movegen is not built (or GAMMOND_PURE_PYTHON=1)")
        monkeypatch.setattr(moves, "_generate", moves._legal_plays_c)
    else:
        monkeypatch.setattr(moves, "_generate", moves._legal_plays_python)
    return request.param


def pos(points: dict[int, int], bar: tuple[int, int] = (0, 0)) -> Position:
    return Position.from_points(points, bar)


def steps_of(plays: list[Play]) -> set[tuple[tuple[int, int], ...]]:
    return {p.move.steps for p in plays}


def mine(p: Position) -> dict[int, int]:
    """The mover's chequers as {point: count}, 25 = bar."""
    return {i + 1: n for i, n in enumerate(p.me) if n}


# A lone chequer on my 13 with 14 behind it on my ace point: those cannot move (not all home), so every roll
# is about the one chequer; the opponent's blocks decide which dice play.
LONE = {13: 1, 1: 14}


def test_opening_counts_match_gnubg() -> None:
    # gnubg 1.07 hint(9999) at the opening position, in ALL_ROLLS order: 11, 21, 22, 31, 32, 33, 41 ... 66
    gnubg = (42, 15, 75, 16, 17, 73, 14, 18, 17, 52, 8, 8, 9, 9, 4, 10, 14, 14, 14, 7, 11)
    for roll, count in zip(ALL_ROLLS, gnubg, strict=True):
        assert len(legal_plays(Position.initial(), roll)) == count, roll


def test_opening_31_makes_the_five_point() -> None:
    plays = legal_plays(Position.initial(), (3, 1))
    assert Move.of((8, 5), (6, 5)) in [p.move for p in plays]
    assert all(len(p.move) == 2 for p in plays)


def test_bar_entry_comes_first() -> None:
    p = pos({13: 5, 8: 3, 6: 6}, bar=(1, 0))
    plays = legal_plays(p, (6, 3))
    assert plays
    assert all(pl.move.steps[0][0] == 25 for pl in plays)
    assert all(pl.position.me[24] == 0 for pl in plays)


def test_two_on_the_bar_use_both_dice_to_enter() -> None:
    p = pos({13: 5, 8: 3, 6: 5}, bar=(2, 0))
    assert steps_of(legal_plays(p, (6, 3))) == {((25, 22), (25, 19))}


def test_blocked_entry_is_a_dance() -> None:
    closed = {19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2}
    p = pos({**closed, 13: 5, 8: 4}, bar=(1, 0))
    for roll in ALL_ROLLS:
        assert legal_plays(p, roll) == [Play(Move(), p)]


def test_one_enters_and_the_other_stays_when_only_one_die_enters() -> None:
    # points 19-23 closed, 24 open: with 6-1 one chequer enters on 24 (with the 1), the second cannot
    closed = {19: -2, 20: -2, 21: -2, 22: -2, 23: -2}
    p = pos({**closed, 13: 5, 8: 4}, bar=(2, 0))
    plays = legal_plays(p, (6, 1))
    assert steps_of(plays) == {((25, 24),)}
    assert plays[0].position.me[24] == 1


def test_entered_chequer_may_go_on_with_the_other_die() -> None:
    closed = {19: -2, 20: -2, 21: -2, 22: -2, 23: -2}
    p = pos({**closed, 6: 5}, bar=(1, 0))
    # the 1 enters on 24 and the 6 moves it on; 6/off is no option with a chequer on 24
    assert steps_of(legal_plays(p, (6, 1))) == {((25, 24), (24, 18))}


def test_larger_die_is_forced_when_only_one_die_can_be_played() -> None:
    # 13/7 or 13/8 alone; 13/7/2 and 13/8/2 land on their made 2-point
    p = pos({**LONE, 2: -2})
    assert steps_of(legal_plays(p, (6, 5))) == {((13, 7),)}


def test_smaller_die_when_the_larger_cannot_be_played() -> None:
    # their 7-point blocks the 6 from 13, and after 13/8 the 6 would land on their 2-point
    p = pos({**LONE, 7: -2, 2: -2})
    assert steps_of(legal_plays(p, (6, 5))) == {((13, 8),)}


def test_both_orders_of_a_non_double_are_tried() -> None:
    # 6 first is blocked (their 7-point), 5 then 6 is open: 13/8/2 must be found
    p = pos({**LONE, 7: -2})
    assert steps_of(legal_plays(p, (6, 5))) == {((13, 8), (8, 2))}
    assert steps_of(legal_plays(p, (5, 6))) == {((13, 8), (8, 2))}


def test_dice_order_does_not_matter() -> None:
    for _, p, (d1, d2) in random_cases(120, 5):
        assert legal_plays(p, (d1, d2)) == legal_plays(p, (d2, d1))


def test_doubles_play_four_times() -> None:
    plays = legal_plays(Position.initial(), (3, 3))
    assert all(len(p.move) == 4 for p in plays)
    assert Move.of((8, 5), (8, 5), (6, 3), (6, 3)) in [p.move for p in plays]
    assert Position.initial().pips()[0] - plays[0].position.pips()[0] == 12


def test_partial_doubles() -> None:
    # 13/9(2), then their 5-point stops both chequers: two of the four 4s
    p = pos({13: 2, 1: 13, 5: -2})
    assert steps_of(legal_plays(p, (4, 4))) == {((13, 9), (13, 9))}
    # one chequer on the bar, entry on 21 only: it enters and goes on 21/17/13/9
    closed = {19: -2, 20: -2, 22: -2, 23: -2, 24: -2}
    q = pos({**closed, 1: 14}, bar=(1, 0))
    assert steps_of(legal_plays(q, (4, 4))) == {((25, 21), (21, 17), (17, 13), (13, 9))}


def test_bear_off_exact() -> None:
    p = pos({4: 1, 2: 1, 24: -3})
    plays = legal_plays(p, (4, 2))
    assert ((4, 0), (2, 0)) in steps_of(plays)
    assert any(sum(pl.position.me) == 0 for pl in plays)


def test_bear_off_from_the_highest_point_with_larger_dice() -> None:
    p = pos({3: 1, 2: 1, 24: -3})
    assert steps_of(legal_plays(p, (6, 5))) == {((3, 0), (2, 0))}


def test_no_bear_off_from_a_lower_point_while_a_higher_one_is_held() -> None:
    # 5-3 with chequers on 6 and 2: the 2 may bear off with a larger die only once the 6 has moved below it
    p = pos({6: 1, 2: 1, 24: -3})
    plays = legal_plays(p, (5, 3))
    assert steps_of(plays) == {((6, 3), (3, 0)), ((6, 1), (2, 0))}
    assert {tuple(sorted(mine(pl.position).items())) for pl in plays} == {((2, 1),), ((1, 1),)}


def test_no_bear_off_while_a_chequer_is_outside() -> None:
    p = pos({9: 1, 2: 1, 24: -3})
    plays = legal_plays(p, (2, 1))
    assert plays
    assert all(dst != 0 for pl in plays for _, dst in pl.move.steps)


def test_chequer_brought_home_by_the_first_die_bears_off_with_the_second() -> None:
    p = pos({8: 1, 2: 1, 24: -3})
    plays = legal_plays(p, (6, 2))
    assert [pl.move for pl in plays] == [Move.of((8, 6), (6, 0))]  # 8/2 2/off reaches the same board
    assert mine(plays[0].position) == {2: 1}


def test_a_hit_sends_the_blot_to_the_bar() -> None:
    p = pos({13: 2, 6: 5, 8: -1, 24: -2})
    plays = legal_plays(p, (5, 2))
    hit = [pl for pl in plays if pl.move.steps == ((13, 11), (13, 8))]
    assert len(hit) == 1
    after = hit[0].position
    assert after.opp[24] == 1  # their bar
    assert after.opp[25 - 8 - 1] == 0  # my 8 is their 17
    assert after.me[7] == 1


def test_hit_and_run() -> None:
    p = pos({13: 1, 1: 14, 8: -1})
    plays = legal_plays(p, (5, 6))
    assert ((13, 8), (8, 2)) in steps_of(plays)
    after = next(pl.position for pl in plays if pl.move.steps == ((13, 8), (8, 2)))
    assert after.opp[24] == 1 and after.opp[16] == 0
    assert mine(after) == {2: 1, 1: 14}


def test_no_duplicate_positions_and_canonical_moves() -> None:
    for _, p, roll in random_cases(150, 9):
        plays = legal_plays(p, roll)
        positions = [pl.position for pl in plays]
        assert len(set(positions)) == len(positions)
        assert [pl.move.steps for pl in plays] == sorted((pl.move.steps for pl in plays), reverse=True)
        for pl in plays:
            assert list(pl.move.steps) == sorted(pl.move.steps, reverse=True)
            assert moves._try_steps(p, pl.move) == pl.position  # the canonical order is a playable order
            assert hash(pl.position) == hash(Position(pl.position.me, pl.position.opp))
        lengths = {len(pl.move) for pl in plays}
        assert len(lengths) == 1  # every play uses as many dice as the best one


def test_greatest_step_list_is_the_canonical_one() -> None:
    # 24/16 with 6-2 can be 24/22/16 or 24/18/16: the greater step list names it
    plays = legal_plays(Position.initial(), (6, 2))
    assert Move.of((24, 22), (22, 16)) in [pl.move for pl in plays]
    assert Move.of((24, 18), (18, 16)) not in [pl.move for pl in plays]


def test_find_play_accepts_any_notation_of_a_legal_move() -> None:
    start = Position.initial()
    play = find_play(start, (6, 5), Move.of((24, 13)))
    assert play.move == Move.of((24, 18), (18, 13))  # 24/19 would land on their 6-point
    assert apply_move(start, (6, 5), Move.of((13, 8), (24, 18))) == next(
        pl.position for pl in legal_plays(start, (6, 5)) if pl.move.steps == ((24, 18), (13, 8))
    )
    with pytest.raises(IllegalMoveError, match="not a legal play"):
        find_play(start, (6, 5), Move.of((24, 18)))


@pytest.mark.parametrize("dice", [(0, 3), (7, 1), (3,), (1, 2, 3), None, ("a", 1)])
def test_bad_dice_are_typed_errors(dice: object) -> None:
    with pytest.raises(InvalidDiceError):
        legal_plays(Position.initial(), dice)  # type: ignore[arg-type]


def test_a_non_position_is_a_typed_error() -> None:
    with pytest.raises(InvalidPositionError, match="expected a Position"):
        legal_plays("4HPwATDgc/ABMA", (3, 1))  # type: ignore[arg-type]


def test_turn_plays_is_legal_plays_remembered() -> None:
    from engine.moves import turn_plays

    pos = Position.initial()
    first = turn_plays(pos, (6, 5))
    assert list(first) == legal_plays(pos, (6, 5))
    assert turn_plays(Position.initial(), [6, 5]) is first  # an equal position and dice: no second generation
    assert (
        find_play(pos, (6, 5), Move(((24, 18), (18, 13)))).position
        == find_play(pos, (6, 5), Move(((24, 13),))).position
    )
    with pytest.raises(InvalidPositionError):
        turn_plays("not a position", (6, 5))  # type: ignore[arg-type]
    with pytest.raises(InvalidDiceError):
        turn_plays(pos, (7, 1))


def test_single_step_plays_each_step_of_every_legal_play() -> None:
    """Each legal play of a roll is its steps, one die each, through single_step (bgammon's one-die steps)."""
    rng = random.Random(7)
    checked = 0
    for _ in range(200):
        pos = Position.initial()
        for _ in range(rng.randint(0, 120)):
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            plays = legal_plays(pos, dice)
            for play in plays:
                at = pos
                for src, dst in play.move.steps:
                    moved = single_step(at, src, src - dst if dst else min(d for d in dice if d >= src))
                    assert moved is not None and moved[1] == dst, (pos.position_id, dice, play.move)
                    at = moved[0]
                assert at == play.position
                checked += 1
            nxt = rng.choice(plays).position
            if not sum(nxt.me):
                break
            pos = nxt.swap()
    assert checked > 10_000


def test_single_step_refuses_what_no_step_may_do() -> None:
    start = Position.initial()
    assert single_step(start, 0, 3) is None and single_step(start, 26, 3) is None  # no such point
    assert single_step(start, 25, 3) is None  # nothing on the bar
    assert (
        single_step(start, 13, 2) is not None and single_step(start, 24, 5) is None
    )  # their 6-point holds 19
    assert single_step(start, 6, 6) is None  # off before every chequer is home
