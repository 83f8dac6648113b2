"""Paired difference of two duplicate-dice money duels played with the same seeds (two checkpoints).

    python -m bench.compare_duels bench/results/checkpoints/money_cubeless_expert_expert_s2 \\
                                  bench/results/checkpoints/money_cubeless-ranking_expert_expert_s2

Both duels play the same dice sequences against the same deterministic gnubg, so a sequence's two results
differ only where the two players' moves differ: the difference per sequence has a much smaller spread than
either result, and its mean with a 95% interval says whether one player is better than the other.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.strength import read_checkpoint, summarise  # noqa: E402


def compare(a: Path, b: Path) -> dict[str, float]:
    ra, rb = read_checkpoint(a), read_checkpoint(b)
    seeds = sorted(set(ra) & set(rb))
    diff = [ra[s][0] - rb[s][0] for s in seeds]
    out = summarise(diff)
    out.update(
        a_ppg=summarise([ra[s][0] for s in seeds])["ppg"],
        b_ppg=summarise([rb[s][0] for s in seeds])["ppg"],
        sequences_differing=float(np.mean([d != 0 for d in diff])) if diff else 0.0,
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path, help="checkpoint prefix of the first duel")
    ap.add_argument("b", type=Path, help="checkpoint prefix of the second duel")
    args = ap.parse_args(argv)
    r = compare(args.a, args.b)
    print(json.dumps(r))
    print(
        f"{args.a.name} - {args.b.name}: {r['ppg']:+.4f} ± {r['ci95']:.4f} ppg over {r['pairs']} common dice "
        f"sequences ({r['a_ppg']:+.3f} vs {r['b_ppg']:+.3f}; {100 * r['sequences_differing']:.0f}% of the "
        "sequences scored differently)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
