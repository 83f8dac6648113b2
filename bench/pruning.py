"""What the pruning nets cost the 2-ply search: its choices with and without them, on the same positions.

    python -m bench.pruning --n 1000
    python -m bench.pruning --n 1000 --prune engine/data/models/prune@2 --prune train/runs/prune4/cand_b128

Inside an n-ply search the pruning nets keep each roll's best few moves for the full nets: as gnubg,
``Search.prune_keep`` (5) plus log2 of the roll's legal plays (``engine.search.prune_counts``); ``@KEEP`` sets
the first term. A move the pruner drops is never seen, so the search with pruning can choose another move at the
root than the same search without it. This bench measures how often and at what price: the daemon's world-class
move search (2-ply, gnubg's normal filter, cubeful ranking in a money game with the cube centred) with every
``--prune`` folder against the same search with no pruner, the reference. A choice's loss is the reference's
equity of its own choice minus its equity of the pruned search's choice (our own 2-ply's view, not a truth).

Positions: the contact and crashed positions (with their rolls) of ``bench.agreement`` dumps, in file order;
races are left out because there the pruner rarely has more plays than it keeps. A table goes to stdout and a
JSON line per folder to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.agreement import Sample  # noqa: E402
from engine.analyser import PRUNE_DIR, Analyser, pruning_nets  # noqa: E402
from engine.cube import CubeInfo  # noqa: E402
from engine.evaluator import MODELS_DIR  # noqa: E402
from engine.position import Position  # noqa: E402
from engine.search import PRUNE_KEEP, Search  # noqa: E402
from train.progress import progress  # noqa: E402

DUMPS = sorted((HERE / "results" / "agreement_dumps").glob("v3.2_seed*.jsonl"))
DEFAULT_OUT = HERE / "results" / "pruning.jsonl"
CLASSES = ("contact", "crashed")
PLIES = 2


@dataclass(frozen=True, slots=True)
class PruneFigures:
    """One pruner against the unpruned search on ``n`` positions."""

    pruner: str
    keep: int
    n: int
    differ: int  # positions where the pruned search chose a move the reference values lower than its own
    loss_memg: float  # mean loss per position, millipoints
    loss_ci_memg: float  # half-width of its 95% interval (normal approximation)
    median_ms: float
    reference_median_ms: float

    def __str__(self) -> str:
        return (
            f"{self.pruner} keep {self.keep}: {self.differ}/{self.n} choices differ "
            f"({100 * self.differ / self.n:.1f}%), loss {self.loss_memg:.3f} ± {self.loss_ci_memg:.3f} mEMG a move, "
            f"median {self.median_ms:.0f} ms (unpruned {self.reference_median_ms:.0f} ms)"
        )


def load_samples(dumps: list[Path], n: int) -> list[Sample]:
    """The first ``n`` contact and crashed positions of the dumps, with their rolls, in a money game with the
    cube centred."""
    money = CubeInfo.money()
    out: list[Sample] = []
    for path in dumps:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if row["class"] in CLASSES:
                dice = row["dice"]
                position = Position.from_id(row["gnubgid"].split(":")[0])
                out.append(Sample(position, (dice[0], dice[1]), money))
                if len(out) == n:
                    return out
    return out


def parse_spec(spec: str) -> tuple[Path, int]:
    """``DIR`` or ``DIR@KEEP``."""
    folder, _, keep = spec.partition("@")
    try:
        k = int(keep) if keep else PRUNE_KEEP
    except ValueError:
        raise SystemExit(f"--prune {spec!r}: KEEP after @ must be a whole number") from None
    if k < 1:
        raise SystemExit(f"--prune {spec!r}: KEEP must be at least 1")
    return Path(folder), k


def choices(
    search: Search, samples: list[Sample], desc: str
) -> tuple[list[dict[Position, float]], list[float]]:
    """Per sample, every play's 2-ply equity by resulting position, and the decision times (ms)."""
    ranked, times = [], []
    for s in progress(samples, desc=desc):
        assert s.dice is not None  # load_samples gives every sample its roll
        t0 = time.perf_counter()
        moves = search.rank(s.position, s.dice, PLIES, cube=s.ci)
        times.append(1000.0 * (time.perf_counter() - t0))
        # The chosen move first: dicts keep insertion order.
        ranked.append({m.play.position: m.equity for m in moves})
    return ranked, times


def compare(reference: list[dict[Position, float]], pruned: list[dict[Position, float]]) -> np.ndarray:
    """Per sample, the reference's equity of its choice minus its equity of the pruned search's choice.

    Both choices are among the moves the root filter passed on to 2-ply (the filter is the full nets' at 0-ply
    in both searches), so both equities are 2-ply ones; the moves it dropped keep 0-ply equities, not compared.
    """
    out = np.zeros(len(reference))
    for i, (ref, got) in enumerate(zip(reference, pruned, strict=True)):
        out[i] = ref[next(iter(ref))] - ref[next(iter(got))]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="positions (contact and crashed)")
    ap.add_argument("--dump", type=Path, action="append", help="bench.agreement dumps (default: v3.2's)")
    ap.add_argument(
        "--prune",
        action="append",
        help=f"a pruning-net folder, optionally @KEEP: children kept per roll besides log2 of its plays (default: the "
        f"shipped ones @{PRUNE_KEEP})",
    )
    ap.add_argument("--models", type=Path, default=MODELS_DIR, help="the full nets")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    specs = [parse_spec(s) for s in (args.prune or [str(args.models / PRUNE_DIR)])]
    samples = load_samples(args.dump or DUMPS, args.n)
    if not samples:
        raise SystemExit("no contact or crashed positions in the dumps")
    analyser = Analyser.default(args.models)
    bare = analyser.search
    reference = Search(bare.evaluator, bare.bearoff, bare.met)
    ref, ref_ms = choices(reference, samples, "unpruned")
    for folder, keep in specs:
        pruner = pruning_nets(folder, bare.bearoff)
        got, ms = choices(
            Search(bare.evaluator, bare.bearoff, bare.met, pruner, keep), samples, f"{folder} @{keep}"
        )
        loss = compare(ref, got)
        figures = PruneFigures(
            pruner=str(folder),
            keep=keep,
            n=len(samples),
            differ=int((loss > 1e-9).sum()),
            loss_memg=1000.0 * float(loss.mean()),
            loss_ci_memg=1000.0 * 1.96 * float(loss.std(ddof=1)) / np.sqrt(len(loss))
            if len(loss) > 1
            else 0.0,
            median_ms=float(np.median(ms)),
            reference_median_ms=float(np.median(ref_ms)),
        )
        print(figures)
        append_json_line(args.out, {"bench": "pruning", "models": str(args.models), **asdict(figures)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
