"""FIBS ratings: the formula FIBS publishes in its ``rating calculation:`` block (SPEC "End of a Match").

For a match of length N between ratings differing by D, the underdog wins with Pu = 1/(10^(D·√N/2000)+1).
P is 1 − Pu when the underdog wins and Pu when the favourite does. Each player's change is ±4·K·√N·P with
K = max(1, 5 − experience/100), so new players (under 400 experience) move faster. Experience grows by N.
Unlimited matches are not rated.
"""

from __future__ import annotations

import math

from protocols.fibs.server import RatingChange

INITIAL_RATING = 1500.0


def experience_factor(experience: int) -> float:
    """K = max(1, 5 - experience/100)."""
    return max(1.0, 5.0 - experience / 100.0)


def underdog_probability(difference: float, length: int) -> float:
    """Pu = 1/(10^(D·√N/2000)+1): the chance that the lower-rated player wins an N-point match."""
    return 1.0 / (10.0 ** (abs(difference) * math.sqrt(length) / 2000.0) + 1.0)


def rating_change(
    winner: str,
    loser: str,
    winner_rating: float,
    loser_rating: float,
    winner_experience: int,
    loser_experience: int,
    length: int,
) -> RatingChange:
    """The changes for both players after ``winner`` beat ``loser`` in a ``length``-point match."""
    if length < 1:
        raise ValueError(f"only matches of 1 point or more are rated, not {length}")
    difference = abs(winner_rating - loser_rating)
    pu = underdog_probability(difference, length)
    underdog_won = winner_rating < loser_rating
    p = 1.0 - pu if underdog_won else pu
    root = math.sqrt(length)
    wk, lk = experience_factor(winner_experience), experience_factor(loser_experience)
    return RatingChange(
        winner=winner,
        loser=loser,
        difference=difference,
        length=length,
        winner_experience=winner_experience,
        loser_experience=loser_experience,
        underdog_probability=pu,
        probability=p,
        winner_k=wk,
        winner_change=4.0 * wk * root * p,
        loser_k=lk,
        loser_change=-4.0 * lk * root * p,
    )
