"""XGID (eXtreme Gammon's position ID) to and from MatchState, read as gnubg 1.07 reads it (``set xgid``).

``XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10``: a 26-character board, then cube (log2), cube owner,
player on roll, dice, the two scores, rules, match length and maximum cube (log2), separated by ``:``.

The uppercase player is gnubg's player 1 and the lowercase one player 0. Board index 1..24 is the uppercase
player's point of that number (the lowercase player's point 25 - i), index 0 the lowercase bar and 25 the
uppercase bar; ``A``-``O`` are 1-15 uppercase chequers, ``a``-``o`` lowercase ones, ``-`` an empty point.
Owner and turn are 1 for uppercase, -1 for lowercase (owner 0: centred). Dice ``00`` mean "to roll",
``D`` a double offered by the player on roll. Rules in money play: bit 0 Jacoby, bit 1 beavers; in match play
1 flags the Crawford game, which gnubg (and so this module) keeps only when someone is 1-away. The maximum
cube has no counterpart in a MatchState: it is checked and dropped on reading, and written as given.

gnubg 1.07 only reads XGIDs; note that it swaps the players when the lowercase player is on roll, and steps
back from a pending double ``D`` to the moment before it.
"""

from __future__ import annotations

from engine.errors import InvalidIdError
from engine.ids import GameState
from engine.match import InvalidMatchStateError, MatchState, Rules
from engine.position import BAR, Position

PREFIX = "XGID="
DEFAULT_MAX_CUBE_LOG = 10  # XG's usual limit, a 1024 cube
_FIELDS = 10


def _field_int(value: str, name: str, text: str, allowed: range | tuple[int, ...]) -> int:
    try:
        number = int(value)
    except ValueError:
        raise InvalidIdError(f"XGID {text!r}: {name} {value!r} is not a number") from None
    if number not in allowed:
        raise InvalidIdError(f"XGID {text!r}: {name} {number} is out of range")
    return number


def _parse_board(board: str, text: str) -> tuple[list[int], list[int]]:
    """(player 0's counts, player 1's counts), each in its own numbering, 25 entries with the bar last."""
    if len(board) != 26:
        raise InvalidIdError(f"XGID {text!r}: the board has {len(board)} characters, not 26")
    lower = [0] * 25
    upper = [0] * 25
    for i, ch in enumerate(board):
        if ch == "-":
            continue
        if "A" <= ch <= "O":
            if i == 0:
                raise InvalidIdError(f"XGID {text!r}: uppercase chequers on the lowercase bar (index 0)")
            upper[BAR if i == 25 else i - 1] = ord(ch) - ord("A") + 1
        elif "a" <= ch <= "o":
            if i == 25:
                raise InvalidIdError(f"XGID {text!r}: lowercase chequers on the uppercase bar (index 25)")
            lower[BAR if i == 0 else 24 - i] = ord(ch) - ord("a") + 1
        else:
            raise InvalidIdError(f"XGID {text!r}: board character {ch!r} at {i} is not - A-O or a-o")
    return lower, upper


def parse_xgid(text: str, names: tuple[str, str] = ("player 0", "player 1")) -> MatchState:
    """The MatchState an XGID describes (a game in progress); InvalidIdError names what is wrong."""
    if not isinstance(text, str):
        raise InvalidIdError(f"an XGID must be a string, not {type(text).__name__}")
    body = text.strip()
    if body[: len(PREFIX)].upper() == PREFIX:
        body = body[len(PREFIX) :]
    fields = body.split(":")
    if len(fields) != _FIELDS:
        raise InvalidIdError(f"XGID {text!r} has {len(fields)} ':'-separated fields, not {_FIELDS}")
    board, cube_log, owner, turn, dice, score_upper, score_lower, rules_bits, length, max_cube = fields
    lower, upper = _parse_board(board, text)
    cube_log_n = _field_int(cube_log, "cube", text, range(16))
    owner_n = _field_int(owner, "cube owner", text, (-1, 0, 1))
    turn_n = _field_int(turn, "player on roll", text, (-1, 1))
    length_n = _field_int(length, "match length", text, range(65))
    scores = (
        _field_int(score_lower, "lowercase score", text, range(1 << 15)),
        _field_int(score_upper, "uppercase score", text, range(1 << 15)),
    )
    rules_n = _field_int(rules_bits, "rules", text, range(2) if length_n else range(4))
    _field_int(max_cube, "maximum cube", text, range(16))

    on_roll = 1 if turn_n == 1 else 0
    doubled = dice == "D"
    if doubled or dice == "00":
        roll = (0, 0)
    elif len(dice) == 2 and all(c in "123456" for c in dice):
        roll = (int(dice[0]), int(dice[1]))
    else:
        raise InvalidIdError(f"XGID {text!r}: dice {dice!r} are not 00, D or two digits 1-6")

    if length_n:
        rules = Rules(crawford=True, jacoby=False, beavers=False)
        crawford = bool(rules_n) and length_n > 1 and length_n - 1 in scores
    else:
        rules = Rules(crawford=True, jacoby=bool(rules_n & 1), beavers=bool(rules_n & 2))
        crawford = False
    me, opp = (upper, lower) if on_roll == 1 else (lower, upper)
    try:
        return MatchState(
            match_length=length_n,
            score=scores,
            rules=rules,
            names=names,
            game_state=GameState.PLAYING,
            position=Position(me, opp),
            on_roll=on_roll,
            turn=1 - on_roll if doubled else on_roll,
            cube=1 << cube_log_n,
            cube_owner={1: 1, -1: 0, 0: -1}[owner_n],
            crawford=crawford,
            dice=roll,
            doubled=doubled,
        )
    except (InvalidMatchStateError, InvalidIdError) as exc:
        raise InvalidIdError(f"XGID {text!r}: {exc}") from None
    except ValueError as exc:  # Position's own checks (too many chequers, a point held by both sides)
        raise InvalidIdError(f"XGID {text!r}: {exc}") from None


def _letters(count: int, upper: bool) -> str:
    if not count:
        return "-"
    return chr((ord("A") if upper else ord("a")) + count - 1)


def format_xgid(state: MatchState, max_cube_log: int = DEFAULT_MAX_CUBE_LOG) -> str:
    """The XGID of a game in progress. States XGID cannot hold (no game on, a resignation or a beaver
    pending) raise InvalidIdError."""
    if state.game_state != GameState.PLAYING:
        raise InvalidIdError(f"XGID describes a game in progress, not game state {state.game_state.name}")
    if state.resigned:
        raise InvalidIdError("XGID cannot hold a pending resignation")
    if state.beavered:
        raise InvalidIdError("XGID as gnubg reads it cannot hold a beaver")
    if not 0 <= max_cube_log <= 15:
        raise InvalidIdError(f"maximum cube log {max_cube_log} is outside 0..15")
    pos = state.position
    upper, lower = (pos.me, pos.opp) if state.on_roll == 1 else (pos.opp, pos.me)
    cells = [_letters(lower[BAR], False)]
    for point in range(1, 25):
        if upper[point - 1]:
            cells.append(_letters(upper[point - 1], True))
        else:
            cells.append(_letters(lower[24 - point], False))
    cells.append(_letters(upper[BAR], True))
    dice = "D" if state.doubled else f"{state.dice[0]}{state.dice[1]}"
    if state.match_length:
        rules = int(state.crawford)
    else:
        rules = int(state.rules.jacoby) | int(state.rules.beavers) << 1
    fields = [
        "".join(cells),
        str(state.cube.bit_length() - 1),
        str({1: 1, 0: -1, -1: 0}[state.cube_owner]),
        "1" if state.on_roll == 1 else "-1",
        dice,
        str(state.score[1]),
        str(state.score[0]),
        str(rules),
        str(state.match_length),
        str(max_cube_log),
    ]
    return PREFIX + ":".join(fields)
