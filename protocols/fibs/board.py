"""FIBS ``board:`` lines (CLIP ``boardstyle 3``): the 53 fields, their quirks, and the engine's view of them.

Field numbers follow the CLIP spec (0 = the word ``board``). The facts this module relies on, with the
sources in ../shared/reference/fibs-protocol.md section 1.3:

* Cells 6..31 hold absolute positions 0..25; the sign is the colour (O positive, X negative), whoever "You"
  is. A player's own point for absolute position p is p when the direction (field 42) is -1, else 25 - p; the
  opponent moves the other way. Colour and direction are read from every board, never cached: FIBS swaps
  sides at every new game.
* Bar counts come from fields 47/48. Servers disagree about cells 0/25 (FIBS and BaldLies put X's bar in
  cell 0 and O's in cell 25, JIBS put O's in cell 0), so a cell is only read - by its sign - when the field
  says 0, which is what gnubg's own external-player boards do.
* While a double is pending FIBS negates the turn (field 32 then names the side that must answer) and sends 0
  for both may-double flags; field 40 ("was doubled") is 1 on the answering side's board where a server sets
  it.
* Fields 49 (can move) and 50 (forced move) are not reset by FIBS and are kept only as data. Field 51 is
  "post-Crawford" on FIBS (not "did Crawford"); it is consulted only to tell the Crawford game from a
  post-Crawford game once the scores put exactly one side 1-away, and a caller that follows the match passes
  ``crawford=`` itself.

Perspectives: the *player* is the side named in field 1 - "You" (the bot) when playing, the watched player
when watching. ``position_for_me()`` is that player's view, whoever is on roll; ``position_on_roll()`` is the
view of the side on roll (the doubler while a double is pending), which is the view a gnubg position ID takes.
``match_key()`` makes field 1 ("You") gnubg's player 1 and the opponent player 0, as gnubg does when it hosts
a match against an external player, so scores and cube ownership keep their numbers from turn to turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from engine.errors import EngineError
from engine.ids import GameState, MatchKey
from engine.moves import legal_plays
from engine.position import BAR, CHEQUERS, Position

UNLIMITED = 9999  # FIBS's match length for an unlimited (money) match
FIELD_COUNT = 53

FIELD_NAMES: tuple[str, ...] = (
    "board",
    "player",
    "opponent",
    "match_length",
    "player_score",
    "opponent_score",
    *(f"cell {i}" for i in range(26)),
    "turn",
    "player_die_1",
    "player_die_2",
    "opponent_die_1",
    "opponent_die_2",
    "cube",
    "player_may_double",
    "opponent_may_double",
    "was_doubled",
    "colour",
    "direction",
    "home",
    "bar",
    "player_off",
    "opponent_off",
    "player_bar",
    "opponent_bar",
    "can_move",
    "forced_move",
    "did_crawford",
    "redoubles",
)
assert len(FIELD_NAMES) == FIELD_COUNT

_INT = re.compile(r"-?\d{1,6}")
_NUMBERS = re.compile(r"-?\d{1,6}(?::-?\d{1,6}){49}")  # fields 3..52 at once: the common case is fast
_GLUED_TAIL = re.compile(r"(-?\d)(.+)", re.DOTALL)


class BoardParseError(ValueError):
    """A ``board:`` line that cannot be read; ``field`` is the CLIP field number at fault (None: the line)."""

    def __init__(self, message: str, field: int | None = None) -> None:
        self.field = field
        if field is not None:
            message = f"board field {field} ({FIELD_NAMES[field]}): {message}"
        super().__init__(message)


class Side(StrEnum):
    """One of the two sides of a board: the player named in field 1 or the opponent named in field 2."""

    PLAYER = "player"
    OPPONENT = "opponent"

    def other(self) -> Side:
        return Side.OPPONENT if self is Side.PLAYER else Side.PLAYER


@dataclass(frozen=True, slots=True)
class FibsBoard:
    """The 53 fields of a ``board:`` line, as sent (``turn`` still negated while a double is pending)."""

    player: str
    opponent: str
    match_length: int  # 9999 = unlimited
    player_score: int
    opponent_score: int
    cells: tuple[int, ...]  # 26 absolute positions 0..25, O positive, X negative
    turn: int  # colour on turn: 1 = O, -1 = X, 0 = nobody (between games)
    player_dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    player_may_double: int
    opponent_may_double: int
    was_doubled: int
    colour: int  # the player's colour: 1 = O, -1 = X
    direction: int  # the player's direction: -1 = 24 -> 1, 1 = 1 -> 24
    home: int
    bar: int
    player_off: int
    opponent_off: int
    player_bar: int
    opponent_bar: int
    can_move: int  # not to be trusted on FIBS
    forced_move: int  # not to be trusted on FIBS
    did_crawford: int  # post-Crawford flag on FIBS, see the module docstring
    redoubles: int
    _me: Position = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.player, 1)
        _check_name(self.opponent, 2)
        if self.match_length < 1:
            raise BoardParseError(f"{self.match_length} is not a match length", 3)
        for index, score in ((4, self.player_score), (5, self.opponent_score)):
            if score < 0:
                raise BoardParseError(f"negative score {score}", index)
        if len(self.cells) != 26:
            raise BoardParseError(f"expected 26 cells, got {len(self.cells)}", None)
        for i, count in enumerate(self.cells):
            if abs(count) > CHEQUERS:
                raise BoardParseError(f"{count} chequers on one point", 6 + i)
        if self.turn not in (-1, 0, 1):
            raise BoardParseError(f"{self.turn} is not -1, 0 or 1", 32)
        for first, dice in ((33, self.player_dice), (35, self.opponent_dice)):
            for k, die in enumerate(dice):
                if not 0 <= die <= 6:
                    raise BoardParseError(f"die {die} is not 0..6", first + k)
            if (dice[0] == 0) != (dice[1] == 0):
                raise BoardParseError(f"dice {dice[0]}:{dice[1]} are half rolled", first)
        if self.cube < 1:
            raise BoardParseError(f"cube {self.cube} is below 1", 37)
        if self.colour not in (-1, 1):
            raise BoardParseError(f"{self.colour} is not -1 (X) or 1 (O)", 41)
        if self.direction not in (-1, 1):
            raise BoardParseError(f"{self.direction} is not -1 or 1", 42)
        for index, value in (
            (45, self.player_off),
            (46, self.opponent_off),
            (47, self.player_bar),
            (48, self.opponent_bar),
        ):
            if not 0 <= value <= CHEQUERS:
                raise BoardParseError(f"{value} is not a chequer count 0..15", index)
        try:
            me = self._build_position()
        except EngineError as exc:
            raise BoardParseError(f"the chequers do not form a position: {exc}", None) from None
        object.__setattr__(self, "_me", me)

    # -- parsing and rendering ------------------------------------------------------------------------------

    @classmethod
    def parse(cls, line: str) -> FibsBoard:
        """Read one complete ``board:`` line (no glued tail; see ``split_board_line``)."""
        board, rest = split_board_line(line)
        if rest:
            raise BoardParseError(f"unexpected text after field 52: {rest[:40]!r}", 52)
        return board

    def line(self) -> str:
        """The ``board:`` line for these fields (what ``parse`` reads back to an equal value)."""
        values = (
            self.match_length,
            self.player_score,
            self.opponent_score,
            *self.cells,
            self.turn,
            *self.player_dice,
            *self.opponent_dice,
            self.cube,
            self.player_may_double,
            self.opponent_may_double,
            self.was_doubled,
            self.colour,
            self.direction,
            self.home,
            self.bar,
            self.player_off,
            self.opponent_off,
            self.player_bar,
            self.opponent_bar,
            self.can_move,
            self.forced_move,
            self.did_crawford,
            self.redoubles,
        )
        return ":".join(("board", self.player, self.opponent, *(str(v) for v in values)))

    def __repr__(self) -> str:
        return f"FibsBoard.parse({self.line()!r})"

    def __str__(self) -> str:
        return self.line()

    @classmethod
    def from_engine(
        cls,
        position: Position,
        *,
        opponent: str,
        player: str = "You",
        match_length: int = 0,
        score: tuple[int, int] = (0, 0),
        colour: int = 1,
        on_roll: Side | None = Side.PLAYER,
        dice: tuple[int, int] | None = None,
        cube: int = 1,
        cube_owner: Side | None = None,
        double_pending: bool = False,
        post_crawford: bool = False,
        redoubles: int = 0,
    ) -> FibsBoard:
        """The board FIBS would send ``player`` for ``position`` (seen by ``player``, whoever is on roll).

        ``match_length`` 0 is an unlimited match; ``score`` is (player, opponent); ``colour`` is the
        player's (FIBS: O = 1 moves 24 -> 1, X = -1 moves 1 -> 24); ``on_roll`` is the side whose turn it is,
        the doubler while ``double_pending``; ``dice`` that side's roll; ``on_roll=None`` is the pause between
        games.
        """
        if colour not in (-1, 1):
            raise BoardParseError(f"{colour} is not -1 (X) or 1 (O)", 41)
        if double_pending and on_roll is None:
            raise BoardParseError("a pending double needs the doubler on roll", 32)
        if double_pending and dice is not None:
            raise BoardParseError("a double comes before the roll: no dice while it is pending", 33)
        direction = -colour
        cells = [0] * 26
        for i in range(24):
            mine, theirs = position.me[i], position.opp[23 - i]  # both on my point i + 1
            absolute = i + 1 if direction < 0 else 24 - i
            cells[absolute] = colour * (mine - theirs)
        # Real FIBS keeps X's bar in cell 0 and O's in cell 25, signed by colour.
        my_bar, their_bar = position.me[BAR], position.opp[BAR]
        o_bar, x_bar = (my_bar, their_bar) if colour == 1 else (their_bar, my_bar)
        cells[25], cells[0] = o_bar, -x_bar

        turn_side = on_roll.other() if (double_pending and on_roll is not None) else on_roll
        turn = 0 if turn_side is None else (colour if turn_side is Side.PLAYER else -colour)
        roll = (0, 0) if dice is None or on_roll is None else (int(dice[0]), int(dice[1]))
        player_dice = roll if on_roll is Side.PLAYER else (0, 0)
        opponent_dice = roll if on_roll is Side.OPPONENT else (0, 0)
        if double_pending:
            may = (0, 0)
        elif cube_owner is None:
            may = (1, 1)
        else:
            may = (1, 0) if cube_owner is Side.PLAYER else (0, 1)
        can_move = 0
        if on_roll is Side.PLAYER and roll != (0, 0) and not double_pending:
            can_move = len(legal_plays(position, roll)[0].move)
        off = position.off
        return cls(
            player=player,
            opponent=opponent,
            match_length=match_length or UNLIMITED,
            player_score=score[0],
            opponent_score=score[1],
            cells=tuple(cells),
            turn=turn,
            player_dice=player_dice,
            opponent_dice=opponent_dice,
            cube=cube,
            player_may_double=may[0],
            opponent_may_double=may[1],
            was_doubled=int(double_pending and on_roll is Side.OPPONENT),
            colour=colour,
            direction=direction,
            home=0 if direction < 0 else 25,
            bar=25 if direction < 0 else 0,
            player_off=off[0],
            opponent_off=off[1],
            player_bar=my_bar,
            opponent_bar=their_bar,
            can_move=can_move,
            forced_move=0,
            did_crawford=int(post_crawford),
            redoubles=redoubles,
        )

    # -- derived values -------------------------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        """True when field 1 names a watched player rather than "You"."""
        return self.player != "You"

    @property
    def unlimited(self) -> bool:
        return self.match_length == UNLIMITED

    def _side_of_colour(self, colour: int) -> Side | None:
        if colour == 0:
            return None
        return Side.PLAYER if colour == self.colour else Side.OPPONENT

    @property
    def double_pending(self) -> bool:
        """A double awaits an answer: field 40 set, or FIBS's 0/0 may-double flags with a turn and no dice."""
        if self.turn == 0:
            return False
        if self.was_doubled:
            return True
        no_dice = self.player_dice == (0, 0) and self.opponent_dice == (0, 0)
        return no_dice and not self.player_may_double and not self.opponent_may_double

    @property
    def to_act(self) -> Side | None:
        """The side that must act now: the one to roll or move, or the one to answer a pending double."""
        if self.turn == 0:
            return None
        if self.was_doubled:
            return Side.PLAYER  # field 40 is set on the doubled side's board, whatever the turn's sign
        return self._side_of_colour(self.turn)

    @property
    def on_roll(self) -> Side | None:
        """The side whose turn it is and who owns the dice: the doubler while a double is pending."""
        side = self.to_act
        if side is None:
            return None
        return side.other() if self.double_pending else side

    @property
    def dice(self) -> tuple[int, int] | None:
        """The roll of the side on roll, or None before it has rolled."""
        side = self.on_roll
        if side is None:
            return None
        roll = self.player_dice if side is Side.PLAYER else self.opponent_dice
        return None if roll == (0, 0) else roll

    @property
    def cube_owner(self) -> Side | None:
        """Owner of a turned cube (None: centred, or flags that say nothing)."""
        if self.cube == 1:
            return None
        if self.double_pending:
            return self.on_roll  # a redouble: only the owner can double a turned cube
        if self.player_may_double and not self.opponent_may_double:
            return Side.PLAYER
        if self.opponent_may_double and not self.player_may_double:
            return Side.OPPONENT
        return None

    @property
    def crawford(self) -> bool:
        """One board's best guess: exactly one side 1-away and FIBS's post-Crawford flag (field 51) clear."""
        if self.unlimited:
            return False
        player_away = self.match_length - self.player_score
        opponent_away = self.match_length - self.opponent_score
        if (player_away == 1) == (opponent_away == 1):
            return False
        return not self.did_crawford

    def _build_position(self) -> Position:
        me = [0] * 25
        opp = [0] * 25
        for absolute in range(1, 25):
            value = self.cells[absolute] * self.colour
            own = absolute if self.direction < 0 else 25 - absolute
            if value > 0:
                me[own - 1] = value
            elif value < 0:
                opp[24 - own] = -value  # the opponent's own point is 25 - own
        edge = (self.cells[0], self.cells[25])
        me[BAR] = self.player_bar or sum(max(0, c * self.colour) for c in edge)
        opp[BAR] = self.opponent_bar or sum(max(0, -c * self.colour) for c in edge)
        return Position(me, opp)

    def position_for_me(self) -> Position:
        """The position seen by the player of field 1 ("You"), whoever is on roll."""
        return self._me

    def position_on_roll(self) -> Position:
        """The position seen by the side on roll (the player's own view between games)."""
        return self._me.swap() if self.on_roll is Side.OPPONENT else self._me

    def match_key(self, crawford: bool | None = None, me: int = 1) -> MatchKey:
        """gnubg's match-ID fields with field 1 ("You") as gnubg player ``me`` (default 1).

        ``crawford`` overrides the one-board guess (see ``crawford``). Unlimited matches become money sessions
        without the Jacoby rule (FIBS has none); a match longer than gnubg's 64 points raises InvalidIdError.
        gnubg's ``external`` command numbers the side to act as player 1: ``me=1`` if ``to_act`` is the
        player, else 0, reproduces the IDs it prints.
        """
        if me not in (0, 1):
            raise ValueError(f"gnubg player number {me} is not 0 or 1")
        gnubg = {Side.PLAYER: me, Side.OPPONENT: 1 - me, None: -1}
        on_roll = self.on_roll or Side.PLAYER
        to_act = self.to_act or Side.PLAYER
        return MatchKey(
            cube=self.cube,
            cube_owner=gnubg[self.cube_owner],
            move=gnubg[on_roll],
            crawford=(self.crawford if crawford is None else crawford) and not self.unlimited,
            game_state=GameState.PLAYING if self.turn else GameState.OVER,
            turn=gnubg[to_act],
            doubled=self.double_pending,
            dice=_larger_first(self.dice),
            match_length=0 if self.unlimited else self.match_length,
            score=(self.opponent_score, self.player_score)
            if me
            else (self.player_score, self.opponent_score),
            jacoby=not self.unlimited,
        )

    @property
    def position_id(self) -> str:
        """gnubg's position ID: the view of the side on roll."""
        return self.position_on_roll().position_id

    @property
    def match_id(self) -> str:
        return self.match_key().encode()


def _larger_first(dice: tuple[int, int] | None) -> tuple[int, int]:
    # gnubg keeps the larger die first in its match state, so its IDs show 6-2 whichever die FIBS sent first.
    if dice is None:
        return (0, 0)
    return (max(dice), min(dice))


def _check_name(name: str, index: int) -> None:
    if not name or any(c.isspace() or c == ":" for c in name):
        raise BoardParseError(f"{name!r} is not a player name", index)


def board_text_and_tail(line: str) -> tuple[list[str], str]:
    """The 53 fields of a ``board:`` line and the text glued after field 52 (FIBS does this).

    Field 52 is then taken as a single digit: ``...:0:05 anotherplayer - - ...`` is redoubles 0 followed by
    ``5 anotherplayer - - ...``, and ``...:0:06`` is redoubles 0 followed by ``6``. Only the shape is checked.
    """
    if not line.startswith("board:"):
        raise BoardParseError(f"a board line starts with 'board:', not {line[:20]!r}", 0)
    parts = line.split(":", FIELD_COUNT - 1)
    if len(parts) < FIELD_COUNT:
        raise BoardParseError(f"missing: the line has only {len(parts)} of {FIELD_COUNT} fields", len(parts))
    last = parts[-1]
    rest = ""
    # No server writes a leading zero, so "06" is redoubles 0 with a CLIP 6 glued on.
    if not _INT.fullmatch(last) or (len(last) > 1 and last.startswith("0")):
        m = _GLUED_TAIL.fullmatch(last)
        if m is None:
            raise BoardParseError(f"{last[:20]!r} is not an integer", 52)
        parts[-1], rest = m.group(1), m.group(2)
    return parts, rest


def split_board_line(line: str) -> tuple[FibsBoard, str]:
    """Read a ``board:`` line that may have the next server line glued on: (board, glued text or "")."""
    parts, rest = board_text_and_tail(line)
    numbers = parts[3:]
    if not _NUMBERS.fullmatch(":".join(numbers)):
        for i, text in enumerate(numbers, start=3):
            if not _INT.fullmatch(text):
                raise BoardParseError(f"{text[:20]!r} is not an integer", i)
    v = dict(zip(range(3, FIELD_COUNT), map(int, numbers), strict=True))
    board = FibsBoard(
        player=parts[1],
        opponent=parts[2],
        match_length=v[3],
        player_score=v[4],
        opponent_score=v[5],
        cells=tuple(v[i] for i in range(6, 32)),
        turn=v[32],
        player_dice=(v[33], v[34]),
        opponent_dice=(v[35], v[36]),
        cube=v[37],
        player_may_double=v[38],
        opponent_may_double=v[39],
        was_doubled=v[40],
        colour=v[41],
        direction=v[42],
        home=v[43],
        bar=v[44],
        player_off=v[45],
        opponent_off=v[46],
        player_bar=v[47],
        opponent_bar=v[48],
        can_move=v[49],
        forced_move=v[50],
        did_crawford=v[51],
        redoubles=v[52],
    )
    return board, rest


def parse_board(line: str) -> FibsBoard:
    """Read one complete ``board:`` line; BoardParseError names the field at fault."""
    return FibsBoard.parse(line)


def format_board(
    position: Position,
    *,
    opponent: str,
    player: str = "You",
    match_length: int = 0,
    score: tuple[int, int] = (0, 0),
    colour: int = 1,
    on_roll: Side | None = Side.PLAYER,
    dice: tuple[int, int] | None = None,
    cube: int = 1,
    cube_owner: Side | None = None,
    double_pending: bool = False,
    post_crawford: bool = False,
    redoubles: int = 0,
) -> str:
    """A ``board:`` line from engine values as FIBS sends it to ``player`` (see ``FibsBoard.from_engine``)."""
    return FibsBoard.from_engine(
        position,
        opponent=opponent,
        player=player,
        match_length=match_length,
        score=score,
        colour=colour,
        on_roll=on_roll,
        dice=dice,
        cube=cube,
        cube_owner=cube_owner,
        double_pending=double_pending,
        post_crawford=post_crawford,
        redoubles=redoubles,
    ).line()
