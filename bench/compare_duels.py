"""Paired difference of two duplicate-dice money duels played with the same seeds (two checkpoints).

    python -m bench.compare_duels bench/results/checkpoints/money_cubeless_expert_expert_s2 \\
                                  bench/results/checkpoints/money_cubeless-ranking_expert_expert_s2

Both duels play the same dice sequences against the same deterministic gnubg, so a sequence's two results
differ only where the two players' moves differ: the difference per sequence has a much smaller spread than
either result, and its mean with a 95% interval says whether one player is better than the other.

Each side may name several checkpoints separated by commas (duels of other seeds: their dice sequences are
distinct), pooled before pairing; with one side only, the pooled duel's own result is printed:

    python -m bench.compare_duels var/strength/money_cubeless_expert_expert_s2,var/strength/money_cubeless_expert_expert_s3
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


def read_pooled(spec: str) -> dict[int, tuple[float, ...]]:
    """The finished pairs of one or more checkpoints (comma-separated prefixes), by dice sequence."""
    out: dict[int, tuple[float, ...]] = {}
    for part in spec.split(","):
        got = read_checkpoint(Path(part))
        if not got:
            raise SystemExit(f"no finished pairs under {part}.*")
        out.update(got)
    return out


def compare(a: Path | str, b: Path | str) -> dict[str, float]:
    ra, rb = read_pooled(str(a)), read_pooled(str(b))
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
    ap.add_argument("a", help="checkpoint prefix(es) of the first duel, comma-separated")
    ap.add_argument("b", nargs="?", help="checkpoint prefix(es) of the second duel, comma-separated")
    args = ap.parse_args(argv)
    name = lambda spec: ",".join(Path(p).name for p in spec.split(","))  # noqa: E731
    if args.b is None:
        one = summarise([v[0] for v in read_pooled(args.a).values()])
        print(json.dumps(one))
        print(f"{name(args.a)}: {one['ppg']:+.4f} ± {one['ci95']:.4f} ppg over {one['pairs']} dice sequences")
        return 0
    r = compare(args.a, args.b)
    print(json.dumps(r))
    print(
        f"{name(args.a)} - {name(args.b)}: {r['ppg']:+.4f} ± {r['ci95']:.4f} ppg over {r['pairs']} common dice "
        f"sequences ({r['a_ppg']:+.3f} vs {r['b_ppg']:+.3f}; {100 * r['sequences_differing']:.0f}% of the "
        "sequences scored differently)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
