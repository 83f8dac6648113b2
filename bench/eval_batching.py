"""What a shared evaluation queue would save: the net evaluation of decisions batched across matches.

    python3 -m bench.eval_batching [--n 1000] [--rounds 3]

Not the daemon's path: it measures the part a shared queue would change. For the 0-ply decisions of ``--n``
positions of the latency bench's pick (bench/latency.py), it times, by this process's CPU time on one thread,
the whole decision (``Player(expert).decide``, the daemon's path) and the evaluation of its candidates
(``Search._probs``: routing, the nets, the race bounds) one decision at a time and then with the candidates of
k decisions evaluated in one call (k = 4, 10, 25: k matches' decisions waiting in one queue). The saving per
decision is the serial evaluation time less the batched one; the report gives it as a share of the decision.
Then the daemon's path itself: the ``--n`` decisions (``bot.fibs.session.decide`` at expert) submitted at once
to the daemon's ``EnginePool`` (one fast thread: its evaluation queue takes up to 32 waiting calls and batches
their candidates), against the same calls on a plain one-thread executor, by CPU time per decision, and whether
both chose the same actions. Each figure is the median over ``--rounds`` rounds.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.latency import DUMPS, Ours, pick  # noqa: E402
from engine.encoding import positions_to_array  # noqa: E402
from engine.match import MatchState  # noqa: E402
from engine.moves import legal_plays  # noqa: E402

BATCHES = (4, 10, 25)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    ours = Ours(["0ply"])
    player, search = ours.players["0ply"], ours.analyser.search
    states = [MatchState.from_gnubg_id(row["id"]) for row in pick(args.n, 1, DUMPS)]
    boards = [
        positions_to_array([play.position.swap() for play in legal_plays(s.position, s.dice)], np.uint8)
        for s in states
    ]
    for b in boards[:50]:
        search._probs(b)  # warm up the sessions

    def per_decision(fn: object) -> float:
        times = []
        for _ in range(args.rounds):
            t0 = time.process_time()
            fn()  # type: ignore[operator]
            times.append(1000.0 * (time.process_time() - t0) / len(states))
        return statistics.median(times)

    decide = per_decision(lambda: [player.decide(s) for s in states])
    serial = per_decision(lambda: [search._probs(b) for b in boards])
    report: dict[str, object] = {
        "positions": len(states),
        "decide_ms": round(decide, 4),
        "serial_eval_ms": round(serial, 4),
    }
    for k in BATCHES:
        batched = per_decision(
            lambda k=k: [search._probs(np.concatenate(boards[i : i + k])) for i in range(0, len(boards), k)]
        )
        report[f"batch{k}_eval_ms"] = round(batched, 4)
        report[f"batch{k}_saving_share_of_decision"] = round((serial - batched) / decide, 3)
    from concurrent.futures import ThreadPoolExecutor

    from bot.engine_pool import EnginePool
    from bot.fibs.session import decide as daemon_decide

    def through(executor: object) -> list[object]:
        futures = [executor.submit(daemon_decide, player, st) for st in states]  # type: ignore[attr-defined]
        return [f.result() for f in futures]

    plain, pool = ThreadPoolExecutor(1), EnginePool(threads=1, slow_workers=0)
    try:
        serial_actions, queued_actions = through(plain), through(pool)
        report["plain_executor_ms"] = round(per_decision(lambda: through(plain)), 4)
        report["evaluation_queue_ms"] = round(per_decision(lambda: through(pool)), 4)
        report["queue_saving_share"] = round(
            1 - report["evaluation_queue_ms"] / report["plain_executor_ms"], 3
        )  # type: ignore[operator]
        report["queue_batches"], report["queue_batched_decisions"] = pool.stats.batches, pool.stats.batched
        report["same_actions"] = sum(a == b for a, b in zip(serial_actions, queued_actions, strict=True))
    finally:
        plain.shutdown()
        pool.shutdown()
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
