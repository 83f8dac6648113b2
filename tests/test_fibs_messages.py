"""The FIBS server's message table (protocols/fibs/server.py ``Msg`` and ``render``): the wording of a
representative set of lines, pinned as literal strings (the reference's, ../shared/reference/fibs-protocol.md,
where it documents the line; our own otherwise), and the table's own rules: named fields only, exactly those
fields accepted, one line per message."""

from __future__ import annotations

import keyword
from string import Formatter

import pytest

from protocols.fibs import server as fs
from protocols.fibs.server import MessageFieldsError, Msg, ServerCodecError, line_bytes, render

# (rendered, expected): the expected strings are the golden values, written out rather than computed.
VECTORS: list[tuple[str, str]] = [
    # the login phase
    (render(Msg.LOGIN_INCORRECT), "Login incorrect."),
    (render(Msg.ALREADY_LOGGED_IN), "** Warning: You are already logged in."),
    (render(Msg.CONNECTION_TIMED_OUT), "Connection timed out."),
    (render(Msg.NAME_TAKEN, name="alice"),
     "** Please use another name. 'alice' is already used by someone else."),
    (fs.password_too_short(4), "** Your password must be at least 4 characters long."),
    (fs.goodbye("gammond"), "Thanks for using gammond!"),
    # CLIP
    (render(Msg.CLIP_MOTD_START), "3"),
    (render(Msg.CLIP_WHO_END), "6"),
    (render(Msg.CLIP_LOGIN, name="gflohr"), "7 gflohr gflohr logs in."),
    (fs.clip_logout("gflohr", "drops connection"), "8 gflohr gflohr drops connection."),
    (fs.clip_message("ann", 1041253132, "see you at 10"), "9 ann 1041253132 see you at 10"),
    (render(Msg.CLIP_MESSAGE_DELIVERED, recipient="gflohr"), "10 gflohr"),
    (render(Msg.CLIP_SAYS, sender="ann", text="hi  there"), "12 ann hi  there"),
    (render(Msg.CLIP_YOU_SAY, recipient="bob", text="good luck"), "16 bob good luck"),
    (render(Msg.CLIP_YOU_KIBITZ, text="wow"), "19 wow"),
    (fs.heard_by(0), "** But nobody heard you."),
    (fs.heard_by(1), "** 1 user heard you."),
    (fs.heard_by(42), "** 42 users heard you."),
    (render(Msg.TEXT_SAYS, sender="ann", text="hi"), "ann tells you: hi"),
    # chat refusals: no final period after the name, as SPEC has it
    (render(Msg.NO_ONE_CALLED, name="zed"), "** There is no one called zed"),
    (render(Msg.WONT_LISTEN, name="zed"), "** zed won't listen to you."),
    (render(Msg.SAY_OUTSIDE_GAME), "** 'say' can't be used outside a game"),
    (render(Msg.UNKNOWN_COMMAND, word="frobnicate"), "** Unknown command: 'frobnicate'"),
    (render(Msg.YOU_ARE_AWAY), "You're away. Please type 'back'"),
    # invitations and joining
    (fs.invitation("alice", 3), "alice wants to play a 3 point match with you."),
    (fs.invitation("alice", 0), "alice wants to play an unlimited match with you."),
    (fs.invitation("alice", None), "alice wants to resume a saved match with you."),
    (render(Msg.JOIN_HINT, inviter="GibbonTestA"), "Type 'join GibbonTestA' to accept."),
    (fs.you_are_now_playing("gflohr", 5), "** You are now playing a 5 point match with gflohr"),
    (fs.player_joined_you("gflohr", 0), "Player gflohr has joined you for an unlimited match."),
    (render(Msg.REFUSING_GAMES, name="gflohr"), "** gflohr is refusing games."),
    (render(Msg.CANT_FIND_PLAYER, name="gflohr"), "** Error: can't find player gflohr"),
    (render(Msg.RESUME_TURN, name="bob"), "turn: bob."),
    (fs.resume_length(0), "unlimited matchlength"),
    (render(Msg.RESUME_POINTS, name="gflohr", points=3), "points for user gflohr: 3"),
    # a game
    (render(Msg.STARTING_NEW_GAME, opponent="gflohr"), "Starting a new game with gflohr."),
    (render(Msg.OPENING_ROLL, first="You", first_die=3, second="alice", second_die=1),
     "You rolled 3, alice rolled 1"),
    (render(Msg.ROLL_OR_DOUBLE), "It's your turn. Please roll or double"),
    (render(Msg.YOU_ROLL, d1=6, d2=4), "You roll 6 and 4."),
    (render(Msg.ROLLS, name="alice", d1=6, d2=2), "alice rolls 6 and 2."),
    (fs.please_move(1), "Please move 1 piece."),
    (fs.please_move(2), "Please move 2 pieces."),
    (render(Msg.MOVES, name="alice", text="24-18 6-4"), "alice moves 24-18 6-4 ."),
    (render(Msg.ONLY_POSSIBLE_MOVE, text="6-off 5-off"), "The only possible move is 6-off 5-off ."),
    (render(Msg.MUST_GIVE_MOVES, count=2), "** You must give 2 moves."),
    (fs.cant_move_from("13", 1), "** You can't move from 13 in your second move."),
    # the cube
    (render(Msg.YOU_DOUBLE, opponent="bob"), "You double. Please wait for bob to accept or reject."),
    (fs.doubles("alice"), "alice doubles. Type 'accept' or 'reject'."),
    (render(Msg.ACCEPTS_DOUBLE, name="bob", cube=2), "bob accepts the double. The cube shows 2."),
    (fs.gives_up("GibbonTestA", "You", 1), "GibbonTestA gives up. You win 1 point."),
    (fs.gives_up("You", "GibbonTestA", 2), "You give up. GibbonTestA wins 2 points."),
    (render(Msg.CRAWFORD_NO_DOUBLE), "** The Crawford rule doesn't allow you to double in this game."),
    # resignations, game and match ends
    (fs.wants_to_resign("bob", 2), "bob wants to resign. You will win 2 points. Type 'accept' or 'reject'."),
    (render(Msg.YOU_REJECT_RESIGN), "You reject. The game continues."),
    (fs.wins_game("GibbonTestA", 4), "GibbonTestA wins the game and gets 4 points. Sorry."),
    (fs.you_win_game(1), "You win the game and get 1 point. Congratulations!"),
    (fs.match_score(3, "alice", 2, "bob", 0), "score in 3 point match: alice-2 bob-0"),
    (render(Msg.YOU_WIN_MATCH, length=3, score=3, other=2), "You win the 3 point match 3-2 ."),
    (fs.match_report("bob", "alice", 3, 3, 2), "bob wins a 3 point match against alice  3-2 ."),
    (render(Msg.JOIN_NEXT_GAME), "Type 'join' if you want to play the next game, type 'leave' if you don't."),
    # leaving, saving, watching
    (render(Msg.YOU_TERMINATED), "** You terminated the game. The game was saved."),
    (render(Msg.DROPS_CONNECTION_SAVED, name="GibbonTestA"),
     "GibbonTestA drops connection. The game was saved."),
    (render(Msg.SERVER_SHUTDOWN, seconds=30), "*** ATTENTION ! The server will shut down in 30 seconds."),
    (render(Msg.NOW_WATCHING, name="GammonBot_VII"), "You're now watching GammonBot_VII."),
    (render(Msg.WATCHED_LOGS_OUT, name="ann"), "ann logs out.. You're not watching anymore."),
    (render(Msg.STARTS_WATCHING, watcher="carol", player="alice"), "carol starts watching alice."),
    # listings, toggles, settings
    (render(Msg.SAVED_HEADER), "  opponent          matchlength   score (your points first)"),
    (fs.saved_count("deadbeef", 0), "deadbeef has no saved games."),
    (fs.saved_count("deadbeef", 1), "deadbeef has 1 saved game."),
    (render(Msg.TOGGLES_HEADER), "The current settings are:"),
    (fs.toggle_value("allowpip", True), "allowpip        YES"),
    (fs.toggle_reply("ready", False), "** You're now refusing to play with someone."),
    (render(Msg.SETTING_SET, name="boardstyle", value="3"), "Value of 'boardstyle' set to 3."),
    (render(Msg.UNKNOWN_SETTING, name="colour"),
     "** Unknown variable 'colour'. Known: boardstyle, linelength, pagelength, redoubles, sortwho, timezone."),
    (render(Msg.LINE_TOO_LONG, limit=1024), "** Your line was longer than 1024 characters and was ignored."),
    (render(Msg.PIP_COUNT, mine=167, theirs=150, opponent="bob"), "Pipcounts: You 167 - bob 150"),
    (render(Msg.TIME_LINE, text="Sun Jan  5 12:00:00 2025 UTC"), "Sun Jan  5 12:00:00 2025 UTC"),
]  # fmt: skip


@pytest.mark.parametrize(("rendered", "expected"), VECTORS, ids=[expected for _, expected in VECTORS])
def test_wording_is_pinned(rendered: str, expected: str) -> None:
    assert rendered == expected
    assert type(rendered) is str  # a plain str, not the Msg member that made it


def template_fields(msg: Msg) -> list[str | None]:
    return [name for _, name, _, _ in Formatter().parse(msg.value) if name is not None]


@pytest.mark.parametrize("msg", list(Msg), ids=[m.name for m in Msg])
def test_template_fields_are_names(msg: Msg) -> None:
    # No positional ({}), indexed ({0}, {a[0]}) or attribute ({a.b}) fields: render passes keywords only.
    names = template_fields(msg)
    assert all(name.isidentifier() and not keyword.iskeyword(name) for name in names), names
    assert msg.fields == frozenset(names)


@pytest.mark.parametrize("msg", list(Msg), ids=[m.name for m in Msg])
def test_every_message_renders_as_one_line(msg: Msg) -> None:
    line = render(msg, **{name: f"<{name}>" for name in msg.fields})
    assert type(line) is str and "\r" not in line and "\n" not in line
    assert all(f"<{name}>" in line for name in msg.fields)
    if not msg.fields:
        assert line == msg.value  # a fixed line: no braces to unescape


def test_the_table_has_no_alias() -> None:
    # @unique: two members with one wording would be one member, and a rename would change the other's name.
    assert len({m.value for m in Msg}) == len(Msg) == len(Msg.__members__)


def test_a_missing_field_is_a_typed_error() -> None:
    with pytest.raises(MessageFieldsError) as caught:
        render(Msg.ROLLS, name="alice", d1=6)
    assert isinstance(caught.value, ServerCodecError)
    assert caught.value.msg is Msg.ROLLS
    assert (caught.value.missing, caught.value.unexpected) == (("d2",), ())
    with pytest.raises(MessageFieldsError):
        render(Msg.NO_ONE_CALLED)


def test_an_extra_field_is_a_typed_error() -> None:
    with pytest.raises(MessageFieldsError) as caught:
        render(Msg.NO_ONE_CALLED, name="zed", who="zed")
    assert (caught.value.missing, caught.value.unexpected) == ((), ("who",))
    with pytest.raises(MessageFieldsError, match="WELCOME_BACK"):
        render(Msg.WELCOME_BACK, name="bob")
    # A misspelt field is both: the right one missing, the wrong one unexpected.
    with pytest.raises(MessageFieldsError) as caught:
        render(Msg.YOU_DOUBLE, oponent="bob")
    assert (caught.value.missing, caught.value.unexpected) == (("opponent",), ("oponent",))


def test_a_template_sent_without_render_is_refused_on_the_way_out() -> None:
    assert line_bytes([Msg.WELCOME_BACK, render(Msg.NO_ONE_CALLED, name="zed")]) == (
        Msg.WELCOME_BACK.value.encode() + b"\r\n** There is no one called zed\r\n"
    )
    with pytest.raises(MessageFieldsError) as caught:
        line_bytes([Msg.NO_ONE_CALLED])
    assert caught.value.missing == ("name",)
