"""`gammond position ID` and `gammond moves ID DICE`: the rules engine at work from the shell."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.commands._output import RequestError, batch, check_fields, emit, required_str
from engine.errors import InvalidDiceError, InvalidIdError
from engine.ids import MatchKey
from engine.moves import legal_plays
from engine.position import Position
from engine.xgid import _FIELDS as XGID_FIELDS
from engine.xgid import parse_xgid


def parse_gnubg_id(text: str) -> tuple[Position, MatchKey | None]:
    """``POSID``, ``POSID:MATCHID`` (an optional ``GNUBGID`` prefix is accepted, as gnubg prints it) or an XGID
    (``XGID=...``, or its ten ``:``-separated fields without the prefix)."""
    text = text.strip()
    if text.upper().startswith("XGID=") or text.count(":") == XGID_FIELDS - 1:
        state = parse_xgid(text)
        return state.position, state.match_key
    if text.upper().startswith("GNUBGID"):
        text = text[7:].strip()
    pos_part, sep, match_part = text.partition(":")
    if ":" in match_part:
        raise InvalidIdError(
            f"{text!r} is neither POSID, POSID:MATCHID nor an XGID (XGID=board:cube:owner:turn:dice:...)"
        )
    position = Position.from_id(pos_part)
    return position, (MatchKey.decode(match_part) if sep else None)


def parse_dice(text: Any) -> tuple[int, int]:
    """Two dice: ``"62"``, ``"6-2"``, ``"6,2"`` or a pair of integers; InvalidDiceError otherwise."""
    if isinstance(text, list | tuple):
        values = list(text)
    elif not isinstance(text, str | int) or isinstance(text, bool):
        raise InvalidDiceError(
            f'dice must be a string such as "62" or a list [6, 2], not {type(text).__name__}'
        )
    else:
        s = str(text).strip().replace("-", "").replace(",", "").replace(" ", "")
        if len(s) != 2 or not s.isdigit():
            raise InvalidDiceError(f"dice {text!r} must be two digits such as 62")
        values = [int(s[0]), int(s[1])]
    if len(values) != 2 or not all(
        isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 6 for v in values
    ):
        shown = repr(text) if len(values) <= 6 and all(isinstance(v, int | str) for v in values) else "given"
        raise InvalidDiceError(f"dice {shown[:60]} must be two numbers in 1..6")
    return values[0], values[1]


def describe_position(position: Position, key: MatchKey | None) -> dict[str, Any]:
    pips = position.pips()
    obj: dict[str, Any] = {
        "position_id": position.position_id,
        "board": {"on_roll": list(position.me), "opponent": list(position.opp)},
        "pips": {"on_roll": pips[0], "opponent": pips[1]},
        "off": {"on_roll": position.off[0], "opponent": position.off[1]},
        "class": position.classify().name.lower(),
    }
    if key is not None:
        obj["match_id"] = key.encode()
        obj["match"] = {
            "length": key.match_length,
            "score": list(key.score),
            "cube": key.cube,
            "cube_owner": key.cube_owner,
            "on_roll": key.move,
            "turn": key.turn,
            "crawford": key.crawford,
            "game_state": key.game_state.name.lower(),
            "doubled": key.doubled,
            "resigned": key.resigned,
            "dice": list(key.dice),
            "jacoby": key.jacoby,
        }
    return obj


def _dice_text(dice: list[int]) -> str:
    """The roll as players say it, high die first ("dice 62"); "to roll" before the dice are thrown."""
    if dice[0] == 0:
        return "to roll"
    return f"dice {max(dice)}{min(dice)}"


def _position_text(obj: dict[str, Any], position: Position) -> str:
    lines = [str(position), f"Class: {obj['class']}"]
    m = obj.get("match")
    if m:
        length = "money" if m["length"] == 0 else f"{m['length']}-point match"
        owner = {-1: "centred", 0: "player 0", 1: "player 1"}[m["cube_owner"]]
        lines.append(
            f"Match ID: {obj['match_id']}  {length}, score {m['score'][0]}-{m['score'][1]}, "
            f"cube {m['cube']} {owner}, player {m['on_roll']} on roll, {_dice_text(m['dice'])}"
            + (", Crawford game" if m["crawford"] else "")
        )
    return "\n".join(lines)


def cmd_position(args: argparse.Namespace) -> int:
    position, key = parse_gnubg_id(args.id)
    obj = describe_position(position, key)
    emit(obj, args.json, lambda o: _position_text(o, position), out=sys.stdout)
    return 0


def moves_reply(position: Position, dice: tuple[int, int]) -> dict[str, Any]:
    plays = legal_plays(position, dice)
    return {
        "position_id": position.position_id,
        "dice": list(dice),
        "moves": [
            # The resulting ID is the one gnubg shows after the move: the opponent is then on roll.
            {"move": str(p.move), "position_id": p.position.swap().position_id}
            for p in plays
        ],
    }


def moves_request(req: dict[str, Any]) -> dict[str, Any]:
    """One `moves --batch` request: ``{"id": ..., "dice": [d1, d2] or "62"}``."""
    check_fields(req, ("id", "dice"))
    text = required_str(req, "id")
    if "dice" not in req:
        raise RequestError("missing field 'dice'")
    position, _ = parse_gnubg_id(text)
    reply = moves_reply(position, parse_dice(req["dice"]))
    reply["id"] = text
    return reply


def cmd_moves(args: argparse.Namespace) -> int:
    if args.batch:
        return batch(moves_request, sys.stdin.buffer, sys.stdout)
    if args.id is None or args.dice is None:
        raise InvalidIdError("give ID and DICE, or --batch")
    position, _ = parse_gnubg_id(args.id)
    reply = moves_reply(position, parse_dice(args.dice))
    if args.json:
        emit(reply, True, str, out=sys.stdout)
    else:
        for i, m in enumerate(reply["moves"], 1):
            print(f"{i:3d}. {m['move'] or '(no legal move)':<28s} {m['position_id']}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("position", help="decode a gnubg position ID, POSID:MATCHID or an XGID")
    p.add_argument(
        "id", help="POSID, POSID:MATCHID or XGID=... (a bare XGID starting with - needs -- before it)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=cmd_position)

    p = sub.add_parser("moves", help="every legal move with its resulting position ID")
    p.add_argument("id", nargs="?", help="POSID or POSID:MATCHID")
    p.add_argument("dice", nargs="?", help="the roll, e.g. 62")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument(
        "--batch",
        action="store_true",
        help='read {"id": ..., "dice": [d1, d2]} lines on stdin, answer a line each',
    )
    p.set_defaults(func=cmd_moves)
