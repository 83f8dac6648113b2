"""The daemon's evaluation queue (bot/engine_pool.py EvaluationQueue, engine Search.prefetch): the move
decisions of matches waiting together share their net calls, and decide exactly as they would alone."""

from __future__ import annotations

import random
import threading
from concurrent.futures import Future

import numpy as np
import pytest

from bot.engine_pool import EnginePool, EvaluationQueue, LaneStats
from bot.fibs.session import decide
from engine.analyser import Analyser
from engine.levels import parse_level
from engine.match import MatchState
from engine.player import Player

# Positions with a roll from the latency bench's pick (gnubg IDs): money and match play, every class.
IDS = [
    "AwAA6LoyLAAAAA:cIkNAAAAAAAE",  # race
    "v98AABDMtpESAQ:cAkJAAAAAAAE",  # crashed
    "9wEAAJjekgIFAA:MIHkADAAAAAE",  # race, match play
    "ZtsGBCS4bQMWIA:cAkJAAAAAAAE",  # contact
    "2jZgAGy2bUoUAA:cInkACAAEAAE",  # contact
    "t9l0AABwzyMBBg:cIkOAAAAAAAE",  # contact
]


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser.default()


def states() -> list[MatchState]:
    out = []
    for gid in IDS:
        state = MatchState.from_gnubg_id(gid)
        if state.dice == (0, 0):
            state = state.replace(dice=(3, 1))
        out.append(state)
    return out


def test_prefetched_boards_give_the_same_probabilities_and_only_to_the_same_boards(
    analyser: Analyser,
) -> None:
    search = analyser.search
    player = Player(analyser, parse_level("expert"))
    boards = [b for b in (player.move_candidates(s) for s in states()) if b is not None]
    assert len(boards) >= 4
    alone = [search._probs(b) for b in boards]
    search.prefetch(boards)
    assert len(search._ready) == len(boards)
    other = boards[0][:1].copy()  # a different board set: evaluated, not taken from the prefetch
    assert np.allclose(search._probs(other), alone[0][:1], atol=1e-6)
    for b, expected in zip(boards, alone, strict=True):
        assert np.allclose(search._probs(b), expected, atol=1e-6)  # batched: float32 rounding may differ
    assert not search._ready  # each taken once
    search.prefetch(boards)
    search.prefetch([])
    assert not search._ready


def test_no_candidates_where_no_move_is_chosen(analyser: Analyser) -> None:
    player = Player(analyser, parse_level("expert"))
    state = states()[0]
    assert player.move_candidates(state.replace(dice=(0, 0))) is None  # before the roll: a cube decision
    candidates = player.move_candidates(state)
    assert candidates is not None and candidates.shape[1:] == (2, 25) and candidates.dtype == np.uint8


def test_decisions_waiting_together_are_batched_and_decide_as_alone(analyser: Analyser) -> None:
    lane = LaneStats()
    q = EvaluationQueue(1, lane)
    gate = threading.Event()
    try:
        blocker: Future[bool] = q.submit(gate.wait, (5.0,), {})  # holds the one thread: the rest queue up
        players = [Player(analyser, parse_level("expert"), rng=random.Random(i)) for i in range(len(IDS))]
        futures = [q.submit(decide, (p, s), {}) for p, s in zip(players, states(), strict=True)]
        futures.append(q.submit(players[0].decide, (states()[1],), {}))  # a bound method counts too
        gate.set()
        assert blocker.result(5)
        queued = [f.result(30) for f in futures]
    finally:
        q.shutdown()
    assert lane.batches == 1 and lane.batched >= 5
    alone = [decide(Player(analyser, parse_level("expert")), s) for s in states()]
    assert queued[:-1] == alone
    assert queued[-1].move is not None and queued[-1].move.play.move == alone[1].move  # type: ignore[union-attr]
    assert not analyser.search._ready


def test_an_error_reaches_its_caller_and_the_queue_goes_on(analyser: Analyser) -> None:
    q = EvaluationQueue(2, LaneStats())
    try:

        def fails() -> None:
            raise ValueError("a bad state")

        bad = q.submit(fails, (), {})
        with pytest.raises(ValueError, match="a bad state"):
            bad.result(5)
        good = q.submit(decide, (Player(analyser, parse_level("expert")), states()[0]), {})
        assert good.result(30) is not None
    finally:
        q.shutdown()
    with pytest.raises(RuntimeError):
        q.submit(fails, (), {})


def test_the_pool_sends_fast_calls_through_the_queue(analyser: Analyser) -> None:
    pool = EnginePool(threads=1, slow_workers=0)
    try:
        result = pool.submit(decide, Player(analyser, parse_level("expert")), states()[0]).result(30)
        assert result is not None and pool.stats.fast == 1
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def test_a_failing_prefetch_leaves_each_decision_to_run_alone(analyser: Analyser) -> None:
    class Broken:
        def prefetch(self, batches: object) -> None:
            raise RuntimeError("the nets are gone")

    class Stub:
        search = Broken()

    class PlayerOfBrokenNets(Player):
        pass

    q = EvaluationQueue(1, LaneStats())
    gate = threading.Event()
    try:
        q.submit(gate.wait, (5.0,), {})
        broken = PlayerOfBrokenNets(analyser, parse_level("expert"))
        broken.analyser = Stub()  # type: ignore[assignment]
        first = q.submit(lambda p, s: "ran", (broken, states()[0]), {})
        second = q.submit(lambda p, s: "ran", (broken, states()[1]), {})
        gate.set()
        assert first.result(5) == second.result(5) == "ran"  # the thread survived the failed batch
        assert (
            q.submit(decide, (Player(analyser, parse_level("expert")), states()[2]), {}).result(30)
            is not None
        )
    finally:
        q.shutdown()
