"""Cubeful against cubeless move ranking at n plies, ours beside gnubg's, judged by gnubg 2-ply.

    python -m bench.ranking_depth [--n 400] [--plies 2] [--seed 5] [--jobs 2]

The daemon ranks moves by cubeful equity for the match's cube state. In cubeless money duels that ranking
differs from the cubeless one on some moves, and the difference grows with depth (at 2-ply the tree holds cube
decisions: cashes, "too good" positions). This bench asks whether our differences are real cube plays or a flaw:

1. ``--n`` positions with a roll from noisy 0-ply self-play (bench/agreement.py's sampler), money, cube centred,
   Jacoby off. Our choice at ``--plies`` ranked cubefully (``Analyser.hint``, the daemon's path) and cubelessly.
2. gnubg's 2-ply choice ranking cubefully and cubelessly on the same positions (two hints), and gnubg's 2-ply
   cubeful and cubeless equity of every move either of us chose (bench/_gnubg_agreement_worker.py "ranking").

Reported: how often each program's two rankings choose different moves, and, where ours differ, what gnubg
thinks our cubeful choice gains cubefully and loses cubelessly (mEMG, mean with a 95% interval). Real cube
plays gain cubefully what they lose cubelessly; a flaw loses in both.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.agreement import board_hex, progress, run_gnubg, self_play  # noqa: E402
from engine.analyser import Analyser  # noqa: E402
from engine.cube import CubeInfo  # noqa: E402
from engine.evaluator import money_equity  # noqa: E402

DEFAULT_OUT = Path(__file__).with_name("results") / "ranking_depth.jsonl"


def mean_ci(xs: list[float]) -> tuple[float, float]:
    if not xs:
        return math.nan, math.nan
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, math.nan
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, 1.96 * math.sqrt(var / len(xs))


def score(ours: list[tuple[str, str]], answers: list[dict]) -> dict[str, object]:
    """The bench's figures from our (cubeful, cubeless) choices and gnubg's answers, position by position.

    Equities are gnubg's 2-ply ``[cubeful, cubeless]`` of each board, for the mover; mEMG with a 95% interval.
    """
    ours_differ = [k for k, (a, b) in enumerate(ours) if a != b]
    gnubg_differ = [
        k for k, ans in enumerate(answers) if ans["choice"]["cubeful"] != ans["choice"]["cubeless"]
    ]
    gain_cubeful = [
        1000 * (answers[k]["extra"][ours[k][0]][0] - answers[k]["extra"][ours[k][1]][0]) for k in ours_differ
    ]
    gain_cubeless = [
        1000 * (answers[k]["extra"][ours[k][0]][1] - answers[k]["extra"][ours[k][1]][1]) for k in ours_differ
    ]

    def loss(k: int, board: str, which: int) -> float:
        """What ``board`` gives up against gnubg's own choice under its cubeful (0) or cubeless (1) ranking."""
        eq = answers[k]["extra"]
        best = eq[answers[k]["choice"]["cubeful" if which == 0 else "cubeless"]][which]
        return 1000 * max(0.0, best - eq[board][which])

    rows = range(len(ours))
    return {
        "ours_differ_rows": ours_differ,
        "gnubg_differ_rows": gnubg_differ,
        "ours_differ": len(ours_differ),
        "gnubg_differ": len(gnubg_differ),
        "both_differ": len(set(ours_differ) & set(gnubg_differ)),
        "ours_cubeful_gain_cubeful_memg": mean_ci(gain_cubeful),
        "ours_cubeful_gain_cubeless_memg": mean_ci(gain_cubeless),
        "ours_cubeful_choice_loss_cubeful_memg": mean_ci([loss(k, ours[k][0], 0) for k in rows]),
        "ours_cubeless_choice_loss_cubeful_memg": mean_ci([loss(k, ours[k][1], 0) for k in rows]),
        "ours_cubeful_choice_loss_cubeless_memg": mean_ci([loss(k, ours[k][0], 1) for k in rows]),
        "ours_cubeless_choice_loss_cubeless_memg": mean_ci([loss(k, ours[k][1], 1) for k in rows]),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="positions with a roll")
    ap.add_argument("--plies", type=int, default=2, help="our search depth")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2, help="gnubg processes")
    ap.add_argument("--timeout", type=float, default=7200.0)
    ap.add_argument("--models", type=Path, help="model folder (default: the shipped nets)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="append the JSON line here")
    ap.add_argument(
        "--details", type=Path, help="write each position where a ranking differs here (JSON lines)"
    )
    args = ap.parse_args(argv)

    analyser = Analyser.default(args.models, threads=1)
    samples, _, games = self_play(analyser, args.n, 0, args.seed)
    samples = [
        replace(s, ci=CubeInfo.money(jacoby=False, beavers=False, on_roll=s.ci.on_roll)) for s in samples
    ]
    t0 = time.time()
    ours: list[tuple[str, str]] = []
    for k, s in enumerate(samples):
        assert s.dice is not None
        cubeful = analyser.hint(s.position, s.dice, s.ci, args.plies)[0].play.position
        cubeless = analyser.search.rank(s.position, s.dice, args.plies, equity=money_equity)[0].play.position
        ours.append((board_hex(cubeful), board_hex(cubeless)))
        progress("ours", k + 1, len(samples))
    progress("ours", len(samples), len(samples), True)
    requests = [
        {"i": i, "op": "ranking", "gnubgid": s.gnubg_id, "extra": sorted(set(ours[i]))}
        for i, s in enumerate(samples)
    ]
    answers = run_gnubg(requests, args.jobs, args.timeout, label="gnubg", threads=1)
    errors = [a["error"] for a in answers.values() if "error" in a]
    if errors:
        print(f"gnubg could not answer {len(errors)} requests, e.g. {errors[0]}", file=sys.stderr)
    ok = [i for i in range(len(samples)) if i in answers and "error" not in answers[i]]
    scores = score([ours[i] for i in ok], [answers[i] for i in ok])
    ours_differ = [ok[k] for k in scores.pop("ours_differ_rows")]
    gnubg_differ = [ok[k] for k in scores.pop("gnubg_differ_rows")]
    result = {
        "n": len(ok),
        "plies": args.plies,
        "seed": args.seed,
        "self_play_games": games,
        **scores,
        "seconds": round(time.time() - t0, 1),
        "date": time.strftime("%Y-%m-%d"),
    }
    n = max(1, len(ok))
    print(
        f"{len(ok)} positions, money, cube centred. Cubeful and cubeless ranking choose different moves: ours at "
        f"{args.plies}-ply {len(ours_differ)} ({100 * len(ours_differ) / n:.1f}%), gnubg at 2-ply "
        f"{len(gnubg_differ)} ({100 * len(gnubg_differ) / n:.1f}%), both {result['both_differ']}."
    )
    g = result["ours_cubeful_gain_cubeful_memg"]
    print(
        f"Where ours differ, gnubg 2-ply says our cubeful choice gains {g[0]:+.2f} ± {g[1]:.2f} mEMG cubefully and "
        f"{result['ours_cubeful_gain_cubeless_memg'][0]:+.2f} ± {result['ours_cubeful_gain_cubeless_memg'][1]:.2f}"
        " cubelessly (per differing move)."
    )
    for which in ("cubeful", "cubeless"):
        a = result[f"ours_cubeful_choice_loss_{which}_memg"]
        b = result[f"ours_cubeless_choice_loss_{which}_memg"]
        print(
            f"Loss per move against gnubg's {which} 2-ply choice, by gnubg's {which} equity: our cubeful ranking "
            f"{a[0]:.2f} ± {a[1]:.2f}, our cubeless ranking {b[0]:.2f} ± {b[1]:.2f} mEMG"
        )
    if args.details:
        with args.details.open("w") as fh:
            for i in sorted(set(ours_differ) | set(gnubg_differ)):
                a = answers[i]
                fh.write(
                    json.dumps(
                        {
                            "gnubgid": samples[i].gnubg_id,
                            "ours": {"cubeful": ours[i][0], "cubeless": ours[i][1]},
                            "gnubg": a["choice"],
                            "equities": a["extra"],  # board -> [gnubg 2-ply cubeful, cubeless]
                        }
                    )
                    + "\n"
                )
    append_json_line(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
