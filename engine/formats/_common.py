"""What the match-file readers share: the error type, text decoding, and how a play is kept."""

from __future__ import annotations

from engine.errors import EngineError, IllegalMoveError
from engine.moves import Move, Play, find_play
from engine.position import Position


class MatchFormatError(EngineError):
    """A match file that cannot be read: ``line`` is the 1-based line at fault (None: the file as a whole)."""

    def __init__(self, message: str, line: int | None = None, source: str = "") -> None:
        where = ":".join(part for part in (source, str(line) if line else "") if part)
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.line = line
        self.source = source


class ImpossibleValueError(MatchFormatError):
    """A value no match file holds, not even one cut short mid-line (dice outside 1..6): unlike other errors
    on a file's last line, never taken for the end of a file cut short."""


def impossible(exc: BaseException) -> bool:
    """Whether an error on a file's last line cannot come from the file being cut short: no prefix of a
    well-formed line has a roll outside 1..6 (``99:``, ``(9 9)``). A point over 25 can (``64`` is the start of
    the next cell's ``64:``), so it stays a cut."""
    return isinstance(exc, ImpossibleValueError)


def check_dice(d1: int, d2: int) -> tuple[int, int]:
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise ImpossibleValueError(f"dice {d1}{d2} are not both in 1..6")
    return d1, d2


def decode_text(data: bytes) -> str:
    """File bytes as text: UTF-8 (a BOM dropped), else Latin-1, which older Windows exports use."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def split_lines(text: str) -> list[str]:
    """Lines without their ends (LF, CRLF or a lone CR), a leading BOM removed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def cut_line(text: str, lines: list[str]) -> int:
    """The number of the line a cut may have broken off: the last non-blank one when no line break follows
    it, else 0 (a text that ends with a whole line was not cut inside a line)."""
    tail = text[len(text.rstrip()) :]
    if "\n" in tail or "\r" in tail:
        return 0
    return max((i + 1 for i, line in enumerate(lines) if line.strip()), default=0)


def _uses_each_die(move: Move, dice: tuple[int, int]) -> bool:
    """Each step is one die: its exact distance, or a larger die bearing off."""
    d1, d2 = dice
    unused = [d1] * 4 if d1 == d2 else [d1, d2]
    for src, dst in move.steps:
        distance = src - dst
        if distance in unused:
            unused.remove(distance)
            continue
        larger = [d for d in unused if d > distance] if dst == 0 else []
        if not larger:
            return False
        unused.remove(min(larger))
    return True


def kept_move(written: Move, play: Play, position: Position, dice: tuple[int, int]) -> Move:
    """The move to store for a play read from a file: its steps in the order written when they are one
    per die and playable in that order (gnubg writes plays in the order they were made, so keeping it
    lets a file be written back byte for byte), else the canonical move of the legal play."""
    if len(written) != len(play.move) or not _uses_each_die(written, dice):
        return play.move
    try:
        same = find_play(position, dice, written).position == play.position
    except IllegalMoveError:
        return play.move
    return written if same else play.move
