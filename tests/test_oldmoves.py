"""FIBS oldmoves (engine/formats/oldmoves.py): the sample against the .mat of the same match, FIBS numbering,
money play, swapped names and scores, resignations, cut-short and broken texts."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.formats import (
    OldmovesFormatError,
    decode_text,
    detect_format,
    read_mat,
    read_match,
    read_oldmoves,
)
from engine.ids import GameState
from engine.match import GameResult, ResignLevel
from engine.record import ActionKind, MatchRecord, RecordError
from tests.samples import sample_path

FIBS_SAMPLE = "fibs_oldmoves_3p_from_gnubg_selfplay.fibs"


def sample_text(name: str) -> str:
    return decode_text(sample_path("mat", name).read_bytes())


def plays(record: MatchRecord) -> list[list[tuple[object, ...]]]:
    """Per game: who did what, with plays as sets of steps (FIBS writes its own step order)."""
    return [
        [
            (a.player, a.kind, tuple(sorted(a.dice or ())), tuple(sorted(a.move.steps)) if a.move else None)
            for a in game.actions
        ]
        for game in record.games
    ]


def test_the_sample_is_the_same_match_as_the_mat_it_was_made_from() -> None:
    fibs = read_oldmoves(sample_text(FIBS_SAMPLE), source=FIBS_SAMPLE)
    mat = read_mat(sample_text("gnubg_selfplay_3p.mat"))
    assert fibs.names == ("BotA", "BotB") == mat.names and fibs.length == 3
    assert plays(fibs) == plays(mat)
    assert [g.result for g in fibs.games] == [g.result for g in mat.games]
    assert fibs.final_state().score == (3, 1) and not fibs.partial
    # "X: wins 2 points" with the cube at 2: a single game resigned, not a gammon (gnubg reads every one single)
    assert fibs.games[1].result == GameResult(0, 2, ResignLevel.SINGLE, GameState.RESIGNED)
    assert detect_format(sample_text(FIBS_SAMPLE)) == "oldmoves"
    assert read_match(sample_text(FIBS_SAMPLE)) == fibs


MONEY = """\
Score is 0-0 in an unlimited match.
Ann is X - Bob is O.
X: (3 1) 17-20 19-20
O: (6 5) 24-18 18-13
X: doubles
O: accepts
X: (6 6) 1-7 1-7 12-18 12-18
O: wants to resign
X: wins 4 points

Score is 4-0 in an unlimited match.
Bob is X - Ann is O.
O: (4 2) 24-20 24-22
X: (5 5) 12-17 12-17 17-22 17-22
O: (6 6) can't move
X: doubles
O: rejects
X: wins 1 point
"""


def test_money_play_swapped_names_and_resignation_levels() -> None:
    record = read_oldmoves(MONEY)
    assert record.names == ("Ann", "Bob") and record.is_money and not record.partial
    assert not record.rules.jacoby and not record.rules.beavers  # FIBS has neither
    first, second = record.games
    # "17-20 19-20": X writes 25 minus its own numbers, so this is 8/5 6/5
    assert str(first.actions[0].move) == "8/5 6/5"
    assert first.result == GameResult(0, 4, ResignLevel.GAMMON, GameState.RESIGNED)  # 4 points at cube 2
    # game 2 names Bob as X: Bob is still player 1 and now writes X-style numbers, Ann (O) her own
    assert second.score == (4, 0) and second.first_player == 0
    assert second.actions[0].player == 0 and str(second.actions[0].move) == "24/20 24/22"
    assert str(second.actions[1].move) == "13/8 13/8 8/3 8/3"  # hitting Ann's blot on his 3-point
    assert second.actions[2].move is not None and not second.actions[2].move  # Ann dances on the bar
    assert second.result == GameResult(1, 1, ResignLevel.SINGLE, GameState.DROPPED)
    assert record.final_score == (4, 1)


def test_fibs_swapped_score_bug_is_accepted() -> None:
    # game 2 has Bob as X, so FIBS should print Bob's score first ("0-4"); it sometimes prints "4-0"
    assert "Score is 4-0 in an unlimited match." in MONEY
    assert read_oldmoves(MONEY).games[1].score == (4, 0)
    assert read_oldmoves(MONEY.replace("Score is 4-0", "Score is 0-4")).games[1].score == (4, 0)
    with pytest.raises(OldmovesFormatError, match="score line gives") as info:
        read_oldmoves(MONEY.replace("Score is 4-0", "Score is 3-0"))
    assert info.value.line == 11


def test_descending_x_plays_are_mirrored_like_gnubg_does() -> None:
    # fibs2html and others write X's plays in X's own numbering: read the other way round when needed
    text = MONEY.replace("X: (3 1) 17-20 19-20", "X: (3 1) 8-5 6-5")
    assert str(read_oldmoves(text).games[0].actions[0].move) == "8/5 6/5"


@pytest.mark.parametrize(
    ("old", "new", "line", "fragment"),
    [
        ("X: (3 1) 17-20 19-20", "X: (3 1) 17-21 19-20", 3, "not a legal play"),
        ("O: (6 5) 24-18 18-13", "O: (6 5) can't move", 4, "can't move"),
        ("O: accepts", "O: hops", 6, "unrecognised"),
        ("O: accepts", "Q: accepts", 6, "not an 'X: ...'"),
        ("X: (3 1) 17-20 19-20", "X: (3 3) 17-20 19-20", 3, "opening roll 33 is a double"),
        ("X: (3 1) 17-20 19-20", "X: (3 7) 17-20 19-20", 3, "1..6"),
        ("O: accepts", "X: accepts", 6, "cannot take|turn"),
        ("Ann is X - Bob is O.\nX: (3 1)", "Ann and Bob\nX: (3 1)", 2, "is X - "),
    ],
)
def test_broken_lines_are_named(old: str, new: str, line: int, fragment: str) -> None:
    with pytest.raises(OldmovesFormatError, match=fragment) as info:
        read_oldmoves(MONEY.replace(old, new, 1), source="m.txt")
    assert info.value.line == line and str(info.value).startswith(f"m.txt:{line}: ")


def test_text_level_errors_and_partial_texts() -> None:
    with pytest.raises(OldmovesFormatError, match="not oldmoves"):
        read_oldmoves("hello\n")
    with pytest.raises(OldmovesFormatError, match="expected text"):
        read_oldmoves(None)  # type: ignore[arg-type]
    lines = MONEY.splitlines()
    cut = read_oldmoves("\n".join(lines[:4]) + "\nX: dou")
    assert cut.partial and len(cut.games[0].actions) == 2
    unfinished = read_oldmoves("\n".join(lines[:6]))
    assert unfinished.partial and unfinished.final_state().cube == 2
    # another match after the first one ends the import, as in gnubg
    other = MONEY + "\nScore is 0-0 in a 5 point match.\nCid is X - Dee is O.\nX: (3 1) 17-20 19-20\n"
    assert len(read_oldmoves(other).games) == 2


def test_a_text_cut_short_reads_as_far_as_it_goes() -> None:
    text = sample_text(FIBS_SAMPLE)
    full = [a for g in read_oldmoves(text).games for a in g.actions]
    for cut in sorted(random.Random(1).sample(range(120, len(text) - 20), 20)):
        record = read_oldmoves(text[:cut])
        got = [a for g in record.games for a in g.actions]
        assert record.partial
        assert got == full[: len(got)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    where=st.floats(0, 1, exclude_max=True),
    at=st.floats(0, 1, exclude_max=True),
    junk=st.text(alphabet=" 0123456789-()XObarofwinsdubleac':.\t", min_size=1, max_size=5),
    delete=st.booleans(),
)
def test_random_damage_gives_a_typed_error_or_a_record(
    where: float, at: float, junk: str, delete: bool
) -> None:
    lines = MONEY.split("\n")
    i = int(where * len(lines))
    k = int(at * (len(lines[i]) + 1))
    lines[i] = lines[i][:k] + ("" if delete else junk) + lines[i][k + len(junk) :]
    try:
        record = read_oldmoves("\n".join(lines))
    except (OldmovesFormatError, RecordError):
        return
    record.final_state()
    assert all(a.kind in ActionKind for g in record.games for a in g.actions)


@pytest.mark.parametrize(
    ("last", "fragment"),
    [
        ("X: (9 9) 1-10", "dice 99 are not both in 1..6"),
        ("X: (0 5)", "dice 05"),
    ],
)
def test_impossible_values_on_the_last_line_are_errors_not_a_cut(last: str, fragment: str) -> None:
    # issue 15 item 11: `gammond mat check` called such a file ok (partial), taking the line for a cut
    lines = MONEY.splitlines()
    text = "\n".join([*lines[:4], last]) + "\n"
    with pytest.raises(OldmovesFormatError, match=fragment) as info:
        read_oldmoves(text, source="m.txt")
    assert info.value.line == 5
    assert read_oldmoves("\n".join([*lines[:4], "X: (6 5) 1-"])).partial  # a real cut still reads


def test_an_illegal_play_on_a_whole_last_line_is_an_error_not_a_cut() -> None:
    # A line break after the last line shows it was not cut: its illegal play is an error (as in read_mat).
    lines = MONEY.splitlines()
    bad = "X: (3 1) 1-10"
    for end in ("\n", "\r\n", "\n\n"):
        with pytest.raises(OldmovesFormatError) as info:
            read_oldmoves("\n".join([*lines[:4], bad]) + end, source="m.txt")
        assert info.value.line == 5
    assert read_oldmoves("\n".join([*lines[:4], bad])).partial  # unterminated: it may have been cut
