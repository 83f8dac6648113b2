"""`gammond mat check FILE...` and `gammond mat show FILE`: read match files (.mat or FIBS oldmoves) and
replay them through the match state machine."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.commands._output import emit
from engine.errors import EngineError
from engine.formats import MatchFormatError, decode_text, detect_format, read_match
from engine.record import MatchRecord, RecordError


def load_record(path: str) -> tuple[MatchRecord, str]:
    """Read and replay one file: (record, "mat" or "oldmoves"); MatchFormatError or RecordError (both
    ValueError) when it is broken."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise MatchFormatError(f"cannot read: {exc.strerror or exc}", source=path) from None
    text = decode_text(data)
    record = read_match(text, source=path)
    record.final_state()  # the readers replay as they go; this checks the record as a whole once more
    return record, detect_format(text)


def check_file(path: str) -> dict[str, Any]:
    """``{"file", "ok": true, ...summary}`` or ``{"file", "ok": false, "error", "line"}``."""
    try:
        record, kind = load_record(path)
    except (MatchFormatError, RecordError) as exc:
        return {"file": path, "ok": False, "error": str(exc), "line": getattr(exc, "line", None)}
    except EngineError as exc:  # pragma: no cover - readers wrap every engine error
        return {"file": path, "ok": False, "error": str(exc), "line": None}
    score = record.final_score
    return {
        "file": path,
        "ok": True,
        "format": kind,
        "length": record.length,
        "games": len(record.games),
        "score": list(score),
        "partial": record.partial,
        "cut": record.partial and ends_mid_line(path),
    }


def ends_mid_line(path: str) -> bool:
    """Whether the file stops inside a line (no line break after its last text): cut short, not unfinished."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 256))
            tail = f.read().rstrip(b" \t")
    except OSError:
        return False
    return bool(tail) and not tail.endswith((b"\n", b"\r"))


def summary(record: MatchRecord, path: str) -> dict[str, Any]:
    games = []
    for number, game in enumerate(record.games, 1):
        result = game.result
        games.append(
            {
                "game": number,
                "score": list(game.score),
                "moves": len(game.moves),
                "result": None
                if result is None
                else {
                    "winner": result.winner,
                    "points": result.points,
                    "how": result.how.name.lower(),
                    "level": result.level.name.lower(),
                },
            }
        )
    return {
        "file": path,
        "names": list(record.names),
        "length": record.length,
        "rules": {
            "crawford": record.rules.crawford,
            "jacoby": record.rules.jacoby,
            "beavers": record.rules.beavers,
        },
        "date": record.date.isoformat() if record.date else None,
        "time": record.time.strftime("%H:%M") if record.time else None,
        "site": record.site or None,
        "event": record.event or None,
        "match_id": record.match_id or None,
        "games": games,
        "score": list(record.final_score),
        "partial": record.partial,
    }


def _check_text(obj: dict[str, Any]) -> str:
    if obj["ok"]:
        what = "money session" if obj["length"] == 0 else f"{obj['length']}-point match"
        part = ", partial: cut off mid-line" if obj.get("cut") else ", partial" if obj["partial"] else ""
        return f"{obj['file']}: ok ({what}, {obj['games']} game{'' if obj['games'] == 1 else 's'}, score {obj['score'][0]}-{obj['score'][1]}{part})"
    return f"{obj['file']}: {obj['error']}" if not obj["error"].startswith(obj["file"]) else obj["error"]


def _show_text(obj: dict[str, Any]) -> str:
    a, b = obj["names"]
    what = "money session" if obj["length"] == 0 else f"{obj['length']}-point match"
    lines = [f"{a} - {b}, {what}" + (" (partial)" if obj["partial"] else "")]
    facts = [f"{k} {obj[k]}" for k in ("date", "time", "site", "event", "match_id") if obj[k]]
    if facts:
        lines.append(", ".join(facts))
    for g in obj["games"]:
        result = g["result"]
        if result is None:
            end = "unfinished"
        else:
            end = f"{obj['names'][result['winner']]} wins {result['points']} ({result['how']}, {result['level']})"
        lines.append(
            f"game {g['game']:2d}  {g['score'][0]:2d}-{g['score'][1]:<2d}  {g['moves']:3d} moves  {end}"
        )
    lines.append(f"score {obj['score'][0]}-{obj['score'][1]}")
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        obj = check_file(path)
        failed += not obj["ok"]
        emit(obj, args.json, _check_text, out=sys.stdout)
    return 1 if failed else 0


def cmd_show(args: argparse.Namespace) -> int:
    record, _ = load_record(args.file)
    emit(summary(record, args.file), args.json, _show_text, out=sys.stdout)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mat = sub.add_parser("mat", help="read match files (.mat, FIBS oldmoves) and replay them")
    mat_sub = mat.add_subparsers(dest="mat_command", metavar="ACTION", required=True)

    p = mat_sub.add_parser("check", help="replay each file: ok or the first problem (exit 1 if any failed)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(func=cmd_check)

    p = mat_sub.add_parser("show", help="the record of one file: players, rules, games and results")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(func=cmd_show)
