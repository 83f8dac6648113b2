"""One match at the embedded server, sans-I/O: the rules through ``MatchState`` (kept by a ``RecordBuilder``, so
the record is made as the match goes), the FIBS presentation (colours, absolute numbering, who sees what),
and nothing about sockets.

Each action method either raises ``TableRefusal`` (with the FIBS line for the player who tried) and changes
nothing, or changes the match and queues what everyone must see in ``out``: ``(target, text)`` pairs where
target 0/1 is a seat and 2/3 the watchers of seat 0/1, and ``text`` a ``BoardAt`` stands for a board drawn for
that target as the table stood when it was queued. The server turns them into bytes. Player preferences (the ``double``, ``autoboard``, ``moreboards``,
``automove`` toggles) come from the ``prefs`` callback, so a toggle changed mid-match counts at once.

FIBS presentation (../shared/reference/fibs-protocol.md 1.3-1.4): O moves 24->1 (colour 1, direction -1),
X moves 1->24; colours are random in the first game and switch every game; boards use absolute numbering.
"""

from __future__ import annotations

import datetime
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import notation
from engine.dice import DiceSource
from engine.errors import IllegalMoveError
from engine.ids import GameState
from engine.match import MAX_CUBE, GameResult, MatchState, ResignLevel, Rules
from engine.moves import Move, turn_plays
from engine.position import BAR
from engine.record import Action, ActionKind, GameRecord, MatchRecord, RecordBuilder, RecordError
from protocols.fibs import server as fs
from protocols.fibs.board import FibsBoard, Side
from protocols.fibs.server import Msg, render

Prefs = Callable[[int, str], bool]
WATCHERS = 2  # target 2 + seat: the watchers of that seat


@dataclass(frozen=True, slots=True)
class BoardAt:
    """A queued board: the match state and player 0's colour when it was queued. Drawn from the table as it
    is at delivery, a board after a move showed the roll that followed before the line that announced it."""

    state: MatchState
    colour0: int


Out = tuple[int, str | BoardAt]


class TableRefusal(ValueError):
    """An action the match does not allow now; ``line`` is the reply for the player who tried."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


class SavedMatchError(ValueError):
    """A saved match whose record does not replay to its stored position (``** ERROR: ... corrupt``)."""


def match_rules(length: int, crawford: bool) -> Rules:
    """FIBS has no Jacoby rule; beavers (FIBS redoubles) exist in unlimited matches only."""
    if length == 0:
        return Rules(crawford=False, jacoby=False, beavers=True)
    return Rules(crawford=crawford, jacoby=False, beavers=False)


class Table:
    """A match between seat 0 (the inviter) and seat 1 (the joiner)."""

    def __init__(
        self,
        match_id: str,
        names: tuple[str, str],
        length: int,
        dice: DiceSource,
        prefs: Prefs,
        *,
        crawford: bool = True,
        redoubles: int = 0,
        site: str = "",
        rng: random.Random | None = None,
        now: datetime.datetime | None = None,
    ) -> None:
        when = now or datetime.datetime.now(datetime.UTC)
        self.id = match_id
        self.names = names
        self.length = length
        self.dice = dice
        self.prefs = prefs
        self.redoubles = redoubles if length == 0 else 0
        self.rng = rng or random.Random()
        self.builder = RecordBuilder(
            length,
            names,
            match_rules(length, crawford),
            match_id=match_id,
            site=site,
            date=when.date(),
            time=when.time().replace(microsecond=0, tzinfo=None),
        )
        self.colours: list[int] = []  # player 0's colour in each game started
        # to_json_text's encodings, by the identity of the object encoded (kept with it, so an id is not reused)
        self._game_texts: dict[int, tuple[GameRecord, str]] = {}
        self._action_texts: dict[int, tuple[Action, str]] = {}
        self.joined: set[int] = set()  # who typed 'join' for the next game
        self.out: list[Out] = []

    def __repr__(self) -> str:
        return f"<Table {self.id} {self.names[0]}-{self.names[1]} {self.state.gnubg_id}>"

    # -- queries --------------------------------------------------------------------------------------------

    @property
    def state(self) -> MatchState:
        return self.builder.state

    @property
    def record(self) -> MatchRecord:
        return self.builder.record()

    @property
    def finished(self) -> bool:
        return self.state.match_over

    @property
    def in_game(self) -> bool:
        return self.state.game_state == GameState.PLAYING

    def seat_of(self, name: str) -> int | None:
        if name == self.names[0]:
            return 0
        if name == self.names[1]:
            return 1
        return None

    def colour(self, seat: int) -> int:
        """The seat's colour in the current (or last) game: 1 = O, -1 = X."""
        colour0 = self.colours[-1] if self.colours else 1
        return colour0 if seat == 0 else -colour0

    def board_at(self) -> BoardAt:
        """The table now, for a board drawn later."""
        return BoardAt(self.state, self.colour(0))

    def direction(self, seat: int) -> int:
        return -self.colour(seat)

    def score_for(self, seat: int) -> tuple[int, int]:
        s = self.state.score
        return (s[seat], s[1 - seat])

    def take(self) -> list[Out]:
        """The queued output, emptied. Of two boards for one target in one batch (the board after the
        opponent's move and the one after the roll that follows it at once) only the last is kept: one
        drawing per turn for a person at a terminal."""
        out, self.out = self.out, []
        last = {target: i for i, (target, text) in enumerate(out) if isinstance(text, BoardAt)}
        return [
            (target, text)
            for i, (target, text) in enumerate(out)
            if isinstance(text, str) or last[target] == i
        ]

    def board(self, seat: int, watcher: bool = False, at: BoardAt | None = None) -> str:
        """The ``board:`` line for ``seat`` (field 1 "You"), or as its watchers see it (field 1 its name), of
        the table now or as it was ``at`` a queued board."""
        return self.board_value(seat, watcher, at).line()

    def board_value(self, seat: int, watcher: bool = False, at: BoardAt | None = None) -> FibsBoard:
        """The board of ``board()`` as a value (for the drawn boards of boardstyle 1 and 2)."""
        state = self.state if at is None else at.state
        colour0 = self.colour(0) if at is None else at.colour0
        other = 1 - seat
        position = state.position if state.on_roll == seat else state.position.swap()
        playing = state.game_state == GameState.PLAYING
        on_roll = None if not playing else Side.PLAYER if state.on_roll == seat else Side.OPPONENT
        owner = None if state.cube_owner < 0 else Side.PLAYER if state.cube_owner == seat else Side.OPPONENT
        dice = state.dice if playing and state.dice[0] and not state.doubled else None
        return FibsBoard.from_engine(
            position,
            player=self.names[seat] if watcher else "You",
            opponent=self.names[other],
            match_length=self.length,
            score=(state.score[seat], state.score[other]),
            colour=colour0 if seat == 0 else -colour0,
            on_roll=on_roll,
            dice=dice,
            cube=state.cube,
            cube_owner=owner,
            double_pending=state.doubled and playing,
            post_crawford=state.is_post_crawford,
            redoubles=self.redoubles,
        )

    def pips(self, seat: int) -> tuple[int, int]:
        state = self.state
        position = state.position if state.on_roll == seat else state.position.swap()
        return position.pips()

    # -- output helpers -------------------------------------------------------------------------------------

    def _say(self, seat: int, *lines: str | None) -> None:
        """Queue ``lines`` for ``seat``; None is its board as the table stands now."""
        self.out.extend((seat, self.board_at() if line is None else line) for line in lines)

    def _watch(self, seat: int, *lines: str | None) -> None:
        self.out.extend((WATCHERS + seat, self.board_at() if line is None else line) for line in lines)

    def _all_watchers(self, *lines: str | None) -> None:
        for seat in (0, 1):
            self._watch(seat, *lines)

    def _board_if(self, seat: int, toggle: str = "autoboard") -> None:
        if self.prefs(seat, toggle):
            self._say(seat, None)

    # -- games ----------------------------------------------------------------------------------------------

    def start_game(self) -> None:
        """Start the next game: colours (random, then alternating), the opening roll, the first board."""
        if self.in_game:
            raise TableRefusal(render(Msg.CANNOT_PLAY_TWO_GAMES))
        if self.finished:
            raise TableRefusal(render(Msg.NOT_PLAYING))
        colour0 = self.rng.choice((1, -1)) if not self.colours else -self.colours[-1]
        names = self.names
        for seat in (0, 1):
            self._say(seat, render(Msg.STARTING_NEW_GAME, opponent=names[1 - seat]))
            self._watch(seat, render(Msg.STARTING_NEW_GAME, opponent=names[1 - seat]))
        while True:
            d0, d1 = self.dice.roll()  # one die each: (seat 0, seat 1)
            dice = (d0, d1)
            for seat in (0, 1):
                mine, theirs = dice[seat], dice[1 - seat]
                self._say(
                    seat,
                    render(
                        Msg.OPENING_ROLL,
                        first="You",
                        first_die=mine,
                        second=names[1 - seat],
                        second_die=theirs,
                    ),
                )
                self._watch(
                    seat,
                    render(
                        Msg.OPENING_ROLL,
                        first=names[seat],
                        first_die=mine,
                        second=names[1 - seat],
                        second_die=theirs,
                    ),
                )
            if d0 != d1:
                break
        self.joined.clear()
        self.colours.append(colour0)
        self.builder.start_game((d0, d1))
        first = self.state.on_roll
        self._say(first, render(Msg.YOUR_TURN_TO_MOVE), None)
        self._say(1 - first, render(Msg.MAKES_FIRST_MOVE, name=names[first]), None)
        self._all_watchers(render(Msg.MAKES_FIRST_MOVE, name=names[first]), None)

    def join_next(self, seat: int) -> None:
        """``join`` between games: the game starts when both have joined."""
        if self.in_game:
            raise TableRefusal(render(Msg.CANNOT_PLAY_TWO_GAMES))
        if self.finished:
            raise TableRefusal(render(Msg.NOT_PLAYING))
        self.joined.add(seat)
        if len(self.joined) == 2:
            self.start_game()
        else:
            self._say(seat, render(Msg.WAIT_FOR_JOIN, name=self.names[1 - seat]))

    def resume(self) -> None:
        """After a saved match was loaded: start the next game, or put the player to act back to work."""
        state = self.state
        if not self.in_game:
            self.start_game()
            return
        for seat in (0, 1):
            self._say(seat, None)
        self._all_watchers(None)
        if state.doubled:
            doubler = state.on_roll
            self._say(state.turn, fs.doubles(self.names[doubler], self._may_redouble(state.turn)))
        elif state.resigned:
            self._say(state.turn, render(Msg.WANTED_TO_RESIGN, name=self.names[1 - state.turn]))
        elif state.dice[0]:
            self._say(state.on_roll, fs.please_move(self._steps_needed()))
        else:
            self._begin_turn()

    # -- the turn -------------------------------------------------------------------------------------------

    def _begin_turn(self) -> None:
        """The player on roll either is asked to roll or double, or is rolled for (FIBS's autoroll)."""
        state = self.state
        seat = state.on_roll
        if state.may_double(seat) and self.prefs(seat, "double"):
            self._say(seat, render(Msg.ROLL_OR_DOUBLE))
        else:
            self._roll(seat)

    def _roll(self, seat: int) -> None:
        d1, d2 = self.dice.roll()
        self.builder.add_roll(seat, (d1, d2))
        name = self.names[seat]
        self._say(seat, render(Msg.YOU_ROLL, d1=d1, d2=d2))
        if self.prefs(seat, "moreboards") or self.prefs(seat, "autoboard"):
            self._say(seat, None)
        self._say(1 - seat, render(Msg.ROLLS, name=name, d1=d1, d2=d2))
        self._all_watchers(render(Msg.ROLLS, name=name, d1=d1, d2=d2), None)
        plays = turn_plays(self.state.position, (d1, d2))
        if len(plays) == 1 and not plays[0].move:
            self._say(seat, render(Msg.YOU_CANT_MOVE))
            self._say(1 - seat, render(Msg.CANT_MOVE, name=name))
            self._all_watchers(render(Msg.CANT_MOVE, name=name))
            self.builder.add_move(seat, Move())
            self._after_move(seat)
            return
        if len(plays) == 1 and self.prefs(seat, "automove"):
            text = notation.format_fibs(plays[0].move, self.direction(seat))
            self._say(seat, render(Msg.ONLY_POSSIBLE_MOVE, text=text))
            self._play(seat, plays[0].move, text)
            return
        self._say(seat, fs.please_move(len(plays[0].move)))

    def _steps_needed(self) -> int:
        state = self.state
        return len(turn_plays(state.position, state.dice)[0].move)

    def roll(self, seat: int) -> None:
        state = self._require_game(seat)
        self._require_nothing_pending(seat)
        if state.on_roll != seat:
            raise TableRefusal(render(Msg.NOT_YOUR_TURN_TO_ROLL))
        if state.dice[0]:
            raise TableRefusal(render(Msg.ALREADY_ROLLED))
        self._roll(seat)

    def move(self, seat: int, text: str) -> None:
        state = self._require_game(seat)
        self._require_nothing_pending(seat)
        if state.on_roll != seat:
            raise TableRefusal(render(Msg.NOT_YOUR_TURN_TO_MOVE))
        if not state.dice[0]:
            raise TableRefusal(render(Msg.ROLL_BEFORE_MOVING))
        direction = self.direction(seat)
        try:
            written = notation.parse_fibs(text, direction)
        except IllegalMoveError:
            raise TableRefusal(render(Msg.MOVE_SYNTAX, text=text.strip()[:60])) from None
        needed = self._steps_needed()
        if len(written) < needed:
            raise TableRefusal(render(Msg.MUST_GIVE_MOVES, count=needed))
        if len(written) > needed:
            raise TableRefusal(render(Msg.TOO_MANY_MOVES, count=needed))
        try:
            play = notation.parse_fibs_move_to_play(text, state.position, state.dice, direction)
        except IllegalMoveError:
            raise TableRefusal(diagnose_move(state, written, direction)) from None
        self._play(seat, play.move, notation.format_fibs(written, direction))

    def _play(self, seat: int, move: Move, text: str) -> None:
        self.builder.add_move(seat, move)
        name = self.names[seat]
        self._board_if(seat)
        self._say(1 - seat, render(Msg.MOVES, name=name, text=text))
        self._board_if(1 - seat)
        self._all_watchers(render(Msg.MOVES, name=name, text=text), None)
        self._after_move(seat)

    def _after_move(self, seat: int) -> None:
        if self.in_game:
            self._begin_turn()
        else:
            self._end_game()

    # -- the cube -------------------------------------------------------------------------------------------

    def double(self, seat: int) -> None:
        state = self._require_game(seat)
        other = 1 - seat
        self._require_nothing_pending(seat)
        if state.on_roll != seat:
            if state.dice[0]:
                raise TableRefusal(render(Msg.WAIT_UNTIL_MOVED, name=self.names[other]))
            raise TableRefusal(render(Msg.NOT_YOUR_TURN_TO_DOUBLE))
        if state.crawford:
            raise TableRefusal(render(Msg.CRAWFORD_NO_DOUBLE))
        if state.dice[0]:
            raise TableRefusal(render(Msg.DOUBLE_BEFORE_ROLL))
        if state.cube_owner == other:
            raise TableRefusal(render(Msg.OPPONENT_OWNS_CUBE))
        if state.cube >= MAX_CUBE:
            raise TableRefusal(render(Msg.CUBE_AT_MAXIMUM, value=state.cube))
        if not state.may_double(seat):
            raise TableRefusal(render(Msg.CUBE_DEAD))
        self.builder.add_double(seat)
        name = self.names[seat]
        self._say(seat, render(Msg.YOU_DOUBLE, opponent=self.names[other]))
        self._say(other, fs.doubles(name, self._may_redouble(other)))
        self._all_watchers(render(Msg.DOUBLES_WATCHER, name=name))

    def _may_redouble(self, seat: int) -> bool:
        state = self.state
        return (
            self.length == 0
            and self.redoubles > 0
            and state.doubled
            and not state.beavered
            and seat != (state.on_roll)
        )

    def redouble(self, seat: int) -> None:
        state = self._require_game(seat)
        if self.length != 0:
            raise TableRefusal(render(Msg.REDOUBLE_UNLIMITED_ONLY))
        if not (state.doubled and state.turn == seat):
            raise TableRefusal(
                render(Msg.NO_REDOUBLES_LEFT if state.doubled else Msg.NOT_YOUR_TURN_TO_DOUBLE)
            )
        if not self._may_redouble(seat) or state.cube * 4 > MAX_CUBE:
            raise TableRefusal(render(Msg.NO_REDOUBLES_LEFT))
        self.builder.add_beaver(seat)
        cube = self.state.cube  # the cube taken; the doubler is now offered twice that
        other = 1 - seat
        self._say(seat, render(Msg.YOU_ACCEPT_AND_REDOUBLE, cube=cube))
        self._say(other, render(Msg.REDOUBLES, name=self.names[seat], cube=cube * 2))
        self._all_watchers(render(Msg.DOUBLES_WATCHER, name=self.names[seat]))

    def accept(self, seat: int) -> None:
        state = self._require_game(seat)
        if state.turn != seat or not (state.doubled or state.resigned):
            raise TableRefusal(render(Msg.NOTHING_TO_ACCEPT))
        other, name = 1 - seat, self.names[seat]
        if state.resigned:
            self.builder.add_accept(seat)
            points = self.state.last_result.points if self.state.last_result else 0
            self._say(seat, fs.you_accept_and_win(points))
            self._say(other, fs.accepts_and_wins(name, points))
            self._all_watchers(fs.accepts_and_wins(name, points))
            self._end_game()
            return
        redoubled = state.beavered
        self.builder.add_take(seat)
        cube = self.state.cube
        if redoubled:
            self._say(seat, render(Msg.YOU_ACCEPT_REDOUBLE, cube=cube))
            self._say(other, render(Msg.ACCEPTS_REDOUBLE, name=name, cube=cube))
        else:
            self._say(seat, render(Msg.YOU_ACCEPT_DOUBLE, cube=cube))
            self._say(other, render(Msg.ACCEPTS_DOUBLE, name=name, cube=cube))
        self._all_watchers(render(Msg.ACCEPTS_DOUBLE_WATCHER, name=name))
        self._begin_turn()

    def reject(self, seat: int) -> None:
        state = self._require_game(seat)
        if state.turn != seat or not (state.doubled or state.resigned):
            raise TableRefusal(render(Msg.NOTHING_TO_REJECT))
        other, name = 1 - seat, self.names[seat]
        if state.resigned:
            self.builder.add_reject(seat)
            self._say(seat, render(Msg.YOU_REJECT_RESIGN))
            self._say(other, render(Msg.REJECTS_RESIGN, name=name))
            self._all_watchers(render(Msg.REJECTS_RESIGN, name=name))
            # FIBS often sends no board here, so clients ask for one; this server sends it.
            for s in (0, 1):
                self._board_if(s)
            if not self.state.dice[0]:
                self._begin_turn()
            return
        self.builder.add_drop(seat)
        result = self.state.last_result
        points = result.points if result else 0
        winner = self.names[other]
        self._say(seat, fs.gives_up("You", winner, points))
        self._say(other, fs.gives_up(name, "You", points))
        self._all_watchers(fs.gives_up(name, winner, points))
        self._end_game()

    # -- resignations ---------------------------------------------------------------------------------------

    def resign(self, seat: int, level: int) -> None:
        state = self._require_game(seat)
        other = 1 - seat
        if state.doubled:
            raise TableRefusal(render(Msg.RESIGN_REFUSED, reason="the double must be answered first"))
        if state.resigned:
            if state.turn == seat:
                raise TableRefusal(render(Msg.WANTED_TO_RESIGN, name=self.names[other]))
            raise TableRefusal(render(Msg.RESIGN_REFUSED, reason=f"wait for {self.names[other]} to answer"))
        if level <= state.resignation_declined:
            raise TableRefusal(render(Msg.RESIGN_REFUSED, reason="that offer was just rejected; offer more"))
        try:
            self.builder.add_resign(seat, level)
        except RecordError as exc:
            raise TableRefusal(render(Msg.RESIGN_REFUSED, reason=str(exc))) from None
        points = self.state.result_points(level)
        name = self.names[seat]
        self._say(seat, fs.you_want_to_resign(self.names[other], points))
        self._say(other, fs.wants_to_resign(name, points))
        self._all_watchers(fs.wants_to_resign_watcher(name, self.names[other], points))

    # -- game end -------------------------------------------------------------------------------------------

    def _end_game(self) -> None:
        state = self.state
        result = state.last_result
        assert result is not None
        winner, loser = result.winner, 1 - result.winner
        names = self.names
        if result.how == GameState.OVER:
            self._say(winner, fs.you_win_game(result.points))
            self._say(loser, fs.wins_game(names[winner], result.points))
            self._all_watchers(fs.wins_game_watcher(names[winner], result.points))
        self.joined.clear()
        if state.match_over:
            return  # the server adds ratings, the match result and the reports
        for seat in (0, 1):
            line = fs.match_score(
                self.length, names[seat], state.score[seat], names[1 - seat], state.score[1 - seat]
            )
            self._say(seat, line, render(Msg.JOIN_NEXT_GAME))
            self._watch(seat, line)

    # -- checks ---------------------------------------------------------------------------------------------

    def _require_game(self, seat: int) -> MatchState:
        if not self.in_game:
            raise TableRefusal(render(Msg.NOT_PLAYING))
        return self.state

    def _require_nothing_pending(self, seat: int) -> None:
        state = self.state
        if state.doubled or state.resigned:
            if state.turn == seat:
                raise TableRefusal(
                    fs.doubles(self.names[state.on_roll])
                    if state.doubled
                    else render(Msg.WANTED_TO_RESIGN, name=self.names[1 - seat])
                )
            raise TableRefusal(render(Msg.WAIT_FOR_ANSWER, name=self.names[state.turn]))

    # -- oldmoves -------------------------------------------------------------------------------------------

    def oldmoves(self, game_index: int = -1) -> list[str]:
        """FIBS ``oldmoves`` text of one game (default: the last one started)."""
        record = self.record
        if not record.games:
            return []
        index = game_index % len(record.games)
        colour0 = self.colours[index] if index < len(self.colours) else 1
        return oldmoves_text(record, index, colour0)

    # -- saving ---------------------------------------------------------------------------------------------

    def to_json(self, games: bool = True) -> dict[str, Any]:
        return {
            "version": 1,
            "id": self.id,
            "names": list(self.names),
            "length": self.length,
            "redoubles": self.redoubles,
            "colours": self.colours,
            "record": record_to_json(self.record, games),
        }

    def to_json_text(self) -> str:
        """``to_json()`` as compact JSON text, each finished game and each action encoded once. The server saves
        the match after every move: encoding the whole record each time was a third of its move command with
        200 matches at once, and grows with the match."""
        record = self.record
        games, actions = [], {}
        for game in record.games:
            if game.result is not None:  # finished: the builder keeps this very object
                hit = self._game_texts.get(id(game))
                if hit is None or hit[0] is not game:
                    hit = self._game_texts[id(game)] = (game, _compact(_game_json(game)))
                games.append(hit[1])
                continue
            for action in game.actions:  # the game in play: its actions are the builder's objects
                known = self._action_texts.get(id(action))
                actions[id(action)] = (
                    known
                    if known is not None and known[0] is action
                    else (action, _compact(_action_json(action)))
                )
            games.append(
                _splice(
                    _compact(_game_json(game, False)), "actions", [actions[id(a)][1] for a in game.actions]
                )
            )
        self._action_texts = actions
        return _splice(_compact(self.to_json(games=False)), "games", games)

    @classmethod
    def from_json(
        cls,
        data: dict[str, Any],
        gnubg_id: str,
        dice: DiceSource,
        prefs: Prefs,
        rng: random.Random | None = None,
    ) -> Table:
        """Rebuild a saved table by replaying its record; SavedMatchError unless it gives ``gnubg_id``."""
        try:
            record = record_from_json(data["record"])
            table = cls(
                str(data["id"]),
                (str(data["names"][0]), str(data["names"][1])),
                int(data["length"]),
                dice,
                prefs,
                crawford=record.rules.crawford,
                redoubles=int(data.get("redoubles", 0)),
                site=record.site,
                rng=rng,
            )
            table.builder = RecordBuilder(
                record.length,
                record.names,
                record.rules,
                match_id=record.match_id,
                site=record.site,
                date=record.date,
                time=record.time,
            )
            for game in record.games:
                table.builder.start_game(game.opening_roll)
                for action in game.actions:
                    table.builder.add(action)
            table.colours = [int(c) for c in data.get("colours", [])]
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise SavedMatchError(f"saved match cannot be read: {exc}") from None
        if table.state.gnubg_id != gnubg_id:
            raise SavedMatchError(f"saved match replays to {table.state.gnubg_id}, not {gnubg_id}")
        if len(table.colours) != len(record.games) or any(c not in (1, -1) for c in table.colours):
            raise SavedMatchError("saved match has no colour for every game")
        return table


def diagnose_move(state: MatchState, steps: Move, direction: int) -> str:
    """The FIBS error line for a move that is not legal: the first step that cannot be played as written."""

    def name(point: int) -> str:
        if point == 25:
            return "bar"
        if point == 0:
            return "off"
        return str(point if direction == -1 else 25 - point)

    me = list(state.position.me)
    opp = list(state.position.opp)
    d1, d2 = state.dice
    dice = [d1] * 4 if d1 == d2 else [d1, d2]
    for i, (src, dst) in enumerate(steps.steps):
        if me[BAR] and src != 25:
            return fs.remove_from_bar_first(i)
        if me[src - 1 if src != 25 else BAR] == 0:
            return fs.cant_move_from(name(src), i)
        if dst == 0:
            if any(me[6:BAR]) or me[BAR]:
                return fs.cant_remove_piece(i)
            higher = any(me[src:6])
            die = src if src in dice else next((d for d in sorted(dice) if d > src and not higher), None)
            if die is None:
                return fs.cant_remove_piece(i)
        else:
            die = src - dst
            if die not in dice:
                return fs.cant_move_points(die, i)
            if opp[24 - dst] >= 2:
                return fs.cant_move_to(name(dst), i)
        dice.remove(die)
        me[src - 1 if src != 25 else BAR] -= 1
        if dst:
            me[dst - 1] += 1
            if opp[24 - dst] == 1:
                opp[24 - dst] = 0
                opp[BAR] += 1
    first = steps.steps[0] if steps.steps else (0, 0)
    return fs.cant_move_points(first[0] - first[1] if first[1] else first[0], 0)


# -- oldmoves text ------------------------------------------------------------------------------------------


def oldmoves_text(record: MatchRecord, index: int, colour0: int) -> list[str]:
    """One game of ``record`` as FIBS ``oldmoves`` prints it (the grammar engine.formats.oldmoves reads)."""
    game = record.games[index]
    letters = ("O", "X") if colour0 == 1 else ("X", "O")
    directions = (-colour0, colour0)
    turns: list[tuple[str, str]] = []
    first = True
    for action in game.actions:
        letter = letters[action.player]
        kind = action.kind
        if kind == ActionKind.MOVE:
            assert action.dice is not None and action.move is not None
            a, b = action.dice
            if first:
                a, b = game.opening_roll[action.player], game.opening_roll[1 - action.player]
            text = (
                notation.format_fibs(action.move, directions[action.player]) if action.move else "can't move"
            )
            turns.append((letter, f"({a} {b}) {text}"))
            first = False
        elif kind == ActionKind.ROLL:
            assert action.dice is not None
            turns.append((letter, f"({action.dice[0]} {action.dice[1]})"))
            first = False
        elif kind in (ActionKind.DOUBLE, ActionKind.BEAVER):
            turns.append((letter, "doubles"))
        elif kind == ActionKind.TAKE:
            turns.append((letter, "accepts"))
        elif kind == ActionKind.DROP:
            turns.append((letter, "rejects"))
        elif kind == ActionKind.RESIGN:
            turns.append((letter, "wants to resign"))
    if game.result is not None:
        points = game.result.points
        turns.append((letters[game.result.winner], f"wins {points} point{'s' if points != 1 else ''}"))
    return fs.oldmoves_lines(record.length, game.score, record.names, letters, turns)


# -- the record as JSON -------------------------------------------------------------------------------------


def _action_json(action: Action) -> list[Any]:
    steps = [list(step) for step in action.move.steps] if action.move is not None else None
    return [
        action.player,
        str(action.kind),
        list(action.dice) if action.dice else None,
        steps,
        action.level,
        action.cube,
    ]


def _action_from_json(item: list[Any]) -> Action:
    player, kind, dice, steps, level, cube = item
    move = Move(tuple((int(a), int(b)) for a, b in steps)) if steps is not None else None
    return Action(
        int(player),
        ActionKind(kind),
        dice=(int(dice[0]), int(dice[1])) if dice else None,
        move=move,
        level=int(level),
        cube=int(cube),
    )


def record_to_json(record: MatchRecord, games: bool = True) -> dict[str, Any]:
    """A MatchRecord as plain JSON values (``record_from_json`` reads it back to an equal record); without
    ``games`` their list is None (``Table.to_json_text`` puts the encoded games there)."""
    return {
        "names": list(record.names),
        "length": record.length,
        "rules": [record.rules.crawford, record.rules.jacoby, record.rules.beavers],
        "match_id": record.match_id,
        "site": record.site,
        "date": record.date.isoformat() if record.date else None,
        "time": record.time.isoformat() if record.time else None,
        "games": [_game_json(g) for g in record.games] if games else None,
    }


def _game_json(g: GameRecord, actions: bool = True) -> dict[str, Any]:
    return {
        "score": list(g.score),
        "opening": list(g.opening_roll),
        "actions": [_action_json(a) for a in g.actions] if actions else None,
        "result": None
        if g.result is None
        else [g.result.winner, g.result.points, int(g.result.level), int(g.result.how)],
    }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _splice(text: str, key: str, items: list[str]) -> str:
    """``text`` (compact JSON holding ``"key":null`` once) with that null replaced by the list of ``items``."""
    placeholder = f'"{key}":null'
    assert text.count(placeholder) == 1, text
    return text.replace(placeholder, f'"{key}":[' + ",".join(items) + "]")


def record_from_json(data: dict[str, Any]) -> MatchRecord:
    """Read ``record_to_json`` output; SavedMatchError (or RecordError) naming what is malformed."""
    try:
        return _record_from_json(data)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise SavedMatchError(f"record JSON is malformed: {type(exc).__name__} {exc}") from None


def _record_from_json(data: dict[str, Any]) -> MatchRecord:
    games = []
    for g in data["games"]:
        result = g["result"]
        games.append(
            GameRecord(
                score=(int(g["score"][0]), int(g["score"][1])),
                opening_roll=(int(g["opening"][0]), int(g["opening"][1])),
                actions=tuple(_action_from_json(a) for a in g["actions"]),
                result=None
                if result is None
                else GameResult(int(result[0]), int(result[1]), ResignLevel(result[2]), GameState(result[3])),
            )
        )
    crawford, jacoby, beavers = (bool(x) for x in data["rules"])
    return MatchRecord(
        names=(str(data["names"][0]), str(data["names"][1])),
        length=int(data["length"]),
        rules=Rules(crawford=crawford, jacoby=jacoby, beavers=beavers),
        games=tuple(games),
        date=datetime.date.fromisoformat(data["date"]) if data.get("date") else None,
        time=datetime.time.fromisoformat(data["time"]) if data.get("time") else None,
        site=str(data.get("site", "")),
        match_id=str(data.get("match_id", "")),
    )
