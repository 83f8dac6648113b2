"""Contact features in the spirit of gnubg's Berliner-style inputs, vectorised over a batch with numpy.

A net that sees only chequer counts has to learn for itself how many rolls hit a blot or let a back chequer out;
gnubg's contact nets are given such numbers as inputs, and the contact encoding (``engine.encoding``) adds these.
Every feature is computed for both sides, each from its own point of view, and scaled to about [0, 1]:

* ``hit``: the share of the opponent's 36 rolls that hit at least one of the side's blots (entering from the bar
  first, intermediate points blocked by made points, doubles four steps);
* ``escapes``: the share of the 36 rolls that let the side's rearmost chequer pass every opposing point in the
  twelve points in front of it;
* ``contain`` and its square: how well the side blocks the opponent: 1 − (least escapes of an opposing chequer
  anywhere on the side's points 1–12) / 36;
* ``anchor``: the side's most advanced point in the opponent's home board held with two or more chequers;
* ``rear``: the side's rearmost chequer (the bar counts as point 25);
* ``contact``: the pips the side must move so that all its chequers have passed the opponent's rearmost one.

Boards are (n, 2, 25) as in ``engine.encoding``: side 0 on roll, each side in its own numbering, index 24 = bar.
Points are handled as 24-bit masks (bit k = point k + 1 of the side whose numbering is used), so a move of d pips
towards home is a right shift by d.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from engine import moves

FEATURE_NAMES = ("hit", "escapes", "contain", "contain2", "anchor", "rear", "contact")
N_PER_SIDE = len(FEATURE_NAMES)

_POW2 = (np.int64(1) << np.arange(24, dtype=np.int64)).astype(np.int64)
_ND_A = np.array([a for a in range(1, 7) for b in range(a + 1, 7)], dtype=np.int64)  # the 15 non-doubles
_ND_B = np.array([b for a in range(1, 7) for b in range(a + 1, 7)], dtype=np.int64)
_DOUBLES = np.arange(1, 7, dtype=np.int64)
_IDX = np.arange(25)
_FULL = (1 << 24) - 1


@cache
def escapes_table() -> np.ndarray:
    """Rolls (of 36) that carry one chequer past every block, by the 12-bit pattern of made points in front of it.

    Bit j of the pattern: the point j + 1 pips ahead is blocked. A roll escapes when the chequer can land (on open
    points only, dice in either order, a double up to four times) further than the furthest block.
    """
    table = np.zeros(4096, dtype=np.int8)
    for pattern in range(4096):
        last = pattern.bit_length()  # the furthest block, in pips (0: none)

        def open_(d: int, pattern: int = pattern) -> bool:
            return d > 12 or not (pattern >> (d - 1)) & 1

        count = 0
        for a in range(1, 7):
            for b in range(1, 7):
                if a == b:
                    reach, ok = 0, True
                    for _ in range(4):
                        reach += a
                        ok = ok and open_(reach)
                        if not ok:
                            break
                    far = reach if ok else reach - a
                else:
                    far = max(
                        a if open_(a) else 0,
                        b if open_(b) else 0,
                        a + b if open_(a + b) and (open_(a) or open_(b)) else 0,
                    )
                count += far > last
        table[pattern] = count
    table.flags.writeable = False
    return table


def _masks(side: np.ndarray, reverse: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(made, blots, occupied) point masks of one side's (n, 25) counts, in its own numbering or the other's."""
    pts = side[:, :24]
    if reverse:
        pts = pts[:, ::-1]
    made = (pts >= 2) @ _POW2
    blots = (pts == 1) @ _POW2
    occupied = (pts >= 1) @ _POW2
    return made, blots, occupied


def hit_chance(target: np.ndarray, shooter: np.ndarray) -> np.ndarray:
    """Share of the shooter's 36 rolls that hit at least one blot of ``target``; both (n, 25) in own numbering."""
    made, blots, _ = _masks(target, reverse=True)  # the target's points in the shooter's numbering
    _, _, src = _masks(shooter, reverse=False)
    bar = shooter[:, 24].astype(np.int64)
    made, blots, src, bar = made[:, None], blots[:, None], src[:, None], bar[:, None]
    free = ~made & _FULL

    # Non-doubles (a, b), twice each.
    a, b = _ND_A[None, :], _ND_B[None, :]
    direct = ((src >> a) | (src >> b)) & blots
    combined = (((src >> a) & free) >> b | ((src >> b) & free) >> a) & blots
    none_on_bar = (direct | combined) != 0
    ea, eb = np.int64(1) << (24 - a), np.int64(1) << (24 - b)  # entry points of a and b
    enter_a = ((ea & made) == 0) & (((ea & blots) | (((src | ea) >> b) & blots)) != 0)
    enter_b = ((eb & made) == 0) & (((eb & blots) | (((src | eb) >> a) & blots)) != 0)
    one_on_bar = enter_a | enter_b
    more_on_bar = ((ea | eb) & blots) != 0
    nd = np.where(bar == 0, none_on_bar, np.where(bar == 1, one_on_bar, more_on_bar))

    # Doubles: enter what is on the bar (if the point is open), then up to the remaining steps of d.
    d = _DOUBLES[None, :]
    e = np.int64(1) << (24 - d)
    entry_open = (e & made) == 0
    hit = (bar > 0) & entry_open & ((e & blots) != 0)
    cur = np.where(bar > 0, np.where(entry_open, src | e, 0), src)
    steps = np.maximum(4 - bar, 0)
    for j in range(1, 5):
        cur = cur >> d
        hit |= (j <= steps) & ((cur & blots) != 0)
        cur &= free
    rolls = 2 * nd.sum(axis=1) + hit.sum(axis=1)
    return rolls.astype(np.float32) / 36.0


def _rearmost(side: np.ndarray) -> np.ndarray:
    """Index of the side's rearmost chequer (24 = bar, -1 = none left)."""
    return np.where(side > 0, _IDX, -1).max(axis=1)


def side_features(me: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """(n, N_PER_SIDE) features of ``me`` against ``opp``, both (n, 25) counts in their own numbering."""
    n = len(me)
    out = np.empty((n, N_PER_SIDE), dtype=np.float32)
    esc = escapes_table()
    out[:, 0] = hit_chance(me, opp)

    # My chequer on my index q has in front of it my indices q-1 .. q-12, the opponent's 24-q .. 35-q: in the
    # opponent's own numbering the pattern (bit j = j + 1 pips ahead) is a plain shift. Beyond his ace is open.
    opp_made, _, _ = _masks(opp, reverse=False)
    my_made, _, _ = _masks(me, reverse=False)
    rear = _rearmost(me)
    pattern = (opp_made >> (24 - np.maximum(rear, 0))) & 0xFFF
    out[:, 1] = np.where(rear >= 0, esc[pattern], 36).astype(np.float32) / 36.0

    # The same for an opposing chequer on his index q, 13..24 being his back half (my points 1-12).
    q = np.arange(12, 24)[None, :]
    opp_patterns = (my_made[:, None] >> (24 - q)) & 0xFFF
    least = esc[opp_patterns].min(axis=1).astype(np.float32)
    out[:, 2] = 1.0 - least / 36.0
    out[:, 3] = out[:, 2] ** 2

    held = me[:, 18:24] >= 2
    top = np.where(held, np.arange(1, 7), 0).max(axis=1)
    out[:, 4] = top / 6.0
    out[:, 5] = (rear + 1) / 25.0

    opp_rear = _rearmost(opp)
    line = 23 - opp_rear  # the opponent's rearmost chequer, in my numbering; mine above it still have to pass
    pips = np.maximum(_IDX[None, :] - line[:, None] + 1, 0) * me
    out[:, 6] = np.where(opp_rear >= 0, pips.sum(axis=1), 0) / 100.0
    return out


def features_numpy(boards: np.ndarray) -> np.ndarray:
    """(n, 2 * N_PER_SIDE) float32: the features of the side on roll, then the opponent's (the reference)."""
    b = np.asarray(boards, dtype=np.int64)
    return np.concatenate([side_features(b[:, 0], b[:, 1]), side_features(b[:, 1], b[:, 0])], axis=1)


def _features_c(boards: np.ndarray) -> np.ndarray:
    raw = moves.uint8_boards(boards)
    return np.frombuffer(_C.features(raw), dtype=np.float32).reshape(len(raw), 2 * N_PER_SIDE)


# The C extension computes the same numbers bit for bit, 20-50 times faster on a search's small batches. It is
# used exactly where engine.moves uses it (built, and GAMMOND_PURE_PYTHON not set).
_C = moves.c_extension()
features = _features_c if hasattr(_C, "features") else features_numpy  # a build older than this file lacks it
IMPLEMENTATION = "c" if features is _features_c else "numpy"
