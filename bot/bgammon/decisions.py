"""The bot's decisions on a bgammon board that need no connection: what the board asks of the bot, the answer to
a double as bgammon scores a drop, and the safe step the server lists when the engine has no play."""

from __future__ import annotations

from engine import cube as cubes
from engine.match import MatchState
from engine.player import Action, Player, cube_info
from protocols.bgammon.board import BoardState

__all__ = ["answer", "bgammon_take", "server_step", "situation"]


def situation(b: BoardState) -> str | None:
    """What the board asks of us: opening, answer, cube, confirm, move, reset, or None (nothing)."""
    if b.spectating or b.winner or not b.opponent_present or b.forced:
        return None
    if b.turn == 0:
        return "opening" if b.my_opening_die == 0 else None
    if b.double_offered:
        return "answer" if b.turn == 2 else None
    if b.turn != 1:
        return None
    if not b.rolled:
        return "cube"
    if not b.available:
        return "confirm"
    return "reset" if b.moves else "move"


def bgammon_take(player: Player, state: MatchState, level: int) -> bool:
    """Take the double waiting in ``state`` (we are ``state.turn``) when dropping would cost ``level`` times
    the cube, as bgammon charges it: take when the doubler's equity after the take is below that."""
    ci = cube_info(state)
    evaluation = player.evaluation(state)
    x = cubes.cube_efficiency(state.position)
    decision = cubes.cube_decision(evaluation.probs, ci, x, player.analyser.met)
    if ci.is_money:
        drop_value = float(level)
    else:
        a, b = ci.away[state.on_roll], ci.away[1 - state.on_roll]
        met = player.analyser.met
        drop_value = met.mwc2eq(met.mwc_after(a, b, level * state.cube), a, b, state.cube)
    return decision.double_take < drop_value


def answer(player: Player, state: MatchState, level: int) -> bool:
    """Take (True) or drop the double in ``state``: the engine's answer, except that a drop bgammon would charge
    at ``level`` > 1 (a gammon or backgammon) is taken when that costs less (``bgammon_take``)."""
    action = player.answer_double(state)
    if action != Action.DROP:
        return True
    return level > 1 and bgammon_take(player, state, level)


def server_step(b: BoardState) -> str:
    """The first step the server lists as available: always part of a legal play."""
    src, dst = b.available[0]
    return f"move {'bar' if src == 26 else src}/{'off' if dst == 0 else dst}"
