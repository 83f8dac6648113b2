"""FIBS (CLIP) client codec, sans-I/O: server bytes to typed events, commands to bytes."""

from protocols.fibs.board import BoardParseError, FibsBoard, Side, format_board, parse_board
from protocols.fibs.client import FibsClientProtocol, FibsCommandError
from protocols.fibs.lines import parse_line, split_glued

__all__ = [
    "BoardParseError",
    "FibsBoard",
    "FibsClientProtocol",
    "FibsCommandError",
    "Side",
    "format_board",
    "parse_board",
    "parse_line",
    "split_glued",
]
