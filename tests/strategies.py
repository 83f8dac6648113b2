"""Random valid positions for tests: a hypothesis strategy and a plain helper driven by random.Random.

Both sides get all 15 chequers, some of them borne off or on the bar, and never a point held by both.
Unless ``allow_finished`` is set, each side keeps at least one chequer in play (a game still on).
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from engine.position import BAR, CHEQUERS, Position


def _mirror_free(me: list[int]) -> list[int]:
    """Point indices (in the opponent's numbering) that ``me`` does not occupy."""
    return [i for i in range(24) if not me[23 - i]]


def random_position(rng: random.Random, allow_finished: bool = False) -> Position:
    """A valid random position, with bar and borne-off chequers now and then."""
    lowest_off_left = 0 if allow_finished else 1

    def side(free: list[int]) -> list[int]:
        counts = [0] * 25
        off = rng.choice([0, 0, rng.randint(0, CHEQUERS - lowest_off_left)])
        in_play = CHEQUERS - off
        counts[BAR] = min(rng.choice([0, 0, 0, 1, 2, 3]), in_play)
        for _ in range(in_play - counts[BAR]):
            counts[rng.choice(free)] += 1
        return counts

    me = side(list(range(24)))
    return Position(me, side(_mirror_free(me)))


@st.composite
def positions(draw: st.DrawFn, allow_finished: bool = False) -> Position:
    """Hypothesis strategy for valid positions; shrinks towards few chequers off and none on the bar."""
    lowest_off_left = 0 if allow_finished else 1

    def side(free: list[int]) -> list[int]:
        counts = [0] * 25
        off = draw(st.integers(0, CHEQUERS - lowest_off_left))
        in_play = CHEQUERS - off
        counts[BAR] = draw(st.integers(0, min(3, in_play)))
        spots = draw(
            st.lists(st.sampled_from(free), min_size=in_play - counts[BAR], max_size=in_play - counts[BAR])
        )
        for i in spots:
            counts[i] += 1
        return counts

    me = side(list(range(24)))
    return Position(me, side(_mirror_free(me)))
