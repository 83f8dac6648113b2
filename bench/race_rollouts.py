"""Race nets against rolled-out races they were not fitted on: the held-out 5% of train/data/race_rollouts.

    python -m bench.race_rollouts [--models DIR ...] [--teacher]

The rollouts (``train.rollouts``: bgsage's own net plays 72 trials of each race to the end, with variance
reduction; the held-out rows' equity standard error averages 0.009) are the reference; ``train.fit --rollouts``
holds out their last 5% (``train.rollouts.held_out_rows``), which this bench scores. Each ``--models`` folder
(default: the shipped nets) is scored through the evaluator the player uses; ``--teacher`` adds bgsage 2-ply, the
labels of the race nets before v3.1.

Per evaluator: mean absolute error of the cubeless money equity and its bias, the share of positions off by
more than 0.05 and 0.1, and the MAE of P(win). Part of every error is the rollouts' own noise. A table goes to
stdout, a JSON line to ``--out``, histograms of the errors to ``--png``.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from engine.evaluator import money_equity  # noqa: E402
from train.rollouts import held_out_rows  # noqa: E402

ROLLOUTS = ROOT / "train" / "data" / "race_rollouts" / "race_72.npz"
DEFAULT_OUT = HERE / "results" / "race_rollouts.jsonl"
DEFAULT_PNG = HERE / "results" / "race_rollouts.png"


def held_out(path: Path = ROLLOUTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boards, rolled-out probabilities and standard errors of the rows ``train.fit --rollouts`` held out."""
    data = np.load(path)
    rows = held_out_rows(len(data["boards"]))
    return data["boards"][rows], data["probs"][rows].astype(np.float64), data["se"][rows]


def score(probs: np.ndarray, reference: np.ndarray) -> tuple[dict[str, float], np.ndarray]:
    err = money_equity(probs) - money_equity(reference)
    row = {
        "equity_mae": round(float(np.abs(err).mean()), 4),
        "equity_bias": round(float(err.mean()), 4),
        "over_0.05_pct": round(100 * float((np.abs(err) > 0.05).mean()), 2),
        "over_0.1_pct": round(100 * float((np.abs(err) > 0.1).mean()), 2),
        "win_mae": round(float(np.abs(probs[:, 0] - reference[:, 0]).mean()), 4),
    }
    return row, err


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--models", type=Path, action="append", help="model folder (repeatable; default: shipped)"
    )
    ap.add_argument("--teacher", action="store_true", help="score bgsage 2-ply too (needs the train extra)")
    ap.add_argument("--rollouts", type=Path, default=ROLLOUTS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="append the result as a JSON line here")
    ap.add_argument("--png", type=Path, default=DEFAULT_PNG, help="histograms of the equity errors")
    args = ap.parse_args(argv)
    from engine.analyser import Analyser

    boards, reference, se = held_out(args.rollouts)
    rows: dict[str, dict[str, float]] = {}
    errors: dict[str, np.ndarray] = {}
    for folder in args.models or [None]:
        analyser = Analyser.default(folder)
        name = analyser.name if folder is None else f"{analyser.name} ({folder})"
        rows[name], errors[name] = score(analyser.evaluator.evaluate_boards(boards), reference)
    if args.teacher:
        from train import teacher

        rows["bgsage 2-ply"], errors["bgsage 2-ply"] = score(teacher.evaluate(boards, "2ply"), reference)
    print(f"{len(boards)} held-out rolled-out races; their mean standard error {float(se.mean()):.4f}")
    print(f"{'evaluator':<44} {'MAE':>7} {'bias':>8} {'>0.05':>7} {'>0.1':>6} {'MAE win':>8}")
    for name, r in rows.items():
        print(
            f"{name:<44} {r['equity_mae']:>7.4f} {r['equity_bias']:>+8.4f} {r['over_0.05_pct']:>6.2f}%"
            f" {r['over_0.1_pct']:>5.2f}% {r['win_mae']:>8.4f}"
        )
    append_json_line(
        args.out,
        {
            "bench": "race_rollouts",
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "positions": len(boards),
            "rollout_se": round(float(se.mean()), 4),
            "rows": rows,
        },
    )
    plot(errors, args.png)
    return 0


def plot(errors: dict[str, np.ndarray], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    bins = np.linspace(-0.3, 0.3, 121)
    for name, err in errors.items():
        ax.hist(np.clip(err, -0.3, 0.3), bins=bins, histtype="step", log=True, label=name)
    ax.set_xlabel("equity error against the rollout (clipped to ±0.3)")
    ax.set_ylabel("positions (log)")
    ax.legend(fontsize=8)
    ax.set_title("race evaluators on held-out rolled-out races")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"plot written to {path}")


if __name__ == "__main__":
    raise SystemExit(main())
