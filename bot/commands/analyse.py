"""`gammond analyse FILE...`: gnubg-style analysis of match files (every format `gammond mat check` reads).

A text report in the layout of gnubg's ``show statistics match`` by default; with ``--json`` one object per
file (the ``.analysis.json`` shape, docs/analysis-json.md). Several files fan out over local processes
(``--jobs``) or a Ray cluster (``--ray``).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache, partial
from pathlib import Path
from typing import Any

from bot.fanout import run_many
from engine.analyser import Analyser
from engine.levels import parse_level

PLAYER_KEYS = (
    "name",
    "unforced_moves",
    "cube_decisions",
    "chequer_error_rate_memg",
    "cube_error_rate_memg",
    "overall_error_rate_memg",
    "snowie_error_rate",
    "luck_rate_memg",
    "luck_adjusted_result",
    "rating",
    "fibs_rating",
    "decisions",
)


@cache
def _analyser(models: str | None) -> Analyser:
    return Analyser.default(Path(models) if models else None, 1)


def analyse_file(
    path: str, plies: int = 2, models: str | None = None, move_filter: str = "normal"
) -> dict[str, Any]:
    """The analysis of one file as a JSON-able dict, or ``{"file", "error"}`` when it cannot be read (a worker
    function: top level, so that processes and Ray can run it)."""
    from bot.commands.mat import load_record
    from engine.analysis import analyse_record
    from engine.errors import EngineError

    try:
        record, kind = load_record(path)
        analysis = analyse_record(record, _analyser(models), plies, move_filter)
    except (EngineError, ValueError, OSError) as exc:
        return {"file": path, "error": str(exc)}
    out = {"file": path, "format": kind}
    out.update(analysis.to_json())
    return out


def _num(value: Any, fmt: str = "{:.3f}") -> str:
    return "-" if value is None else fmt.format(value)


def report_text(obj: dict[str, Any]) -> str:
    """gnubg's ``show statistics match`` layout: one column per player."""
    if "error" in obj:
        return f"{obj['file']}: {obj['error']}"
    a, b = obj["players"]
    money = obj["match_length"] == 0
    unit = "ppg" if money else "MWC"

    def row(label: str, x: Any, y: Any) -> str:
        return f"{label:<40}{x!s:<22}{y!s:<22}"

    def err(p: dict[str, Any], total: str, rate: str, per: int, unnorm: str) -> tuple[str, str]:
        """gnubg's "-0.423 (-11.188%)" and "-8.1 (-0.215%)": EMG, with MWC (match) or points (money)."""
        u = p[unnorm]
        if money:
            return (
                f"{-p[total]:+.3f} ({-u:+.3f})",
                f"{-p[rate]:+.1f} ({-1000 * u / per if per else 0.0:+.1f})",
            )
        rate_u = 100 * u / per if per else 0.0
        return f"{-p[total]:+.3f} ({-100 * u:+.3f}%)", f"{-p[rate]:+.1f} ({-rate_u:+.3f}%)"

    what = "money session" if money else f"{obj['match_length']}-point match"
    lines = [
        f"{obj['file']}: {a['name']} - {b['name']}, {what}, analysed at {obj['plies']}-ply ({obj['engine']}, "
        f"{obj['seconds']:.1f} s)",
        "",
        row("Player", a["name"], b["name"]),
        "",
        "Chequerplay statistics:",
        row("Total moves", a["total_moves"], b["total_moves"]),
        row("Unforced moves", a["unforced_moves"], b["unforced_moves"]),
    ]
    for mark in ("doubtful", "bad", "very bad"):
        lines.append(row(f"Moves marked {mark}", a["marked_moves"][mark], b["marked_moves"][mark]))
    ea = err(
        a, "chequer_error_emg", "chequer_error_rate_memg", a["unforced_moves"], "chequer_error_unnormalised"
    )
    eb = err(
        b, "chequer_error_emg", "chequer_error_rate_memg", b["unforced_moves"], "chequer_error_unnormalised"
    )
    lines += [
        row(f"Error total EMG ({unit})", ea[0], eb[0]),
        row(f"Error rate mEMG ({unit})", ea[1], eb[1]),
        row("Chequerplay rating", a["chequer_rating"] or "-", b["chequer_rating"] or "-"),
        "",
        "Luck statistics:",
    ]
    for mark in ("very lucky", "lucky", "unlucky", "very unlucky"):
        lines.append(row(f"Rolls marked {mark}", a["luck_marked_rolls"][mark], b["luck_marked_rolls"][mark]))
    scale = 1.0 if money else 100.0
    pct = "" if money else "%"
    lines += [
        row(
            f"Luck total EMG ({unit})",
            f"{a['luck_emg']:+.3f} ({a['luck_unnormalised'] * scale:+.3f}{pct})",
            f"{b['luck_emg']:+.3f} ({b['luck_unnormalised'] * scale:+.3f}{pct})",
        ),
        row("Luck rate mEMG", f"{a['luck_rate_memg']:+.1f}", f"{b['luck_rate_memg']:+.1f}"),
        "",
        "Cube statistics:",
        row("Total cube decisions", a["total_cube_decisions"], b["total_cube_decisions"]),
        row("Close or actual cube decisions", a["cube_decisions"], b["cube_decisions"]),
        row("Doubles", a["doubles"], b["doubles"]),
        row("Takes", a["takes"], b["takes"]),
        row("Passes", a["passes"], b["passes"]),
    ]
    names = {
        "missed-double-below-cp": "Missed doubles below CP",
        "missed-double-above-cp": "Missed doubles above CP",
        "wrong-double-below-dp": "Wrong doubles below DP",
        "wrong-double-above-tg": "Wrong doubles above TG",
        "wrong-take": "Wrong takes",
        "wrong-pass": "Wrong passes",
    }
    for key, label in names.items():
        lines.append(row(label, a["cube_errors"][key], b["cube_errors"][key]))
    ca = err(a, "cube_error_emg", "cube_error_rate_memg", a["cube_decisions"], "cube_error_unnormalised")
    cb = err(b, "cube_error_emg", "cube_error_rate_memg", b["cube_decisions"], "cube_error_unnormalised")
    lines += [
        row(f"Error total EMG ({unit})", ca[0], cb[0]),
        row(f"Error rate mEMG ({unit})", ca[1], cb[1]),
        row("Cube decision rating", a["cube_rating"] or "-", b["cube_rating"] or "-"),
        "",
        "Overall statistics:",
        row("Error total EMG", f"{-a['overall_error_emg']:+.3f}", f"{-b['overall_error_emg']:+.3f}"),
        row(
            "Error rate mEMG",
            f"{-a['overall_error_rate_memg']:+.1f}",
            f"{-b['overall_error_rate_memg']:+.1f}",
        ),
        row("Snowie error rate", f"{-a['snowie_error_rate']:+.1f}", f"{-b['snowie_error_rate']:+.1f}"),
        row("Overall rating", a["rating"] or "-", b["rating"] or "-"),
        row(
            f"Actual result ({unit})",
            _num(a["actual_result"] * scale, "{:+.2f}") + pct,
            _num(b["actual_result"] * scale, "{:+.2f}") + pct,
        ),
        row(
            f"Luck adjusted result ({unit})",
            _num(a["luck_adjusted_result"] * scale, "{:+.2f}") + pct,
            _num(b["luck_adjusted_result"] * scale, "{:+.2f}") + pct,
        ),
    ]
    if not money:
        lines.append(
            row(
                "Error based abs. FIBS rating",
                _num(a["fibs_rating"], "{:.1f}"),
                _num(b["fibs_rating"], "{:.1f}"),
            )
        )
    marked = [
        d for p in (a, b) for d in p.get("decisions", []) if d["mark"] or (d["cube"] and d["cube"]["error"])
    ]
    if marked:
        lines += ["", "Marked decisions:"]
        for d in sorted(marked, key=lambda d: (d["game"], d["index"])):
            who = obj["names"][d["player"]]
            if d["kind"] == "move" and d["mark"]:
                dice = "".join(map(str, d["dice"]))
                lines.append(
                    f"  game {d['game']:2d} move {d['index']:3d}  {who} {dice}: {d['move'] or '(no move)'}"
                    f"  best {d['best_move']}  -{d['loss']:.3f} ({d['mark']})"
                )
            cube = d["cube"]
            if cube and cube["error"]:
                lines.append(
                    f"  game {d['game']:2d} move {d['index']:3d}  {who} {cube['action']}: {cube['error']}"
                    f" -{cube['loss']:.3f} (proper: {cube['proper']}/{cube['taker']})"
                )
    return "\n".join(lines)


def cmd_analyse(args: argparse.Namespace) -> int:
    plies, move_filter = args.plies, "normal"
    if args.level:  # a named level's depth and move filters (grandmaster: 3 plies, gnubg's "large" filters)
        level = parse_level(args.level)
        plies, move_filter = level.plies, level.move_filter
    work = partial(analyse_file, plies=plies, models=args.models, move_filter=move_filter)
    failed = 0
    for obj in run_many(work, list(args.files), args.jobs, args.ray):
        failed += "error" in obj
        if args.json:
            sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        else:
            sys.stdout.write(report_text(obj) + "\n\n")
        sys.stdout.flush()
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "analyse", aliases=["analyze"], help="analyse match files as gnubg does: errors, luck, rating"
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--plies", type=int, choices=(0, 1, 2, 3), default=2, help="analysis depth (default 2, as gnubg)"
    )
    p.add_argument(
        "--level", help="analyse at a named level's depth and filters (worldclass, grandmaster ...)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--ray", metavar="ADDRESS", help="fan out over a Ray cluster (needs the [ray] extra)")
    p.add_argument("--models", help="model folder (default: the shipped nets)")
    p.set_defaults(func=cmd_analyse)
