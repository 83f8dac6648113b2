"""Playing levels as data (gnubg's named levels) and the noise that makes the weaker ones err.

Noise is gnubg's: Gaussian, added to the mover's probabilities of every candidate, sigma on P(win), sigma/4 on the
two gammon outputs and sigma/100 on the two backgammon outputs, then clipped. Chequer play and cube decisions have
their own sigma. Deterministic noise is drawn from a hash of the position (and the level's seed), so that a
position always gets the same distortion; unlike gnubg 1.07's MD5 byte sum (biased, see the engines reference),
ours is a proper standard normal, with mean 0 over positions.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np

from engine.errors import EngineError
from engine.evaluator import sanitise
from engine.position import Position

_SCALE = np.array([1.0, 0.25, 0.01, 0.25, 0.01])


class LevelError(EngineError):
    """An unknown level name or a malformed explicit level."""


@dataclass(frozen=True, slots=True)
class Level:
    name: str
    plies: int = 0
    move_filter: str = "normal"
    chequer_noise: float = 0.0
    cube_noise: float = 0.0
    cube_plies: int | None = None  # None: the same depth as chequer play
    deterministic: bool = True
    seed: int = 0
    # what the user should know about how the level was made (a fibs: rating outside the measured range)
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not 0 <= self.plies <= 3:
            raise LevelError(f"plies must be 0..3, not {self.plies}")
        if not (0 <= self.chequer_noise < math.inf and 0 <= self.cube_noise < math.inf):
            raise LevelError("noise must be a finite number, not negative")  # NaN too: it would pass `< 0`
        if self.cube_plies is not None and not 0 <= self.cube_plies <= 3:
            raise LevelError(f"cube plies must be 0..3, not {self.cube_plies}")

    @property
    def cube_depth(self) -> int:
        return self.plies if self.cube_plies is None else self.cube_plies

    def chequer_perturber(self, rng: random.Random | None = None) -> Noise | None:
        return (
            Noise(self.chequer_noise, self.deterministic, self.seed, rng) if self.chequer_noise > 0 else None
        )

    def cube_perturber(self, rng: random.Random | None = None) -> Noise | None:
        return Noise(self.cube_noise, self.deterministic, self.seed + 1, rng) if self.cube_noise > 0 else None


# gnubg's predefined levels (eval.c aecSettings): same noise for chequer play and cube.
LEVELS: dict[str, Level] = {
    "beginner": Level("beginner", 0, chequer_noise=0.060, cube_noise=0.060),
    "casual": Level("casual", 0, chequer_noise=0.050, cube_noise=0.050),
    "intermediate": Level("intermediate", 0, chequer_noise=0.040, cube_noise=0.040),
    "advanced": Level("advanced", 0, chequer_noise=0.015, cube_noise=0.015),
    "expert": Level("expert", 0),
    "worldclass": Level("worldclass", 2, "normal"),
    "supremo": Level("supremo", 2, "large"),
    "grandmaster": Level("grandmaster", 3, "large"),
}
_ALIASES = {
    "world class": "worldclass",
    "world-class": "worldclass",
    "world_class": "worldclass",
    "casual play": "casual",
}


def parse_level(text: str) -> Level:
    """A named level (``expert``, ``world class`` ...) or an explicit one: ``plies=1,noise=0.02,filter=large``
    (keys: plies, filter, noise, chequer_noise, cube_noise, cube_plies, deterministic, seed), optionally after a
    base name: ``expert,noise=0.01``; or a FIBS rating, ``fibs:1650`` (see ``level_for_rating``)."""
    if text.strip().lower().startswith("fibs:"):
        return level_for_rating(_parse_rating(text.strip()[5:]))
    parts = [p.strip() for p in text.strip().split(",") if p.strip()]
    if not parts:
        raise LevelError("empty level")
    base = LEVELS["expert"]
    name = parts[0].lower()
    name = _ALIASES.get(name, name)
    if "=" not in name:
        if name not in LEVELS:
            raise LevelError(f"unknown level {parts[0]!r}; known: {', '.join(LEVELS)}")
        base = LEVELS[name]
        parts = parts[1:]
    fields: dict[str, object] = {}
    for part in parts:
        m = re.fullmatch(r"([a-z_]+)\s*=\s*(\S+)", part.lower())
        if not m:
            raise LevelError(f"level option {part!r} is not key=value")
        key, value = m.groups()
        try:
            if key == "noise":
                fields["chequer_noise"] = fields["cube_noise"] = float(value)
            elif key in ("chequer_noise", "cube_noise"):
                fields[key] = float(value)
            elif key in ("plies", "cube_plies", "seed"):
                fields[key] = int(value)
            elif key == "filter":
                if value not in ("tiny", "normal", "large"):
                    raise LevelError(f"unknown move filter {value!r}")
                fields["move_filter"] = value
            elif key in ("deterministic", "det"):
                fields["deterministic"] = value in ("1", "on", "true", "yes")
            else:
                raise LevelError(f"unknown level option {key!r}")
        except ValueError as exc:
            raise LevelError(f"level option {part!r}: {exc}") from None
    if fields:
        return replace(base, name=text.strip(), **fields)  # type: ignore[arg-type]
    return base


class Noise:
    """Distorts probabilities of candidate positions with gnubg-style Gaussian noise."""

    def __init__(self, sigma: float, deterministic: bool, seed: int = 0, rng: random.Random | None = None):
        self.sigma = sigma
        self.deterministic = deterministic
        self.salt = seed.to_bytes(8, "little", signed=True)
        self.rng = rng or random.Random()

    def normals(self, position: Position) -> np.ndarray:
        """Five standard normal draws for ``position``."""
        if not self.deterministic:
            return np.array([self.rng.gauss(0.0, 1.0) for _ in range(5)])
        digest = hashlib.blake2b(self.salt + position.position_id.encode(), digest_size=40).digest()
        u = np.frombuffer(digest, dtype="<u8").astype(np.float64)
        u = (u + 0.5) / 2.0**64  # five uniforms in (0, 1)
        # Box-Muller on pairs, using the last uniform twice with a fixed partner for the fifth draw.
        u1 = np.array([u[0], u[2], u[4]])
        u2 = np.array([u[1], u[3], (u[0] + u[4]) % 1.0])
        r = np.sqrt(-2.0 * np.log(u1))
        z = np.concatenate([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)])
        return z[[0, 3, 1, 4, 2]]

    def __call__(self, positions: Sequence[Position], probs: np.ndarray) -> np.ndarray:
        z = np.array([self.normals(p) for p in positions]).reshape(len(positions), 5)
        return sanitise(probs + self.sigma * _SCALE * z)


# -- levels by FIBS rating ------------------------------------------------------------------------------------

# The FIBS rating each noise level plays at: gnubg's error-based rating of its play against our expert, from our
# own analysis (bench/fibs_levels.py; the table and its intervals are in MODELS.md). Noise sigma -> rating,
# strongest first; ratings in between get the noise interpolated linearly between the two neighbours.
RATED_NOISE: tuple[tuple[float, float], ...] = (
    (0.0, 1916.0),  # expert
    (0.015, 1838.0),  # advanced
    (0.040, 1459.0),  # intermediate
    (0.050, 1265.0),  # casual
    (0.060, 1207.0),  # beginner
)
RATING_RANGE = (500.0, 2500.0)


def _parse_rating(text: str) -> float:
    try:
        rating = float(text)
    except ValueError:
        raise LevelError(f"fibs:{text} is not a FIBS rating such as fibs:1650") from None
    lo, hi = RATING_RANGE
    if not lo <= rating <= hi or rating != rating:
        raise LevelError(f"FIBS rating {text} is outside {lo:.0f}..{hi:.0f}")
    return rating


def noise_for_rating(rating: float) -> float:
    """The chequer and cube noise that plays at ``rating``: 0 at or above the expert's rating, the weakest
    level's noise at or below its rating, linear in between."""
    table = RATED_NOISE
    if rating >= table[0][1]:
        return 0.0
    if rating <= table[-1][1]:
        return table[-1][0]
    for (s_hi, r_hi), (s_lo, r_lo) in pairwise(table):
        if r_lo <= rating <= r_hi:
            return s_hi + (s_lo - s_hi) * (r_hi - rating) / (r_hi - r_lo)
    raise AssertionError("unreachable: the table covers the range")  # pragma: no cover


def rating_note(rating: float) -> str:
    """Empty for a rating our measured levels span; else what the level plays at instead (the noise stops at the
    table's ends: no level plays above noise-free expert, and none below the beginner has been measured)."""
    (_, strongest), (_, weakest) = RATED_NOISE[0], RATED_NOISE[-1]
    if rating > strongest:
        return (
            f"fibs:{rating:g} is above the strongest measured level (expert, about {strongest:.0f}): "
            f"it plays as expert"
        )
    if rating < weakest:
        return (
            f"fibs:{rating:g} is below the weakest measured level (beginner, about {weakest:.0f}): "
            f"it plays as beginner"
        )
    return ""


def level_for_rating(rating: float) -> Level:
    """A 0-ply level whose noise plays at about this FIBS rating (``fibs:NNNN`` in the config); its ``note``
    says so where the rating lies outside the measured levels and was clamped to the nearest."""
    sigma = round(noise_for_rating(rating), 5)
    return Level(f"fibs:{rating:g}", 0, chequer_noise=sigma, cube_noise=sigma, note=rating_note(rating))
