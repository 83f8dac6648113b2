"""Match records: what happened in a match, game by game and action by action, as immutable values.

A ``MatchRecord`` holds the match facts (players, length, rules, date, place) and its games; a
``GameRecord`` holds the score before the game, the opening roll, the actions and the result. Players are
gnubg's: player 0 is the left column of a ``.mat`` file, player 1 the right one.

A record is only data; ``MatchRecord.replay()`` runs it through ``MatchState`` (engine/match.py), so an
inconsistent record (an illegal play, a double out of turn, a score or result that the games do not give)
raises ``RecordError`` naming the game and the action. ``RecordBuilder`` makes a record while a match goes
on, action by action or from successive ``MatchState`` values.

Kinds of action (``Action.kind``):

* ``move``: a roll and its play (the empty move is a dance); the first one of a game plays the opening roll.
* ``roll``: dice rolled and never played, because the game ended first (the roller resigned, as gnubg and
  XG write ``51:`` or ``51: ???``), or because the record stops there.
* ``double``, ``take``, ``drop``, ``beaver``: cube actions (a beaver takes and redoubles at once).
* ``resign`` (with ``level`` 1 single, 2 gammon, 3 backgammon), ``accept``, ``reject``.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from engine.errors import EngineError
from engine.ids import GameState
from engine.match import GameResult, MatchState, ResignLevel, Rules
from engine.moves import Move, check_dice, legal_plays

__all__ = [
    "Action",
    "ActionKind",
    "GameRecord",
    "MatchRecord",
    "RecordBuilder",
    "RecordError",
    "ReplayStep",
    "apply_action",
    "starting_state",
]


class RecordError(EngineError):
    """A record that does not replay: names the game and the action (both counted from 1, 0 = none)."""

    def __init__(self, message: str, game: int = 0, action: int = 0) -> None:
        where = f"game {game}" + (f", action {action}" if action else "") if game else ""
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.game = game
        self.action = action


class ActionKind(StrEnum):
    ROLL = "roll"
    MOVE = "move"
    DOUBLE = "double"
    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"
    RESIGN = "resign"
    ACCEPT = "accept"
    REJECT = "reject"


_WITH_DICE = (ActionKind.ROLL, ActionKind.MOVE)
_CUBE_OFFERS = (ActionKind.DOUBLE, ActionKind.BEAVER)


def _field_repr(value: object) -> str:
    if isinstance(value, StrEnum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def _repr(obj: object, always: tuple[str, ...] = ()) -> str:
    """``Name(field=value, ...)``, leaving out fields at their defaults; evaluates back to ``obj``."""
    parts = []
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if f.name not in always:
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
                continue
        parts.append(f"{f.name}={_field_repr(value)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a player did. ``dice`` as rolled (any order) for ``roll``/``move``; ``move`` in the mover's
    own numbering for ``move``, steps in the order played; ``level`` for ``resign``; ``cube`` the value the
    cube goes to if the offer is taken (a double of a 2-cube: 4; a beaver of that double: 8), when known
    (0 = not recorded; replay checks it otherwise)."""

    player: int
    kind: ActionKind
    dice: tuple[int, int] | None = None
    move: Move | None = None
    level: int = 0
    cube: int = 0

    def __post_init__(self) -> None:
        if self.player not in (0, 1) or isinstance(self.player, bool):
            raise RecordError(f"action player {self.player!r} is not 0 or 1")
        try:
            object.__setattr__(self, "kind", ActionKind(self.kind))
        except ValueError:
            raise RecordError(f"unknown action kind {self.kind!r}") from None
        kind = self.kind
        if kind in _WITH_DICE:
            if self.dice is None:
                raise RecordError(f"a {kind} action needs dice")
            try:
                object.__setattr__(self, "dice", tuple(check_dice(self.dice)))
            except EngineError as exc:
                raise RecordError(str(exc)) from None
        elif self.dice is not None:
            raise RecordError(f"a {kind} action has no dice")
        if kind == ActionKind.MOVE:
            if not isinstance(self.move, Move):
                raise RecordError(f"a move action needs a Move, not {self.move!r}")
        elif self.move is not None:
            raise RecordError(f"a {kind} action has no move")
        if kind == ActionKind.RESIGN:
            if self.level not in (1, 2, 3) or isinstance(self.level, bool):
                raise RecordError(f"resignation level {self.level!r} is not 1, 2 or 3")
        elif self.level:
            raise RecordError(f"a {kind} action has no resignation level")
        if self.cube and (kind not in _CUBE_OFFERS or self.cube < 2 or self.cube & (self.cube - 1)):
            raise RecordError(f"cube value {self.cube!r} does not fit a {kind} action")

    def __str__(self) -> str:
        who = f"player {self.player}"
        if self.kind == ActionKind.MOVE:
            d1, d2 = self.dice or (0, 0)
            return f"{who} {d1}{d2}: {self.move or 'no move'}"
        if self.kind == ActionKind.ROLL:
            d1, d2 = self.dice or (0, 0)
            return f"{who} rolls {d1}{d2}"
        if self.kind == ActionKind.RESIGN:
            return f"{who} resigns {ResignLevel(self.level).name.lower()}"
        return f"{who} {self.kind}s"

    def __repr__(self) -> str:
        return _repr(self, always=("player", "kind"))


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game: the score before it, the opening roll (die of player 0, die of player 1), the actions and
    the result (None while the game is unfinished)."""

    score: tuple[int, int]
    opening_roll: tuple[int, int]
    actions: tuple[Action, ...] = ()
    result: GameResult | None = None

    def __post_init__(self) -> None:
        try:
            s0, s1 = self.score
            ok = all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in (s0, s1))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise RecordError(f"score {self.score!r} is not two counts")
        object.__setattr__(self, "score", (s0, s1))
        try:
            object.__setattr__(self, "opening_roll", tuple(check_dice(self.opening_roll)))
        except EngineError as exc:
            raise RecordError(f"opening roll: {exc}") from None
        actions = tuple(self.actions)
        if not all(isinstance(a, Action) for a in actions):
            raise RecordError("actions must be Action values")
        object.__setattr__(self, "actions", actions)
        if self.result is not None and not isinstance(self.result, GameResult):
            raise RecordError(f"result {self.result!r} is not a GameResult")

    @property
    def first_player(self) -> int:
        """Who plays the opening roll: the player with the higher die."""
        return 0 if self.opening_roll[0] > self.opening_roll[1] else 1

    @property
    def moves(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if a.kind == ActionKind.MOVE)

    def __repr__(self) -> str:
        return _repr(self, always=("score", "opening_roll"))


class ReplayStep(NamedTuple):
    """One action of a replay: where it is (game and action counted from 1), the state before and after."""

    game: int
    index: int
    action: Action
    before: MatchState
    after: MatchState


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A match (``length`` > 0) or money session (0) with its games; see the module docstring.

    ``match_id`` is the archive's key for the match (written as ``; [Match ID "..."]``); ``tags`` are other
    header tags as (name, value) pairs, kept in order; ``partial`` is set by readers when the source stopped
    before its end (a file cut short): the record then holds what could be read.
    """

    names: tuple[str, str]
    length: int
    rules: Rules = field(default_factory=Rules)
    games: tuple[GameRecord, ...] = ()
    date: datetime.date | None = None
    time: datetime.time | None = None
    site: str = ""
    event: str = ""
    round: str = ""
    match_id: str = ""
    tags: tuple[tuple[str, str], ...] = ()
    comment: str = ""
    partial: bool = False

    def __post_init__(self) -> None:
        names = tuple(self.names)
        if len(names) != 2 or not all(isinstance(n, str) for n in names):
            raise RecordError(f"names {self.names!r} are not two strings")
        object.__setattr__(self, "names", names)
        if not isinstance(self.length, int) or isinstance(self.length, bool) or not 0 <= self.length <= 64:
            raise RecordError(f"match length {self.length!r} is not an integer in 0..64")
        if not isinstance(self.rules, Rules):
            raise RecordError(f"rules {self.rules!r} are not a Rules value")
        games = tuple(self.games)
        if not all(isinstance(g, GameRecord) for g in games):
            raise RecordError("games must be GameRecord values")
        object.__setattr__(self, "games", games)
        tags = tuple((str(k), str(v)) for k, v in self.tags)
        object.__setattr__(self, "tags", tags)

    # -- queries --------------------------------------------------------------------------------------------

    @property
    def is_money(self) -> bool:
        return self.length == 0

    def tag(self, name: str) -> str | None:
        """The value of an extra tag (case-insensitive name), if present."""
        for key, value in self.tags:
            if key.lower() == name.lower():
                return value
        return None

    def initial_state(self) -> MatchState:
        """The state before the first game (a record may start at a score other than 0-0)."""
        score = self.games[0].score if self.games else (0, 0)
        try:
            return starting_state(self.length, self.rules, self.names, score)
        except RecordError as exc:
            raise RecordError(str(exc), game=1) from None

    def steps(self) -> Iterator[ReplayStep]:
        """Replay action by action; RecordError (naming game and action) at the first inconsistency."""
        state = self.initial_state()
        last = len(self.games)
        for number, game in enumerate(self.games, 1):
            state = _start_game(state, game, number)
            for index, action in enumerate(game.actions, 1):
                after = _apply(state, action, number, index)
                yield ReplayStep(number, index, action, state, after)
                state = after
            _check_result(state, game, number, number == last)

    def replay(self) -> Iterator[MatchState]:
        """The state before the first game, after each game's start and after each action."""
        state = self.initial_state()
        yield state
        last = len(self.games)
        for number, game in enumerate(self.games, 1):
            state = _start_game(state, game, number)
            yield state
            for index, action in enumerate(game.actions, 1):
                state = _apply(state, action, number, index)
                yield state
            _check_result(state, game, number, number == last)

    def final_state(self) -> MatchState:
        """The state after the last action (RecordError if the record does not replay)."""
        states = self.replay()
        state = next(states)
        for state in states:  # noqa: B007 - only the last one is wanted
            pass
        return state

    @property
    def final_score(self) -> tuple[int, int]:
        """The score after the last finished game, from the recorded results (no replay)."""
        score = list(self.games[0].score) if self.games else [0, 0]
        for game in self.games:
            score = list(game.score)
            if game.result is not None:
                score[game.result.winner] += game.result.points
        return score[0], score[1]

    @property
    def match_over(self) -> bool:
        return bool(self.length) and max(self.final_score) >= self.length

    def replace(self, **changes: object) -> MatchRecord:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return _repr(self, always=("names", "length"))


# -- replay ------------------------------------------------------------------------------------------------


def starting_state(
    length: int, rules: Rules, names: tuple[str, str], score: tuple[int, int] = (0, 0)
) -> MatchState:
    """The state before a first game played at ``score`` (a file may start in the middle of a match)."""
    try:
        state = MatchState.new_match(length, rules, names)
        if score != (0, 0):
            s0, s1 = score
            edge = length - 1
            # as gnubg assumes: the first game in which exactly one player is 1-away is the Crawford game
            crawford = length > 1 and rules.crawford and (s0 == edge) != (s1 == edge)
            state = state.replace(score=(s0, s1), crawford=crawford)
    except EngineError as exc:
        raise RecordError(str(exc)) from None
    return state


def _start_game(state: MatchState, game: GameRecord, number: int) -> MatchState:
    if game.score != state.score:
        raise RecordError(
            f"the score before it is recorded as {game.score[0]}-{game.score[1]}, "
            f"but the games before it give {state.score[0]}-{state.score[1]}",
            game=number,
        )
    try:
        return state.new_game(game.opening_roll)
    except EngineError as exc:
        raise RecordError(str(exc), game=number) from None


def _check_result(state: MatchState, game: GameRecord, number: int, is_last: bool) -> None:
    if state.game_state == GameState.PLAYING:
        if game.result is not None:
            raise RecordError(f"result {game.result!r} recorded, but the game is not over", game=number)
        if not is_last:
            raise RecordError("the game is unfinished, yet another game follows", game=number)
        return
    if game.result != state.last_result:
        raise RecordError(
            f"result recorded as {game.result!r}, but the game gives {state.last_result!r}", game=number
        )


def _same_dice(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return sorted(a) == sorted(b)


def _apply(state: MatchState, action: Action, game: int, index: int) -> MatchState:
    """``action`` applied to ``state`` through MatchState; RecordError otherwise."""
    try:
        return apply_action(state, action)
    except RecordError as exc:
        raise RecordError(f"{action}: {exc}", game=game, action=index) from None
    except EngineError as exc:
        raise RecordError(f"{action}: {exc}", game=game, action=index) from None


def apply_action(state: MatchState, action: Action) -> MatchState:
    """``state`` after ``action`` by the match rules: a move whose dice are not rolled yet rolls them first, and
    a resignation may come during the opponent's turn (as FIBS and gnubg allow). RecordError if it does not
    apply. The one action applier of the project: the record's replay, the FIBS tracker and the web views."""
    kind, player = action.kind, action.player
    if state.game_state != GameState.PLAYING:
        raise RecordError("the game is over")
    if kind == ActionKind.RESIGN:
        return _resign(state, player, action.level)
    if player != state.turn:
        raise RecordError(f"it is player {state.turn}'s turn to act")
    if kind in _WITH_DICE:
        assert action.dice is not None
        if state.dice[0]:
            # the opening roll, or dice recorded as rolled by an earlier ``roll`` action
            if not _same_dice(state.dice, action.dice):
                raise RecordError(f"the dice rolled are {state.dice[0]}{state.dice[1]}")
        else:
            state = state.roll(action.dice)
        if kind == ActionKind.ROLL:
            return state
        assert action.move is not None
        return state.move(action.move)
    if kind in _CUBE_OFFERS and action.cube:
        # MatchState keeps the cube value until the take; a beaver has doubled it once already
        offered = state.cube * (4 if kind == ActionKind.BEAVER else 2)
        if action.cube != offered:
            raise RecordError(f"the cube offered is {offered}, not {action.cube}")
    if kind == ActionKind.DOUBLE:
        return state.double()
    if kind == ActionKind.BEAVER:
        return state.beaver()
    if kind == ActionKind.TAKE:
        return state.take()
    if kind == ActionKind.DROP:
        return state.drop()
    if kind == ActionKind.ACCEPT:
        return state.accept_resignation()
    # REJECT
    if state.resigned and state.turn == state.on_roll and not state.doubled:
        # the offer came from the player not on roll (see _resign): the turn stays where it was
        return state.replace(resigned=0, resignation_declined=state.resigned)
    return state.reject_resignation()


def _resign(state: MatchState, player: int, level: int) -> MatchState:
    if player == state.turn:
        return state.resign(level)
    # FIBS and gnubg let a player resign during the opponent's turn; MatchState.resign only takes an offer
    # from the player to act, so the offer is set here: the opponent, already to act, answers it.
    if state.doubled or state.resigned:
        raise RecordError(f"player {player} cannot resign while player {state.turn} must answer")
    if level <= state.resignation_declined:
        raise RecordError(f"player {state.turn} has just declined a resignation at that level")
    return state.replace(resigned=level)


# -- building ----------------------------------------------------------------------------------------------


class RecordBuilder:
    """Builds a MatchRecord while a match is played: each ``add_*`` call (or ``observe``) is checked against
    the match state at once (RecordError if illegal) and ``record()`` gives the record so far.

    A roll and its play become one ``move`` action; a roll not (yet) played shows as a ``roll`` action.
    """

    def __init__(
        self,
        length: int,
        names: tuple[str, str] = ("player 0", "player 1"),
        rules: Rules | None = None,
        *,
        start: MatchState | None = None,
        **info: object,
    ) -> None:
        self._info = dict(info)
        self._length = length
        self._names = tuple(names)
        self._rules = rules or Rules()
        try:
            initial = start or MatchState.new_match(length, self._rules, self._names)  # type: ignore[arg-type]
        except EngineError as exc:
            raise RecordError(str(exc)) from None
        if initial.game_state == GameState.PLAYING:
            raise RecordError("a record starts between games, not in the middle of one")
        self._state = initial
        self._games: list[GameRecord] = []
        self._game: tuple[tuple[int, int], tuple[int, int]] | None = None  # (score before, opening roll)
        self._actions: list[Action] = []
        self._pending: Action | None = None  # a roll not yet played

    @classmethod
    def from_state(cls, state: MatchState, **info: object) -> RecordBuilder:
        """A builder starting from ``state`` (between games), with its length, rules, names and score."""
        return cls(state.match_length, state.names, state.rules, start=state, **info)

    @classmethod
    def from_history(cls, states: Iterable[MatchState], **info: object) -> MatchRecord:
        """The record of a sequence of MatchState values, each one action (or game start) after the last."""
        iterator = iter(states)
        try:
            first = next(iterator)
        except StopIteration:
            raise RecordError("an empty history") from None
        builder = cls.from_state(first, **info)
        before = first
        for after in iterator:
            builder.observe(before, after)
            before = after
        return builder.record()

    @property
    def state(self) -> MatchState:
        return self._state

    @property
    def in_game(self) -> bool:
        """A game has been started and is not finished."""
        return self._game is not None

    # -- actions --------------------------------------------------------------------------------------------

    def start_game(self, opening_roll: tuple[int, int]) -> MatchState:
        """Start the next game with ``opening_roll`` = (die of player 0, die of player 1)."""
        number = len(self._games) + 1
        if self._game is not None:
            raise RecordError("a game is in progress", game=number)
        game = GameRecord(self._state.score, opening_roll)  # validates the roll
        try:
            self._state = self._state.new_game(game.opening_roll)
        except EngineError as exc:
            raise RecordError(str(exc), game=number) from None
        self._game = (game.score, game.opening_roll)
        self._actions = []
        self._pending = None
        return self._state

    def add(self, action: Action) -> MatchState:
        """Apply any action; a ``move`` right after a ``roll`` of the same player and dice merges with it."""
        if self._game is None:
            raise RecordError(f"{action}: no game in progress; call start_game first")
        number, index = len(self._games) + 1, len(self._actions) + 1
        if action.kind == ActionKind.ROLL:
            if self._pending is not None:
                raise RecordError(f"{action}: the dice are rolled already", game=number, action=index)
            self._state = _apply(self._state, action, number, index)
            self._pending = action
            return self._state
        pending = self._pending
        if pending is not None:
            if action.kind == ActionKind.MOVE and action.player == pending.player:
                assert pending.dice is not None and action.dice is not None
                if not _same_dice(pending.dice, action.dice):
                    raise RecordError(
                        f"{action}: the dice rolled are {pending.dice}", game=number, action=index
                    )
                action = dataclasses.replace(action, dice=pending.dice)
            else:
                # something else happened before the play (a resignation offered): the roll stands alone
                self._actions.append(pending)
                self._pending = None
                index += 1
        self._state = _apply(self._state, action, number, index)
        self._pending = None
        self._actions.append(action)
        if self._state.game_state != GameState.PLAYING:
            self._finish_game()
        return self._state

    def add_roll(self, player: int, dice: tuple[int, int]) -> MatchState:
        return self.add(Action(player, ActionKind.ROLL, dice=dice))

    def add_move(self, player: int, move: Move, dice: tuple[int, int] | None = None) -> MatchState:
        """Play ``move``; ``dice`` may be left out when they are rolled already (opening roll, add_roll)."""
        if dice is None:
            if self._pending is not None and self._pending.dice is not None:
                dice = self._pending.dice
            elif self._state.dice[0]:
                dice = self._state.dice
            else:
                raise RecordError(f"player {player} must roll before moving")
        return self.add(Action(player, ActionKind.MOVE, dice=dice, move=move))

    def add_double(self, player: int) -> MatchState:
        return self.add(Action(player, ActionKind.DOUBLE, cube=self._state.cube * 2))

    def add_beaver(self, player: int) -> MatchState:
        return self.add(Action(player, ActionKind.BEAVER, cube=self._state.cube * 4))

    def add_take(self, player: int) -> MatchState:
        return self.add(Action(player, ActionKind.TAKE))

    def add_drop(self, player: int) -> MatchState:
        return self.add(Action(player, ActionKind.DROP))

    def add_resign(self, player: int, level: int) -> MatchState:
        return self.add(Action(player, ActionKind.RESIGN, level=level))

    def add_accept(self, player: int) -> MatchState:
        return self.add(Action(player, ActionKind.ACCEPT))

    def add_reject(self, player: int) -> MatchState:
        return self.add(Action(player, ActionKind.REJECT))

    def observe(self, before: MatchState, after: MatchState) -> MatchState:
        """Record the one action (or game start) that turned ``before`` into ``after``.

        ``before`` must be the builder's current state; RecordError if it is not, or if no single action
        leads from one to the other.
        """
        if before != self._state:
            raise RecordError("the observed state is not the one the record has reached")
        if before.game_state != GameState.PLAYING:
            if after.game_state != GameState.PLAYING:
                raise RecordError("no game was started between the two states")
            high, low = after.dice
            self.start_game((high, low) if after.on_roll == 0 else (low, high))
        else:
            self.add(_infer_action(before, after))
        if self._state != after:
            raise RecordError("the observed state is not what the inferred action gives")
        return self._state

    # -- output ---------------------------------------------------------------------------------------------

    def _finish_game(self) -> None:
        assert self._game is not None
        score, opening = self._game
        self._games.append(GameRecord(score, opening, tuple(self._actions), self._state.last_result))
        self._game = None
        self._actions = []
        self._pending = None

    def record(self) -> MatchRecord:
        """The record so far; a game in progress is included without a result."""
        games = list(self._games)
        if self._game is not None:
            actions = list(self._actions)
            if self._pending is not None:
                actions.append(self._pending)
            games.append(GameRecord(self._game[0], self._game[1], tuple(actions)))
        info = dict(self._info)
        return MatchRecord(
            names=self._names,  # type: ignore[arg-type]
            length=self._length,
            rules=self._rules,
            games=tuple(games),
            **info,  # type: ignore[arg-type]
        )


def _infer_action(before: MatchState, after: MatchState) -> Action:
    """The action that leads from ``before`` to ``after`` (both in a game, or ``after`` just finished)."""
    turn = before.turn
    if not before.doubled and after.doubled:
        return Action(turn, ActionKind.DOUBLE, cube=before.cube * 2)
    if before.doubled and after.beavered and not before.beavered:
        return Action(turn, ActionKind.BEAVER, cube=before.cube * 4)
    if before.doubled and not after.doubled:
        if after.game_state == GameState.DROPPED:
            return Action(turn, ActionKind.DROP)
        return Action(turn, ActionKind.TAKE)
    if not before.resigned and after.resigned and after.game_state == GameState.PLAYING:
        resigner = turn if after.turn != turn else 1 - turn
        return Action(resigner, ActionKind.RESIGN, level=after.resigned)
    if before.resigned:
        if after.game_state == GameState.RESIGNED:
            return Action(turn, ActionKind.ACCEPT)
        return Action(turn, ActionKind.REJECT)
    if not before.dice[0] and after.dice[0]:
        return Action(turn, ActionKind.ROLL, dice=after.dice)
    if before.dice[0]:
        for play in legal_plays(before.position, before.dice):
            if play.position.swap() == after.position:
                return Action(turn, ActionKind.MOVE, dice=before.dice, move=play.move)
    raise RecordError("no single action leads from the first state to the second")
