"""The state of a match or money session as an immutable value, with the actions that move it on.

Terms are gnubg's: players 0 and 1; ``on_roll`` is the player on roll (the owner of the dice, gnubg's
fMove) and ``turn`` the player who must act now (fTurn), which differs from ``on_roll`` only while a double
or a resignation waits for an answer. ``position`` is always seen by the player on roll. Every action
returns a new state; an action the rules do not allow raises IllegalActionError and, the state being
immutable, changes nothing.

Where the rules leave room, gnubg 1.07 decides (checked against /usr/games/gnubg, see
tests/data/gnubg_match_ids.jsonl):

* A double is refused in the Crawford game, after rolling, by a player who does not own the cube, once the
  cube is at 4096 (gnubg's MAX_CUBE; the match ID would hold up to 2**15), and in match play when the cube
  is dead for the doubler, who would win the match on the present cube already (score + cube >= length:
  the leader post-Crawford, anyone in a 1-point match). A cube dead only for the taker may be turned.
* A beaver (money play, beavers on, once per double) doubles the cube, gives it to the beaverer and hands
  the decision back to the original doubler, who takes (the cube doubles again and stays with the
  beaverer) or drops (losing the beavered value).
* A game played out scores cube x 1/2/3; under the Jacoby rule in money play a gammon or backgammon
  counts single while the cube is centred. Resignations score cube x level, Jacoby or not; a drop scores
  the cube.
* After a resignation is declined, the same or a lower offer is refused until the next roll, move or
  cube action.
* Unlike gnubg, a player may not resign while a double waits for their answer (they take or drop).
* When a game ends, ``crawford`` already describes the *next* game (gnubg shows it so in the match ID).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from engine import ids
from engine.errors import EngineError, IllegalActionError, IllegalMoveError, InvalidIdError
from engine.ids import GameState, MatchKey
from engine.moves import Move, Play, Step, check_dice, find_play, legal_plays
from engine.position import BAR, Position

MAX_CUBE = 1 << 12  # gnubg refuses to double a cube of this value
MAX_MATCH_LENGTH = ids.MAX_SCORE

_FINISHED = (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)


class InvalidMatchStateError(EngineError):
    """Fields that cannot describe a real match state (a match score reached mid-game, dice while doubled)."""


class IllegalPlayError(IllegalActionError, IllegalMoveError):
    """A chequer play that is not legal with the dice: both an illegal action and an illegal move."""


class ResignLevel(IntEnum):
    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


@dataclass(frozen=True, slots=True)
class Rules:
    """Session rules. ``jacoby`` counts in money play only; gnubg switches it off for every match game and
    writes it to match-ID bit 66, so a match state read from a gnubg ID usually has it off."""

    crawford: bool = True
    jacoby: bool = True
    beavers: bool = True

    def __repr__(self) -> str:
        return _repr(self)


@dataclass(frozen=True, slots=True)
class GameResult:
    """How the last game ended: ``level`` as on the board or resigned (a drop is 1), ``points`` as scored."""

    winner: int
    points: int
    level: ResignLevel
    how: GameState  # OVER (played out), RESIGNED or DROPPED

    def __repr__(self) -> str:
        return _repr(self)


def _format_value(value: object) -> str:
    if isinstance(value, IntEnum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def _repr(obj: object) -> str:
    """``Name(field=value, ...)`` of the fields that differ from their defaults; evaluates back to ``obj``."""
    parts = []
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if f.default is not dataclasses.MISSING and value == f.default:
            continue
        if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
            continue
        parts.append(f"{f.name}={_format_value(value)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def _other(player: int) -> int:
    return 1 - player


@dataclass(frozen=True, slots=True)
class MatchState:
    """A match (``match_length`` > 0) or money session (0) at one moment. See the module docstring."""

    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    rules: Rules = field(default_factory=Rules)
    names: tuple[str, str] = ("player 0", "player 1")
    game_state: GameState = GameState.NONE
    position: Position = field(default_factory=Position.initial)
    on_roll: int = 0  # gnubg's fMove: the player on roll, who owns the dice
    turn: int = 0  # gnubg's fTurn: the player who must act now
    cube: int = 1
    cube_owner: int = -1  # -1 centred, else the player who holds it
    crawford: bool = False
    dice: tuple[int, int] = (0, 0)  # larger die first; (0, 0) before the roll
    doubled: bool = False
    beavered: bool = False
    resigned: int = 0  # level offered (while PLAYING) or accepted (once RESIGNED)
    resignation_declined: int = 0
    game_number: int = 0  # games started in this state's history; 0 when unknown (read from an ID)
    last_result: GameResult | None = None

    def __post_init__(self) -> None:
        try:
            d1, d2 = self.dice
            if d1 < d2:
                object.__setattr__(self, "dice", (d2, d1))
            object.__setattr__(self, "game_state", GameState(self.game_state))
            problem = self._inconsistency()
        except (TypeError, ValueError) as exc:  # fields of the wrong shape or type
            problem = f"malformed field: {exc}"
        if problem:
            raise InvalidMatchStateError(problem)

    def _inconsistency(self) -> str | None:
        if not isinstance(self.position, Position) or not isinstance(self.rules, Rules):
            return "position must be a Position and rules a Rules"
        if len(self.names) != 2 or not all(isinstance(n, str) for n in self.names):
            return f"names {self.names!r} are not two strings"
        length, (s0, s1) = self.match_length, self.score
        playing = self.game_state == GameState.PLAYING
        if not 0 <= length <= MAX_MATCH_LENGTH:
            return f"match length {length} is outside 0..{MAX_MATCH_LENGTH}"
        if min(s0, s1) < 0:
            return f"negative score {self.score}"
        if length and max(s0, s1) >= length and self.game_state not in _FINISHED:
            return (
                f"score {s0}-{s1} ends a {length}-point match, yet the game state is {self.game_state.name}"
            )
        if self.on_roll not in (0, 1) or self.turn not in (0, 1):
            return f"on_roll {self.on_roll} and turn {self.turn} must be 0 or 1"
        cube = self.cube
        if cube < 1 or cube & (cube - 1) or cube > 1 << 15:
            return f"cube value {cube} is not a power of two up to 32768"
        if self.cube_owner not in (-1, 0, 1):
            return f"cube owner {self.cube_owner} is not -1, 0 or 1"
        d1, d2 = self.dice
        if not ((d1 == d2 == 0) or (1 <= d1 <= 6 and 1 <= d2 <= 6)):
            return f"dice {self.dice} are neither both 0 nor both 1..6"
        if self.crawford:
            if not (length > 1 and self.rules.crawford):
                return "a Crawford game needs a match of 2 points or more under the Crawford rule"
            if length - 1 not in self.score:
                return f"a Crawford game at {s0}-{s1} of {length}, where nobody is 1-away"
            if playing and (cube != 1 or self.cube_owner != -1):
                return "the cube of the Crawford game stays centred at 1"
        if self.doubled and not playing:
            return "a double is pending outside a game"
        if self.doubled and d1:
            return "a double is pending after the dice were rolled"
        if self.beavered and not (self.doubled and length == 0):
            return "a beaver needs a pending double in money play"
        if self.doubled and (self.turn == self.on_roll) != (self.beavered or bool(self.resigned)):
            return "a pending double must be answered by the taker (or, after a beaver, by the doubler)"
        if not 0 <= self.resigned <= 3 or not 0 <= self.resignation_declined <= 3:
            return "resignation levels are 0..3"
        if self.resigned and self.game_state not in (GameState.PLAYING, GameState.RESIGNED):
            return f"a resignation in game state {self.game_state.name}"
        if self.game_state == GameState.RESIGNED and not self.resigned:
            return "a resigned game without the level resigned"
        if playing and self.turn != self.on_roll and not (self.doubled or self.resigned):
            return "the player to act differs from the player on roll with nothing to answer"
        if playing and self.position.is_over():
            return "a game in progress on a board where one side has borne off every chequer"
        return None

    # -- construction -------------------------------------------------------------------------------------

    @classmethod
    def new_match(
        cls, length: int, rules: Rules | None = None, names: tuple[str, str] = ("player 0", "player 1")
    ) -> MatchState:
        """A match (or, with length 0, a money session) before its first game."""
        if not isinstance(length, int) or not 0 <= length <= MAX_MATCH_LENGTH:
            raise InvalidMatchStateError(
                f"match length {length!r} is not an integer in 0..{MAX_MATCH_LENGTH}"
            )
        return cls(match_length=length, rules=rules or Rules(), names=names)

    @classmethod
    def new_session(
        cls, rules: Rules | None = None, names: tuple[str, str] = ("player 0", "player 1")
    ) -> MatchState:
        return cls.new_match(0, rules, names)

    def replace(self, **changes: object) -> MatchState:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    # -- queries --------------------------------------------------------------------------------------------

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def match_over(self) -> bool:
        return bool(self.match_length) and max(self.score) >= self.match_length

    @property
    def winner(self) -> int | None:
        """The player who has won the match, if it is over."""
        if not self.match_over:
            return None
        return 0 if self.score[0] >= self.match_length else 1

    @property
    def is_crawford(self) -> bool:
        """This is the Crawford game (once a game is over: the next one will be)."""
        return self.crawford

    @property
    def is_post_crawford(self) -> bool:
        """Past the Crawford game: someone is 1-away, this is not the Crawford game and the match goes on."""
        return (
            self.match_length > 1
            and self.rules.crawford
            and not self.crawford
            and not self.match_over
            and self.match_length - 1 in self.score
        )

    def away(self) -> tuple[int, int]:
        """Points each player still needs to win the match."""
        if self.is_money:
            raise IllegalActionError("a money session has no match length, so nobody is n-away")
        s0, s1 = self.score
        return max(0, self.match_length - s0), max(0, self.match_length - s1)

    def result_points(self, level: int) -> int:
        """Points a resignation at ``level`` (1 single, 2 gammon, 3 backgammon) is worth now: cube x level."""
        return self.cube * ResignLevel(_check_level(level))

    def may_double(self, player: int) -> bool:
        return self._double_refusal(player) is None

    def legal_plays(self) -> list[Play]:
        """Every legal play of the rolled dice, each with the position still seen by the player on roll."""
        self._require_to_move()
        return legal_plays(self.position, self.dice)

    # -- actions --------------------------------------------------------------------------------------------

    def new_game(self, opening_roll: Sequence[int]) -> MatchState:
        """Start the next game; ``opening_roll`` = (die of player 0, die of player 1). The higher die moves
        first and plays both dice; a doubled opening roll must be rolled again."""
        d0, d1 = check_dice(opening_roll)
        if self.game_state == GameState.PLAYING:
            raise IllegalActionError("a game is in progress: finish it before starting a new one")
        if self.match_over:
            raise IllegalActionError(f"the match is over at {self.score[0]}-{self.score[1]}")
        if d0 == d1:
            raise IllegalActionError(f"opening roll {d0}{d1} is a double: roll again")
        first = 0 if d0 > d1 else 1
        return self.replace(
            rules=self.rules if self.is_money else dataclasses.replace(self.rules, jacoby=False),
            game_state=GameState.PLAYING,
            position=Position.initial(),
            on_roll=first,
            turn=first,
            cube=1,
            cube_owner=-1,
            dice=(d0, d1),
            doubled=False,
            beavered=False,
            resigned=0,
            resignation_declined=0,
            game_number=self.game_number + 1,
        )

    def roll(self, dice: Sequence[int]) -> MatchState:
        self._require_playing("roll")
        self._require_nothing_pending("roll")
        if self.dice[0]:
            raise IllegalActionError(f"player {self.on_roll} has already rolled {self.dice[0]}{self.dice[1]}")
        return self.replace(dice=check_dice(dice), resignation_declined=0)

    def move(self, move: Move | Sequence[Step]) -> MatchState:
        """Play the rolled dice (the empty move when nothing is legal); bearing off the last chequer ends the
        game. IllegalPlayError when the move is not a legal play of the dice."""
        self._require_to_move()
        if not isinstance(move, Move):
            try:
                move = Move(tuple((int(a), int(b)) for a, b in move))
            except (TypeError, ValueError) as exc:
                raise IllegalPlayError(f"{move!r} is not a list of (from, to) steps: {exc}") from None
        try:
            play = find_play(self.position, self.dice, move)
        except IllegalMoveError as exc:
            raise IllegalPlayError(f"player {self.on_roll}: {exc}") from None
        after = play.position
        mover, other = self.on_roll, _other(self.on_roll)
        changes: dict[str, object] = dict(
            position=after.swap(), on_roll=other, turn=other, dice=(0, 0), resignation_declined=0
        )
        if any(after.me):
            return self.replace(**changes)
        level = _board_level(after)
        scored = 1 if self.is_money and self.rules.jacoby and self.cube_owner == -1 else level
        return self._end_game(mover, self.cube * scored, level, GameState.OVER, **changes)

    def double(self) -> MatchState:
        refusal = self._double_refusal(self.turn)
        if refusal:
            raise IllegalActionError(refusal)
        return self.replace(doubled=True, turn=_other(self.on_roll), resignation_declined=0)

    def take(self) -> MatchState:
        self._require_double("take")
        return self.replace(
            cube=self.cube * 2,
            cube_owner=_other(self.on_roll),
            doubled=False,
            beavered=False,
            turn=self.on_roll,
            resignation_declined=0,
        )

    def drop(self) -> MatchState:
        """Pass the double: the player to act gives up the game at the cube's present value."""
        self._require_double("drop")
        return self._end_game(
            _other(self.turn),
            self.cube,
            ResignLevel.SINGLE,
            GameState.DROPPED,
            doubled=False,
            beavered=False,
            resignation_declined=0,
        )

    def beaver(self) -> MatchState:
        """Take and at once redouble, keeping the cube; the doubler must then take or drop."""
        self._require_double("beaver")
        if not self.is_money:
            raise IllegalActionError("beavers are not allowed in match play")
        if not self.rules.beavers:
            raise IllegalActionError("beavers are off in this session")
        if self.beavered:
            raise IllegalActionError("this double has been beavered already")
        if self.cube * 2 >= MAX_CUBE:
            raise IllegalActionError(f"the cube would pass {MAX_CUBE}")
        return self.replace(
            cube=self.cube * 2,
            cube_owner=_other(self.on_roll),
            beavered=True,
            turn=self.on_roll,
            resignation_declined=0,
        )

    def resign(self, level: int) -> MatchState:
        """The player to act offers to lose the game at ``level`` (1 single, 2 gammon, 3 backgammon)."""
        level = _check_level(level)
        self._require_playing("resign")
        if self.doubled:
            raise IllegalActionError(f"player {self.turn} must take or drop the double, not resign")
        if self.resigned:
            raise IllegalActionError(f"player {_other(self.turn)} has a resignation waiting for an answer")
        if level <= self.resignation_declined:
            declined = ResignLevel(self.resignation_declined).name.lower()
            raise IllegalActionError(f"player {_other(self.turn)} has just declined a {declined} resignation")
        return self.replace(resigned=level, turn=_other(self.turn))

    def accept_resignation(self) -> MatchState:
        self._require_resignation("accept")
        level = ResignLevel(self.resigned)
        return self._end_game(self.turn, self.cube * level, level, GameState.RESIGNED, resignation_declined=0)

    def reject_resignation(self) -> MatchState:
        self._require_resignation("reject")
        return self.replace(resigned=0, resignation_declined=self.resigned, turn=_other(self.turn))

    def swap_players(self) -> MatchState:
        """The same state with players 0 and 1 exchanged (names, scores, cube, who is on roll)."""
        last = self.last_result
        return self.replace(
            score=self.score[::-1],
            names=self.names[::-1],
            on_roll=_other(self.on_roll),
            turn=_other(self.turn),
            cube_owner=-1 if self.cube_owner < 0 else _other(self.cube_owner),
            last_result=last and dataclasses.replace(last, winner=_other(last.winner)),
        )

    # -- gnubg IDs ------------------------------------------------------------------------------------------

    @property
    def match_key(self) -> MatchKey:
        return MatchKey(
            cube=self.cube,
            cube_owner=self.cube_owner,
            move=self.on_roll,
            crawford=self.crawford,
            game_state=self.game_state,
            turn=self.turn,
            doubled=self.doubled,
            resigned=self.resigned,
            dice=self.dice,
            match_length=self.match_length,
            score=self.score,
            jacoby=self.rules.jacoby,
        )

    @property
    def gnubg_id(self) -> str:
        """``POSITIONID:MATCHID`` as gnubg 1.07 writes it (its ``gnubgid`` and ``show gnubgid``)."""
        return f"{self.position.position_id}:{self.match_key.encode()}"

    @classmethod
    def from_gnubg_id(
        cls, text: str, rules: Rules | None = None, names: tuple[str, str] = ("player 0", "player 1")
    ) -> MatchState:
        """Read ``POSITIONID:MATCHID`` (or a lone position ID: a money game, player 0 to roll, cube centred).

        The IDs do not carry the Crawford and beaver rules (taken from ``rules``, default on), the names, a
        declined resignation or the game number. For a finished game ``last_result`` is rebuilt from the ID.
        """
        if not isinstance(text, str):
            raise InvalidIdError(f"a gnubg ID must be a string, not {type(text).__name__}")
        parts = text.strip().split(":")
        if len(parts) > 2:
            raise InvalidIdError(f"gnubg ID {text!r} has more than one ':'")
        position = Position.from_id(parts[0])
        key = MatchKey.decode(parts[1]) if len(parts) == 2 else MatchKey()
        rules = dataclasses.replace(rules or Rules(), jacoby=key.jacoby)
        if key.crawford:
            rules = dataclasses.replace(rules, crawford=True)
        beavered = key.doubled and key.turn == key.move and not key.resigned
        if beavered and key.match_length == 0:
            rules = dataclasses.replace(rules, beavers=True)
        try:
            state = cls(
                match_length=key.match_length,
                score=key.score,
                rules=rules,
                names=names,
                game_state=key.game_state,
                position=position,
                on_roll=key.move,
                turn=key.turn,
                cube=key.cube,
                cube_owner=key.cube_owner,
                crawford=key.crawford,
                dice=key.dice,
                doubled=key.doubled,
                beavered=beavered,
                resigned=key.resigned,
            )
        except InvalidMatchStateError as exc:
            raise InvalidIdError(f"gnubg ID {text!r}: {exc}") from None
        return state.replace(last_result=state._result_from_key())

    def _result_from_key(self) -> GameResult | None:
        if self.game_state == GameState.RESIGNED:
            level = ResignLevel(self.resigned)
            return GameResult(self.turn, self.cube * level, level, GameState.RESIGNED)
        if self.game_state == GameState.DROPPED:
            return GameResult(_other(self.turn), self.cube, ResignLevel.SINGLE, GameState.DROPPED)
        if self.game_state == GameState.OVER:
            # gnubg leaves the loser on roll with the board seen by the loser
            winner_view = self.position.swap()
            if any(winner_view.me):
                return None
            level = _board_level(winner_view)
            scored = 1 if self.is_money and self.rules.jacoby and self.cube_owner == -1 else level
            return GameResult(_other(self.on_roll), self.cube * scored, level, GameState.OVER)
        return None

    # -- internals ------------------------------------------------------------------------------------------

    def _end_game(
        self, winner: int, points: int, level: int, how: GameState, **changes: object
    ) -> MatchState:
        score = list(self.score)
        score[winner] += points
        length = self.match_length
        # gnubg (NextTurn): the game after the one that brings a player to 1-away is the Crawford game
        crawford = (
            length > 1
            and self.rules.crawford
            and not self.crawford
            and score[winner] == length - 1
            and score[_other(winner)] != length - 1
        )
        return self.replace(
            score=(score[0], score[1]),
            game_state=how,
            crawford=crawford,
            last_result=GameResult(winner, points, ResignLevel(level), how),
            **changes,
        )

    def _require_playing(self, action: str) -> None:
        if self.game_state != GameState.PLAYING:
            if self.match_over:
                raise IllegalActionError(f"cannot {action}: the match is over")
            raise IllegalActionError(f"cannot {action}: no game in progress ({self.game_state.name})")

    def _require_nothing_pending(self, action: str) -> None:
        if self.doubled:
            raise IllegalActionError(f"cannot {action}: player {self.turn} must first take or drop the cube")
        if self.resigned:
            raise IllegalActionError(f"cannot {action}: player {self.turn} must first answer the resignation")

    def _require_to_move(self) -> None:
        self._require_playing("move")
        self._require_nothing_pending("move")
        if not self.dice[0]:
            raise IllegalActionError(f"player {self.on_roll} must roll before moving")

    def _require_double(self, action: str) -> None:
        self._require_playing(action)
        if not self.doubled:
            raise IllegalActionError(f"cannot {action}: no double has been offered")
        if self.resigned:
            raise IllegalActionError(f"cannot {action}: player {self.turn} must first answer the resignation")

    def _require_resignation(self, action: str) -> None:
        self._require_playing(action)
        if not self.resigned:
            raise IllegalActionError(f"cannot {action}: no resignation has been offered")

    def _double_refusal(self, player: int) -> str | None:
        """Why ``player`` may not double now, or None if they may."""
        if self.game_state != GameState.PLAYING:
            return "cannot double: no game in progress"
        if self.doubled:
            return "the cube has been offered already"
        if self.resigned:
            return f"player {self.turn} must first answer the resignation"
        if player != self.on_roll or self.turn != self.on_roll:
            return f"player {player} is not on roll"
        if self.crawford:
            return "doubling is not allowed in the Crawford game"
        if self.dice[0]:
            return f"player {player} has rolled already: double before rolling"
        if self.cube_owner not in (-1, player):
            return f"player {player} does not own the cube"
        if self.cube >= MAX_CUBE:
            return f"the cube is at {self.cube} already, the most gnubg allows"
        if self.match_length and self.score[player] + self.cube >= self.match_length:
            return f"the cube is dead: player {player} wins the match with the cube at {self.cube}"
        return None

    def __repr__(self) -> str:
        return _repr(self)


def _check_level(level: int) -> int:
    if isinstance(level, bool) or level not in (1, 2, 3):
        raise IllegalActionError(
            f"resignation level {level!r} is not 1 (single), 2 (gammon) or 3 (backgammon)"
        )
    return int(level)


def _board_level(winner_view: Position) -> ResignLevel:
    """Single, gammon or backgammon for a board where the winner (``me``) has borne everything off."""
    loser = winner_view.opp
    if sum(loser) < 15:
        return ResignLevel.SINGLE
    # the winner's home board is the loser's points 19-24 (indices 18..23); the bar is index 24
    if any(loser[18:24]) or loser[BAR]:
        return ResignLevel.BACKGAMMON
    return ResignLevel.GAMMON
