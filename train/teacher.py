"""The teacher: bgsage (MPL-2.0, weights included) evaluates pre-roll positions to label our training data.

bgsage boards are 26 integers from the view of the player on roll: [1..24] own points positive and opposing
chequers negative, [25] own bar, [0] opponent's bar (a positive count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the labelling stages run where only numpy and bgsage are installed
    from engine.position import Position


def to_bgsage(board: np.ndarray) -> list[int]:
    """One (2, 25) board (side 0 on roll) as a bgsage board."""
    me, opp = board[0], board[1]
    out = [0] * 26
    for p in range(1, 25):
        out[p] = int(me[p - 1]) - int(opp[24 - p])
    out[25] = int(me[24])
    out[0] = int(opp[24])
    return out


_STRATEGIES: dict[str, object] = {}


def _strategy(level: str) -> object:
    """bgsage builds a strategy (loading its weights) per batch call, ~30 ms; build each level's once."""
    if level not in _STRATEGIES:
        import bgbot_cpp
        from bgsage.weights import WeightConfigPair, default_weights

        weights = default_weights()
        if not isinstance(weights, WeightConfigPair):
            raise RuntimeError("unexpected bgsage weight configuration")
        paths, hiddens = weights.weight_args
        kind = getattr(weights, "strategy_type", "pair")
        if level == "1ply":
            _STRATEGIES[level] = bgbot_cpp.create_strategy(kind, paths, hiddens)
        else:
            _STRATEGIES[level] = bgbot_cpp.create_multipy(
                kind,
                paths,
                hiddens,
                n_plies=int(level[0]),
                filter_max_moves=5,
                filter_threshold=0.08,
                parallel_evaluate=False,
                parallel_threads=0,
            )
    return _STRATEGIES[level]


def evaluate(boards: np.ndarray, level: str = "1ply", threads: int = 1) -> np.ndarray:
    """Cubeless gnubg-style probabilities (n, 5) of pre-roll positions, for the player on roll."""
    import bgbot_cpp

    if len(boards) == 0:
        return np.zeros((0, 5))
    centred = bgbot_cpp.CubeOwner.CENTERED
    reqs = [(to_bgsage(b), 1, centred) for b in boards]
    res = bgbot_cpp.batch_evaluate_positions(reqs, _strategy(level), threads, jacoby=False, beaver=False)
    return np.array([list(r["probs"]) for r in res], dtype=np.float64)


def evaluate_positions(positions: Sequence[Position], level: str = "1ply", threads: int = 1) -> np.ndarray:
    from engine.encoding import positions_to_array

    return evaluate(positions_to_array(positions), level, threads)
