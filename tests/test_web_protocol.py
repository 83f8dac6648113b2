"""The WebSocket protocol without sockets: the JSON codec (every message both ways, every kind of bad input),
the board drawn for a viewer (sides, legal plays, actions) and the follower that turns a match's successive
records into events."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import legal_plays
from engine.position import Position
from engine.record import Action, ActionKind, MatchRecord, RecordBuilder
from protocols.web import messages as wm
from protocols.web.views import (
    FollowError,
    RecordFollower,
    apply_action,
    board_view,
    event_message,
    viewer_actions,
)
from tests.strategies import positions

FIBS_RULES = Rules(crawford=True, jacoby=False, beavers=False)

# -- the codec ----------------------------------------------------------------------------------------------

CLIENT_SAMPLES = [
    ({"type": "hello", "version": 1}, wm.Hello(1)),
    ({"type": "hello", "version": 1, "client": "x"}, wm.Hello(1, "x")),
    ({"type": "login", "name": "alice", "password": "pw12"}, wm.Login("alice", "pw12")),
    ({"type": "register", "name": "alice", "password": "pw12"}, wm.Register("alice", "pw12")),
    ({"type": "resume", "name": "alice", "token": "k3Y-_x"}, wm.Resume("alice", "k3Y-_x")),
    ({"type": "logout"}, wm.Logout()),
    ({"type": "list"}, wm.ListLobby()),
    ({"type": "invite", "name": "bob", "length": 5}, wm.Invite("bob", 5)),
    ({"type": "invite", "name": "bob", "length": None}, wm.Invite("bob", None)),
    ({"type": "invite", "name": "bob"}, wm.Invite("bob", 1)),
    ({"type": "accept_invitation", "name": "bob"}, wm.AcceptInvitation("bob")),
    ({"type": "ready", "on": True}, wm.Ready(True)),
    ({"type": "roll"}, wm.Roll()),
    ({"type": "double"}, wm.Double()),
    ({"type": "take"}, wm.Take()),
    ({"type": "drop"}, wm.Drop()),
    ({"type": "beaver"}, wm.Beaver()),
    ({"type": "move", "steps": [[24, 18], [18, 13]]}, wm.MovePlay(((24, 18), (18, 13)))),
    ({"type": "move", "steps": [[25, 22], [6, 0]]}, wm.MovePlay(((25, 22), (6, 0)))),
    ({"type": "resign", "level": "gammon"}, wm.Resign("gammon")),
    ({"type": "accept_resign"}, wm.AcceptResign()),
    ({"type": "reject_resign"}, wm.RejectResign()),
    ({"type": "next_game"}, wm.NextGame()),
    ({"type": "leave"}, wm.Leave()),
    ({"type": "watch", "match": "m-1", "seat": 1}, wm.Watch("m-1", 1)),
    ({"type": "unwatch"}, wm.Unwatch()),
    ({"type": "chat", "text": "hi there", "scope": "say"}, wm.Chat("hi there", "say")),
    ({"type": "chat", "text": "psst", "scope": "tell", "to": "bob"}, wm.Chat("psst", "tell", "bob")),
]


def test_every_client_message_type_has_a_sample() -> None:
    assert {type(m) for _, m in CLIENT_SAMPLES} == set(wm.CLIENT_MESSAGES)


@pytest.mark.parametrize(("data", "expected"), CLIENT_SAMPLES, ids=lambda x: str(x)[:40])
def test_client_messages_parse_and_render_back(data: dict[str, object], expected: wm.Message) -> None:
    parsed = wm.parse_client(json.dumps(data))
    assert parsed == expected
    assert wm.parse_client(wm.render(parsed)) == parsed
    assert wm.parse_client(json.dumps(data).encode("utf-8")) == expected  # a binary frame reads the same


def test_unknown_fields_are_ignored_for_later_minor_versions() -> None:
    assert wm.parse_client('{"type": "roll", "hurry": true}') == wm.Roll()


BAD_CLIENT = [
    ("not json", wm.MessageSyntaxError, "not JSON"),
    ("[1, 2]", wm.MessageSyntaxError, "object"),
    ('{"version": 1}', wm.MessageSyntaxError, "type"),
    ('{"type": 7}', wm.MessageSyntaxError, "type"),
    ('{"type": "fly"}', wm.UnknownMessageError, "fly"),
    ('{"type": "login", "name": "alice"}', wm.MessageFieldError, "password: missing"),
    ('{"type": "login", "name": "al ice", "password": "x"}', wm.MessageFieldError, "name"),
    ('{"type": "login", "name": "alice", "password": "a b"}', wm.MessageFieldError, "password"),
    ('{"type": "register", "name": "alice", "password": "abc"}', wm.MessageFieldError, "4 to 128"),
    (
        '{"type": "invite", "name": "bob", "length": true}',
        wm.MessageFieldError,
        "length: expected an integer",
    ),
    ('{"type": "invite", "name": "bob", "length": 100}', wm.MessageFieldError, "length"),
    ('{"type": "invite", "name": "bob", "length": 2.5}', wm.MessageFieldError, "length"),
    ('{"type": "ready", "on": 1}', wm.MessageFieldError, "true or false"),
    ('{"type": "move", "steps": []}', wm.MessageFieldError, "1 to 4 steps"),
    ('{"type": "move", "steps": [[1,2],[3,4],[5,6],[7,8],[9,10]]}', wm.MessageFieldError, "steps"),
    ('{"type": "move", "steps": [[13, 18]]}', wm.MessageFieldError, "13/18"),
    ('{"type": "move", "steps": [[26, 20]]}', wm.MessageFieldError, "26/20"),
    ('{"type": "move", "steps": [[24, 18, 1]]}', wm.MessageFieldError, "steps[0]: expected 2 items"),
    ('{"type": "move", "steps": "24/18"}', wm.MessageFieldError, "expected a list"),
    ('{"type": "move", "steps": [["24", 18]]}', wm.MessageFieldError, "steps[0][0]"),
    ('{"type": "resign", "level": "all"}', wm.MessageFieldError, "single, gammon, backgammon"),
    ('{"type": "watch", "match": "m", "seat": 2}', wm.MessageFieldError, "seat"),
    ('{"type": "watch", "match": ""}', wm.MessageFieldError, "match"),
    ('{"type": "chat", "text": "hi", "scope": "tell"}', wm.MessageFieldError, "to: needed for tell"),
    ('{"type": "chat", "text": "hi", "to": "bob"}', wm.MessageFieldError, "to: needed for tell"),
    ('{"type": "chat", "text": ""}', wm.MessageFieldError, "text"),
    ('{"type": "chat", "text": "two\\nlines"}', wm.MessageFieldError, "one line"),
    (json.dumps({"type": "chat", "text": "x" * 401}), wm.MessageFieldError, "400"),
    (json.dumps({"type": "hello", "version": 1, "client": "x" * 2000}), wm.MessageFieldError, "client"),
    ("[" * 100000, wm.MessageSyntaxError, "at most"),
    (b"\xff\xfe", wm.MessageSyntaxError, "UTF-8"),
]


@pytest.mark.parametrize(("text", "error", "words"), BAD_CLIENT, ids=lambda x: str(x)[:30])
def test_bad_client_messages_raise_typed_errors_naming_the_problem(
    text: str | bytes, error: type[wm.WebProtocolError], words: str
) -> None:
    with pytest.raises(error, match=None) as info:
        wm.parse_client(text)
    assert words in str(info.value)
    assert isinstance(info.value, ValueError)
    assert info.value.code == error.code


def test_each_error_class_has_its_own_code() -> None:
    classes = [wm.MessageSyntaxError, wm.UnknownMessageError, wm.MessageFieldError, wm.VersionError]
    assert len({c.code for c in classes}) == len(classes)


def test_hello_check_wants_this_version_first() -> None:
    assert wm.check_hello(wm.Hello(wm.PROTOCOL_VERSION)) == wm.Hello(wm.PROTOCOL_VERSION)
    with pytest.raises(wm.VersionError, match="version 2"):
        wm.check_hello(wm.Hello(2))
    with pytest.raises(wm.UnknownMessageError, match="first message must be hello"):
        wm.check_hello(wm.Roll())


def test_passwords_never_show_in_a_repr() -> None:
    assert "pw12" not in repr(wm.Login("alice", "pw12"))
    assert "pw12" not in repr(wm.Register("alice", "pw12"))


def test_server_messages_are_not_client_messages_and_back() -> None:
    with pytest.raises(wm.UnknownMessageError):
        wm.parse_client(wm.render(wm.Welcome(1, "gammond")))
    with pytest.raises(wm.UnknownMessageError):
        wm.parse_server(wm.render(wm.Roll()))


SERVER_SAMPLES: list[wm.Message] = [
    wm.Welcome(1, "gammond"),
    wm.LoggedIn("alice", 1500.0, 12, True),
    wm.LoggedOut("logs out"),
    wm.Error("refused", "It's not your turn to move.", "move"),
    wm.Error("bad_json", "not JSON: x"),
    wm.Notice("You invited bob to a 1 point match."),
    wm.Lobby(
        (
            wm.PlayerInfo("alice", False, True, False, "bob", None, 1500.5, 3, True),
            wm.PlayerInfo(
                "gammond", True, True, False, None, None, 1600.0, 9, False, wm.Accepts(1, 7, False)
            ),
        ),
        (wm.MatchInfo("m-1", ("alice", "bob"), 5, (1, 2), 3),),
    ),
    wm.Invitation("bob", None),
    wm.ChatLine("bob", "kibitz", "nice roll"),
    wm.GameEvent("m-1", 4, 1, "move", 3, 0, "alice", (3, 1), ((8, 5), (6, 5)), "8/5 6/5"),
    wm.GameEvent("m-1", 9, 2, "game_end", 12, 1, "bob", points=2, score=(0, 2)),
    wm.Kibitz(
        "m-1",
        1,
        3,
        0,
        "alice",
        (3, 1),
        "8/5 6/5",
        "8/5 6/5",
        0.0,
        (0.55, 0.15, 0.01, 0.1, 0.005),
        0.55,
        0.6,
        0,
    ),
    wm.CubeKibitz("m-1", 2, 5, 1, "bob", 0, "drop", "take", "Double, take", 0.4, 0.6, 1.0, 0.2, 0),
    wm.Analysis("m-1", ()),
    wm.MatchClosed("m-1", "finished", "alice"),
    wm.MatchClosed("m-1", "saved"),
]


def test_every_server_message_type_has_a_sample() -> None:
    samples = {type(m) for m in SERVER_SAMPLES} | {wm.BoardView}  # boards: see the board tests
    assert samples == set(wm.SERVER_MESSAGES)


@pytest.mark.parametrize("message", SERVER_SAMPLES, ids=lambda m: m.TYPE)
def test_server_messages_render_as_json_objects_and_parse_back(message: wm.Message) -> None:
    text = wm.render(message)
    data = json.loads(text)
    assert next(iter(data)) == "type" and data["type"] == message.TYPE
    assert wm.parse_server(text) == message


def test_server_message_fields_are_checked_too() -> None:
    with pytest.raises(wm.MessageFieldError, match=r"players\[0\].rating: expected a number"):
        wm.parse_server(
            '{"type":"lobby","players":[{"name":"a","bot":false,"ready":true,"away":false,"playing":null,'
            '"watching":null,"rating":"high","experience":0,"web":false}],"matches":[]}'
        )
    with pytest.raises(wm.MessageFieldError, match="not a finite number"):
        wm.parse_server('{"type":"logged_in","name":"a","rating":1e999,"experience":0,"ready":true}')


# -- the board for a viewer ---------------------------------------------------------------------------------


def _playing(position: Position, dice: tuple[int, int] = (0, 0), **changes: object) -> MatchState:
    state = MatchState.new_match(5, FIBS_RULES, ("alice", "bob")).new_game((3, 1))
    return state.replace(position=position, dice=dice, **changes)


def test_the_opening_board_from_each_side() -> None:
    state = MatchState.new_match(3, FIBS_RULES, ("alice", "bob")).new_game((5, 2))  # alice (seat 0) opens
    mine = board_view(state, match="m", seq=1, bottom_seat=0, viewer_seat=0)
    theirs = board_view(state, match="m", seq=1, bottom_seat=1, viewer_seat=1)
    # each player sees their own 6-point with 5 chequers and the other's 24-point anchor at their point 1
    for view in (mine, theirs):
        assert view.points[5] == 5 and view.points[23] == 2 and view.points[0] == -2 and view.points[18] == -5
        assert view.pips == (167, 167) and view.bar == (0, 0) and view.off == (0, 0)
    assert mine.names == ("alice", "bob") and mine.seats == (0, 1)
    assert theirs.names == ("bob", "alice") and theirs.seats == (1, 0)
    assert mine.on_roll == 0 and theirs.on_roll == 1 and mine.dice == (5, 2)
    assert mine.actions == ("move", "resign", "leave") and theirs.actions == ("resign", "leave")
    assert sorted(p.text for p in mine.legal) == [  # gnubg's list for 52 at the start
        "13/11 13/8",
        "13/11 8/3",
        "13/6",
        "13/8 6/4",
        "24/22 13/8",
        "24/22 8/3",
        "8/3 6/4",
        "8/6 8/3",
    ]
    assert len(mine.legal) == len(legal_plays(state.position, (5, 2))) and theirs.legal == ()
    assert (
        mine.position_id + ":" + mine.match_id == state.gnubg_id == theirs.position_id + ":" + theirs.match_id
    )
    assert mine.state == "playing" and mine.player and theirs.player


@settings(max_examples=60, deadline=None)
@given(positions(), st.sampled_from([(6, 5), (3, 3), (2, 1)]), st.integers(0, 1))
def test_any_board_round_trips_and_counts_every_chequer(
    position: Position, dice: tuple[int, int], seat: int
) -> None:
    state = _playing(position, dice, on_roll=seat, turn=seat)
    view = board_view(state, match="m", seq=7, bottom_seat=seat, viewer_seat=seat)
    assert wm.parse_server(wm.render(view)) == view
    mine = sum(n for n in view.points if n > 0) + view.bar[0] + view.off[0]
    theirs = -sum(n for n in view.points if n < 0) + view.bar[1] + view.off[1]
    assert mine == theirs == 15
    assert view.pips == position.pips()
    plays = [p for p in legal_plays(position, dice) if p.move]
    assert sorted(p.steps for p in view.legal) == sorted(tuple(p.move.steps) for p in plays)
    other = board_view(state, match="m", seq=7, bottom_seat=1 - seat, viewer_seat=None)
    assert other.points == tuple(-n for n in reversed(view.points))  # the same board turned round
    assert other.bar == view.bar[::-1] and other.off == view.off[::-1] and other.actions == () == other.legal


def test_a_spectator_sees_no_actions_and_a_wrong_seat_is_refused() -> None:
    state = MatchState.new_match(3, FIBS_RULES, ("alice", "bob")).new_game((5, 2))
    view = board_view(state, match="m", seq=1, bottom_seat=1, viewer_seat=None)
    assert not view.player and view.actions == () and view.legal == ()
    with pytest.raises(ValueError, match="cannot look"):
        board_view(state, match="m", seq=1, bottom_seat=0, viewer_seat=1)


def test_actions_follow_the_state() -> None:
    start = MatchState.new_match(5, FIBS_RULES, ("alice", "bob")).new_game((5, 2))
    moved = start.move(legal_plays(start.position, start.dice)[0].move)  # bob on roll, dice not rolled
    assert viewer_actions(moved, 1) == ("roll", "double", "resign", "leave")
    assert viewer_actions(moved, 0) == ("resign", "leave")
    doubled = moved.double()
    assert viewer_actions(doubled, 0) == ("take", "drop", "leave")
    assert viewer_actions(doubled, 0, may_beaver=True) == ("take", "drop", "beaver", "leave")
    assert viewer_actions(doubled, 1) == ("leave",)
    resigned = moved.resign(2)
    assert viewer_actions(resigned, 0) == ("accept_resign", "reject_resign", "leave")
    over = resigned.accept_resignation()
    assert over.game_state != GameState.PLAYING
    assert viewer_actions(over, 0) == ("next_game", "leave")
    assert viewer_actions(over, 0, joined={0}) == ("leave",)
    crawford = moved.replace(crawford=True, score=(4, 2))
    assert "double" not in viewer_actions(crawford, 1) and "roll" in viewer_actions(crawford, 1)
    won = MatchState.new_match(1, FIBS_RULES).new_game((5, 2)).resign(1).accept_resignation()
    assert won.match_over and viewer_actions(won, 0) == () == viewer_actions(won, 1)
    view = board_view(won, match="m", seq=3, bottom_seat=1, viewer_seat=1)
    assert view.state == "over" and view.winner == 0 and view.score == (1, 0)  # seat 1 won: the bottom side


def test_the_cube_and_a_pending_double_from_both_sides() -> None:
    start = MatchState.new_match(5, FIBS_RULES, ("alice", "bob")).new_game((5, 2))
    moved = start.move(legal_plays(start.position, start.dice)[0].move)
    taken = moved.double().take()  # alice owns a 2-cube
    for seat, owner in ((0, 0), (1, 1)):
        view = board_view(taken, match="m", seq=1, bottom_seat=seat, viewer_seat=seat)
        assert view.cube == 2 and view.cube_owner == (0 if seat == 0 else 1)
        assert owner == seat
    pending = board_view(moved.double(), match="m", seq=1, bottom_seat=0, viewer_seat=0)
    assert pending.doubled and pending.to_act == 0 and pending.on_roll == 1 and pending.dice is None


# -- following a match ------------------------------------------------------------------------------------


def _random_match(seed: int, length: int = 3) -> list[tuple[MatchRecord, MatchState]]:
    """Every record of a random match (cube, resignations and all) with its state, after each builder call."""
    rng = random.Random(seed)
    builder = RecordBuilder(length, ("alice", "bob"), FIBS_RULES)
    records = []
    while not builder.state.match_over:
        state = builder.state
        if state.game_state != GameState.PLAYING:
            a, b = rng.sample(range(1, 7), 2)
            builder.start_game((a, b))
        elif state.resigned:
            (builder.add_accept if rng.random() < 0.5 else builder.add_reject)(state.turn)
        elif state.doubled:
            (builder.add_take if rng.random() < 0.7 else builder.add_drop)(state.turn)
        elif not state.dice[0]:
            if state.may_double(state.on_roll) and rng.random() < 0.1:
                builder.add_double(state.on_roll)
            elif rng.random() < 0.02 and state.resignation_declined < 3:
                builder.add_resign(state.on_roll, rng.randint(state.resignation_declined + 1, 3))
            else:
                builder.add_roll(state.on_roll, (rng.randint(1, 6), rng.randint(1, 6)))
        else:
            builder.add_move(state.on_roll, rng.choice(legal_plays(state.position, state.dice)).move)
        records.append((builder.record(), builder.state))
    return records


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_follower_reports_every_action_once_in_order(seed: int) -> None:
    records = _random_match(seed)
    follower = RecordFollower(records[0][0].initial_state())
    steps = []
    for record, state in records:
        steps += follower.follow(record)
        assert follower.state == state
    final = records[-1][0]
    played = [a for g in final.games for a in g.actions]
    assert [s.action for s in steps if s.action is not None and s.kind != "roll"] == [
        a for a in played if a.kind != ActionKind.ROLL
    ]
    kinds = [s.kind for s in steps]
    assert kinds.count("game_start") == kinds.count("game_end") == len(final.games)
    assert kinds.count("match_end") == 1 and kinds[-1] == "match_end"
    for step in steps:  # each action applies to the state before it
        if step.action is not None:
            assert apply_action(step.before, step.action) == step.after
        event = event_message(step, match="m", seq=1)
        assert wm.parse_server(wm.render(event)) == event
    ends = [event_message(s, match="m", seq=1) for s in steps if s.kind == "match_end"]
    assert ends[0].score == final.final_score and ends[0].name == ["alice", "bob"][ends[0].player or 0]


def test_a_roll_is_reported_when_rolled_and_its_move_when_played() -> None:
    builder = RecordBuilder(3, ("alice", "bob"), FIBS_RULES)
    builder.start_game((6, 1))
    follower = RecordFollower(builder.record().initial_state())
    assert [s.kind for s in follower.follow(builder.record())] == ["game_start"]
    builder.add_move(0, legal_plays(builder.state.position, (6, 1))[0].move)
    builder.add_roll(1, (4, 2))
    assert [s.kind for s in follower.follow(builder.record())] == ["move", "roll"]
    assert follower.follow(builder.record()) == []  # nothing new
    builder.add_move(1, legal_plays(builder.state.position, (4, 2))[0].move)  # merges with the roll
    steps = follower.follow(builder.record())
    assert [(s.kind, s.index) for s in steps] == [("move", 2)]
    assert steps[0].before.dice == (4, 2) and follower.state == builder.state


def test_a_resumed_match_is_followed_from_where_it_stands() -> None:
    records = _random_match(4)
    middle, state = records[len(records) // 2]
    follower = RecordFollower(state, middle)
    steps = []
    for record, _ in records[len(records) // 2 + 1 :]:
        steps += follower.follow(record)
    assert follower.state == records[-1][1]
    assert steps and all(s.game >= len(middle.games) for s in steps)


def test_a_record_that_does_not_continue_the_match_is_refused() -> None:
    records = [record for record, _ in _random_match(5)]
    follower = RecordFollower(records[0].initial_state())
    follower.follow(records[-1])
    with pytest.raises(FollowError, match=r"games|actions"):
        follower.follow(records[0])
    record = records[20]
    follower = RecordFollower(records[0].initial_state())
    follower.follow(record)
    last = record.games[-1]
    bad = last.__class__(last.score, last.opening_roll, (*last.actions, Action(0, ActionKind.TAKE)))
    with pytest.raises(FollowError, match="does not continue"):
        follower.follow(record.replace(games=(*record.games[:-1], bad)))
