"""Where dice come from: a seeded Mersenne Twister (gnubg's own generator), a list, or a file.

Every source hands out rolls as ``(die 1, die 2)`` and opening rolls as ``(die of player 0, die of
player 1)`` with the two dice different: a doubled opening roll is rolled again, as gnubg does (without
automatic doubles).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from engine.errors import InvalidDiceError

Roll = tuple[int, int]


class DiceExhaustedError(InvalidDiceError):
    """A manual or file source has no rolls left."""


class DiceFileError(InvalidDiceError):
    """A dice file that cannot be read or holds something other than rolls."""


@runtime_checkable
class DiceSource(Protocol):
    def roll(self) -> Roll: ...

    def opening(self) -> Roll: ...


def parse_roll(token: str) -> Roll:
    """``"62"`` -> (6, 2); also ``"6-2"``, ``"6,2"`` and ``"6 2"``. InvalidDiceError names the token."""
    digits = [c for c in token if not c.isspace() and c not in "-,/"]
    if len(digits) != 2 or not all(c in "123456" for c in digits):
        raise InvalidDiceError(f"{token!r} is not a roll of two dice 1-6 such as '62'")
    return int(digits[0]), int(digits[1])


def _opening_from(roll: Callable[[], Roll]) -> Roll:
    while True:
        d0, d1 = roll()
        if d0 != d1:
            return d0, d1


# gnubg's RNG_MERSENNE (dice.c RollDice): each die takes one 32-bit output r of MT19937, rejecting
# r >= 6 * 715827882 so that all six faces are equally likely, and is 1 + r // 715827882.
_DIE_SPAN = 715827882
_DIE_LIMIT = 6 * _DIE_SPAN
_MT_N = 624


def _init_genrand(seed: int) -> tuple[int, ...]:
    """MT19937's init_genrand state, the seeding gnubg's ``set seed N`` uses (not Python's init_by_array)."""
    mt = [seed & 0xFFFFFFFF]
    for i in range(1, _MT_N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return tuple(mt)


class MersenneDice:
    """Dice from MT19937 seeded as gnubg 1.07 seeds it, so ``MersenneDice(n)`` rolls what gnubg rolls after
    ``set rng mersenne`` and ``set seed n`` (the opening roll of ``new match`` included).

    The generator is Python's ``random.Random`` (MT19937 too) given the init_genrand state directly: its
    ``getrandbits(32)`` is MT19937's genrand_int32. gnubg reduces a seed modulo 2**32 - 1 (its GMP path), and
    so does this class. ``drawn`` skips that many dice ahead, so that the repr rebuilds the source as it is.
    """

    def __init__(self, seed: int, drawn: int = 0) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise InvalidDiceError(f"seed must be a non-negative integer, not {seed!r}")
        if not isinstance(drawn, int) or drawn < 0:
            raise InvalidDiceError(f"drawn must be a non-negative integer, not {drawn!r}")
        self.seed = seed
        self._rng = random.Random()
        self._rng.setstate((3, (*_init_genrand(seed % 0xFFFFFFFF), _MT_N), None))
        self.drawn = 0
        for _ in range(drawn):
            self._die()

    def _die(self) -> int:
        while True:
            r = self._rng.getrandbits(32)
            if r < _DIE_LIMIT:
                self.drawn += 1
                return 1 + r // _DIE_SPAN

    def roll(self) -> Roll:
        return self._die(), self._die()

    def opening(self) -> Roll:
        return _opening_from(self.roll)

    def __repr__(self) -> str:
        return f"MersenneDice({self.seed}, drawn={self.drawn})"


class ManualDice:
    """Rolls given in advance, handed out in order; DiceExhaustedError once they are used up."""

    def __init__(self, rolls: Iterable[Roll | str] = ()) -> None:
        self._rolls: list[Roll] = [self._check(r) for r in rolls]
        self._next = 0

    @staticmethod
    def _check(roll: Roll | str) -> Roll:
        if isinstance(roll, str):
            return parse_roll(roll)
        try:
            d1, d2 = roll
        except (TypeError, ValueError):
            raise InvalidDiceError(f"{roll!r} is not a pair of dice") from None
        if not (isinstance(d1, int) and isinstance(d2, int) and 1 <= d1 <= 6 and 1 <= d2 <= 6):
            raise InvalidDiceError(f"{roll!r} is not a pair of dice 1-6")
        return d1, d2

    @property
    def remaining(self) -> int:
        return len(self._rolls) - self._next

    def roll(self) -> Roll:
        if self._next >= len(self._rolls):
            raise DiceExhaustedError(f"all {len(self._rolls)} rolls have been used")
        roll = self._rolls[self._next]
        self._next += 1
        return roll

    def opening(self) -> Roll:
        """The next roll with different dice, as (player 0, player 1); doubles are skipped like a re-roll."""
        return _opening_from(self.roll)

    def __repr__(self) -> str:
        left = ", ".join(f"'{a}{b}'" for a, b in self._rolls[self._next :])
        return f"ManualDice([{left}])"


def parse_dice_text(text: str, source: str = "<text>") -> list[Roll]:
    """Rolls written as ``62 31 55`` or one per line; ``#`` starts a comment. Errors name the line."""
    rolls: list[Roll] = []
    for number, line in enumerate(text.splitlines(), 1):
        for token in line.split("#", 1)[0].split():
            try:
                rolls.append(parse_roll(token))
            except InvalidDiceError as exc:
                raise DiceFileError(f"{source}, line {number}: {exc}") from None
    return rolls


class FileDice(ManualDice):
    """Rolls read from a text file (see parse_dice_text); unlike gnubg it does not rewind at the end."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DiceFileError(f"cannot read dice file {str(self.path)!r}: {exc}") from None
        super().__init__(parse_dice_text(text, str(self.path)))

    def __repr__(self) -> str:
        return f"FileDice({str(self.path)!r})"
