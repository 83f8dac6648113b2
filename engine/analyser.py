"""The analyser: evaluations, hints and cube analysis at a chosen depth, for a position and its cube state.

It joins the evaluator (nets, bearoff databases, BRAS), the n-ply search and the cube theory. Probabilities
come from the cubeless n-ply search; cubeful equities apply gnubg's 0-ply cube model (Janowski with the
position's cube efficiency, in money or through the match equity table) to them. Inside the search tree moves
are chosen by cubeless equity (money equity, or cubeless match equity in a match).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine import cube as cubes
from engine.evaluator import (
    MODELS_DIR,
    CompositeEvaluator,
    Evaluator,
    ModelError,
    NetEvaluator,
    invert,
    money_equity,
)
from engine.met import MatchEquityTable
from engine.position import Position
from engine.search import EquityFn, RankedMove, Search


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What ``gammond eval`` shows: the player on roll's chances and equities before the roll."""

    probs: np.ndarray
    plies: int
    cubeless: float  # normalised cubeless equity (money equity, or cubeless match equity as NEMG)
    cubeful: float  # cubeful equity of not doubling
    decision: cubes.CubeDecision | None  # None where the player on roll cannot double

    def __repr__(self) -> str:
        p = ", ".join(f"{v:.4f}" for v in self.probs)
        return f"Evaluation(probs=[{p}], plies={self.plies}, cubeless={self.cubeless:+.4f}, cubeful={self.cubeful:+.4f})"


class Analyser:
    def __init__(
        self,
        evaluator: Evaluator,
        met: MatchEquityTable | None = None,
        exact: Callable[[Position], bool] | None = None,
        name: str = "",
    ) -> None:
        self.evaluator = evaluator
        self.met = met or MatchEquityTable.load()
        self.search = Search(evaluator, exact)
        self.name = name

    @classmethod
    def default(cls, models_dir: Path | None = None, threads: int = 1, bearoff: bool = True) -> Analyser:
        """The shipped nets with the exact bearoff databases; BRAS alone if no model can be loaded."""
        from engine import bras

        exact = None
        bearoff_eval = applies = None
        if bearoff:
            from engine.bearoff import BearoffDatabase

            db = BearoffDatabase.load()
            bearoff_eval, applies = db, db.applies

            def exact(pos: Position) -> bool:
                # Finished games and two-sided bearoffs are exact: no need to search below them.
                return pos.is_over() or db.is_two_sided(pos)

        try:
            nets: NetEvaluator | None = NetEvaluator(models_dir or MODELS_DIR, threads)
            name = nets.name if nets else "bras"
        except ModelError:
            if models_dir is not None:
                raise
            nets, name = None, "bras"
        evaluator = CompositeEvaluator(nets, bearoff_eval, applies, fallback=bras.BrasEvaluator())
        return cls(evaluator, exact=exact, name=name)

    # -- equities ----------------------------------------------------------------------------------------

    def cubeless_fn(self, ci: cubes.CubeInfo) -> EquityFn:
        """Cubeless equity of the player ``ci.on_roll`` for the tree's move choices, vectorised."""
        if ci.is_money:
            return money_equity
        met = self.met
        a, b = ci.away

        def match_eq(probs: np.ndarray) -> np.ndarray:
            rows = np.atleast_2d(probs)
            return np.array([met.mwc2eq(met.cubeless_mwc(r, a, b, ci.cube), a, b, ci.cube) for r in rows])

        return match_eq

    def cubeful_after(self, ci: cubes.CubeInfo) -> Callable[[Sequence[Position], np.ndarray], np.ndarray]:
        """The mover's cubeful equity of candidate positions after a move (the opponent then on roll)."""
        opp = ci.swapped()

        def root(after: Sequence[Position], mover_probs: np.ndarray) -> np.ndarray:
            opp_probs = invert(mover_probs)
            return np.array(
                [
                    -cubes.cubeful_equity(p, opp, cubes.cube_efficiency(pos), self.met)
                    for pos, p in zip(after, opp_probs, strict=True)
                ]
            )

        return root

    # -- analysis ----------------------------------------------------------------------------------------

    def probabilities(
        self, positions: Sequence[Position], plies: int, ci: cubes.CubeInfo | None = None
    ) -> np.ndarray:
        equity = self.cubeless_fn(ci) if ci is not None else money_equity
        return self.search.evaluate(list(positions), plies, equity)

    def evaluate(
        self,
        position: Position,
        ci: cubes.CubeInfo,
        plies: int = 0,
        perturb: Callable[[Sequence[Position], np.ndarray], np.ndarray] | None = None,
    ) -> Evaluation:
        probs = self.probabilities([position], plies, ci)
        if perturb is not None:
            probs = perturb([position], probs)
        row = probs[0]
        x = cubes.cube_efficiency(position)
        cubeless = float(cubes.cubeless_equity(row, ci, self.met))
        cubeful = cubes.cubeful_equity(row, ci, x, self.met)
        decision = cubes.cube_decision(row, ci, x, self.met) if ci.cube_available else None
        return Evaluation(row, plies, cubeless, cubeful, decision)

    def hint(
        self,
        position: Position,
        dice: tuple[int, int],
        ci: cubes.CubeInfo,
        plies: int = 0,
        move_filter: str = "normal",
        perturb: Callable[[Sequence[Position], np.ndarray], np.ndarray] | None = None,
    ) -> list[RankedMove]:
        """Legal moves best first, ranked by cubeful equity for the cube state ``ci`` (the mover on roll)."""
        return self.search.rank(
            position,
            dice,
            plies,
            move_filter,
            equity=self.cubeless_fn(ci),
            root_equity=self.cubeful_after(ci),
            perturb=perturb,
        )
