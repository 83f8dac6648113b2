"""Paired difference of two duplicate-dice money duels played with the same seeds (two checkpoints).

    python -m bench.compare_duels bench/results/checkpoints/money_cubeless_expert_expert_s2 \\
                                  bench/results/checkpoints/money_cubeless-ranking_expert_expert_s2

Both duels play the same dice sequences against the same deterministic gnubg, so a sequence's two results
differ only where the two players' moves differ: the difference per sequence has a much smaller spread than
either result, and its mean with a 95% interval says whether one player is better than the other.

Each side may name several checkpoints separated by commas (duels of other seeds: their dice sequences are
distinct), pooled before pairing; with one side only, the pooled duel's own result is printed:

    python -m bench.compare_duels var/strength/money_cubeless_expert_expert_s2,var/strength/money_cubeless_expert_expert_s3

``--plot FILE`` draws each duel's running mean with its 95% band as the sequences come in (in seed order), and
the paired difference below it: where a figure that looked settled at 700 pairs still moves, the plot shows it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
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


def paired(a: Path | str, b: Path | str) -> tuple[list[float], list[float]]:
    """The two duels' results on the dice sequences both played, in seed order."""
    ra, rb = read_pooled(str(a)), read_pooled(str(b))
    seeds = sorted(set(ra) & set(rb))
    return [ra[s][0] for s in seeds], [rb[s][0] for s in seeds]


def compare(a: Path | str, b: Path | str) -> dict[str, float]:
    return summarise_pair(*paired(a, b))


def summarise_pair(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """The paired difference a - b with its interval, each side's own mean, and how many sequences differ."""
    diff = [x - y for x, y in zip(a, b, strict=True)]
    out = summarise(diff)
    out.update(
        a_ppg=summarise(list(a))["ppg"],
        b_ppg=summarise(list(b))["ppg"],
        sequences_differing=float(np.mean([d != 0 for d in diff])) if diff else 0.0,
    )
    return out


def running_mean(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The mean of the first k values and its 95% half-width, for k = 1..n (the half-width is NaN for k = 1)."""
    arr = np.asarray(values, dtype=np.float64)
    k = np.arange(1, len(arr) + 1)
    # Running sums of the values less the first one: the sample variance from sums then loses nothing to
    # cancellation where the values are alike (equal values give exactly 0).
    d = arr - arr[0] if len(arr) else arr
    s1, s2 = np.cumsum(d), np.cumsum(d * d)
    mean = arr[0] + s1 / k if len(arr) else s1
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.clip((s2 - s1 * s1 / k) / (k - 1), 0.0, None)
        half = 1.96 * np.sqrt(var / k)
    half[:1] = np.nan
    return mean, half


def plot(
    series: dict[str, Sequence[float]],
    diff: Sequence[float] | None,
    path: Path,
    target: float | None = None,
) -> str:
    """Running means with 95% bands of each duel and, when given, of their paired difference (and a target
    line in the duels' panel); a message if matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    rows = 2 if diff is not None else 1
    fig, axes = plt.subplots(rows, 1, figsize=(9, 3.6 * rows), squeeze=False, sharex=True)
    panels = [(axes[0][0], series)] + (
        [(axes[1][0], {"paired difference": diff})] if diff is not None else []
    )
    for i, (ax, lines) in enumerate(panels):
        lows, highs = [], []
        for name, values in lines.items():
            mean, half = running_mean(values)
            x = np.arange(1, len(mean) + 1)
            ax.plot(x, mean, label=f"{name}: {mean[-1]:+.3f} ± {half[-1]:.3f}")
            ax.fill_between(x, mean - half, mean + half, alpha=0.2)
            # The first few dozen sequences swing by whole points: scale the axis to the band after them.
            skip = min(len(mean) - 1, max(20, len(mean) // 10))
            lows.append(np.nanmin(mean[skip:] - half[skip:]))
            highs.append(np.nanmax(mean[skip:] + half[skip:]))
        ax.axhline(0.0, color="grey", linewidth=0.8)
        if target is not None and i == 0:
            ax.axhline(target, color="red", linestyle="--", linewidth=0.8, label=f"target {target:+.3f}")
            lows.append(target)
            highs.append(target)
        if all(np.isfinite(lows + highs)):
            pad = 0.1 * (max(highs) - min(lows)) or 0.1
            ax.set_ylim(min(lows) - pad, max(highs) + pad)
        ax.set(ylabel="ppg (running mean, 95%)")
        ax.legend(loc="upper right", fontsize="small")
    axes[-1][0].set(xlabel="dice sequences (pairs of games), in seed order")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot written to {path}"


def _names(spec: str, depth: int) -> str:
    """The last ``depth`` path components of each comma-separated checkpoint prefix."""
    return ",".join("/".join(Path(p).parts[-depth:]) for p in spec.split(","))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="checkpoint prefix(es) of the first duel, comma-separated")
    ap.add_argument("b", nargs="?", help="checkpoint prefix(es) of the second duel, comma-separated")
    ap.add_argument(
        "--plot", type=Path, help="write the running means (and the paired difference) to this PNG"
    )
    ap.add_argument("--target", type=float, help="with --plot, a line at this ppg in the duels' panel")
    args = ap.parse_args(argv)
    # Checkpoints of two net versions often share a file name (v3.1/x, v3.2/x): then name them by folder too.
    depth = 2 if args.b and _names(args.a, 1) == _names(args.b, 1) else 1
    name = lambda spec: _names(spec, depth)  # noqa: E731
    if args.b is None:
        pooled = read_pooled(args.a)
        one = summarise([v[0] for v in pooled.values()])
        print(json.dumps(one))
        print(f"{name(args.a)}: {one['ppg']:+.4f} ± {one['ci95']:.4f} ppg over {one['pairs']} dice sequences")
        if args.plot:
            print(plot({name(args.a): [pooled[s][0] for s in sorted(pooled)]}, None, args.plot, args.target))
        return 0
    a, b = paired(args.a, args.b)
    if args.plot:
        diff = [x - y for x, y in zip(a, b, strict=True)]
        print(plot({name(args.a): a, name(args.b): b}, diff, args.plot, args.target))
    r = summarise_pair(a, b)
    print(json.dumps(r))
    print(
        f"{name(args.a)} - {name(args.b)}: {r['ppg']:+.4f} ± {r['ci95']:.4f} ppg over {r['pairs']} common dice "
        f"sequences ({r['a_ppg']:+.3f} vs {r['b_ppg']:+.3f}; {100 * r['sequences_differing']:.0f}% of the "
        "sequences scored differently)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
