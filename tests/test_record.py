"""Match records (engine/record.py): value types, replay through MatchState, RecordBuilder."""

from __future__ import annotations

import datetime
import random

import pytest

from bench._random_records import random_record
from engine.ids import GameState
from engine.match import GameResult, MatchState, ResignLevel, Rules
from engine.moves import Move
from engine.record import (
    Action,
    ActionKind,
    GameRecord,
    MatchRecord,
    RecordBuilder,
    RecordError,
    starting_state,
)

MOVE, ROLL, DOUBLE, TAKE, DROP = (
    ActionKind.MOVE,
    ActionKind.ROLL,
    ActionKind.DOUBLE,
    ActionKind.TAKE,
    ActionKind.DROP,
)
RESIGN, ACCEPT, REJECT, BEAVER = ActionKind.RESIGN, ActionKind.ACCEPT, ActionKind.REJECT, ActionKind.BEAVER


def play(player: int, dice: tuple[int, int], *steps: tuple[int, int]) -> Action:
    return Action(player, MOVE, dice=dice, move=Move(steps))


# Player 1 opens with 31 (8/5 6/5), player 0 answers 52, player 1 doubles, player 0 takes, then resigns a gammon
SHORT_GAME = (
    play(1, (3, 1), (8, 5), (6, 5)),
    play(0, (5, 2), (13, 8), (13, 11)),
    Action(1, DOUBLE, cube=2),
    Action(0, TAKE),
    play(1, (6, 4), (24, 18), (13, 9)),
    Action(0, RESIGN, level=2),
    Action(1, ACCEPT),
)
SHORT_RESULT = GameResult(1, 4, ResignLevel.GAMMON, GameState.RESIGNED)


def short_record(**changes: object) -> MatchRecord:
    game = GameRecord((0, 0), (1, 3), SHORT_GAME, SHORT_RESULT)
    return MatchRecord(("Alice", "Bob"), 7, games=(game,)).replace(**changes)


def test_a_short_game_replays_to_its_result() -> None:
    record = short_record()
    states = list(record.replay())
    assert len(states) == 2 + len(SHORT_GAME)  # before the match, the game's start, one per action
    final = record.final_state()
    assert final.score == (0, 4) and final.game_state == GameState.RESIGNED
    assert final.last_result == SHORT_RESULT
    assert record.final_score == (0, 4)
    steps = list(record.steps())
    assert [s.action for s in steps] == list(SHORT_GAME)
    assert steps[3].before.doubled and steps[3].after.cube == 2


def test_values_rebuild_from_their_repr() -> None:
    record = short_record(
        date=datetime.date(2024, 6, 1),
        time=datetime.time(21, 53),
        site="FIBS",
        match_id="fibs-42",
        tags=(("Player 1 Elo", "1600"),),
        rules=Rules(crawford=False),
    )
    namespace = {
        "Action": Action,
        "ActionKind": ActionKind,
        "GameRecord": GameRecord,
        "MatchRecord": MatchRecord,
        "Move": Move,
        "GameResult": GameResult,
        "ResignLevel": ResignLevel,
        "GameState": GameState,
        "Rules": Rules,
        "datetime": datetime,
    }
    assert eval(repr(record), namespace) == record
    assert repr(Action(0, TAKE)) == "Action(player=0, kind=ActionKind.TAKE)"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"player": 2, "kind": TAKE}, "player 2"),
        ({"player": 0, "kind": "hop"}, "unknown action kind"),
        ({"player": 0, "kind": MOVE, "move": Move()}, "needs dice"),
        ({"player": 0, "kind": MOVE, "dice": (7, 1), "move": Move()}, "1..6"),
        ({"player": 0, "kind": MOVE, "dice": (3, 1)}, "needs a Move"),
        ({"player": 0, "kind": TAKE, "dice": (3, 1)}, "has no dice"),
        ({"player": 0, "kind": RESIGN, "level": 4}, "level"),
        ({"player": 0, "kind": TAKE, "level": 1}, "no resignation level"),
        ({"player": 0, "kind": DOUBLE, "cube": 3}, "cube value"),
    ],
)
def test_malformed_actions_are_typed_errors(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(RecordError, match=fragment):
        Action(**kwargs)  # type: ignore[arg-type]


def test_malformed_records_are_typed_errors() -> None:
    with pytest.raises(RecordError, match="score"):
        GameRecord((0, -1), (3, 1))
    with pytest.raises(RecordError, match="opening roll"):
        GameRecord((0, 0), (3, 9))
    with pytest.raises(RecordError, match="names"):
        MatchRecord(("only one",), 3)  # type: ignore[arg-type]
    with pytest.raises(RecordError, match="match length"):
        MatchRecord(("a", "b"), 65)


@pytest.mark.parametrize(
    ("index", "action", "fragment"),
    [
        (2, play(0, (5, 2), (13, 7)), "not a legal play"),
        (2, play(1, (5, 2), (13, 8), (13, 11)), "player 0's turn"),
        (2, play(0, (6, 2), (13, 7), (13, 11)), "the dice rolled"),  # only after an unplayed roll
        (3, Action(0, DOUBLE), "player 1's turn"),
        (3, Action(1, DOUBLE, cube=4), "cube offered is 2"),
        (4, Action(0, BEAVER), "match play"),
        (6, Action(0, ACCEPT), "no resignation"),
    ],
)
def test_an_inconsistent_record_names_game_and_action(index: int, action: Action, fragment: str) -> None:
    actions = list(SHORT_GAME)
    if fragment == "the dice rolled":
        actions[1:1] = [Action(0, ROLL, dice=(5, 2))]
        index += 1
    actions[index - 1] = action
    record = short_record(games=(GameRecord((0, 0), (1, 3), tuple(actions)),))
    with pytest.raises(RecordError, match=fragment) as info:
        record.final_state()
    assert info.value.game == 1 and info.value.action == index
    assert str(info.value).startswith(f"game 1, action {index}: ")


def test_scores_and_results_must_follow_from_the_games() -> None:
    game = GameRecord((0, 0), (1, 3), SHORT_GAME, SHORT_RESULT)
    second = GameRecord((0, 3), (3, 1), (play(0, (3, 1), (8, 5), (6, 5)),))
    with pytest.raises(RecordError, match=r"game 2: the score before it is recorded as 0-3, .* give 0-4"):
        MatchRecord(("a", "b"), 7, games=(game, second)).final_state()
    wrong = GameRecord((0, 0), (1, 3), SHORT_GAME, GameResult(1, 2, ResignLevel.SINGLE, GameState.RESIGNED))
    with pytest.raises(RecordError, match="game 1: result recorded as"):
        MatchRecord(("a", "b"), 7, games=(wrong,)).final_state()
    unfinished = GameRecord((0, 0), (1, 3), SHORT_GAME[:3])
    later = GameRecord((0, 0), (3, 1))
    with pytest.raises(RecordError, match="unfinished, yet another game follows"):
        MatchRecord(("a", "b"), 7, games=(unfinished, later)).final_state()
    # an unfinished last game is a record of a match in progress
    assert MatchRecord(("a", "b"), 7, games=(unfinished,)).final_state().doubled


def test_a_record_may_start_in_the_middle_of_a_match() -> None:
    state = starting_state(5, Rules(), ("a", "b"), (4, 2))
    assert (
        state.score == (4, 2) and state.crawford
    )  # gnubg's assumption: the first game at 1-away is Crawford
    assert not starting_state(5, Rules(crawford=False), ("a", "b"), (4, 2)).crawford
    with pytest.raises(RecordError):
        starting_state(5, Rules(), ("a", "b"), (5, 2))


def test_the_builder_merges_rolls_with_their_plays_and_splits_off_games() -> None:
    builder = RecordBuilder(3, ("Alice", "Bob"), match_id="m1")
    builder.start_game((1, 3))
    builder.add_move(1, Move(((8, 5), (6, 5))))  # the opening roll's dice come from the game start
    builder.add_roll(0, (5, 2))
    snapshot = builder.record()
    assert snapshot.games[0].actions[-1] == Action(0, ROLL, dice=(5, 2))
    assert snapshot.final_state().dice == (5, 2)
    builder.add_move(0, Move(((13, 8), (13, 11))))
    builder.add_double(1)
    builder.add_drop(0)
    assert not builder.in_game
    builder.start_game((6, 5))
    builder.add_resign(0, 1)
    builder.add_reject(1)
    builder.add_move(0, Move(((24, 18), (18, 13))))
    record = builder.record()
    assert record.match_id == "m1"
    assert [len(g.actions) for g in record.games] == [4, 3]
    assert record.games[0].actions[1] == play(0, (5, 2), (13, 8), (13, 11))
    assert record.games[0].result == GameResult(1, 1, ResignLevel.SINGLE, GameState.DROPPED)
    assert record.games[1].result is None and record.games[1].score == (0, 1)
    assert record.final_state() == builder.state


def test_the_builder_refuses_illegal_actions_and_stays_usable() -> None:
    builder = RecordBuilder(3)
    with pytest.raises(RecordError, match="start_game"):
        builder.add_double(0)
    builder.start_game((3, 1))
    with pytest.raises(RecordError, match="not a legal play"):
        builder.add_move(0, Move(((13, 7),)))
    with pytest.raises(RecordError, match="player 0's turn"):
        builder.add_double(1)
    builder.add_move(0, Move(((8, 5), (6, 5))))
    builder.add_roll(1, (6, 4))
    with pytest.raises(RecordError, match="not a legal play"):
        builder.add_move(1, Move(((24, 12),)))
    assert builder.record().games[0].actions[-1] == Action(1, ROLL, dice=(6, 4))  # the roll still stands
    builder.add_move(1, Move(((24, 18), (13, 9))))
    assert builder.record().games[0].actions[-1] == play(1, (6, 4), (24, 18), (13, 9))
    assert builder.record().final_state() == builder.state


def test_resignations_out_of_turn_replay() -> None:
    # player 0 moves, then resigns while player 1 is to roll: FIBS and gnubg allow it
    builder = RecordBuilder(0, rules=Rules())
    builder.start_game((3, 1))
    builder.add_move(0, Move(((8, 5), (6, 5))))
    builder.add_resign(0, 1)
    builder.add_reject(1)
    assert builder.state.turn == 1 and builder.state.on_roll == 1 and not builder.state.resigned
    with pytest.raises(RecordError, match="declined"):
        builder.add_resign(0, 1)
    builder.add_resign(0, 2)
    builder.add_accept(1)
    record = builder.record()
    assert record.games[0].result == GameResult(1, 2, ResignLevel.GAMMON, GameState.RESIGNED)
    assert record.final_state().score == (0, 2)


def test_beavers_replay_in_money_play() -> None:
    builder = RecordBuilder(0, rules=Rules(beavers=True))
    builder.start_game((4, 2))
    builder.add_move(0, Move(((8, 4), (6, 4))))
    builder.add_double(1)
    builder.add_beaver(0)
    builder.add_drop(1)  # the doubler passes the beaver: the beaverer wins the cube of 2
    assert builder.record().games[0].actions[2] == Action(0, BEAVER, cube=4)
    assert builder.state.score == (2, 0)


def _random_history(rng: random.Random) -> list[MatchState]:
    """A 3-point match played straight on MatchState, every state kept."""
    state = MatchState.new_match(3)
    states = [state]
    while not state.match_over:
        if state.game_state != GameState.PLAYING:
            d0, d1 = rng.sample(range(1, 7), 2)
            state = state.new_game((d0, d1))
        elif state.doubled:
            state = state.take() if rng.random() < 0.7 else state.drop()
        elif state.resigned:
            state = state.accept_resignation()
        elif not state.dice[0]:
            if state.may_double(state.turn) and rng.random() < 0.05:
                state = state.double()
            elif rng.random() < 0.01:
                state = state.resign(rng.randint(1, 3))
            else:
                state = state.roll((rng.randint(1, 6), rng.randint(1, 6)))
        else:
            state = state.move(rng.choice(state.legal_plays()).move)
        states.append(state)
    return states


@pytest.mark.parametrize("seed", range(5))
def test_a_record_from_a_state_history_replays_the_same_states(seed: int) -> None:
    states = _random_history(random.Random(seed))
    record = RecordBuilder.from_history(states, site="test")
    assert record.site == "test"
    assert record.final_state() == states[-1]
    replayed = list(record.replay())
    # every state of the history shows up in the replay, in order (a roll and its move merge into one step)
    positions = iter(replayed)
    assert all(any(s == r for r in positions) for s in states if not (s.dice[0] and s.game_state == 1))


def test_observe_refuses_a_state_that_does_not_follow() -> None:
    states = _random_history(random.Random(9))
    builder = RecordBuilder.from_state(states[0])
    builder.observe(states[0], states[1])
    with pytest.raises(RecordError, match="not the one the record has reached"):
        builder.observe(states[0], states[1])
    with pytest.raises(RecordError, match="no single action"):
        builder.observe(states[1], states[1].replace(position=states[1].position.swap()))


@pytest.mark.parametrize("seed", range(4))
def test_random_self_play_records_replay(seed: int) -> None:
    rng = random.Random(seed)
    record = random_record(rng, length=0 if seed % 2 else 5, rules=Rules(beavers=True), resign_rate=0.02)
    final = record.final_state()
    assert final.score == record.final_score
    assert all(g.result is not None for g in record.games)
    assert record.match_over == (not record.is_money)
