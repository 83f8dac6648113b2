"""n-ply search the way gnubg does it, batched so that each level of the tree is one evaluator call.

An n-ply evaluation of a pre-roll position averages, over the 21 rolls, the (n-1)-ply evaluation of the position
after the roller's best move, the best move being chosen at 0-ply (gnubg's EvaluatePositionFull). Exact
positions (finished games, two-sided bearoffs when the database is there) are not searched further.
At the root, candidate moves go through gnubg's move filters: every move is scored at 0-ply, the filter keeps the
best few, and only those are searched deeper (gnubg's "normal" filter keeps up to 8 moves within 0.16 of the best).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.evaluator import Evaluator, invert, money_equity
from engine.moves import Play, legal_plays
from engine.position import Position

# The 21 distinct rolls with their weights out of 36.
ROLLS: tuple[tuple[tuple[int, int], int], ...] = tuple(
    ((a, b), 1 if a == b else 2) for a in range(1, 7) for b in range(a, 0, -1)
)
EquityFn = Callable[[np.ndarray], np.ndarray]
# Ranks root candidates: (positions after the move, opponent on roll; the mover's probabilities) -> mover's equity.
# Cube-aware callers pass cubeful equities here; the inner nodes of the tree use a cubeless EquityFn.
RootEquityFn = Callable[[Sequence[Position], np.ndarray], np.ndarray]


def cubeless_root(equity: EquityFn = money_equity) -> RootEquityFn:
    return lambda _positions, probs: equity(probs)


@dataclass(frozen=True, slots=True)
class MoveFilter:
    """gnubg's move filter for one ply: always keep ``accept`` moves (at least the best), then up to ``extra``
    more within ``threshold`` of the best; ``accept = -1`` skips that ply (the survivors go straight on)."""

    accept: int
    extra: int = 0
    threshold: float = 0.0


SKIP = MoveFilter(-1)

# gnubg's presets (its "Normal" and "Large", plus "Tiny" for quick levels): FILTERS[name][plies] is the list of
# filters applied after 0-ply, 1-ply ... (plies - 1)-ply at the root of an n-ply move search.
FILTERS: dict[str, dict[int, tuple[MoveFilter, ...]]] = {
    "tiny": {
        1: (MoveFilter(0, 5, 0.08),),
        2: (MoveFilter(0, 5, 0.08), SKIP),
        3: (MoveFilter(0, 5, 0.08), SKIP, MoveFilter(0, 1, 0.02)),
    },
    "normal": {
        1: (MoveFilter(0, 8, 0.16),),
        2: (MoveFilter(0, 8, 0.16), SKIP),
        3: (MoveFilter(0, 8, 0.16), SKIP, MoveFilter(0, 2, 0.04)),
    },
    "large": {
        1: (MoveFilter(0, 16, 0.32),),
        2: (MoveFilter(0, 16, 0.32), SKIP),
        3: (MoveFilter(0, 16, 0.32), SKIP, MoveFilter(0, 4, 0.08)),
    },
}


def apply_filter(equities: np.ndarray, flt: MoveFilter) -> np.ndarray:
    """Indices (into ``equities``, best first) of the moves the filter keeps."""
    order = np.argsort(-equities, kind="stable")
    if flt.accept < 0:
        return order
    keep = max(flt.accept, 1)
    best = equities[order[0]]
    # As gnubg: up to accept + extra moves in all, the ones past ``accept`` only within the threshold.
    extra = [i for i in order[keep : flt.accept + flt.extra] if equities[i] >= best - flt.threshold]
    return np.concatenate([order[:keep], np.array(extra, dtype=order.dtype)])


@dataclass(frozen=True, slots=True)
class RankedMove:
    play: Play
    probs: np.ndarray  # the mover's 5 probabilities after the move (cubeless)
    equity: float  # the mover's equity by the search's equity function
    plies: int  # depth this move was evaluated at

    def __repr__(self) -> str:
        return f"RankedMove({self.play.move!s}, equity={self.equity:+.4f}, plies={self.plies})"


class Search:
    """n-ply evaluation and move ranking over an evaluator; ``exact`` says which positions need no search."""

    def __init__(self, evaluator: Evaluator, exact: Callable[[Position], bool] | None = None) -> None:
        self.evaluator = evaluator
        self.exact = exact or (lambda pos: pos.is_over())

    def evaluate(
        self, positions: Sequence[Position], plies: int, equity: EquityFn = money_equity
    ) -> np.ndarray:
        """Cubeless probabilities (n, 5) of pre-roll positions at ``plies``, for the player on roll."""
        if plies <= 0 or not positions:
            return self.evaluator.evaluate(positions)
        out = np.zeros((len(positions), 5))
        deep = [i for i, p in enumerate(positions) if not self.exact(p)]
        flat = [i for i, p in enumerate(positions) if self.exact(p)]
        if flat:
            out[flat] = self.evaluator.evaluate([positions[i] for i in flat])
        if not deep:
            return out
        # One 0-ply call for every candidate of every roll of every position.
        candidates: list[Position] = []
        spans: list[tuple[int, int, int, int]] = []  # (position row, weight, start, end) per roll
        for i in deep:
            for dice, weight in ROLLS:
                plays = legal_plays(positions[i], dice)
                start = len(candidates)
                candidates.extend(p.position.swap() for p in plays)
                spans.append((i, weight, start, len(candidates)))
        mover_eq = equity(invert(self.evaluator.evaluate(candidates)))  # candidates are seen by the opponent
        chosen = [candidates[s + int(np.argmax(mover_eq[s:e]))] for _, _, s, e in spans]
        child = self.evaluate(chosen, plies - 1, equity)
        mover = invert(child)
        for (i, weight, _, _), row in zip(spans, mover, strict=True):
            out[i] += weight / 36.0 * row
        return out

    def rank(
        self,
        position: Position,
        dice: tuple[int, int],
        plies: int = 0,
        move_filter: str | Sequence[MoveFilter] = "normal",
        equity: EquityFn = money_equity,
        root_equity: RootEquityFn | None = None,
        perturb: Callable[[Sequence[Position], np.ndarray], np.ndarray] | None = None,
    ) -> list[RankedMove]:
        """Legal plays best first. ``equity`` chooses moves inside the tree, ``root_equity`` (default: the same)
        ranks the candidates; ``perturb`` (noise) distorts the mover's probabilities of each candidate."""
        plays = legal_plays(position, dice)
        after = [p.position.swap() for p in plays]  # the opponent is on roll after our move
        probs = invert(self.evaluator.evaluate(after))
        if perturb is not None:
            probs = perturb(after, probs)
        rank_eq = root_equity or cubeless_root(equity)
        eq = rank_eq(after, probs)
        depth = np.zeros(len(plays), dtype=int)
        alive = np.argsort(-eq, kind="stable")
        if plies > 0 and len(plays) > 1:
            filters = FILTERS[move_filter][plies] if isinstance(move_filter, str) else tuple(move_filter)
            if len(filters) != plies:
                raise ValueError(f"a {plies}-ply search needs {plies} move filters, not {len(filters)}")
            # filters[k] prunes the moves scored at k plies; a skipped ply is not scored at all.
            for k, flt in enumerate(filters):
                if flt.accept < 0:
                    continue
                alive = alive[apply_filter(eq[alive], flt)]
                nxt = k + 1
                if nxt == plies or filters[nxt].accept >= 0:
                    probs[alive] = self._deepen(after, alive, nxt, equity, perturb)
                    eq[alive] = rank_eq([after[i] for i in alive], probs[alive])
                    depth[alive] = nxt
            if plies not in set(depth[alive].tolist()):
                probs[alive] = self._deepen(after, alive, plies, equity, perturb)
                eq[alive] = rank_eq([after[i] for i in alive], probs[alive])
                depth[alive] = plies
        # Deeper-searched moves rank above shallower ones, as in gnubg's hint list.
        order = sorted(range(len(plays)), key=lambda i: (-depth[i], -eq[i]))
        return [RankedMove(plays[i], probs[i], float(eq[i]), int(depth[i])) for i in order]

    def _deepen(
        self,
        after: list[Position],
        rows: np.ndarray,
        plies: int,
        equity: EquityFn,
        perturb: Callable[[Sequence[Position], np.ndarray], np.ndarray] | None,
    ) -> np.ndarray:
        chosen = [after[i] for i in rows]
        probs = invert(self.evaluate(chosen, plies, equity))
        return perturb(chosen, probs) if perturb is not None else probs
