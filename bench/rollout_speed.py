"""Rollout throughput by CPU time, ours against gnubg on the same positions in the same run, with and without
variance reduction.

    python3 -m bench.rollout_speed --trials 324 --vr-trials 72 --cpu 1
    python3 -m bench.rollout_speed --trials 1296 --vr-trials 324 --cpu -1 --two-cores

Positions: the opening (before the first roll's reply is known: the starting position, a player on roll), and
from the agreement dumps a contact, a back-game (four or more chequers back, two points held in the opponent's
home board), a race and a bearoff position, money play, cube centred. Ours: ``engine.rollout.rollout`` in this
process (0-ply, cubeful, quasi-random dice, pruning nets as the CLI's default), timed by this process's CPU
time after a warm-up; gnubg: its ``rollout`` command (0-ply chequer and cube, ``set threads 1``) inside its own
Python, timed by its process's CPU time. Games per CPU second for each and their ratio. Both end a game at the
bearoff databases (gnubg's defaults, set explicitly here; ours ``RolloutSettings.bearoff_truncation``): cubeless
at the one-sided database, cubeful money at the exact two-sided one. ``--two-cores``: games per wall second with
both cores, ours as ``gammond rollout --jobs 2`` runs it (two worker processes forked after the nets are loaded),
gnubg with ``set threads 2``; run it on an otherwise idle machine.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GNUBG = "/usr/games/gnubg"
MONEY_KEY = "cAkAAAAAAAAA"  # money, cube centred, player 0 on roll, no dice
DUMP = ROOT / "bench" / "results" / "agreement_dumps" / "v3.2_seed6.jsonl"
GNUBG_SCRIPT = """
import gnubg, json, os, time
for c in ("set display off", "set threads {threads}", "set rollout trials {trials}", "set rollout seed {seed}",
          "set rollout varredn {vr}", "set rollout cubedecision plies 0", "set rollout chequerplay plies 0",
          "set rollout cubeful {cubeful}", "set rollout bearofftruncation exact on",
          "set rollout bearofftruncation onesided on",
          "new game", "set gnubgid {pid}:{key}"):
    gnubg.command(c)
t0, w0 = time.process_time(), time.perf_counter()
gnubg.command("rollout")
with open(os.environ["GAMMOND_ROLL_OUT"], "w") as f:
    f.write(json.dumps({{"cpu": time.process_time() - t0, "wall": time.perf_counter() - w0}}))
"""


def pick_positions() -> dict[str, str]:
    from engine.position import Position

    out = {"opening": Position.initial().position_id}
    for line in DUMP.read_text().splitlines():
        row = json.loads(line)
        pos = Position.from_id(row["gnubgid"].split(":")[0])
        cls = row["class"]
        back = sum(pos.me[18:25])
        anchors = sum(1 for n in pos.me[18:24] if n >= 2)
        if cls == "contact" and "contact" not in out and row["i"] >= 20:
            out["contact"] = pos.position_id
        elif cls == "contact" and back >= 4 and anchors >= 2 and "back game" not in out:
            out["back game"] = pos.position_id
        elif cls == "race" and "race" not in out and sum(pos.me) == 15 and sum(pos.opp) == 15:
            out["race"] = pos.position_id
        elif cls.startswith("bearoff") and "bearoff" not in out and sum(pos.me) >= 10:
            out["bearoff"] = pos.position_id
    return out


def ours_cpu(analyser: object, pid: str, trials: int, vr: bool, seed: int, cubeful: bool = True) -> float:
    from engine.cube import CubeInfo
    from engine.position import Position
    from engine.rollout import RolloutSettings, rollout_sums

    settings = RolloutSettings(trials=trials, variance_reduction=vr, seed=seed, cubeful=cubeful)
    t0 = time.process_time()
    # the trials only (rollout_sums): the summary after them costs nothing, and with few trials and variance
    # reduction it may refuse estimates a little outside 0..1
    ci = CubeInfo.money(jacoby=True, beavers=True)  # as gnubg reads MONEY_KEY (Jacoby on) with its defaults
    rollout_sums(analyser, Position.from_id(pid), ci, settings)  # type: ignore[arg-type]
    return time.process_time() - t0


def ours_wall_two_cores(pid: str, trials: int, vr: bool, seed: int, cubeful: bool = True) -> float:
    """Wall seconds of ``gammond rollout ID --jobs 2``'s path: the trials in two slices, two worker processes
    forked after the nets are loaded (``bot.commands.rollout.rollout_position``)."""
    from bot.commands.rollout import rollout_position

    req = {
        "id": f"{pid}:{MONEY_KEY}",
        "trials": trials,
        "no_vr": not vr,
        "seed": seed,
        "cubeless": not cubeful,
    }
    t0 = time.perf_counter()
    out = rollout_position(req, jobs=2)
    if "error" in out:
        raise SystemExit(f"our rollout of {pid} failed: {out['error']}")
    return time.perf_counter() - t0


def gnubg_cpu(pid: str, trials: int, vr: bool, seed: int, cpu: int, cubeful: bool = True) -> float:
    return gnubg_times(pid, trials, vr, seed, cpu, cubeful)["cpu"]


def gnubg_times(
    pid: str, trials: int, vr: bool, seed: int, cpu: int, cubeful: bool = True, threads: int = 1
) -> dict[str, float]:
    """gnubg's rollout of ``pid``: its process's CPU seconds and the wall seconds, with ``threads`` threads."""
    with tempfile.TemporaryDirectory(prefix="gnubg_roll_") as tmp:
        script, out = Path(tmp, "roll.py"), Path(tmp, "out.json")
        script.write_text(
            GNUBG_SCRIPT.format(
                trials=trials,
                seed=seed,
                vr="on" if vr else "off",
                pid=pid,
                key=MONEY_KEY,
                cubeful="on" if cubeful else "off",
                threads=threads,
            )
        )
        subprocess.run(
            [GNUBG, "-t", "-q", "-r", "-p", str(script)],
            env=dict(os.environ, GAMMOND_ROLL_OUT=str(out)),
            cwd=tmp,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=3600,
            check=True,
            preexec_fn=(lambda: os.sched_setaffinity(0, {cpu})) if cpu >= 0 else None,
        )
        return {k: float(v) for k, v in json.loads(out.read_text()).items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=324, help="trials without variance reduction")
    ap.add_argument("--vr-trials", type=int, default=72, help="trials with variance reduction")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu", type=int, default=1, help="core for both (-1: do not pin)")
    ap.add_argument(
        "--cubeless",
        action="store_true",
        help="cubeless rollouts (cubeful, a game also ends at a dropped double)",
    )
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these positions only (race, bearoff, ...)")
    ap.add_argument("--json", type=Path, help="write the result here")
    ap.add_argument(
        "--two-cores",
        action="store_true",
        help="games per wall second on both cores: ours with --jobs 2 (processes), gnubg with 2 threads",
    )
    args = ap.parse_args(argv)
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    from engine.analyser import Analyser

    analyser = Analyser.default(threads=1)
    every = pick_positions()
    positions = {k: v for k, v in every.items() if not args.only or k in args.only}
    ours_cpu(analyser, every["opening"], 8, False, args.seed)  # warm-up: tables, sessions
    if args.two_cores:  # both cores, by wall time: each rollout alone on the machine, ours then gnubg's
        return table(
            positions,
            args,
            lambda pid, n, vr: ours_wall_two_cores(pid, n, vr, args.seed, not args.cubeless),
            lambda pid, n, vr: gnubg_times(pid, n, vr, args.seed, -1, not args.cubeless, threads=2)["wall"],
            "wall",
            ("ours games/s, 2 processes", "gnubg games/s, 2 threads"),
        )
    return table(
        positions,
        args,
        lambda pid, n, vr: ours_cpu(analyser, pid, n, vr, args.seed, not args.cubeless),
        lambda pid, n, vr: gnubg_cpu(pid, n, vr, args.seed, args.cpu, not args.cubeless),
        "cpu",
        ("ours games/CPU s", "gnubg games/CPU s"),
    )


def table(
    positions: dict[str, str],
    args: argparse.Namespace,
    ours: Callable[[str, int, bool], float],
    gnubg: Callable[[str, int, bool], float],
    unit: str,
    heads: tuple[str, str],
) -> int:
    """Each position without and with VR: seconds (``unit``) of ours and gnubg's, as games per second."""
    rows = []
    for name, pid in positions.items():
        for vr, trials in ((False, args.trials), (True, args.vr_trials)):
            o, g = ours(pid, trials, vr), gnubg(pid, trials, vr)
            row = {
                "position": name,
                "id": pid,
                "vr": vr,
                "trials": trials,
                "cubeful": not args.cubeless,
                f"ours_games_per_{unit}_s": round(trials / o, 1),
                f"gnubg_games_per_{unit}_s": round(trials / g, 1),
                "ratio": round(g / o, 2),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    result: dict[str, object] = {"bench": "rollout_speed", "two_cores": args.two_cores}
    result.update(load_average=[round(x, 2) for x in os.getloadavg()], rows=rows)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"| position | VR | trials | {heads[0]} | {heads[1]} | ours / gnubg |")
    print("|---|---|--:|--:|--:|--:|")
    for r in rows:
        print(
            f"| {r['position']} | {'on' if r['vr'] else 'off'} | {r['trials']} | {r[f'ours_games_per_{unit}_s']} | "
            f"{r[f'gnubg_games_per_{unit}_s']} | {r['ratio']}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
