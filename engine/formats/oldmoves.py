"""FIBS ``oldmoves`` text (what FIBS prints for the ``oldmoves`` command), read into a MatchRecord.

The grammar is the one gnubg's ``import oldmoves`` reads (../shared/reference/match-formats.md, section 2):

    Score is 0-1 in a 3 point match.        (or "... in an unlimited match." for money play)
    BotA is X - BotB is O.
    O: (3 2) 24-21 13-11                     a roll and its play, FIBS numbering
    X: (6 5) can't move
    X: doubles / O: accepts / O: rejects
    O: wants to resign
    X: wins 2 points                         a resignation if the game is still on, else the result

X is player 0, the first name of the first game. FIBS numbers points absolutely: O writes its own point
numbers and X writes 25 minus its own (``1-4``, ``bar-4``, ``20-off``); a play that only reads the other
way round is mirrored, as gnubg does for files from other tools. A game whose names are swapped is read
with the players swapped, and a score line swapped by FIBS's known bug is accepted. A resignation's level
comes from the points won and the cube (gnubg always imports it as single). FIBS has no Jacoby rule and no
beavers; matches use the Crawford rule.
"""

from __future__ import annotations

import re

from engine.errors import EngineError, IllegalMoveError
from engine.formats._common import MatchFormatError, check_dice, cut_line, impossible, kept_move, split_lines
from engine.ids import GameState
from engine.match import Rules
from engine.moves import Move, legal_plays
from engine.notation import parse_fibs, parse_fibs_move_to_play
from engine.record import MatchRecord, RecordBuilder, RecordError, starting_state

__all__ = ["OldmovesFormatError", "read_oldmoves"]

_SCORE_IS = re.compile(
    r"Score is (\d{1,9})-(\d{1,9}) in (?:a (\d{1,9}) point match|an unlimited match)", re.IGNORECASE
)
# Both read without lazy groups before \s*: "^\s*([XO]):\s*(.*?)\s*$" and the obvious players pattern
# backtrack quadratically or worse on a long run of spaces (found by bench/fuzz.py).
_PLAYERS_X = re.compile(r"is\s+X\s*-")
_ACTION = re.compile(r"^\s*([XO]):(.*)$")
_ROLL = re.compile(r"^\((\d)\s+(\d)\)\s*(.*)$")
_WINS = re.compile(r"^wins\s+(\d{1,9})\s+points?", re.IGNORECASE)
_NO_MOVE = re.compile(r"^(can't|cannot|cant)\s+move\.?$", re.IGNORECASE)


class OldmovesFormatError(MatchFormatError):
    """FIBS oldmoves text that cannot be read, with the line at fault."""


class _Stop(Exception):
    """The rest of a text cut short is dropped."""


def read_oldmoves(text: str, source: str = "") -> MatchRecord:
    """Read FIBS oldmoves text into a MatchRecord that replays legally.

    OldmovesFormatError (naming the line) when the text is broken. A text cut short reads as far as it
    goes (``partial=True``); the import stops, as gnubg's does, at a game with other players or another
    match length.
    """
    if not isinstance(text, str):
        raise OldmovesFormatError(f"expected text, not {type(text).__name__}", source=source)
    lines = split_lines(text)
    last_line = _last_line(lines)
    cut = cut_line(text, lines)
    games = _split_games(lines, source)
    if not games:
        raise OldmovesFormatError(
            "no 'Score is ... in a N point match' line: not oldmoves text", None, source
        )
    builder: RecordBuilder | None = None
    names: tuple[str, str] = ("", "")
    length = 0
    partial = False
    for number, (score_line, length_here, score, players, body) in enumerate(games, 1):
        if players is None:
            if score_line == last_line or score_line + 1 == last_line:
                partial = True
                break
            raise OldmovesFormatError(
                "a 'Score is' line without '<name> is X - <name> is O.'", score_line + 1, source
            )
        _, x_name, o_name = players
        if builder is None:
            names, length = (x_name, o_name), length_here
            rules = Rules(crawford=True, jacoby=False, beavers=False)
            try:
                start = starting_state(length, rules, names, score)
            except RecordError as exc:
                raise OldmovesFormatError(str(exc), score_line, source) from None
            builder = RecordBuilder(length, names, rules, start=start)
        elif {x_name, o_name} != set(names) or length_here != length:
            break  # another match: gnubg stops here too
        if builder.in_game:
            raise OldmovesFormatError(
                f"game {number - 1} has no result, yet another game follows", score_line, source
            )
        if builder.state.match_over:
            break
        swapped = x_name != names[0]
        if swapped:
            score = (score[1], score[0])
        if score != builder.state.score and score[::-1] != builder.state.score:
            raise OldmovesFormatError(
                f"the score line gives {score[0]}-{score[1]}, but the games before it give "
                f"{builder.state.score[0]}-{builder.state.score[1]}",
                score_line,
                source,
            )
        try:
            _play_game(builder, body, swapped, number, cut, source)
        except _Stop:
            partial = True
            break
    if builder is None:
        raise OldmovesFormatError("no game in the text", None, source)
    record = builder.record()
    if builder.in_game or (record.length and not record.match_over):
        partial = True
    return record.replace(partial=partial)


def _last_line(lines: list[str]) -> int:
    return max((i + 1 for i, line in enumerate(lines) if line.strip()), default=0)


_Game = tuple[int, int, tuple[int, int], tuple[int, str, str] | None, list[tuple[int, str]]]


def _split_games(lines: list[str], source: str) -> list[_Game]:
    """(score line, length, score X-O, (players line, X name, O name) or None, [(line, action text)])."""
    games: list[_Game] = []
    index = 0
    while index < len(lines):
        match = _SCORE_IS.search(lines[index])
        if not match:
            index += 1  # text between games (FIBS prompts, blank lines) is skipped, as gnubg does
            continue
        score_line = index + 1
        length = int(match.group(3)) if match.group(3) else 0
        score = (int(match.group(1)), int(match.group(2)))
        index += 1
        while index < len(lines) and not lines[index].strip():
            index += 1
        players = None
        if index < len(lines):
            found = _players(lines[index])
            if found:
                players = (index + 1, *found)
                index += 1
            elif not _SCORE_IS.search(lines[index]) and index + 1 != _last_line(lines):
                raise OldmovesFormatError(
                    f"{lines[index].strip()!r} is not '<name> is X - <name> is O.'", index + 1, source
                )
        body: list[tuple[int, str]] = []
        while index < len(lines) and lines[index].strip() and not _SCORE_IS.search(lines[index]):
            body.append((index + 1, lines[index]))
            index += 1
        games.append((score_line, length, score, players, body))
    return games


def _players(line: str) -> tuple[str, str] | None:
    """``<X name> is X - <O name> is O.``: the names, or None."""
    body = line.strip()
    body = body[:-1] if body.endswith(".") else body
    if not body.endswith("O"):
        return None
    before = body[:-1]
    if not before[-1:].isspace() or not before.rstrip().endswith("is"):
        return None
    left = before.rstrip()[:-2]
    if not left[-1:].isspace():
        return None
    left = left.rstrip()  # "<X> is X - <O>"
    for found in _PLAYERS_X.finditer(left):
        x_name, o_name = left[: found.start()], left[found.end() :].strip()
        if x_name[-1:].isspace() and x_name.strip() and o_name:
            return x_name.strip(), o_name
    return None


def _play_game(
    builder: RecordBuilder, body: list[tuple[int, str]], swapped: bool, game: int, cut_line: int, source: str
) -> None:
    started = False
    for line_number, line in body:
        try:
            started = _play_line(builder, line, swapped, started)
        except (RecordError, EngineError) as exc:
            if line_number == cut_line and not impossible(exc):
                raise _Stop from None
            detail = exc.reason if isinstance(exc, MatchFormatError | RecordError) else str(exc)
            raise OldmovesFormatError(
                f"game {game}: {line.strip()!r}: {detail}", line_number, source
            ) from None
        if started and not builder.in_game:
            return


def _play_line(builder: RecordBuilder, line: str, swapped: bool, started: bool) -> bool:
    match = _ACTION.match(line)
    if not match:
        raise OldmovesFormatError("not an 'X: ...' or 'O: ...' line")
    role, rest = match.group(1), match.group(2).strip()
    player = (0 if role == "X" else 1) ^ swapped
    direction = 1 if role == "X" else -1  # X writes 25 minus its own point numbers
    lower = rest.lower()
    roll = _ROLL.match(rest)
    if roll:
        dice = check_dice(int(roll.group(1)), int(roll.group(2)))
        if not started:
            high, low = max(dice), min(dice)
            if high == low:
                raise OldmovesFormatError(f"the opening roll {high}{low} is a double")
            builder.start_game((high, low) if player == 0 else (low, high))
        _play_roll(builder, player, dice, roll.group(3), direction)
        return True
    if lower.startswith("wants to resign"):
        return started  # the level comes with the "wins" line
    wins = _WINS.match(rest)
    if lower.startswith("wins"):
        if not started or builder.state.game_state != GameState.PLAYING:
            return started
        if wins is None:
            raise OldmovesFormatError("'wins' without a number of points")
        points, cube = int(wins.group(1)), builder.state.cube
        level = 1 if points <= cube else 2 if points <= 2 * cube else 3
        builder.add_resign(1 - player, level)
        builder.add_accept(player)
        return started
    if not started:
        raise OldmovesFormatError("a game must start with the opening roll")
    if lower.startswith("doubles"):
        builder.add_double(player)
    elif lower.startswith("accepts"):
        builder.add_take(player)
    elif lower.startswith("rejects"):
        builder.add_drop(player)
    else:
        raise OldmovesFormatError("unrecognised action")
    return True


def _play_roll(builder: RecordBuilder, player: int, dice: tuple[int, int], text: str, direction: int) -> None:
    state = builder.state
    if state.on_roll != player or state.turn != player:
        raise OldmovesFormatError(f"player {player} is not on roll (player {state.turn} is to act)")
    if not text.strip() or _NO_MOVE.match(text.strip()):
        plays = legal_plays(state.position, dice)
        if len(plays) == 1 and not plays[0].move:
            builder.add_move(player, Move(), dice)
            return
        raise OldmovesFormatError(f"'can't move', though {len(plays)} plays are legal")
    for way in (direction, -direction):
        try:
            play = parse_fibs_move_to_play(text, state.position, dice, way)
        except IllegalMoveError as exc:
            if way == direction:
                first = exc
            continue
        written = parse_fibs(text, way)
        builder.add_move(player, kept_move(written, play, state.position, dice), dice)
        return
    raise first
