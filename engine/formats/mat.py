"""Jellyfish ``.mat`` match files: ``write_mat`` in GNU Backgammon's own layout, ``read_mat`` for the
dialects of gnubg, XG, Backgammon Studio, BackgammonGalaxy, OpenGammon, Gibbon and the like.

The rules are gnubg's exporter and importer (../shared/reference/match-formats.md, section 1). The writer
emits gnubg's rows exactly (``"%3d) %-27s "`` then the right cell; `` Doubles => N``, `` Takes``,
`` Drops``; ``Wins N point(s)`` indented 6 or 34; ``25``/``0`` for bar and off; plays in the order they were
made), so that every row is longer than 15 characters, which gnubg's importer needs (its short-line bug,
1.6). It adds XG-style tags in front and `` and the match`` on the last game, both of which gnubg accepts;
``tags="gnubg", match_end=False`` gives gnubg's own export byte for byte.

gnubg's importer decides some details of the writer: a beaver is written as gnubg writes it, `` Doubles``
in the beaverer's column (a ``Beavers`` cell followed by ``Takes`` makes gnubg 1.07 drop every later roll of
the file); a roll left unplayed before a resignation is written with no play (``65: ``), except when just one
play is legal, which gnubg would play, so that roll is left out.

What ``.mat`` cannot hold, and so a round trip loses: resignations offered and declined, the Jacoby and
beaver rules other than as tags, whether the Crawford rule was used (gnubg assumes it for every match), a
roll that cannot be played followed by the roller's resignation (it reads back as a dance, as in gnubg),
and the dice of an unplayed forced roll.

The reader splits each row into cells by content, not by column: a cell starts with a roll (``52:``) or a
keyword (``Doubles``, ``Beavers``, ``Takes``, ``Drops``, ``Wins``, ``Losses``); a row with one cell
belongs to the right column when the cell starts past the middle of the file's columns. Cells are then
played in order through the match state. ``Wins N`` of a game still going is a resignation by the other
player of level N/cube (single if N <= cube, gammon if N <= 2 x cube, else backgammon), as gnubg reads it;
after a game over on the board or a drop, N must be what the replay gives (the points scored, the board's
value as gnubg writes it, or at the end of a match the points it needed), where gnubg ignores it.
A roll with no play (``65:``, ``65: ???``, ``Cannot Move``) is a dance when nothing is legal, a roll never
played when a resignation follows, and gnubg's forced move when just one play is legal.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from engine.errors import EngineError
from engine.formats._common import (
    ImpossibleValueError,
    MatchFormatError,
    cut_line,
    impossible,
    kept_move,
    split_lines,
)
from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import Move, legal_plays
from engine.notation import parse_gnubg, parse_move
from engine.position import Position
from engine.record import (
    Action,
    ActionKind,
    GameRecord,
    MatchRecord,
    RecordBuilder,
    RecordError,
    ReplayStep,
    starting_state,
)

__all__ = ["MatFormatError", "read_mat", "write_mat"]

MAX_NAME_BYTES = 31  # gnubg keeps 31 bytes of a name read from a score line
LEFT_WIDTH = 27  # "%3d) %-27s ": the right cell starts at column 33
_WINS_LEFT = " " * 6
_WINS_RIGHT = " " * 34
_DROP_GAP = " " * 23  # " Drops" + 23 spaces: "Wins" at column 34 on the left dropper's row
_ROLL_THEN_WIN = " " * 24  # gnubg: "%3d) %-3s" roll, then the right column's "Wins" after 24 spaces


class MatFormatError(MatchFormatError):
    """A ``.mat`` file that cannot be read, with the line at fault."""


# -- writer ------------------------------------------------------------------------------------------------


def write_mat(record: MatchRecord, *, tags: Literal["xg", "gnubg"] = "xg", match_end: bool = True) -> str:
    """``record`` as a ``.mat`` text (LF line ends). RecordError if the record does not replay.

    ``tags="xg"`` writes XG-style header tags (Site, Match ID, Player 1 = left column, Player 2, Event,
    Round, EventDate, EventTime, Variation, Crawford or Jacoby/Beaver, CubeLimit, then the record's other
    tags); ``"gnubg"`` only the ones gnubg writes. ``match_end`` adds `` and the match`` to the result of the
    game that ends a match.
    """
    if tags not in ("xg", "gnubg"):
        raise ValueError(f"tags must be 'xg' or 'gnubg', not {tags!r}")
    names = (_safe_name(record.names[0], "Player 1"), _safe_name(record.names[1], "Player 2"))
    lines = _xg_header(record) if tags == "xg" else _gnubg_header(record)
    lines += [f" {record.length} point match", ""]
    steps_by_game: list[list[ReplayStep]] = [[] for _ in record.games]
    for step in record.steps():
        steps_by_game[step.game - 1].append(step)
    for number, (game, steps) in enumerate(zip(record.games, steps_by_game, strict=True), 1):
        ends_match = bool(steps) and steps[-1].after.match_over
        lines += _game_lines(number, game, steps, names, match_end and ends_match)
    return "\n".join(lines) + "\n"


def _tag(name: str, value: str) -> str:
    # a tag value ends at '"]' and at the line end; keep both out
    clean = " ".join(str(value).split()).replace('"]', "']")
    return f'; [{name} "{clean}"]'


def _date_text(date: datetime.date) -> str:
    return f"{date.year:04d}.{date.month:02d}.{date.day:02d}"


def _comment_lines(comment: str) -> list[str]:
    return [f"; {line}".rstrip() for line in comment.splitlines()] if comment.strip() else []


def _xg_header(record: MatchRecord) -> list[str]:
    lines = []
    if record.site:
        lines.append(_tag("Site", record.site))
    if record.match_id:
        lines.append(_tag("Match ID", record.match_id))
    lines += [_tag("Player 1", record.names[0]), _tag("Player 2", record.names[1])]
    if record.event:
        lines.append(_tag("Event", record.event))
    if record.round:
        lines.append(_tag("Round", record.round))
    if record.date:
        lines.append(_tag("EventDate", _date_text(record.date)))
    if record.time:
        lines.append(_tag("EventTime", f"{record.time.hour:02d}.{record.time.minute:02d}"))
    lines.append(_tag("Variation", "Backgammon"))
    on_off = {True: "On", False: "Off"}
    if record.is_money:
        lines += [_tag("Jacoby", on_off[record.rules.jacoby]), _tag("Beaver", on_off[record.rules.beavers])]
    else:
        lines.append(_tag("Crawford", on_off[record.rules.crawford]))
    lines.append(_tag("CubeLimit", record.tag("CubeLimit") or "1024"))
    lines += [_tag(k, v) for k, v in record.tags if k.lower() != "cubelimit"]
    return [*lines, *_comment_lines(record.comment), ""]


def _gnubg_header(record: MatchRecord) -> list[str]:
    """The tags gnubg's ``export match mat`` writes, in its order."""
    lines = []
    for name, value in (("Site", record.site), ("Event", record.event), ("Round", record.round)):
        if value:
            lines.append(_tag(name, value))
    if record.date and record.date.year > 1900:
        lines.append(_tag("EventDate", _date_text(record.date)))
    transcriber = record.tag("Transcriber")
    if transcriber:
        lines.append(_tag("Transcriber", transcriber))
    comment = _comment_lines(record.comment)
    if comment:
        lines += ["", *comment]
    return [*lines, ""]


def _safe_name(name: str, fallback: str) -> str:
    """A name gnubg reads back whole: no ':' (it splits the score line there), no ',<number>' (taken as a
    rating), no 'Game ' (starts a game), single spaces, at most 31 UTF-8 bytes."""
    text = " ".join(str(name).split()).replace(":", ".")
    text = re.sub(r",(?=\s*[+-]?\d)", ".", text)
    text = re.sub(r"Game(?= )", "Game.", text)
    data = text.encode("utf-8")[:MAX_NAME_BYTES]
    text = data.decode("utf-8", "ignore").strip()
    return text or fallback


def _pad(text: str, width: int) -> str:
    """``%-Ns`` as C pads: by bytes."""
    return text + " " * max(0, width - len(text.encode("utf-8")))


def _plain_move(position: Position, move: Move) -> str:
    """A play as gnubg's ``.mat`` export writes it: ``from/to`` per step in the order stored, 25 = bar,
    0 = off, ``*`` after a step landing where the opponent stood before the move (once per point), a space
    after each of the first three steps. (engine.notation.format_mat writes the canonical order instead.)"""
    out = []
    landed: set[int] = set()
    for k, (src, dst) in enumerate(move.steps):
        text = f"{src}/{dst}"
        if dst and position.opp[24 - dst] and dst not in landed:
            text += "*"
        landed.add(dst)
        out.append(text + (" " if k < 3 else ""))
    return "".join(out)


def _wins_text(points: int, match_end: bool) -> str:
    return f"Wins {points} point{'' if points == 1 else 's'}" + (" and the match" if match_end else "")


class _Rows:
    """Numbered rows of a game: a left cell padded to 27 and a space, then the right cell."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.open: str | None = None
        self.number = 1

    def _new_row(self, left: str) -> str:
        row = f"{self.number:3d}) {_pad(left, LEFT_WIDTH)} "
        self.number += 1
        return row

    def left(self, cell: str) -> None:
        self.close()
        self.open = self._new_row(cell)

    def right(self, cell: str) -> None:
        row = self.open if self.open is not None else self._new_row("")
        self.lines.append(row + cell)
        self.open = None

    def close(self) -> None:
        if self.open is not None:
            self.lines.append(self.open)
            self.open = None

    def line(self, text: str) -> None:
        self.close()
        self.lines.append(text)


def _game_lines(
    number: int, game: GameRecord, steps: list[ReplayStep], names: tuple[str, str], match_end: bool
) -> list[str]:
    s0, s1 = game.score
    first = f"{names[0]} : {s0}"
    lines = [f" Game {number}", f" {_pad(first, 31)}{names[1]} : {s1}"]
    rows = _Rows()
    # resignations declined (and one left unanswered) cannot be written: gnubg's .mat has no word for them
    shown = _written_steps(game, steps)
    for k, step in enumerate(shown):
        action, before, after = step.action, step.before, step.after
        column = rows.left if action.player == 0 else rows.right
        kind = action.kind
        if kind == ActionKind.MOVE:
            assert action.dice is not None and action.move is not None
            d1, d2 = max(action.dice), min(action.dice)  # gnubg writes the larger die first
            column(f"{d1}{d2}: {_plain_move(before.position, action.move)}")
        elif kind == ActionKind.ROLL:
            assert action.dice is not None
            d1, d2 = max(action.dice), min(action.dice)
            following = shown[k + 1] if k + 1 < len(shown) else None
            if action.player == 0 and following is not None and _winner_of(following) == 1:
                rows.close()
                rows.open = f"{rows.number:3d}) {d1}{d2}: " + _ROLL_THEN_WIN
                rows.number += 1
            else:
                column(f"{d1}{d2}: ")
        elif kind == ActionKind.DOUBLE:
            column(f" Doubles => {before.cube * 2}")
        elif kind == ActionKind.BEAVER:
            # as gnubg writes it: "Beavers" would make gnubg's importer expect no "Takes" (the doubler's
            # next roll implies it) and, given one, drop every later roll of the file
            column(f" Doubles => {before.cube * 4}")
        elif kind == ActionKind.TAKE:
            column(" Takes")
        elif kind == ActionKind.DROP:
            assert after.last_result is not None
            wins = _wins_text(after.last_result.points, match_end)
            if action.player == 0:
                rows.left(" Drops" + _DROP_GAP + wins)
                rows.close()
            else:
                rows.right(" Drops")
                rows.line(_WINS_LEFT + wins)
        elif kind == ActionKind.ACCEPT:
            assert after.last_result is not None
            wins = _wins_text(after.last_result.points, match_end)
            if action.player == 1 and rows.open is not None and rows.open.endswith(_ROLL_THEN_WIN):
                text, rows.open = rows.open + wins, None
                rows.line(text)
            else:
                rows.line((_WINS_LEFT if action.player == 0 else _WINS_RIGHT) + wins)
        if kind == ActionKind.MOVE and after.game_state == GameState.OVER:
            assert after.last_result is not None
            points = after.last_result.level * after.cube  # gnubg writes the board's value, Jacoby or not
            rows.line((_WINS_LEFT if action.player == 0 else _WINS_RIGHT) + _wins_text(points, match_end))
    rows.close()
    lines += rows.lines
    if game.result is not None:
        lines.append("")
    return lines


def _written_steps(game: GameRecord, steps: list[ReplayStep]) -> list[ReplayStep]:
    """The steps a .mat shows. Resignations declined or unanswered cannot be written, and an accepted one is
    its ``Wins`` line (written for the accept). A roll played after a declined resignation shows with its
    move; an unplayed roll with a single legal play is left out (see _forced). When the first player has
    not played the opening roll, the roll is shown on its own."""
    kept = [s for s in steps if s.action.kind not in (ActionKind.RESIGN, ActionKind.REJECT)]
    shown = []
    for k, step in enumerate(kept):
        if step.action.kind == ActionKind.ROLL:
            if k + 1 < len(kept) and kept[k + 1].action.kind == ActionKind.MOVE:
                continue
            if _forced(step.after):
                continue
        shown.append(step)
    if not shown or shown[0].action.kind not in (ActionKind.MOVE, ActionKind.ROLL):
        # only the dice of this step are written: a game with no action yet has no state to show
        start = steps[0].before if steps else MatchState()
        roll = Action(
            game.first_player, ActionKind.ROLL, dice=(max(game.opening_roll), min(game.opening_roll))
        )
        shown.insert(0, ReplayStep(0, 0, roll, start, start))
    return shown


def _forced(state: MatchState) -> bool:
    """Exactly one legal play of the dice rolled: gnubg's importer plays it when a roll is written without
    one, so an unplayed roll like that is left out (the resignation that follows reads the same)."""
    return len(state.legal_plays()) == 1


def _winner_of(step: ReplayStep) -> int | None:
    if step.action.kind == ActionKind.ACCEPT:
        return step.action.player
    return None


# -- reader ------------------------------------------------------------------------------------------------

_MATCH_LINE = re.compile(r"^\s*(\d{1,10})\s*point\s+match\b", re.IGNORECASE)
_GAME_LINE = re.compile(r"^\s*Game\s+(\d+)\b")
_TAG_LINE = re.compile(
    r'^\s*[;#]\s*\[\s*([A-Za-z]\w*(?: +\w+)*)\s+"(.*)"\s*\]\s*$'
)  # no lazy "[\w ]*?\s+": quadratic
_COMMENT_LINE = re.compile(r"^\s*[;#]")
_ROW_NUMBER = re.compile(r"^\s*\d+\)")
_ROLL_TOKEN = re.compile(r"^([1-6])([1-6]):(.*)$")
_ANY_ROLL_TOKEN = re.compile(r"^\d\d:")  # "99:" is meant as a roll, an impossible one
# The score line "name : n   name : n" is read by _parse_score_line without a regex: the obvious one,
# ^\s*(.*?)\s*:\s*(\d{1,9})\s+(.*?)\s*:\s*(\d{1,9})\s*$, backtracks cubically (28 s on a line of 2,000 spaces).
_FIRST_SCORE = re.compile(r"\s*(\d{1,9})\s")
_LAST_SCORE = re.compile(r"\d{1,9}")
_RATING_SUFFIX = re.compile(r"\s*,\s*[+-]?\d.*$")
_NUMBER = re.compile(r"^\d{1,9}")
_HIDDEN = re.compile(r"^\?{3,4}$")
_NO_MOVE = re.compile(r"^(cannot|can't|cant)\s+move\.?$", re.IGNORECASE)
_KEYWORDS = {
    "double": "double",
    "redouble": "double",
    "beaver": "beaver",
    "raccoon": "raccoon",
    "take": "take",
    "accept": "take",
    "drop": "drop",
    "pass": "drop",
    "reject": "drop",
    "win": "win",
    "loss": "loss",
    "lose": "loss",
    "resign": "resign",
}
_DEFAULT_LEFT_COLUMN, _DEFAULT_RIGHT_COLUMN = 5, 33
_KNOWN_TAGS = {
    "site",
    "match id",
    "player 1",
    "player 2",
    "event",
    "round",
    "eventdate",
    "eventtime",
    "variation",
    "crawford",
    "jacoby",
    "beaver",
}


@dataclass(frozen=True, slots=True)
class _Cell:
    line: int
    column: int  # where the cell starts in its line
    kind: str  # "roll" or a _KEYWORDS value
    text: str  # the cell as written, for messages
    dice: tuple[int, int] | None = None
    play: str = ""
    number: int | None = None


@dataclass(slots=True)
class _Block:
    """One game as found in the file: the 'Game' line, the score line and the row cells."""

    game_line: int
    score_line: int | None = None
    names: tuple[str, str] = ("", "")
    score: tuple[int, int] = (0, 0)
    rows: list[tuple[int, list[_Cell]]] | None = None


class _BadDice(MatFormatError, ImpossibleValueError):
    """A roll such as ``99:``: an error even on the last line, which is otherwise dropped when it is broken."""


class _ScoreMismatch(MatFormatError):
    """A score line that the games before it do not give (in money play, maybe the Jacoby rule), or a
    ``Wins N`` that the game as replayed does not give."""


def read_mat(text: str, source: str = "") -> MatchRecord:
    """Read a ``.mat`` text into a MatchRecord that replays legally.

    MatFormatError (naming the line) when the file is broken. A file cut short reads as far as it goes:
    an error on its last line drops that line, and the record comes back with ``partial=True``, as it does
    when the last game or the match is unfinished. Only an unterminated last line can have been cut: once a
    line break follows it, the line is whole, and an illegal play there is an error like anywhere else.
    """
    if not isinstance(text, str):
        raise MatFormatError(f"expected text, not {type(text).__name__}", source=source)
    lines = split_lines(text)
    header = _read_header(lines, source)
    last_line = cut_line(text, lines)
    blocks, cut = _read_blocks(lines, header.first_line, last_line, source)
    rules = header.rules
    if header.length == 0 and not header.jacoby_given:
        try:
            return _read_games(header, blocks, cut, last_line, rules, source)
        except _ScoreMismatch as first:
            # no Jacoby tag: the score lines tell whether gammons with a centred cube counted single
            try:
                other = Rules(crawford=rules.crawford, jacoby=not rules.jacoby, beavers=rules.beavers)
                return _read_games(header, blocks, cut, last_line, other, source)
            except MatFormatError:
                raise first from None
    return _read_games(header, blocks, cut, last_line, rules, source)


@dataclass(slots=True)
class _Header:
    length: int
    first_line: int  # index of the line after the match line
    rules: Rules
    jacoby_given: bool
    info: dict[str, object]


def _read_header(lines: list[str], source: str) -> _Header:
    tags: list[tuple[str, str]] = []
    comments: list[str] = []
    for index, line in enumerate(lines):
        match = _MATCH_LINE.match(line)
        if match and not _COMMENT_LINE.match(line):
            length = int(match.group(1))
            if length > 64:
                raise MatFormatError(f"match length {length} is over 64, gnubg's limit", index + 1, source)
            break
        tag = _TAG_LINE.match(line)
        if tag:
            tags.append((" ".join(tag.group(1).split()), tag.group(2)))
        elif _COMMENT_LINE.match(line):
            body = line.strip()[1:].strip()
            if body:
                comments.append(body)
    else:
        raise MatFormatError("no 'N point match' line: not a .mat file", None, source)
    info: dict[str, object] = {}
    extra: list[tuple[str, str]] = []
    flags: dict[str, bool] = {}
    for name, value in tags:
        key = name.lower()
        if key not in _KNOWN_TAGS:
            extra.append((name, value))
        elif key in ("site", "event", "round"):
            info[key] = value
        elif key == "match id":
            info["match_id"] = value
        elif key == "eventdate":
            date = _parse_date(value)
            if date is None:
                extra.append((name, value))
            else:
                info["date"] = date
        elif key == "eventtime":
            time = _parse_time(value)
            if time is None:
                extra.append((name, value))
            else:
                info["time"] = time
        elif key == "variation":
            if value.strip().lower() not in ("backgammon", "standard", ""):
                raise MatFormatError(f"variation {value!r} is not supported (only backgammon)", None, source)
        elif key in ("crawford", "jacoby", "beaver"):
            flags[key] = value.strip().lower() in ("on", "yes", "true", "1")
        # "player 1" / "player 2": the score lines name the columns (XG puts Player 1 on the right)
    if tags or comments:
        info["comment"] = "\n".join(comments)
    info["tags"] = tuple(extra)
    money = length == 0
    rules = Rules(
        crawford=flags.get("crawford", True),
        jacoby=flags.get("jacoby", True) if money else False,
        beavers=flags.get("beaver", True) if money else False,
    )
    return _Header(length, index + 1, rules, "jacoby" in flags, info)


def _parse_date(text: str) -> datetime.date | None:
    match = re.match(r"^\s*(\d{4})[.\-/](\d{1,2})[.\-/](\d{1,2})\s*$", text)
    if not match:
        return None
    try:
        return datetime.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _parse_time(text: str) -> datetime.time | None:
    match = re.match(r"^\s*(\d{1,2})[.:](\d{2})(?:[.:](\d{2}))?\s*$", text)
    if not match:
        return None
    try:
        return datetime.time(int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    except ValueError:
        return None


def _read_blocks(lines: list[str], start: int, last_line: int, source: str) -> tuple[list[_Block], bool]:
    """The games of the file, and whether its last line was broken off (then left out)."""
    blocks: list[_Block] = []
    try:
        _scan_blocks(lines, start, source, blocks)
    except MatFormatError as exc:
        if exc.line != last_line or impossible(exc):
            raise
        return blocks, True
    return blocks, False


def _scan_blocks(lines: list[str], start: int, source: str, blocks: list[_Block]) -> None:
    for index in range(start, len(lines)):
        line = lines[index]
        number = index + 1
        if not line.strip():
            continue
        if line.lstrip().startswith("; Set Pos") or line.lstrip().startswith(";Set Pos"):
            raise MatFormatError("edited positions ('; Set Pos=') are not supported", number, source)
        if _COMMENT_LINE.match(line):
            continue
        if _GAME_LINE.match(line):
            blocks.append(_Block(game_line=number))
            continue
        if line.strip().startswith("Game"):
            raise MatFormatError(f"{line.strip()!r} is not a 'Game N' line", number, source)
        if not blocks:
            raise MatFormatError(f"{line.strip()!r} comes before the first 'Game' line", number, source)
        block = blocks[-1]
        if block.score_line is None:
            block.names, block.score = _parse_score_line(line, number, source)
            block.score_line = number
            block.rows = []
            continue
        assert block.rows is not None
        block.rows.append((number, _split_row(line, number, source)))


def _parse_score_line(line: str, number: int, source: str) -> tuple[tuple[str, str], tuple[int, int]]:
    """``name : n   name : n``: the second score after the last colon, the first after the first colon that a
    number and a space follow (names may hold colons); linear in the line's length."""
    body = line.strip()
    last = body.rfind(":")
    second = body[last + 1 :].strip()
    if last > 0 and _LAST_SCORE.fullmatch(second):
        left = body[:last]
        colon = left.find(":")
        while colon >= 0:
            first = _FIRST_SCORE.match(left, colon + 1)
            if first:
                names = (left[:colon], left[first.end() :])
                # whitespace collapsed first: the rating pattern's \s* would be quadratic on a run of spaces
                a, b = (" ".join(_RATING_SUFFIX.sub("", " ".join(n.split())).split()) for n in names)
                return (a, b), (int(first.group(1)), int(second))
            colon = left.find(":", colon + 1)
    shown = body if len(body) <= 80 else body[:77] + "..."
    raise MatFormatError(f"{shown!r} is not a score line 'name : n   name : n'", number, source)


def _starts_cell(token: str) -> str | None:
    if _ROLL_TOKEN.match(token):
        return "roll"
    lower = token.lower()
    for prefix, kind in _KEYWORDS.items():
        if lower.startswith(prefix):
            return kind
    return None


def _split_row(line: str, number: int, source: str) -> list[_Cell]:
    """The cells of one row, found by content: a roll or a keyword starts a cell, anything else goes on."""
    prefix = _ROW_NUMBER.match(line)
    offset = prefix.end() if prefix else 0
    groups: list[tuple[int, str, list[str]]] = []
    for token in re.finditer(r"\S+", line[offset:]):
        word = token.group()
        if _ANY_ROLL_TOKEN.match(word) and not _ROLL_TOKEN.match(word):
            raise _BadDice(f"{line.strip()!r}: dice {word[:2]} are not both in 1..6", number, source)
        kind = _starts_cell(word)
        if kind is None and not groups:
            raise MatFormatError(
                f"{line.strip()!r}: {word!r} does not start a roll or a cube action", number, source
            )
        if kind is None:
            groups[-1][2].append(word)
        else:
            groups.append((token.start() + offset, kind, [word]))
    if len(groups) > 2:
        raise MatFormatError(f"{line.strip()!r} has more than two cells", number, source)
    return [_make_cell(column, kind, words, number, source) for column, kind, words in groups]


def _make_cell(column: int, kind: str, words: list[str], number: int, source: str) -> _Cell:
    text = " ".join(words)
    if kind == "roll":
        match = _ROLL_TOKEN.match(words[0])
        assert match is not None
        play = " ".join([match.group(3), *words[1:]]).strip()
        dice = (int(match.group(1)), int(match.group(2)))
        return _Cell(number, column, kind, text, dice=dice, play=play)
    value = None
    if kind in ("double", "beaver", "raccoon"):
        found = _NUMBER.match(words[-1])
        value = int(found.group()) if found else None
    elif kind == "win" and len(words) > 1:
        found = _NUMBER.match(words[1])
        value = int(found.group()) if found else None
    return _Cell(number, column, kind, text, number=value)


def _right_column_threshold(blocks: list[_Block]) -> float:
    """Where a lone cell counts as the right column: halfway between where the two cells of the file's
    two-cell rows start (gnubg 5 and 33, XG 5 and 39, OpenGammon 6 and 46)."""
    pairs = [cells for b in blocks for _, cells in b.rows or () if len(cells) == 2]
    left = min((cells[0].column for cells in pairs), default=_DEFAULT_LEFT_COLUMN)
    right = min((cells[1].column for cells in pairs), default=_DEFAULT_RIGHT_COLUMN)
    return (left + right) / 2


def _players(cells: list[_Cell], threshold: float) -> Iterator[tuple[int, _Cell]]:
    if len(cells) == 2:
        yield 0, cells[0]
        yield 1, cells[1]
    elif cells:
        yield (1 if cells[0].column >= threshold else 0), cells[0]


class _Stop(Exception):
    """The rest of a file cut short is dropped."""


def _read_games(
    header: _Header, blocks: list[_Block], cut: bool, last_line: int, rules: Rules, source: str
) -> MatchRecord:
    threshold = _right_column_threshold(blocks)
    partial = cut
    names = blocks[0].names if blocks else ("", "")
    builder: RecordBuilder | None = None
    for k, block in enumerate(blocks):
        is_last = k == len(blocks) - 1
        if block.score_line is None:
            if is_last:
                partial = True  # the file stops after a 'Game' line
                break
            raise MatFormatError("a 'Game' line with no score line after it", block.game_line, source)
        if builder is None:
            try:
                start = starting_state(header.length, rules, names, block.score)
            except RecordError as exc:
                raise MatFormatError(str(exc), block.score_line, source) from None
            builder = RecordBuilder(header.length, names, rules, start=start, **header.info)
        state = builder.state
        if builder.in_game:
            raise MatFormatError(f"game {k} has no result, yet another game follows", block.game_line, source)
        if state.match_over:
            break  # gnubg ignores games after the end of the match
        if block.score != state.score:
            raise _ScoreMismatch(
                f"the score line gives {block.score[0]}-{block.score[1]}, but the games before it give "
                f"{state.score[0]}-{state.score[1]}",
                block.score_line,
                source,
            )
        cells = [pc for _, row in block.rows or () for pc in _players(row, threshold)]
        try:
            _play_game(builder, cells, k + 1, last_line, source)
        except _Stop:
            partial = True
            break
        if not builder.in_game and not any(c.kind == "roll" for _, c in cells):
            if is_last:
                partial = True  # the file stops before the game's first roll
                break
            raise MatFormatError(f"game {k + 1} has no moves", block.score_line, source)
    if builder is None:
        raise MatFormatError("no game in the file", None, source)
    record = builder.record()
    if builder.in_game or (record.length and not record.match_over):
        partial = True
    return record.replace(partial=partial)


def _play_game(
    builder: RecordBuilder, cells: list[tuple[int, _Cell]], game: int, last_line: int, source: str
) -> None:
    started = False
    for k, (player, cell) in enumerate(cells):
        following = cells[k + 1][1] if k + 1 < len(cells) else None
        try:
            started = _play_cell(builder, player, cell, following, started)
        except _ScoreMismatch as exc:
            if cell.line == last_line:
                raise _Stop from None  # "Wins 1" may be "Wins 12 points" cut short
            raise _ScoreMismatch(f"game {game}: {cell.text!r}: {exc.reason}", cell.line, source) from None
        except (RecordError, EngineError) as exc:
            if cell.line == last_line and not impossible(exc):
                raise _Stop from None
            detail = exc.reason if isinstance(exc, MatchFormatError | RecordError) else str(exc)
            raise MatFormatError(f"game {game}: {cell.text!r}: {detail}", cell.line, source) from None


def _play_cell(
    builder: RecordBuilder, player: int, cell: _Cell, following: _Cell | None, started: bool
) -> bool:
    """Apply one cell; returns whether the game has started."""
    kind = cell.kind
    if kind in ("loss", "resign"):
        return started  # Galaxy's "Losses N point", .gam "Resigned": nothing to play
    if kind == "win":
        state = builder.state
        if not started or state.game_state != GameState.PLAYING:
            # the result of a game over on the board or by a drop: it must be the one the replay gives
            result = state.last_result
            if started and result and cell.number is not None:
                # the points scored, or as gnubg writes them the board's value (Jacoby or not)
                allowed = {result.points, result.level * state.cube}
                if state.match_over:  # some programs write the points the match needed (OpenGammon)
                    allowed.add(state.match_length - (state.score[result.winner] - result.points))
                if cell.number not in allowed:  # (its column is not checked: a lone cell's is a guess)
                    won = f"{result.points} point{'' if result.points == 1 else 's'}"
                    who = state.names[result.winner]
                    raise _ScoreMismatch(f"the game as replayed is won by {who} with {won}")
            return started
        if cell.number is None:
            raise MatFormatError("'Wins' without a number of points")
        cube = state.cube
        level = 1 if cell.number <= cube else 2 if cell.number <= 2 * cube else 3
        builder.add_resign(1 - player, level)
        builder.add_accept(player)
        return started
    if not started:
        if kind != "roll":
            raise MatFormatError("a game must start with the opening roll")
        assert cell.dice is not None
        high, low = max(cell.dice), min(cell.dice)
        if high == low:
            raise MatFormatError(f"the opening roll {high}{low} is a double")
        builder.start_game((high, low) if player == 0 else (low, high))
        if _is_no_play(cell.play) and (following is None or following.kind == "win"):
            return True  # the opening roll, not played: the record stops or a resignation follows
        _play_roll(builder, player, cell, following)
        return True
    if not builder.in_game:
        raise MatFormatError("the game is over already")
    if kind == "roll":
        state = builder.state
        if state.doubled and state.beavered and state.turn == player:
            builder.add_take(player)  # Jellyfish: a roll after a beaver means the doubler took it
        _play_roll(builder, player, cell, following)
    elif kind == "double":
        state = builder.state
        if state.doubled and state.turn == player:
            builder.add_beaver(player)
        else:
            builder.add_double(player)
    elif kind == "beaver":
        builder.add_beaver(player)
    elif kind == "raccoon":
        raise MatFormatError("raccoons are not supported")
    elif kind == "take":
        builder.add_take(player)
    elif kind == "drop":
        builder.add_drop(player)
    return True


def _play_roll(builder: RecordBuilder, player: int, cell: _Cell, following: _Cell | None) -> None:
    assert cell.dice is not None
    state = builder.state
    if state.on_roll != player or state.turn != player:
        raise MatFormatError(f"player {player} is not on roll (player {state.turn} is to act)")
    text = cell.play
    if text.lower().startswith("illegal"):
        raise MatFormatError("'Illegal play' (an edited position) is not supported")
    if _is_no_play(text):
        _play_nothing(builder, player, cell.dice, state, following)
        return
    play = parse_move(text, state.position, cell.dice)
    written = parse_gnubg(text)
    builder.add_move(player, kept_move(written, play, state.position, cell.dice), cell.dice)


def _is_no_play(text: str) -> bool:
    return not text or bool(_HIDDEN.match(text) or _NO_MOVE.match(text))


def _play_nothing(
    builder: RecordBuilder, player: int, dice: tuple[int, int], state: MatchState, following: _Cell | None
) -> None:
    plays = legal_plays(state.position, dice)
    if len(plays) == 1 and not plays[0].move:
        builder.add_move(player, Move(), dice)  # a dance
    elif following is None or following.kind == "win":
        builder.add_roll(player, dice)  # rolled, then resigned (or the record stops here)
    elif len(plays) == 1:
        builder.add_move(player, plays[0].move, dice)  # gnubg fills in a forced move
    else:
        raise MatFormatError(
            f"a roll with no play, though {len(plays)} plays are legal and no resignation follows"
        )
