"""The bot's decisions on a bgammon board that need no connection: what the board asks of the bot, the answer to
a double as bgammon scores a drop, and the next single step of the engine's play.

The server checks every step of one ``move`` command against the position before the command (game.go
``AddMoves``), so a play goes out one step per command, each after the server's board for the step before
(``next_step``). Each step uses one die, as the server counts them (``dice_left``), so the server never
expands a step its own way (it tries hits first), and the play made is exactly the engine's."""

from __future__ import annotations

from collections.abc import Sequence

from engine import cube as cubes
from engine.match import MatchState
from engine.moves import Move, single_step
from engine.player import Action, Player, cube_info
from engine.position import BAR, Position
from protocols.bgammon.board import BAR_PLAYER, HOME_PLAYER, BoardState

__all__ = ["answer", "bgammon_take", "dice_left", "next_step", "situation"]

Step = tuple[int, int]  # (from, to) in the mover's engine numbering: 25 the bar, 0 off


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


def _die_for(dice: Sequence[int], src: int, dst: int) -> int | None:
    """The die the server takes for the step ``src``/``dst`` (game.go ``DiceRolls``): the exact one; bearing
    off, else the first (in roll order) that is larger."""
    need = src if dst == 0 else src - dst
    if need in dice:
        return need
    if dst == 0:
        return next((d for d in dice if d > need), None)
    return None


def _without(dice: tuple[int, ...], die: int) -> tuple[int, ...]:
    i = dice.index(die)
    return dice[:i] + dice[i + 1 :]


def dice_left(b: BoardState) -> tuple[int, ...] | None:
    """The dice not yet used this turn, in the server's order, as ``DiceRolls`` counts the steps played
    (``b.moves``); None when a step fits no die left."""
    dice: tuple[int, ...] = (b.roll1, b.roll2) * (2 if b.roll1 == b.roll2 else 1)
    for src, dst in b.moves:
        own = 25 if src == BAR_PLAYER else src
        die = _die_for(dice, own, 0 if dst == HOME_PLAYER else dst)
        if die is None:
            return None
        dice = _without(dice, die)
    return dice


def _reaches(
    pos: Position, dice: tuple[int, ...], target: Position, memo: dict[tuple[Position, tuple[int, ...]], bool]
) -> bool:
    if pos == target:
        return True
    key = (pos, dice)
    if key not in memo:
        memo[key] = any(_reaches(p, rest, target, memo) for _, p, rest in _steps(pos, dice))
    return memo[key]


def _steps(pos: Position, dice: tuple[int, ...]) -> list[tuple[Step, Position, tuple[int, ...]]]:
    """Every single step with one of ``dice`` from ``pos``, each with the die the server would take for it."""
    out = []
    sources = [25] if pos.me[BAR] else [p for p in range(24, 0, -1) if pos.me[p - 1]]
    for src in sources:
        for die in sorted(set(dice), reverse=True):
            moved = single_step(pos, src, die)
            if moved is None:
                continue
            after, dst = moved
            if _die_for(dice, src, dst) != die:
                continue  # the server counts this bear-off against another die: that one's turn comes
            out.append(((src, dst), after, _without(dice, die)))
    return out


def next_step(b: BoardState, target: Position, move: Move) -> Step | None:
    """The next single step from the board ``b`` (our turn, steps maybe played) towards ``target``, the
    position after the engine's play ``move``: one the server lists as available and from which the dice left
    still reach ``target``, the engine's own next step where it is one. None when no step leads there (the
    board is not on the way to ``target``: take the steps back and start again) or ``target`` is reached."""
    pos, dice = b.position(1), dice_left(b)
    if dice is None or pos == target:
        return None
    available = {
        (25 if src == BAR_PLAYER else src, 0 if dst == HOME_PLAYER else dst) for src, dst in b.available
    }
    memo: dict[tuple[Position, tuple[int, ...]], bool] = {}
    fits = [
        step
        for step, after, rest in _steps(pos, dice)
        if step in available and _reaches(after, rest, target, memo)
    ]
    for step in move.steps:
        if step in fits:
            return step
    return fits[0] if fits else None
