"""The race net against the exact bearoff databases, on positions both apply to.

    python -m bench.race_bearoff --n 5000 --seed 1

Target (the training issue): mean absolute error of the race net's P(win) under 0.01 against the exact
one-sided bearoff database. Both apply where every chequer of both sides is on its own points 1-6. The
composite evaluator sends those positions to the database, so the race net is called directly here.

Two sets of ``--n`` positions, the player on roll's view before the roll, reported apart:

* ``selfplay``: every pre-roll position in the database's range reached in self-play of our expert (0-ply,
  as the bot plays a money game), duplicates kept as play reaches them;
* ``random``: uniformly random bearoff positions: 1..15 chequers a side, uniform over the spreads of that
  many chequers over points 1-6.

Per set: MAE and maximum error of P(win), MAE of P(win gammon) and P(lose gammon), split by the two-sided
range (at most 6 chequers a side, where the database is exact for any play) against the rest (one-sided
distributions, exact for play that minimises the rolls), and by whether a gammon is still possible (a side
with no chequer off). A table goes to stdout, a JSON line to ``--out``, and a scatter of net against exact
P(win) with the error histogram to ``--png``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.levels import BenchOptionError, hint_chooser, play_duel  # noqa: E402
from bench.strength import dice_sequence  # noqa: E402
from engine.bearoff import BearoffDatabase  # noqa: E402
from engine.encoding import positions_to_array  # noqa: E402
from engine.levels import LEVELS  # noqa: E402
from engine.position import Position  # noqa: E402

TARGET_MAE = 0.01
POINTS = 6
MAX_CHEQUERS = 15
TWO_SIDED_CHEQUERS = 6
WIN, WIN_GAMMON, LOSE_GAMMON = 0, 1, 3  # gnubg's output columns
DEFAULT_OUT = HERE / "results" / "race_bearoff.jsonl"
DEFAULT_PNG = HERE / "results" / "race_bearoff.png"


# -- positions -----------------------------------------------------------------------------------------------


def random_home_side(rng: random.Random, chequers: int) -> tuple[int, ...]:
    """``chequers`` (1..15) spread over points 1-6, each spread equally likely (stars and bars)."""
    if not 1 <= chequers <= MAX_CHEQUERS:
        raise BenchOptionError(f"a bearoff side has 1..{MAX_CHEQUERS} chequers, not {chequers}")
    bars = sorted(rng.sample(range(chequers + POINTS - 1), POINTS - 1))
    edges = [-1, *bars, chequers + POINTS - 1]
    return tuple(edges[k + 1] - edges[k] - 1 for k in range(POINTS))


def random_bearoff_position(rng: random.Random) -> Position:
    """Both sides with 1..15 chequers (uniform), all on their own points 1-6."""
    pad = (0,) * (25 - POINTS)
    me = random_home_side(rng, rng.randint(1, MAX_CHEQUERS))
    opp = random_home_side(rng, rng.randint(1, MAX_CHEQUERS))
    return Position(me + pad, opp + pad)


def random_positions(n: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    return [random_bearoff_position(rng) for _ in range(n)]


def selfplay_positions(n: int, seed: int, analyser: Any, db: BearoffDatabase) -> tuple[list[Position], int]:
    """The first ``n`` pre-roll positions in the database's range met in self-play of our expert, and the
    number of games played to meet them."""
    found: list[Position] = []
    expert = hint_chooser(analyser, LEVELS["expert"])

    def keep(pos: Position, _seat: int) -> None:
        if db.applies(pos):
            found.append(pos)

    games = 0
    while len(found) < n:
        play_duel(dice_sequence(seed * 1_000_003 + games), (expert, expert), on_turn=keep)
        games += 1
    return found[:n], games


# -- errors --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ErrorStats:
    """The net's errors on a group of positions against the exact figures (errors = net - exact)."""

    n: int
    mae_win: float
    max_win: float
    bias_win: float
    mae_win_gammon: float
    mae_lose_gammon: float

    @classmethod
    def of(cls, net: np.ndarray, exact: np.ndarray) -> ErrorStats:
        """Stats of (n, 5) outputs; all zero for an empty group."""
        net, exact = np.asarray(net, dtype=np.float64), np.asarray(exact, dtype=np.float64)
        if net.shape != exact.shape or net.ndim != 2 or net.shape[1] != 5:
            raise BenchOptionError(f"outputs must be two (n, 5) arrays, not {net.shape} and {exact.shape}")
        if not len(net):
            return cls(0, 0.0, 0.0, 0.0, 0.0, 0.0)
        err = net - exact
        absolute = np.abs(err)
        return cls(
            len(net),
            float(absolute[:, WIN].mean()),
            float(absolute[:, WIN].max()),
            float(err[:, WIN].mean()),
            float(absolute[:, WIN_GAMMON].mean()),
            float(absolute[:, LOSE_GAMMON].mean()),
        )

    def rounded(self) -> dict[str, float | int]:
        return {k: (round(v, 5) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def groups(positions: Sequence[Position]) -> dict[str, np.ndarray]:
    """Boolean masks of the breakdown: the two-sided range or not, a gammon still possible or not."""
    boards = positions_to_array(positions, np.int16)
    counts = boards.sum(axis=2)  # (n, 2) chequers left per side
    two_sided = (counts <= TWO_SIDED_CHEQUERS).all(axis=1)
    gammon = (counts == MAX_CHEQUERS).any(axis=1)  # a side has borne nothing off yet
    return {
        "all": np.ones(len(positions), dtype=bool),
        "two_sided": two_sided,
        "one_sided_only": ~two_sided,
        "gammon_possible": gammon,
        "no_gammon": ~gammon,
    }


def error_report(positions: Sequence[Position], net: np.ndarray, exact: np.ndarray) -> dict[str, ErrorStats]:
    return {name: ErrorStats.of(net[mask], exact[mask]) for name, mask in groups(positions).items()}


# -- output --------------------------------------------------------------------------------------------------


def format_table(reports: dict[str, dict[str, ErrorStats]]) -> str:
    head = f"{'set':<9} {'group':<16} {'n':>6} {'MAE win':>8} {'max win':>8} {'bias':>8} {'MAE wg':>8} {'MAE lg':>8}"
    lines = [head]
    for name, report in reports.items():
        for group, s in report.items():
            lines.append(
                f"{name:<9} {group:<16} {s.n:>6} {s.mae_win:>8.4f} {s.max_win:>8.4f} {s.bias_win:>+8.4f} "
                f"{s.mae_win_gammon:>8.4f} {s.mae_lose_gammon:>8.4f}"
            )
    return "\n".join(lines)


def plot(sets: dict[str, tuple[np.ndarray, np.ndarray]], path: Path) -> str:
    """Scatter of net against exact P(win) and the histogram of its errors, per set; a message if no
    matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.8))
    for name, (net, exact) in sets.items():
        ax1.scatter(exact[:, WIN], net[:, WIN], s=2, alpha=0.4, label=name)
        ax2.hist(net[:, WIN] - exact[:, WIN], bins=101, histtype="step", label=name)
    ax1.plot([0, 1], [0, 1], color="grey", linewidth=0.8)
    ax1.set(xlabel="exact P(win) (bearoff database)", ylabel="race net P(win)", title="race net vs bearoff")
    ax2.set(xlabel="race net - exact, P(win)", ylabel="positions", yscale="log", title="errors")
    ax1.legend(markerscale=5)
    ax2.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot written to {path}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5000, help="positions in each set")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", type=Path, help="model folder (default: the shipped nets)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="append the result as a JSON line here")
    ap.add_argument("--png", type=Path, default=DEFAULT_PNG, help="scatter and error histogram")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error(f"--n must be at least 1, not {args.n}")

    from engine.analyser import Analyser
    from engine.evaluator import MODELS_DIR, NetEvaluator

    t0 = time.time()
    folder = args.models or MODELS_DIR
    nets = NetEvaluator(folder, threads=1)
    race = nets.nets.get("race")
    if race is None:
        print(f"{folder} has no race net", file=sys.stderr)
        return 2
    db = BearoffDatabase.load()
    analyser = Analyser.default(args.models, threads=1)
    played, games = selfplay_positions(args.n, args.seed, analyser, db)
    t_play = time.time() - t0
    sets = {"selfplay": played, "random": random_positions(args.n, args.seed)}

    reports: dict[str, dict[str, ErrorStats]] = {}
    arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, positions in sets.items():
        net = nets.evaluate_boards(positions_to_array(positions), race)
        exact = db.evaluate(positions)
        reports[name] = error_report(positions, net, exact)
        arrays[name] = (net, exact)

    row = {
        "models": nets.name,
        "n": args.n,
        "seed": args.seed,
        "selfplay_games": games,
        "selfplay_distinct": len(set(played)),
        "target_mae_win": TARGET_MAE,
        "sets": {name: {g: s.rounded() for g, s in rep.items()} for name, rep in reports.items()},
        "selfplay_seconds": round(t_play, 1),
        "seconds": round(time.time() - t0, 1),
    }
    append_json_line(args.out, row)
    print(format_table(reports))
    for name, rep in reports.items():
        mae = rep["all"].mae_win
        verdict = "meets" if mae < TARGET_MAE else "misses"
        print(f"{name}: MAE of P(win) {mae:.4f} {verdict} the target < {TARGET_MAE}")
    print(
        f"{games} self-play games gave {args.n} positions ({row['selfplay_distinct']} distinct); "
        f"{row['seconds']} s; line appended to {args.out}"
    )
    print(plot(arrays, args.png))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
