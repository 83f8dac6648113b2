"""The bgammon codec: events as the server writes them (tslocum/bgammon event.go and the server code that fills
them), commands, TCP and WebSocket framing, the board's translation to the engine (cross-checked against the
fake server's own flip), and the tracker that turns a match's events into a record that replays."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings

from bot.bgammon.match import MatchTracker
from engine.formats.mat import read_mat, write_mat
from engine.ids import GameState
from engine.moves import Move, legal_plays
from engine.position import Position
from protocols.bgammon import codec
from protocols.bgammon import events as ev
from protocols.bgammon.board import (
    BgammonBoardError,
    BoardState,
    PlayerInfo,
    move_from_steps,
    spaces_of,
    step_texts,
    win_level,
)
from tests.bgammon_fake_server import Client, FakeBgammonServer, Script, ScriptedOpponent, raw_board
from tests.strategies import positions, random_position

INITIAL = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0, 0, 0]

# A board event as encoding/json writes EventBoard for the second player of a 5-point match: the bot
# ("BOT_gammond", black) has the cube at 2 and is to roll; Guest_alice sees herself as player 1. Two of her
# chequers are borne off, one is on the bar; one of the bot's is on the bar.
BOARD_JSON = (
    '{"Type":"board","Player":"","Started":1767225600,"Ended":0,'
    '"Player1":{"Number":1,"Name":"Guest_alice","Rating":0,"Points":1,"Entered":true,"Inactive":0,"Icon":0},'
    '"Player2":{"Number":2,"Name":"BOT_gammond","Rating":1500,"Points":2,"Entered":true,"Inactive":0,"Icon":3},'
    '"Variant":0,"Board":[2,0,-2,0,0,3,4,0,2,0,0,0,-4,1,0,0,0,-3,0,-5,0,0,0,0,2,0,1,-1],'
    '"Turn":2,"Roll1":0,"Roll2":0,"Roll3":0,"Moves":null,"Winner":0,"Points":5,"Crawford":0,'
    '"DoubleValue":2,"DoublePlayer":1,"DoubleOffered":false,"Reroll":false,"PlayerNumber":1,'
    '"Available":null,"Forced":false,"Spectating":false}'
)


# -- events -----------------------------------------------------------------------------------------------------


def test_board_event_reads_every_field() -> None:
    event = codec.parse_event(BOARD_JSON)
    assert isinstance(event, ev.Board)
    b = event.state
    assert b.player1 == PlayerInfo(1, "Guest_alice", 0, 1) and b.player2.name == "BOT_gammond"
    assert b.player2.rating == 1500 and b.player2.icon == 3
    assert (b.turn, b.dice, b.points, b.double_value, b.double_player) == (2, (0, 0), 5, 2, 1)
    assert b.score == (1, 2) and b.started == 1767225600 and b.moves == () and b.available == ()
    me = b.position(1)
    assert me.bar == (1, 1) and me.off == (2, 0)
    assert (me.me[4], me.me[5], me.me[12], me.me[23]) == (3, 4, 1, 2)  # my 5, 6, 13 and 24 points
    assert me.opp[22] == 2  # their two chequers on my 2 point stand on their 23 point
    assert b.position(2) == me.swap()
    state = b.match_state()
    assert state.game_state == GameState.PLAYING and (state.on_roll, state.turn) == (1, 1)
    assert state.cube == 2 and state.cube_owner == 0 and state.score == (1, 2) and state.match_length == 5
    assert state.position == me.swap()  # seen by the player on roll, the bot
    assert codec.parse_event(codec.encode_event(event)) == event
    assert json.loads(codec.encode_event(event)) == json.loads(BOARD_JSON)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"Type":"welcome","Player":"","PlayerName":"BOT_gammond","Clients":12,"Games":4}',
            ev.Welcome(player_name="BOT_gammond", clients=12, games=4),
        ),
        ('{"Type":"ping","Player":"","Message":"1767225600"}', ev.Ping(message="1767225600")),
        (
            '{"Type":"notice","Player":"","Message":"Created match: BOT_gammond\'s match"}',
            ev.Notice(message="Created match: BOT_gammond's match"),
        ),
        (
            '{"Type":"say","Player":"Guest_alice","Message":"gl hf"}',
            ev.Say(player="Guest_alice", message="gl hf"),
        ),
        (
            '{"Type":"list","Player":"","Games":[{"ID":7,"Password":false,"Points":5,"Players":1,"Rating":15,'
            '"Name":"BOT_gammond\'s match"}]}',
            ev.MatchList(games=(ev.GameListing(7, False, 5, 1, 15, "BOT_gammond's match"),)),
        ),
        ('{"Type":"list","Player":"","Games":null}', ev.MatchList()),
        (
            '{"Type":"failedcreate","Player":"","Reason":"Please leave the match you are in before creating another."}',
            ev.FailedCreate(reason="Please leave the match you are in before creating another."),
        ),
        (
            '{"Type":"joined","Player":"Guest_alice","GameID":7,"PlayerNumber":2}',
            ev.Joined(player="Guest_alice", game_id=7, player_number=2),
        ),
        (
            '{"Type":"failedjoin","Player":"","Reason":"Bots are not allowed to join player matches. Please create a '
            'match instead."}',
            ev.FailedJoin(
                reason="Bots are not allowed to join player matches. Please create a match instead."
            ),
        ),
        ('{"Type":"left","Player":"Guest_alice"}', ev.Left(player="Guest_alice")),
        (
            '{"Type":"failedleave","Player":"","Reason":"You are not currently in a match."}',
            ev.FailedLeave(reason="You are not currently in a match."),
        ),
        (
            '{"Type":"rolled","Player":"BOT_gammond","Roll1":6,"Roll2":1,"Roll3":0,"Selected":false}',
            ev.Rolled(player="BOT_gammond", roll1=6, roll2=1),
        ),
        (
            '{"Type":"failedroll","Player":"","Reason":"It is not your turn to roll."}',
            ev.FailedRoll(reason="It is not your turn to roll."),
        ),
        (
            '{"Type":"moved","Player":"Guest_alice","Moves":[[27,3],[3,8]]}',
            ev.Moved(player="Guest_alice", moves=((27, 3), (3, 8))),
        ),
        (
            '{"Type":"failedmove","Player":"","From":0,"To":0,"Reason":"Illegal move."}',
            ev.FailedMove(reason="Illegal move."),
        ),
        (
            '{"Type":"failedok","Player":"","Reason":"The following legal moves are available: 8/2, 6/2"}',
            ev.FailedOk(reason="The following legal moves are available: 8/2, 6/2"),
        ),
        (
            '{"Type":"win","Player":"BOT_gammond","Points":6,"Rating":0,"Resigned":"Guest_alice"}',
            ev.Win(player="BOT_gammond", points=6, resigned="Guest_alice"),
        ),
    ],
)
def test_documented_events(text: str, expected: ev.BgammonEvent) -> None:
    event = codec.parse_event(text)
    assert event == expected
    assert json.loads(codec.encode_event(event)) == json.loads(text)


def test_unknown_and_plain_text_events_are_kept_not_fatal() -> None:
    settings_event = codec.parse_event('{"Type":"settings","Player":"","AutoPlay":false,"Speed":2}')
    assert settings_event == ev.Unhandled(
        type="settings", data={"Type": "settings", "Player": "", "AutoPlay": False, "Speed": 2}
    )
    assert codec.parse_event('{"Type":"somethingnew","Player":"x"}') == ev.Unhandled(
        player="x", type="somethingnew", data={"Type": "somethingnew", "Player": "x"}
    )
    hello = "hello Welcome to bgammon.org! Please log in by sending the 'login' command."
    assert codec.parse_event(hello) == ev.TextLine(text=hello)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"Player":"x"}', "without a Type"),
        ('{"Type":"board","Board":[0,1,2]}', "28 spaces"),
        ('{"Type":"board","Board":' + json.dumps(INITIAL) + ',"Turn":3}', "Turn"),
        ('{"Type":"board","Board":' + json.dumps([0] * 27 + [9]) + "}", "wrong side"),
        ('{"Type":"board","Board":' + json.dumps(INITIAL) + ',"Moves":[[1]]}', "Moves"),
        ('{"Type":"rolled","Roll1":7}', "outside"),
        ('{"Type":"joined","GameID":"seven"}', "GameID"),
        ('{"Type":"win","Player":5}', "Player"),
    ],
)
def test_malformed_events_are_typed_errors(text: str, fragment: str) -> None:
    with pytest.raises(codec.BgammonEventError, match=fragment):
        codec.parse_event(text)
    [event] = codec.BgammonClientProtocol().receive_message(text)
    assert isinstance(event, ev.Malformed) and fragment in event.error


def test_tcp_framing_buffers_partial_lines() -> None:
    protocol = codec.BgammonClientProtocol()
    ping = b'{"Type":"ping","Player":"","Message":"1"}'
    assert protocol.receive_data(b"hello there\n" + ping[:10]) == [ev.TextLine(text="hello there")]
    assert protocol.receive_data(ping[10:]) == []
    assert protocol.receive_data(b"\r\n\n" + ping) == [ev.Ping(message="1")]
    assert protocol.receive_eof() == [ev.Ping(message="1")]
    assert protocol.receive_eof() == []
    frames = codec.BgammonClientProtocol()
    assert frames.receive_message(ping.decode()) == [ev.Ping(message="1")]
    assert frames.receive_message(b"") == []


def test_an_endless_line_is_cut_rather_than_buffered_forever() -> None:
    protocol = codec.BgammonClientProtocol()
    events = protocol.receive_data(b"x" * (codec.MAX_LINE + 1))
    assert len(events) == 1 and isinstance(events[0], ev.TextLine)
    assert protocol.receive_data(b"y\n") == [ev.TextLine(text="y")]


# -- commands ---------------------------------------------------------------------------------------------------


def test_commands() -> None:
    assert codec.login_json("gammond-v0.1.0/en", "bot_gammond", "two words") == (
        "loginjson gammond-v0.1.0/en bot_gammond two_words"
    )
    assert codec.login_json("gammond-v0.1.0/en") == "loginjson gammond-v0.1.0/en"
    assert codec.redact("loginjson gammond-v0.1.0/en bot_gammond s3cret") == (
        "loginjson gammond-v0.1.0/en bot_gammond ********"
    )
    assert codec.redact("roll") == "roll"
    assert codec.json_mode() == "json on" and codec.json_mode(False) == "json off"
    assert codec.create(5) == "create public 5 0"
    assert codec.create(3, password="pass word", name="Bot match") == "create private pass_word 3 0 Bot match"
    assert codec.join(7) == "join 7" and codec.join("BOT_gammond", "pw") == "join BOT_gammond pw"
    assert codec.move(Move.of((25, 22), (6, 0), (13, 8))) == "move bar/22 6/off 13/8"
    assert codec.say("good game") == "say good game"
    assert codec.pong("1767225600") == "pong 1767225600" and codec.pong() == "pong"
    simple = [
        codec.roll,
        codec.ok,
        codec.double,
        codec.resign,
        codec.reset,
        codec.leave,
        codec.rematch,
        codec.board,
        codec.list_matches,
        codec.disconnect,
    ]
    assert [f() for f in simple] == [
        "roll",
        "ok",
        "double",
        "resign",
        "reset",
        "leave",
        "rematch",
        "board",
        "list",
        "disconnect",
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda: codec.login_json("with space", "bot_x"),
        lambda: codec.login_json("c/en", "bad name"),
        lambda: codec.login_json("c/en", "", "password"),
        lambda: codec.login_json("c/en", "bot_x", "line\nbreak"),
        lambda: codec.create(0),
        lambda: codec.create(128),
        lambda: codec.create(True),  # type: ignore[arg-type]
        lambda: codec.create(3, variant=4),
        lambda: codec.join(0),
        lambda: codec.join("x;y"),
        lambda: codec.move(Move()),
        lambda: codec.say(""),
        lambda: codec.say("two\nlines"),
        lambda: codec.pong("a\rb"),
    ],
)
def test_bad_commands_are_typed_errors(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(codec.BgammonCommandError):
        call()


# -- the board and the engine -----------------------------------------------------------------------------------


def test_initial_board_is_the_initial_position_for_both_players() -> None:
    b = BoardState(board=tuple(INITIAL))
    assert b.position(1) == Position.initial() == b.position(2)
    assert spaces_of(Position.initial()) == tuple([0, *INITIAL[1:25], 0, 0, 0])
    assert b.match_state().game_state == GameState.NONE


@settings(max_examples=80, deadline=None)
@given(positions(allow_finished=True))
def test_spaces_round_trip_and_agree_with_the_fake_servers_flip(pos: Position) -> None:
    mine = spaces_of(pos)
    assert BoardState(board=mine).position(1) == pos
    assert BoardState(board=mine).position(2) == pos.swap()
    raw = raw_board(pos)  # the fake server's raw board when ``pos`` is player 1's view
    assert tuple(raw) == mine
    flipped = [0] * 28  # pkg/server/game.go sendBoard for player 2
    for space in range(1, 25):
        flipped[space] = -raw[25 - space]
    flipped[0], flipped[25], flipped[26], flipped[27] = -raw[25], -raw[0], -raw[27], -raw[26]
    assert tuple(flipped) == spaces_of(pos.swap())


def test_moves_translate_for_both_movers() -> None:
    assert move_from_steps([(26, 22), (13, 8), (6, 0)], 1) == Move.of((25, 22), (13, 8), (6, 0))
    # the opponent moves upwards in our spaces: from its bar (27) and off at 25
    assert move_from_steps([(27, 3), (20, 25)], 2) == Move.of((25, 22), (5, 0))
    assert step_texts(Move.of((25, 20), (4, 0))) == ("bar/20", "4/off")
    for bad, mover in [([(5, 9)], 1), ([(27, 3)], 1), ([(9, 5)], 2), ([(26, 3)], 2), ([(1, 2)], 3)]:
        with pytest.raises(BgammonBoardError):
            move_from_steps(bad, mover)


def test_win_level_is_bgammons_winpoints() -> None:
    # pkg/server/game_test.go: on the initial board either player would win a backgammon
    assert win_level(Position.initial()) == 3
    home = {20: -5, 21: -5, 22: -5}  # all 15 of the loser's chequers on its 5, 4 and 3 points
    assert win_level(Position.from_points({1: 3, **home})) == 2
    assert win_level(Position.from_points({1: 3, 3: -1, 20: -5, 21: -5, 22: -4})) == 3  # one in my home board
    assert win_level(Position.from_points({1: 3, 20: -5})) == 1  # ten borne off
    # a loser hit after bearing off: the usual rules say single, bgammon says backgammon
    assert win_level(Position.from_points({1: 3, 20: -5}, bar=(0, 1))) == 3


def test_may_double_and_match_state_while_doubled() -> None:
    base = BoardState(board=tuple(INITIAL), points=5, turn=1, player2=PlayerInfo(2, "alice"))
    assert base.may_double()
    assert not base.replace(points=1).may_double()
    assert not base.replace(crawford=1).may_double()
    assert not base.replace(double_value=64, double_player=1).may_double()
    assert not base.replace(double_player=2, double_value=2).may_double()
    assert not base.replace(roll1=3, roll2=1).may_double()
    offered = base.replace(turn=2, double_offered=True)  # the opponent doubles us
    state = offered.match_state()
    assert state.doubled and (state.on_roll, state.turn) == (1, 0) and state.dice == (0, 0)
    crawford = base.replace(crawford=1, player1=PlayerInfo(1, "me", 0, 4))
    assert crawford.match_state().crawford
    with pytest.raises(BgammonBoardError):
        BoardState(board=tuple(INITIAL), points=5, turn=1, double_value=3).match_state()


# -- the tracker, on matches played through the fake server in memory ------------------------------------------


class _Seat:
    """A scripted player on the fake server with no socket: its events queue up as text."""

    def __init__(self, server: FakeBgammonServer, name: str, script: Script) -> None:
        self.outbox: list[str] = []
        self.client = Client(server, self.outbox.append, lambda: None, len(server.clients) + 1, "memory")
        server.clients.append(self.client)
        self.player = ScriptedOpponent("memory", name, "", script)
        self.server = server

        async def send(line: str) -> None:
            server.handle(self.client, line)

        self.player._send = send
        server.handle(self.client, codec.login_json("memory/en", name))
        self.outbox.clear()


async def _play_in_memory(
    seed: int, length: int, first: Script, second: Script
) -> tuple[MatchTracker, FakeBgammonServer]:
    server = FakeBgammonServer(seed=seed)
    a = _Seat(server, "bot_a", first)
    b = _Seat(server, "b", second)
    server.handle(a.client, codec.create(length))
    server.handle(b.client, codec.join("BOT_a"))
    tracker = MatchTracker(("BOT_a", "Guest_b"), length, site="memory")
    steps = 0
    while (a.outbox or b.outbox) and not server.finished:
        for seat in (a, b):
            while seat.outbox:
                event = codec.parse_event(seat.outbox.pop(0))
                if seat is a:
                    tracker.on_event(event)
                await seat.player._on_event(event)
        steps += 1
        assert steps < 20000
    for event in a.outbox:  # the last win and board
        tracker.on_event(codec.parse_event(event))
    return tracker, server


BOLD = Script(double_lead=6, answers=("take",), seed=12)
CAREFUL = Script(double_lead=25, answers=("take", "drop"), seed=13, resign_behind=60)


@pytest.mark.parametrize(
    ("seed", "length", "first", "second"),
    [
        (
            1,
            3,
            Script(double_lead=10, answers=("take",), seed=2),
            Script(double_lead=10, answers=("drop",), seed=3),
        ),
        (2, 5, Script(double_lead=8, answers=("take", "drop"), seed=4), Script(double_lead=None, seed=5)),
        (3, 1, Script(seed=6), Script(resign_behind=30, seed=7)),
        (
            4,
            4,
            Script(double_lead=None, resign_behind=40, seed=8),
            Script(double_lead=15, answers=("drop",), seed=9),
        ),
        (9, 5, BOLD, CAREFUL),  # three games, the last a declined double scored as a backgammon
        (12, 5, BOLD, CAREFUL),  # three games, the last resigned
        (26, 5, BOLD, CAREFUL),  # three games, the third the Crawford game
    ],
)
async def test_tracker_records_every_kind_of_game_end(
    seed: int, length: int, first: Script, second: Script
) -> None:
    tracker, server = await _play_in_memory(seed, length, first, second)
    [done] = server.finished
    assert tracker.error is None and tracker.complete
    record = tracker.record()
    assert record is not None
    names = ("BOT_a", "Guest_b")
    expected = tuple(done.score[done.names.index(n)] for n in names)
    assert record.final_state().score == expected
    assert [g.result.points for g in record.games if g.result] == [points for _, points, _ in done.games]
    assert [names[g.result.winner] for g in record.games if g.result] == [w for w, _, _ in done.games]
    again = read_mat(write_mat(record))
    assert again.final_state().score == expected and len(again.games) == len(done.games)


async def test_a_double_of_a_dead_cube_is_left_out_and_noted() -> None:
    # bgammon lets a player double when the present cube already wins him the match; gnubg, the engine and
    # .mat do not. Taken, it is left out: the record then ends with the same winner, fewer points over the
    # length than the server's, and says so in its comment
    tracker, server = await _play_in_memory(24, 3, BOLD, CAREFUL)
    [done] = server.finished
    assert tracker.error is None and tracker.complete
    record = tracker.record()
    assert record is not None and "is left out" in record.comment
    # the note names the doubler (the tracker's index 1 read as the .mat header's Player 1, the other player)
    doublers = [name for name, line in server.log if line == "double"]
    assert len(doublers) == 3 and doublers[2] == "Guest_b"  # the third double, to 8
    assert "game 1: Guest_b's double to 8, taken, is left out" in record.comment
    assert "Guest_b's double to 8" in write_mat(record)
    final = read_mat(write_mat(record)).final_state()
    server_score = tuple(done.score[done.names.index(n)] for n in ("BOT_a", "Guest_b"))
    assert final.winner == server_score.index(max(server_score)) and final.score != server_score
    assert max(final.score) < max(server_score)


def test_tracker_stops_on_a_missed_turn() -> None:
    tracker = MatchTracker(("me", "you"), 3)
    start = BoardState(
        board=tuple(INITIAL), points=3, player1=PlayerInfo(1, "me"), player2=PlayerInfo(2, "you")
    )
    tracker.on_event(ev.Board(state=start))
    opening = start.replace(turn=1, roll1=3, roll2=1)
    tracker.on_event(ev.Board(state=opening))
    assert tracker.error is None and tracker.state is not None and tracker.state.dice == (3, 1)
    unchanged = opening.replace(turn=2, roll1=6, roll2=6)  # the turn passed, yet the board is the same
    tracker.on_event(ev.Board(state=unchanged))
    assert tracker.error is not None and "no legal play" in tracker.error
    assert not tracker.complete


def test_random_walk_boards_agree_with_the_engine() -> None:
    rng = random.Random(5)
    for _ in range(200):
        pos = random_position(rng)
        b = BoardState(
            board=spaces_of(pos),
            turn=1,
            roll1=rng.randint(1, 6),
            roll2=rng.randint(1, 6),
            points=7,
            player2=PlayerInfo(2, "x"),
        )
        state = b.match_state()
        assert state.position == pos and state.dice == tuple(sorted(b.dice, reverse=True))
        for play in legal_plays(pos, b.dice)[:3]:
            if play.move:
                line = codec.move(play.move)
                assert line.startswith("move ") and len(line.split()) == len(play.move) + 1
