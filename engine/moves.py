"""Moves and the legal-move generator.

A ``Move`` is the list of chequer steps one player makes with one roll, in that player's own numbering:
``from`` 1..24 or 25 (the bar), ``to`` 0 (off) .. 24. The generator returns each distinct resulting position
once with one canonical move: steps in descending order of their source (always a playable order), and among
several step lists that reach the same position the greatest one.

Rules (as gnubg and the Rules of Backgammon apply them): chequers on the bar enter first; both dice must be
played when possible, else the larger one if either can be; doubles play up to four times; bearing off needs
every chequer home, exact or from the highest occupied point when the die is larger; a lone opposing chequer
is hit. bench/verify_gnubg.py checks all this against gnubg 1.07 on 10,000 random positions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import IllegalMoveError, InvalidDiceError, InvalidPositionError
from engine.position import BAR, Position

Step = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Move:
    """One roll's play: a tuple of (from, to) steps; the empty move is a dance."""

    steps: tuple[Step, ...] = ()

    def __post_init__(self) -> None:
        if len(self.steps) > 4:
            raise IllegalMoveError(f"a move has at most 4 steps, not {len(self.steps)}")
        for step in self.steps:
            if len(step) != 2:
                raise IllegalMoveError(f"step {step!r} is not a (from, to) pair")
            src, dst = step
            if not (1 <= src <= 25 and 0 <= dst <= 24 and dst < src):
                raise IllegalMoveError(f"step {src}/{dst} does not move forward from 1..25 to 0..24")

    @classmethod
    def of(cls, *steps: Step) -> Move:
        return cls(tuple(steps))

    def canonical(self) -> Move:
        return Move(tuple(sorted(self.steps, reverse=True)))

    def __bool__(self) -> bool:
        return bool(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __str__(self) -> str:
        if not self.steps:
            return ""
        return " ".join(f"{'bar' if s == 25 else s}/{'off' if d == 0 else d}" for s, d in self.steps)

    def __repr__(self) -> str:
        return f"Move.of({', '.join(repr(s) for s in self.steps)})"


@dataclass(frozen=True, slots=True)
class Play:
    """A legal play: the canonical move and the resulting position, still seen by the player who moved."""

    move: Move
    position: Position

    def __repr__(self) -> str:
        return f"Play({self.move!s:s} -> {self.position.position_id})"


def check_dice(dice: Sequence[int]) -> tuple[int, int]:
    if type(dice) is tuple and len(dice) == 2:  # the common case, checked without building anything
        d1, d2 = dice
        if type(d1) is int and type(d2) is int and 1 <= d1 <= 6 and 1 <= d2 <= 6:
            return dice
    try:
        d1, d2 = (int(d) for d in dice)
    except (TypeError, ValueError):
        raise InvalidDiceError(f"dice must be two numbers, not {dice!r}") from None
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise InvalidDiceError(f"dice {d1}{d2} are not both in 1..6")
    return d1, d2


# The reference generator works on a 26-cell list in the mover's numbering: cell 0 = borne off, 1..24 =
# points, 25 = bar, and the opponent's chequers mapped into the same numbering: ``their[p]`` = count on my
# point p (1..24), ``their[25]`` = their bar (their cell 0 is unused). Lists are copied per step: plain and
# slow; engine/_movegen.c does the same on byte arrays.


def _to_cells(pos: Position) -> tuple[list[int], list[int]]:
    me = [0] * 26
    them = [0] * 26
    m, o = pos.me, pos.opp
    for p in range(1, 25):
        me[p] = m[p - 1]
        them[p] = o[24 - p]
    me[25] = m[BAR]
    me[0] = 15 - sum(m)
    them[25] = o[BAR]
    return me, them


def _from_cells(me: list[int], them: list[int]) -> Position:
    m = tuple(me[1:26])
    o = (*(them[24 - i] for i in range(24)), them[25])
    return Position._trusted(m, o)


def _step_dest(me: list[int], them: list[int], src: int, die: int) -> int:
    """Destination of moving a chequer from ``src`` with ``die``, or -1 if that step is illegal."""
    if not me[src]:
        return -1
    if me[25] and src != 25:
        return -1
    dst = src - die
    if dst > 0:
        return -1 if them[dst] >= 2 else dst
    # Bearing off: every chequer must be home (points 1..6).
    if any(me[7:26]):
        return -1
    if dst == 0:
        return 0
    # A larger die bears off from the highest point only.
    for p in range(src + 1, 7):
        if me[p]:
            return -1
    return 0


def _apply(me: list[int], them: list[int], src: int, dst: int) -> tuple[list[int], list[int]]:
    me2 = me.copy()
    me2[src] -= 1
    me2[dst] += 1
    if dst and them[dst] == 1:
        them2 = them.copy()
        them2[dst] = 0
        them2[25] += 1
        return me2, them2
    return me2, them


def single_step(pos: Position, src: int, die: int) -> tuple[Position, int] | None:
    """One chequer moved from point ``src`` (25: the bar) with ``die`` under the rules of a play's step: the new
    position and the point it reached (0: off), or None where that step is not allowed. A server that takes a
    play one die at a time (bgammon) checks each step with this."""
    if not 1 <= src <= 25:
        return None
    me, them = _to_cells(pos)
    dst = _step_dest(me, them, src, die)
    if dst < 0:
        return None
    return _from_cells(*_apply(me, them, src, dst)), dst


def _sources(me: list[int]) -> Iterable[int]:
    if me[25]:
        return (25,)
    return (p for p in range(24, 0, -1) if me[p])


def legal_plays(pos: Position, dice: Sequence[int]) -> list[Play]:
    """Every distinct position reachable with ``dice``, each once with its canonical move.

    A roll with no legal play returns one Play with the empty move and the unchanged position. The list is in
    descending order of the moves' steps. The C extension (engine/_movegen.c) computes it when it is built;
    the pure-Python generator below is the reference and the fallback, and both return the same list.
    """
    d1, d2 = check_dice(dice)
    if not isinstance(pos, Position):
        raise InvalidPositionError(f"expected a Position, not {type(pos).__name__}")
    return _generate(pos, d1, d2)


def _legal_plays_python(pos: Position, d1: int, d2: int) -> list[Play]:
    """The reference generator: plain lists copied per step, every play order tried."""
    me, them = _to_cells(pos)
    found: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, int, tuple[Step, ...]]] = {}
    best_used = 0

    def record(me_: list[int], them_: list[int], steps: tuple[Step, ...], top_die: int) -> None:
        nonlocal best_used
        used = len(steps)
        if used < best_used:
            return
        if used > best_used:
            best_used = used
            found.clear()
        key = (tuple(me_), tuple(them_))
        canon = tuple(sorted(steps, reverse=True))
        old = found.get(key)
        if old is None or (top_die, canon) > (old[1], old[2]):
            found[key] = (used, top_die, canon)

    if d1 == d2:
        die = d1

        def rec_double(me_: list[int], them_: list[int], steps: tuple[Step, ...], max_src: int) -> None:
            moved = False
            if len(steps) < 4:
                for src in _sources(me_):
                    if src > max_src:
                        continue
                    dst = _step_dest(me_, them_, src, die)
                    if dst < 0:
                        continue
                    moved = True
                    m2, t2 = _apply(me_, them_, src, dst)
                    rec_double(m2, t2, (*steps, (src, dst)), src)
            if not moved:
                record(me_, them_, steps, die)

        rec_double(me, them, (), 25)
    else:
        for first, second in ((d1, d2), (d2, d1)):
            moved_first = False
            for src in tuple(_sources(me)):
                dst = _step_dest(me, them, src, first)
                if dst < 0:
                    continue
                moved_first = True
                m1, t1 = _apply(me, them, src, dst)
                moved_second = False
                for src2 in tuple(_sources(m1)):
                    dst2 = _step_dest(m1, t1, src2, second)
                    if dst2 < 0:
                        continue
                    moved_second = True
                    m2, t2 = _apply(m1, t1, src2, dst2)
                    record(m2, t2, ((src, dst), (src2, dst2)), max(first, second))
                if not moved_second:
                    record(m1, t1, ((src, dst),), first)
            if not moved_first:
                record(me, them, (), 0)
        if best_used == 1:
            # Only one die can be played: the larger one must be, if it can.
            high = max(d1, d2)
            if any(top == high for _, top, _ in found.values()):
                for key in [k for k, v in found.items() if v[1] != high]:
                    del found[key]

    plays = []
    for (m_, t_), (_, _, canon) in found.items():
        plays.append(Play(Move(canon), _from_cells(list(m_), list(t_))))
    plays.sort(key=lambda pl: pl.move.steps, reverse=True)
    return plays


def gnubg_order(pos: Position, dice: Sequence[int], plays: Sequence[Play]) -> list[int]:
    """Where gnubg's move generator lists each of ``plays`` (0 first): the order its hint lists keep for moves
    of exactly equal equity (its sort is stable), so that ties read as gnubg's.

    gnubg plays the dice high die first, then the low die first for a non-double; each die from the rearmost
    chequer forwards (a double's later dice never from behind the chequer the one before moved); a position
    counts where it first appears, among the plays that use the most dice and then the most pips.
    """
    d1, d2 = check_dice(dice)
    high, low = max(d1, d2), min(d1, d2)
    me, them = _to_cells(pos)
    first: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    most = [0, 0]  # dice used, pips used

    def save(me_: list[int], them_: list[int], used: int, pips: int) -> None:
        if [used, pips] < most:
            return
        if [used, pips] > most:
            most[:] = [used, pips]
            first.clear()
        first.setdefault((tuple(me_), tuple(them_)), len(first))

    def walk(
        me_: list[int], them_: list[int], rolls: tuple[int, ...], depth: int, top: int, pips: int
    ) -> None:
        if depth == len(rolls):
            save(me_, them_, depth, pips)
            return
        moved = False
        for src in (25,) if me_[25] else range(min(top, 24), 0, -1):
            dst = _step_dest(me_, them_, src, rolls[depth])
            if dst >= 0:
                moved = True
                m2, t2 = _apply(me_, them_, src, dst)
                walk(m2, t2, rolls, depth + 1, src if high == low else 25, pips + rolls[depth])
        if not moved:
            save(me_, them_, depth, pips)

    for rolls in [(high,) * 4] if high == low else [(high, low), (low, high)]:
        walk(me, them, rolls, 0, 25, 0)
    ranks = []
    for k, play in enumerate(plays):
        m_, t_ = _to_cells(play.position)
        ranks.append(first.get((tuple(m_), tuple(t_)), len(first) + k))
    return ranks


def _load_extension() -> Callable[[Position, int, int], list[Play]] | None:
    """The C generator, or None when it is not built or GAMMOND_PURE_PYTHON=1 asks for the reference."""
    if os.environ.get("GAMMOND_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from engine import _movegen  # type: ignore[attr-defined]
    except ImportError:
        return None
    _movegen.setup(Position, Move, Play, InvalidPositionError)
    return _movegen.legal_plays


_legal_plays_c = _load_extension()
_generate = _legal_plays_c or _legal_plays_python
IMPLEMENTATION = "c" if _legal_plays_c else "python"  # which generator legal_plays uses (for benchmarks)


def c_extension() -> Any:
    """``engine._movegen`` where legal_plays uses it (built, GAMMOND_PURE_PYTHON not set), else None: the other C
    paths (children, features, encodings, route) follow this one switch."""
    if _legal_plays_c is None:
        return None
    from engine import _movegen  # type: ignore[attr-defined]

    return _movegen


def uint8_boards(boards: np.ndarray) -> np.ndarray:
    """(n, 2, 25) boards as the contiguous uint8 array the C functions read; InvalidPositionError (a ValueError)
    for any other shape."""
    b = np.ascontiguousarray(boards, dtype=np.uint8)
    if b.ndim != 3 or b.shape[1:] != (2, 25):
        raise InvalidPositionError(f"boards must have shape (n, 2, 25), not {b.shape}")
    return b


# The 21 distinct rolls, each with its weight out of 36, in the order roll_children lists them.
ROLLS: tuple[tuple[tuple[int, int], int], ...] = tuple(
    ((a, b), 1 if a == b else 2) for a in range(1, 7) for b in range(a, 0, -1)
)


def roll_children(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every roll's children of many boards at once, for the search: no Python object per child.

    ``boards``: (n, 2, 25) counts, player on roll first (``encoding.positions_to_array``). Returns the children
    as uint8 boards (m, 2, 25) seen by the opponent, who is on roll after the move, grouped by board and by roll
    in ``ROLLS`` order and within a roll in ``legal_plays`` order; and the int64 (n, 21) number of children per
    board and roll (a roll with no legal play has one child, the unchanged position). Boards are trusted to be
    legal positions (at most 15 chequers a side is checked).
    """
    b = uint8_boards(boards)
    if (c := c_extension()) is not None:
        try:
            raw, counts = c.children(b.tobytes())
        except ValueError as exc:
            raise InvalidPositionError(str(exc)) from None
        kids = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 2, 25)
        return kids, np.frombuffer(counts, dtype=np.int32).reshape(len(b), 21).astype(np.int64)
    return _roll_children_python(b)


def rolled_children(boards: np.ndarray, rolls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The children of one given roll per board (``rolls``: indices into ``ROLLS``), as ``roll_children`` gives
    them for that roll: the rollouts' path without variance reduction, where only the rolled dice matter.

    Returns the children (m, 2, 25) grouped by board, and the int64 (n,) number of children per board.
    """
    b = uint8_boards(boards)
    r = np.asarray(rolls)
    if r.shape != (len(b),) or (len(r) and (r.min() < 0 or r.max() >= len(ROLLS))):
        raise ValueError(f"rolls must be one index in 0..{len(ROLLS) - 1} per board")
    if (c := c_extension()) is not None:
        try:
            raw, counts = c.rolled_children(b.tobytes(), r.astype(np.uint8).tobytes())
        except ValueError as exc:
            raise InvalidPositionError(str(exc)) from None
        kids = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 2, 25)
        return kids, np.frombuffer(counts, dtype=np.int32).astype(np.int64)
    kids: list[tuple[int, ...]] = []
    out = np.zeros(len(b), dtype=np.int64)
    for i, (board, k) in enumerate(zip(b, r, strict=True)):
        pos = Position(tuple(int(v) for v in board[0]), tuple(int(v) for v in board[1]))
        plays = legal_plays(pos, ROLLS[int(k)][0])
        out[i] = len(plays)
        kids.extend(p.position.opp + p.position.me for p in plays)
    return np.array(kids, dtype=np.uint8).reshape(-1, 2, 25), out


def _roll_children_python(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    kids: list[tuple[int, ...]] = []
    counts = np.zeros((len(b), 21), dtype=np.int64)
    for i, board in enumerate(b):
        pos = Position(tuple(int(v) for v in board[0]), tuple(int(v) for v in board[1]))
        for k, (dice, _) in enumerate(ROLLS):
            plays = legal_plays(pos, dice)
            counts[i, k] = len(plays)
            kids.extend(p.position.opp + p.position.me for p in plays)
    return np.array(kids, dtype=np.uint8).reshape(-1, 2, 25), counts


_TURN_PLAYS_MAX = 1024  # a few turns of each of hundreds of tables at the embedded server
_turn_plays: dict[tuple[Position, int, int], tuple[Play, ...]] = {}


def turn_plays(pos: Position, dice: Sequence[int]) -> tuple[Play, ...]:
    """``legal_plays`` as a tuple, remembered for the last turns asked: a server checks one turn's plays several
    times (the steps it asks for, the move it is sent, the match applying it), the search does not use this."""
    d1, d2 = check_dice(dice)
    if not isinstance(pos, Position):
        raise InvalidPositionError(f"expected a Position, not {type(pos).__name__}")
    key = (pos, d1, d2)
    plays = _turn_plays.get(key)
    if plays is None:
        plays = tuple(legal_plays(pos, (d1, d2)))
        if len(_turn_plays) >= _TURN_PLAYS_MAX:
            _turn_plays.clear()  # cheaper than LRU order, and safe with an engine thread beside the event loop
        _turn_plays[key] = plays
    return plays


def find_play(pos: Position, dice: Sequence[int], move: Move) -> Play:
    """The legal Play that ``move`` describes, or IllegalMoveError.

    The steps are applied literally and the result must be one of the legal positions, so consolidated
    notation (``24/13`` for 6-5) and any step order are accepted, while a move that uses the dice wrongly is
    not.
    """
    d1, d2 = check_dice(dice)
    plays = turn_plays(pos, (d1, d2))
    target = _try_steps(pos, move)
    for play in plays:
        if play.position == target:
            return play
    choices = ", ".join(str(p.move) or "(no move)" for p in plays[:8])
    raise IllegalMoveError(
        f"{move or '(no move)'} is not a legal play of {d1}{d2} in {pos.position_id}; legal: {choices}"
        + (" ..." if len(plays) > 8 else "")
    )


def apply_move(pos: Position, dice: Sequence[int], move: Move) -> Position:
    """The position after ``move`` (seen by the mover); IllegalMoveError if it is not a legal play."""
    return find_play(pos, dice, move).position


def _try_steps(pos: Position, move: Move) -> Position | None:
    """Apply the steps literally (no dice check); None if a step moves a chequer that is not there."""
    me, them = _to_cells(pos)
    for src, dst in move.steps:
        if not me[src] or (me[25] and src != 25):
            return None
        if dst and them[dst] >= 2:
            return None
        me, them = _apply(me, them, src, dst)
    return _from_cells(me, them)
