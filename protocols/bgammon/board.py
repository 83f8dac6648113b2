"""The bgammon game state (``EventBoard``'s embedded ``GameState``) as a value, and its translation to and from
the engine's types.

Facts from tslocum/bgammon (``board.go``, ``game.go``, ``gamestate.go``, ``pkg/server/game.go``):

* The board has 28 spaces. Positive counts are player 1's chequers, negative player 2's. Player 1 moves from
  24 down to 1, bears off to space 0 and waits on the bar at 26; player 2 moves from 1 up to 24, bears off to
  25 and waits on the bar at 27 (its counts there are negative too).
* The server sends every player the board as player 1 sees it (``sendBoard`` flips it for player 2, and swaps
  the two players, ``Turn``, ``DoublePlayer`` and ``Winner``), so a client always reads itself as player 1:
  ``PlayerNumber`` is 1, its chequers are positive and its own numbering is the board's. Moves go out in that
  numbering too (the server flips them back). The one exception: ``Roll1``/``Roll2`` of the opening roll are
  only swapped for player 2 while one of them is still 0.
* ``Available`` lists the single steps (from, to) that may be played next, not whole plays.
* ``Crawford``: 0 pending, 1 this is the Crawford game, 2 after it. ``DoublePlayer`` 0 = centred cube.
* ``winPoints``: the server scores a game ended by resignation, by a declined double *or* by bearing off as a
  backgammon (3) when the loser has a chequer on the bar or in the winner's home board, else a gammon (2) when
  the loser has borne nothing off, else 1, times the cube. Unlike the usual rules, chequers already borne
  off do not save a backgammon, and resigning or declining counts the board as it stands (3 at the start).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import EngineError, InvalidPositionError
from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import Move
from engine.position import BAR, CHEQUERS, Position

__all__ = [
    "BAR_OPPONENT",
    "BAR_PLAYER",
    "HOME_OPPONENT",
    "HOME_PLAYER",
    "MAX_CUBE",
    "SPACES",
    "BgammonBoardError",
    "BoardState",
    "PlayerInfo",
    "bgammon_rules",
    "move_from_steps",
    "spaces_of",
    "step_texts",
    "win_level",
]

SPACES = 28
HOME_PLAYER, HOME_OPPONENT, BAR_PLAYER, BAR_OPPONENT = 0, 25, 26, 27
MAX_CUBE = 64  # gamestate.go MayDouble: no double once the cube is at 64


class BgammonBoardError(EngineError):
    """A bgammon game state that cannot describe a real board, or a move that does not fit it."""


def bgammon_rules() -> Rules:
    """The rules bgammon plays: Crawford on, no Jacoby, no beavers (it plays matches only)."""
    return Rules(crawford=True, jacoby=False, beavers=False)


def _int(data: Mapping[str, Any], key: str, low: int, high: int, default: int | None = 0) -> int:
    value = data.get(key, default)
    if value is None and default is not None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BgammonBoardError(f"{key}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise BgammonBoardError(f"{key}: {value} is outside {low}..{high}")
    return value


def _bool(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BgammonBoardError(f"{key}: expected true or false, got {value!r}")
    return value


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BgammonBoardError(f"{key}: expected a string, got {value!r}")
    return value


def _pairs(data: Mapping[str, Any], key: str) -> tuple[tuple[int, int], ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise BgammonBoardError(f"{key}: expected a list of [from, to] pairs, got {value!r}")
    out = []
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < SPACES for s in pair)
        ):
            raise BgammonBoardError(f"{key}: {pair!r} is not a [from, to] pair of spaces 0..27")
        out.append((pair[0], pair[1]))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    """``bgammon.Player``: 1 = black (the receiving client), 2 = white."""

    number: int = 0
    name: str = ""
    rating: int = 0
    points: int = 0
    entered: bool = True
    inactive: int = 0
    icon: int = 0

    @classmethod
    def from_json(cls, data: object, where: str) -> PlayerInfo:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise BgammonBoardError(f"{where}: expected an object, got {data!r}")
        try:
            return cls(
                number=_int(data, "Number", 0, 2),
                name=_str(data, "Name"),
                rating=_int(data, "Rating", -(2**31), 2**31),
                points=_int(data, "Points", 0, 127),
                entered=_bool(data, "Entered") if "Entered" in data else True,
                inactive=_int(data, "Inactive", 0, 2**62),
                icon=_int(data, "Icon", 0, 2**31),
            )
        except BgammonBoardError as exc:
            raise BgammonBoardError(f"{where}.{exc}") from None

    def to_json(self) -> dict[str, Any]:
        return {
            "Number": self.number,
            "Name": self.name,
            "Rating": self.rating,
            "Points": self.points,
            "Entered": self.entered,
            "Inactive": self.inactive,
            "Icon": self.icon,
        }


_INITIAL = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class BoardState:
    """``bgammon.GameState`` as the receiving client sees it (see the module docstring for the layout)."""

    board: tuple[int, ...] = _INITIAL
    turn: int = 0  # 0: the opening roll; 1: the receiving client; 2: the opponent
    roll1: int = 0
    roll2: int = 0
    roll3: int = 0
    moves: tuple[tuple[int, int], ...] = ()  # steps played so far this turn, not yet confirmed with "ok"
    winner: int = 0
    points: int = 1  # the match length
    crawford: int = 0
    double_value: int = 1
    double_player: int = 0
    double_offered: bool = False
    player1: PlayerInfo = PlayerInfo(1)
    player2: PlayerInfo = PlayerInfo(2)
    variant: int = 0
    started: int = 0
    ended: int = 0
    reroll: bool = False
    player_number: int = 1
    available: tuple[tuple[int, int], ...] = ()
    forced: bool = False
    spectating: bool = False

    def __post_init__(self) -> None:
        if len(self.board) != SPACES:
            raise BgammonBoardError(f"Board: expected {SPACES} spaces, got {len(self.board)}")
        mine = sum(n for n in self.board if n > 0)
        theirs = -sum(n for n in self.board if n < 0)
        if mine > CHEQUERS or theirs > CHEQUERS:
            raise BgammonBoardError(f"Board: {mine} and {theirs} chequers, at most {CHEQUERS} a side")
        if self.board[BAR_PLAYER] < 0 or self.board[BAR_OPPONENT] > 0:
            raise BgammonBoardError("Board: a chequer of the wrong side on a bar")
        if self.board[HOME_PLAYER] < 0 or self.board[HOME_OPPONENT] > 0:
            raise BgammonBoardError("Board: a chequer of the wrong side borne off")

    # -- JSON ------------------------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BoardState:
        """Read the fields of a ``board`` event (Go's field names); BgammonBoardError names a bad field."""
        raw_board = data.get("Board")
        if not isinstance(raw_board, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and -CHEQUERS <= n <= CHEQUERS for n in raw_board
        ):
            raise BgammonBoardError(f"Board: expected {SPACES} chequer counts in -15..15, got {raw_board!r}")
        return cls(
            board=tuple(raw_board),
            turn=_int(data, "Turn", 0, 2),
            roll1=_int(data, "Roll1", 0, 6),
            roll2=_int(data, "Roll2", 0, 6),
            roll3=_int(data, "Roll3", 0, 6),
            moves=_pairs(data, "Moves"),
            winner=_int(data, "Winner", 0, 2),
            points=_int(data, "Points", 1, 127, default=1),
            crawford=_int(data, "Crawford", 0, 2),
            double_value=_int(data, "DoubleValue", 1, 127, default=1),
            double_player=_int(data, "DoublePlayer", 0, 2),
            double_offered=_bool(data, "DoubleOffered"),
            player1=PlayerInfo.from_json(data.get("Player1"), "Player1"),
            player2=PlayerInfo.from_json(data.get("Player2"), "Player2"),
            variant=_int(data, "Variant", 0, 2),
            started=_int(data, "Started", 0, 2**62),
            ended=_int(data, "Ended", 0, 2**62),
            reroll=_bool(data, "Reroll"),
            player_number=_int(data, "PlayerNumber", 0, 2, default=1),
            available=_pairs(data, "Available"),
            forced=_bool(data, "Forced"),
            spectating=_bool(data, "Spectating"),
        )

    def to_json(self) -> dict[str, Any]:
        """The fields in Go's order (``Game``, then ``GameState``); nil slices as null, like encoding/json."""
        return {
            "Started": self.started,
            "Ended": self.ended,
            "Player1": self.player1.to_json(),
            "Player2": self.player2.to_json(),
            "Variant": self.variant,
            "Board": list(self.board),
            "Turn": self.turn,
            "Roll1": self.roll1,
            "Roll2": self.roll2,
            "Roll3": self.roll3,
            "Moves": [list(m) for m in self.moves] or None,
            "Winner": self.winner,
            "Points": self.points,
            "Crawford": self.crawford,
            "DoubleValue": self.double_value,
            "DoublePlayer": self.double_player,
            "DoubleOffered": self.double_offered,
            "Reroll": self.reroll,
            "PlayerNumber": self.player_number,
            "Available": [list(m) for m in self.available] or None,
            "Forced": self.forced,
            "Spectating": self.spectating,
        }

    def replace(self, **changes: object) -> BoardState:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    # -- views -----------------------------------------------------------------------------------------------

    @property
    def score(self) -> tuple[int, int]:
        """(the receiving client's points, the opponent's)."""
        return self.player1.points, self.player2.points

    @property
    def dice(self) -> tuple[int, int]:
        return self.roll1, self.roll2

    @property
    def rolled(self) -> bool:
        """Dice are on the board for the player to move (the opening roll done, both dice set)."""
        return self.turn != 0 and self.roll1 != 0 and self.roll2 != 0

    @property
    def opponent_present(self) -> bool:
        return bool(self.player2.name)

    @property
    def my_opening_die(self) -> int:
        """The receiving client's die of the opening roll, 0 before rolling (see the module docstring)."""
        return self.roll1

    def position(self, player: int = 1) -> Position:
        """The board as an engine Position seen by ``player`` (1: the receiving client, 2: the opponent)."""
        if player not in (1, 2):
            raise BgammonBoardError(f"player {player!r} is not 1 or 2")
        b = self.board
        mine = [0] * 25
        theirs = [0] * 25
        for space in range(1, 25):
            n = b[space]
            if n > 0:
                mine[space - 1] = n
            elif n < 0:
                theirs[24 - space] = -n  # my space s is the opponent's point 25 - s
        mine[BAR] = b[BAR_PLAYER]
        theirs[BAR] = -b[BAR_OPPONENT]
        try:
            pos = Position(mine, theirs)
        except InvalidPositionError as exc:
            raise BgammonBoardError(f"Board: {exc}") from None
        return pos if player == 1 else pos.swap()

    def may_double(self) -> bool:
        """gamestate.go ``MayDouble`` for the receiving client."""
        if self.spectating or self.winner or self.variant != 0 or self.double_value >= MAX_CUBE:
            return False
        if self.crawford == 1:
            return False
        return (
            self.points != 1
            and self.turn == 1
            and self.roll1 == 0
            and not self.double_offered
            and self.double_player in (0, 1)
        )

    def match_state(self, names: tuple[str, str] | None = None) -> MatchState:
        """The engine's MatchState: player 0 = the receiving client, player 1 = the opponent.

        Before the opening roll is decided (``Turn`` 0) no game is in progress; once a winner is set the game
        is over. During a turn the position includes the steps played so far (``moves``).
        """
        names = names or (self.player1.name or "player 0", self.player2.name or "player 1")
        on_roll = 0 if self.turn != 2 else 1
        playing = self.turn != 0 and not self.winner
        if self.winner:
            state = GameState.OVER
        elif playing:
            state = GameState.PLAYING
        else:
            state = GameState.NONE
        position = self.position(1 if on_roll == 0 else 2)
        doubled = playing and self.double_offered
        dice = self.dice if playing and self.rolled and not doubled else (0, 0)
        try:
            return MatchState(
                match_length=self.points,
                score=self.score,
                rules=bgammon_rules(),
                names=names,
                game_state=state,
                position=position,
                on_roll=on_roll,
                turn=1 - on_roll if doubled else on_roll,
                cube=self.double_value,
                cube_owner={0: -1, 1: 0, 2: 1}[self.double_player],
                crawford=self.crawford == 1 and self.points > 1 and self.points - 1 in self.score,
                dice=dice,
                doubled=doubled,
            )
        except EngineError as exc:
            raise BgammonBoardError(f"game state does not fit the engine's rules: {exc}") from None


def spaces_of(position: Position) -> tuple[int, ...]:
    """The 28 spaces of ``position`` as its player on roll sees them in bgammon (the inverse of
    ``BoardState.position(1)``): ``me`` positive, borne-off counts at 0 (mine) and 25 (theirs, negative)."""
    b = [0] * SPACES
    for i in range(24):
        if position.me[i]:
            b[i + 1] = position.me[i]
        if position.opp[i]:
            b[24 - i] = -position.opp[i]
    b[BAR_PLAYER] = position.me[BAR]
    b[BAR_OPPONENT] = -position.opp[BAR]
    off_me, off_opp = position.off
    b[HOME_PLAYER] = off_me
    b[HOME_OPPONENT] = -off_opp
    return tuple(b)


def step_texts(move: Move) -> tuple[str, ...]:
    """A move in the mover's engine numbering as bgammon ``move`` arguments: ``24/18``, ``bar/22``, ``6/off``.

    The receiving client's numbering is the engine's (1..24, moving down), so only the bar and off change.
    """
    return tuple(f"{'bar' if src == 25 else src}/{'off' if dst == 0 else dst}" for src, dst in move.steps)


def move_from_steps(steps: Sequence[tuple[int, int]], mover: int) -> Move:
    """Steps of a ``moved`` event (the receiving client's spaces) as an engine Move in the mover's numbering.

    ``mover`` 1 is the receiving client (26 = bar, 0 = off); 2 the opponent, whose steps run upwards from 27
    (its bar) to 25 (off) and whose own point is 25 minus the space.
    """
    out = []
    for src, dst in steps:
        if mover == 1:
            a = 25 if src == BAR_PLAYER else src
            b = 0 if dst == HOME_PLAYER else dst
            ok = 1 <= src <= 24 or src == BAR_PLAYER
            ok = ok and 0 <= dst <= 24
        elif mover == 2:
            a = 25 if src == BAR_OPPONENT else 25 - src
            b = 0 if dst == HOME_OPPONENT else 25 - dst
            ok = (1 <= src <= 24 or src == BAR_OPPONENT) and 1 <= dst <= 25
        else:
            raise BgammonBoardError(f"mover {mover!r} is not 1 or 2")
        if not ok or not 0 <= b < a <= 25:
            raise BgammonBoardError(f"step {src}/{dst} is not a forward move of player {mover}")
        out.append((a, b))
    try:
        return Move(tuple(out))
    except EngineError as exc:
        raise BgammonBoardError(str(exc)) from None


def win_level(winner_view: Position) -> int:
    """How bgammon's ``winPoints`` scores a game won now by ``winner_view.me`` (before the cube): 3 when the
    loser has a chequer on the bar or in the winner's home board, 2 when the loser has borne off none, else 1.
    Applies to games played out, resigned and dropped alike (see the module docstring)."""
    loser = winner_view.opp
    if loser[BAR] or any(loser[18:24]):  # the winner's points 1-6 are the loser's 19-24
        return 3
    if sum(loser) == CHEQUERS:
        return 2
    return 1
