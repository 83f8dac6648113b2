"""gnubg's verdict on every cube decision of a money duel with the cube, both sides, by kind.

    python -m bench.strength --games 4000 --mode cube --ours expert --gnubg expert --workers 2 --seed 3 \\
        --cube-log var/strength/cubes_s3
    python -m bench.cube_errors var/strength/cubes_s3 [--plies 2] [--jobs 2]

bench/strength.py ``--cube-log`` records each double/no-double and take/pass decision of both sides with the
state before the double (the doubler on roll). Here gnubg evaluates those states (``cfevaluate``: no double,
double/take, double/pass; bench/_gnubg_agreement_worker.py) and each decision's error is what it gives up
against the best action: for the doubler max(ND, min(DT, DP)) minus the action's value, for the taker the
better of take and pass for him minus his choice. Decisions gnubg at 0-ply calls clear (no double by more than
``--clear``, and no double chosen) are not evaluated deeper and count as no error.

Reported per side and action (double, no double, take, pass): decisions, those with an error, errors in mEMG per decision (normalised to the
cube) and in points per game (the cube's value counted): the share of the duel's result that cube handling
explains. Prints a table and appends one JSON line to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.agreement import run_gnubg  # noqa: E402

DEFAULT_OUT = Path(__file__).with_name("results") / "cube_errors.jsonl"


def read_log(prefix: Path) -> list[dict]:
    rows = []
    for path in sorted(prefix.parent.glob(prefix.name + ".*")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def error(rec: dict, ev: dict) -> float:
    """Equity (per unit of the cube) that the recorded action gives up against the best one."""
    nd, dt, dp = ev["no_double"], ev["double_take"], ev["double_pass"]
    if rec["kind"] == "double":
        best = max(nd, min(dt, dp))
        return best - (min(dt, dp) if rec["yes"] else nd)
    mine = -dt if rec["yes"] else -dp  # the taker's view
    return max(-dt, -dp) - mine


def evaluate(states: list[str], plies: int, jobs: int, timeout: float) -> dict[str, dict]:
    requests = [{"i": i, "op": "cube", "gnubgid": g, "plies": plies} for i, g in enumerate(states)]
    answers = run_gnubg(requests, jobs, timeout, label=f"gnubg {plies}-ply", threads=1)
    bad = [a for a in answers.values() if "error" in a]
    if bad:
        raise SystemExit(f"gnubg could not evaluate {len(bad)} states, e.g. {bad[0]['error']}")
    return {states[i]: a for i, a in answers.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="the --cube-log prefix of a bench.strength run")
    ap.add_argument("--plies", type=int, default=2, help="gnubg's depth for the verdict")
    ap.add_argument("--clear", type=float, default=0.2, help="0-ply margin of a clear no double")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=7200.0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    rows = read_log(args.log)
    if not rows:
        raise SystemExit(f"no cube decisions in {args.log}.*")
    t0 = time.time()
    games = 2 * len({r["seed"] for r in rows})
    shallow = evaluate(sorted({r["gnubgid"] for r in rows}), 0, args.jobs, args.timeout)

    def clear(rec: dict) -> bool:
        ev = shallow[rec["gnubgid"]]
        return (
            rec["kind"] == "double"
            and not rec["yes"]
            and ev["no_double"] - min(ev["double_take"], ev["double_pass"]) > args.clear
        )

    deep_states = sorted({r["gnubgid"] for r in rows if not clear(r)})
    deep = evaluate(deep_states, args.plies, args.jobs, args.timeout) if args.plies > 0 else shallow
    table: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for rec in rows:
        action = {("double", True): "double", ("double", False): "no double", ("take", True): "take"}.get(
            (rec["kind"], rec["yes"]), "pass"
        )
        key = f"{rec['who']} {action}"
        t = table[key]
        t["decisions"] += 1
        if clear(rec):
            continue
        err = max(0.0, error(rec, deep[rec["gnubgid"]]))
        t["evaluated"] += 1
        t["wrong"] += err > 1e-4
        t["memg"] += 1000 * err
        t["points"] += err * rec["cube"]
    result = {
        "log": str(args.log),
        "games": games,
        "plies": args.plies,
        "seconds": round(time.time() - t0, 1),
        "sides": {
            k: {
                "decisions": int(v["decisions"]),
                "evaluated": int(v["evaluated"]),
                "wrong": int(v["wrong"]),
                "memg_per_decision": round(v["memg"] / max(1.0, v["evaluated"]), 2),
                "points_per_game": round(v["points"] / games, 4),
            }
            for k, v in sorted(table.items())
        },
    }
    print(
        f"{games} games, {len(rows)} cube decisions, {len(deep_states)} evaluated at {args.plies}-ply by gnubg"
    )
    print(
        f"{'side and action':<18} {'decisions':>9} {'close':>6} {'wrong':>6} {'mEMG/close':>10} {'points/game':>11}"
    )
    for k, v in result["sides"].items():
        print(
            f"{k:<18} {v['decisions']:>9} {v['evaluated']:>6} {v['wrong']:>6} {v['memg_per_decision']:>10.2f} "
            f"{v['points_per_game']:>11.4f}"
        )
    for who in ("ours", "gnubg"):
        total = sum(v["points_per_game"] for k, v in result["sides"].items() if k.startswith(who))
        result[f"{who}_points_per_game"] = round(total, 4)
        print(f"{who}: cube errors cost {total:.4f} points per game")
    append_json_line(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
