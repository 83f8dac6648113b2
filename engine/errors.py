"""Typed errors of the engine. Every one is a ValueError: bad input is never an IndexError or a silent fix."""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises on bad input."""


class InvalidPositionError(EngineError):
    """A board that cannot occur: too many chequers, a point held by both sides, a malformed array."""


class InvalidIdError(EngineError):
    """A malformed or impossible GNU Backgammon position/match ID or XGID."""


class InvalidDiceError(EngineError):
    """Dice outside 1..6, or the wrong number of them."""


class IllegalMoveError(EngineError):
    """A move that does not parse, or is not legal with the given dice in the given position."""


class IllegalActionError(EngineError):
    """A match action (roll, double, take, resign ...) that the rules do not allow in the current state."""
