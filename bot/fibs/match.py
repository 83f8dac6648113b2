"""The bot's view of one FIBS match, pure (no I/O, no clock): server events in, match state and record out.

``MatchTracker`` keeps the match as an ``engine.match.MatchState`` moved on by the actions the text lines tell
(``alice rolls 3 and 1.``, ``alice moves 8-5 6-5 .``, ``alice doubles.``, ``... wants to resign ...``) and by
the bot's own actions, recorded *before* they are sent and confirmed by the server's echo. Every ``board:``
line is a check: a board that does not follow is bridged by the few actions that were missed (a reconnect or
a restart can lose a roll and a move; the opponent's missing dice are found by trying all 21 rolls), or it
replaces the state and the record stops there (``record_note`` says why) - the bot plays on either way. When
several rolls give the board's position (4-1 and 3-2 both play 13/8), the record takes the first and says so
in its comment (``inferred``).

Players are gnubg's: player 0 is field 1 of the boards (the bot, or the watched player), player 1 the
opponent; a record's left column is player 0. ``snapshot()``/``restore()`` turn the tracker into JSON and back,
so that a restarted daemon resumes the match with the record it had.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, replace
from typing import Any

from bot.fibs.bridge import FIBS_RULES, INITIAL, Step, board_state, bridges, opening_roll, same_state
from engine.errors import EngineError
from engine.ids import GameState
from engine.match import GameResult, MatchState, ResignLevel
from engine.moves import Move
from engine.record import Action, ActionKind, MatchRecord, RecordBuilder, RecordError, apply_action
from protocols.fibs import events as ev
from protocols.fibs.board import FibsBoard

__all__ = ["FIBS_RULES", "MatchTracker", "TrackerError", "board_state", "bridges", "same_state"]
SNAPSHOT_VERSION = 1
# the record's rules once the server played a Crawford game without the rule (_play_without_crawford)
_NO_CRAWFORD = replace(FIBS_RULES, crawford=False)


class TrackerError(ValueError):
    """A snapshot that cannot be read back, or a tracker asked for something it does not have."""


# -- notes: what a fed event meant, for the bot to act on or log ----------------------------------------------


@dataclass(frozen=True, slots=True)
class MoveMade:
    """A chequer play (``before`` has the mover on roll with the dice)."""

    player: int
    before: MatchState
    move: Move


@dataclass(frozen=True, slots=True)
class CubeMade:
    """A double, take or drop by ``player`` (``before`` is the state it answered)."""

    player: int
    kind: ActionKind
    before: MatchState


@dataclass(frozen=True, slots=True)
class GameEnded:
    winner: int
    points: int


@dataclass(frozen=True, slots=True)
class MatchEnded:
    winner: int
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class OwnRefused:
    """The server did not take the bot's last action: the state is back to before it."""

    action: Action


@dataclass(frozen=True, slots=True)
class Desync:
    """A board the tracker could not follow; ``reason`` is for the log."""

    reason: str


Note = MoveMade | CubeMade | GameEnded | MatchEnded | OwnRefused | Desync


def _action_json(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {"p": action.player, "k": action.kind.value}
    if action.dice is not None:
        out["d"] = list(action.dice)
    if action.move is not None:
        out["m"] = [list(s) for s in action.move.steps]
    if action.level:
        out["l"] = action.level
    return out


def _action_from_json(obj: dict[str, Any]) -> Action:
    move = Move(tuple((int(a), int(b)) for a, b in obj["m"])) if "m" in obj else None
    dice = (int(obj["d"][0]), int(obj["d"][1])) if "d" in obj else None
    return Action(int(obj["p"]), ActionKind(obj["k"]), dice=dice, move=move, level=int(obj.get("l", 0)))


def _step_json(step: Step) -> dict[str, Any]:
    if isinstance(step, Action):
        return _action_json(step)
    return {"k": "start", "roll": list(step)}


def _step_from_json(obj: dict[str, Any]) -> Step:
    if obj.get("k") == "start":
        return int(obj["roll"][0]), int(obj["roll"][1])
    return _action_from_json(obj)


# -- the tracker ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Own:
    before: MatchState
    action: Action


# Server lines that are a player's cube or resignation answer: the action each stands for.
_ANSWERS: dict[type[ev.FibsEvent], ActionKind] = {
    ev.Doubles: ActionKind.DOUBLE,
    ev.AcceptsDouble: ActionKind.TAKE,
    ev.GivesUp: ActionKind.DROP,
    ev.ResignAccepted: ActionKind.ACCEPT,
    ev.ResignRejected: ActionKind.REJECT,
}


class MatchTracker:
    """One match as the bot sees it; see the module docstring."""

    def __init__(
        self,
        *,
        key: str,
        server: str,
        names: tuple[str, str],
        length: int,
        started: datetime.datetime,
        watching: bool = False,
    ) -> None:
        if not 0 <= length <= 64:
            raise TrackerError(f"match length {length} is outside 0..64 (FIBS unlimited is 0)")
        self.key = key
        self.server = server
        self.names = names
        self.length = length
        self.started = started
        self.watching = watching
        self.state: MatchState | None = None
        self.version = 0  # changes with every change of state: the bot acts once per version
        self.finished = False
        self.record_note = ""  # why the record stops before the end, if it does
        self.inferred: list[str] = []  # turns whose roll the record had to guess from a board
        self._base: tuple[tuple[int, int], bool] | None = None  # (score, crawford) where the record starts
        # The record's rules: Crawford off once the server played the Crawford game as an ordinary one
        self.rules = FIBS_RULES
        self.rules_note = ""
        self._steps: list[Step] = []
        # snapshot_text's encoded steps: the step objects encoded so far and their JSON, reused while _steps
        # still begins with them (a persist per event would otherwise re-encode the whole match each time)
        self._encoded: tuple[list[Step], list[str]] = ([], [])
        self._builder: RecordBuilder | None = None
        self._own: _Own | None = None
        self._asked_after: _Own | None = None  # the own action pending when the bot last asked for the board
        self._echo_due: ActionKind | None = None  # an own cube answer a board confirmed before its echo line
        self.direction = 0  # FIBS direction of player 0 from the last board (0: no board seen yet)

    def __repr__(self) -> str:
        state = self.state.gnubg_id if self.state else None
        return f"<MatchTracker {self.key!r} {self.names[0]}-{self.names[1]} {self.length}p state={state}>"

    # -- queries ------------------------------------------------------------------------------------------

    @property
    def recording(self) -> bool:
        return self._builder is not None and not self.record_note

    @property
    def others(self) -> tuple[int, ...]:
        """The players whose actions come only from the server's lines."""
        return (0, 1) if self.watching else (1,)

    def due(self) -> bool:
        """Whether the bot (player 0 of a played match) must act now."""
        s = self.state
        return (
            not self.watching
            and not self.finished
            and s is not None
            and s.game_state == GameState.PLAYING
            and s.turn == 0
            and self._own is None
            and self.direction != 0  # moves are written in FIBS numbering: a board must have told it
        )

    @property
    def awaiting_echo(self) -> bool:
        """The bot's last action is recorded but the server has not yet confirmed it."""
        return self._own is not None

    @property
    def gnubg_id(self) -> str:
        return self.state.gnubg_id if self.state else ""

    def record(self) -> MatchRecord | None:
        """The record so far (None before the first game the tracker saw begin)."""
        if self._builder is None:
            return None
        record = self._builder.record()
        notes = [self.rules_note] if self.rules_note else []
        if self.record_note:
            record = record.replace(
                partial=True, comment="\n".join([self.record_note, *notes, *self.inferred])
            )
        elif notes or self.inferred:
            record = record.replace(comment="\n".join([*notes, *self.inferred]))
        return record

    def who(self, name: str) -> int | None:
        if name == ev.YOU or name == self.names[0]:
            return 0
        if name == self.names[1]:
            return 1
        return None

    # -- the bot's own actions ----------------------------------------------------------------------------

    def act(self, action: Action) -> None:
        """Record the bot's own ``action`` before it is sent; it stays unconfirmed until the server echoes it."""
        if self.watching or action.player != 0:
            raise TrackerError(
                "only the bot's own actions (player 0 of a played match) are recorded with act()"
            )
        before = self.state
        if before is None:
            raise TrackerError("no match state to act on")
        self._apply(action, [])
        self._own = _Own(before, action)

    def refused(self) -> list[Note]:
        """The server refused the bot's last command: undo its action (if any)."""
        if self._own is None:
            return []
        own, self._own = self._own, None
        if self._steps and self._steps[-1] == own.action and self.recording:
            self._steps.pop()
            self._rebuild()
        self.state = own.before
        self.version += 1
        return [OwnRefused(own.action)]

    def board_requested(self) -> None:
        """The bot asked for the board: the answer shows whether the server took the action pending now
        (a board that only shows the state before it may have been sent before the server read it)."""
        self._asked_after = self._own

    def _confirm(self) -> None:
        self._own = None

    # -- events ---------------------------------------------------------------------------------------------

    def feed(self, event: ev.FibsEvent) -> list[Note]:
        """Move the match on by one server event; returns what it meant."""
        notes: list[Note] = []
        if isinstance(event, ev.Board):
            self._on_board(event.board, notes)
            return notes
        if isinstance(event, ev.MatchWon | ev.MatchReport):
            self._on_match_won(event, notes)
            return notes
        state = self.state
        if state is None or state.game_state != GameState.PLAYING:
            return notes
        if isinstance(event, ev.Rolls):
            p = self.who(event.player)
            if (
                p is not None
                and p == state.turn
                and not state.dice[0]
                and not state.doubled
                and not state.resigned
            ):
                self._confirm_by_other(p)
                self._try_apply(Action(p, ActionKind.ROLL, dice=event.dice), notes)
        elif isinstance(event, ev.Moves):
            self._on_moves(event, notes)
        elif isinstance(event, ev.CannotMove):
            self._on_cannot_move(event, notes)
        elif type(event) in _ANSWERS:
            self._answer_or_echo(event.player, _ANSWERS[type(event)], notes)  # type: ignore[attr-defined]
        elif isinstance(event, ev.ResignOffer):
            self._on_resign_offer(event, notes)
        elif isinstance(event, ev.GameWon):
            self._on_game_won(event, notes)
        return notes

    def _on_cannot_move(self, event: ev.CannotMove, notes: list[Note]) -> None:
        p = self.who(event.player)
        own = self._own
        if p == 0 and not self.watching and own is not None and own.action.kind == ActionKind.MOVE:
            # "You can't move." while the bot's move waits for its echo: the server did not take that move (the
            # bot held dice it did not have). Confirming it made the next dance of the opponent an illegal
            # play in a position that never was (IllegalPlayError, issue 15 item 8).
            notes.extend(self.refused())
        state = self.state
        if p is None or state is None or p != state.on_roll or not state.dice[0]:
            return  # the board that follows tells where the match is
        self._confirm_by_other(p)
        # a dance with dice that have a legal play means our view is off: a desync, never an exception
        self._try_apply(Action(p, ActionKind.MOVE, dice=state.dice, move=Move()), notes)

    def _confirm_by_other(self, player: int) -> None:
        if player != 0 or self.watching:
            self._confirm()  # the opponent acts: the server took the bot's last action

    def _answer_or_echo(self, name: str, kind: ActionKind, notes: list[Note]) -> None:
        p = self.who(name)
        if p is None:
            return
        own = self._own
        if own is not None and p == 0 and own.action.kind == kind:
            self._confirm()  # the echo of the bot's own action
            return
        if own is None and p == 0 and not self.watching and self._echo_due == kind:
            # BaldLies may answer the board the bot asked for before it echoes the action ("You accept the
            # double."): the board confirmed it, the line is no second take
            self._echo_due = None
            return
        state = self.state
        assert state is not None
        if kind == ActionKind.DOUBLE and (state.doubled or state.dice[0]):
            return  # a watcher's copy of a double already applied
        if kind == ActionKind.DOUBLE and state.crawford and p in self.others:
            # BaldLies lets a player double in a resumed Crawford game and says only "alice doubles.": the
            # server's rules hold, or the bot never answers the double it is waiting on
            self._play_without_crawford()
        self._confirm_by_other(p)
        if kind == ActionKind.DOUBLE and p in self.others:
            self._follow_double(p, notes)
            return
        self._try_apply(Action(p, kind), notes)

    def _follow_double(self, p: int, notes: list[Note]) -> None:
        """A double the server announced. BaldLies checks neither the Crawford rule nor a dead cube (the leader
        doubling post-Crawford): what it allowed holds, and the bot answers it; a ``.mat`` cannot hold a double
        that gnubg refuses, so the record stops there."""
        state = self.state
        assert state is not None
        try:
            self._apply(Action(p, ActionKind.DOUBLE), notes)
            return
        except EngineError as exc:
            refusal = str(exc)
        if state.on_roll != p or state.turn != p or state.dice[0] or state.doubled or state.resigned:
            notes.append(Desync(f"player {p} doubles does not apply: {refusal}"))
            return
        self._stop_record(f"the server let {self.names[p]} double where the rules do not: {refusal}")
        self.state = state.replace(doubled=True, turn=1 - p)
        self.version += 1
        notes.append(CubeMade(p, ActionKind.DOUBLE, state))

    def _on_resign_offer(self, event: ev.ResignOffer, notes: list[Note]) -> None:
        p = self.who(event.player)
        state = self.state
        if p is None or state is None:
            return
        if self._own is not None and p == 0 and self._own.action.kind == ActionKind.RESIGN:
            self._confirm()
            return
        if state.resigned:
            return  # a reminder of an offer already known
        level = event.level
        if level is None and event.points is not None and event.points % state.cube == 0:
            level = event.points // state.cube
        if level not in (1, 2, 3):
            notes.append(Desync(f"cannot read the resignation level of {event.raw!r}"))
            return
        self._confirm_by_other(p)
        self._try_apply(Action(p, ActionKind.RESIGN, level=level), notes)

    def _on_moves(self, event: ev.Moves, notes: list[Note]) -> None:
        p = self.who(event.player)
        state = self.state
        if p is None or state is None:
            return
        own = self._own
        if p == 0 and own is not None and own.action.kind == ActionKind.MOVE:
            self._confirm()  # the echo of the bot's own move (watchers' view, forced moves)
            return
        if p != state.on_roll or not state.dice[0] or state.doubled or state.resigned or event.move is None:
            return  # the board that follows will tell
        self._confirm_by_other(p)
        self._try_apply(Action(p, ActionKind.MOVE, dice=state.dice, move=event.move), notes)

    def _on_game_won(self, event: ev.GameWon, notes: list[Note]) -> None:
        state = self.state
        p = self.who(event.winner)
        if state is None or p is None or state.game_state != GameState.PLAYING:
            return
        # The last play of a game is followed by no board: find it among the plays that bear off the last chequer.
        if state.dice[0] and state.on_roll == p and not state.doubled:
            for play in state.legal_plays():
                if not any(play.position.me):
                    self._try_apply(Action(p, ActionKind.MOVE, dice=state.dice, move=play.move), notes)
                    if self.state is not None and self.state.game_state != GameState.PLAYING:
                        return
        self._stop_record(f"game {state.game_number or '?'} ended unseen ({event.raw!r})")
        score = list(state.score)
        score[p] += event.points
        level = ResignLevel(max(1, min(3, event.points // state.cube)))
        edge = self.length - 1
        crawford_next = self.length > 1 and not state.crawford and score[p] == edge and score[1 - p] != edge
        self.state = state.replace(
            score=(score[0], score[1]),
            game_state=GameState.OVER,
            crawford=crawford_next,
            dice=(0, 0),
            doubled=False,
            resigned=0,
            last_result=GameResult(p, event.points, level, GameState.OVER),
        )
        self.version += 1
        notes.append(GameEnded(p, event.points))
        self._check_match_end(notes)

    def _on_match_won(self, event: ev.MatchWon | ev.MatchReport, notes: list[Note]) -> None:
        if self.finished:
            return
        winner_name = event.winner
        p = self.who(winner_name)
        if p is None:
            return
        self.finished = True
        self._own = None
        score = (event.score[0], event.score[1]) if p == 0 else (event.score[1], event.score[0])
        notes.append(MatchEnded(p, score))

    def _check_match_end(self, notes: list[Note]) -> None:
        state = self.state
        if state is not None and state.match_over and not self.finished:
            self.finished = True
            winner = state.winner
            assert winner is not None
            notes.append(MatchEnded(winner, state.score))

    # -- boards ---------------------------------------------------------------------------------------------

    def _on_board(self, board: FibsBoard, notes: list[Note]) -> None:
        try:
            self._follow_board(board, notes)
        except EngineError as exc:
            # Whatever the board says, it is the server's truth: resync to it rather than fail (and fail again
            # after every reconnect) on a step the rules refuse.
            try:
                target = board_state(board, self.names, self._crawford_guess(board))
            except EngineError:
                raise exc from None
            notes.append(Desync(f"board {board.line()!r} cannot be reached: {exc}"))
            if self._builder is not None:
                self._stop_record(f"the record stops where a board could not be followed ({target.gnubg_id})")
            self._own = None
            self.state = target
            self.version += 1

    def _follow_board(self, board: FibsBoard, notes: list[Note]) -> None:
        self.direction = board.direction
        if board.turn == 0 or self.finished:
            return  # between games: the text lines tell the result
        try:
            target = board_state(board, self.names, self._crawford_guess(board))
        except EngineError as exc:
            notes.append(Desync(f"unreadable board: {exc}"))
            return
        state = self.state
        if (
            state is not None
            and state.game_state == GameState.PLAYING
            and state.crawford
            and not target.crawford
            and state.score == target.score
        ):
            # BaldLies may resume a Crawford game as a post-Crawford one: the server's rules hold
            self._play_without_crawford()
            state = self.state
        if state is not None and state.game_state == GameState.PLAYING and same_state(state, target):
            if self._own is not None:
                self._echo_due = self._own.action.kind
            self._confirm()
            return
        own = self._own
        if own is not None and same_state(own.before, target):
            # A board sent before the server read our command is stale; the answer to a request made while
            # the command was pending is not: the server did not take it.
            if self._asked_after is own:
                self._asked_after = None
                notes.extend(self.refused())
            return
        if state is not None and (self.recording or state.game_state == GameState.PLAYING):
            paths = bridges(state, target, self.others)
            if paths:
                self._confirm()
                if len(paths) > 1 and self.recording:
                    self.inferred.append(self._guess_text(state, paths[0]))
                for step in paths[0]:
                    self._apply_step(step, notes)
                return
        if target.position == INITIAL and target.cube == 1 and target.dice[0] and not target.doubled:
            self._start_game(target, notes)
            return
        if state is not None:
            notes.append(Desync(f"board {board.line()!r} does not follow {state.gnubg_id}"))
            if self._builder is not None:
                self._stop_record(f"the record stops where a board did not follow ({target.gnubg_id})")
        self._own = None
        self.state = target
        self.version += 1

    def _play_without_crawford(self) -> None:
        """The server plays the game held for the Crawford game as an ordinary one (BaldLies stores the post-Crawford
        flag a game early, so a Crawford game resumed after a save is post-Crawford there): follow it. The
        record stays whole and valid by going over to the Crawford rule off (a ``.mat`` has no Crawford flag
        per game, only the match's ``Crawford`` tag): every game before replays the same, as does this one up
        to here (no cube was turned in it), and the cube from here on is legal."""
        state = self.state
        assert state is not None
        number = state.game_number or "?"
        self.state = state.replace(crawford=False)
        self.version += 1
        if self.rules.crawford:
            self.rules = _NO_CRAWFORD
            self.rules_note = (
                f"The server played game {number}, the Crawford game, without the Crawford rule "
                "(a game resumed after a save): the match is recorded with the Crawford rule off."
            )
            if self.recording:
                self._rebuild()

    def _guess_text(self, state: MatchState, path: list[Step]) -> str:
        """Where the record holds a roll it had to choose among several that the board allows."""
        moves = [s for s in path if isinstance(s, Action) and s.kind == ActionKind.MOVE]
        what = (
            ", ".join(f"{self.names[a.player]} {a.dice[0]}{a.dice[1]}" for a in moves if a.dice) or "a step"
        )
        return f"game {state.game_number or '?'}: {what} inferred from a board (the roll was not seen)"

    def _crawford_guess(self, board: FibsBoard) -> bool:
        state = self.state
        if state is not None and state.score == (board.player_score, board.opponent_score):
            if state.crawford and (board.cube > 1 or board.double_pending):
                return False  # the server plays this game without the Crawford rule: follow it
            return state.crawford
        return board.crawford

    def _start_game(self, target: MatchState, notes: list[Note]) -> None:
        """A new game whose first board we see (the record begins here if it had not yet)."""
        roll = opening_roll(target)
        self._own = None
        if self._builder is None and not self.record_note:
            between = MatchState.new_match(self.length, self.rules, self.names)
            crawford = target.crawford and self.rules.crawford
            self._base = (target.score, crawford)
            self._builder = self._new_builder(between.replace(score=target.score, crawford=crawford))
            self._steps = []
        if self.recording and self._builder is not None and self._builder.state.score == target.score:
            if self._builder.state.game_state == GameState.PLAYING:
                self._rewind_game()  # the server is back at the start of a game we had followed further
            self._apply_step(roll, notes)
            return
        if self._builder is not None:
            self._stop_record(
                f"a game began at {target.score[0]}-{target.score[1]} that the record cannot reach"
            )
        self.state = target
        self.version += 1

    def _rewind_game(self) -> None:
        """Drop the recorded steps of the game in progress (its start included): a server restored from a save
        older than our own view plays that game again from its first roll."""
        starts = [i for i, step in enumerate(self._steps) if not isinstance(step, Action)]
        if not starts:
            raise TrackerError("no game start to rewind to")
        del self._steps[starts[-1] :]
        self._rebuild()
        assert self._builder is not None
        self.state = self._builder.state
        self.version += 1

    # -- applying -----------------------------------------------------------------------------------------

    def _apply_step(self, step: Step, notes: list[Note]) -> None:
        if isinstance(step, Action):
            self._apply(step, notes)
            return
        state = self._builder.state if self.recording and self._builder is not None else self.state
        if state is None:
            raise TrackerError("no state to start a game from")
        after = state.new_game(step)
        if self.recording and self._builder is not None:
            self._builder.start_game(step)
            self._steps.append(step)
        self.state = after
        self.version += 1

    def _try_apply(self, action: Action, notes: list[Note]) -> None:
        try:
            self._apply(action, notes)
        except EngineError as exc:
            notes.append(Desync(f"{action} does not apply: {exc}"))

    def _apply(self, action: Action, notes: list[Note]) -> None:
        before = self.state
        if before is None:
            raise TrackerError("no match state yet")
        after = apply_action(before, action)
        self._echo_due = None
        if self.recording and self._builder is not None:
            try:
                self._builder.add(action)
                self._steps.append(action)
            except RecordError as exc:
                self._stop_record(f"the record stops at {action}: {exc}")
        self.state = after
        self.version += 1
        if action.kind == ActionKind.MOVE:
            assert action.move is not None
            notes.append(
                MoveMade(
                    action.player, before.roll(action.dice) if not before.dice[0] else before, action.move
                )
            )
        elif action.kind in (ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP):
            notes.append(CubeMade(action.player, action.kind, before))
        if after.game_state != GameState.PLAYING and after.last_result is not None:
            notes.append(GameEnded(after.last_result.winner, after.last_result.points))
            self._check_match_end(notes)

    def _stop_record(self, why: str) -> None:
        if not self.record_note:
            self.record_note = why

    def _new_builder(self, start: MatchState) -> RecordBuilder:
        return RecordBuilder.from_state(
            start,
            date=self.started.date(),
            time=self.started.time().replace(microsecond=0),
            site=self.server,
            match_id=self.key,
        )

    def _rebuild(self) -> None:
        """The builder again from the base and the recorded steps (after a refused own action)."""
        if self._base is None:
            self._builder = None
            return
        score, crawford = self._base
        start = MatchState.new_match(self.length, self.rules, self.names).replace(
            score=score, crawford=crawford and self.rules.crawford
        )
        builder = self._new_builder(start)
        for step in self._steps:
            if isinstance(step, Action):
                builder.add(step)
            else:
                builder.start_game(step)
        self._builder = builder

    # -- persistence ----------------------------------------------------------------------------------------

    def snapshot_text(self) -> str:
        """``snapshot()`` as compact JSON (the same text as ``json.dumps(snapshot(), separators=(",", ":"))``),
        the steps already encoded by an earlier call reused."""
        objs, texts = self._encoded
        steps = self._steps
        same = 0
        for old, new in zip(objs, steps, strict=False):  # the steps may have grown or shrunk since
            if old is not new:
                break
            same += 1
        texts = texts[:same] + [json.dumps(_step_json(s), separators=(",", ":")) for s in steps[same:]]
        self._encoded = (list(steps), texts)
        data = self.snapshot(steps=False)
        head = json.dumps(data, separators=(",", ":"))
        # "steps" sits between "base" and "state" in snapshot(): splice the list in there
        cut = head.index(',"state":')
        return f'{head[:cut]},"steps":[{",".join(texts)}]{head[cut:]}'

    def snapshot(self, steps: bool = True) -> dict[str, Any]:
        """A JSON-able dict that ``restore`` reads back into an equal tracker."""
        state = self.state
        return {
            "v": SNAPSHOT_VERSION,
            "key": self.key,
            "server": self.server,
            "names": list(self.names),
            "length": self.length,
            "started": self.started.isoformat(),
            "watching": self.watching,
            "finished": self.finished,
            "note": self.record_note,
            "inferred": list(self.inferred),
            "crawford_rule": self.rules.crawford,
            "rules_note": self.rules_note,
            "base": None if self._base is None else {"score": list(self._base[0]), "crawford": self._base[1]},
            **({"steps": [_step_json(s) for s in self._steps]} if steps else {}),
            "state": state.gnubg_id if state else None,
            "state_extra": None
            if state is None
            else {
                "crawford": state.crawford,
                "declined": state.resignation_declined,
                "game": state.game_number,
            },
            "own": None
            if self._own is None
            else {"before": self._own.before.gnubg_id, **_action_json(self._own.action)},
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> MatchTracker:
        """The tracker a ``snapshot`` describes; TrackerError if it cannot be read."""
        try:
            if data.get("v") != SNAPSHOT_VERSION:
                raise TrackerError(f"snapshot version {data.get('v')!r} is not {SNAPSHOT_VERSION}")
            names = (str(data["names"][0]), str(data["names"][1]))
            tracker = cls(
                key=str(data["key"]),
                server=str(data["server"]),
                names=names,
                length=int(data["length"]),
                started=datetime.datetime.fromisoformat(data["started"]),
                watching=bool(data["watching"]),
            )
            tracker.finished = bool(data["finished"])
            tracker.record_note = str(data["note"])
            tracker.inferred = [str(x) for x in data.get("inferred", [])]
            if not data.get("crawford_rule", True):
                tracker.rules = _NO_CRAWFORD
            tracker.rules_note = str(data.get("rules_note", ""))
            if data["base"] is not None:
                tracker._base = (
                    (int(data["base"]["score"][0]), int(data["base"]["score"][1])),
                    bool(data["base"]["crawford"]),
                )
            tracker._steps = [_step_from_json(s) for s in data["steps"]]
            if data["state"]:
                extra = data["state_extra"] or {}
                state = MatchState.from_gnubg_id(data["state"], rules=FIBS_RULES, names=names)
                tracker.state = state.replace(
                    crawford=bool(extra.get("crawford", state.crawford)),
                    resignation_declined=int(extra.get("declined", 0)),
                    game_number=int(extra.get("game", 0)),
                )
            if data["own"] is not None:
                before = MatchState.from_gnubg_id(data["own"]["before"], rules=FIBS_RULES, names=names)
                tracker._own = _Own(before, _action_from_json(data["own"]))
        except TrackerError:
            raise
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise TrackerError(f"unreadable match snapshot: {exc!r}") from None
        try:
            tracker._rebuild()
        except EngineError as exc:
            tracker._builder = None
            tracker.record_note = f"the stored record does not replay: {exc}"
        if tracker.recording and tracker._builder is not None:
            built = tracker._builder.state
            if tracker.state is None or built.gnubg_id != tracker.state.gnubg_id:
                tracker.record_note = "the stored record and state disagree"
            else:
                tracker.state = built.replace(rules=FIBS_RULES)  # the record's rules are not the server's
        return tracker
