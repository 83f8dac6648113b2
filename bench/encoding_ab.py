"""The C encodings against their numpy references, interleaved on the same positions: decision time and choices.

    python3 -m bench.encoding_ab --n 60 --seed 3 --cpu 1

The net inputs and the position classes (``engine.encoding.encode``, ``encode_contact``, ``engine.evaluator.route``)
run in C where the extension is built, with the numpy functions kept as their references. This bench times the
decision the daemon's ``Player`` makes (``Analyser.hint`` at 0 plies, and at 2 plies with world class's move
filter), once with each implementation for every position in turn, so that load on the machine falls on both alike;
it prints the two medians, their ratio, and how many 2-ply hint lists came out identical (all of them, since the
inputs are equal bit for bit). Positions come from the agreement bench's noisy self-play.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine.cubeful as cubeful  # noqa: E402
import engine.encoding as enc  # noqa: E402
import engine.evaluator as ev  # noqa: E402
import engine.search as search  # noqa: E402
from bench.agreement import self_play  # noqa: E402
from engine.analyser import Analyser  # noqa: E402
from engine.levels import LEVELS  # noqa: E402

Impl = tuple[Callable, Callable, Callable]
NUMPY: Impl = (enc.encode_numpy, enc.encode_contact_numpy, ev.route_numpy)


def use(impl: Impl) -> None:
    """Point every user of the encodings and of ``route`` at one implementation (bench only)."""
    encode, encode_contact, route = impl
    enc.encode, enc.encode_contact = encode, encode_contact
    enc.ENCODERS.update({enc.N_INPUTS: encode, enc.N_CONTACT_INPUTS: encode_contact})
    ev.route = search.route = cubeful.route = route
    for net in (o for o in gc.get_objects() if isinstance(o, ev.OnnxNet)):
        net.encode = enc.ENCODERS[net._session.get_inputs()[0].shape[-1]]  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=60, help="positions with a roll")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1, help="core to pin to (-1: do not pin)")
    args = ap.parse_args(argv)
    if enc.encode is enc.encode_numpy:
        print("the C extension is not built (or GAMMOND_PURE_PYTHON is set): nothing to compare")
        return 1
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    c_impl: Impl = (enc.encode, enc.encode_contact, ev.route)
    analyser = Analyser.default()
    samples, _, _ = self_play(analyser, args.n, 1, seed=args.seed)
    world = LEVELS["worldclass"]
    for plies, reps in ((0, 5), (2, 1)):
        times: dict[str, list[float]] = {"numpy": [], "c": []}
        same = 0
        for _ in range(reps):
            for s in samples:
                lists = []
                for name, impl in (("numpy", NUMPY), ("c", c_impl)):
                    use(impl)
                    t0 = time.perf_counter()
                    ranked = analyser.hint(s.position, s.dice, s.ci, plies, world.move_filter)
                    times[name].append(time.perf_counter() - t0)
                    lists.append([(m.play.position, m.equity) for m in ranked])
                same += lists[0] == lists[1]
        numpy_ms, c_ms = (1000.0 * statistics.median(times[k]) for k in ("numpy", "c"))
        print(
            f"{plies}-ply decision, median of {len(times['c'])}: numpy {numpy_ms:.2f} ms, C {c_ms:.2f} ms, "
            f"{numpy_ms / c_ms:.2f}x; identical hint lists {same} of {len(times['c'])}"
        )
    use(c_impl)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
