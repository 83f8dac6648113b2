"""Bridging a gap in the bot's view of a FIBS match, pure: which missed steps lead from the state the tracker
has to the state a ``board:`` line shows (a reconnect or a restart can lose a roll and a move; the opponent's
missing dice are found by trying all 21 rolls)."""

from __future__ import annotations

from collections.abc import Iterator

from engine.errors import EngineError
from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import legal_plays
from engine.position import Position
from engine.record import Action, ActionKind, apply_action
from protocols.fibs.board import FibsBoard

# FIBS plays the Crawford rule (the bot turns the toggle on), no Jacoby rule and no beavers.
FIBS_RULES = Rules(crawford=True, jacoby=False, beavers=False)
_ROLLS = tuple((a, b) for a in range(1, 7) for b in range(a, 7))
_MAX_FRONTIER = 4000  # states kept per depth when bridging a gap
INITIAL = Position.initial()
Step = Action | tuple[int, int]  # an action, or the opening roll (die of player 0, die of player 1) of a game


def board_state(board: FibsBoard, names: tuple[str, str], crawford: bool | None = None) -> MatchState:
    """The MatchState a board shows, field 1 as player 0 (EngineError if the fields make no state)."""
    key = board.match_key(crawford=crawford, me=0)
    position = board.position_on_roll()
    return MatchState.from_gnubg_id(f"{position.position_id}:{key.encode()}", rules=FIBS_RULES, names=names)


def same_state(ours: MatchState, board: MatchState) -> bool:
    """Whether our state is the one a board shows, in what a board shows (not the Crawford flag, nor a
    pending resignation; the cube owner only when the board's may-double flags tell it)."""
    return (
        ours.game_state == GameState.PLAYING
        and ours.position == board.position
        and ours.score == board.score
        and ours.cube == board.cube
        and (board.cube == 1 or board.cube_owner == -1 or ours.cube_owner == board.cube_owner)
        and ours.on_roll == board.on_roll
        and sorted(ours.dice) == sorted(board.dice)
        and ours.doubled == board.doubled
    )


def opening_roll(state: MatchState) -> tuple[int, int]:
    """(die of player 0, die of player 1) of a game's first state: the higher die is the first mover's."""
    high, low = state.dice
    return (high, low) if state.on_roll == 0 else (low, high)


def _successors(
    state: MatchState, target: MatchState, others: tuple[int, ...]
) -> Iterator[tuple[Step, MatchState]]:
    """One missed step from ``state``: a game start, a cube answer, a roll, or a roll and its play by one of
    ``others`` (the players whose actions the bot may have missed). The bot's own actions are never missed,
    except what the server does for it: its rolls and its dances (a roll with no legal play passes at once)."""
    if state.game_state != GameState.PLAYING:
        if not state.match_over and target.dice[0] and target.position == INITIAL and target.cube == 1:
            roll = opening_roll(target)
            try:
                yield roll, state.new_game(roll)
            except EngineError:
                return
        return
    candidates: list[Action] = []
    p = state.turn
    if state.doubled:
        candidates += [Action(p, ActionKind.TAKE), Action(p, ActionKind.DROP)]
    elif state.resigned:
        candidates += [Action(p, ActionKind.ACCEPT), Action(p, ActionKind.REJECT)]
    elif state.dice[0]:
        candidates += _plays_towards(state, state.dice, target)
    else:
        if state.may_double(p):
            candidates.append(Action(p, ActionKind.DOUBLE))
        if target.on_roll == p and target.dice[0]:
            candidates.append(Action(p, ActionKind.ROLL, dice=target.dice))
        else:
            for dice in _ROLLS:
                candidates += _plays_towards(state, dice, target)
    for action in candidates:
        own = action.player not in others
        if (
            own
            and action.kind != ActionKind.ROLL
            and not (action.kind == ActionKind.MOVE and not action.move)
        ):
            continue
        try:
            yield action, apply_action(state, action)
        except EngineError:
            continue


def _plays_towards(state: MatchState, dice: tuple[int, int], target: MatchState) -> list[Action]:
    """The plays of ``dice`` that give the target's position, end the game, or are a dance: at most one missed
    play moves chequers, so any other play cannot lead to the target (this keeps the search small)."""
    p = state.on_roll
    return [
        Action(p, ActionKind.MOVE, dice=dice, move=play.move)
        for play in legal_plays(state.position, dice)
        if not play.move or not any(play.position.me) or play.position.swap() == target.position
    ]


def bridges(
    start: MatchState, target: MatchState, others: tuple[int, ...], depth: int = 3
) -> list[list[Step]]:
    """Every shortest list of up to ``depth`` missed steps that leads from ``start`` to the board ``target``
    (several when the board cannot tell which roll was played: 4-1 and 3-2 both take a chequer from 13 to 8)."""
    frontier: list[tuple[MatchState, list[Step]]] = [(start, [])]
    for _ in range(depth):
        following: list[tuple[MatchState, list[Step]]] = []
        found: list[list[Step]] = []
        for state, path in frontier:
            for step, after in _successors(state, target, others):
                if after.game_state == GameState.PLAYING and same_state(after, target):
                    if [*path, step] not in found:
                        found.append([*path, step])
                elif len(following) < _MAX_FRONTIER:
                    following.append((after, [*path, step]))
        if found:
            return found
        frontier = following
        if not frontier:
            break
    return []


def bridge(
    start: MatchState, target: MatchState, others: tuple[int, ...], depth: int = 3
) -> list[Step] | None:
    """The first of ``bridges``, or None."""
    found = bridges(start, target, others, depth)
    return found[0] if found else None
