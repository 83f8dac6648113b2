"""Jellyfish .mat (engine/formats/mat.py): the samples of every dialect, gnubg's layout byte for byte,
round trips, the reader's rules, broken and cut-short files, and (when installed) gnubg's own import."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench._random_records import random_record
from bot.cli import main
from engine.formats import MatFormatError, decode_text, read_mat, write_mat
from engine.ids import GameState
from engine.match import GameResult, ResignLevel, Rules
from engine.moves import Move
from engine.record import Action, ActionKind, GameRecord, MatchRecord, RecordBuilder, RecordError
from tests.samples import sample_path

GNUBG = os.environ.get("GNUBG", "/usr/games/gnubg")
IMPORTER = Path(__file__).resolve().parents[1] / "bench" / "_gnubg_mat_import.py"

# gnubg 1.07's import of each sample (../shared/reference/match-formats.md section 3): per game the winner,
# the points and how the game ended (R resigned, D dropped, O played out), and the final score
EXPECTED = {
    "gnubg_export_charlot_7p.mat": ("1 2 R, 0 2 D, 0 4 O, 0 3 R", (9, 2)),
    "gnubg_export_roll_then_resign_1p.mat": ("0 1 R", (1, 0)),
    "gnubg_selfplay_3p.mat": ("1 1 D, 0 2 R, 0 1 R", (3, 1)),
    "gnubg_selfplay_money_session.mat": ("0 2 R, 0 2 D, 1 1 D, 0 4 R, 0 2 O", (10, 1)),
    "xg_money_session_drop.txt": ("0 1 D", (1, 0)),
    "bgstudio_boardlord_llabba_7p.txt": ("0 4 O, 1 2 O, 0 4 O", (8, 2)),
    "galaxy_match1301058_7p.txt": ("1 2 D, 1 2 O, 0 1 D, 0 2 O, 1 2 O, 0 1 O, 0 2 O, 1 1 R", (6, 7)),
    "opengammon_vireo_vs_tester_5p.mat": ("1 1 D, 1 1 D, 1 2 O, 1 2 O", (0, 6)),
    "gibbon_javafibs_7point.mat": ("1 1 D, 0 2 D, 1 1 D, 0 2 R, 1 2 O, 1 1 D, 0 1 O, 0 1 D, 0 2 O", (8, 5)),
}
GNUBG_EXPORTS = [name for name in EXPECTED if name.startswith("gnubg_")]
HOW = {GameState.OVER: "O", GameState.RESIGNED: "R", GameState.DROPPED: "D"}


def sample_text(name: str) -> str:
    return decode_text(sample_path("mat", name).read_bytes())


def results(record: MatchRecord) -> str:
    return ", ".join(
        f"{g.result.winner} {g.result.points} {HOW[g.result.how]}" if g.result else "-" for g in record.games
    )


def comparable(record: MatchRecord) -> list[list[Action]]:
    """What a .mat keeps of each game: every action but declined resignations, a roll played after one
    merged into its move, a resigner's forced roll left out; an accepted resignation stays (as its Wins)."""
    steps = list(record.steps())
    games = []
    for number in range(1, len(record.games) + 1):
        kept = [s for s in steps if s.game == number and s.action.kind not in ("resign", "reject")]
        games.append(
            [
                _larger_die_first(s.action)
                for k, s in enumerate(kept)
                if s.action.kind != ActionKind.ROLL
                or not (
                    (k + 1 < len(kept) and kept[k + 1].action.kind == "move")
                    or len(s.after.legal_plays()) == 1
                )
            ]
        )
    return games


def _larger_die_first(action: Action) -> Action:
    """The writer puts the larger die first, as gnubg does; a roll is the same roll in either order."""
    if action.dice is None:
        return action
    return dataclasses.replace(action, dice=(max(action.dice), min(action.dice)))


def game_rows(text: str) -> list[str]:
    """The lines gnubg's importer reads as rows (after the first 'Game' line, not blank, not 'Game')."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Game "))
    return [line for line in lines[first:] if line.strip() and not line.lstrip().startswith("Game ")]


# -- the samples --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_sample_reads_and_replays_to_gnubgs_results(name: str) -> None:
    record = read_mat(sample_text(name), source=name)
    expected_results, expected_score = EXPECTED[name]
    assert results(record) == expected_results
    assert record.final_score == expected_score
    assert record.final_state().score == expected_score
    assert not record.partial


def test_sample_details() -> None:
    xg = read_mat(sample_text("xg_money_session_drop.txt"))
    assert xg.names == ("me", "XG Roller+")  # from the score line: XG's "Player 1" is the right column
    assert xg.site == "eXtreme Gammon" and xg.match_id == "anonymized" and xg.is_money
    assert str(xg.date) == "2026-10-03" and str(xg.time) == "23:21:00"
    assert xg.rules == Rules(crawford=True, jacoby=True, beavers=False)
    assert ("Player 1 Elo", "2262.00/400") in xg.tags
    # "11: Bar/24(2) 6/5*(2)" as written, "63: 24/15*" as the legal play it stands for
    moves = [str(a.move) for a in xg.games[0].moves if a.player == 0]
    assert moves[0] == "24/21 21/15" and "bar/24 bar/24 6/5 6/5" in moves
    studio = read_mat(sample_text("bgstudio_boardlord_llabba_7p.txt"))
    assert studio.event == "Online match" and studio.round == "Round 0"
    assert ("ClockType", "Speed 168/6") in studio.tags
    dances = [a for a in studio.games[2].moves if not a.move]
    assert len(dances) >= 2  # "Cannot Move"
    gibbon = read_mat(sample_text("gibbon_javafibs_7point.mat"))
    assert gibbon.games[1].moves[0].dice == (2, 6)  # dice kept as written
    charlot = read_mat(sample_text("gnubg_export_charlot_7p.mat"))
    assert str(charlot.games[0].moves[1].move) == "6/5 8/5"  # the order played, as gnubg keeps it


@pytest.mark.parametrize("name", GNUBG_EXPORTS)
def test_the_writer_reproduces_gnubgs_export_byte_for_byte(name: str) -> None:
    text = sample_text(name)
    assert write_mat(read_mat(text), tags="gnubg", match_end=False) == text


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_samples_round_trip(name: str) -> None:
    record = read_mat(sample_text(name))
    text = write_mat(record)
    again = read_mat(text)
    assert comparable(again) == comparable(record)
    assert [g.result for g in again.games] == [g.result for g in record.games]
    assert [g.score for g in again.games] == [g.score for g in record.games]
    assert (again.names, again.length, again.date, again.site, again.match_id) == (
        record.names,
        record.length,
        record.date,
        record.site,
        record.match_id,
    )
    assert write_mat(again) == text
    assert all(len(row) > 15 for row in game_rows(text))


# -- the writer ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_random_records_round_trip_with_short_rows_nowhere(seed: int) -> None:
    rng = random.Random(seed)
    money = seed % 3 == 0
    record = random_record(rng, length=0 if money else None, rules=Rules(beavers=True), resign_rate=0.02)
    text = write_mat(record)
    assert all(len(row) > 15 for row in game_rows(text)), "gnubg's importer replays rows of 15 or fewer"
    assert ("\n 0 point match\n" in text) == money
    again = read_mat(text)
    assert comparable(again) == comparable(record)
    assert [g.result for g in again.games] == [g.result for g in record.games]
    assert again.final_score == record.final_score
    assert text.count(" and the match") == (0 if money else 1)
    assert "Wins" in text.splitlines()[-2] and text.endswith("\n\n")
    assert "\r" not in text


def test_header_tags_and_names() -> None:
    builder = RecordBuilder(
        5, ("Ann: the: best", "Game 7, 1600"), site="FIBS", match_id="fibs-1", tags=(("Round", "x"),)
    )
    builder.start_game((4, 2))
    builder.add_resign(0, 3)
    builder.add_accept(1)
    text = write_mat(builder.record())
    head = text.split("\n\n")[0].splitlines()
    assert head[:4] == [
        '; [Site "FIBS"]',
        '; [Match ID "fibs-1"]',
        '; [Player 1 "Ann: the: best"]',
        '; [Player 2 "Game 7, 1600"]',
    ]
    assert '; [Crawford "On"]' in head and '; [CubeLimit "1024"]' in head
    # score line names keep nothing gnubg would cut: no ':', no ',<number>', no 'Game '
    assert f" {'Ann. the. best : 0':<31}Game. 7. 1600 : 0\n" in text
    back = read_mat(text)
    assert back.names == ("Ann. the. best", "Game. 7. 1600")
    assert back.games[0].result == GameResult(1, 3, ResignLevel.BACKGAMMON, GameState.RESIGNED)
    # the unplayed opening roll is shown, then the resignation at once
    assert "  1) 42:                         Wins 3 points" in text
    money = MatchRecord(("a", "b"), 0, rules=Rules(jacoby=False, beavers=False))
    assert '; [Jacoby "Off"]\n; [Beaver "Off"]' in write_mat(money)
    assert "\n 0 point match\n" in write_mat(money)


def _game_text(actions: list[Action], opening: tuple[int, int], length: int = 3) -> str:
    builder = RecordBuilder(length, ("A", "B"))
    builder.start_game(opening)
    for action in actions:
        builder.add(action)
    text = write_mat(builder.record())
    return text[text.index(" Game 1") :]


def test_layout_of_drops_resignations_and_unplayed_rolls() -> None:
    opening = [Action(1, ActionKind.MOVE, dice=(3, 1), move=Move(((8, 5), (6, 5))))]
    left_drops = [
        *opening,
        Action(0, ActionKind.MOVE, dice=(5, 2), move=Move(((13, 8), (13, 11)))),
        Action(1, ActionKind.DOUBLE),
        Action(0, ActionKind.DROP),
    ]
    assert _game_text(left_drops, (1, 3)).splitlines()[3:] == [
        "  2) 52: 13/8 13/11               Doubles => 2",
        "  3)  Drops                       Wins 1 point ",
        "",
    ]
    # player 0 rolls, then resigns: gnubg's "%3d) %-3s" roll and "Wins" 24 spaces on
    rolls_resigns = [*opening, Action(0, ActionKind.ROLL, dice=(6, 5)), Action(0, ActionKind.RESIGN, level=1)]
    rolls_resigns.append(Action(1, ActionKind.ACCEPT))
    assert (
        _game_text(rolls_resigns, (1, 3)).splitlines()[3] == "  2) 65:                         Wins 1 point"
    )
    # player 1 rolls, then resigns: the roll ends its row, "Wins" goes in the left column
    right = [
        Action(0, ActionKind.MOVE, dice=(3, 1), move=Move(((8, 5), (6, 5)))),
        Action(1, ActionKind.ROLL, dice=(5, 1)),
        Action(1, ActionKind.RESIGN, level=2),
        Action(0, ActionKind.ACCEPT),
    ]
    assert _game_text(right, (3, 1)).splitlines()[2:5] == [
        "  1) 31: 8/5 6/5                 51: ",
        "      Wins 2 points",
        "",
    ]


def test_a_resigners_forced_roll_is_left_out() -> None:
    """gnubg's importer plays a roll written without a play when just one play is legal, so the writer
    leaves such a roll out: read back, no forced roll remains and the results are the same."""
    rng = random.Random(3)
    found = 0
    for _ in range(60):
        record = random_record(rng, length=0, games=2, resign_rate=0.05)
        if not any(s.action.kind == "roll" and len(s.after.legal_plays()) == 1 for s in record.steps()):
            continue
        found += 1
        again = read_mat(write_mat(record))
        assert not any(s.action.kind == "roll" and len(s.after.legal_plays()) == 1 for s in again.steps())
        assert [g.result for g in again.games] == [g.result for g in record.games]
    assert found


def test_write_refuses_a_record_that_does_not_replay() -> None:
    bad = GameRecord((0, 0), (3, 1), (Action(0, ActionKind.MOVE, dice=(3, 1), move=Move(((13, 5),))),))
    with pytest.raises(RecordError, match="game 1, action 1"):
        write_mat(MatchRecord(("a", "b"), 3, games=(bad,)))
    with pytest.raises(ValueError, match="tags"):
        write_mat(MatchRecord(("a", "b"), 3), tags="snowie")  # type: ignore[arg-type]


# -- the reader ---------------------------------------------------------------------------------------------

HEAD = '; [Site "t"]\n\n 3 point match\n\n Game 1\n A : 0                          B : 0\n'


def test_reader_dialects() -> None:
    # CRLF and a BOM, no leading spaces, words for bar and off, (n) groups, unsorted dice, row numbers
    # not right-aligned, cube words with no leading space and wide padding
    text = (
        '\ufeff; [Site "t"]\r\n\r\n3 Point Match\r\n\r\nGame 1\r\nA: 0      B: 0\r\n'
        "1) 13: 8/5 6/5                                    Doubles => 2\r\n"
        "10) Takes                                         55: 13/8(2) 8/3(2)\r\n"
        "11) 65: 24/18 18/13                               21: 24/23 6/4\r\n"
        "12) 52: 13/8 13/11                                54: ???\r\n"
    )
    record = read_mat(text)
    assert record.names == ("A", "B") and record.length == 3 and record.partial
    moves = record.games[0].moves
    assert moves[0].dice == (1, 3) and str(moves[1].move) == "13/8 13/8 8/3 8/3"
    assert record.games[0].actions[-1] == Action(1, ActionKind.ROLL, dice=(5, 4))
    with pytest.raises(MatFormatError, match="not a legal play of 21") as info:
        read_mat(text.replace("24/23", "24-23"))  # gnubg reads '-' as off
    assert info.value.line == 9


@pytest.mark.parametrize(
    ("wins", "cube_rows", "level"),
    [
        ("Wins 1 point", "", 1),
        ("Wins 2 points", "", 2),
        ("Wins 3 points", "", 3),
        ("Wins 2008 point", "", 3),
        ("Wins 2 points", "  2)  Doubles => 2                Takes\n", 1),
        ("Wins 4 points", "  2)  Doubles => 2                Takes\n", 2),
    ],
)
def test_wins_of_a_game_still_going_is_a_resignation_of_level_n_over_cube(
    wins: str, cube_rows: str, level: int
) -> None:
    text = (
        HEAD
        + "  1) 31: 8/5 6/5                 42: 8/4 6/4 \n"
        + cube_rows
        + "  3) 65:\n"
        + " " * 34
        + wins
        + "\n"
    )
    record = read_mat(text)
    result = record.games[0].result
    assert result is not None and result.how == GameState.RESIGNED and result.level == level
    assert record.games[0].actions[-3].kind == ActionKind.ROLL  # the resigner's roll, never played


def test_wins_after_a_game_over_on_the_board_or_a_drop_must_be_the_replays() -> None:
    # issue 28 item 16: "Wins 9 points" after a drop of a 1-cube was taken as written (gnubg ignores it)
    text = (
        HEAD
        + "  1) 31: 8/5 6/5                 Doubles => 2\n  2)  Drops                       Wins 1 point\n"
    )
    result = read_mat(text).games[0].result
    assert result == GameResult(1, 1, ResignLevel.SINGLE, GameState.DROPPED)
    with pytest.raises(MatFormatError, match="won by B with 1 point") as info:
        read_mat(text.replace("Wins 1 point", "Wins 9 points"), source="x.mat")
    assert info.value.line == 8 and "game 1: 'Wins 9 points'" in str(info.value)
    # a last line cut short may have broken the number off ("Wins 1" of "Wins 12 points"): read as far as it goes
    assert read_mat(text.replace("Wins 1 point\n", "Wins 9")).partial


def test_a_jellyfish_beaver_implies_the_take() -> None:
    text = (
        "\n 0 point match\n\n Game 1\n A : 0                          B : 0\n"
        "  1) 31: 8/5 6/5                  Doubles => 2\n"
        "  2)  Beavers => 4                61: 13/7 8/7 \n"
        "  3)  Doubles => 8                Drops\n      Wins 4 points\n"
    )
    game = read_mat(text).games[0]
    assert [a.kind for a in game.actions] == ["move", "double", "beaver", "take", "move", "double", "drop"]
    assert game.result == GameResult(0, 4, ResignLevel.SINGLE, GameState.DROPPED)


@pytest.mark.parametrize(
    ("row", "line", "fragment"),
    [
        ("  1) 31: 8/5 6/5                 42: 8/4 6/3 \n", 7, "not a legal play"),
        ("  1) 31: 8/5 6/5                 42: 8-4 6/4 \n", 7, "'-' means off"),
        ("  1) 31: 8/5 6/5                 Takes\n", 7, "no double"),
        ("  1) 31: 8/5 6/5  41: 8/4  21: 6/4\n", 7, "more than two cells"),
        ("  1) foo 31: 8/5 6/5\n", 7, "does not start a roll"),
        ("  1) 33: 8/5 6/5\n", 7, "double"),
        ("  1) 31: Illegal play (1;2;3)\n", 7, "not supported"),
        ("; Set Pos=-b----E-C---eE---c-e----B-/0\n", 7, "Set Pos"),
    ],
)
def test_a_broken_row_names_its_line(row: str, line: int, fragment: str) -> None:
    text = HEAD + row + "  2) 65: 24/18 18/13\n"
    with pytest.raises(MatFormatError, match=fragment) as info:
        read_mat(text, source="x.mat")
    assert info.value.line == line and str(info.value).startswith(f"x.mat:{line}: ")


def test_file_level_errors() -> None:
    with pytest.raises(MatFormatError, match="no 'N point match'"):
        read_mat("hello\n")
    with pytest.raises(MatFormatError, match="over 64"):
        read_mat(" 65 point match\n")
    with pytest.raises(MatFormatError, match="no game"):
        read_mat(" 3 point match\n\n")
    with pytest.raises(MatFormatError, match="before the first 'Game'"):
        read_mat(" 3 point match\n  1) 31: 8/5 6/5\n  2) 41: 24/23 13/9\n")
    with pytest.raises(MatFormatError, match="score line") as info:
        read_mat(HEAD.replace("B : 0", "B - 0") + "  1) 31: 8/5 6/5\n")
    assert info.value.line == 6
    two = HEAD + "  1) 31: 8/5 6/5\n\n Game 2\n A : 0                          B : 1\n  1) 31: 8/5 6/5\n"
    with pytest.raises(MatFormatError, match="no result, yet another game follows"):
        read_mat(two)
    with pytest.raises(MatFormatError, match="expected text"):
        read_mat(b"bytes")  # type: ignore[arg-type]


def test_score_lines_must_agree_with_the_games() -> None:
    one = HEAD + "  1) 31: 8/5 6/5                  Doubles => 2\n  2)  Drops\n      Wins 1 point\n\n"
    # player 1 doubled and player 0 dropped: 0-1
    assert read_mat(one + " Game 2\n A : 0                          B : 1\n  1) 31: 8/5 6/5\n").partial
    with pytest.raises(
        MatFormatError, match="score line gives 1-0, but the games before it give 0-1"
    ) as info:
        read_mat(one + " Game 2\n A : 1                          B : 0\n  1) 31: 8/5 6/5\n")
    assert info.value.line == 12


# -- files cut short and damaged -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["gnubg_export_charlot_7p.mat", "xg_money_session_drop.txt", "opengammon_vireo_vs_tester_5p.mat"]
)
def test_a_file_cut_short_reads_as_far_as_it_goes(name: str) -> None:
    text = sample_text(name)
    full = read_mat(text)
    flat = [a for g in full.games for a in g.actions]
    rng = random.Random(name)
    start = text.index("Game 1") + 80
    for cut in sorted(rng.sample(range(start, len(text) - 40), 25)):
        record = read_mat(text[:cut])
        assert record.partial
        got = [a for g in record.games for a in g.actions]
        # what is read is the start of the match (the last action may be a roll whose play was cut off)
        assert got[:-1] == flat[: max(len(got) - 1, 0)]
        assert len(got) <= len(flat)


# the smaller samples of four dialects keep the fuzz fast
_FUZZ_SAMPLES = [
    "xg_money_session_drop.txt",
    "bgstudio_boardlord_llabba_7p.txt",
    "gnubg_selfplay_3p.mat",
    "gnubg_export_roll_then_resign_1p.mat",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(_FUZZ_SAMPLES),
    where=st.floats(0, 1, exclude_max=True),
    damage=st.sampled_from(["delete", "insert", "replace", "drop line", "swap lines", "duplicate line"]),
    at=st.floats(0, 1, exclude_max=True),
    junk=st.text(alphabet=" 0123456789/:*()?abBoOWDTGamep-\t\r", min_size=1, max_size=6),
)
def test_random_line_damage_gives_a_typed_error_or_a_record(
    name: str, where: float, damage: str, at: float, junk: str
) -> None:
    lines = sample_text(name).split("\n")
    i = int(where * len(lines))
    line = lines[i]
    k = int(at * (len(line) + 1))
    if damage == "delete":
        lines[i] = line[:k] + line[k + len(junk) :]
    elif damage == "insert":
        lines[i] = line[:k] + junk + line[k:]
    elif damage == "replace":
        lines[i] = line[:k] + junk + line[k + len(junk) :]
    elif damage == "drop line":
        del lines[i]
    elif damage == "swap lines" and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif damage == "duplicate line":
        lines.insert(i, line)
    try:
        record = read_mat("\n".join(lines))
    except (MatFormatError, RecordError):
        return
    assert write_mat(record)  # whatever was read replays and can be written


# -- gnubg itself -------------------------------------------------------------------------------------------


@pytest.mark.skipif(not Path(GNUBG).exists(), reason="gnubg is not installed")
def test_gnubg_imports_what_the_writer_writes(tmp_path: Path) -> None:
    records = [random_record(random.Random(s), length=0 if s == 0 else 5, resign_rate=0.02) for s in range(3)]
    paths = []
    for k, record in enumerate(records):
        path = tmp_path / f"r{k}.mat"
        path.write_text(write_mat(record))
        paths.append(path)
    (tmp_path / "in.txt").write_text("".join(f"{p}\n" for p in paths))
    env = dict(
        os.environ, GAMMOND_GNUBG_IN=str(tmp_path / "in.txt"), GAMMOND_GNUBG_OUT=str(tmp_path / "out.jsonl")
    )
    subprocess.run(
        [GNUBG, "-t", "-q", "-r", "-p", str(IMPORTER)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,  # generous: CI runs on a small and often loaded machine
        check=False,
    )
    answers = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(answers) == len(records)
    for record, answer in zip(records, answers, strict=True):
        assert answer["warnings"] == []
        assert answer["score"] == list(record.final_score)
        got = [(g["winner"], g["points"], g["resigned"]) for g in answer["games"]]
        want = [
            (g.result.winner, g.result.points, g.result.how == GameState.RESIGNED)
            for g in record.games
            if g.result
        ]
        assert got == want


# -- the command line ---------------------------------------------------------------------------------------


def test_cli_check_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.mat"
    good.write_text(write_mat(random_record(random.Random(1), length=3)))
    broken = tmp_path / "broken.mat"
    broken.write_text(HEAD + "  1) 31: 8/5 6/3\n  2) 41: 24/23 13/9\n")
    assert main(["mat", "check", str(good)]) == 0
    assert capsys.readouterr().out.startswith(f"{good}: ok (3-point match, ")
    assert main(["mat", "check", "--json", str(good), str(broken), str(tmp_path / "absent.mat")]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["ok"] for r in rows] == [True, False, False]
    assert rows[0]["format"] == "mat" and max(rows[0]["score"]) >= 3 and rows[0]["partial"] is False
    assert rows[1]["line"] == 7 and "not a legal play of 31" in rows[1]["error"]
    assert "cannot read" in rows[2]["error"]
    assert main(["mat", "show", "--json", str(good)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["names"] == ["Alice", "Bob"] and shown["length"] == 3 and shown["games"]
    assert main(["mat", "show", str(good)]) == 0
    assert capsys.readouterr().out.startswith("Alice - Bob, 3-point match")
    assert main(["mat", "show", str(broken)]) == 2  # the CLI's usual answer to a ValueError


# -- impossible values on the last line (issue 15 item 11) --------------------------------------------------
# A broken last line is taken for a file cut short and dropped; a roll outside 1..6 is no prefix of any
# well-formed line, so it is an error naming its line wherever it stands.

ONE_POINT = " 1 point match\n\n Game 1\n a : 0                   b : 0\n"


@pytest.mark.parametrize(
    ("rows", "line", "fragment"),
    [
        ("  1)                             99: 24/18 13/11\n", 5, "dice 99 are not both in 1..6"),
        (
            "  1)                             62: 24/18 13/11\n  2) 62: 13/7* 24/22             99: \n",
            6,
            "99",
        ),
        ("  1)                             62: 24/18 13/11\n  2) 70: 13/7* 24/22\n", 6, "dice 70"),
        ("  1)                             99: 24/18 13/11\n  2) 62: 13/7* 24/22\n", 5, "dice 99"),
    ],
)
def test_impossible_dice_on_the_last_line_are_errors(rows: str, line: int, fragment: str) -> None:
    with pytest.raises(MatFormatError, match=fragment) as info:
        read_mat(ONE_POINT + rows, source="x.mat")
    assert info.value.line == line


def test_cli_check_calls_a_roll_of_99_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "99.mat"
    path.write_text(
        ONE_POINT + "  1)                             62: 24/18 13/11\n  2) 62: 13/7* 24/22   99: \n"
    )
    assert main(["mat", "check", "--json", str(path)]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["ok"] is False and row["line"] == 6 and "dice 99 are not both in 1..6" in row["error"]
    # cut short mid-play, the same line is still the end of a file cut short
    path.write_text(ONE_POINT + "  1)                             62: 24/18 13/11\n  2) 62: 13/7* 24/2")
    assert main(["mat", "check", "--json", str(path)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["partial"] is True and row["cut"] is True  # issue 28 item 16: said, not only "partial"
    assert main(["mat", "check", str(path)]) == 0
    assert capsys.readouterr().out.strip().endswith("partial: cut off mid-line)")
    path.write_text(ONE_POINT + "  1)                             62: 24/18 13/11\n")  # unfinished, not cut
    assert main(["mat", "check", "--json", str(path)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["partial"] is True and row["cut"] is False


# -- an illegal play on a whole last line ----------------------------------------------------------------------
# A hand-made file whose only row is an illegal opening play read as a partial match of no moves: the rule for
# files cut short took the illegal play for a line broken off. A line break after it shows the line is whole.

ILLEGAL_OPENING = ONE_POINT + "  1) 31: 13/10 13/12                 31: 13/10 13/12\n"


def test_an_illegal_play_on_a_whole_last_line_is_an_error() -> None:
    for text in (ILLEGAL_OPENING, ILLEGAL_OPENING + "\n\n", ILLEGAL_OPENING.replace("\n", "\r\n")):
        with pytest.raises(MatFormatError, match="not a legal play of 31") as info:
            read_mat(text, source="x.mat")
        assert info.value.line == 5
    # without the line break the line may have been cut short: still read as far as it goes
    record = read_mat(ILLEGAL_OPENING.rstrip("\n"))
    assert record.partial


def test_cli_check_and_analyse_reject_an_illegal_last_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "illegal.mat"
    path.write_text(ILLEGAL_OPENING)
    assert main(["mat", "check", "--json", str(path)]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["ok"] is False and row["line"] == 5 and "not a legal play of 31" in row["error"]
    assert main(["analyse", "--plies", "0", "--json", "--jobs", "1", str(path)]) == 1
    out = json.loads(capsys.readouterr().out.splitlines()[0])
    assert f"{path}:5:" in out["error"] and "not a legal play of 31" in out["error"]
