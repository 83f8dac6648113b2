"""FIBS rating of each named level, measured by our own analysis (gnubg's error-based rating formula).

    python -m bench.fibs_levels --levels beginner,casual,intermediate,advanced,expert --matches 6 \
        --length 5 --plies 1 --workers 2 --out var/level_mats

Each level plays ``--matches`` matches against our expert (the daemon's code path: engine.player.Player at
the level, engine.record through bot.selfplay.play_match, the match's own cube), seats alternating; every
match is then analysed (engine.analysis.analyse_record at ``--plies``) and the level's player gets gnubg's
error-based FIBS rating 2050 - a2(N)*EPM - b(N)*EPC. The level's figure pools its errors over all its
matches (EPM over all unforced moves, EPC over all close cube decisions); the interval is the 95% one of the
per-match ratings (mean +- 1.96 sd / sqrt(n)). The matches are written as .mat to ``--out`` (they serve as
the mixed-level matches of bench/analysis.py).

Caveat said plainly: an analysis by the same nets at 0-ply scores our 0-ply expert as nearly perfect; at 1 or
2 plies it judges the 0-ply play by a deeper search, as gnubg's 2-ply analysis judges gnubg's levels.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from engine.analysis import fibs_rating  # noqa: E402

_STATE: dict[str, Any] = {}


def _init() -> None:
    from engine.analyser import Analyser

    _STATE["analyser"] = Analyser.default()


def _one(job: tuple[str, int, int, int, int, str]) -> dict[str, Any]:
    from bot.selfplay import play_match
    from engine.analysis import analyse_record
    from engine.formats.mat import write_mat
    from engine.levels import parse_level
    from engine.player import Player

    level_name, i, length, plies, seed, out = job
    analyser = _STATE["analyser"]
    rng = random.Random(seed * 7919 + i)
    level = parse_level(level_name)
    expert = parse_level("expert")
    seat = i % 2  # the level's seat alternates
    players = [Player(analyser, expert, rng), Player(analyser, expert, rng)]
    players[seat] = Player(analyser, level, rng)
    names = ["expert", "expert"]
    names[seat] = level_name.replace(",", "_").replace("=", "")
    t0 = time.perf_counter()
    record = play_match((players[0], players[1]), length, seed * 1_000_003 + i, (names[0], names[1]))
    played = time.perf_counter() - t0
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{names[seat]}-{i:03d}-seat{seat}.mat").write_text(write_mat(record), encoding="utf-8")
    analysis = analyse_record(record, analyser, plies)
    me = analysis.stats()[seat]
    return {
        "level": level_name,
        "match": i,
        "seat": seat,
        "chequer_error": me["chequer_error_emg"],
        "unforced": me["unforced_moves"],
        "cube_error": me["cube_error_emg"],
        "cube_decisions": me["cube_decisions"],
        "fibs_rating": me["fibs_rating"],
        "overall_memg": me["overall_error_rate_memg"],
        "won": record.final_score[seat] >= length,
        "play_s": round(played, 2),
        "analyse_s": round(analysis.seconds, 2),
    }


def summarise(rows: list[dict[str, Any]], length: int) -> dict[str, Any]:
    unf = sum(r["unforced"] for r in rows)
    close = sum(r["cube_decisions"] for r in rows)
    epm = sum(r["chequer_error"] for r in rows) / unf if unf else 0.0
    epc = sum(r["cube_error"] for r in rows) / close if close else 0.0
    per = [r["fibs_rating"] for r in rows]
    n = len(per)
    mean = sum(per) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in per) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n) if n > 1 else float("nan")
    return {
        "level": rows[0]["level"],
        "matches": n,
        "fibs_rating": round(fibs_rating(epm, epc, length), 1),
        "per_match_mean": round(mean, 1),
        "ci95": round(half, 1),
        "chequer_epm_memg": round(1000 * epm, 2),
        "cube_epc_memg": round(1000 * epc, 2),
        "matches_won": sum(r["won"] for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", default="beginner,casual,intermediate,advanced,expert")
    p.add_argument("--matches", type=int, default=6)
    p.add_argument("--length", type=int, default=5)
    p.add_argument("--plies", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="", help="folder for the matches as .mat (none if empty)")
    p.add_argument("--json", help="write the per-match rows and the summary here")
    p.add_argument("--combine", nargs="+", metavar="JSON", help="pool the rows of earlier runs' --json files")
    args = p.parse_args(argv)
    if args.combine:
        rows = [r for f in args.combine for r in json.loads(Path(f).read_text(encoding="utf-8"))["rows"]]
        names = list(dict.fromkeys(r["level"] for r in rows))
        for lv in names:
            print(json.dumps(summarise([r for r in rows if r["level"] == lv], args.length)))
        return 0
    levels = [x.strip() for x in args.levels.split(";" if ";" in args.levels else ",") if x.strip()]
    jobs = [
        (lv, i, args.length, args.plies, args.seed, args.out) for lv in levels for i in range(args.matches)
    ]
    t0 = time.perf_counter()
    with mp.Pool(args.workers, initializer=_init) as pool:
        rows = pool.map(_one, jobs, chunksize=1)
    table = [summarise([r for r in rows if r["level"] == lv], args.length) for lv in levels]
    for t in table:
        print(json.dumps(t))
    print(
        f"# {len(jobs)} matches of {args.length} points, analysed at {args.plies}-ply, "
        f"{time.perf_counter() - t0:.0f} s with {args.workers} workers"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "table": table}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
