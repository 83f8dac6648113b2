"""Seeded random backgammon positions for benchmarks and cross-checks (tests import this too).

Every generator takes a ``random.Random`` so that a seed fixes the whole set. The kinds cover what a move
generator must get right: ordinary contact, pure races, bear-offs (some with a straggler just outside),
chequers on the bar against partly or fully closed boards, and positions reached by random play from the
opening.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from engine.moves import legal_plays
from engine.position import BAR, CHEQUERS, Position

Roll = tuple[int, int]
ALL_ROLLS: tuple[Roll, ...] = tuple((d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1))
NON_DOUBLES: tuple[Roll, ...] = tuple(r for r in ALL_ROLLS if r[0] != r[1])
DOUBLES: tuple[Roll, ...] = tuple(r for r in ALL_ROLLS if r[0] == r[1])


def _scatter(rng: random.Random, side: list[int], n: int, points: list[int]) -> None:
    """Drop ``n`` chequers on a few of ``points`` (indices into ``side``), stacked as in real play."""
    if n <= 0 or not points:
        return
    chosen = rng.sample(points, min(len(points), rng.randint(1, 9)))
    for _ in range(n):
        side[rng.choice(chosen)] += 1


def _free_for_opp(me: list[int]) -> list[int]:
    """Opponent indices whose point the player on roll does not hold (opp index j is my point 24 - j)."""
    return [j for j in range(24) if not me[23 - j]]


def _with_opponent(rng: random.Random, me: list[int]) -> Position:
    opp = [0] * 25
    if rng.random() < 0.12:
        opp[BAR] = rng.randint(1, 3)
    off = rng.choice((0, 0, 0, rng.randint(0, 10)))
    _scatter(rng, opp, CHEQUERS - off - opp[BAR], _free_for_opp(me))
    return Position(me, opp)


def contact(rng: random.Random) -> Position:
    while True:
        me = [0] * 25
        if rng.random() < 0.12:
            me[BAR] = rng.randint(1, 3)
        off = rng.choice((0, 0, 0, rng.randint(0, 8)))
        _scatter(rng, me, CHEQUERS - off - me[BAR], list(range(24)))
        if not any(me):
            continue
        pos = _with_opponent(rng, me)
        if not pos.is_race():
            return pos


def race(rng: random.Random) -> Position:
    split = rng.randint(2, 22)  # my chequers below my point split, theirs below their point 24 - split
    me = [0] * 25
    _scatter(rng, me, CHEQUERS - rng.randint(0, 12), list(range(split)))
    opp = [0] * 25
    _scatter(rng, opp, CHEQUERS - rng.randint(0, 12), list(range(23 - split)))
    return Position(me, opp)


def bearoff(rng: random.Random) -> Position:
    """All home, or one straggler just outside that the first die may bring in."""
    me = [0] * 25
    n = CHEQUERS - rng.randint(0, 14)
    if rng.random() < 0.3:
        me[rng.randint(6, 11)] += 1
        n -= 1
    _scatter(rng, me, n, list(range(6)))
    if not any(me):
        me[0] = 1
    return _with_opponent(rng, me)


def on_bar(rng: random.Random, closed: bool = False) -> Position:
    """Chequers on the bar against a home board with several points made (all six when ``closed``)."""
    opp = [0] * 25
    made = list(range(6)) if closed else rng.sample(range(6), rng.randint(2, 6))
    for j in made:
        opp[j] = 2 + (len(made) < 5 and rng.random() < 0.3)
    left = CHEQUERS - sum(opp) - rng.choice((0, 0, rng.randint(0, 3)))
    _scatter(rng, opp, max(left, 0), list(range(6, 24)))
    me = [0] * 25
    me[BAR] = rng.randint(1, 4)
    mine = [i for i in range(24) if not opp[23 - i]]
    _scatter(rng, me, CHEQUERS - me[BAR] - rng.choice((0, 0, rng.randint(0, 6))), mine)
    return Position(me, opp)


def closed_board(rng: random.Random) -> Position:
    return on_bar(rng, closed=True)


def played(rng: random.Random) -> Position:
    """A position after 0-80 random plies from the opening: the kind of board real games produce."""
    while True:
        pos = Position.initial()
        for _ in range(rng.randint(0, 80)):
            roll = (rng.randint(1, 6), rng.randint(1, 6))
            pos = rng.choice(legal_plays(pos, roll)).position.swap()
            if pos.is_over():
                break
        if not pos.is_over():
            return pos


KINDS: dict[str, Callable[[random.Random], Position]] = {
    "contact": contact,
    "race": race,
    "bearoff": bearoff,
    "bar": on_bar,
    "closed": closed_board,
    "played": played,
}


def random_cases(
    n: int, seed: int, kinds: tuple[str, ...] = tuple(KINDS)
) -> Iterator[tuple[str, Position, Roll]]:
    """``n`` (kind, position, roll) triples, kinds in rotation, rolls uniform over the 36 outcomes."""
    rng = random.Random(seed)
    for i in range(n):
        kind = kinds[i % len(kinds)]
        pos = KINDS[kind](rng)
        yield kind, pos, (rng.randint(1, 6), rng.randint(1, 6))


def contact_positions(n: int, seed: int) -> list[Position]:
    """``n`` distinct contact positions from random play (the benchmark's fixed set)."""
    rng = random.Random(seed)
    seen: dict[Position, None] = {}
    while len(seen) < n:
        pos = played(rng)
        if not pos.is_race():
            seen.setdefault(pos)
    return list(seen)
