"""Decision latency at every percentile, per position class, against gnubg on the same positions in the same run.

    python3 -m bench.latency --n 1000 --n2 300 --cpu 1          # resumes from its checkpoint when run again
    python3 -m bench.latency --report-only                       # the table from the checkpoint so far

Positions come from the agreement bench's dumps (bench/results/agreement_dumps/*.jsonl: gnubg IDs of positions
with a roll from noisy self-play), a seeded pick stratified by class (contact, crashed, race, bearoff) with races
and bearoffs over their share, ordered so that every prefix is stratified too: the first ``--n2`` also get the
2-ply measurements, the first ``--n3`` the 3-ply one. Each decision is the daemon's: ``Player(level).decide`` on
the ``MatchState`` read from the gnubg ID, the path bot/ calls through its engine executor. Measured per
position, by this process's CPU time (one thread for onnxruntime and BLAS):

* ``0ply``: chequer play at expert (0-ply); ``2ply``: at world class; ``3ply``: at grandmaster;
* ``cube2``: world class's decision before the roll (resignation check, then the 2-ply double decision), where
  the player on roll may double.

gnubg (``bench/_gnubg_latency_worker.py``, one thread, pinned to the same core) times its hint list at 0, 2 and 3
plies with its expert, world-class and grandmaster settings and its 2-ply ``cfevaluate``, by its CPU time, chunk by
chunk after ours, so that load on the machine falls on both alike. The checkpoint (JSON lines, one per
position) makes a long run resumable; the report gives p50, p90, p99 and max per class and depth, the ratios to
gnubg's, the worst positions by gnubg ID, a JSON result and a markdown table.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy: BLAS threads would spin on the other core
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import datetime
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._gnubg_batch import run_batch  # noqa: E402

GNUBG = "/usr/games/gnubg"
WORKER = Path(__file__).with_name("_gnubg_latency_worker.py")
DUMPS = sorted((ROOT / "bench" / "results" / "agreement_dumps").glob("*.jsonl"))
CHECKPOINT = ROOT / "bench" / "results" / "checkpoints" / "latency.jsonl"
OUT = ROOT / "bench" / "results" / "latency.json"
CLASSES = ("contact", "crashed", "race", "bearoff")
# Share of each class in the pick: races and bearoffs well over their share of play (about 11% and 5%).
SHARE = {"contact": 0.50, "crashed": 0.13, "race": 0.25, "bearoff": 0.12}
KINDS = ("0ply", "2ply", "3ply", "cube2")
GNUBG_OP = {"0ply": "hint0", "2ply": "hint2", "3ply": "hint3", "cube2": "cube2"}
LEVEL = {"0ply": "expert", "2ply": "worldclass", "3ply": "grandmaster", "cube2": "worldclass"}


def pick(n: int, seed: int, dumps: list[Path]) -> list[dict[str, str]]:
    """``n`` positions, stratified by class, in an order whose every prefix keeps the shares."""
    pool: dict[str, list[str]] = {c: [] for c in CLASSES}
    seen: set[str] = set()
    for path in dumps:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            cls = "bearoff" if row["class"].startswith("bearoff") else row["class"]
            if cls in pool and row["gnubgid"] not in seen:
                seen.add(row["gnubgid"])
                pool[cls].append(row["gnubgid"])
    rng = random.Random(seed)
    keyed = []
    for cls in CLASSES:
        ids = pool[cls]
        rng.shuffle(ids)
        want = min(len(ids), round(n * SHARE[cls]))
        # the k-th position of a class goes at (k + 0.5) / want of the way: classes interleave evenly
        keyed += [((k + 0.5) / want, cls, gid) for k, gid in enumerate(ids[:want])]
    keyed.sort()
    return [{"id": gid, "class": cls} for _, cls, gid in keyed[:n]]


class Ours:
    """The daemon's players, one per level, over one analyser (one onnxruntime thread)."""

    def __init__(self, kinds: list[str]) -> None:
        from engine.analyser import Analyser
        from engine.levels import parse_level
        from engine.player import Player

        self.analyser = Analyser.default(threads=1)
        self.players = {k: Player(self.analyser, parse_level(LEVEL[k])) for k in kinds}

    def states(self, gnubgid: str):  # type: ignore[no-untyped-def]
        from engine.match import MatchState

        state = MatchState.from_gnubg_id(gnubgid)
        return state, state.replace(dice=(0, 0))

    def measure(self, gnubgid: str, kinds: list[str]) -> dict[str, float]:
        """CPU milliseconds of each decision; cube2 only where the player on roll may double."""
        state, before_roll = self.states(gnubgid)
        out: dict[str, float] = {}
        for kind in kinds:
            if kind == "cube2":
                if not before_roll.may_double(before_roll.on_roll):
                    continue
                target = before_roll
            else:
                target = state
            player = self.players[kind]
            t0 = time.process_time()
            player.decide(target)
            out[kind] = 1000.0 * (time.process_time() - t0)
        return out


def kinds_for(index: int, args: argparse.Namespace) -> list[str]:
    kinds = ["0ply"]
    if index < args.n2:
        kinds += ["2ply", "cube2"]
    if index < args.n3:
        kinds.append("3ply")
    return kinds


def load_checkpoint(path: Path) -> dict[str, dict]:
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["id"]] = row
    return done


def run(args: argparse.Namespace) -> None:
    positions = pick(args.n, args.seed, DUMPS)
    done = load_checkpoint(args.checkpoint)
    todo = [(i, p) for i, p in enumerate(positions) if p["id"] not in done]
    print(f"{len(positions)} positions, {len(done)} in the checkpoint, {len(todo)} to go", file=sys.stderr)
    if not todo:
        return
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})  # before onnxruntime starts: its threads inherit the core
    all_kinds = [
        k for k in KINDS if (k != "3ply" or args.n3 > 0) and (k not in ("2ply", "cube2") or args.n2 > 0)
    ]
    ours = Ours(all_kinds)
    warm = positions[0]["id"]
    for kind in all_kinds:  # first calls load tables and warm onnxruntime: not timed
        ours.measure(warm, [kind])
    args.checkpoint.parent.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(todo), args.chunk):
        chunk = todo[start : start + args.chunk]
        rows = []
        for i, p in chunk:
            kinds = kinds_for(i, args)
            rows.append({"index": i, **p, "ours": ours.measure(p["id"], kinds), "kinds": kinds})
        requests = [
            {"i": k, "gnubgid": r["id"], "ops": [GNUBG_OP[kind] for kind in r["kinds"]]}
            for k, r in enumerate(rows)
        ]
        answers = run_batch(
            GNUBG,
            WORKER,
            requests,
            1,
            args.timeout,
            "GAMMOND_LAT",
            cpus={args.cpu} if args.cpu >= 0 else None,
            threads=1,
        )
        with args.checkpoint.open("a") as f:
            for k, r in enumerate(rows):
                ans = answers.get(k, {"error": "no answer"})
                gnubg = {kind: ans["cpu_ms"][GNUBG_OP[kind]] for kind in r["kinds"] if "cpu_ms" in ans}
                # cube2 only where ours measured it (the player on roll may double)
                gnubg = {k2: v for k2, v in gnubg.items() if k2 != "cube2" or "cube2" in r["ours"]}
                row = {
                    "id": r["id"],
                    "class": r["class"],
                    "index": r["index"],
                    "ours": r["ours"],
                    "gnubg": gnubg,
                }
                if "error" in ans:
                    row["gnubg_error"] = ans["error"]
                f.write(json.dumps(row) + "\n")
        print(
            f"  {start + len(chunk)}/{len(todo)} positions, load {os.getloadavg()[0]:.1f}",
            file=sys.stderr,
            flush=True,
        )


def stats(ms: list[float], digits: int = 2) -> dict[str, float]:
    """n, p50, p90, p99 and max of milliseconds ``ms`` (not empty), rounded to ``digits``."""
    a = np.array(ms)
    return {
        "n": len(ms),
        "p50": round(float(np.percentile(a, 50)), digits),
        "p90": round(float(np.percentile(a, 90)), digits),
        "p99": round(float(np.percentile(a, 99)), digits),
        "max": round(float(a.max()), digits),
    }


def report(rows: list[dict], args: argparse.Namespace) -> dict:
    result: dict = {"by": {}, "worst": {}}
    for kind in KINDS:
        paired = [r for r in rows if kind in r["ours"] and kind in r.get("gnubg", {})]
        if not paired:
            continue
        result["by"][kind] = {}
        for cls in (*CLASSES, "all"):
            sub = [r for r in paired if cls in ("all", r["class"])]
            if not sub:
                continue
            ours = stats([r["ours"][kind] for r in sub])
            gnubg = stats([r["gnubg"][kind] for r in sub])
            ratio = {
                q: round(ours[q] / gnubg[q], 2) if gnubg[q] > 0 else None
                for q in ("p50", "p90", "p99", "max")
            }
            result["by"][kind][cls] = {"ours": ours, "gnubg": gnubg, "ratio": ratio}
        worst = sorted(paired, key=lambda r: -r["ours"][kind])[: args.worst]
        result["worst"][kind] = [
            {
                "id": r["id"],
                "class": r["class"],
                "ours_ms": round(r["ours"][kind], 1),
                "gnubg_ms": round(r["gnubg"][kind], 1),
            }
            for r in worst
        ]
    return result


def markdown(result: dict) -> str:
    lines = [
        "| decision | class | n | ours p50 | p90 | p99 | max | gnubg p50 | p90 | p99 | max | ratio p50 | ratio p99 |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    names = {"0ply": "0-ply move", "2ply": "2-ply move", "3ply": "3-ply move", "cube2": "2-ply cube"}
    for kind, by in result["by"].items():
        for cls, row in by.items():
            o, g, r = row["ours"], row["gnubg"], row["ratio"]
            cells = [names[kind], cls if cls != "all" else "**all**", str(o["n"])]
            cells += [fmt(o[q]) for q in ("p50", "p90", "p99", "max")]
            cells += [fmt(g[q]) for q in ("p50", "p90", "p99", "max")]
            cells += [f"{r['p50']}x", f"{r['p99']}x"]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fmt(ms: float) -> str:
    return f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="positions (0-ply chequer play on all)")
    ap.add_argument(
        "--n2", type=int, default=300, help="the first n2 of them also at 2 plies (moves and cube)"
    )
    ap.add_argument("--n3", type=int, default=0, help="the first n3 of them also at 3 plies (grandmaster)")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--cpu", type=int, default=1, help="core for ours and gnubg (-1: do not pin)")
    ap.add_argument("--chunk", type=int, default=50, help="positions per checkpoint (ours, then gnubg's)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds for one chunk of gnubg")
    ap.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--worst", type=int, default=5, help="slowest positions listed per decision")
    ap.add_argument("--report-only", action="store_true", help="report the checkpoint as it is")
    args = ap.parse_args(argv)
    load = [round(x, 2) for x in os.getloadavg()]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    t0 = time.time()
    if not args.report_only:
        if not Path(GNUBG).exists():
            print(f"gnubg not found at {GNUBG}", file=sys.stderr)
            return 2
        run(args)
    rows = list(load_checkpoint(args.checkpoint).values())
    if not rows:
        print("nothing measured yet", file=sys.stderr)
        return 1
    result = report(rows, args)
    result.update(
        {
            "bench": "latency",
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "commit": commit.stdout.strip(),  # at the start of this run (a resumed run: of its last part)
            "positions": len(rows),
            "classes": {c: sum(r["class"] == c for r in rows) for c in CLASSES},
            "cpu": args.cpu,
            "load_average_at_start": load,
            "seconds": round(time.time() - t0, 1),
            "timing": "CPU time per decision (process_time), one thread; gnubg's in its own process, cache cleared",
        }
    )
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(markdown(result))
    for kind, worst in result["worst"].items():
        print(
            f"slowest {kind}: "
            + ", ".join(f"{w['id']} ({w['class']}) {w['ours_ms']} ms vs {w['gnubg_ms']}" for w in worst)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
