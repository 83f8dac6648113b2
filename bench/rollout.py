"""Our rollouts beside gnubg 1.07's, same positions, same run: agreement and throughput.

    python -m bench.rollout --positions 10 --trials 1296 --no-vr --json bench/results/rollout.json
    python -m bench.rollout --positions 1 --trials 324 --throughput        # games/s, one core and two

Positions: the 15 positions after each opening play (the opponent on roll), then pre-roll positions taken from
the self-play matches in ``--mats`` (every 17th decision), money play, cube centred. Each is rolled out by
``engine.rollout.rollout`` (0-ply trials, cubeful, quasi-random dice; luck VR unless ``--no-vr``) and by
gnubg (``rollout`` in a pseudo-terminal, gnubg's output parsed: chequer and cube at 0-ply, the same trials,
VR and quasi-random as chosen; gnubg's own default of truncating at its exact bearoff databases kept).
Agreement: |ours - gnubg| <= 3 * sqrt(se_ours^2 + se_gnubg^2) + 0.02 on the cubeless and cubeful equities.
Throughput: trials / seconds of the rollout of one position (ours: the rollout's own clock, after the nets are
loaded; gnubg: the wall clock of its process, 0.1 s of start included), one core each (onnxruntime with one thread;
``set threads 1``), and with two (ours: ``--jobs 2`` trial slices; gnubg: ``set threads 2``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

GNUBG = "/usr/games/gnubg"
MONEY_KEY = "cAkAAAAAAAAA"  # money, cube centred, player 0 on roll, no dice
_ROW = re.compile(
    r"^\s*([\d.]+) ([\d.]+) ([\d.]+) - ([\d.]+) ([\d.]+) ([\d.]+) CL ([+-][\d.]+) CF ([+-][\d.]+)", re.M
)
_SE = re.compile(
    r"^\s*\[([\d.]+) ([\d.]+) ([\d.]+) - ([\d.]+) ([\d.]+) ([\d.]+) CL\s+([\d.]+) CF\s+([\d.]+)\]", re.M
)


def positions(n: int, mats: Path) -> list[str]:
    from engine.formats import decode_text, read_match
    from engine.moves import legal_plays
    from engine.position import Position

    out: list[str] = []
    start = Position.initial()
    for d1 in range(1, 7):
        for d2 in range(1, d1):
            best = max(legal_plays(start, (d1, d2)), key=lambda p: p.position.position_id)  # any fixed play
            out.append(best.position.swap().position_id)
    out = out[:15]
    if mats.exists():
        k = 0
        for f in sorted(mats.glob("*.mat")):
            record = read_match(decode_text(f.read_bytes()))
            for state in record.replay():
                k += 1
                if k % 17 == 0 and state.game_state == 1 and state.dice == (0, 0) and not state.doubled:
                    pos = state.position
                    if not pos.is_race() or len(out) % 3 == 0:
                        out.append(pos.position_id)
            if len(out) >= n:
                break
    # the opening replies and the later positions alternate, so that a short run has both
    openings, later = out[:15], out[15:]
    mixed = (
        [p for pair in zip(openings, later, strict=False) for p in pair] + openings[len(later) :] + later[15:]
    )
    return mixed[:n]


def ours(pid: str, trials: int, vr: bool, seed: int, jobs: int = 1) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "bot.cli",
        "rollout",
        pid,
        "--trials",
        str(trials),
        "--seed",
        str(seed),
        "--json",
        "--quiet",
    ]
    if not vr:
        cmd.append("--no-vr")
    if jobs > 1:
        cmd += ["--jobs", str(jobs)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True)
    wall = time.perf_counter() - t0
    obj = json.loads(out.stdout)
    return {
        "equity": obj["equity"],
        "se": obj["se"]["equity"],
        "cubeful": obj["cubeful_equity"],
        "cubeful_se": obj["se"]["cubeful_equity"],
        "probs": obj["probs"],
        "seconds": obj["seconds"],
        "wall": round(wall, 2),
    }


def gnubg(pid: str, trials: int, vr: bool, seed: int, threads: int = 1) -> dict[str, Any]:
    cmds = [
        f"set threads {threads}",
        f"set rollout trials {trials}",
        f"set rollout seed {seed}",
        f"set rollout varredn {'on' if vr else 'off'}",
        "set rollout cubedecision plies 0",
        "set rollout chequerplay plies 0",
        "new game",
        f"set gnubgid {pid}:{MONEY_KEY}",
        "rollout",
        "quit",
        "y",
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(cmds) + "\n")
        script = f.name
    t0 = time.perf_counter()
    # gnubg prints rollout results only to a terminal: run it in a pseudo-terminal
    out = subprocess.run(
        ["script", "-qc", f"{GNUBG} -t -q -r < {script}", "/dev/null"],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    wall = time.perf_counter() - t0
    Path(script).unlink(missing_ok=True)
    text = out.stdout.split("Rollout done")[-1]
    row, se = _ROW.search(text), _SE.search(text)
    if row is None or se is None:
        raise RuntimeError(f"no gnubg rollout result for {pid}: {out.stdout[-500:]}")
    r = [float(x) for x in row.groups()]
    s = [float(x) for x in se.groups()]
    return {
        "equity": r[6],
        "se": s[6],
        "cubeful": r[7],
        "cubeful_se": s[7],
        "probs": r[:6],
        "wall": round(wall, 2),
    }


def agree(a: float, sa: float, b: float, sb: float) -> bool:
    return abs(a - b) <= 3 * math.hypot(sa, sb) + 0.02


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--positions", type=int, default=30)
    p.add_argument("--trials", type=int, default=1296)
    p.add_argument("--no-vr", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mats", default="var/level_mats")
    p.add_argument(
        "--throughput", action="store_true", help="also time one and two cores on the first position"
    )
    p.add_argument("--json")
    args = p.parse_args(argv)
    vr = not args.no_vr
    rows = []
    for pid in positions(args.positions, ROOT / args.mats):
        o = ours(pid, args.trials, vr, args.seed)
        g = gnubg(pid, args.trials, vr, args.seed)
        row = {
            "id": pid,
            "ours": o,
            "gnubg": g,
            "cubeless_ok": agree(o["equity"], o["se"], g["equity"], g["se"]),
            "cubeful_ok": agree(o["cubeful"], o["cubeful_se"], g["cubeful"], g["cubeful_se"]),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    n = len(rows)
    summary: dict[str, Any] = {
        "positions": n,
        "trials": args.trials,
        "variance_reduction": vr,
        "cubeless_within": sum(r["cubeless_ok"] for r in rows),
        "cubeful_within": sum(r["cubeful_ok"] for r in rows),
        "mean_abs_cubeless_diff": round(
            sum(abs(r["ours"]["equity"] - r["gnubg"]["equity"]) for r in rows) / n, 4
        ),
        "mean_abs_cubeful_diff": round(
            sum(abs(r["ours"]["cubeful"] - r["gnubg"]["cubeful"]) for r in rows) / n, 4
        ),
        "ours_games_per_s": round(n * args.trials / sum(r["ours"]["seconds"] for r in rows), 1),
        "gnubg_games_per_s": round(n * args.trials / sum(r["gnubg"]["wall"] for r in rows), 1),
    }
    if args.throughput and rows:
        pid = rows[0]["id"]
        o2 = ours(pid, args.trials, vr, args.seed, jobs=2)
        g2 = gnubg(pid, args.trials, vr, args.seed, threads=2)
        summary["two_cores"] = {
            "ours_games_per_s": round(args.trials / o2["wall"], 1),
            "gnubg_games_per_s": round(args.trials / g2["wall"], 1),
            "ours_one_core": round(args.trials / rows[0]["ours"]["wall"], 1),
            "gnubg_one_core": round(args.trials / rows[0]["gnubg"]["wall"], 1),
        }
    print(json.dumps(summary), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
