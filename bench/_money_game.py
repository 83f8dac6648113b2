"""One money game between our player and gnubg's external engine, on a MatchState, with or without the cube.

Both sides see the same rules: a money session, Jacoby off (gammons count from the first roll, as in a cubeless
duel) and no beavers. The game's dice come from a fixed list (the opening roll first), so that a pair of games
with the seats swapped plays the same dice: duplicate dice.

Our side is an ``Ours`` bundle: the daemon's own ``Player`` (moves ranked cubefully for the match's cube state,
its own double/take decisions), a diagnostic player that ranks moves by cubeless money equity, or a second gnubg
(gnubg's levels against each other, as a reference measured in the same bench). gnubg answers
FIBS ``board:`` lines on its ``external`` socket: its move, ``roll``/``double`` before its roll, and
``take``/``drop``/``beaver`` when we double.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import Play
from engine.notation import parse_move
from engine.player import Action, Player
from protocols.fibs.board import Side, format_board

MONEY_RULES = Rules(crawford=False, jacoby=False, beavers=False)
MAX_STEPS = 5000


class Engine(Protocol):
    def ask(self, line: str) -> str: ...


class GameError(RuntimeError):
    """gnubg answered something that is not a decision for this state, or a game did not end."""


@dataclass
class Ours:
    """Our side's decisions on a state: ``move`` always; ``double`` and ``take`` only in games with the cube."""

    move: Callable[[MatchState], Play]
    double: Callable[[MatchState], bool]
    take: Callable[[MatchState], bool]


def player_side(player: Player) -> Ours:
    """The daemon's path: Player.choose_move / wants_to_double / answer_double, cube state from the match."""
    return Ours(
        move=lambda s: player.choose_move(s).play,
        double=player.wants_to_double,
        take=lambda s: player.answer_double(s) != Action.DROP,
    )


def gnubg_side(engine: Engine) -> Ours:
    """A second gnubg engine in our seat (to measure gnubg's levels against each other in the same bench)."""

    def move(state: MatchState) -> Play:
        return parse_move(engine.ask(gnubg_board(state, state.turn)), state.position, state.dice)

    def double(state: MatchState) -> bool:
        return engine.ask(gnubg_board(state, state.turn)).lower() == "double"

    def take(state: MatchState) -> bool:
        return engine.ask(gnubg_board(state, state.turn)).lower() != "drop"

    return Ours(move, double, take)


def gnubg_board(state: MatchState, seat: int) -> str:
    """The board line for gnubg (seat ``seat``) to act on ``state``."""
    pos = state.position if state.on_roll == seat else state.position.swap()
    owner = None if state.cube_owner < 0 else (Side.PLAYER if state.cube_owner == seat else Side.OPPONENT)
    # gnubg's external engine reads the turn field of a pending double as the doubler's and answers for the
    # other side (../shared/tools/gnubg/README.md 2b); format_board writes FIBS's convention (the turn field
    # names the side that must answer), so the board gnubg answers correctly for our double is the one that
    # format_board would write for gnubg's own. Checked by hand: "drop" when we are sure to win, "beaver" when
    # it is (bench tests pin it).
    on_roll = Side.PLAYER if state.on_roll == seat or state.doubled else Side.OPPONENT
    line = format_board(
        pos,
        opponent="ours",
        player="gnubg",
        match_length=0,
        on_roll=on_roll,
        dice=state.dice if state.dice[0] else None,
        cube=state.cube,
        cube_owner=owner,
        double_pending=state.doubled,
    )
    return line + " jacobyrule off beavers off"


def _cube_record(state: MatchState, mine: bool, kind: str, yes: bool) -> dict[str, object]:
    return {
        "gnubgid": state.gnubg_id,
        "who": "ours" if mine else "gnubg",
        "kind": kind,
        "yes": yes,
        "cube": state.cube,
    }


def play_game(
    rolls: list[tuple[int, int]],
    our_seat: int,
    ours: Ours,
    gnubg: Engine,
    timing: dict[str, float],
    cube: bool,
    cube_log: list[dict[str, object]] | None = None,
) -> int:
    """Points won by seat 0 (negative when seat 1 wins), cube included.

    ``cube_log`` collects every cube decision: who made it (``ours``/``gnubg``), ``double`` (to double or not,
    before the roll) or ``take`` (to take or pass), what was decided, the cube, and the gnubg ID of the state
    before the double, the doubler on roll (what bench/cube_errors.py has gnubg evaluate)."""
    d1, d2 = rolls[0]
    state = MatchState.new_session(MONEY_RULES).new_game((max(d1, d2), min(d1, d2)))  # seat 0 opens
    k = 1
    gnubg_seat = 1 - our_seat
    for _ in range(MAX_STEPS):
        if state.game_state != GameState.PLAYING:
            result = state.last_result
            assert result is not None
            return result.points if result.winner == 0 else -result.points
        mine = state.turn == our_seat
        t0 = time.perf_counter()
        if state.doubled:
            if mine:
                takes = ours.take(state)
            else:
                reply = gnubg.ask(gnubg_board(state, gnubg_seat)).lower()
                if reply not in ("take", "drop", "beaver"):
                    raise GameError(f"gnubg answered {reply!r} to a double")
                takes = reply != "drop"
            if cube_log is not None:
                before = state.replace(doubled=False, turn=state.on_roll)  # the cube is doubled on the take
                cube_log.append(_cube_record(before, mine, "take", takes))
            state = state.take() if takes else state.drop()
            who = "our_cube" if mine else "gnubg_cube"
        elif not state.dice[0]:
            doubles = False
            if cube and state.may_double(state.on_roll):
                if mine:
                    doubles = ours.double(state)
                else:
                    reply = gnubg.ask(gnubg_board(state, gnubg_seat)).lower()
                    if reply not in ("roll", "double"):
                        raise GameError(f"gnubg answered {reply!r} before its roll")
                    doubles = reply == "double"
            asked = cube and state.may_double(state.on_roll)
            if asked and cube_log is not None:
                cube_log.append(_cube_record(state, mine, "double", doubles))
            state = state.double() if doubles else state.roll(rolls[k])
            k += 0 if doubles else 1
            if not asked:
                continue  # a roll without a cube decision: nothing to time
            who = "our_cube" if mine else "gnubg_cube"
        else:
            plays = state.legal_plays()
            if len(plays) == 1:
                state = state.move(plays[0].move)
                continue
            if mine:
                play = ours.move(state)
            else:
                play = parse_move(gnubg.ask(gnubg_board(state, gnubg_seat)), state.position, state.dice)
            state = state.move(play.move)
            who = "our" if mine else "gnubg"
        timing[f"{who}_moves"] = timing.get(f"{who}_moves", 0) + 1
        timing[f"{who}_seconds"] = timing.get(f"{who}_seconds", 0.0) + time.perf_counter() - t0
    raise GameError("the game did not end")
