"""Our cubeful move ranking held to gnubg's on the same numbers, and cubeful against cubeless choices.

    python -m bench.cubeful_gnubg [--n 3000] [--seed 11] [--jobs 2] [--out bench/results/cubeful_gnubg.jsonl]
                                  [--vectors tests/data/gnubg_ranking.jsonl --vector-n 200]

Positions (with their roll and more than one legal play) come from noisy 0-ply self-play of our engine
(bench.agreement.self_play); each gets a cube state from a fixed mix: money with a centred cube (Jacoby off,
and Jacoby on), money cubes of 2 owned by either side, and 7-point match scores with the cube centred or owned.
gnubg (bench/_gnubg_agreement_worker.py, ``score0``) lists every legal move and gives, for the board after it, its 0-ply
cubeless probabilities and the opponent's 0-ply cubeful value after his best cube action: what gnubg's
ScoreMove ranks by at 0-ply.

Reported per cube state:

* **model**: our cubeful values (``Search.node_values``, the path ``Analyser.hint`` takes at 0-ply) computed
  from gnubg's own probabilities, against gnubg's cubeful values: largest difference, and how often the best
  move differs;
* **choices**: how often cubeful and cubeless ranking choose different moves, gnubg's (its nets) beside ours
  (our nets, ``Analyser.hint`` against ``Search.rank`` by cubeless equity), and what the cubeful choice costs
  in cubeless equity by gnubg's 0-ply numbers (mEMG per move).

``--vectors`` writes the first ``--vector-n`` answers as test vectors (tests/test_cubeful_gnubg.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.agreement import Sample, progress, run_gnubg, self_play  # noqa: E402
from engine import cubeful as cf  # noqa: E402
from engine.analyser import Analyser  # noqa: E402
from engine.cube import CubeInfo, cubeless_equity  # noqa: E402
from engine.encoding import positions_to_array  # noqa: E402
from engine.evaluator import invert  # noqa: E402
from engine.position import Position  # noqa: E402
from engine.search import Search  # noqa: E402

DEFAULT_OUT = Path(__file__).with_name("results") / "cubeful_gnubg.jsonl"
HEX = "0123456789abcdef"
LENGTH = 7

# (label, share) of the cube states given to the positions.
MIX = (
    ("money centred, Jacoby off", 0.30),
    ("money centred, Jacoby on", 0.20),
    ("money cube 2 owned by mover", 0.10),
    ("money cube 2 owned by opponent", 0.10),
    ("7-point match, centred", 0.20),
    ("7-point match, owned", 0.10),
)


def cube_state(label: str, rng: random.Random, on_roll: int) -> CubeInfo:
    if label.startswith("money centred"):
        return CubeInfo.money(1, -1, on_roll, jacoby=label.endswith("on"), beavers=False)
    if label == "money cube 2 owned by mover":
        return CubeInfo.money(2, on_roll, on_roll, jacoby=False, beavers=False)
    if label == "money cube 2 owned by opponent":
        return CubeInfo.money(2, 1 - on_roll, on_roll, jacoby=False, beavers=False)
    score = (rng.randint(0, LENGTH - 2), rng.randint(0, LENGTH - 2))
    if label.endswith("centred"):
        return CubeInfo(1, -1, on_roll, LENGTH, score, False, False, False)
    return CubeInfo(2, rng.randint(0, 1), on_roll, LENGTH, score, False, False, False)


def samples(analyser: Analyser, n: int, seed: int) -> list[tuple[str, Sample]]:
    moves, _, _ = self_play(analyser, n, 0, seed)
    rng = random.Random(seed + 7)
    out = []
    bounds = np.cumsum([share for _, share in MIX])
    for i, s in enumerate(moves):
        k = int(np.searchsorted(bounds, (i + 0.5) / len(moves)))
        label = MIX[min(k, len(MIX) - 1)][0]
        out.append((label, Sample(s.position, s.dice, cube_state(label, rng, rng.randint(0, 1)))))
    return out


def decode_after(text: str) -> Position:
    """The worker's board after a move (side not on roll, then mover), as the mover sees it."""
    counts = [HEX.index(c) for c in text]
    return Position(counts[25:], counts[:25])


def mover_values(search: Search, ci: CubeInfo, afters: list[Position], opp_probs: np.ndarray) -> np.ndarray:
    """(opponent's collapsed cubeful value as normalised equity, mover's equity) per move, as hint ranks."""
    reply = ci.swapped()
    boards = positions_to_array([a.swap() for a in afters], np.uint8)
    values = search.node_values(boards, opp_probs, [reply])
    opp_eq = cf.to_equity(values[:, 0], reply, search.met)
    mover = cf.to_equity(cf.flip(values, [reply])[:, 0], ci, search.met)
    return np.stack([opp_eq, mover], axis=1)


def compare(analyser: Analyser, label: str, sample: Sample, ans: dict) -> dict[str, object]:
    ci = sample.ci
    moves = ans["moves"]
    afters = [decode_after(m["after"]) for m in moves]
    opp_probs = np.array([m["opp_probs"] for m in moves])
    ours = mover_values(analyser.search, ci, afters, opp_probs)
    gnubg_opp = np.array([m["opp_optimal"] for m in moves])
    gnubg_cf = np.array([m["hint_equity"] for m in moves])
    cubeless = np.array([cubeless_equity(p, ci, analyser.met) for p in invert(opp_probs)])
    g_cf, g_cl, o_cf = int(np.argmax(gnubg_cf)), int(np.argmax(cubeless)), int(np.argmax(ours[:, 1]))
    # Our nets: the daemon's hint (cubeful) against ranking by cubeless equity.
    nets_cf = analyser.hint(sample.position, sample.dice, ci, 0)[0].play.position
    nets_cl = analyser.search.rank(sample.position, sample.dice, 0, equity=analyser.cubeless_fn(ci))
    index = {a: k for k, a in enumerate(afters)}
    n_cf, n_cl = index[nets_cf], index[nets_cl[0].play.position]
    return {
        "label": label,
        "diff_opp": float(np.max(np.abs(ours[:, 0] - gnubg_opp))),
        "diff_move": float(np.max(np.abs(ours[:, 1] - gnubg_cf))),
        "model_differs": o_cf != g_cf and abs(gnubg_cf[o_cf] - gnubg_cf[g_cf]) > 1e-6,
        "gnubg_differs": g_cf != g_cl,
        "gnubg_cost": float(cubeless[g_cl] - cubeless[g_cf]),
        "ours_differs": n_cf != n_cl,
        "ours_cost": float(cubeless[n_cl] - cubeless[n_cf]),  # by gnubg's cubeless numbers
        "ours_cf_vs_gnubg_cf": float(gnubg_cf[g_cf] - gnubg_cf[n_cf]),
        "ours_cl_vs_gnubg_cf": float(gnubg_cf[g_cf] - gnubg_cf[n_cl]),
    }


def report(rows: list[dict[str, object]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, object]]] = defaultdict(list)
    for r in rows:
        groups[str(r["label"])].append(r)
    groups["all"] = rows
    out = {}
    for label, rs in groups.items():
        n = len(rs)

        def mean(key: str, rs: list[dict[str, object]] = rs) -> float:
            return float(np.mean([float(r[key]) for r in rs]))  # type: ignore[arg-type]

        out[label] = {
            "n": n,
            "max_diff_opp": max(float(r["diff_opp"]) for r in rs),  # type: ignore[arg-type]
            "max_diff_move": max(float(r["diff_move"]) for r in rs),  # type: ignore[arg-type]
            "model_differs": mean("model_differs"),
            "gnubg_cf_ne_cl": mean("gnubg_differs"),
            "ours_cf_ne_cl": mean("ours_differs"),
            "gnubg_cost_memg": 1000 * mean("gnubg_cost"),
            "ours_cost_memg": 1000 * mean("ours_cost"),
            "ours_cf_loss_memg": 1000 * mean("ours_cf_vs_gnubg_cf"),
            "ours_cl_loss_memg": 1000 * mean("ours_cl_vs_gnubg_cf"),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--vectors", type=Path, help="write test vectors here")
    ap.add_argument("--vector-n", type=int, default=200)
    args = ap.parse_args(argv)
    analyser = Analyser.default()
    chosen = samples(analyser, args.n, args.seed)
    requests: list[dict[str, object]] = [
        {"i": i, "op": "score0", "gnubgid": s.gnubg_id} for i, (_, s) in enumerate(chosen)
    ]
    answers = run_gnubg(requests, args.jobs, args.timeout, label="gnubg 0-ply", threads=1)
    rows, errors = [], 0
    for i, (label, s) in enumerate(chosen):
        ans = answers.get(i)
        if ans is None or "error" in ans:
            errors += 1
            continue
        rows.append(compare(analyser, label, s, ans))
        progress("ours", len(rows), len(chosen) - errors)
    result = report(rows)
    header = f"{'cube state':34} {'n':>5} {'max|d|':>8} {'model≠':>7} {'gnubg cf≠cl':>11} {'ours cf≠cl':>10}"
    header += f" {'gnubg cost':>10} {'ours cost':>9} {'ours cf loss':>12} {'ours cl loss':>12}"
    print(header)
    for label, r in result.items():
        print(
            f"{label:34} {r['n']:5d} {r['max_diff_move']:8.1e} {100 * r['model_differs']:6.1f}% "
            f"{100 * r['gnubg_cf_ne_cl']:10.1f}% {100 * r['ours_cf_ne_cl']:9.1f}% "
            f"{r['gnubg_cost_memg']:10.2f} {r['ours_cost_memg']:9.2f} {r['ours_cf_loss_memg']:12.2f} "
            f"{r['ours_cl_loss_memg']:12.2f}"
        )
    print(f"errors: {errors}")
    append_json_line(args.out, {"n": args.n, "seed": args.seed, "errors": errors, "result": result})
    if args.vectors:
        write_vectors(args.vectors, chosen[: args.vector_n], answers)
    return 0


def write_vectors(path: Path, chosen: list[tuple[str, Sample]], answers: dict[int, dict]) -> None:
    """One line per position: its cube state, and per legal move [position ID of the board after it with the
    opponent on roll, the opponent's five probabilities, his cubeful value after his best cube action, the
    hint's equity], as gnubg gave them (single precision inside gnubg: 9 significant digits keep them exact)."""

    def g(x: float) -> float:
        return float(f"{x:.9g}")

    with path.open("w") as fh:
        for i, (label, s) in enumerate(chosen):
            ans = answers.get(i)
            if ans is None or "error" in ans:
                continue
            moves = [
                [
                    decode_after(m["after"]).swap().position_id,
                    [g(p) for p in m["opp_probs"]],
                    g(m["opp_optimal"]),
                    g(m["hint_equity"]),
                ]
                for m in ans["moves"]
            ]
            row = {"label": label, "gnubgid": s.gnubg_id, "ci": list(_ci_fields(s.ci)), "moves": moves}
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")


def _ci_fields(ci: CubeInfo) -> tuple[object, ...]:
    return (
        ci.cube,
        ci.owner,
        ci.on_roll,
        ci.match_length,
        list(ci.score),
        ci.crawford,
        ci.jacoby,
        ci.beavers,
    )


if __name__ == "__main__":
    raise SystemExit(main())
