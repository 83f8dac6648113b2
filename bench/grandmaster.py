"""Our grandmaster (3-ply) judged by GNU Backgammon at 3-ply, beside our world class and gnubg's world class.

    python -m bench.grandmaster [--n 500] [--chunk 20] [--checkpoint FILE] [--out bench/results/grandmaster.jsonl]
                                [--dumps DUMP ...] [--cpu N] [--report-only]

Positions and rolls come from agreement dumps (``bench.agreement --dump``: the position, its cube state and roll,
and gnubg world class's choice there), the first ``--n`` rows over the dumps in the order given. For each:

1. Our choices as the daemon makes them (``Player.choose_move``, one core): grandmaster and world class, each
   timed by CPU (``time.process_time``) and by the clock; and, where the player on roll may double, the
   grandmaster's cube decision before the roll (``Player.wants_to_double``, 3-ply), timed the same way.
2. gnubg's grandmaster hint (3-ply cubeful, pruning, its "large" filters) of the position, inside gnubg's Python
   (bench/_gnubg_agreement_worker.py, one thread); every choice that its filters left short of 3 plies is
   evaluated at 3-ply too, so each loss is a 3-ply one: loss = (best 3-ply equity known) - (3-ply equity of the
   choice), in mEMG. gnubg world class's choice is the first of its 2-ply hint ("normal" filters) of the same
   position, asked first; the dump's choice of gnubg world class playing over its ``external`` socket
   (``gnubg_worldclass_external``) is judged too, for comparison: the two differ in about 6% of positions.

Rows are checkpointed after every chunk (``--checkpoint``, one JSON line per position) and a run resumes from
them; ``--report-only`` prints the figures of the checkpoint as it stands. The report: mEMG lost per move by each
chooser with the paired differences and their 95% intervals (over all positions and by class), how often each
chose gnubg 3-ply's move, and the CPU time distribution (p50, p90, p99, max) of our grandmaster's move and cube
decisions, of our world class's and of gnubg's 3-ply hint, with the slowest positions by ID. One JSON line goes
to ``--out``.
"""

from __future__ import annotations

import os

# One thread for numpy and onnxruntime: set before they are imported (timings are one core).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from bench._gnubg_batch import run_batch  # noqa: E402
from bench._results import append_json_line  # noqa: E402
from bench.agreement import board_hex, paired_interval  # noqa: E402
from bench.latency import stats  # noqa: E402
from engine.analyser import Analyser  # noqa: E402
from engine.levels import LEVELS  # noqa: E402
from engine.match import MatchState  # noqa: E402
from engine.player import Player  # noqa: E402
from engine.search import FILTERS  # noqa: E402

WORKER = ROOT / "bench" / "_gnubg_agreement_worker.py"
DUMPS = [ROOT / "bench" / "results" / "agreement_dumps" / f"v3.2_seed{s}.jsonl" for s in (6, 7, 8, 9, 10)]
CHECKPOINT = ROOT / "bench" / "results" / "checkpoints" / "grandmaster_rows.jsonl"
OUT = ROOT / "bench" / "results" / "grandmaster.jsonl"
JUDGE_PLIES = 3
# gnubg's grandmaster filters (its "large" preset at 3 plies), the same data as ours.
JUDGE_FILTER = [[f.accept, f.extra, f.threshold] for f in FILTERS["large"][JUDGE_PLIES]]
CHOOSERS = (
    "our_grandmaster",
    "our_worldclass",
    "gnubg_worldclass",
    "gnubg_grandmaster",
    "gnubg_worldclass_external",
)
TARGET_MS = {"p50": 1500.0, "p99": 4000.0}  # issue 29: grandmaster per decision, one core


def load_rows(dumps: Sequence[Path], n: int) -> list[dict[str, Any]]:
    """The first ``n`` chequer-play rows over ``dumps`` in order, each tagged with its file."""
    rows: list[dict[str, Any]] = []
    for path in dumps:
        for line in path.read_text().splitlines():
            if len(rows) >= n:
                return rows
            if line.strip():
                row = json.loads(line)
                row["file"] = path.name
                rows.append(row)
    return rows


def key_of(row: dict[str, Any]) -> str:
    return f"{row['file']}#{row['i']}"


def _timed(fn: Any) -> tuple[Any, float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0


def our_choices(analyser: Analyser, row: dict[str, Any]) -> dict[str, Any]:
    """Our grandmaster's and world class's moves (resulting boards, as the dump writes them), with their times,
    and the grandmaster's cube decision time where a double is possible."""
    state = MatchState.from_gnubg_id(row["gnubgid"]).replace(dice=(row["dice"][0], row["dice"][1]))
    gm, wc = Player(analyser, LEVELS["grandmaster"]), Player(analyser, LEVELS["worldclass"])
    gm_move, gm_cpu, gm_wall = _timed(lambda: gm.choose_move(state))
    wc_move, wc_cpu, wc_wall = _timed(lambda: wc.choose_move(state))
    out: dict[str, Any] = {
        "choice": {
            "our_grandmaster": board_hex(gm_move.play.position),
            "our_worldclass": board_hex(wc_move.play.position),
        },
        "gm_depth": gm_move.plies,
        "cpu": {"our_grandmaster": gm_cpu, "our_worldclass": wc_cpu},
        "wall": {"our_grandmaster": gm_wall, "our_worldclass": wc_wall},
    }
    pre = state.replace(dice=(0, 0))
    if pre.may_double(pre.on_roll):
        doubles, cube_cpu, cube_wall = _timed(lambda: gm.wants_to_double(pre))
        out["cpu"]["our_grandmaster_cube"] = cube_cpu
        out["wall"]["our_grandmaster_cube"] = cube_wall
        out["gm_doubles"] = bool(doubles)
    return out


def judge(ours: dict[str, Any], row: dict[str, Any], ans: dict[str, Any]) -> dict[str, Any]:
    """The losses of every chooser as gnubg 3-ply judges them (mEMG), from the worker's answer."""
    known = {m[1]: float(m[2]) for m in ans["moves"] if m[3] == JUDGE_PLIES}
    known.update({k: float(v) for k, v in ans["extra"].items()})
    choice = dict(
        ours["choice"],
        gnubg_worldclass=ours["gnubg_worldclass"],
        gnubg_grandmaster=ans["moves"][0][1],
        gnubg_worldclass_external=row["choice"]["gnubg_2ply"],
    )
    best = max(known.values())
    check = ans.get("check")
    return {
        "choice": choice,
        "loss": {who: 1000.0 * (best - known[board]) for who, board in choice.items()},
        "same": {who: board == choice["gnubg_grandmaster"] for who, board in choice.items()},
        "check_diff": None if check is None else abs(float(check[0]) - float(check[1])),
        "gnubg_cpu": float(ans.get("cpu", ans.get("seconds", 0.0))),
    }


def run_chunk(
    analyser: Analyser, rows: list[dict[str, Any]], gnubg: str, cpus: set[int] | None
) -> list[dict]:
    ours = [our_choices(analyser, row) for row in rows]
    # gnubg's world class: its 2-ply hint with the default ("normal") filters, as main() of the worker sets it.
    wc = run_batch(
        gnubg,
        WORKER,
        [{"i": k, "op": "hint", "gnubgid": row["gnubgid"]} for k, row in enumerate(rows)],
        1,
        3600.0,
        "GAMMOND_AGREE",
        cpus=cpus,
        threads=1,
    )
    for k, o in enumerate(ours):
        if "moves" in wc.get(k, {}):
            o["gnubg_worldclass"] = wc[k]["moves"][0][1]
            o["cpu"]["gnubg_worldclass"] = float(wc[k].get("cpu", wc[k].get("seconds", 0.0)))
    requests = [
        {
            "i": k,
            "op": "hint",
            "gnubgid": row["gnubgid"],
            "plies": JUDGE_PLIES,
            "filter": JUDGE_FILTER,
            "extra": sorted(
                {*o["choice"].values(), row["choice"]["gnubg_2ply"], o.get("gnubg_worldclass", "")} - {""}
            ),
        }
        for k, (row, o) in enumerate(zip(rows, ours, strict=True))
    ]
    answers = run_batch(gnubg, WORKER, requests, 1, 3600.0, "GAMMOND_AGREE", cpus=cpus, threads=1)
    out = []
    for k, (row, o) in enumerate(zip(rows, ours, strict=True)):
        ans = answers.get(k, {"error": "no answer"})
        rec: dict[str, Any] = {
            "key": key_of(row),
            "gnubgid": row["gnubgid"],
            "dice": row["dice"],
            "class": "bearoff" if row["class"].startswith("bearoff") else row["class"],
            **o,
        }
        if "error" in ans or "gnubg_worldclass" not in o:
            rec["error"] = ans.get("error", "no gnubg world-class answer")
        else:
            judged = judge(o, row, ans)
            rec.update(judged)
            rec["cpu"]["gnubg_grandmaster"] = judged.pop("gnubg_cpu")
            rec.pop("gnubg_cpu", None)
        out.append(rec)
    return out


def percentiles(values: Sequence[float]) -> dict[str, float] | None:
    """bench.latency's figures of CPU seconds ``values``, in milliseconds to 0.1; None for none."""
    return stats([1000.0 * v for v in values], digits=1) if values else None


def report(recs: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in recs if "loss" in r]

    def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
        loss = {w: np.array([r["loss"][w] for r in rows]) for w in CHOOSERS}
        return {
            "positions": len(rows),
            "memg_per_move": {w: round(float(loss[w].mean()), 2) for w in CHOOSERS} if rows else {},
            "same_as_gnubg_3ply_pct": {
                w: round(100.0 * float(np.mean([r["same"][w] for r in rows])), 1) for w in CHOOSERS
            }
            if rows
            else {},
            "paired_memg": {
                "grandmaster_minus_worldclass": paired_interval(
                    (loss["our_grandmaster"] - loss["our_worldclass"]).tolist(), 1.0
                ),
                "grandmaster_minus_gnubg_worldclass": paired_interval(
                    (loss["our_grandmaster"] - loss["gnubg_worldclass"]).tolist(), 1.0
                ),
                "worldclass_minus_gnubg_worldclass": paired_interval(
                    (loss["our_worldclass"] - loss["gnubg_worldclass"]).tolist(), 1.0
                ),
            },
        }

    classes = sorted({r["class"] for r in good})
    timing = {
        who: percentiles([r["cpu"][who] for r in good if who in r["cpu"]])
        for who in (
            "our_grandmaster",
            "our_grandmaster_cube",
            "our_worldclass",
            "gnubg_grandmaster",
            "gnubg_worldclass",
        )
    }
    timing_by_class = {
        c: percentiles([r["cpu"]["our_grandmaster"] for r in good if r["class"] == c]) for c in classes
    }
    slowest = sorted(good, key=lambda r: -r["cpu"]["our_grandmaster"])[:5]
    checks = [r["check_diff"] for r in good if r.get("check_diff") is not None]
    return {
        **figures(good),
        "by_class": {c: figures([r for r in good if r["class"] == c]) for c in classes},
        "cpu_ms": timing,
        "grandmaster_cpu_ms_by_class": timing_by_class,
        "slowest_grandmaster": [
            {"gnubgid": r["gnubgid"], "dice": r["dice"], "cpu_s": round(r["cpu"]["our_grandmaster"], 2)}
            for r in slowest
        ],
        "grandmaster_depth": {str(d): sum(r["gm_depth"] == d for r in good) for d in (0, 2, 3)},
        "errors": len(recs) - len(good),
        "judge_check_max_diff": max(checks) if checks else None,
    }


def print_report(rep: dict[str, Any]) -> None:
    print(
        f"\n{rep['positions']} positions judged by gnubg 3-ply (grandmaster filters); errors {rep['errors']}"
    )
    print(f"{'':24s}{'mEMG/move':>10s}{'same %':>8s}")
    for w in CHOOSERS:
        print(f"{w:24s}{rep['memg_per_move'].get(w, 0):10.2f}{rep['same_as_gnubg_3ply_pct'].get(w, 0):8.1f}")
    for k, v in rep["paired_memg"].items():
        print(f"  {k:40s} {v[0]:+.2f} ± {v[1]:.2f} mEMG" if v else f"  {k}: -")
    for c, f in rep["by_class"].items():
        m = f["memg_per_move"]
        pg = f["paired_memg"]["grandmaster_minus_worldclass"]
        print(
            f"  {c:9s} n={f['positions']:4d}  gm {m['our_grandmaster']:6.2f}  wc {m['our_worldclass']:6.2f}  "
            f"gnubg wc {m['gnubg_worldclass']:6.2f}  gm-wc {pg}"
        )
    print("CPU ms (p50 / p90 / p99 / max):")
    for who, t in rep["cpu_ms"].items():
        if t:
            print(
                f"  {who:24s} n={t['n']:4d}  {t['p50']:8.1f} {t['p90']:8.1f} {t['p99']:8.1f} {t['max']:8.1f}"
            )
    for c, t in rep["grandmaster_cpu_ms_by_class"].items():
        if t:
            print(
                f"  grandmaster {c:12s} n={t['n']:4d}  {t['p50']:8.1f} {t['p90']:8.1f} {t['p99']:8.1f} {t['max']:8.1f}"
            )
    print(
        "slowest:",
        ", ".join(
            f"{s['gnubgid']} {s['dice'][0]}{s['dice'][1]} {s['cpu_s']} s" for s in rep["slowest_grandmaster"]
        ),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--chunk", type=int, default=20)
    ap.add_argument("--dumps", type=Path, nargs="+", default=DUMPS)
    ap.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--cpu", type=int, help="pin this process and gnubg to one core")
    ap.add_argument("--gnubg", default=shutil.which("gnubg") or "/usr/games/gnubg")
    ap.add_argument("--report-only", action="store_true", help="print the checkpoint's figures and stop")
    args = ap.parse_args(argv)
    cpus = {args.cpu} if args.cpu is not None else None
    if cpus:
        os.sched_setaffinity(0, cpus)
    args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
    done: dict[str, dict] = {}
    if args.checkpoint.exists():
        for line in args.checkpoint.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                done[rec["key"]] = rec
    rows = load_rows(args.dumps, args.n)
    commit = subprocess.run(  # at the start: the code the run's rows were computed with
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if not args.report_only:
        if not Path(args.gnubg).exists():
            print(f"gnubg not found at {args.gnubg}", file=sys.stderr)
            return 2
        analyser = Analyser.default(threads=1)
        pending = [r for r in rows if key_of(r) not in done]
        start = time.perf_counter()
        for c in range(0, len(pending), args.chunk):
            chunk = pending[c : c + args.chunk]
            recs = run_chunk(analyser, chunk, args.gnubg, cpus)
            with args.checkpoint.open("a") as fh:
                for rec in recs:
                    fh.write(json.dumps(rec) + "\n")
                    done[rec["key"]] = rec
            print(
                f"  {len(done)} rows ({c + len(chunk)}/{len(pending)} this run, "
                f"{time.perf_counter() - start:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    recs = [done[key_of(r)] for r in rows if key_of(r) in done]
    rep = report(recs)
    print_report(rep)
    if not args.report_only:
        append_json_line(
            args.out,
            {
                "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "commit": commit,
                "n": len(recs),
                "dumps": [p.name for p in args.dumps],
                **rep,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
