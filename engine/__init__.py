"""gammond's engine: pure backgammon rules, IDs, evaluation and search. No I/O beyond loading its data files."""

from engine.errors import (
    EngineError,
    IllegalActionError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidIdError,
    InvalidPositionError,
)
from engine.moves import Move, Play, apply_move, find_play, legal_plays
from engine.position import Position, PositionClass

__all__ = [
    "EngineError",
    "IllegalActionError",
    "IllegalMoveError",
    "InvalidDiceError",
    "InvalidIdError",
    "InvalidPositionError",
    "Move",
    "Play",
    "Position",
    "PositionClass",
    "apply_move",
    "find_play",
    "legal_plays",
]
