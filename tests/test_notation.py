"""Move notation: gnubg, .mat and FIBS parsers and formatters, checked against gnubg's own strings."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import IllegalMoveError
from engine.moves import Move, Play, legal_plays
from engine.notation import (
    MoveSyntaxError,
    format_fibs,
    format_gnubg,
    format_mat,
    parse_fibs,
    parse_fibs_move_to_play,
    parse_gnubg,
    parse_move,
)
from engine.position import Position
from tests.samples import sample_path

DATA = Path(__file__).parent / "data"
OPENING = Position.initial()


def _game_positions(seed: int, count: int) -> list[Position]:
    """Positions met in random games: contact, hits, the bar, races and bear-offs."""
    rng = random.Random(seed)
    found: list[Position] = []
    while len(found) < count:
        pos = OPENING
        while not pos.is_over():
            if rng.random() < 0.15:
                found.append(pos)
            pos = rng.choice(legal_plays(pos, (rng.randint(1, 6), rng.randint(1, 6)))).position.swap()
    return found[:count]


POSITIONS = _game_positions(7, 300)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- gnubg syntax --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("24/18 13/11", ((24, 18), (13, 11))),
        ("13/11 24/18", ((13, 11), (24, 18))),  # syntax keeps the order written
        ("bar/22", ((25, 22),)),
        ("6/off", ((6, 0),)),
        ("25/22 6/0", ((25, 22), (6, 0))),
        ("b/22 B/21 Bar/20 BAR/19", ((25, 22), (25, 21), (25, 20), (25, 19))),
        ("6/o 5/O 4/Off 3/of", ((6, 0), (5, 0), (4, 0), (3, 0))),
        ("13/7*(2)", ((13, 7), (13, 7))),
        ("13/11(4)", ((13, 11),) * 4),
        ("24/18/12", ((24, 18), (18, 12))),
        ("24/18*/13", ((24, 18), (18, 13))),
        ("bar/21*/17*/9", ((25, 21), (21, 17), (17, 9))),
        ("13/5(2)", ((13, 5), (13, 5))),
        ("24/22(2) 13/11(2)", ((24, 22), (24, 22), (13, 11), (13, 11))),
        ("bar/off (2)", ((25, 0), (25, 0))),  # Backgammon Studio writes a space before "(2)"
        ("Bar/24(2) 6/5*(2)", ((25, 24), (25, 24), (6, 5), (6, 5))),
        ("24/18, 13/11,", ((24, 18), (13, 11))),
        ("24 18 13 11", ((24, 18), (13, 11))),  # gnubg pairs points without '/' too
        ("  24/18   13/11  ", ((24, 18), (13, 11))),
        ("6-", ((6, 0),)),  # gnubg reads '-' as the point "off"
        ("6/- 5-", ((6, 0), (5, 0))),
        ("024/018", ((24, 18),)),
    ],
)
def test_parse_gnubg_variants(text: str, steps: tuple[tuple[int, int], ...]) -> None:
    assert parse_gnubg(text).steps == steps


@pytest.mark.parametrize(
    "text", ["", "   ", "Cannot Move", "cannot move", "can't move", "Can't move.", "can’t move"]
)
def test_no_move_phrases_are_the_empty_move(text: str) -> None:
    assert parse_gnubg(text) == Move()
    assert parse_fibs(text, -1) == Move()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("13-8 6-5", "'-' means off"),
        ("/24/18", "before the first point"),
        ("24//18", "two separators"),
        ("24/18/", "ends with a separator"),
        ("24/", "ends with a separator"),
        ("24", "no destination"),
        ("24/18 13", "no destination"),
        ("off/5", "cannot start from off"),
        ("5/bar", "cannot go to the bar"),
        ("6/off/3", "cannot go on after off"),
        ("26/20", "not in 0..25"),
        ("99999999999999999999999/1", "not in 0..25"),
        ("18/24", "step 1 goes backwards"),
        ("24/18 6/6", "step 2 goes backwards"),
        ("13/11(5)", "not in 1..4"),
        ("13/11(0)", "not in 1..4"),
        ("13/11(2", "count and ')'"),
        ("(2) 13/11", "must follow a complete step"),
        ("13/(2)", "must follow a complete step"),
        ("24 18(2)", "joined step such as 13/7"),
        ("24/23/22/21/20/19", "at most 4 steps"),
        ("13/7(2) 24/18(2) 6/5", "at most 4 steps"),
        ("24/18 bard/20", "unknown word"),
        ("24/18 home/20", "unknown word"),
        ("24/18 + 13/11", "unexpected character '+'"),
        ("24/18 ١٣/11", "unexpected character"),  # non-ASCII digits are not points
    ],
)
def test_parse_gnubg_rejects_with_a_reason(text: str, why: str) -> None:
    with pytest.raises(MoveSyntaxError) as info:
        parse_gnubg(text)
    assert why in str(info.value)
    assert repr(text[:20])[:-1] in str(info.value)  # the message names the text


def test_loose_dialect_reads_dash_as_a_separator() -> None:
    assert parse_gnubg("13-8 6-5", dialect="loose").steps == ((13, 8), (6, 5))
    assert parse_gnubg("bar-22 6-home", dialect="loose").steps == ((25, 22), (6, 0))
    assert parse_gnubg("24-18-12", dialect="loose").steps == ((24, 18), (18, 12))
    assert parse_gnubg("13/7*(2)", dialect="loose").steps == ((13, 7), (13, 7))
    with pytest.raises(ValueError, match="dialect"):
        parse_gnubg("24/18", dialect="xg")  # type: ignore[arg-type]


# -- resolving against the legal plays -----------------------------------------------------------------------


def _play(pos: Position, dice: tuple[int, int], *steps: tuple[int, int]) -> Play:
    target = Move(steps).canonical()
    return next(p for p in legal_plays(pos, dice) if p.move == target)


def test_parse_move_accepts_any_order_consolidation_and_hit_marks() -> None:
    best = _play(OPENING, (6, 2), (24, 18), (13, 11))
    for text in ["24/18 13/11", "13/11 24/18", "24/18* 13/11*", "13/11, 24/18", "24 18 13 11"]:
        assert parse_move(text, OPENING, (6, 2)) == best
        assert parse_move(text, OPENING, (2, 6)) == best
    run = parse_move("24/16", OPENING, (6, 2))
    assert run.position == parse_move("24/18 18/16", OPENING, (6, 2)).position
    assert run == parse_move("24/22/16", OPENING, (6, 2))
    assert parse_move("13/7(2) 8/2(2)", OPENING, (6, 6)) == parse_move("13/7 13/7 8/2 8/2", OPENING, (6, 6))


def test_consolidated_move_through_a_blot_is_the_quiet_route() -> None:
    # My chequer on 24, an opposing blot on my 18: 24/13 means via 19 (no hit), the hit is 24/18*/13.
    pos = Position.from_points({24: 1, 6: 14, 18: -1, 1: -14})
    quiet = parse_move("24/13", pos, (6, 5))
    hit = parse_move("24/18*/13", pos, (6, 5))
    assert quiet != hit
    assert quiet.position.opp[24] == 0 and hit.position.opp[24] == 1
    assert format_gnubg(pos, quiet.move) == "24/13"
    assert format_gnubg(pos, hit.move) == "24/18*/13"
    assert parse_move("24/18/13", pos, (6, 5)) == hit  # the hit mark is optional
    # Blots on both 18 and 19: no quiet route, so the consolidated text is illegal.
    both = Position.from_points({24: 1, 6: 14, 18: -1, 19: -1, 1: -13})
    with pytest.raises(IllegalMoveError):
        parse_move("24/13", both, (6, 5))


def test_illegal_move_error_names_text_dice_and_alternatives() -> None:
    with pytest.raises(IllegalMoveError) as info:
        parse_move("24/17 13/11", OPENING, (2, 6))
    message = str(info.value)
    assert "'24/17 13/11'" in message and " 62 " in message and OPENING.position_id in message
    assert "24/18 13/11" in message and "(14 in all)" in message
    # Wrong dice use, too few steps, too many steps, moving a chequer that is not there:
    for text in ["24/18", "24/18 13/11 6/5", "24/18 13/10", "23/17 13/11", "24/16 13/11"]:
        with pytest.raises(IllegalMoveError, match=re.escape(repr(text))):
            parse_move(text, OPENING, (6, 2))


def test_empty_move_only_when_the_roll_cannot_be_played() -> None:
    closed = Position.from_points({19: -2, 20: -2, 21: -2, 22: -2, 23: -2, 24: -2, 12: 13}, bar=(2, 0))
    for text in ["", "Cannot Move", "can't move"]:
        dance = parse_move(text, closed, (6, 6))
        assert dance.move == Move() and dance.position == closed
        with pytest.raises(IllegalMoveError, match=r"\(no move\)|the empty move"):
            parse_move(text, OPENING, (6, 2))
    with pytest.raises(IllegalMoveError):
        parse_move("bar/19", closed, (6, 6))


def test_bad_dice_are_a_dice_error() -> None:
    with pytest.raises(ValueError, match="dice"):
        parse_move("24/18 13/11", OPENING, (7, 2))


# -- gnubg formatting ----------------------------------------------------------------------------------------


_OPENING_POINTS = {24: 2, 13: 5, 8: 3, 6: 5, 19: -5, 17: -3, 12: -5, 1: -2}


@pytest.mark.parametrize(
    ("points", "bar", "dice", "gnubg"),
    [
        # Every legal play as gnubg 1.07's hint prints it (0-ply, all moves), copied from its output.
        (
            _OPENING_POINTS,
            (0, 0),
            (6, 6),
            "24/18(2) 13/7(2)|24/18 13/7(3)|24/18(2) 8/2(2)|13/7(2) 8/2(2)|24/18 13/7(2) 8/2|13/7(4)|"
            "24/18(2) 13/7 8/2|13/7(3) 8/2|24/18 13/7 8/2(2)|24/18 8/2(3)|13/7 8/2(3)",
        ),
        ({13: 2, 7: -1, 20: -14}, (0, 0), (6, 6), "13/7*/1(2)"),
        ({6: 2, 3: -1}, (0, 0), (3, 3), "6/3*/off(2)"),
        ({8: 1, 20: -1, 5: -1}, (1, 0), (5, 3), "bar/20*/17|bar/20* 8/5*|bar/22 8/3|bar/17"),
        ({2: 2}, (0, 0), (6, 6), "2/off(2)"),
        ({24: 2, 18: -1, 6: 13, 1: -14}, (0, 0), (6, 6), "24/18*/12(2)|24/18*/6 24/18"),
        (
            {13: 2, 9: -1, 6: 13, 1: -14},
            (0, 0),
            (4, 4),
            "13/9*(2) 6/2(2)|13/9*/5(2)|13/9* 6/2(3)|13/9*/5 6/2(2)|6/2(4)|13/9*/5 13/9 6/2",
        ),
        ({24: 1, 6: 14, 18: -1, 1: -14}, (0, 0), (6, 5), "24/13|24/18*/13"),
    ],
)
def test_format_gnubg_examples(
    points: dict[int, int], bar: tuple[int, int], dice: tuple[int, int], gnubg: str
) -> None:
    pos = Position.from_points(points, bar)
    assert sorted(format_gnubg(pos, p.move) for p in legal_plays(pos, dice)) == sorted(gnubg.split("|"))
    for text in gnubg.split("|"):
        assert format_gnubg(pos, parse_move(text, pos, dice).move) == text


def test_format_gnubg_marks_each_hit_point_once() -> None:
    # The second chequer to reach a hit point gets no '*' ("24/18*/6 24/18" from gnubg), whatever step order.
    pos = Position.from_points({24: 2, 18: -1, 6: 13, 1: -14})
    assert format_gnubg(pos, Move.of((18, 12), (24, 18), (12, 6), (24, 18))) == "24/18*/6 24/18"
    assert format_gnubg(pos, Move.of((24, 18), (24, 18))) == "24/18*(2)"
    assert format_gnubg(pos, Move()) == ""


def _vectors() -> list[dict[str, object]]:
    with (DATA / "gnubg_move_strings.jsonl").open() as f:
        return [json.loads(line) for line in f]


def test_format_gnubg_equals_gnubg_hint_strings() -> None:
    """Every legal play of every vector formats to exactly one of gnubg's strings, and vice versa."""
    vectors = _vectors()
    assert len(vectors) > 250
    checked = 0
    for vec in vectors:
        pos = Position.from_id(str(vec["posid"]))
        dice = tuple(vec["dice"])  # type: ignore[arg-type]
        gnubg = sorted(vec["moves"])  # type: ignore[type-var]
        ours = sorted(format_gnubg(pos, p.move) for p in legal_plays(pos, dice))
        assert ours == gnubg, (vec["posid"], dice)
        checked += len(ours)
    assert checked > 10_000


def test_gnubg_hint_strings_parse_to_their_play() -> None:
    """gnubg's own strings (chains through hits, groups, bar, off) resolve and print back unchanged."""
    rng = random.Random(3)
    for vec in _vectors():
        pos = Position.from_id(str(vec["posid"]))
        dice = tuple(vec["dice"])  # type: ignore[arg-type]
        moves = list(vec["moves"])  # type: ignore[call-overload]
        for text in moves[:2] + rng.sample(moves, min(2, len(moves))):
            assert format_gnubg(pos, parse_move(text, pos, dice).move) == text


# -- .mat formatting and the sample match files --------------------------------------------------------------


def test_format_mat_examples() -> None:
    pos = Position.from_points(_OPENING_POINTS)
    assert format_mat(pos, Move.of((13, 8), (13, 11))) == "13/11 13/8 "
    assert format_mat(pos, Move.of((13, 11), (13, 11), (6, 4), (6, 4))) == "13/11 13/11 6/4 6/4"
    blots = Position.from_points({8: 1, 6: 2, 20: -1, 4: -1, 3: -1}, bar=(1, 0))
    # Bar is 25, off 0; '*' only on the first step that lands on a hit point; no merging, no "(n)".
    assert format_mat(blots, Move.of((25, 20), (20, 16))) == "25/20* 20/16 "
    assert format_mat(blots, Move.of((8, 4), (6, 4), (6, 3), (25, 21))) == "25/21 8/4* 6/4 6/3*"
    home = Position.from_points({3: 1, 1: 1})
    assert format_mat(home, Move.of((3, 0), (1, 0))) == "3/0 1/0 "
    assert format_mat(home, Move()) == ""


_ROW = re.compile(r"^\s*\d+\)")
_CELL = re.compile(r"(?<!\S)(?:([1-6])([1-6]):|(Doubles|Takes|Drops|Beavers|Wins))")


def _mat_cells(path: Path) -> Iterator[tuple[int, str, int, tuple[int, int] | None, str]]:
    """(game, cell kind, column 0/1, dice, text) for every cell of a .mat file, in play order."""
    game = 0
    for raw in path.read_text(encoding="utf-8-sig").splitlines():
        line = raw.rstrip("\r\n")
        if "Game " in line:
            game += 1
            continue
        row = _ROW.match(line)
        if not row and "Wins" in line:
            yield game, "Wins", 0, None, ""
            continue
        if not row:
            continue
        found = list(_CELL.finditer(line, row.end()))
        for k, m in enumerate(found):
            end = found[k + 1].start() if k + 1 < len(found) else len(line)
            column = 0 if m.start() < 20 else 1
            if m.group(3):
                yield game, m.group(3), column, None, ""
            else:
                text = line[m.end() : end]
                text = text[1:] if text.startswith(" ") else text
                dice = (int(m.group(1)), int(m.group(2)))
                yield game, "roll", column, dice, text if column == 1 else text.rstrip()


_MAT_SAMPLES = [
    "gnubg_export_charlot_7p.mat",
    "gnubg_export_roll_then_resign_1p.mat",
    "gnubg_selfplay_3p.mat",
    "gnubg_selfplay_money_session.mat",
    "xg_money_session_drop.txt",
    "bgstudio_boardlord_llabba_7p.txt",
    "galaxy_match1301058_7p.txt",
    "opengammon_vireo_vs_tester_5p.mat",
    "gibbon_javafibs_7point.mat",
]


@pytest.mark.parametrize("name", _MAT_SAMPLES)
def test_sample_match_files_replay(name: str) -> None:
    """Every play of the sample matches (gnubg imports each file cleanly) resolves to a legal play; for
    gnubg's own exports ``format_mat`` reproduces each cell written in descending order byte for byte."""
    board, over, game, plays, exact = OPENING, False, 0, 0, 0
    for cell_game, kind, column, dice, text in _mat_cells(sample_path("mat", name)):
        if cell_game != game:
            board, over, game = OPENING, False, cell_game  # board seen by the left column's player
        if over or kind != "roll":
            over = over or kind in ("Drops", "Wins")
            continue
        assert dice is not None
        pos = board if column == 0 else board.swap()
        legal = legal_plays(pos, dice)
        if text.strip() in ("", "???", "????") and legal[0].move:
            over = True  # a roll with no play although one exists: the roller resigns
            continue
        play = parse_move(text, pos, dice)
        plays += 1
        assert parse_move(format_gnubg(pos, play.move), pos, dice) == play
        assert parse_move(format_mat(pos, play.move), pos, dice) == play
        written = parse_gnubg(text)
        if name.startswith("gnubg_") and written.steps == written.canonical().steps:
            ours = format_mat(pos, written)
            assert (ours if column == 1 else ours.rstrip()) == text  # left cells carry padding
            exact += column
        board = play.position if column == 0 else play.position.swap()
    assert plays >= 2
    if name in ("gnubg_export_charlot_7p.mat", "gnubg_selfplay_money_session.mat"):
        assert exact > 20  # right-hand cells end the line, so their trailing space is checked too


# -- FIBS ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "direction", "steps"),
    [
        ("bar-22 13-11 6-off", -1, ((25, 22), (13, 11), (6, 0))),
        ("24-18 13-11", -1, ((24, 18), (13, 11))),
        ("1-7 12-17", 1, ((24, 18), (13, 8))),  # X writes 25 - own point
        ("bar-4 20-off", 1, ((25, 21), (5, 0))),
        ("24-off 22-off .", 1, ((1, 0), (3, 0))),  # as FIBS echoes "gflohr moves 24-off 22-off ."
        ("24-home 24-home", 1, ((1, 0), (1, 0))),  # BaldLies echoes bear-offs as "home"
        ("move bar-23 bar-23 3-1 14-12", -1, ((25, 23), (25, 23), (3, 1), (14, 12))),
        ("m b-22 13-11", -1, ((25, 22), (13, 11))),
        ("MOVE 6-o", -1, ((6, 0),)),
        ("13 11 6 5", -1, ((13, 11), (6, 5))),
        ("24-18-12", -1, ((24, 18), (18, 12))),
        ("13/11 6-5*", -1, ((13, 11), (6, 5))),
        ("25-22 6-0", -1, ((25, 22), (6, 0))),  # FIBS board numbering: O's bar 25, home 0
        ("0-3 22-25", 1, ((25, 22), (3, 0))),  # X's bar 0, home 25
        ("can't move", 1, ()),
    ],
)
def test_parse_fibs(text: str, direction: int, steps: tuple[tuple[int, int], ...]) -> None:
    assert parse_fibs(text, direction).steps == steps


@pytest.mark.parametrize(
    "text", ["13-", "-13", "13--11", "bar", "24-18 x", "13-8(2)", "1-7 off-3", "1-12", "26-20"]
)
def test_parse_fibs_rejects(text: str) -> None:
    with pytest.raises(MoveSyntaxError):
        parse_fibs(text, -1)


def test_fibs_direction_must_be_plus_or_minus_one() -> None:
    for direction in (0, 2, -2, None, "1"):
        with pytest.raises(ValueError, match="direction"):
            parse_fibs("13-11", direction)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="direction"):
            format_fibs(Move.of((13, 11)), direction)  # type: ignore[arg-type]


def test_format_fibs_both_directions() -> None:
    move = Move.of((6, 0), (25, 22), (13, 11))
    assert format_fibs(move, -1) == "bar-22 13-11 6-off"
    assert format_fibs(move, 1) == "bar-3 12-14 19-off"
    assert format_fibs(Move(), 1) == ""
    assert parse_fibs(format_fibs(move, 1), 1).canonical() == move.canonical()


def test_fibs_move_resolves_for_either_side() -> None:
    best = _play(OPENING, (6, 2), (24, 18), (13, 11))
    assert parse_fibs_move_to_play("24-18 13-11", OPENING, (6, 2), -1) == best
    assert parse_fibs_move_to_play("1-7 12-14", OPENING, (6, 2), 1) == best
    with pytest.raises(IllegalMoveError, match=r"'2-8 12-14' is not a legal play of 62.*legal: .*1-7 12-14"):
        parse_fibs_move_to_play("2-8 12-14", OPENING, (6, 2), 1)
    with pytest.raises(MoveSyntaxError, match=r"goes backwards \(direction \+1 goes up"):
        parse_fibs_move_to_play("24-18 13-11", OPENING, (6, 2), 1)


def test_fibs_oldmoves_sample_replays() -> None:
    """X (direction +1) and O (-1) in gnubg's oldmoves import format, every play resolved and printed back."""
    line_re = re.compile(r"^([XO]): \(([1-6]) ([1-6])\) (.*)$")
    board, plays = OPENING, 0  # board as X sees it
    for line in sample_path("mat", "fibs_oldmoves_3p_from_gnubg_selfplay.fibs").read_text().splitlines():
        if line.startswith("Score is"):
            board = OPENING
        m = line_re.match(line)
        if not m:
            continue
        side, dice, text = m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4)
        direction = 1 if side == "X" else -1
        pos = board if side == "X" else board.swap()
        play = parse_fibs_move_to_play(text, pos, dice, direction)
        assert parse_fibs_move_to_play(format_fibs(play.move, direction), pos, dice, direction) == play
        board = play.position if side == "X" else play.position.swap()
        plays += 1
    assert plays > 50


# -- fuzzing -------------------------------------------------------------------------------------------------

_MOVE_CHARS = "0123456789/*()-, bBaArRoOfFhmeMvV.'\t"


@FUZZ
@given(st.one_of(st.text(), st.text(alphabet=_MOVE_CHARS)), st.sampled_from(["gnubg", "loose"]))
def test_parse_gnubg_never_crashes(text: str, dialect: str) -> None:
    try:
        move = parse_gnubg(text, dialect=dialect)  # type: ignore[arg-type]
    except IllegalMoveError:
        return
    assert isinstance(move, Move) and len(move) <= 4


@FUZZ
@given(st.one_of(st.text(), st.text(alphabet=_MOVE_CHARS)), st.sampled_from([-1, 1]))
def test_parse_fibs_never_crashes(text: str, direction: int) -> None:
    try:
        move = parse_fibs(text, direction)
    except IllegalMoveError:
        return
    assert isinstance(move, Move)


@FUZZ
@given(
    st.text(alphabet=_MOVE_CHARS, max_size=30),
    st.sampled_from(POSITIONS),
    st.tuples(st.integers(1, 6), st.integers(1, 6)),
)
def test_parse_move_never_crashes(text: str, pos: Position, dice: tuple[int, int]) -> None:
    for resolve in (
        lambda: parse_move(text, pos, dice),
        lambda: parse_move(text, pos, dice, dialect="loose"),
        lambda: parse_fibs_move_to_play(text, pos, dice, 1),
    ):
        try:
            play = resolve()
        except IllegalMoveError:
            continue
        assert play in legal_plays(pos, dice)


@FUZZ
@given(st.sampled_from(POSITIONS), st.tuples(st.integers(1, 6), st.integers(1, 6)), st.integers(0, 10_000))
def test_formatted_plays_parse_back(pos: Position, dice: tuple[int, int], pick: int) -> None:
    plays = legal_plays(pos, dice)
    play = plays[pick % len(plays)]
    assert parse_move(format_gnubg(pos, play.move), pos, dice) == play
    assert parse_move(format_mat(pos, play.move), pos, dice) == play
    for direction in (-1, 1):
        assert parse_fibs_move_to_play(format_fibs(play.move, direction), pos, dice, direction) == play
    # The other side of the same board, FIBS numbering mirrored.
    swapped = pos.swap()
    other = legal_plays(swapped, dice)[pick % len(legal_plays(swapped, dice))]
    text = format_fibs(other.move, 1)
    assert parse_fibs_move_to_play(text, swapped, dice, 1) == other
