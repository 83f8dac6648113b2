"""`gammond analyse FILE...`: gnubg-style analysis of match files (every format `gammond mat check` reads).

A text report in the layout of gnubg's ``show statistics match`` by default; with ``--json`` one object per
file (the ``.analysis.json`` shape, docs/analysis-json.md). Several files fan out over local processes
(``--jobs``) or a Ray cluster (``--ray``). On a terminal, progress (with the time left) goes to stderr, as do
the errors of the text report; a file cut off mid-line is analysed as far as it goes, with a warning.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
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
    path: str,
    plies: int = 2,
    models: str | None = None,
    move_filter: str = "normal",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The analysis of one file as a JSON-able dict, or ``{"file", "error"}`` when it cannot be read (a worker
    function: top level, so that processes and Ray can run it). A file cut off mid-line gets ``warning``."""
    from bot.commands.mat import ends_mid_line, load_record
    from engine.analysis import analyse_record
    from engine.errors import EngineError

    try:
        record, kind = load_record(path)
        analysis = analyse_record(record, _analyser(models), plies, move_filter, progress)
    except (EngineError, ValueError, OSError) as exc:
        return {"file": path, "error": str(exc)}
    out: dict[str, Any] = {"file": path, "format": kind}
    out.update(analysis.to_json())
    if record.partial and ends_mid_line(path):
        out["warning"] = "the file stops in the middle of a line (cut short?): analysed as far as it goes"
    return out


def _say(obj: dict[str, Any], what: str) -> str:
    """``file: text``, the file named once (a reader's error names it already)."""
    text = str(obj[what])
    return text if text.startswith(f"{obj['file']}:") else f"{obj['file']}: {text}"


class Progress:
    """One self-rewriting stderr line: the decisions (or files) done and the time left, at most 5 a second."""

    INTERVAL = 0.2  # seconds between two updates of the line

    def __init__(self, label: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.clock = clock
        self.started = clock()
        self._shown = -1.0
        self._width = 0

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done < total and now - self._shown < self.INTERVAL:
            return
        self._shown = now
        elapsed = now - self.started
        left = ""
        if 0 < done < total:
            left = f", about {_duration(elapsed * (total - done) / done)} left"
        line = f"{self.label}: {done}/{total}{left}"
        sys.stderr.write("\r" + line.ljust(self._width))
        sys.stderr.flush()
        self._width = len(line)

    def end(self) -> None:
        if self._width:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
            self._width = 0


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def _num(value: Any, fmt: str = "{:.3f}") -> str:
    return "-" if value is None else fmt.format(value)


def report_text(obj: dict[str, Any]) -> str:
    """gnubg's ``show statistics match`` layout: one column per player."""
    if "error" in obj:
        return _say(obj, "error")
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
        row("Unmarked moves", a["unmarked_moves"], b["unmarked_moves"]),
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
    for mark in ("very lucky", "lucky", "", "unlucky", "very unlucky"):
        if not mark:
            lines.append(row("Rolls unmarked", a["unmarked_rolls"], b["unmarked_rolls"]))
            continue
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
        row("Luck rating", a["luck_rating"] or "-", b["luck_rating"] or "-"),
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

    def kind(p: dict[str, Any], key: str) -> str:
        """A cube error's count and, where it happened, what it cost: "1 (-0.013 (-0.085%))"."""
        n = p["cube_errors"][key]
        if not n:
            return "0"
        emg, u = p["cube_error_kinds_emg"][key], p["cube_error_kinds_unnormalised"][key]
        return f"{n} ({-emg:+.3f} ({-u:+.3f}))" if money else f"{n} ({-emg:+.3f} ({-100 * u:+.3f}%))"

    for key, label in names.items():
        lines.append(row(f"{label} (EMG ({unit}))", kind(a, key), kind(b, key)))
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
        lines += [
            row(
                "Chequerplay errors rating loss",
                _num(a["chequer_rating_loss"], "{:.1f}"),
                _num(b["chequer_rating_loss"], "{:.1f}"),
            ),
            row(
                "Cube errors rating loss",
                _num(a["cube_rating_loss"], "{:.1f}"),
                _num(b["cube_rating_loss"], "{:.1f}"),
            ),
        ]
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
        if level.note:  # a fibs: rating beyond the measured levels: say what it analyses at
            sys.stderr.write(f"note: {level.note}\n")
    work = partial(analyse_file, plies=plies, models=args.models, move_filter=move_filter)
    files = list(args.files)
    show = not args.quiet and sys.stderr.isatty()
    here = not args.ray and (len(files) == 1 or args.jobs == 1)  # run_many would run them in this process
    results: Any
    if show and here:  # each file's decisions, with the time left
        results = (_with_progress(work, path) for path in files)
    else:
        results = run_many(work, files, args.jobs, args.ray)
    failed = 0
    count = Progress("files analysed") if show and not here else None
    if count is not None:
        count(0, len(files))
    for done, obj in enumerate(results, 1):
        if count is not None:
            count.end()
        failed += "error" in obj or "warning" in obj
        if "warning" in obj:
            sys.stderr.write(f"warning: {_say(obj, 'warning')}\n")
        if args.json:
            sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        elif "error" in obj:
            sys.stderr.write(_say(obj, "error") + "\n")
        else:
            sys.stdout.write(report_text(obj) + "\n\n")
        sys.stdout.flush()
        if count is not None and done < len(files):
            count(done, len(files))
    return 1 if failed else 0


def _with_progress(work: Callable[..., dict[str, Any]], path: str) -> dict[str, Any]:
    progress = Progress(f"{path}: decisions analysed")
    try:
        return work(path, progress=progress)
    finally:
        progress.end()


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
    p.add_argument("--quiet", action="store_true", help="no progress on the terminal")
    p.set_defaults(func=cmd_analyse)
