"""Match file formats: Jellyfish ``.mat`` (read and write) and FIBS ``oldmoves`` (read).

Readers take text (``decode_text`` turns file bytes into it) and return an ``engine.record.MatchRecord``
that replays legally; a file they cannot read raises a ``MatchFormatError`` naming the line.
"""

from __future__ import annotations

from engine.formats._common import MatchFormatError, decode_text
from engine.formats.mat import _MATCH_LINE, MatFormatError, read_mat, write_mat
from engine.formats.oldmoves import _SCORE_IS, OldmovesFormatError, read_oldmoves
from engine.record import MatchRecord

__all__ = [
    "MatFormatError",
    "MatchFormatError",
    "OldmovesFormatError",
    "decode_text",
    "detect_format",
    "read_mat",
    "read_match",
    "read_oldmoves",
    "write_mat",
]


def detect_format(text: str) -> str:
    """``"oldmoves"`` for FIBS oldmoves text (a ``Score is ... match`` line before any ``N point match``
    line outside comments), else ``"mat"``."""
    for line in text.splitlines():
        if _SCORE_IS.search(line):
            return "oldmoves"
        if _MATCH_LINE.match(line) and not line.lstrip().startswith((";", "#")):
            return "mat"
    return "mat"


def read_match(text: str, source: str = "") -> MatchRecord:
    """Read a ``.mat`` or oldmoves text, whichever it is."""
    if detect_format(text) == "oldmoves":
        return read_oldmoves(text, source=source)
    return read_mat(text, source=source)
