"""A player at a level: the decisions the bot makes in a match, each from a MatchState.

Every decision is for the player the state says must act (``state.turn``). Chequer play and cube handling use
the level's own depth and noise; noise distorts the candidates' probabilities the way gnubg's does, so that
weaker levels err like gnubg's weaker levels.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from engine import cube as cubes
from engine.analyser import Analyser
from engine.encoding import positions_to_array
from engine.errors import IllegalActionError
from engine.ids import GameState
from engine.levels import LEVELS, Level
from engine.match import MatchState
from engine.moves import legal_plays
from engine.record import ActionKind
from engine.search import RankedMove

# A decision is one of the actions a match record holds (roll, move, double, take, drop, beaver, resign,
# accept, reject): the same enum serves both, so a decision goes into a record as it is.
Action = ActionKind


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    move: RankedMove | None = None
    level: int = 0  # resignation level offered
    equity: float | None = None
    note: str = ""

    def __repr__(self) -> str:
        extra = f", move={self.move.play.move!s}" if self.move else ""
        extra += f", level={self.level}" if self.level else ""
        return f"Decision({self.action.value}{extra})"


def cube_info(state: MatchState) -> cubes.CubeInfo:
    """The cube state with the player on roll as gnubg's fMove."""
    return cubes.CubeInfo(
        state.cube,
        state.cube_owner,
        state.on_roll,
        state.match_length,
        state.score if state.match_length else (0, 0),
        state.crawford,
        state.rules.jacoby and not state.match_length,
        state.rules.beavers and not state.match_length,
    )


class Player:
    def __init__(
        self,
        analyser: Analyser,
        level: Level | None = None,
        rng: random.Random | None = None,
        resign_tolerance: float = 1e-3,
    ) -> None:
        self.analyser = analyser
        self.level = level or LEVELS["expert"]
        self.rng = rng or random.Random()
        self.resign_tolerance = resign_tolerance
        self._chequer_noise = self.level.chequer_perturber(self.rng)
        self._cube_noise = self.level.cube_perturber(self.rng)

    def decide(self, state: MatchState) -> Decision:
        """The one decision due in ``state`` for the player ``state.turn``."""
        if state.game_state != GameState.PLAYING:
            raise IllegalActionError(f"no decision is due: game state {state.game_state.name}")
        if state.resigned:
            return Decision(
                Action.ACCEPT if self.accepts_resignation(state) else Action.REJECT, level=state.resigned
            )
        if state.doubled:
            return Decision(self.answer_double(state))
        if state.dice == (0, 0):
            offer = self.resignation(state)
            if offer:
                return Decision(Action.RESIGN, level=offer)
            return Decision(Action.DOUBLE if self.wants_to_double(state) else Action.ROLL)
        return Decision(Action.MOVE, move=self.choose_move(state))

    def move_candidates(self, state: MatchState) -> np.ndarray | None:
        """The boards ``decide`` evaluates first for ``state`` (every legal play, seen by the opponent), or None
        when ``state`` asks no move decision with a choice: what an evaluation queue prefetches
        (``Search.prefetch``) for several matches at once."""
        if state.game_state != GameState.PLAYING or state.resigned or state.doubled or state.dice == (0, 0):
            return None
        plays = legal_plays(state.position, state.dice)
        if len(plays) < 2:
            return None
        return positions_to_array([p.position.swap() for p in plays], np.uint8)  # as Search.rank builds them

    def choose_move(self, state: MatchState) -> RankedMove:
        ranked = self.analyser.hint(
            state.position,
            state.dice,
            cube_info(state),
            self.level.plies,
            self.level.move_filter,
            perturb=self._chequer_noise,
            lone_stops=True,  # the choice is all a player needs: gnubg's player stops at a lone survivor too
        )
        return ranked[0]

    def evaluation(self, state: MatchState, plies: int | None = None):  # type: ignore[no-untyped-def]
        depth = self.level.cube_depth if plies is None else plies
        return self.analyser.evaluate(state.position, cube_info(state), depth, perturb=self._cube_noise)

    def wants_to_double(self, state: MatchState) -> bool:
        if not state.may_double(state.on_roll):
            return False
        decision = self.evaluation(state).decision
        return bool(decision and decision.should_double)

    def answer_double(self, state: MatchState) -> Action:
        """Take, drop or beaver a double by the player on roll (we are ``state.turn``)."""
        ev = self.evaluation(state)
        x = cubes.cube_efficiency(state.position)
        answer = cubes.take_decision(ev.probs, cube_info(state), x, self.analyser.met)
        if answer == cubes.TakerAction.BEAVER and state.rules.beavers and not state.match_length:
            return Action.BEAVER
        return Action.DROP if answer == cubes.TakerAction.PASS else Action.TAKE

    def resignation(self, state: MatchState) -> int:
        """The level to offer before rolling, or 0 to play on."""
        ev = self.analyser.evaluate(state.position, cube_info(state), 0)
        x = cubes.cube_efficiency(state.position)
        level = cubes.resign_decision(
            ev.probs, cube_info(state), x, tolerance=self.resign_tolerance, met=self.analyser.met
        )
        if not level or int(level) <= state.resignation_declined:
            return 0  # a declined offer may not be repeated (or lowered) before the next roll
        return int(level)

    def accepts_resignation(self, state: MatchState) -> bool:
        """Accept the resignation offered to us (``state.turn``) when it gives at least our equity of playing on."""
        ci = cube_info(state)
        ev = self.analyser.evaluate(state.position, ci, self.level.cube_depth)
        x = cubes.cube_efficiency(state.position)
        return cubes.accept_resignation(
            state.resigned, ev.probs, ci, x, resigner=1 - state.turn, met=self.analyser.met
        )
