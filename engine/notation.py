"""Move notation: GNU Backgammon's (``24/18 13/11``, ``bar/22``, ``13/7*(2)``), its ``.mat`` export style
(``25/22 6/0``) and FIBS's absolute numbering (``bar-22 13-11 6-off``).

Parsers come in two layers. ``parse_gnubg`` and ``parse_fibs`` read the syntax only and return a ``Move`` in
the mover's own numbering, steps in the order written. ``parse_move`` and ``parse_fibs_move_to_play`` then
resolve that against the legal plays the way gnubg's ``move`` command does: the steps are applied literally
(in descending order of source, always a playable order) and the resulting position must be a legal one.
So consolidated moves (``24/13`` for 6-5), chains, ``(n)`` groups, any step order and hits marked or not are
all accepted, while a wrong use of the dice is an ``IllegalMoveError``, never a silent fix.

The gnubg grammar is gnubg's ``ParseMove`` (drawboard.c; ../shared/reference/match-formats.md 1.3): points
0-25 (25 = bar, 0 = off), ``b``/``ba``/``bar`` and ``o``/``of``/``off`` in any case, ``/`` between points with
chains allowed, ``*`` ``,`` ``)`` ignored, ``(n)`` repeating the chain before it, and two points with no ``/``
are a step too. In gnubg's own dialect (its ``move`` command and its ``.mat`` import alike) a ``-`` is a point
meaning *off* (``6-`` = ``6/off``), so FIBS style ``13-8`` is an error there; ``dialect="loose"`` reads ``-``
as a separator like ``/`` instead and also takes ``home`` for off.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from engine.errors import IllegalMoveError
from engine.moves import Move, Play, check_dice, find_play, legal_plays
from engine.position import Position

__all__ = [
    "Dialect",
    "MoveSyntaxError",
    "format_fibs",
    "format_gnubg",
    "format_mat",
    "parse_fibs",
    "parse_fibs_move_to_play",
    "parse_gnubg",
    "parse_move",
]

Dialect = Literal["gnubg", "loose"]

BAR, OFF = 25, 0
_NO_MOVE = frozenset({"", "cannot move", "can't move", "cant move", "can not move"})
_DIGITS = frozenset("0123456789")
_LETTERS = frozenset(string.ascii_letters)
_ALTERNATIVES_SHOWN = 6
MAX_MOVE_TEXT = 1000  # the longest play ("bar/24(4)" steps with hits, words, spaces) is under 100 characters


class MoveSyntaxError(IllegalMoveError):
    """Text that is not a move in the notation asked for (as opposed to a well-formed but illegal move)."""


@dataclass(frozen=True, slots=True)
class _Syntax:
    """What one notation accepts; the scanner below is shared by all of them."""

    name: str
    joiners: str  # characters that join a point to the next one: "24/18", "bar-22"
    words: dict[str, int]  # lowercase word -> point in the mover's numbering
    ignored: str  # characters skipped anywhere (hit marks, commas)
    dash_is_off: bool  # gnubg's ParseMove reads a '-' as the point "off"
    repeats: bool  # "(n)" groups allowed
    number: Callable[[int], int]  # a written point number (0..25) -> the mover's own point
    forward: str = ""  # how a forward step looks, for the error about one that goes backwards


def _own(n: int) -> int:
    return n


def _mirrored(n: int) -> int:
    return 25 - n


_GNUBG_WORDS = {"b": BAR, "ba": BAR, "bar": BAR, "o": OFF, "of": OFF, "off": OFF}
_SYNTAX: dict[str, _Syntax] = {
    "gnubg": _Syntax(
        "gnubg", joiners="/", words=_GNUBG_WORDS, ignored="*,)", dash_is_off=True, repeats=True, number=_own
    ),
    "loose": _Syntax(
        "gnubg (loose)",
        joiners="/-",
        words={**_GNUBG_WORDS, "home": OFF},
        ignored="*,)",
        dash_is_off=False,
        repeats=True,
        number=_own,
    ),
}
_FIBS_WORDS = {"b": BAR, "bar": BAR, "o": OFF, "off": OFF, "home": OFF}
_FIBS_SYNTAX = {
    # Direction -1 (FIBS "O", moving 24 -> 1) writes its own numbers; direction +1 ("X") writes 25 - own.
    direction: _Syntax(
        "FIBS",
        joiners="-/",
        words=_FIBS_WORDS,
        ignored="*,",
        dash_is_off=False,
        repeats=False,
        number=number,
        forward=forward,
    )
    for direction, number, forward in [
        (-1, _own, " (direction -1 goes down: 13-7, 6-off)"),
        (1, _mirrored, " (direction +1 goes up: 1-7, 20-off)"),
    ]
}


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _is_no_move(text: str) -> bool:
    words = " ".join(text.replace("\u2019", "'").lower().split())
    return words.rstrip(".").strip() in _NO_MOVE


def _scan(text: str, syntax: _Syntax) -> Move:
    """Tokens -> steps, following gnubg's ParseMove: points are paired in order, and a destination followed by
    a joiner is also the source of the next step (a chain)."""
    points: list[int] = []
    joined: list[bool] = []  # joined[k]: a joiner follows points[k]

    def fail(why: str) -> MoveSyntaxError:
        if syntax.dash_is_off and "-" in text:
            why += " ('-' means off in gnubg notation: write 13/8, or use dialect='loose' or parse_fibs)"
        return MoveSyntaxError(f"{_shown(text)} is not a move in {syntax.name} notation: {why}")

    if len(text) > MAX_MOVE_TEXT:  # a character loop over megabytes of hostile text is a stall, not a parse
        raise fail(f"more than {MAX_MOVE_TEXT} characters")
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c in syntax.ignored:
            i += 1
        elif c in _DIGITS:
            j = i
            while j < n and text[j] in _DIGITS:
                j += 1
            digits = text[i:j].lstrip("0") or "0"
            value = int(digits) if len(digits) <= 2 else 99  # no int() of a huge digit run
            if value > 25:
                raise fail(f"point {text[i:j]} is not in 0..25")
            points.append(syntax.number(value))
            joined.append(False)
            i = j
        elif c in _LETTERS:
            j = i
            while j < n and text[j] in _LETTERS:
                j += 1
            word = text[i:j].lower()
            if word not in syntax.words:
                raise fail(f"unknown word {text[i:j]!r}")
            points.append(syntax.words[word])
            joined.append(False)
            i = j
        elif c == "-" and syntax.dash_is_off:
            points.append(OFF)
            joined.append(False)
            i += 1
        elif c in syntax.joiners:
            if not points:
                raise fail(f"{c!r} before the first point")
            if joined[-1]:
                raise fail(f"two separators in a row at {c!r}")
            joined[-1] = True
            i += 1
        elif c == "(" and syntax.repeats:
            i = _repeat(text, i, points, joined, fail)
        else:
            raise fail(f"unexpected character {c!r}")
    if joined and joined[-1]:
        raise fail("it ends with a separator")

    steps: list[tuple[int, int]] = []
    source: int | None = None
    for k, point in enumerate(points):
        if source is None:
            if point == OFF:
                raise fail("a step cannot start from off")
            source = point
            continue
        if point == BAR:
            raise fail("a step cannot go to the bar")
        if point >= source:
            raise fail(f"step {len(steps) + 1} goes backwards{syntax.forward}")
        steps.append((source, point))
        source = None
        if joined[k]:
            if point == OFF:
                raise fail("a chain cannot go on after off")
            source = point
    if source is not None:
        raise fail("the last step has no destination")
    try:
        return Move(tuple(steps))
    except IllegalMoveError as exc:
        raise fail(str(exc)) from None


def _repeat(
    text: str,
    i: int,
    points: list[int],
    joined: list[bool],
    fail: Callable[[str], MoveSyntaxError],
) -> int:
    """Expand "(n)" at text[i]: the chain just written is played n times in all; returns the index past it."""
    j = i + 1
    while j < len(text) and text[j].isspace():
        j += 1
    k = j
    while k < len(text) and text[k] in _DIGITS:
        k += 1
    end = k
    while end < len(text) and text[end].isspace():
        end += 1
    if k == j or end >= len(text) or text[end] != ")":
        raise fail("'(' must be followed by a count and ')'")
    digits = text[j:k].lstrip("0") or "0"
    count = int(digits) if len(digits) <= 2 else 99
    if not 1 <= count <= 4:
        raise fail(f"repeat count ({text[j:k]}) is not in 1..4")
    if not points or joined[-1]:
        raise fail("'(n)' must follow a complete step")
    begin = len(points) - 1
    while begin > 0 and joined[begin - 1]:
        begin -= 1
    if begin == len(points) - 1:
        raise fail("'(n)' must follow a joined step such as 13/7")
    chain, links = points[begin:], joined[begin:]
    for _ in range(count - 1):
        points.extend(chain)
        joined.extend(links)
    return end + 1


# -- gnubg notation ------------------------------------------------------------------------------------------


def parse_gnubg(text: str, *, dialect: Dialect = "gnubg") -> Move:
    """The steps ``text`` writes, in the mover's numbering and the order written (no legality check).

    Empty text, "cannot move" and "can't move" are the empty move. MoveSyntaxError if the text does not parse.
    """
    syntax = _SYNTAX.get(dialect)
    if syntax is None:
        raise ValueError(f"dialect must be one of {sorted(_SYNTAX)}, not {dialect!r}")
    if _is_no_move(text):
        return Move()
    return _scan(text, syntax)


def parse_move(text: str, position: Position, dice: Sequence[int], *, dialect: Dialect = "gnubg") -> Play:
    """The one legal play of ``dice`` in ``position`` that ``text`` (gnubg notation) describes.

    IllegalMoveError (MoveSyntaxError for bad syntax) naming the text, the dice and some legal plays
    otherwise; the empty move is legal only when the roll cannot be played at all.
    """
    move = parse_gnubg(text, dialect=dialect)
    return _resolve(move, text, position, dice, lambda m: format_gnubg(position, m))


def _point_name(n: int) -> str:
    return "off" if n == OFF else "bar" if n == BAR else str(n)


def format_gnubg(position: Position, move: Move) -> str:
    """``move`` as GNU Backgammon 1.07 writes it in ``hint`` and the move list (drawboard.c ``FormatMove``).

    Steps sorted by descending source (then destination); a chequer's consecutive steps merged into one
    (``24/13``) unless it hit on the way, which keeps the point (``24/18*/13``); identical moves grouped
    (``13/7(2)``); ``*`` after a point where the opponent had a chequer before the move, once per point.
    The empty move is "".
    """

    def opponent_on(point: int) -> int:
        return position.opp[24 - point] if 1 <= point <= 24 else 0

    chains: list[list[int] | None] = [[s, d] for s, d in sorted(move.steps, reverse=True)]
    for i, chain in enumerate(chains):
        for j in range(i + 1, len(chains)):
            later = chains[j]
            if chain is None or later is None or chain[-1] != later[0]:
                continue
            if opponent_on(chain[-1]):
                chain.append(later[1])  # a hit on the way: the point stays in the notation
            else:
                chain[-1] = later[1]
            chains[j] = None
    groups: list[tuple[list[int], int]] = []
    for chain in chains:
        if chain is None:
            continue
        for k, (seen, count) in enumerate(groups):
            if seen == chain:
                groups[k] = (seen, count + 1)
                break
        else:
            groups.append((chain, 1))

    marked: set[int] = set()  # gnubg marks each hit point once, even when two chequers land there
    parts = []
    for chain, count in groups:
        text = _point_name(chain[0])
        for point in chain[1:-1]:
            text += f"/{_point_name(point)}*"
            marked.add(point)
        last = chain[-1]
        text += f"/{_point_name(last)}"
        if opponent_on(last) and last not in marked:
            text += "*"
            marked.add(last)
        if count > 1:
            text += f"({count})"
        parts.append(text)
    return " ".join(parts)


def format_mat(position: Position, move: Move) -> str:
    """``move`` as gnubg's ``.mat`` export writes it (drawboard.c ``FormatMovePlain``): one ``from/to`` per
    die in descending order of source, ``25`` for the bar and ``0`` for off, ``*`` after the first step that
    hits at its destination, no merging and no ``(n)``.

    Byte for byte like gnubg, each of the first three steps is followed by a space and the fourth is not
    (``52: 13/8 13/11 `` but ``22: 13/11 13/11 6/4 6/4``), so a writer emits ``f"{dice}: {format_mat(...)}"``.
    The empty move is "".
    """
    out = []
    landed: set[int] = set()
    for k, (src, dst) in enumerate(sorted(move.steps, reverse=True)):
        text = f"{src}/{dst}"
        if dst and position.opp[24 - dst] and dst not in landed:
            text += "*"
        landed.add(dst)
        out.append(text + (" " if k < 3 else ""))
    return "".join(out)


# -- FIBS notation -------------------------------------------------------------------------------------------


def _fibs_syntax(direction: int) -> _Syntax:
    syntax = _FIBS_SYNTAX.get(direction) if isinstance(direction, int) else None
    if syntax is None:
        raise ValueError(f"FIBS direction must be -1 or +1, not {direction!r}")
    return syntax


def parse_fibs(text: str, direction: int) -> Move:
    """The steps of a FIBS move (``bar-22 13-11 6-off``) in the mover's own numbering, in the order written.

    FIBS numbers points absolutely: a player whose direction is -1 (FIBS "O", moving 24 -> 1) writes their own
    point numbers, a player whose direction is +1 ("X") writes 25 - their own (so ``1-4``, ``bar-4``,
    ``20-off``). Tolerated: a leading ``move``/``m``, a trailing ``.`` (server echoes), ``b``/``o``/``home``,
    pairs written ``13 11``, chains ``24-18-12``, ``/`` for ``-``, hit marks; "can't move" is the empty move.
    """
    syntax = _fibs_syntax(direction)
    body = text.strip()
    if body.endswith("."):
        body = body[:-1]
    words = body.split(None, 1)
    if words and words[0].lower() in ("move", "m"):
        body = words[1] if len(words) > 1 else ""
    if _is_no_move(body):
        return Move()
    return _scan(body, syntax)


def format_fibs(move: Move, direction: int) -> str:
    """``move`` as a FIBS ``move`` command argument: ``from-to`` per die in absolute numbering, ``bar``,
    ``off``, steps in descending order of the mover's source (a playable order, bar first). Empty move: ""."""
    _fibs_syntax(direction)

    def name(point: int) -> str:
        if point == BAR:
            return "bar"
        if point == OFF:
            return "off"
        return str(point if direction == -1 else 25 - point)

    return " ".join(f"{name(s)}-{name(d)}" for s, d in sorted(move.steps, reverse=True))


def parse_fibs_move_to_play(text: str, position: Position, dice: Sequence[int], direction: int) -> Play:
    """The one legal play that a FIBS move describes, for the player on roll in ``position`` whose FIBS
    direction is ``direction``. IllegalMoveError (or MoveSyntaxError) otherwise, as ``parse_move``."""
    move = parse_fibs(text, direction)
    return _resolve(move, text, position, dice, lambda m: format_fibs(m, direction))


# -- resolution ----------------------------------------------------------------------------------------------


def _resolve(
    move: Move, text: str, position: Position, dice: Sequence[int], show: Callable[[Move], str]
) -> Play:
    d1, d2 = check_dice(dice)
    try:
        # Descending source is a playable order for any legal set of steps, whatever the order written.
        return find_play(position, (d1, d2), move.canonical())
    except IllegalMoveError:
        pass
    plays = legal_plays(position, (d1, d2))
    shown = [show(p.move) or "(no move)" for p in plays[:_ALTERNATIVES_SHOWN]]
    more = f" ... ({len(plays)} in all)" if len(plays) > _ALTERNATIVES_SHOWN else ""
    what = _shown(text) if move else f"{_shown(text)} (no move)" if text.strip() else "the empty move"
    raise IllegalMoveError(
        f"{what} is not a legal play of {max(d1, d2)}{min(d1, d2)} in {position.position_id}; "
        f"legal: {', '.join(shown)}{more}"
    )
