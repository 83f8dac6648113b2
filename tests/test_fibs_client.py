"""The FIBS client codec: replay of every sample transcript, exact events for representative lines, the
byte-level quirks, the commands, and fuzzing."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.moves import Move, apply_move
from protocols.fibs import events as ev
from protocols.fibs.board import Side, parse_board
from protocols.fibs.cli_parse import run
from protocols.fibs.client import FibsClientProtocol, FibsCommandError
from protocols.fibs.lines import parse_line, split_glued
from tests.samples import needs_shared_pack, sample_files, sample_path

SPEC_BOARD = (
    "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25"
    ":0:0:0:0:2:0:0:0"
)


def server_streams(name: str) -> dict[str, list[str]]:
    """The server lines of a sample file, per client: BaldLies transcripts interleave three clients."""
    lines = sample_path("fibs", name).read_text(encoding="utf-8").split("\n")
    if not name.startswith("baldlies"):
        return {"server": lines}
    streams: dict[str, list[str]] = {}
    for line in lines:
        m = re.match(r"\[(\w+) <\] ?(.*)$", line)
        if m:
            streams.setdefault(m[1], []).append(m[2])
    return streams


def replay(lines: list[str]) -> list[ev.FibsEvent]:
    protocol = FibsClientProtocol()
    return protocol.receive_data(("\r\n".join(lines) + "\r\n").encode()) + protocol.receive_eof()


# Written by reading every line of each file (the counts of board, roll, move, who and MOTD lines were checked
# against grep); the Unknown lines are the files' own comments, banners, oldmoves dumps and rating sums.
def _counts(text: str) -> dict[str, int]:
    """``"Board=3 Rolls=2"`` as a dict: keeps the expectation tables short."""
    return {name: int(n) for name, n in (item.split("=") for item in text.split())}


EXPECTED_COUNTS = {
    "baldlies-bot-crawford-resume-double.txt": _counts(
        "AcceptsDouble=1 Board=76 CannotMove=10 Doubles=1 FirstMove=2 GameStarted=2 GameWon=1 JoinNextGame=1 "
        "LoginPrompt=1 MatchJoined=1 MatchResumed=1 MatchScore=1 MatchWon=1 MotdEnd=1 MotdLine=10 MotdStart=1 "
        "Moves=14 OpeningRoll=6 OwnInfo=1 PleaseMove=24 ResignAccepted=1 ResignOffer=1 ResumeLength=1 "
        "ResumePoints=2 ResumeTurn=1 RollOrDouble=10 Rolls=48 SavedMatch=1 SavedMatchesHeader=1 "
        "SettingValue=1 Unknown=4 UnknownCommand=3 WaitingForJoin=1 Welcome=1 WhoEnd=8 WhoInfo=9 YouInvited=1"
    ),
    "baldlies-bot-login-resume-crossing.txt": _counts(
        "AcceptsDouble=1 Board=94 CannotMove=3 GameWon=1 Invitation=1 JoinHint=1 LoginPrompt=1 MatchResumed=1 "
        "MatchWon=1 MotdEnd=1 MotdLine=10 MotdStart=1 Moves=29 OwnInfo=1 PlayerLoggedIn=1 PleaseMove=30 "
        "ResumeLength=1 ResumePoints=2 ResumeTurn=1 RollOrDouble=31 Rolls=62 SavedCount=1 SavedMatch=1 "
        "SavedMatchesHeader=1 SettingValue=1 Unknown=4 UnknownCommand=1 Welcome=1 WhoEnd=7 WhoInfo=7 "
        "YouInvited=1 YouSaid=1"
    ),
    "baldlies-bot-watch-play-watch.txt": _counts(
        "Board=297 CannotMove=14 FirstMove=4 GameStarted=3 GameWon=4 Invitation=1 JoinHint=1 LoginPrompt=1 "
        "MatchJoined=1 MatchReport=6 MatchStartReport=6 MatchWon=4 MotdEnd=1 MotdLine=10 MotdStart=1 "
        "Moves=208 OpeningRoll=4 OwnInfo=1 PlayerLoggedIn=3 PlayerLoggedOut=3 PleaseMove=35 RollOrDouble=36 "
        "Rolls=255 SavedCount=1 StoppedWatching=3 Unknown=4 Watching=2 Welcome=1 WhoEnd=37 WhoInfo=38 "
        "YouSaid=2"
    ),
    "baldlies-bot-watch-rewatch-join.txt": _counts(
        "Board=294 CannotMove=16 FirstMove=4 GameStarted=4 GameWon=4 Invitation=1 JoinHint=1 LoginPrompt=1 "
        "MatchJoined=1 MatchReport=4 MatchStartReport=5 MatchWon=4 MotdEnd=1 MotdLine=10 MotdStart=1 "
        "Moves=272 NoSavedGames=1 OpeningRoll=5 OwnInfo=1 PlayerLoggedIn=7 PlayerLoggedOut=4 PleaseMove=1 "
        "RollOrDouble=2 Rolls=284 SavedCount=1 ServerNotice=1 SettingValue=1 StoppedWatching=3 Unknown=4 "
        "UnknownCommand=1 Watching=2 Welcome=1 WhoEnd=36 WhoInfo=36 YouSaid=1"
    ),
    "baldlies-full-3pt-match.txt": _counts(
        "AcceptsDouble=3 Board=727 CannotMove=21 Doubles=3 FirstMove=6 GameStarted=6 GameWon=6 "
        "Invitation=1 JoinHint=1 JoinNextGame=4 LoginPrompt=3 MatchReport=1 MatchResumeReport=1 "
        "MatchResumed=2 MatchScore=6 MatchWon=3 MotdEnd=3 MotdLine=30 MotdStart=3 Moves=352 "
        "OpeningRoll=9 OwnInfo=3 PlayerLoggedIn=3 PleaseMove=174 ResignAccepted=3 ResignOffer=3 "
        "ResumeLength=2 ResumePoints=4 ResumeTurn=2 RollOrDouble=92 Rolls=543 Says=1 SettingValue=3 "
        "Shouts=2 ToggleValue=32 TogglesHeader=2 Unknown=15 UnknownCommand=3 WaitingForJoin=2 WatcherJoined=2 "
        "Watching=1 Welcome=3 WhoEnd=24 WhoInfo=27 YouInvited=1 YouSaid=1 YouShouted=1"
    ),
    "baldlies-guest-registration.txt": _counts("LoginPrompt=1 PasswordPrompt=2 Prompt=2 Unknown=20"),
    "baldlies-login-invite-join-watch.txt": _counts(
        "Board=2 FirstMove=2 GameStarted=2 Invitation=1 JoinHint=1 LoginPrompt=3 MatchJoined=2 "
        "MatchStartReport=1 MotdEnd=3 MotdLine=30 MotdStart=3 OpeningRoll=2 OwnInfo=3 "
        "PlayerLoggedIn=3 ServerNotice=2 SettingValue=3 ToggleValue=48 TogglesHeader=3 Unknown=12 "
        "UnknownCommand=2 WatcherJoined=2 Watching=1 Welcome=3 WhoEnd=24 WhoInfo=30 YouInvited=1"
    ),
    "baldlies-resume-double-resign.txt": _counts(
        "AcceptsDouble=3 Board=465 CannotMove=12 Doubles=3 FirstMove=6 GameStarted=6 GameWon=3 "
        "Invitation=1 JoinHint=1 JoinNextGame=4 LoginPrompt=3 MatchResumeReport=1 MatchResumed=2 "
        "MatchScore=6 MotdEnd=3 MotdLine=30 MotdStart=3 Moves=224 OpeningRoll=6 OwnInfo=3 "
        "PlayerLoggedIn=3 PleaseMove=111 ResignAccepted=3 ResignOffer=3 ResumeLength=2 "
        "ResumePoints=4 ResumeTurn=2 RollOrDouble=75 Rolls=345 Says=1 SettingValue=3 Shouts=2 "
        "ToggleValue=32 TogglesHeader=2 Unknown=15 UnknownCommand=3 WaitingForJoin=2 WatcherJoined=2 Watching=1 "
        "Welcome=3 WhoEnd=18 WhoInfo=21 YouInvited=1 YouSaid=1 YouShouted=1"
    ),
    "board-lines-decoded.txt": _counts("Board=23 Unknown=53"),
    "fibs-spec-examples.txt": _counts(
        "AcceptsDouble=1 AlreadyLoggedIn=1 Board=2 GameWon=1 JoinNextGame=1 MatchScore=1 MatchWon=1 "
        "MotdEnd=1 MotdLine=7 MotdStart=1 OwnInfo=1 Shouts=1 StoredMessage=1 Unknown=73 Welcome=1 "
        "WhoEnd=1 WhoInfo=5"
    ),
    "gibbon-test-clip-reader-lines.txt": _counts(
        "AcceptsDouble=2 Board=4 CannotMove=2 Doubles=2 GameSaved=5 GameStarted=1 GameWon=6 "
        "GivesUp=6 HeardBy=2 Invitation=3 JoinHint=1 JoinNextGame=1 Kibitzes=1 MatchJoined=4 "
        "MatchReport=2 MatchResumeReport=2 MatchResumed=2 MatchScore=2 MatchStartReport=2 "
        "MatchWon=2 MessageDelivered=1 MessageSaved=1 MotdEnd=1 MotdLine=2 MotdStart=1 Moves=8 "
        "NoSavedGames=1 OwnInfo=3 PlayerLoggedIn=1 PlayerLoggedOut=1 ResignAccepted=4 ResignOffer=4 "
        "ResignRejected=2 ResumeLength=2 ResumePoints=1 ResumeTurn=1 Rolls=2 SavedCount=3 "
        "SavedMatch=5 SavedMatchesHeader=1 Says=1 ServerNotice=17 SettingValue=12 SettingsHeader=1 "
        "Shouts=1 StoppedWatching=1 StoredMessage=1 ToggleValue=17 TogglesHeader=1 Unknown=5 "
        "WaitingForJoin=1 Watching=1 Welcome=2 Whispers=1 WhoEnd=1 WhoInfo=3 YouInvited=3 "
        "YouKibitzed=1 YouSaid=1 YouShouted=1 YouWhispered=1"
    ),
    "realfibs-2020-login-who-watch.txt": _counts(
        "AcceptsDouble=2 Board=275 CannotMove=9 Doubles=2 FirstMove=2 GameStarted=2 Kibitzes=3 "
        "LoginPrompt=1 MatchReport=18 MatchResumeReport=4 MatchScore=1 MatchStartReport=18 "
        "MatchWon=1 MotdEnd=1 MotdLine=12 MotdStart=1 Moves=132 NothingToWatch=1 OpeningRoll=3 "
        "OwnInfo=1 PlayerLeftGame=1 PlayerLoggedIn=21 PlayerLoggedOut=18 ResignAccepted=2 "
        "ResignOffer=2 Rolls=141 ServerNotice=1 SettingValue=1 Shouts=6 Unknown=20 Watching=1 "
        "Welcome=1 WhoEnd=130 WhoInfo=198"
    ),
}


@needs_shared_pack("fibs")
def test_the_expectations_cover_every_sample_file() -> None:
    assert sorted(p.name for p in sample_files("fibs", "*.txt")) == sorted(EXPECTED_COUNTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_COUNTS))
def test_replay_sample_file(name: str) -> None:
    counts: Counter[str] = Counter()
    for lines in server_streams(name).values():
        events = replay(lines)
        counts.update(type(e).__name__ for e in events)
        for event in events:
            assert "\n" not in event.raw and "\r" not in event.raw and event.raw == event.raw.rstrip()
            if isinstance(event, ev.Moves):
                assert event.move is not None and event.direction in (-1, 1), event.raw
    assert dict(counts) == EXPECTED_COUNTS[name]


def test_gibbon_lines_left_unknown_are_only_the_unknowable_ones() -> None:
    unknown = [
        e
        for e in replay(server_streams("gibbon-test-clip-reader-lines.txt")["server"])
        if isinstance(e, ev.Unknown)
    ]
    assert [e.raw for e in unknown if not e.raw.startswith("#")] == [
        "20 gflohr    Mad world!",
        "Your email address is 'gibbon@example.com'.",
    ]
    assert unknown[-2].reason == "unknown CLIP code 20"


@pytest.mark.parametrize(
    ("name", "moves_checked"),
    [
        # Of 352 and 224 move lines; the others end a game (no board follows, or the next game's) or come
        # before the first board of a resumed match.
        ("baldlies-full-3pt-match.txt", 346),
        ("baldlies-resume-double-resign.txt", 220),
        ("realfibs-2020-login-who-watch.txt", 132),  # every one
    ],
)
def test_every_move_line_takes_one_board_to_the_next(name: str, moves_checked: int) -> None:
    """A ``moves`` line applied to the last board with the mover's roll gives the next board: checks the move
    text, its direction and the board orientation against each other on real transcripts."""
    checked = 0
    for lines in server_streams(name).values():
        board = dice = pending = None
        rolls: dict[str, tuple[int, int]] = {}
        for event in replay(lines):
            if isinstance(event, ev.GameStarted | ev.GameWon | ev.GivesUp | ev.ResignAccepted):
                board = pending = None
                rolls.clear()
            elif isinstance(event, ev.OpeningRoll):
                dice = (event.first_die, event.second_die)
                rolls = {event.first: dice, event.second: dice}
            elif isinstance(event, ev.Rolls):
                rolls[event.player] = event.dice
            elif isinstance(event, ev.Moves) and board is not None and event.player in rolls:
                mover = Side.PLAYER if event.player == board.player else Side.OPPONENT
                seen = board.position_for_me() if mover is Side.PLAYER else board.position_for_me().swap()
                assert event.move is not None
                pending = (mover, apply_move(seen, rolls[event.player], event.move))
            elif isinstance(event, ev.Board):
                # A board between games (BaldLies shows watchers the next game's start) is no move's result.
                if pending is not None and event.board.on_roll is not None:
                    mover, after = pending
                    now = event.board.position_for_me()
                    assert (now if mover is Side.PLAYER else now.swap()) == after
                    checked += 1
                    pending = None
                board = event.board
    assert checked == moves_checked


# -- exact events for representative lines -------------------------------------------------------------------

REPRESENTATIVE = [
    (
        "1 myself 1041253132 192.168.1.308",
        ev.Welcome(raw="", name="myself", last_login=1041253132, last_host="192.168.1.308"),
    ),
    ("3", ev.MotdStart(raw="")),
    (
        "5 someplayer mgnu_advanced - 0 0 1418.61 23 1914 1041272421 192.168.40.3 MacFIBS "
        "someplayer@somewhere.com",
        ev.WhoInfo(
            raw="",
            name="someplayer",
            opponent="mgnu_advanced",
            watching=None,
            ready=False,
            away=False,
            rating=1418.61,
            experience=23,
            idle=1914,
            login=1041272421,
            hostname="192.168.40.3",
            client="MacFIBS",
            email="someplayer@somewhere.com",
        ),
    ),
    ("6", ev.WhoEnd(raw="")),
    (
        "7 someplayer someplayer logs in.",
        ev.PlayerLoggedIn(raw="", name="someplayer", message="someplayer logs in."),
    ),
    (
        "8 Barger Connection with Barger timed out.",
        ev.PlayerLoggedOut(raw="", name="Barger", message="Connection with Barger timed out."),
    ),
    (
        "9 someplayer 1041253132 I'll log in at 10pm if you want to finish that game.",
        ev.StoredMessage(
            raw="",
            sender="someplayer",
            time=1041253132,
            message="I'll log in at 10pm if you want to finish that game.",
        ),
    ),
    ("10 joe", ev.MessageDelivered(raw="", recipient="joe")),
    ("11 joe", ev.MessageSaved(raw="", recipient="joe")),
    ("12 joe  hi there", ev.Says(raw="", sender="joe", message="hi there")),
    ("13 joe anyone?", ev.Shouts(raw="", sender="joe", message="anyone?")),
    ("14 joe psst", ev.Whispers(raw="", sender="joe", message="psst")),
    (
        "15 GammonBot_VII Hi, I am a computer program.",
        ev.Kibitzes(raw="", sender="GammonBot_VII", message="Hi, I am a computer program."),
    ),
    ("16 alice good luck", ev.YouSaid(raw="", recipient="alice", message="good luck")),
    ("17 anyone for a game?", ev.YouShouted(raw="", message="anyone for a game?")),
    ("18 hi watchers", ev.YouWhispered(raw="", message="hi watchers")),
    ("19 nice opening", ev.YouKibitzed(raw="", message="nice opening")),
    ("login:", ev.LoginPrompt(raw="")),
    (">", ev.Prompt(raw="")),
    ("Please give your password:", ev.PasswordPrompt(raw="", text="Please give your password:")),
    ("** Warning: You are already logged in.", ev.AlreadyLoggedIn(raw="")),
    ("Login incorrect", ev.LoginFailed(raw="")),
    ("joe wants to play a 5 point match with you.", ev.Invitation(raw="", inviter="joe", length=5)),
    (
        "joe wants to play an unlimited match with you.",
        ev.Invitation(raw="", inviter="joe", length=None, unlimited=True),
    ),
    (
        "joe wants to resume a saved match with you.",
        ev.Invitation(raw="", inviter="joe", length=None, resume=True),
    ),
    ("Type 'join joe' to accept.", ev.JoinHint(raw="", inviter="joe")),
    (
        "WARNING: Don't accept if you want to continue the saved 7 point match!",
        ev.SavedMatchWarning(raw="", length=7),
    ),
    (
        "WARNING: Don't accept if you want to continue the saved unlimited match!",
        ev.SavedMatchWarning(raw="", length=None, unlimited=True),
    ),
    ("** You invited bob to a 3 point match.", ev.YouInvited(raw="", invitee="bob", length=3)),
    ("joe is away: back in 5", ev.PlayerAway(raw="", name="joe", message="back in 5")),
    (
        "** You are now playing a 3 point match with alice",
        ev.MatchJoined(raw="", opponent="alice", length=3, by_you=True),
    ),
    (
        "** Player bob has joined you for a 3 point match.",
        ev.MatchJoined(raw="", opponent="bob", length=3, by_you=False),
    ),
    (
        "You are now playing with alice. Your running match was loaded.",
        ev.MatchResumed(raw="", opponent="alice", by_you=True),
    ),
    (
        "bob has joined you. Your running match was loaded.",
        ev.MatchResumed(raw="", opponent="bob", by_you=False),
    ),
    ("turn: bob.", ev.ResumeTurn(raw="", player="bob")),
    ("match length: 3", ev.ResumeLength(raw="", length=3)),
    ("unlimited matchlength", ev.ResumeLength(raw="", length=None, unlimited=True)),
    ("points for user alice: 2", ev.ResumePoints(raw="", player="alice", points=2)),
    ("points for bob: 1", ev.ResumePoints(raw="", player="bob", points=1)),
    ("Starting a new game with alice.", ev.GameStarted(raw="", opponent="alice")),
    (
        "You rolled 3, alice rolled 1.",
        ev.OpeningRoll(raw="", first="You", first_die=3, second="alice", second_die=1),
    ),
    (
        "GammonBot_VII rolled 5, pipcat rolled 3",
        ev.OpeningRoll(raw="", first="GammonBot_VII", first_die=5, second="pipcat", second_die=3),
    ),
    ("It's your turn to move.", ev.FirstMove(raw="", player="You")),
    ("pipcat makes the first move.", ev.FirstMove(raw="", player="pipcat")),
    ("It's your turn. Please roll or double", ev.RollOrDouble(raw="")),
    ("The number on the doubling cube is now 2", ev.AutoDouble(raw="", cube=2)),
    ("You roll 3 and 2.", ev.Rolls(raw="", player="You", dice=(3, 2))),
    ("alice rolls 3 and 2", ev.Rolls(raw="", player="alice", dice=(3, 2))),
    ("Please move 2 pieces.", ev.PleaseMove(raw="", count=2)),
    ("Please move 1 piece.", ev.PleaseMove(raw="", count=1)),
    ("GammonBot_VII can't move.", ev.CannotMove(raw="", player="GammonBot_VII")),
    (
        "pipcat moves bar-22 13-11 .",
        ev.Moves(
            raw="", player="pipcat", text="bar-22 13-11", direction=-1, move=Move.of((25, 22), (13, 11))
        ),
    ),
    (
        "gflohr moves bar-1 bar-3 .",
        ev.Moves(raw="", player="gflohr", text="bar-1 bar-3", direction=1, move=Move.of((25, 24), (25, 22))),
    ),
    (
        "bob moves 24-home 21-home .",
        ev.Moves(raw="", player="bob", text="24-home 21-home", direction=1, move=Move.of((1, 0), (4, 0))),
    ),
    (
        "gflohr moves 17-20 17-20 19-20 19-20 .",
        ev.Moves(
            raw="",
            player="gflohr",
            text="17-20 17-20 19-20 19-20",
            direction=1,
            move=Move.of((8, 5), (8, 5), (6, 5), (6, 5)),
        ),
    ),
    ("joe moves 10-4 x .", ev.Moves(raw="", player="joe", text="10-4 x", direction=-1, move=None)),
    (
        "The only possible move is 6-off 5-off .",
        ev.Moves(
            raw="", player="You", text="6-off 5-off", direction=-1, move=Move.of((6, 0), (5, 0)), forced=True
        ),
    ),
    ("Bearing off: 6 o 5 o", ev.BearingOff(raw="", text="6 o 5 o")),
    ("You double. Please wait for bob to accept or reject.", ev.Doubles(raw="", player="You")),
    ("alice doubles. Type 'accept' or 'reject'.", ev.Doubles(raw="", player="alice")),
    (
        "alice doubles. Type 'accept', 'reject' or 'redouble'.",
        ev.Doubles(raw="", player="alice", may_redouble=True),
    ),
    ("pipcat doubles.", ev.Doubles(raw="", player="pipcat")),
    (
        "alice redoubles to 4. Type 'accept', 'reject' or 'redouble'.",
        ev.Redoubles(raw="", player="alice", cube=4),
    ),
    ("You accept the double. The cube shows 2.", ev.AcceptsDouble(raw="", player="You", cube=2)),
    ("pipcat accepts the double.", ev.AcceptsDouble(raw="", player="pipcat", cube=None)),
    (
        "You accept the double to 4 and redouble.",
        ev.AcceptsDouble(raw="", player="You", cube=4, redoubles=True),
    ),
    ("bob gives up. You win 2 points.", ev.GivesUp(raw="", player="bob", winner="You", points=2)),
    ("You give up. bob wins 1 point.", ev.GivesUp(raw="", player="You", winner="bob", points=1)),
    (
        "pipcat wants to resign. GammonBot_VII will win 2 points.",
        ev.ResignOffer(raw="", player="pipcat", winner="GammonBot_VII", points=2, level=2),
    ),
    (
        "You want to resign. alice will win 1 point.",
        ev.ResignOffer(raw="", player="You", winner="alice", points=1, level=1),
    ),
    (
        "** joe wanted to resign. Type 'accept' or 'reject'.",
        ev.ResignOffer(raw="", player="joe", winner="You", points=None),
    ),
    ("You accept and win 2 points.", ev.ResignAccepted(raw="", player="You", points=2)),
    ("joe rejects. The game continues.", ev.ResignRejected(raw="", player="joe")),
    ("You win the game and get 1 point. Congratulations!", ev.GameWon(raw="", winner="You", points=1)),
    ("bob wins the game and gets 2 points. Sorry.", ev.GameWon(raw="", winner="bob", points=2)),
    (
        "score in 3 point match: alice-2 bob-0",
        ev.MatchScore(raw="", length=3, unlimited=False, scores=(("alice", 2), ("bob", 0))),
    ),
    ("Type 'join' if you want to play the next game, type 'leave' if you don't.", ev.JoinNextGame(raw="")),
    ("** Please wait for bob to join too.", ev.WaitingForJoin(raw="", player="bob")),
    ("bob wins the 3 point match 3-2 .", ev.MatchWon(raw="", winner="bob", length=3, score=(3, 2))),
    (
        "** Player joe has left the game. The game was saved.",
        ev.GameSaved(raw="", player="joe", reason="left"),
    ),
    (
        "Network error with joe. The game was saved.",
        ev.GameSaved(raw="", player="joe", reason="network error"),
    ),
    ("Your game with joe was saved.", ev.GameSaved(raw="", player="joe", reason="saved")),
    (
        "GammonBot_XX has left the game with HALIS.",
        ev.PlayerLeftGame(raw="", player="GammonBot_XX", opponent="HALIS"),
    ),
    (
        "seadog and Paled start a 5 point match.",
        ev.MatchStartReport(raw="", player="seadog", opponent="Paled", length=5),
    ),
    (
        "GammonBot_XX and HALIS are resuming their 7-point match.",
        ev.MatchResumeReport(raw="", player="GammonBot_XX", opponent="HALIS", length=7),
    ),
    (
        "nena wins a 1 point match against BlunderBot_XII  1-0 .",
        ev.MatchReport(
            raw="", winner="nena", loser="BlunderBot_XII", length=1, unlimited=False, score=(1, 0)
        ),
    ),
    ("You are now watching alice.", ev.Watching(raw="", player="alice")),
    ("joe logs out.. You're not watching anymore.", ev.StoppedWatching(raw="", player="joe")),
    ("GammonBot_VII is not doing anything interesting.", ev.NothingToWatch(raw="", player="GammonBot_VII")),
    ("carol is watching you.", ev.WatcherJoined(raw="", watcher="carol", player="You")),
    ("carol starts watching alice.", ev.WatcherJoined(raw="", watcher="carol", player="alice")),
    ("carol stops watching you.", ev.WatcherLeft(raw="", watcher="carol", player="You")),
    ("joe bans you from watching.", ev.BannedFromWatching(raw="", player="joe", watcher="You")),
    (
        "**bonehead                3                1 -  2",
        ev.SavedMatch(
            raw="", opponent="bonehead", length=3, unlimited=False, score=(1, 2), online=True, playing=False
        ),
    ),
    ("deadbeef has 12 saved games.", ev.SavedCount(raw="", player="deadbeef", count=12)),
    ("ready           NO", ev.ToggleValue(raw="", name="ready", value=False)),
    ("Value of 'boardstyle' set to 3.", ev.SettingValue(raw="", name="boardstyle", value="3")),
    ("** 42 users heard you.", ev.HeardBy(raw="", count=42)),
    ("** But nobody heard you.", ev.HeardBy(raw="", count=0)),
    ("** Unknown command: 'board'", ev.UnknownCommand(raw="", command="board")),
    ("You're away. Please type 'back'", ev.AwayReminder(raw="")),
    ("Connection timed out.", ev.ConnectionTimedOut(raw="")),
    (
        "*** ATTENTION ! FIBS will restart in 60 seconds.",
        ev.ServerShutdown(raw="", text="ATTENTION ! FIBS will restart in 60 seconds."),
    ),
    ("** You're not watching or playing.", ev.ServerNotice(raw="", text="You're not watching or playing.")),
    ("rating calculation:", ev.Unknown(raw="")),
    ("2 joe 1 1", ev.Unknown(raw="", reason="CLIP 2: CLIP 2 has 21 fields, not 3")),
    ("5 joe - - x 0 1500.00 0 0 0 host - -", ev.Unknown(raw="", reason="CLIP 5: 'x' is not 0 or 1")),
    (
        "board:You:x:3",
        ev.Unknown(raw="", reason="board field 4 (player_score): missing: the line has only 4 of 53 fields"),
    ),
]


@pytest.mark.parametrize(("line", "expected"), REPRESENTATIVE, ids=[line[:40] for line, _ in REPRESENTATIVE])
def test_representative_line(line: str, expected: ev.FibsEvent) -> None:
    events = FibsClientProtocol().receive_data(f"{line}\r\n".encode())
    assert events == [dataclasses.replace(expected, raw=line)]
    assert parse_line(line) == dataclasses.replace(expected, raw=line) or isinstance(expected, ev.ResignOffer)


def test_board_event() -> None:
    [event] = FibsClientProtocol().receive_data(SPEC_BOARD.encode() + b"\r\n")
    assert isinstance(event, ev.Board)
    assert event.raw == SPEC_BOARD and event.board == parse_board(SPEC_BOARD)
    assert event.board.position_id == "4HPwATDgc/ABMA" and event.board.match_id == "cAlrAAAAAAAA"
    assert repr(event) == f"Board(raw={SPEC_BOARD!r}, board=FibsBoard.parse({SPEC_BOARD!r}))"


def test_resignation_level_follows_the_cube_of_the_last_board() -> None:
    protocol = FibsClientProtocol()
    line = "joe wants to resign. You will win 4 points. Type 'accept' or 'reject'."
    [before] = protocol.receive_data(f"{line}\r\n".encode())
    assert isinstance(before, ev.ResignOffer) and before.level is None  # cube 1: 4 points is no level
    protocol.receive_data(SPEC_BOARD.replace(":1:1:1:0:1:-1", ":2:1:0:0:1:-1").encode() + b"\r\n")
    [after] = protocol.receive_data(f"{line}\r\n".encode())
    assert isinstance(after, ev.ResignOffer) and (after.points, after.level) == (4, 2)


# -- byte-level quirks ---------------------------------------------------------------------------------------


def test_login_prompt_without_line_end() -> None:
    protocol = FibsClientProtocol()
    events = protocol.receive_data(b"Welcome!\r\n\r\nlogin: ")
    assert events == [ev.Unknown(raw="Welcome!"), ev.LoginPrompt(raw="login:")]
    assert protocol.receive_data(b"1 me 1041253132 host\r\n") == [
        ev.Welcome(raw="1 me 1041253132 host", name="me", last_login=1041253132, last_host="host")
    ]


def test_prompt_split_over_reads() -> None:
    protocol = FibsClientProtocol()
    assert protocol.receive_data(b"log") == []
    assert protocol.receive_data(b"in") == []
    assert protocol.receive_data(b": ") == [ev.LoginPrompt(raw="login:")]
    assert protocol.receive_data(b"> ") == [ev.Prompt(raw=">")]


def test_telnet_sequences_are_dropped_even_when_split() -> None:
    protocol = FibsClientProtocol()
    data = b"\xff\xfb\x01Please give your password: "
    events = [e for i in range(len(data)) for e in protocol.receive_data(data[i : i + 1])]
    assert events == [ev.PasswordPrompt(raw="Please give your password:", text="Please give your password:")]
    data = b"\xff\xfc\x01\xff\xfa\x18\x01\xff\xf06\xff\xf1\r\n"  # WONT ECHO, a subnegotiation, NOP around "6"
    assert protocol.receive_data(data[:5]) == []
    assert protocol.receive_data(data[5:]) == [ev.WhoEnd(raw="6")]
    assert protocol.receive_data(b"12 joe caf\xff\xff\r\n")[0].raw == "12 joe caf\ufffd"  # IAC IAC = byte 255


def test_bells_nuls_and_trailing_spaces_are_dropped() -> None:
    [event] = FibsClientProtocol().receive_data(b"** FINALLY!!! joe logs in.\x07\x07\x07   \r\n")
    assert event == ev.ServerNotice(raw="** FINALLY!!! joe logs in.", text="FINALLY!!! joe logs in.")
    assert FibsClientProtocol().receive_data(b"6 \r\n6  \r\x00") == [ev.WhoEnd(raw="6"), ev.WhoEnd(raw="6")]


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r\x00", b"\r"])
def test_every_line_end(end: bytes) -> None:
    protocol = FibsClientProtocol()
    events = protocol.receive_data(b"3" + end + b"hello" + end + b"4" + end + b"6" + end + b"x")
    assert [type(e) for e in events] == [ev.MotdStart, ev.MotdLine, ev.MotdEnd, ev.WhoEnd]
    assert protocol.receive_eof() == [ev.Unknown(raw="x")]


def test_cr_lf_split_between_reads_is_one_line_end() -> None:
    protocol = FibsClientProtocol()
    assert protocol.receive_data(b"6\r") == []
    assert protocol.receive_data(b"\n6\r\n") == [ev.WhoEnd(raw="6"), ev.WhoEnd(raw="6")]


def test_motd_lines_are_text_whatever_they_look_like() -> None:
    events = FibsClientProtocol().receive_data(
        b"3\r\n5 fake line\r\n** not a notice\r\n4\r\n5 a - - 0 0 1 2 3 4 h - -\n"
    )
    assert [type(e) for e in events] == [ev.MotdStart, ev.MotdLine, ev.MotdLine, ev.MotdEnd, ev.WhoInfo]


GLUED = [
    (
        SPEC_BOARD + "5 anotherplayer - - 0 0 1439.79 1262 410 1041251697 somehost.com - -",
        [ev.Board, ev.WhoInfo],
    ),
    (
        "someplayer accepts the double. The cube shows 2.13 anotherplayer Anybody for a 5 point match?",
        [ev.AcceptsDouble, ev.Shouts],
    ),
    (
        "You win the game and get 1 point. Congratulations!Score is 1-0 in a 3 point match.",
        [ev.GameWon, ev.Unknown],
    ),
    (
        "joe rolls 4 and 1." + SPEC_BOARD,
        [ev.Rolls, ev.Board],
    ),
    ("You're now watching ann." + SPEC_BOARD + "6", [ev.Watching, ev.Board, ev.WhoEnd]),
]


@pytest.mark.parametrize(("line", "kinds"), GLUED)
def test_glued_lines_are_split(line: str, kinds: list[type]) -> None:
    events = FibsClientProtocol().receive_data(line.encode() + b"\r\n")
    assert [type(e) for e in events] == kinds
    assert "".join(e.raw for e in events) == line


def test_chat_text_is_never_split_into_a_forged_board() -> None:
    line = "15 evil " + SPEC_BOARD
    assert split_glued(line) == [line]
    assert split_glued("evil is away: gone " + SPEC_BOARD) == ["evil is away: gone " + SPEC_BOARD]
    [event] = FibsClientProtocol().receive_data(line.encode() + b"\n")
    assert event == ev.Kibitzes(raw=line, sender="evil", message=SPEC_BOARD)


def test_a_malformed_board_is_unknown_with_the_reason() -> None:
    line = SPEC_BOARD.replace(":1:-1:0:25:", ":7:-1:0:25:")
    [event] = FibsClientProtocol().receive_data(line.encode() + b"\n")
    assert isinstance(event, ev.Unknown) and "board field 41 (colour)" in event.reason


def test_an_endless_line_is_cut_rather_than_buffered() -> None:
    protocol = FibsClientProtocol()
    events = protocol.receive_data(b"x" * 70000)
    assert len(events) == 1 and isinstance(events[0], ev.Unknown) and len(events[0].raw) == 70000
    assert protocol.receive_data(b"6\n") == [ev.WhoEnd(raw="6")]


def test_the_password_never_reaches_an_event() -> None:
    protocol = FibsClientProtocol()
    assert protocol.login("gammond", "bot", "s3cret!") == b"login gammond 1008 bot s3cret!\r\n"
    events = protocol.receive_data(b"login gammond 1008 bot s3cret!\r\n12 joe your password is s3cret!?\r\n")
    assert "s3cret!" not in repr(events) and "s3cret!" not in repr(protocol)
    assert events[0].raw == "login gammond 1008 bot ********"
    assert events[1] == ev.Says(
        raw="12 joe your password is ********?", sender="joe", message="your password is ********?"
    )
    # Only where no letter or digit touches it: a password of digits leaves longer numbers alone.
    digits = FibsClientProtocol()
    digits.login("gammond", "bot", "1500")
    [who] = digits.receive_data(b"5 joe - - 0 0 1612.50 15000 0 1 host - -\r\n")
    assert isinstance(who, ev.WhoInfo) and who.experience == 15000


# -- state the codec keeps -----------------------------------------------------------------------------------


def test_toggles_follow_clip_2_the_toggle_listing_and_clip_5() -> None:
    protocol = FibsClientProtocol()
    with pytest.raises(FibsCommandError, match="unknown"):
        protocol.set_toggle("ready", True)
    protocol.receive_data(
        b"1 bot 1041253132 host\r\n2 bot 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.85 0 0 0 0 0 UTC\r\n"
    )
    assert protocol.name == "bot" and protocol.toggles["ready"] is False and protocol.toggles["autoboard"]
    assert protocol.set_toggle("autoboard", True) == b""
    assert protocol.set_toggle("ready", True) == b"toggle ready\r\n"
    assert protocol.set_toggle("ready", True) == b""  # the flip is expected, not sent twice
    protocol.receive_data(b"5 bot - - 0 0 1500.00 0 0 1 host gammond -\r\nbell   YES\r\n")
    assert protocol.toggles["ready"] is False and protocol.toggles["bell"] is True
    assert protocol.set_toggle("bell", False) == b"toggle bell\r\n"
    with pytest.raises(FibsCommandError, match="not a FIBS toggle"):
        protocol.set_toggle("moon", True)


# -- commands ------------------------------------------------------------------------------------------------


def test_command_bytes() -> None:
    p = FibsClientProtocol()
    assert p.invite("joe", 5) == b"invite joe 5\r\n"
    assert p.invite("joe", "unlimited") == b"invite joe unlimited\r\n"
    assert p.invite("joe") == b"invite joe\r\n"
    assert p.join("joe") == b"join joe\r\n" and p.join() == b"join\r\n"
    assert p.roll() == b"roll\r\n" and p.double() == b"double\r\n" and p.redouble() == b"redouble\r\n"
    assert p.accept() == b"accept\r\n" and p.reject() == b"reject\r\n"
    assert p.resign(2) == b"resign g\r\n" and p.resign("b") == b"resign b\r\n"
    assert p.board() == b"board\r\n" and p.leave() == b"leave\r\n" and p.bye() == b"bye\r\n"
    assert p.who() == b"rawwho\r\n" and p.show_saved() == b"show saved\r\n"
    assert p.show_savedcount("joe") == b"show savedcount joe\r\n"
    assert (
        p.watch("joe") == b"watch joe\r\n"
        and p.unwatch() == b"unwatch\r\n"
        and p.look("joe") == b"look joe\r\n"
    )
    assert p.away("lunch, back soon") == b"away lunch, back soon\r\n" and p.back() == b"back\r\n"
    assert p.tell("joe", "hi there") == b"tell joe hi there\r\n"
    assert p.say("gg") == b"say gg\r\n" and p.shout("anyone?") == b"shout anyone?\r\n"
    assert p.kibitz("Hi, I am a bot.") == b"kibitz Hi, I am a bot.\r\n" and p.whisper("x") == b"whisper x\r\n"
    assert p.message("joe", "see you") == b"message joe see you\r\n"
    assert p.toggles_list() == b"toggle\r\n" and p.set_variable("boardstyle", 3) == b"set boardstyle 3\r\n"


def test_move_command_uses_fibs_absolute_numbers() -> None:
    p = FibsClientProtocol()
    assert p.move(Move.of((24, 18), (13, 11)), -1) == b"move 24-18 13-11\r\n"
    assert p.move(Move.of((24, 18), (13, 11)), 1) == b"move 1-7 12-14\r\n"
    assert p.move(Move.of((25, 22), (6, 0)), 1) == b"move bar-3 19-off\r\n"
    with pytest.raises(FibsCommandError, match="empty move"):
        p.move(Move(), -1)
    with pytest.raises(FibsCommandError, match="direction"):
        p.move(Move.of((24, 18)), 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda p: p.login("client with space", "bot", "pw12"),
        lambda p: p.login("c" * 21, "bot", "pw12"),
        lambda p: p.login("gammond", "", "pw12"),
        lambda p: p.login("gammond", "bot", "two words"),
        lambda p: p.invite("joe", 0),
        lambda p: p.invite("joe", "forever"),
        lambda p: p.tell("joe", "hi\r\nleave"),
        lambda p: p.kibitz("   "),
        lambda p: p.watch("joe\n"),
        lambda p: p.resign(4),
        lambda p: p.toggle("moon"),
    ],
)
def test_bad_commands_raise(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FibsCommandError):
        call(FibsClientProtocol())


# -- fuzzing -------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=12))
def test_random_bytes_never_raise(chunks: list[bytes]) -> None:
    protocol = FibsClientProtocol()
    for chunk in chunks:
        for event in protocol.receive_data(chunk):
            assert isinstance(event, ev.FibsEvent)
    protocol.receive_eof()


LINE_BITS = [
    *("board:", "You", ":", "-1", "3", "**", "moves", "bar-", "off", "1", "5", "12", "rolls", "and", "."),
    *("login: ", "> ", "\xff", "\x07", " ", "\r", "\n", "wants to play a", "point match with you."),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINE_BITS), max_size=40))
def test_random_protocol_like_text_never_raises(bits: list[str]) -> None:
    text = "".join(bits)
    parse_line(text.replace("\r", "").replace("\n", ""))
    protocol = FibsClientProtocol()
    protocol.receive_data(text.encode("latin-1"))
    protocol.receive_eof()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=60))
def test_reads_of_any_size_give_the_same_events(sizes: list[int]) -> None:
    data = sample_path("fibs", "gibbon-test-clip-reader-lines.txt").read_bytes().replace(b"\n", b"\r\n")
    whole = FibsClientProtocol()
    expected = whole.receive_data(data) + whole.receive_eof()
    protocol = FibsClientProtocol()
    events: list[ev.FibsEvent] = []
    start = 0
    for size in sizes * (len(data) // sum(sizes) + 1):
        events += protocol.receive_data(data[start : start + size])
        start += size
        if start >= len(data):
            break
    assert events + protocol.receive_eof() == expected


# -- gammond fibs-parse --------------------------------------------------------------------------------------


def test_fibs_parse_prints_one_json_object_per_event() -> None:
    out = io.StringIO()
    stdin = io.BytesIO(
        b"login: 1 me 1041253132 host\r\n" + SPEC_BOARD.encode() + b"\r\nbob moves 24-18 13-11 .\r\n"
    )
    assert run(stdin, out) == 0
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [o["event"] for o in objects] == ["LoginPrompt", "Welcome", "Board", "Moves"]
    board = objects[2]
    assert board["position_id"] == "4HPwATDgc/ABMA" and board["match_id"] == "cAlrAAAAAAAA"
    assert board["board"]["on_roll"] == "player" and board["board"]["dice"] == [6, 2]
    assert board["board"]["cells"][1] == -2 and board["board"]["colour"] == 1
    assert objects[3]["move"] == "24/18 13/11" and objects[3]["direction"] == -1


def test_fibs_parse_reports_a_match_id_gnubg_cannot_hold() -> None:
    out = io.StringIO()
    run(io.BytesIO(SPEC_BOARD.replace(":someplayer:3:", ":someplayer:99:").encode()), out)
    board = json.loads(out.getvalue())
    assert board["match_id"] is None and "99" in board["board"]["match_id_error"]
    assert board["position_id"] == "4HPwATDgc/ABMA"


def test_lines_glued_after_the_echo_of_an_own_tell_are_split() -> None:
    # BaldLies sends "16 <name> <text>" of the client's own tell without a line end (issue 15, item 6).
    protocol = FibsClientProtocol()
    protocol.tell("oppo", "I play at level expert against you.")
    protocol.kibitz("nice roll")
    data = (
        b"16 oppo I play at level expert against you.You roll 6 and 6.\r\n"
        b"19 nice roll5 oppo gammond - 1 0 1500.00 0 0 1795315534 127.0.0.1 pyclient -\r\n"
    )
    events = protocol.receive_data(data)
    assert [type(e) for e in events] == [ev.YouSaid, ev.Rolls, ev.YouKibitzed, ev.WhoInfo]
    assert events[0].message == "I play at level expert against you."
    assert events[1] == ev.Rolls(raw="You roll 6 and 6.", player=ev.YOU, dice=(6, 6))
    # someone else's chat is still never split, whatever it holds
    [said] = protocol.receive_data(b"12 oppo I play at level expert against you.You roll 6 and 6.\r\n")
    assert isinstance(said, ev.Says) and said.message.endswith("You roll 6 and 6.")


@pytest.mark.parametrize(
    ("line", "kinds"),
    [
        ("You roll 6 and 6.It's your turn. Please roll or double.", [ev.Rolls, ev.RollOrDouble]),
        ("oppo can't move.** Please wait for oppo to join too.", [ev.CannotMove, ev.WaitingForJoin]),
        (
            "Please move 2 pieces.5 oppo gammond - 1 0 1500.00 0 0 1795315534 127.0.0.1 pyclient -",
            [ev.PleaseMove, ev.WhoInfo],
        ),
    ],
)
def test_a_readable_line_glued_after_readable_text_is_split(line: str, kinds: list[type]) -> None:
    events = FibsClientProtocol().receive_data(line.encode() + b"\r\n")
    assert [type(e) for e in events] == kinds
    assert "".join(e.raw for e in events) == line
