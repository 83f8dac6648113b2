"""Follow one bgammon match through the events a player receives and build its engine ``MatchRecord``.

bgammon shows a turn step by step (each ``move`` command is echoed with a board holding the steps played so
far) and passes the turn on ``ok``, so a turn is read whole: the board where a player's dice first appear
gives the start, the first board with the other player to act (or, for the last move of a game, the last
board before ``win``) gives the end, and the play is the legal play of those dice between the two positions.
Doubles are read from ``DoubleOffered`` and ``DoubleValue``; ``win`` with ``Resigned`` set ends a game by a
resignation or a declined double.

bgammon scores a resignation, a declined double and sometimes a game played out differently from the usual
rules (board.py, ``win_level``). A record can only hold what the engine's rules give, so such an ending is
written as a resignation at the level bgammon scored (a declined double then shows as the doubler winning that
many points without the double; a bear-off scored as a backgammon shows the last roll unplayed): the scores
stay right and every game replays. bgammon also lets a player double a dead cube (one that already wins him
the match), which the engine, gnubg and .mat refuse: taken, it is left out, and the record ends with the same
winner but fewer points over the length (``_dead_for``). ``notes`` list each such liberty and become the
record's comment. Anything else the tracker cannot follow (a missed turn, a score that differs from the
server's) stops the record; ``error`` then says why, and what was recorded up to there still replays.

Players: 0 is the receiving client (bgammon's player 1 in its own view), 1 the opponent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.errors import EngineError
from engine.ids import GameState
from engine.match import MatchState
from engine.moves import Move, _try_steps, legal_plays
from engine.position import BAR, CHEQUERS, Position
from engine.record import Action, ActionKind, MatchRecord, RecordBuilder, starting_state
from protocols.bgammon import events as ev
from protocols.bgammon.board import BgammonBoardError, BoardState, bgammon_rules, move_from_steps, win_level

__all__ = ["SNAPSHOT_VERSION", "MatchTracker"]

SNAPSHOT_VERSION = 1


class _JournalBuilder(RecordBuilder):
    """A RecordBuilder that keeps each call that changed it, so that a snapshot can replay them (after a
    restart the record goes on from where it stopped)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ops: list[Any] = []

    def start_game(self, opening_roll: tuple[int, int]) -> MatchState:
        state = super().start_game(opening_roll)
        self.ops.append(["start", list(opening_roll)])
        return state

    def add(self, action: Action) -> MatchState:
        state = super().add(action)  # an illegal action raises before anything is kept
        self.ops.append(_action_json(action))
        return state


def _action_json(a: Action) -> list[Any]:
    move = None if a.move is None else [list(step) for step in a.move.steps]
    return [a.kind.value, a.player, None if a.dice is None else list(a.dice), move, a.level, a.cube]


def _action_from_json(op: list[Any]) -> Action:
    kind, player, dice, move, level, cube = op
    return Action(
        int(player),
        ActionKind(kind),
        dice=None if dice is None else (int(dice[0]), int(dice[1])),
        move=None if move is None else Move(tuple((int(s), int(d)) for s, d in move)),
        level=int(level),
        cube=int(cube),
    )


@dataclass(frozen=True, slots=True)
class _Turn:
    player: int  # 0 us, 1 the opponent
    start: Position  # seen by the mover
    dice: tuple[int, int]


def _bg(player: int) -> int:
    """Our player number (0/1) as the board's (1/2)."""
    return player + 1


def _standard_level(winner_view: Position) -> int:
    """The usual rules' single/gammon/backgammon (as MatchState scores a game played out)."""
    loser = winner_view.opp
    if sum(loser) < CHEQUERS:
        return 1
    return 3 if loser[BAR] or any(loser[18:24]) else 2


class MatchTracker:
    """Feed every event of one match with ``on_event``; ``record()`` gives the record so far.

    ``names`` are (ours, the opponent's) as the server shows them; ``info`` goes to the MatchRecord (site,
    match_id, date, time, event ...). Recording starts at the first board between games (at once for a new
    match; after the current game when joined in the middle of one).
    """

    def __init__(self, names: tuple[str, str], length: int, **info: object) -> None:
        self.names = names
        self.length = length
        self._info = info
        self._builder: RecordBuilder | None = None
        self._turn: _Turn | None = None
        self._doubler: int | None = None  # a double offered and not yet answered
        self._dead_takes = 0  # doubles taken this game that the engine refuses as dead (see _dead_for)
        self._last: BoardState | None = None
        self.error: str | None = None
        self.games_seen = 0
        self.notes: list[str] = []  # what the record could not show as it happened
        self._base: tuple[int, int] | None = None  # the score where the record begins

    def __repr__(self) -> str:
        state = "stopped" if self.error else ("complete" if self.complete else "recording")
        return f"<MatchTracker {self.names[0]} vs {self.names[1]} {self.length}p {state}>"

    # -- results ---------------------------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """The match is over and every game of it from the first one recorded replays."""
        return self.error is None and self._builder is not None and self._builder.state.match_over

    @property
    def state(self) -> MatchState | None:
        return None if self._builder is None else self._builder.state

    def record(self) -> MatchRecord | None:
        """The record so far, with ``notes`` as its comment."""
        if self._builder is None:
            return None
        record = self._builder.record()
        return record.replace(comment="\n".join(self.notes)) if self.notes else record

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able dict that ``restore`` reads back into a tracker that goes on where this one is: the
        record so far (as the calls that built it), the turn under way, a double not yet answered."""
        turn = self._turn
        builder = self._builder
        return {
            "v": SNAPSHOT_VERSION,
            "names": list(self.names),
            "length": self.length,
            "info": self._info,
            "base": None if self._base is None else list(self._base),
            "ops": [] if not isinstance(builder, _JournalBuilder) else builder.ops,
            "turn": None
            if turn is None
            else [turn.player, turn.start.position_id, turn.dice[0], turn.dice[1]],
            "doubler": self._doubler,
            "dead_takes": self._dead_takes,
            "error": self.error,
            "games_seen": self.games_seen,
            "notes": self.notes,
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> MatchTracker:
        """The tracker a ``snapshot`` describes; BgammonBoardError if it cannot be read or replayed."""
        try:
            if data.get("v") != SNAPSHOT_VERSION:
                raise BgammonBoardError(f"snapshot version {data.get('v')!r} is not {SNAPSHOT_VERSION}")
            names = (str(data["names"][0]), str(data["names"][1]))
            tracker = cls(names, int(data["length"]), **dict(data["info"]))
            if data["base"] is not None:
                base = (int(data["base"][0]), int(data["base"][1]))
                state = starting_state(tracker.length, bgammon_rules(), names, base)
                builder = _JournalBuilder.from_state(state, **tracker._info)
                for op in data["ops"]:
                    if op[0] == "start":
                        builder.start_game((int(op[1][0]), int(op[1][1])))
                    else:
                        builder.add(_action_from_json(op))
                tracker._builder, tracker._base = builder, base
            if data["turn"] is not None:
                player, position_id, d1, d2 = data["turn"]
                tracker._turn = _Turn(int(player), Position.from_id(str(position_id)), (int(d1), int(d2)))
            doubler = data["doubler"]
            tracker._doubler = None if doubler is None else int(doubler)
            tracker._dead_takes = int(data["dead_takes"])
            tracker.error = None if data["error"] is None else str(data["error"])
            tracker.games_seen = int(data["games_seen"])
            tracker.notes = [str(n) for n in data["notes"]]
        except BgammonBoardError:
            raise
        except (EngineError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise BgammonBoardError(f"unreadable match snapshot: {exc!r}") from None
        return tracker

    # -- events ----------------------------------------------------------------------------------------------

    def on_event(self, event: ev.BgammonEvent) -> None:
        if self.error is not None:
            return
        try:
            if isinstance(event, ev.Board) and not event.state.spectating:
                self._on_board(event.state)
            elif isinstance(event, ev.Win):
                self._on_win(event)
        except (EngineError, BgammonBoardError) as exc:
            self._stop(str(exc))

    def _stop(self, why: str) -> None:
        if self.error is None:
            self.error = why

    def _player(self, bg_number: int) -> int:
        return bg_number - 1

    def _on_board(self, b: BoardState) -> None:
        builder = self._builder
        if builder is None:
            if b.turn == 0 and not b.winner:
                state = starting_state(self.length, bgammon_rules(), self.names, b.score)
                self._builder = _JournalBuilder.from_state(state, **self._info)
                self._base = b.score
                if b.score != (0, 0):
                    self.notes.append(f"the record begins at {b.score[0]}-{b.score[1]}, where it was joined")
            self._last = b
            return
        if not builder.in_game:
            self._check_score(b)
            if b.turn != 0 and not b.winner:
                self._start_game(builder, b)
            self._last = b
            return
        if b.turn == 0:
            if not self._end_unseen(builder, b):
                self._stop("a new game began before the last one was seen to end")
                return
            self._check_score(b)
            self._last = b
            return
        if b.winner:  # the last move of a game was played; ``win`` follows
            self._last = b
            return
        acting = self._player(b.turn)
        if self._turn is not None and self._turn.player != acting:
            # after a restart the first board of the next turn may already show some of its steps (played while
            # the bot was down before reading the board that passed the turn): the turn ended under them
            end = b.position(_bg(self._turn.player))
            self._finish_turn(builder, self._under_steps(self._turn, b) if b.moves else end)
        elif self._turn is not None and (not b.rolled or b.dice != self._turn.dice):
            self._stop(f"missed a whole turn of {self.names[1 - acting]} (no board of it was read)")
            return
        if not b.double_offered and self._doubler is None and self._missed_take(builder, b, acting):
            self._doubler = acting  # offered and taken while nothing was read (a restart): recorded below
        if b.double_offered and self._doubler is None:
            self._doubler = acting
        elif not b.double_offered and self._doubler is not None:
            doubler, self._doubler = self._doubler, None
            if builder.state.may_double(doubler) or not self._dead_for(doubler):
                builder.add_double(doubler)  # the engine's refusal, if any, stops the record
                builder.add_take(1 - doubler)
            else:
                self._dead_takes += 1
                self.notes.append(
                    f"game {self.games_seen}: {self.names[doubler]}'s double to {b.double_value}, taken, is left out: "
                    "the cube was dead for the doubler, which bgammon allows and .mat cannot show"
                )
            if builder.state.cube << self._dead_takes != b.double_value:
                self._stop(f"the cube is {b.double_value} on the server, {builder.state.cube} in the record")
                return
        if self._turn is None and b.rolled and not b.double_offered:
            start = b.position(b.turn)
            if b.moves:
                # the board where these dice appeared was missed (lost with a connection, or a process killed
                # before reading it): the turn began where the record stands; the play found at its end
                # (``_find_move``) checks that
                state = builder.state
                if state.on_roll != acting or state.turn != acting or state.dice[0]:
                    self._stop("missed the start of a turn (steps already played)")
                    return
                start = state.position
            self._turn = _Turn(acting, start, (b.roll1, b.roll2))
        self._last = b

    def _end_unseen(self, builder: RecordBuilder, b: BoardState) -> bool:
        """The game ended while nothing was read (the bot stopped just then, and the server went on to the next
        game): the server's score says who won and how many points. A double of the winner that was waiting was
        dropped, or the winner's turn under way bore off the last chequers; True when the record ends the game
        so, with the points the server scored. Anything else is left unexplained (False)."""
        state = builder.state
        gain = (b.score[0] - state.score[0], b.score[1] - state.score[1])
        if min(gain) != 0 or max(gain) <= 0 or self._dead_takes:
            return False
        winner, points, cube = (0 if gain[0] else 1), max(gain), state.cube
        loser = 1 - winner
        turn = self._turn
        if self._doubler == winner and turn is None:
            level = win_level(state.position if state.on_roll == winner else state.position.swap())
            if level * cube != points:
                return False
            if level == 1 and state.may_double(winner):
                builder.add_double(winner)
                builder.add_drop(loser)
            else:
                builder.add_resign(loser, level)
                builder.add_accept(winner)
        elif self._doubler is None and turn is not None and turn.player == winner:
            ends = [p for p in legal_plays(turn.start, turn.dice) if not sum(p.position.me)]
            if not ends or any(p.position != ends[0].position for p in ends):
                return False
            end = ends[0].position
            level = win_level(end)
            if level * cube != points:
                return False
            if level == _standard_level(end):
                builder.add_move(winner, ends[0].move, turn.dice)
            else:  # bgammon's own scoring, as in _on_win
                builder.add_roll(winner, turn.dice)
                builder.add_resign(loser, level)
                builder.add_accept(winner)
        else:
            return False
        self._turn = None
        self._doubler = None
        self.notes.append(
            f"game {self.games_seen}: its end was not seen (the bot was away); read from the score"
        )
        return builder.state.game_state != GameState.PLAYING

    def _missed_take(self, builder: RecordBuilder, b: BoardState, acting: int) -> bool:
        """The cube is twice the record's, the doubler (on roll in the record, dice not yet rolled) to act: the
        boards of the offer and the take were missed (events lost with a connection or a killed process)."""
        state = builder.state
        return (
            b.double_value == (state.cube << self._dead_takes) * 2
            and self._turn is None
            and state.turn == acting
            and state.on_roll == acting
            and not state.dice[0]
        )

    def _dead_for(self, doubler: int) -> bool:
        """bgammon lets a player double when the cube is dead for him (the present cube already wins him the
        match: at double match point, or the leader after the Crawford game); gnubg and the engine do not. Such
        a double changes the score only when the taker wins; the record leaves it out (a drop becomes a
        resignation of the same points), and ``_check_score`` accepts a final score that differs above the
        match length, the winner being the same."""
        state = self._builder.state if self._builder else None
        return bool(state and state.match_length and state.score[doubler] + state.cube >= state.match_length)

    def _check_score(self, b: BoardState) -> None:
        assert self._builder is not None
        state = self._builder.state
        server_over = b.points and max(b.score) >= b.points
        if state.match_over and server_over and b.score.index(max(b.score)) == state.winner:
            return
        if state.score != b.score:
            mine = state.score
            self._stop(
                f"the score is {b.score[0]}-{b.score[1]} on the server, {mine[0]}-{mine[1]} in the record"
            )

    def _start_game(self, builder: RecordBuilder, b: BoardState) -> None:
        if not b.rolled or b.roll1 == b.roll2:
            self._stop(f"a game started without a valid opening roll ({b.roll1}{b.roll2})")
            return
        first = self._player(b.turn)
        high, low = max(b.dice), min(b.dice)
        state = builder.start_game((high, low) if first == 0 else (low, high))
        if state.crawford != (b.crawford == 1):
            self._stop(f"the Crawford game is {'on' if b.crawford == 1 else 'off'} on the server")
            return
        start = b.position(b.turn)
        if b.moves or start != Position.initial():
            self._stop("joined a game after its opening roll was played")
            return
        self.games_seen += 1
        self._turn = _Turn(first, start, (b.roll1, b.roll2))
        self._doubler = None
        self._dead_takes = 0

    def _find_move(self, turn: _Turn, end: Position) -> Move:
        for play in legal_plays(turn.start, turn.dice):
            if play.position == end:
                return play.move
        raise BgammonBoardError(
            f"no legal play of {turn.dice[0]}{turn.dice[1]} leads from {turn.start.position_id} to {end.position_id}"
        )

    def _under_steps(self, turn: _Turn, b: BoardState) -> Position:
        """The end of ``turn`` (seen by its mover) on a board of the next turn that shows steps of it already
        played: the one play of ``turn`` from whose end those steps lead to the board (bgammon's ``Moves`` say
        nothing of hits, so they are played forward from each candidate, never taken back)."""
        mover, acting = _bg(turn.player), b.turn
        steps = move_from_steps(b.moves, acting)
        now = b.position(acting)
        # the steps played literally (no dice check), a blot hit where one lands: None where one cannot be made
        ends = {
            play.position
            for play in legal_plays(turn.start, turn.dice)
            if _try_steps(play.position.swap(), steps) == now
        }
        if len(ends) != 1:
            raise BgammonBoardError(
                f"the end of {self.names[turn.player]}'s turn ({turn.dice[0]}{turn.dice[1]} from "
                f"{turn.start.position_id}) is hidden under {len(steps)} step(s) of the next turn: "
                f"{len(ends)} plays fit {b.position(mover).position_id}"
            )
        return ends.pop()

    def _finish_turn(self, builder: RecordBuilder, end: Position) -> None:
        assert self._turn is not None
        turn, self._turn = self._turn, None
        builder.add_move(turn.player, self._find_move(turn, end), turn.dice)

    def _on_win(self, w: ev.Win) -> None:
        builder, last = self._builder, self._last
        if builder is None:
            return
        if not builder.in_game or last is None:
            self._stop("a game ended that the record did not see start")
            return
        if w.player not in self.names:
            self._stop(f"the winner {w.player!r} is not a player of this match")
            return
        winner = self.names.index(w.player)
        loser = 1 - winner
        cube = builder.state.cube
        if w.resigned:
            level = win_level(last.position(_bg(winner)))
            if self._doubler is not None:
                if level == 1 and builder.state.may_double(self._doubler):
                    builder.add_double(self._doubler)
                    builder.add_drop(loser)
                else:
                    self.notes.append(
                        f"game {self.games_seen}: the double declined is written as a resignation of the "
                        f"{level * cube} points bgammon scored for it"
                    )
                    builder.add_resign(loser, level)
                    builder.add_accept(winner)
            else:
                if self._turn is not None:
                    builder.add_roll(self._turn.player, self._turn.dice)
                builder.add_resign(loser, level)
                builder.add_accept(winner)
        else:
            turn = self._turn
            if turn is None or turn.player != winner:
                self._stop("a game was won without the winner's last move")
                return
            end = last.position(_bg(winner))
            move = self._find_move(turn, end)
            level = win_level(end)
            if level == _standard_level(end):
                builder.add_move(winner, move, turn.dice)
            else:  # bgammon's own scoring (see the module docstring)
                builder.add_roll(winner, turn.dice)
                builder.add_resign(loser, level)
                builder.add_accept(winner)
        self._turn = None
        self._doubler = None
        if builder.state.game_state == GameState.PLAYING:
            self._stop("the game did not end in the record")
        elif w.points and w.points != level * (cube << self._dead_takes):
            self._stop(f"the server scored {w.points} points, the record {level * cube}")
