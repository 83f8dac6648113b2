"""`gammond analyse` beside gnubg 1.07's own `analyse match`, same files, same run: agreement and speed.

    python -m bench.analysis --plies 0 --json bench/results/analysis_0ply.json \
        ../shared/samples/mat/*.mat ../shared/samples/mat/*.txt var/level_mats/*.mat
    python -m bench.analysis --plies 2 --limit 6 ...

For each file: ours is ``bot.commands.analyse.analyse_file`` (the command's code path) at ``--plies``, gnubg is
``../shared/tools/gnubg/analyse_mat.sh FILE PLIES`` (``import mat``, ``analyse match`` with chequer play and cube
at the same depth, cubeful, pruning as gnubg's default; one thread). Per player: the overall error rate (mEMG
per decision) within 1.5 mEMG or 20% of gnubg's, the rating word the same or a neighbour, the luck rate
within 2 mEMG; the Pearson correlation of the overall rates over all players; the worst cases. Speed: seconds
per match (ours: the analysis itself, nets loaded once; gnubg: its process, import and analysis).
Files gnubg cannot import (FIBS oldmoves, SGF) are analysed by us only and listed.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from engine.analysis import RATINGS  # noqa: E402

GNUBG_SCRIPT = ROOT.parent / "shared" / "tools" / "gnubg" / "analyse_mat.sh"
WORDS = [w for _, w in RATINGS] + ["Awful!"]


def gnubg_analysis(path: str, plies: int) -> tuple[list[dict[str, Any]] | None, float]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [str(GNUBG_SCRIPT), path, str(plies)],
        capture_output=True,
        text=True,
        timeout=3600,
        env={"THREADS": "1", "PATH": "/usr/bin:/bin:/usr/games"},
    )
    wall = time.perf_counter() - t0
    rows = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if len(rows) != 2 or any("error" in r for r in rows):
        return None, wall
    return rows, wall


def close_rate(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= 1.5 or abs(ours - theirs) <= 0.2 * abs(theirs)


def neighbour(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a == b
    return abs(WORDS.index(a) - WORDS.index(b)) <= 1


def pearson(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    if n < 3:
        return float("nan")
    mx, my = sum(xs) / n, sum(ys) / n
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    return (
        sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (sx * sy)
        if sx and sy
        else float("nan")
    )


def main(argv: list[str] | None = None) -> int:
    from bot.commands.analyse import analyse_file

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--plies", type=int, default=0, choices=(0, 1, 2))
    p.add_argument("--limit", type=int, default=0, help="at most this many files (0: all)")
    p.add_argument("--json")
    args = p.parse_args(argv)
    files = args.files[: args.limit] if args.limit else args.files
    analyse_file(files[0], 0)  # load the nets before any timing
    players: list[dict[str, Any]] = []
    ours_s: list[float] = []
    gnubg_s: list[float] = []
    only_ours: list[str] = []
    for path in files:
        obj = analyse_file(path, args.plies)
        if "error" in obj:
            print(json.dumps({"file": path, "ours_error": obj["error"]}), flush=True)
            continue
        g, wall = gnubg_analysis(path, args.plies)
        if g is None:
            only_ours.append(path)
            print(json.dumps({"file": path, "gnubg": "cannot import", "ours_s": obj["seconds"]}), flush=True)
            continue
        ours_s.append(obj["seconds"])
        gnubg_s.append(wall)
        for side in (0, 1):
            o, t = obj["players"][side], g[side]
            row = {
                "file": Path(path).name,
                "player": o["name"],
                "ours_overall": o["overall_error_rate_memg"],
                "gnubg_overall": t["overall_memg"],
                "ours_rating": o["rating"],
                "gnubg_rating": t["rating"],
                "ours_luck": o["luck_rate_memg"],
                "gnubg_luck": t["luck_rate_memg"],
                "ours_unforced": o["unforced_moves"],
                "gnubg_unforced": t["unforced_moves"],
                "ours_cube_decisions": o["cube_decisions"],
                "gnubg_cube_decisions": t["close_cube_decisions"],
                "ours_fibs": o["fibs_rating"],
                "gnubg_fibs": t["fibs_rating"],
            }
            row["overall_ok"] = close_rate(row["ours_overall"], row["gnubg_overall"])
            row["rating_ok"] = neighbour(row["ours_rating"], row["gnubg_rating"])
            row["luck_ok"] = abs(row["ours_luck"] - row["gnubg_luck"]) <= 2.0
            players.append(row)
            print(json.dumps(row), flush=True)
    n = len(players)
    worst = sorted(players, key=lambda r: -abs(r["ours_overall"] - r["gnubg_overall"]))[:5]
    worst_luck = sorted(players, key=lambda r: -abs(r["ours_luck"] - r["gnubg_luck"]))[:3]
    summary = {
        "plies": args.plies,
        "files": len(ours_s),
        "players": n,
        "overall_within": sum(r["overall_ok"] for r in players),
        "rating_same_or_neighbour": sum(r["rating_ok"] for r in players),
        "rating_same": sum(r["ours_rating"] == r["gnubg_rating"] for r in players),
        "luck_within_2": sum(r["luck_ok"] for r in players),
        "overall_correlation": round(
            pearson([r["ours_overall"] for r in players], [r["gnubg_overall"] for r in players]), 3
        ),
        "luck_correlation": round(
            pearson([r["ours_luck"] for r in players], [r["gnubg_luck"] for r in players]), 3
        ),
        "mean_overall_ours": round(sum(r["ours_overall"] for r in players) / n, 2) if n else None,
        "mean_overall_gnubg": round(sum(r["gnubg_overall"] for r in players) / n, 2) if n else None,
        "same_unforced_counts": sum(r["ours_unforced"] == r["gnubg_unforced"] for r in players),
        "same_cube_decision_counts": sum(
            r["ours_cube_decisions"] == r["gnubg_cube_decisions"] for r in players
        ),
        "seconds_per_match_ours": round(sum(ours_s) / len(ours_s), 2) if ours_s else None,
        "seconds_per_match_gnubg": round(sum(gnubg_s) / len(gnubg_s), 2) if gnubg_s else None,
        "worst_overall": [(r["file"], r["player"], r["ours_overall"], r["gnubg_overall"]) for r in worst],
        "worst_luck": [(r["file"], r["player"], r["ours_luck"], r["gnubg_luck"]) for r in worst_luck],
        "gnubg_cannot_import": only_ours,
    }
    print(json.dumps(summary), flush=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"players": players, "summary": summary}, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
