"""gammond's engine: pure backgammon rules, IDs, evaluation and search. No I/O beyond loading its data files.

The rules layer is importable on its own (``from engine import Position, legal_plays, MatchState``); the
evaluation layer (``engine.analyser``, ``engine.player``) loads numpy and onnxruntime and is imported explicitly.
"""

from engine.errors import (
    EngineError,
    IllegalActionError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidIdError,
    InvalidPositionError,
)
from engine.ids import GameState, MatchKey
from engine.match import GameResult, MatchState, ResignLevel, Rules
from engine.moves import Move, Play, apply_move, find_play, legal_plays
from engine.notation import format_fibs, format_gnubg, format_mat, parse_fibs, parse_gnubg, parse_move
from engine.position import Position, PositionClass

__all__ = [
    "EngineError",
    "GameResult",
    "GameState",
    "IllegalActionError",
    "IllegalMoveError",
    "InvalidDiceError",
    "InvalidIdError",
    "InvalidPositionError",
    "MatchKey",
    "MatchState",
    "Move",
    "Play",
    "Position",
    "PositionClass",
    "ResignLevel",
    "Rules",
    "apply_move",
    "find_play",
    "format_fibs",
    "format_gnubg",
    "format_mat",
    "legal_plays",
    "parse_fibs",
    "parse_gnubg",
    "parse_move",
]
