"""The board as a value: player on roll against opponent, each in their own numbering (gnubg's 2x25 board)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from engine import ids
from engine.errors import InvalidPositionError

BAR = 24  # index of the bar in a side's 25 counts; points 1..24 are indices 0..23
CHEQUERS = 15

_INITIAL_SIDE = (0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)


class PositionClass(IntEnum):
    """gnubg's position classes (eval.h), in gnubg's order."""

    OVER = 0
    HYPERGAMMON1 = 1
    HYPERGAMMON2 = 2
    HYPERGAMMON3 = 3
    BEAROFF2 = 4  # two-sided bearoff database: both sides within 6 points, at most 6 chequers each
    BEAROFF_TS = 5
    BEAROFF1 = 6  # one-sided bearoff database: both sides within 6 points, at most 15 chequers
    BEAROFF_OS = 7
    RACE = 8
    CRASHED = 9
    CONTACT = 10


# gnubg 1.07 as installed by Debian: two-sided database 6 points x 6 chequers, one-sided 6 points x 15.
BEAROFF2_POINTS, BEAROFF2_CHEQUERS = 6, 6
BEAROFF1_POINTS, BEAROFF1_CHEQUERS = 6, 15


def _check_side(counts: Sequence[int], who: str) -> tuple[int, ...]:
    try:
        side = tuple(int(c) for c in counts)
    except (TypeError, ValueError):
        raise InvalidPositionError(f"{who}: expected 25 integer counts") from None
    if len(side) != 25:
        raise InvalidPositionError(f"{who}: expected 25 counts (points 1-24 and the bar), got {len(side)}")
    if min(side) < 0:
        raise InvalidPositionError(f"{who}: negative chequer count {min(side)}")
    if sum(side) > CHEQUERS:
        raise InvalidPositionError(f"{who}: {sum(side)} chequers, at most {CHEQUERS}")
    return side


class Position:
    """An immutable, hashable backgammon position from the point of view of the player on roll.

    ``me`` and ``opp`` are 25 counts each, in each player's own numbering: index 0 is that player's ace
    point (point 1), index 23 their 24-point, index 24 their bar. Borne-off chequers are 15 minus the rest.
    My point p is the opponent's point 25 - p.
    """

    __slots__ = ("_hash", "me", "opp")
    me: tuple[int, ...]
    opp: tuple[int, ...]

    def __init__(self, me: Sequence[int], opp: Sequence[int]) -> None:
        m = _check_side(me, "player on roll")
        o = _check_side(opp, "opponent")
        for i in range(24):
            if m[i] and o[23 - i]:
                raise InvalidPositionError(f"point {i + 1} (the opponent's {24 - i}) is held by both sides")
        object.__setattr__(self, "me", m)
        object.__setattr__(self, "opp", o)
        object.__setattr__(self, "_hash", hash((m, o)))

    @classmethod
    def _trusted(cls, me: tuple[int, ...], opp: tuple[int, ...]) -> Position:
        """Build without validation: for the move generator, whose outputs are legal by construction."""
        self = object.__new__(cls)
        object.__setattr__(self, "me", me)
        object.__setattr__(self, "opp", opp)
        object.__setattr__(self, "_hash", hash((me, opp)))
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Position is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return self.me == other.me and self.opp == other.opp

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Position, (self.me, self.opp))

    # -- construction ---------------------------------------------------------------------------------------

    @classmethod
    def initial(cls) -> Position:
        return cls(_INITIAL_SIDE, _INITIAL_SIDE)

    @classmethod
    def from_id(cls, position_id: str) -> Position:
        """Decode a gnubg position ID (the side on roll is the one gnubg writes second)."""
        not_on_roll, on_roll = ids.decode_position_key(position_id.strip())
        try:
            return cls(on_roll, not_on_roll)
        except InvalidPositionError as exc:
            raise ids.InvalidIdError(f"position ID {position_id!r}: {exc}") from None

    @classmethod
    def from_points(cls, points: dict[int, int], bar: tuple[int, int] = (0, 0)) -> Position:
        """From a signed map in the on-roll player's numbering: {6: 5, 19: -5} = my 5 on 6, their 5 on my 19."""
        me = [0] * 25
        opp = [0] * 25
        for p, n in points.items():
            if not 1 <= p <= 24:
                raise InvalidPositionError(f"point {p} is not in 1..24")
            if n > 0:
                me[p - 1] = n
            elif n < 0:
                opp[24 - p] = -n
        me[BAR], opp[BAR] = bar
        return cls(me, opp)

    # -- views ----------------------------------------------------------------------------------------------

    @property
    def position_id(self) -> str:
        return ids.encode_position_key(self.opp, self.me)

    def swap(self) -> Position:
        """The same board with the other player on roll."""
        return Position._trusted(self.opp, self.me)

    @property
    def off(self) -> tuple[int, int]:
        """Chequers borne off: (player on roll, opponent)."""
        return CHEQUERS - sum(self.me), CHEQUERS - sum(self.opp)

    @property
    def bar(self) -> tuple[int, int]:
        return self.me[BAR], self.opp[BAR]

    def pips(self) -> tuple[int, int]:
        """Pip counts (player on roll, opponent); a chequer on the bar counts 25."""
        return (
            sum((i + 1) * n for i, n in enumerate(self.me)),
            sum((i + 1) * n for i, n in enumerate(self.opp)),
        )

    def is_over(self) -> bool:
        return not any(self.me) or not any(self.opp)

    def classify(self) -> PositionClass:
        """gnubg's ClassifyPosition for standard backgammon with its default bearoff databases."""
        back = _highest(self.me)
        opp_back = _highest(self.opp)
        if back < 0 or opp_back < 0:
            return PositionClass.OVER
        if back + opp_back > 22:
            for side in (self.opp, self.me):
                if _crashed(side):
                    return PositionClass.CRASHED
            return PositionClass.CONTACT
        if _in_bearoff(self, BEAROFF2_POINTS, BEAROFF2_CHEQUERS):
            return PositionClass.BEAROFF2
        if _in_bearoff(self, BEAROFF1_POINTS, BEAROFF1_CHEQUERS):
            return PositionClass.BEAROFF1
        return PositionClass.RACE

    def is_race(self) -> bool:
        """No contact: every chequer of each side has passed every chequer of the other."""
        return _highest(self.me) + _highest(self.opp) <= 22

    def signed_points(self) -> list[int]:
        """26 cells in the on-roll player's numbering: [0] = opponent's bar (negative), 1..24, [25] = my bar."""
        cells = [0] * 26
        for i in range(24):
            cells[i + 1] = self.me[i] - self.opp[23 - i]
        cells[25] = self.me[BAR]
        cells[0] = -self.opp[BAR]
        return cells

    def __repr__(self) -> str:
        return f"Position.from_id({self.position_id!r})"

    def __str__(self) -> str:
        return render_ascii(self)


def _highest(side: tuple[int, ...]) -> int:
    for i in range(24, -1, -1):
        if side[i]:
            return i
    return -1


def _crashed(side: tuple[int, ...]) -> bool:
    # gnubg eval.c: a side is "crashed" when at most 6 chequers are still in play outside of deep points.
    n = 6
    tot = sum(side)
    if tot <= n:
        return True
    if side[0] > 1:
        if tot - side[0] <= n:
            return True
        return side[1] > 1 and 1 + tot - (side[0] + side[1]) <= n
    return tot - (side[1] - 1) <= n


def _in_bearoff(pos: Position, points: int, chequers: int) -> bool:
    for side in (pos.me, pos.opp):
        back = _highest(side)
        if back >= points or sum(side[: back + 1]) > chequers:
            return False
    return True


def render_ascii(pos: Position) -> str:
    """A text board from the on-roll player's side: X = player on roll (moving 24 -> 1, home 1-6 bottom right),
    O = opponent. The bar column holds the chequers on the bar on the side where they enter (X top, O bottom),
    the OFF column those borne off beside each home board (O top, X bottom)."""
    cells = pos.signed_points()

    def cell(p: int) -> str:
        n = cells[p]
        return "   ." if n == 0 else f"{abs(n):>3}{'X' if n > 0 else 'O'}"

    def tray(n: int, who: str) -> str:
        return "    " if n == 0 else f"{n:>3}{who}"

    def labels(points: range) -> str:
        return "".join(f"{p:>4}" for p in points)

    def row(left: range, bar: str, right: range, off: str) -> str:
        return f"{''.join(cell(p) for p in left)} |{bar}|{''.join(cell(p) for p in right)} |{off}".rstrip()

    pips = pos.pips()
    return "\n".join(
        [
            f"{labels(range(13, 19))} | BAR|{labels(range(19, 25))} | OFF",
            row(range(13, 19), tray(pos.me[BAR], "X"), range(19, 25), tray(pos.off[1], "O")),
            row(range(12, 6, -1), tray(pos.opp[BAR], "O"), range(6, 0, -1), tray(pos.off[0], "X")),
            f"{labels(range(12, 6, -1))} | BAR|{labels(range(6, 0, -1))} | OFF",
            f"X on roll: pips {pips[0]}, bar {pos.me[BAR]}, off {pos.off[0]}"
            f"   O: pips {pips[1]}, bar {pos.opp[BAR]}, off {pos.off[1]}",
            f"Position ID: {pos.position_id}",
        ]
    )
