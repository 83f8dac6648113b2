"""Neural-net input encoding, vectorised over a batch with numpy (and in C where engine.moves uses C).

Boards travel as an int array of shape (n, 2, 25): side 0 = the player on roll, side 1 = the opponent, each in its
own numbering (index i = point i + 1, index 24 = bar), exactly the layout of ``Position.me`` / ``Position.opp``.

Inputs (``N_INPUTS`` = 212), the same for every net so that one encoder serves contact, crashed and race:

* 200 base inputs, gnubg's layout: for each side (on roll first) and each of its 25 cells, four units
  n == 1, n == 2, n >= 3 and (n - 3) / 2 when n > 3 (the bar uses gnubg's cumulative variant: n >= 1, n >= 2, n >= 3,
  (n - 3) / 2), so that the net sees blots, points and spares apart;
* 6 cheap features per side (on roll first), each scaled to about [0, 1]: chequers off / 15, pip count / 167,
  chequers in the opponent's home board (own points 19-24 and the bar) / 15, made points in the own home board / 6,
  length of the longest run of made points / 6, blots / 15.

Contact nets of gammond-v2 and later take ``N_CONTACT_INPUTS`` = 226: the 212 above, then the 14 Berliner-style
features of ``engine.features`` (hit chances, escapes, containment, anchor, rearmost chequer, pips to break
contact; on roll first). ``encoder_for`` picks the encoding by a net's input width, so older nets keep working.

Race nets of gammond-v3 and later take ``N_RACE_INPUTS`` = 242: the 212, then per side (on roll first) gnubg's
two race-specific inputs: chequers off as 14 one-hot units (1 to 14 off; none and all fifteen leave them 0), so
that the net can tell "one more off" apart at every count rather than read it from one scalar, and the crossovers
(each chequer weighted by the quadrants it still has to cross to reach home, the bar counting four) / 10.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np

from engine import features, moves
from engine.errors import InvalidPositionError
from engine.position import Position

N_BASE = 200
N_FEATURES_PER_SIDE = 6
N_INPUTS = N_BASE + 2 * N_FEATURES_PER_SIDE
FEATURE_NAMES = ("off", "pips", "back", "home_points", "prime", "blots")
N_CONTACT_INPUTS = N_INPUTS + 2 * features.N_PER_SIDE
N_RACE_PER_SIDE = 15
N_RACE_INPUTS = N_INPUTS + 2 * N_RACE_PER_SIDE
_QUADRANT = np.repeat(np.arange(5, dtype=np.float32), 6)[:25]  # points 1-6: 0 ... 19-24: 3, bar: 4

_PIP_WEIGHTS = np.arange(1, 26, dtype=np.float32)


def positions_to_array(positions: Sequence[Position], dtype: type = np.int8) -> np.ndarray:
    """(n, 2, 25) boards of ``dtype``, side 0 = the player on roll, each side in its own numbering.

    InvalidPositionError names the first item that is not a Position.
    """
    n = len(positions)
    try:
        flat = np.fromiter(chain.from_iterable(p.me + p.opp for p in positions), dtype, count=50 * n)
    except (AttributeError, TypeError, ValueError):
        flat = None  # something in the batch is not a Position: find it below and say which
    if flat is None or not all(isinstance(p, Position) for p in positions):
        for i, pos in enumerate(positions):
            if not isinstance(pos, Position):
                raise InvalidPositionError(f"item {i} is a {type(pos).__name__}, not a Position")
        raise InvalidPositionError("positions could not be read as boards")  # pragma: no cover
    return flat.reshape(n, 2, 25)


def boards_to_positions(boards: np.ndarray) -> list[Position]:
    """The inverse of ``positions_to_array`` for boards known to be legal (the search's own children)."""
    return [Position._trusted(tuple(map(int, b[0])), tuple(map(int, b[1]))) for b in boards]


def encode_numpy(boards: np.ndarray) -> np.ndarray:
    """float32 inputs of shape (n, N_INPUTS) for boards of shape (n, 2, 25) (the reference of ``encode``)."""
    b = np.asarray(boards, dtype=np.float32)
    if b.ndim != 3 or b.shape[1:] != (2, 25):
        raise ValueError(f"boards must have shape (n, 2, 25), not {b.shape}")
    n = b.shape[0]
    out = np.empty((n, N_INPUTS), dtype=np.float32)

    base = np.empty((n, 2, 25, 4), dtype=np.float32)
    base[..., 0] = b == 1
    base[..., 1] = b == 2
    base[..., 2] = b >= 3
    base[..., 3] = np.maximum(b - 3.0, 0.0) / 2.0
    bar = b[:, :, 24]
    base[:, :, 24, 0] = bar >= 1
    base[:, :, 24, 1] = bar >= 2
    out[:, :N_BASE] = base.reshape(n, N_BASE)

    made = b[:, :, :24] >= 2
    feats = np.empty((n, 2, N_FEATURES_PER_SIDE), dtype=np.float32)
    feats[..., 0] = (15.0 - b.sum(axis=2)) / 15.0
    feats[..., 1] = (b @ _PIP_WEIGHTS) / 167.0
    feats[..., 2] = b[:, :, 18:25].sum(axis=2) / 15.0
    feats[..., 3] = made[:, :, :6].sum(axis=2) / 6.0
    feats[..., 4] = np.minimum(_longest_run(made), 6) / 6.0
    feats[..., 5] = (b[:, :, :24] == 1).sum(axis=2) / 15.0
    out[:, N_BASE:] = feats.reshape(n, 2 * N_FEATURES_PER_SIDE)
    return out


def encode_contact_numpy(boards: np.ndarray) -> np.ndarray:
    """float32 inputs of shape (n, N_CONTACT_INPUTS): ``encode`` and then ``engine.features`` (the reference)."""
    base = encode_numpy(boards)
    return np.concatenate([base, features.features_numpy(boards)], axis=1)


def _encode_c(boards: np.ndarray, with_features: bool = False) -> np.ndarray:
    raw = moves.uint8_boards(boards)
    width = N_CONTACT_INPUTS if with_features else N_INPUTS
    return np.frombuffer(_C.encode(raw, with_features), dtype=np.float32).reshape(len(raw), width)


def _encode_contact_c(boards: np.ndarray) -> np.ndarray:
    return _encode_c(boards, True)


# The numpy encoding costs a 2-ply search as much time as its nets do; the C one computes the same numbers bit
# for bit (each input is an integer count divided once by a constant). Used where engine.moves uses C.
_C = moves.c_extension()
encode, encode_contact = (
    (_encode_c, _encode_contact_c) if hasattr(_C, "encode") else (encode_numpy, encode_contact_numpy)
)


def race_inputs(boards: np.ndarray) -> np.ndarray:
    """float32 (n, 2 * N_RACE_PER_SIDE): per side, chequers off one-hot (1..14) and crossovers / 10."""
    b = np.asarray(boards, dtype=np.float32)
    n = b.shape[0]
    out = np.zeros((n, 2, N_RACE_PER_SIDE), dtype=np.float32)
    off = 15 - b.sum(axis=2).astype(np.int64)
    out[..., :14] = off[..., None] == np.arange(1, 15)
    out[..., 14] = (b @ _QUADRANT) / 10.0
    return out.reshape(n, 2 * N_RACE_PER_SIDE)


def encode_race(boards: np.ndarray) -> np.ndarray:
    """float32 inputs of shape (n, N_RACE_INPUTS): ``encode`` and then ``race_inputs``."""
    return np.concatenate([encode(boards), race_inputs(boards)], axis=1)


ENCODERS: dict[int, Callable[[np.ndarray], np.ndarray]] = {
    N_INPUTS: encode,
    N_CONTACT_INPUTS: encode_contact,
    N_RACE_INPUTS: encode_race,
}


def encoder_for(width: int) -> Callable[[np.ndarray], np.ndarray]:
    """The encoding that makes ``width`` inputs; KeyError for a width no encoding makes."""
    return ENCODERS[width]


def _longest_run(made: np.ndarray) -> np.ndarray:
    """Longest run of consecutive True along the last axis (length 24), vectorised."""
    run = np.zeros(made.shape[:-1], dtype=np.int16)
    best = np.zeros_like(run)
    for i in range(made.shape[-1]):
        run = np.where(made[..., i], run + 1, 0)
        np.maximum(best, run, out=best)
    return best
