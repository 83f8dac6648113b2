"""GNU Backgammon position IDs and match IDs, bit-exact with gnubg 1.07.

Position ID: an 80-bit key, written as 14 characters of base64 without padding. For each side in turn the
chequer counts of its points 1..24 and its bar are written as that many 1-bits followed by one 0-bit; the bits
fill each byte from its least significant bit. gnubg writes the side *not* on roll first (its anBoard[0]),
then the side on roll (anBoard[1]); real gnubg output is what users paste, so that order is the one kept here.

Match ID: a 66-bit key (plus gnubg's Jacoby bit), written as 12 characters of base64 of 9 bytes:

    bits  0-3  log2 of the cube value        bit  12     double offered
    bits  4-5  cube owner (0, 1, 3 = centre)  bits 13-14 resignation offered (0, 1, 2, 3)
    bit   6    player on roll (dice owner)    bits 15-17 die 1, 18-20 die 2
    bit   7    Crawford game                  bits 21-35 match length (0 = money)
    bits  8-10 game state                     bits 36-50 score of player 0, 51-65 of player 1
    bit   11   player whose turn it is        bit  66    1 when the Jacoby rule is *off*

These functions work on plain tuples and integers so that they stay free of the rest of the engine.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from enum import IntEnum

from engine.errors import InvalidIdError

POSITION_ID_LENGTH = 14
MATCH_ID_LENGTH = 12
MAX_SCORE = 64  # gnubg's MAXSCORE: longest match it accepts
_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

Side = tuple[int, ...]  # 25 counts: points 1..24 at indices 0..23, bar at 24


def _b64decode(text: str, length: int, nbytes: int, what: str) -> bytes:
    if not isinstance(text, str):
        raise InvalidIdError(f"{what} must be a string, not {type(text).__name__}")
    if len(text) != length:
        raise InvalidIdError(f"{what} {text!r} must have {length} characters, not {len(text)}")
    raw = text.encode("ascii", "replace")
    if not set(raw) <= _B64:
        raise InvalidIdError(f"{what} {text!r} has characters outside base64")
    pad = "=" * (-len(text) % 4)
    try:
        data = base64.b64decode(text + pad, validate=True)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - filtered above
        raise InvalidIdError(f"{what} {text!r} is not base64: {exc}") from None
    return data[:nbytes]


def encode_position_key(not_on_roll: Side, on_roll: Side) -> str:
    """The 14-character position ID of a board given as gnubg's anBoard[0] (not on roll) and anBoard[1]."""
    bits = 0
    pos = 0
    for side in (not_on_roll, on_roll):
        for count in side:
            bits |= ((1 << count) - 1) << pos
            pos += count + 1
    if pos > 80:
        raise InvalidIdError(f"a board of {pos - 50} chequers does not fit a position ID")
    key = bits.to_bytes(10, "little")
    return base64.b64encode(key).decode("ascii")[:POSITION_ID_LENGTH]


def decode_position_key(text: str) -> tuple[Side, Side]:
    """(not on roll, on roll) from a position ID; raises InvalidIdError on anything gnubg would refuse."""
    key = _b64decode(text, POSITION_ID_LENGTH, 10, "position ID")
    bits = int.from_bytes(key, "little")
    sides: list[list[int]] = [[0] * 25, [0] * 25]
    side = point = 0
    for i in range(80):
        if side == 2:
            if bits >> i:
                raise InvalidIdError(f"position ID {text!r} has bits after the second side")
            break
        if bits >> i & 1:
            sides[side][point] += 1
        else:
            point += 1
            if point == 25:
                side += 1
                point = 0
    if side < 2:
        raise InvalidIdError(f"position ID {text!r} does not describe two sides of 25 points")
    for who, counts in zip(("not on roll", "on roll"), sides, strict=True):
        if sum(counts) > 15:
            raise InvalidIdError(f"position ID {text!r} has {sum(counts)} chequers for the side {who}")
    return tuple(sides[0]), tuple(sides[1])


class GameState(IntEnum):
    """gnubg's gamestate field of the match ID."""

    NONE = 0
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4


@dataclass(frozen=True, slots=True)
class MatchKey:
    """The fields of a gnubg match ID, in gnubg's own terms (players 0 and 1, not 'me' and 'opponent')."""

    cube: int = 1
    cube_owner: int = -1  # -1 centred, else 0 or 1
    move: int = 0  # player on roll (owner of the dice)
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int = 0  # player who must act now (differs from move while a double or resignation is pending)
    doubled: bool = False
    resigned: int = 0  # 0 none, 1 single, 2 gammon, 3 backgammon
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0  # 0 = money
    score: tuple[int, int] = (0, 0)
    jacoby: bool = True

    def __post_init__(self) -> None:
        cube = self.cube
        if cube < 1 or cube & (cube - 1) or cube > 1 << 15:
            raise InvalidIdError(f"cube value {cube} is not a power of two up to 32768")
        if self.cube_owner not in (-1, 0, 1):
            raise InvalidIdError(f"cube owner {self.cube_owner} is not -1, 0 or 1")
        if self.move not in (0, 1) or self.turn not in (0, 1):
            raise InvalidIdError("move and turn must be 0 or 1")
        if self.resigned not in (0, 1, 2, 3):
            raise InvalidIdError(f"resignation level {self.resigned} is not 0..3")
        d1, d2 = self.dice
        if not ((d1 == d2 == 0) or (1 <= d1 <= 6 and 1 <= d2 <= 6)):
            raise InvalidIdError(f"dice {self.dice} are neither both 0 nor both in 1..6")
        if not 0 <= self.match_length <= MAX_SCORE:
            raise InvalidIdError(f"match length {self.match_length} is outside 0..{MAX_SCORE}")
        # gnubg adds the whole last game to the score, so a finished match may end above its length
        # (a gammon won at 0-0 of a 1-point match is written as 2-0), though never while a game is on.
        finished = self.game_state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
        for s in self.score:
            if s < 0 or s >= 1 << 15 or (self.match_length and s > self.match_length and not finished):
                raise InvalidIdError(f"score {self.score} does not fit a {self.match_length}-point match")
        if self.crawford and not self.match_length:
            raise InvalidIdError("a money session has no Crawford game")

    def encode(self) -> str:
        d1, d2 = self.dice  # as stored; gnubg itself stores the larger die first (see MatchState)
        fields = (
            (0, 4, self.cube.bit_length() - 1),
            (4, 2, self.cube_owner & 0x3),
            (6, 1, self.move),
            (7, 1, int(self.crawford)),
            (8, 3, int(self.game_state)),
            (11, 1, self.turn),
            (12, 1, int(self.doubled)),
            (13, 2, self.resigned),
            (15, 3, d1),
            (18, 3, d2),
            (21, 15, self.match_length),
            (36, 15, self.score[0]),
            (51, 15, self.score[1]),
            (66, 1, int(not self.jacoby)),
        )
        bits = 0
        for start, width, value in fields:
            bits |= (value & ((1 << width) - 1)) << start
        return base64.b64encode(bits.to_bytes(9, "little")).decode("ascii")

    @classmethod
    def decode(cls, text: str) -> MatchKey:
        key = _b64decode(text, MATCH_ID_LENGTH, 9, "match ID")
        bits = int.from_bytes(key, "little")

        def get(start: int, width: int) -> int:
            return bits >> start & ((1 << width) - 1)

        if bits >> 67:
            raise InvalidIdError(f"match ID {text!r} has bits set beyond bit 66")
        owner = get(4, 2)
        if owner == 2:
            raise InvalidIdError(f"match ID {text!r} has cube owner 2")
        state = get(8, 3)
        if state > GameState.DROPPED:
            raise InvalidIdError(f"match ID {text!r} has game state {state}")
        d1, d2 = get(15, 3), get(18, 3)
        if d1 > 6 or d2 > 6 or (d1 == 0) != (d2 == 0):
            raise InvalidIdError(f"match ID {text!r} has dice {d1}{d2}")
        try:
            return cls(
                cube=1 << get(0, 4),
                cube_owner=-1 if owner == 3 else owner,
                move=get(6, 1),
                crawford=bool(get(7, 1)),
                game_state=GameState(state),
                turn=get(11, 1),
                doubled=bool(get(12, 1)),
                resigned=get(13, 2),
                dice=(d1, d2),
                match_length=get(21, 15),
                score=(get(36, 15), get(51, 15)),
                jacoby=not get(66, 1),
            )
        except InvalidIdError as exc:
            raise InvalidIdError(f"match ID {text!r}: {exc}") from None
