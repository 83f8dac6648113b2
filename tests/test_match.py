"""MatchState (engine/match.py), gnubg IDs of whole states, XGID (engine/xgid.py) and dice (engine/dice.py).

The gnubg vectors in tests/data were made by GNU Backgammon 1.07 itself (make_gnubg_match_ids.py and
make_gnubg_xgid.py there); these tests need no gnubg.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.dice import (
    DiceExhaustedError,
    DiceFileError,
    DiceSource,
    FileDice,
    ManualDice,
    MersenneDice,
    parse_dice_text,
    parse_roll,
)
from engine.errors import IllegalActionError, IllegalMoveError, InvalidDiceError, InvalidIdError
from engine.ids import GameState, MatchKey
from engine.match import (
    MAX_CUBE,
    GameResult,
    IllegalPlayError,
    InvalidMatchStateError,
    MatchState,
    ResignLevel,
    Rules,
)
from engine.moves import Move
from engine.position import Position
from engine.xgid import format_xgid, parse_xgid
from tests.strategies import positions, random_position

DATA = Path(__file__).parent / "data"
MONEY = Rules(crawford=True, jacoby=True, beavers=True)


def load_jsonl(name: str) -> list[dict[str, Any]]:
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def side(points: dict[int, int], bar: int = 0) -> list[int]:
    counts = [0] * 25
    for point, n in points.items():
        counts[point - 1] = n
    counts[24] = bar
    return counts


def playing(**fields: Any) -> MatchState:
    """A game in progress, player 0 on roll in the opening position unless told otherwise."""
    return MatchState(game_state=GameState.PLAYING, **fields)


# -- seed vectors from the issue ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("position_id", "pips"),
    [
        ("4HPwATDgc/ABMA", (167, 167)),
        ("CgAAEAEAAAAAAA", (7, 5)),
        ("2x0AAOi2AQAAAA", (31, 27)),
        ("4HPMwQCMz+AIIQ", (151, 151)),
        ("AACgAgAAKgAAAA", (69, 69)),
        ("uLs7AADu7g4AAA", (60, 90)),  # pips as gnubg 1.07 reports them: on roll first
    ],
)
def test_position_id_vectors_round_trip(position_id: str, pips: tuple[int, int]) -> None:
    state = MatchState.from_gnubg_id(position_id)
    assert state.position.pips() == pips
    assert state.position.position_id == position_id
    assert state.gnubg_id == f"{position_id}:{MatchKey().encode()}"


def test_gnubg_writes_the_side_not_on_roll_first() -> None:
    pos = MatchState.from_gnubg_id("uLs7AADu7g4AAA").position
    assert pos.me == tuple(side({2: 3, 3: 3, 4: 3, 5: 3, 6: 3}))
    assert pos.opp == tuple(side({4: 3, 5: 3, 6: 3, 7: 3, 8: 3}))


def test_opening_id_is_the_initial_position() -> None:
    state = MatchState.from_gnubg_id("4HPwATDgc/ABMA:cAkAAAAAAAAA")
    assert state.position == Position.initial()
    assert (state.on_roll, state.turn, state.dice, state.cube, state.cube_owner) == (1, 1, (0, 0), 1, -1)
    assert state.is_money and state.rules.jacoby


def test_gnubg_rewrites_dice_larger_first() -> None:
    state = MatchState.from_gnubg_id("4HPwATDgc/ABMA:cAkZAAAAAAAA")  # dice stored as 2, 6
    assert state.dice == (6, 2)
    assert state.gnubg_id == "4HPwATDgc/ABMA:cAkLAAAAAAAA"  # what gnubg 1.07 writes back


def test_nine_point_match_vector() -> None:
    # gnubg manual: 2-4 in a 9-point match, player 0 owns the 2-cube, player 1 rolled 52
    state = MatchState.from_gnubg_id("4HPwATDgc/ABMA:QYkqASAAIAAA")
    assert (state.match_length, state.score) == (9, (2, 4))
    assert (state.cube, state.cube_owner, state.on_roll, state.turn, state.dice) == (2, 0, 1, 1, (5, 2))
    assert state.away() == (7, 5)
    assert (
        state.gnubg_id == "4HPwATDgc/ABMA:QYkqASAAIAAA"
    )  # the old Jacoby bit (clear) is kept, as gnubg does


def test_gnubg_sets_the_jacoby_bit_from_the_session() -> None:
    dice = (6, 2)
    match = MatchState.new_match(5).new_game(dice)
    money = MatchState.new_session(Rules(jacoby=True)).new_game(dice)
    money_off = MatchState.new_session(Rules(jacoby=False)).new_game(dice)
    assert match.gnubg_id.endswith("E") and not match.rules.jacoby  # gnubg: no Jacoby in match play
    assert money.gnubg_id.endswith("A")
    assert money_off.gnubg_id.endswith("E")


# -- replaying gnubg 1.07 ------------------------------------------------------------------------------------


def _apply(state: MatchState, record: dict[str, Any]) -> MatchState:
    action = record["do"]
    if action == "new_game":
        return state.new_game(record["opening"])
    if action == "roll":
        return state.roll(record["dice"])
    if action == "move":
        return state.move([tuple(step) for step in record["steps"]])
    if action == "resign":
        return state.resign(record["level"])
    if action == "accept":
        return state.accept_resignation()
    if action == "reject":
        return state.reject_resignation()
    return getattr(state, action)()


def _sessions() -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = []
    for line in load_jsonl("gnubg_match_ids.jsonl"):
        if "session" in line:
            if header is not None:
                yield header, records
            header, records = line["session"], []
        else:
            records.append(line)
    assert header is not None
    yield header, records


SESSIONS = list(_sessions())


@pytest.mark.parametrize(("header", "records"), SESSIONS, ids=[f"session{h['index']}" for h, _ in SESSIONS])
def test_replay_of_gnubg_play_gives_gnubg_ids(header: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Every action gnubg accepted gives gnubg's ID; every one it refused raises IllegalActionError."""
    rules = Rules(crawford=header["crawford"], jacoby=header["jacoby"], beavers=header["beavers"])
    if "start" in header:
        state = MatchState.from_gnubg_id(header["start"], rules=rules)
        assert state.gnubg_id == header["start"]
    else:
        state = MatchState.new_match(header["length"], rules)
    dice = MersenneDice(header["seed"]) if "seed" in header else None
    for n, record in enumerate(records):
        where = f"session {header['index']}, record {n}: {record}"
        if not record["ok"]:
            before = state.gnubg_id
            with pytest.raises(IllegalActionError):
                _apply(state, record)
            assert state.gnubg_id == before
            continue
        if dice is not None and record["do"] == "new_game":
            assert dice.opening() == tuple(record["opening"]), where
        if dice is not None and record["do"] == "roll":
            assert sorted(dice.roll()) == sorted(record["dice"]), where
        state = _apply(state, record)
        if record["id"] is not None:
            assert state.gnubg_id == record["id"], where
            # and reading gnubg's ID back gives the same ID and the same game-relevant fields
            again = MatchState.from_gnubg_id(record["id"], rules=rules)
            assert again.gnubg_id == record["id"]
            assert (again.position, again.match_key) == (state.position, state.match_key)
            if state.game_state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED):
                assert again.last_result == state.last_result, where


def test_the_gnubg_vectors_cover_the_rules() -> None:
    seen: set[str] = set()
    for _, records in SESSIONS:
        for r in records:
            seen.add(f"{r['do']}:{r['ok']}")
            if r["ok"] and r["id"]:
                key = MatchKey.decode(r["id"].split(":")[1])
                seen.add(key.game_state.name)
                if key.crawford and key.game_state == GameState.PLAYING:
                    seen.add("crawford game")
    for wanted in ("beaver:True", "beaver:False", "double:False", "resign:False", "take:True", "drop:True"):
        assert wanted in seen
    assert {"OVER", "RESIGNED", "DROPPED", "crawford game"} <= seen


# -- a whole game with random legal moves -------------------------------------------------------------------


def _play_random_game(state: MatchState, dice: MersenneDice, rng: random.Random) -> MatchState:
    state = state.new_game(dice.opening())
    for _ in range(2000):
        if state.game_state != GameState.PLAYING:
            return state
        assert sum(state.position.me) + state.position.off[0] == 15
        assert MatchState.from_gnubg_id(state.gnubg_id, rules=state.rules).gnubg_id == state.gnubg_id
        if state.doubled:
            state = rng.choice([state.take, state.take, state.drop])()
        elif not state.dice[0]:
            if state.may_double(state.on_roll) and rng.random() < 0.05:
                state = state.double()
            else:
                state = state.roll(dice.roll())
        else:
            plays = state.legal_plays()
            before = state.on_roll
            state = state.move(rng.choice(plays).move)
            if state.game_state == GameState.PLAYING:
                assert state.on_roll == 1 - before and state.dice == (0, 0)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("seed", range(6))
def test_random_games_to_the_end(seed: int) -> None:
    rng = random.Random(seed)
    dice = MersenneDice(seed)
    state = MatchState.new_match(5, names=("alice", "bob"))
    while not state.match_over:
        before = state.score
        state = _play_random_game(state, dice, rng)
        result = state.last_result
        assert result is not None
        gained = [state.score[p] - before[p] for p in (0, 1)]
        assert gained[result.winner] == result.points and gained[1 - result.winner] == 0
        if result.how == GameState.OVER:
            winner_view = state.position.swap()
            assert not any(winner_view.me) and state.on_roll == 1 - result.winner
            assert result.points == state.cube * result.level
        if result.how == GameState.DROPPED:
            assert result.points == state.cube
    assert state.winner is not None and state.score[state.winner] >= 5
    with pytest.raises(IllegalActionError, match="match is over"):
        state.new_game((6, 1))


# -- illegal actions -------------------------------------------------------------------------------------

OPENING_61 = MatchState.new_session(MONEY).new_game((6, 1))  # player 0 on roll with 6-1
TO_ROLL = OPENING_61.move(Move.of((13, 7), (8, 7)))  # player 1 to roll
DOUBLED = TO_ROLL.double()
RESIGNED = TO_ROLL.resign(2)
FINISHED = DOUBLED.drop()
MATCH_3 = MatchState.new_match(3).new_game((2, 5))


def _actions() -> dict[str, Callable[[MatchState], object]]:
    return {
        "new_game": lambda s: s.new_game((3, 1)),
        "roll": lambda s: s.roll((3, 1)),
        "move": lambda s: s.move(Move.of((24, 21), (24, 23))),
        "double": lambda s: s.double(),
        "take": lambda s: s.take(),
        "drop": lambda s: s.drop(),
        "beaver": lambda s: s.beaver(),
        "resign": lambda s: s.resign(1),
        "accept": lambda s: s.accept_resignation(),
        "reject": lambda s: s.reject_resignation(),
        "legal_plays": lambda s: s.legal_plays(),
    }


ILLEGAL = [
    ("before any game", MatchState.new_session(), set(_actions()) - {"new_game"}),
    (
        "on roll with 6-1",
        OPENING_61,
        {"new_game", "roll", "double", "take", "drop", "beaver", "accept", "reject"},
    ),
    ("to roll", TO_ROLL, {"new_game", "move", "take", "drop", "beaver", "accept", "reject", "legal_plays"}),
    ("doubled", DOUBLED, {"new_game", "roll", "move", "double", "resign", "accept", "reject", "legal_plays"}),
    ("resigned", RESIGNED, {"new_game", "roll", "move", "double", "take", "drop", "beaver", "resign"}),
    ("game over", FINISHED, set(_actions()) - {"new_game"}),
    (
        "match play doubled",
        MATCH_3.move(Move.of((13, 8), (24, 22))).double(),
        {"new_game", "roll", "move", "double", "beaver", "resign", "accept", "reject", "legal_plays"},
    ),
]


@pytest.mark.parametrize(("name", "state", "actions"), ILLEGAL, ids=[i[0] for i in ILLEGAL])
def test_illegal_actions_raise_and_change_nothing(name: str, state: MatchState, actions: set[str]) -> None:
    table = _actions()
    snapshot = repr(state)
    for action in sorted(actions):
        with pytest.raises(IllegalActionError):
            table[action](state)
        assert repr(state) == snapshot
    for action in sorted(set(table) - actions - {"legal_plays"}):
        with contextlib.suppress(IllegalPlayError):  # the one sample move may not fit this position
            table[action](state)
    assert repr(state) == snapshot


def test_illegal_chequer_play_is_both_an_action_and_a_move_error() -> None:
    with pytest.raises(IllegalPlayError) as info:
        OPENING_61.move(Move.of((24, 18), (24, 22)))
    assert isinstance(info.value, IllegalActionError) and isinstance(info.value, IllegalMoveError)
    with pytest.raises(IllegalPlayError):
        OPENING_61.move([("x", 3)])  # type: ignore[list-item]


def test_opening_roll_rules() -> None:
    with pytest.raises(IllegalActionError, match="double"):
        MatchState.new_match(3).new_game((4, 4))
    with pytest.raises(InvalidDiceError):
        MatchState.new_match(3).new_game((7, 1))
    state = MatchState.new_match(3).new_game((2, 5))
    assert (state.on_roll, state.turn, state.dice, state.game_number) == (1, 1, (5, 2), 1)
    with pytest.raises(IllegalActionError, match="in progress"):
        state.new_game((3, 1))


@pytest.mark.parametrize("level", [0, 4, True, 1.5])
def test_resignation_level_must_be_1_to_3(level: Any) -> None:
    with pytest.raises(IllegalActionError, match="resignation level"):
        TO_ROLL.resign(level)


def test_doubling_rights() -> None:
    taken = DOUBLED.take()  # player 0 took: owns a 2-cube, player 1 to roll
    assert (taken.cube, taken.cube_owner, taken.turn) == (2, 0, 1)
    assert not taken.may_double(1) and not taken.may_double(0)
    with pytest.raises(IllegalActionError, match="does not own"):
        taken.double()
    rolled = taken.roll((3, 1))
    assert not rolled.may_double(1)
    with pytest.raises(IllegalActionError, match="rolled already"):
        rolled.double()
    top = playing(cube=MAX_CUBE, cube_owner=0)
    with pytest.raises(IllegalActionError, match=str(MAX_CUBE)):
        top.double()
    assert playing(cube=MAX_CUBE // 2, cube_owner=0).double().take().cube == MAX_CUBE


def test_dead_cube_cannot_be_turned_in_match_play() -> None:
    one_point = _to_roll(MatchState.new_match(1), 0)
    assert not one_point.may_double(0)
    with pytest.raises(IllegalActionError, match="dead"):
        one_point.double()
    # 2-away with a 2-cube: dead for the doubler; dead only for the taker is fine (gnubg 1.07 agrees)
    assert not playing(match_length=5, score=(3, 0), cube=2, cube_owner=0).may_double(0)
    assert playing(match_length=5, score=(1, 4), cube=2, cube_owner=0).may_double(0)


# -- Crawford ---------------------------------------------------------------------------------------------


def _win(state: MatchState, winner: int, level: int = 1) -> MatchState:
    """Start a game and let ``winner`` take it by a resignation at ``level`` (cube 1)."""
    loser = 1 - winner
    state = state.new_game((1, 6) if loser == 1 else (6, 1))  # the loser opens and resigns at once
    return state.resign(level).accept_resignation()


def _to_roll(state: MatchState, player: int) -> MatchState:
    """A new game in which the other player has played an opening 6-1 and ``player`` is to roll."""
    opener = 1 - player
    return state.new_game((6, 1) if opener == 0 else (1, 6)).move(Move.of((13, 7), (8, 7)))


def test_crawford_and_post_crawford_sequence() -> None:
    state = _win(MatchState.new_match(5), 0, 3)
    assert state.score == (3, 0) and not state.is_crawford and not state.is_post_crawford
    state = _win(state, 0)
    assert state.score == (4, 0)
    assert state.is_crawford and not state.is_post_crawford  # the next game is the Crawford game

    crawford = _to_roll(state, 1)
    assert crawford.is_crawford and not crawford.may_double(1)
    with pytest.raises(IllegalActionError, match="Crawford"):
        crawford.double()
    crawford = crawford.roll((2, 1)).move(Move.of((13, 11), (6, 5)))
    post = crawford.resign(1).accept_resignation()  # the leader resigns the Crawford game: 4-1
    assert post.score == (4, 1) and not post.is_crawford and post.is_post_crawford

    leader = _to_roll(post, 0)
    assert leader.is_post_crawford and not leader.may_double(0)  # dead for the 1-away leader
    with pytest.raises(IllegalActionError, match="dead"):
        leader.double()
    trailer = _to_roll(post, 1)
    assert trailer.may_double(1)
    taken = trailer.double().take()
    assert (taken.cube, taken.cube_owner) == (2, 0)

    over = _win(post, 0)
    assert over.match_over and over.winner == 0 and not over.is_post_crawford
    with pytest.raises(IllegalActionError, match="match is over"):
        over.new_game((3, 1))


def test_no_second_crawford_game_when_both_are_one_away() -> None:
    state = _win(MatchState.new_match(3), 0, 2)  # 2-0: Crawford next
    assert state.is_crawford
    state = _win(state, 1)  # 2-1 after the Crawford game
    assert not state.is_crawford and state.is_post_crawford
    state = _win(state, 1)  # 2-2: double match point, no Crawford game
    assert state.score == (2, 2) and not state.is_crawford and state.is_post_crawford
    assert not _to_roll(state, 0).may_double(0)


def test_no_crawford_game_when_the_rule_is_off() -> None:
    state = _win(MatchState.new_match(3, Rules(crawford=False)), 0, 2)
    assert state.score == (2, 0) and not state.is_crawford and not state.is_post_crawford
    assert not _to_roll(state, 0).may_double(0)  # the cube is dead for the 1-away player
    assert _to_roll(state, 1).may_double(1)
    with pytest.raises(InvalidMatchStateError, match="Crawford"):
        playing(match_length=3, score=(2, 0), crawford=True, rules=Rules(crawford=False))


# -- money: Jacoby and beavers ------------------------------------------------------------------------------

GAMMON_NEXT = Position(side({1: 2}), side({7: 5, 8: 5, 9: 5}))  # any roll bears off both: a gammon
BACKGAMMON_NEXT = Position(side({1: 2}), side({7: 5, 8: 5, 9: 4}, bar=1))


@pytest.mark.parametrize(
    ("position", "jacoby", "cube", "owner", "level", "points"),
    [
        (GAMMON_NEXT, True, 1, -1, ResignLevel.GAMMON, 1),  # Jacoby: centred cube, gammon counts single
        (GAMMON_NEXT, False, 1, -1, ResignLevel.GAMMON, 2),
        (GAMMON_NEXT, True, 2, 0, ResignLevel.GAMMON, 4),  # the cube was turned: gammons count
        (BACKGAMMON_NEXT, True, 2, 1, ResignLevel.BACKGAMMON, 6),
        (BACKGAMMON_NEXT, False, 1, -1, ResignLevel.BACKGAMMON, 3),
    ],
)
def test_money_game_scoring(
    position: Position, jacoby: bool, cube: int, owner: int, level: ResignLevel, points: int
) -> None:
    state = playing(position=position, rules=Rules(jacoby=jacoby), cube=cube, cube_owner=owner, dice=(5, 3))
    over = state.move(Move.of((1, 0), (1, 0)))
    assert over.last_result == GameResult(0, points, level, GameState.OVER)
    assert over.score == (points, 0) and over.game_state == GameState.OVER
    assert (over.on_roll, over.turn, over.dice) == (1, 1, (0, 0))  # the loser, as gnubg leaves it
    again = MatchState.from_gnubg_id(over.gnubg_id)
    assert again.last_result == over.last_result


def test_match_gammon_ignores_jacoby_and_can_pass_the_length() -> None:
    state = playing(position=GAMMON_NEXT, match_length=3, score=(1, 2), cube=2, cube_owner=1, dice=(6, 1))
    over = state.move(Move.of((1, 0), (1, 0)))
    assert over.score == (5, 2) and over.match_over and over.winner == 0 and over.away() == (0, 1)
    assert MatchState.from_gnubg_id(over.gnubg_id).score == (5, 2)


def test_beaver_then_take_and_beaver_then_drop() -> None:
    beavered = DOUBLED.beaver()  # player 1 doubled, player 0 beavers
    assert (beavered.cube, beavered.cube_owner, beavered.turn, beavered.doubled) == (2, 0, 1, True)
    with pytest.raises(IllegalActionError, match="beavered already"):
        beavered.beaver()
    taken = beavered.take()
    assert (taken.cube, taken.cube_owner, taken.turn) == (4, 0, 1)
    assert not taken.doubled and not taken.beavered
    dropped = beavered.drop()
    assert dropped.last_result == GameResult(0, 2, ResignLevel.SINGLE, GameState.DROPPED)
    assert MatchState.from_gnubg_id(beavered.gnubg_id) == beavered.replace(game_number=0)
    no_beavers = _to_roll(MatchState.new_session(Rules(beavers=False)), 1).double()
    with pytest.raises(IllegalActionError, match="beavers are off"):
        no_beavers.beaver()
    with pytest.raises(IllegalActionError, match="pass"):
        playing(cube=MAX_CUBE // 2, cube_owner=0).double().beaver()


# -- resignations ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_resignation_accepted_scores_cube_times_level(level: int) -> None:
    state = DOUBLED.take()  # cube 2 owned by player 0, player 1 to roll
    assert state.result_points(level) == 2 * level
    offered = state.resign(level)
    assert (offered.resigned, offered.turn) == (level, 0)
    done = offered.accept_resignation()
    assert done.last_result == GameResult(0, 2 * level, ResignLevel(level), GameState.RESIGNED)
    assert done.score == (2 * level, 0) and done.game_state == GameState.RESIGNED


def test_declined_resignation_blocks_equal_or_lower_offers_until_the_next_action() -> None:
    declined = TO_ROLL.resign(2).reject_resignation()
    assert (declined.resigned, declined.turn, declined.resignation_declined) == (0, 1, 2)
    for level in (1, 2):
        with pytest.raises(IllegalActionError, match="declined"):
            declined.resign(level)
    assert declined.resign(3).resigned == 3
    rolled = declined.roll((4, 3))
    assert rolled.resign(1).resigned == 1
    assert declined.gnubg_id == TO_ROLL.gnubg_id  # the declined offer is not part of the ID


# -- IDs of whole states: hypothesis ------------------------------------------------------------------------


@st.composite
def playing_states(draw: st.DrawFn, pending: bool = True) -> MatchState:
    """Consistent states of a game in progress, with a double, beaver or resignation pending now and then."""
    length = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 7, 9, 15, 25, 64]))
    if length:
        score = (draw(st.integers(0, length - 1)), draw(st.integers(0, length - 1)))
        crawford = length > 1 and length - 1 in score and draw(st.booleans())
        rules = Rules(crawford=True, jacoby=draw(st.booleans()), beavers=draw(st.booleans()))
    else:
        score = (draw(st.integers(0, 999)), draw(st.integers(0, 999)))
        crawford = False
        rules = Rules(crawford=True, jacoby=draw(st.booleans()), beavers=draw(st.booleans()))
    on_roll = draw(st.integers(0, 1))
    kind = draw(
        st.sampled_from(["roll", "move", "doubled", "beavered", "resigned"] if pending else ["roll", "move"])
    )
    if crawford and kind in ("doubled", "beavered"):
        kind = "roll"
    if length and kind == "beavered":
        kind = "doubled"
    cube, owner = 1, -1
    if not crawford and draw(st.booleans()):
        cube, owner = 1 << draw(st.integers(1, 12)), draw(st.integers(0, 1))
    if kind in ("doubled", "beavered") and owner == 1 - on_roll:
        owner = on_roll
    if kind == "beavered":
        cube, owner = max(cube, 2), 1 - on_roll
        rules = Rules(crawford=True, jacoby=rules.jacoby, beavers=True)
    dice = (0, 0)
    if kind in ("move", "resigned") and draw(st.booleans()):
        dice = (draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    return MatchState(
        match_length=length,
        score=score,
        rules=rules,
        game_state=GameState.PLAYING,
        position=draw(positions()),
        on_roll=on_roll,
        turn=1 - on_roll if kind in ("doubled", "resigned") else on_roll,
        cube=cube,
        cube_owner=owner,
        crawford=crawford,
        dice=dice,
        doubled=kind in ("doubled", "beavered"),
        beavered=kind == "beavered",
        resigned=draw(st.integers(1, 3)) if kind == "resigned" else 0,
    )


@settings(max_examples=200, deadline=None)
@given(playing_states())
def test_state_to_gnubg_id_and_back(state: MatchState) -> None:
    gnubg_id = state.gnubg_id
    again = MatchState.from_gnubg_id(gnubg_id, rules=state.rules)
    assert again == state
    assert again.gnubg_id == gnubg_id


def _random_key(rng: random.Random) -> MatchKey:
    """Any match key MatchKey accepts, consistent with a real state or not."""
    length = rng.choice([0, rng.randint(1, 64)])
    state = rng.choice(list(GameState))
    finished = state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
    top = (length + 3 if finished else length) if length else (1 << 15) - 1
    return MatchKey(
        cube=1 << rng.choice([0, 0, rng.randint(0, 15)]),
        cube_owner=rng.choice([-1, 0, 1]),
        move=rng.randint(0, 1),
        crawford=bool(length) and rng.random() < 0.2,
        game_state=state,
        turn=rng.randint(0, 1),
        doubled=rng.random() < 0.2,
        resigned=rng.choice([0, 0, 0, rng.randint(1, 3)]),
        dice=rng.choice([(0, 0), (rng.randint(1, 6), rng.randint(1, 6))]),
        match_length=length,
        score=(rng.randint(0, top), rng.randint(0, top)),
        jacoby=rng.random() < 0.5,
    )


match_keys = st.builds(_random_key, st.randoms(use_true_random=False))


@settings(max_examples=200, deadline=None)
@given(match_keys, positions(allow_finished=True))
def test_any_gnubg_id_reads_back_to_itself_or_is_refused(key: MatchKey, position: Position) -> None:
    """ID -> state -> ID for every match key and position: the same ID, or a typed error for an impossible
    state. Dice are written larger first, as gnubg does."""
    assert MatchKey.decode(key.encode()) == key
    gnubg_id = f"{position.position_id}:{key.encode()}"
    try:
        state = MatchState.from_gnubg_id(gnubg_id)
    except InvalidIdError:
        return
    expected = dataclasses.replace(key, dice=(max(key.dice), min(key.dice)))
    assert state.gnubg_id == f"{position.position_id}:{expected.encode()}"


def test_random_gnubg_ids_read_back_often_enough() -> None:
    """The property above is not vacuous: a fair share of random match keys describe a state."""
    rng = random.Random(11)
    states = 0
    for _ in range(2000):
        key = _random_key(rng)
        try:
            state = MatchState.from_gnubg_id(f"{random_position(rng).position_id}:{key.encode()}")
        except InvalidIdError:
            continue
        states += 1
        assert MatchState.from_gnubg_id(state.gnubg_id) == state
    assert states >= 500


@pytest.mark.parametrize(
    "text",
    [
        "4HPwATDgc/ABMA:cAkAAAAAAAAA:x",  # three parts
        "4HPwATDgc/ABM:cAkAAAAAAAAA",  # short position ID
        "4HPwATDgc/ABMA:cAkAAAAAAAA",  # short match ID
        "4HPwATDgc/ABMA:cAkAAAAA!AAA",  # not base64
        "4HPwATDgc/ABMA:8AkAAAAAAAAA",  # Crawford flag in money play
        "4HPwATDgc/ABMA:8AmgAAAAAAAE",  # Crawford game at 0-0
        "4HPwATDgc/ABMA:cJEFAAAAAAAA",  # a double pending after the roll
        "4HPwATDgc/ABMA:cAkAAAAAAAAI",  # bit 67 set
        "AAAAAAAAAAAAAA:cAkAAAAAAAAA",  # a game in progress on an empty board
    ],
)
def test_bad_gnubg_ids_raise_invalid_id(text: str) -> None:
    with pytest.raises(InvalidIdError):
        MatchState.from_gnubg_id(text)


def test_from_gnubg_id_rejects_non_strings() -> None:
    with pytest.raises(InvalidIdError):
        MatchState.from_gnubg_id(None)  # type: ignore[arg-type]


# -- XGID ------------------------------------------------------------------------------------------------

XGIDS = load_jsonl("gnubg_xgid.jsonl")


def test_opening_xgid() -> None:
    state = parse_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    assert state.position == Position.initial() and state.on_roll == 1 and state.dice == (0, 0)
    assert state.is_money and state.rules == Rules(crawford=True, jacoby=False, beavers=False)
    assert state.gnubg_id == "4HPwATDgc/ABMA:cAkAAAAAAAAE"
    assert format_xgid(state) == "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


@pytest.mark.parametrize("vector", XGIDS, ids=[v["xgid"][5:31] for v in XGIDS])
def test_xgid_reads_as_gnubg_reads_it(vector: dict[str, str]) -> None:
    state = parse_xgid(vector["xgid"])
    seen_by_gnubg = state
    if state.doubled:  # gnubg steps back to the moment before the double
        seen_by_gnubg = seen_by_gnubg.replace(doubled=False, turn=state.on_roll)
    if state.on_roll == 0:  # gnubg puts the player on roll at the bottom by swapping the players
        seen_by_gnubg = seen_by_gnubg.swap_players()
    assert seen_by_gnubg.gnubg_id == vector["gnubgid"]
    max_cube_log = int(vector["xgid"].rsplit(":", 1)[1])
    formatted = format_xgid(state, max_cube_log)
    assert parse_xgid(formatted) == state
    if ":1:7:10" not in vector["xgid"]:  # except the one whose Crawford flag gnubg drops (nobody 1-away)
        assert formatted == vector["xgid"]


@settings(max_examples=200, deadline=None)
@given(playing_states(pending=False), st.booleans())
def test_xgid_round_trip(state: MatchState, doubled: bool) -> None:
    if doubled and state.may_double(state.on_roll):
        state = state.double()
    text = format_xgid(state)
    # XGID has no Crawford or beaver rule in match play, and no Crawford rule in money play: as gnubg reads it
    if state.is_money:
        rules = Rules(crawford=True, jacoby=state.rules.jacoby, beavers=state.rules.beavers)
    else:
        rules = Rules(crawford=True, jacoby=False, beavers=False)
    assert parse_xgid(text) == state.replace(rules=rules)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "fields"),
        ("XGID=-b----E-C---eE---c-e---B-:0:0:1:00:0:0:0:0:10", "characters"),
        ("XGID=-b----E-C---eE---c-e----B*:0:0:1:00:0:0:0:0:10", "board character"),
        ("XGID=Ab----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "index 0"),
        ("XGID=-b----E-C---eE---c-e----Bb:0:0:1:00:0:0:0:0:10", "index 25"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:B:0:0:0:0:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:72:0:0:0:0:10", "dice"),
        ("XGID=-b----E-C---eE---c-e----B-:0:2:1:00:0:0:0:0:10", "cube owner"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10", "on roll"),
        ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", "not a number"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:7:10", "rules"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:7:0:0:7:10", "score"),
        ("XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10", "board character"),
        ("XGID=-b----E-C---eE---c-e----I-:0:0:1:00:0:0:0:0:10", "chequers"),
    ],
)
def test_bad_xgids_raise_invalid_id(text: str, message: str) -> None:
    with pytest.raises(InvalidIdError, match=message):
        parse_xgid(text)


def test_format_xgid_refuses_what_it_cannot_hold() -> None:
    for state in (RESIGNED, FINISHED, DOUBLED.beaver(), MatchState.new_session()):
        with pytest.raises(InvalidIdError):
            format_xgid(state)
    assert parse_xgid(format_xgid(DOUBLED)) == DOUBLED.replace(game_number=0)


# -- value semantics --------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [MatchState(), OPENING_61, DOUBLED.beaver(), RESIGNED, FINISHED, MATCH_3])
def test_repr_rebuilds_the_state(state: MatchState) -> None:
    namespace = {
        "MatchState": MatchState,
        "Rules": Rules,
        "GameResult": GameResult,
        "GameState": GameState,
        "ResignLevel": ResignLevel,
        "Position": Position,
    }
    assert eval(repr(state), namespace) == state


def test_inconsistent_fields_raise() -> None:
    with pytest.raises(InvalidMatchStateError, match="ends a 5-point match"):
        playing(match_length=5, score=(5, 0))
    with pytest.raises(InvalidMatchStateError, match="after the dice"):
        playing(doubled=True, turn=1, dice=(3, 1))
    with pytest.raises(InvalidMatchStateError, match="nothing to answer"):
        playing(turn=1)
    with pytest.raises(InvalidMatchStateError, match="centred"):
        playing(match_length=5, score=(4, 0), crawford=True, cube=2, cube_owner=0)
    with pytest.raises(InvalidMatchStateError):
        MatchState.new_match(65)
    with pytest.raises(IllegalActionError, match="money"):
        MatchState.new_session().away()


def test_swap_players() -> None:
    state = FINISHED.replace(names=("a", "b"))
    swapped = state.swap_players()
    assert swapped.names == ("b", "a") and swapped.score == state.score[::-1]
    assert swapped.last_result is not None and state.last_result is not None
    assert swapped.last_result.winner == 1 - state.last_result.winner
    assert swapped.swap_players() == state


# -- dice ------------------------------------------------------------------------------------------------


def test_mersenne_dice_reproduce_gnubg() -> None:
    # gnubg 1.07: "set seed 1", "new session": "gnubg rolls 3, root rolls 6", then a roll of 6-5
    dice = MersenneDice(1)
    assert dice.opening() == (3, 6)
    assert sorted(dice.roll()) == [5, 6]
    # "set seed 42": openings 3-5, then 6-2, then 5-5 and 4-4 rolled again before 1-3
    dice = MersenneDice(42)
    assert [dice.opening() for _ in range(3)] == [(3, 5), (6, 2), (1, 3)]
    assert dice.drawn == 10


def test_mersenne_repr_rebuilds_the_source() -> None:
    dice = MersenneDice(7)
    for _ in range(5):
        dice.roll()
    copy = eval(repr(dice), {"MersenneDice": MersenneDice})
    assert [copy.roll() for _ in range(20)] == [dice.roll() for _ in range(20)]
    assert isinstance(dice, DiceSource)
    with pytest.raises(InvalidDiceError):
        MersenneDice(-1)


def test_mersenne_dice_are_fair_enough() -> None:
    dice = MersenneDice(2026)
    faces = [0] * 7
    for _ in range(6000):
        a, b = dice.roll()
        faces[a] += 1
        faces[b] += 1
    assert all(1800 < n < 2200 for n in faces[1:])


def test_manual_dice() -> None:
    dice = ManualDice(["62", (3, 3), "5-5", (2, 4)])
    assert dice.roll() == (6, 2)
    assert dice.opening() == (2, 4)  # doubles are rolled again
    assert dice.remaining == 0
    with pytest.raises(DiceExhaustedError):
        dice.roll()
    assert isinstance(dice, DiceSource)
    for bad in ("72", "6", (0, 1), ("a", 1), 5):
        with pytest.raises(InvalidDiceError):
            ManualDice([bad])  # type: ignore[list-item]
    assert repr(ManualDice(["31", "55"])) == "ManualDice(['31', '55'])"


def test_parse_roll_forms() -> None:
    assert parse_roll("62") == parse_roll("6-2") == parse_roll("6,2") == parse_roll("6 2") == (6, 2)
    with pytest.raises(InvalidDiceError, match="'612'"):
        parse_roll("612")


def test_file_dice(tmp_path: Path) -> None:
    good = tmp_path / "dice.txt"
    good.write_text("62 31 55\n# a comment\n14\n  23  # trailing\n", encoding="utf-8")
    dice = FileDice(good)
    assert [dice.roll() for _ in range(5)] == [(6, 2), (3, 1), (5, 5), (1, 4), (2, 3)]
    with pytest.raises(DiceExhaustedError):
        dice.roll()
    bad = tmp_path / "bad.txt"
    bad.write_text("62\n31 7x\n", encoding="utf-8")
    with pytest.raises(DiceFileError, match=r"bad\.txt, line 2: '7x'"):
        FileDice(bad)
    with pytest.raises(DiceFileError, match="cannot read"):
        FileDice(tmp_path / "missing.txt")
    assert parse_dice_text("11\n22") == [(1, 1), (2, 2)]


def test_random_position_helper_gives_valid_positions() -> None:
    rng = random.Random(5)
    seen_bar = seen_off = False
    for _ in range(300):
        pos = random_position(rng)
        assert Position(pos.me, pos.opp) == pos and not pos.is_over()
        seen_bar |= any(pos.bar)
        seen_off |= any(pos.off)
    assert seen_bar and seen_off
