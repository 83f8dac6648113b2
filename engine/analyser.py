"""The analyser: evaluations, hints and cube analysis at a chosen depth, for a position and its cube state.

It joins the evaluator (nets, bearoff databases, BRAS), the n-ply search and the cube theory. Cube decisions
and move rankings come from gnubg's n-ply cubeful recursion (``Search.cubeful``): Janowski's cubeful values at
the leaves (the exact ones in two-sided bearoffs, money play), averaged over the rolls, with each player's best
cube action at every node. The probabilities shown are the cubeless ones of the same tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine import cube as cubes
from engine import cubeful as cf
from engine.encoding import positions_to_array
from engine.evaluator import (
    MODELS_DIR,
    CompositeEvaluator,
    Evaluator,
    ModelError,
    NetEvaluator,
    money_equity,
)
from engine.met import MatchEquityTable
from engine.position import Position
from engine.search import EquityFn, RankedMove, Search

PRUNE_DIR = "prune"  # the pruning nets' sub-folder of a model folder


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


def pruning_nets(folder: Path, bearoff: object | None = None, threads: int = 1) -> CompositeEvaluator:
    """The pruning nets of ``folder`` (one with a manifest, as ``<models>/prune``), over the exact bearoff
    databases where ``bearoff`` (an ``engine.bearoff.BearoffDatabase``) is given."""
    return CompositeEvaluator(NetEvaluator(folder, threads), bearoff, getattr(bearoff, "applies", None))


class Analyser:
    def __init__(
        self,
        evaluator: Evaluator,
        met: MatchEquityTable | None = None,
        bearoff: object | None = None,
        name: str = "",
        pruner: Evaluator | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.met = met or MatchEquityTable.load()
        self.search = Search(evaluator, bearoff, self.met, pruner)
        self.name = name

    @classmethod
    def default(cls, models_dir: Path | None = None, threads: int = 1, bearoff: bool = True) -> Analyser:
        """The shipped nets with the exact bearoff databases; BRAS alone if no model can be loaded."""
        from engine import bras

        db = bearoff_eval = applies = None
        if bearoff:
            from engine.bearoff import BearoffDatabase

            db = BearoffDatabase.load()
            bearoff_eval, applies = db, db.applies
        folder = models_dir or MODELS_DIR
        try:
            nets: NetEvaluator | None = NetEvaluator(folder, threads)
            name = nets.name if nets else "bras"
        except ModelError:
            if models_dir is not None:
                raise
            nets, name = None, "bras"
        evaluator = CompositeEvaluator(nets, bearoff_eval, applies, fallback=bras.BrasEvaluator())
        pruner = None
        if nets is not None and (folder / PRUNE_DIR / "manifest.json").exists():
            # Pruning nets are an optional speed-up of deep searches: a folder without them still plays.
            pruner = pruning_nets(folder / PRUNE_DIR, db, threads)
        return cls(evaluator, bearoff=db, name=name, pruner=pruner)

    # -- equities ----------------------------------------------------------------------------------------

    def cubeless_fn(self, ci: cubes.CubeInfo) -> EquityFn:
        """Cubeless equity of the player ``ci.on_roll`` for the tree's move choices, vectorised."""
        if ci.is_money:
            return money_equity
        met = self.met

        def match_eq(probs: np.ndarray) -> np.ndarray:
            rows = np.atleast_2d(np.asarray(probs, dtype=np.float64))
            return cf.to_equity(cf.cubeless_mwc(rows, ci, met), ci, met)

        return match_eq

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
        """Probabilities, equities and the cube decision of the player on roll, by the n-ply cubeful search.

        ``perturb`` (cube noise) distorts the probabilities; at 0-ply the cube model reads the distorted ones,
        deeper the cubeless equity change shifts the no-double and double/take equities alike.
        """
        boards = positions_to_array([position], np.uint8)
        states = [ci, ci.doubled()] if ci.cube_available else [ci]
        probs, values = self.search.cubeful(boards, states, plies, ci, top=True)
        row = probs[0]
        shift = 0.0
        if perturb is not None:
            noisy = perturb([position], probs)
            if plies == 0:
                values = self.search.node_values(boards, noisy, states, top=True)
            else:
                shift = cubes.cubeless_equity(noisy[0], ci, self.met) - cubes.cubeless_equity(
                    row, ci, self.met
                )
            row = noisy[0]
        cubeful = float(cf.to_equity(values[0, 0], ci, self.met)) + shift
        decision = None
        if ci.cube_available:
            taken = values[0, 1]
            double_take = 2.0 * taken if ci.is_money else float(cf.to_equity(taken, ci, self.met))
            decision = cubes.decide(row, ci, cubeful, double_take + shift, 1.0)
        cubeless = float(cubes.cubeless_equity(row, ci, self.met))
        return Evaluation(row, plies, cubeless, cubeful, decision)

    def hint(
        self,
        position: Position,
        dice: tuple[int, int],
        ci: cubes.CubeInfo,
        plies: int = 0,
        move_filter: str = "normal",
        perturb: Callable[[Sequence[Position], np.ndarray], np.ndarray] | None = None,
        lone_stops: bool = False,
    ) -> list[RankedMove]:
        """Legal moves best first, ranked by cubeful equity for the cube state ``ci`` (the mover on roll), equal
        ones by cubeless equity at the same score. ``lone_stops``: see ``Search.rank`` (the choice only)."""
        return self.search.rank(
            position,
            dice,
            plies,
            move_filter,
            equity=self.cubeless_fn(ci),
            cube=ci,
            perturb=perturb,
            lone_stops=lone_stops,
        )
