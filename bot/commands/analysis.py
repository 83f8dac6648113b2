"""`gammond eval ID` and `gammond hint ID DICE`: the engine's verdict from the shell, or as JSON lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from bot.commands._output import batch, check_fields, emit, int_field, required_str, str_field
from bot.commands.ids import parse_dice, parse_gnubg_id
from engine import cube as cubes
from engine.analyser import Analyser
from engine.errors import InvalidDiceError
from engine.ids import MatchKey
from engine.levels import parse_level
from engine.notation import format_gnubg
from engine.position import Position

MAX_PLIES = 3  # the search goes no deeper
MAX_MOVES = 10_000  # more than any roll has legal plays
_PROB_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


@cache
def _analyser(models: str | None, threads: int) -> Analyser:
    return Analyser.default(Path(models) if models else None, threads)


def _cube_info(key: MatchKey | None) -> cubes.CubeInfo:
    if key is None:
        return cubes.CubeInfo.money()
    return cubes.CubeInfo.from_match_key(key)


def _probs(row: Any) -> dict[str, float]:
    return {k: round(float(v), 6) for k, v in zip(_PROB_NAMES, row, strict=True)}


def eval_reply(analyser: Analyser, text: str, plies: int) -> dict[str, Any]:
    position, key = parse_gnubg_id(text)
    ci = _cube_info(key)
    ev = analyser.evaluate(position, ci, plies)
    reply: dict[str, Any] = {
        "position_id": position.position_id,
        "plies": plies,
        "engine": analyser.name,
        "probs": _probs(ev.probs),
        "cubeless_equity": round(ev.cubeless, 6),
        "cubeful_equity": round(ev.cubeful, 6),
    }
    if key is not None:
        reply["match_id"] = key.encode()
    rolled = key is not None and key.dice != (0, 0)
    if ev.decision is not None and not rolled:
        d = ev.decision
        reply["cube"] = {
            "no_double": round(d.no_double, 6),
            "double_take": round(d.double_take, 6),
            "double_pass": round(d.double_pass, 6),
            "decision": d.kind.name.lower(),
            "text": _decision_text(d.kind),
        }
    return reply


def _decision_text(kind: cubes.CubeDecisionKind) -> str:
    if kind == cubes.CubeDecisionKind.NOT_AVAILABLE:
        return "Cube not available"
    words = (
        kind.name.lower()
        .replace("toogoodre", "too good to redouble")
        .replace("toogood", "too good to double")
    )
    words = words.replace("nodouble", "no double").replace("no_redouble", "no redouble")
    words = words.replace("optional_", "optional ").replace("_", ", ")
    return words[0].upper() + words[1:]


def _eval_text(r: dict[str, Any]) -> str:
    p = r["probs"]
    lines = [
        f"Position ID {r['position_id']}" + (f"  Match ID {r['match_id']}" if "match_id" in r else ""),
        f"{r['plies']}-ply ({r['engine']}): win {p['win']:.3f} (gammon {p['win_gammon']:.3f}, backgammon "
        f"{p['win_backgammon']:.3f})  lose {1 - p['win']:.3f} (gammon {p['lose_gammon']:.3f}, backgammon "
        f"{p['lose_backgammon']:.3f})",
        f"Cubeless equity {r['cubeless_equity']:+.3f}   cubeful equity {r['cubeful_equity']:+.3f}",
    ]
    if "cube" in r:
        c = r["cube"]
        lines.append(
            f"No double {c['no_double']:+.3f}   double/take {c['double_take']:+.3f}   double/pass "
            f"{c['double_pass']:+.3f}   => {c['text']}"
        )
    return "\n".join(lines)


def hint_reply(
    analyser: Analyser, text: str, dice: Any, plies: int, level: str | None, count: int
) -> dict[str, Any]:
    position, key = parse_gnubg_id(text)
    if dice is None:
        if key is None or key.dice == (0, 0):
            raise InvalidDiceError("no dice given and none in the match ID")
        roll = key.dice
    else:
        roll = parse_dice(dice)
    ci = _cube_info(key)
    move_filter = "normal"
    perturb = None
    note = ""
    if level:
        lv = parse_level(level)
        plies, move_filter, perturb, note = lv.plies, lv.move_filter, lv.chequer_perturber(), lv.note
    ranked = analyser.hint(position, roll, ci, plies, move_filter, perturb=perturb)
    best = ranked[0].equity if ranked else 0.0
    return {
        "position_id": position.position_id,
        "dice": list(roll),
        "plies": plies,
        **({"note": note} if note else {}),  # a fibs: rating clamped to the measured levels
        "moves": [
            {
                "rank": i,
                "move": format_gnubg(position, rm.play.move) if rm.play.move else "",
                "equity": round(rm.equity, 6),
                "diff": round(rm.equity - best, 6),
                "plies": rm.plies,
                "probs": _probs(rm.probs),
                "position_id": rm.play.position.swap().position_id,
            }
            for i, rm in enumerate(ranked[:count], 1)
        ],
    }


def _hint_text(r: dict[str, Any]) -> str:
    lines = [f"note: {r['note']}"] if r.get("note") else []
    for m in r["moves"]:
        diff = "" if m["rank"] == 1 else f" ({m['diff']:+.3f})"
        lines.append(
            f"{m['rank']:5d}. {m['plies']}-ply  {m['move'] or '(no legal move)':<28s} Eq.: {m['equity']:+.3f}{diff}"
        )
        p = m["probs"]
        lines.append(
            f"        {p['win']:.3f} {p['win_gammon']:.3f} {p['win_backgammon']:.3f} - {1 - p['win']:.3f} "
            f"{p['lose_gammon']:.3f} {p['lose_backgammon']:.3f}"
        )
    return "\n".join(lines)


def eval_handler(analyser: Analyser, plies: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """One `eval --batch` request: ``{"id": ..., "plies": 0..3}``; RequestError names a bad field."""

    def handle(req: dict[str, Any]) -> dict[str, Any]:
        check_fields(req, ("id", "plies"))
        text = required_str(req, "id")
        depth = int_field(req, "plies", plies, 0, MAX_PLIES)
        return {**eval_reply(analyser, text, depth), "id": text}

    return handle


def hint_handler(
    analyser: Analyser, plies: int, level: str | None, count: int
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """One `hint --batch` request: ``{"id", "dice", "plies", "level", "n"}`` (all but id optional)."""

    def handle(req: dict[str, Any]) -> dict[str, Any]:
        check_fields(req, ("id", "dice", "plies", "level", "n"))
        text = required_str(req, "id")
        depth = int_field(req, "plies", plies, 0, MAX_PLIES)
        named = str_field(req, "level", level)
        n = int_field(req, "n", count, 1, MAX_MOVES)
        return {**hint_reply(analyser, text, req.get("dice"), depth, named, n), "id": text}

    return handle


def cmd_eval(args: argparse.Namespace) -> int:
    # A level evaluates at its cube depth, as its player's cube decisions do (grandmaster: 3 plies).
    plies = parse_level(args.level).cube_depth if args.level else args.plies
    analyser = _analyser(args.models, args.threads)
    if args.batch:
        return batch(eval_handler(analyser, plies), sys.stdin.buffer, sys.stdout)
    if not args.id:
        raise InvalidDiceError("give an ID, or --batch")
    emit(eval_reply(analyser, args.id, plies), args.json, _eval_text)
    return 0


def cmd_hint(args: argparse.Namespace) -> int:
    analyser = _analyser(args.models, args.threads)
    if args.batch:
        handle = hint_handler(analyser, args.plies, args.level, args.n)
        return batch(handle, sys.stdin.buffer, sys.stdout)
    if not args.id:
        raise InvalidDiceError("give an ID, or --batch")
    emit(hint_reply(analyser, args.id, args.dice, args.plies, args.level, args.n), args.json, _hint_text)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plies", type=int, default=0, choices=[0, 1, 2, 3], help="search depth (default 0)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--batch", action="store_true", help="read JSON requests on stdin, answer a line each")
    p.add_argument("--models", help="model folder (default: the shipped nets)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="probabilities, equities and cube decision of a position")
    p.add_argument("id", nargs="?", help="POSID or POSID:MATCHID")
    p.add_argument("--level", help="evaluate at a named level's cube depth (worldclass: 2, grandmaster: 3)")
    _common(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("hint", help="legal moves ranked by the engine")
    p.add_argument("id", nargs="?", help="POSID or POSID:MATCHID")
    p.add_argument("dice", nargs="?", help="the roll, e.g. 62 (default: the dice in the match ID)")
    p.add_argument("--level", help="a named level (expert, worldclass ...) or plies=N,noise=S,filter=F")
    p.add_argument("-n", type=int, default=10, help="how many moves to show (default 10)")
    _common(p)
    p.set_defaults(func=cmd_hint)


__all__ = ["Position", "eval_handler", "eval_reply", "hint_handler", "hint_reply", "register"]
