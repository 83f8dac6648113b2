"""Where the bots' engine work runs, so that a slow decision of one match does not stall the others (issue 28,
item 11).

The bots call ``loop.run_in_executor(pool, fn, player, state ...)``. ``EnginePool`` is that executor, with two
lanes:

- **fast**: ``threads`` threads for every call whose Player plays below ``SLOW_PLIES`` (expert is 0-ply: a few
  ms, mostly in onnxruntime, which releases the GIL) and for every call without a Player. This lane is the
  daemon's **evaluation queue**: a thread takes every call waiting (up to ``MAX_BATCH``) and first evaluates
  the candidates of all the move decisions among them in one call (``Search.prefetch``), so that k matches
  waiting on the engine pay one net call per position class instead of k (``bench.eval_batching``: 11% of a
  0-ply decision saved with 10 waiting, 14% with 25);
- **slow**: calls whose Player searches ``SLOW_PLIES`` deep or more (world class and above: up to seconds of
  mostly Python search, which holds the GIL). With ``slow_workers`` > 0 they run in that many worker
  processes (spawned, each loading the nets once at start), so they hold neither a fast thread nor this
  process's GIL; with 0 they run on one thread of their own (no queue behind them, but the GIL is shared).

A call sent to a worker process is rebuilt there: the Player (an argument, or the owner of a method such as
``player.decide``) is replaced by one of the same level over the worker's analyser, with a seed drawn from the
caller's Player (so noisy levels stay random and reproducible from the bot's seed). ``fn``, the other arguments
and the result must pickle (``bot.fibs.session.decide``, a MatchState, an Action do); a call whose arguments do
not runs on the slow thread. When the analyser cannot be sent to a worker, the pool says so in the log and uses
the slow thread.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import pickle
import queue
import random
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

from engine.analyser import Analyser
from engine.levels import Level, parse_level
from engine.match import MatchState
from engine.player import Player

SLOW_PLIES = 2  # a Player searching this deep (chequer or cube) goes to the slow lane
MAX_BATCH = 32  # calls a fast thread takes from the queue at once

_WORKER_ANALYSER: Analyser | None = None  # in a worker process: its own copy of the nets


def _init_worker(factory: Callable[[], Analyser]) -> None:
    global _WORKER_ANALYSER
    _WORKER_ANALYSER = factory()


def _ready() -> bool:
    return _WORKER_ANALYSER is not None


def _call_in_worker(
    fn: Callable[..., Any] | str, level: Level, seed: int, tolerance: float, index: int, args: tuple[Any, ...]
) -> Any:
    """``fn(*args)`` with the Player at ``index`` rebuilt here; ``fn`` a name: that method of the Player."""
    assert _WORKER_ANALYSER is not None, "the worker's analyser was not loaded"
    player = Player(_WORKER_ANALYSER, level, rng=random.Random(seed), resign_tolerance=tolerance)
    if isinstance(fn, str):
        return getattr(player, fn)(*args)
    return fn(*args[:index], player, *args[index + 1 :])


def is_slow(level: Level) -> bool:
    cube = level.cube_plies if level.cube_plies is not None else level.plies
    return max(level.plies, cube) >= SLOW_PLIES


def slow_levels_configured(engine: Any) -> bool:
    """Whether ``bot.config.EngineConfig`` names a slow level anywhere (then the workers start at once)."""
    texts = [engine.level, engine.cube_level, *engine.opponent_levels.values()]
    return any(is_slow(parse_level(text)) for text in texts if text)


@dataclasses.dataclass(slots=True)
class LaneStats:
    fast: int = 0
    slow: int = 0
    slow_in_process: int = 0
    batches: int = 0  # fast-lane takes with two or more move decisions evaluated together
    batched: int = 0  # move decisions in those


_Call = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def _decision_of(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Player, MatchState] | None:
    """The Player and MatchState of a decision call (``player.decide(state)`` or ``decide(player, state)``)."""
    owner = getattr(fn, "__self__", None)
    player = owner if isinstance(owner, Player) else next((a for a in args if isinstance(a, Player)), None)
    state = next((a for a in args if isinstance(a, MatchState)), None)
    return (player, state) if player is not None and state is not None else None


class EvaluationQueue:
    """The fast lane: ``threads`` threads over one queue of calls. A thread takes what is waiting (up to
    ``MAX_BATCH`` calls), evaluates the first candidates of the move decisions among them together
    (``Search.prefetch``, grouped by the analyser's search), then runs the calls in order."""

    def __init__(self, threads: int, stats: LaneStats) -> None:
        self.stats = stats
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._shutdown = False
        self._threads = [
            threading.Thread(target=self._work, name=f"engine-{i}", daemon=True)
            for i in range(max(1, threads))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Future[Any]:
        if self._shutdown:
            raise RuntimeError("cannot schedule new futures after shutdown")
        future: Future[Any] = Future()
        self._queue.put((future, fn, args, kwargs))
        return future

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            calls = [first]
            while len(calls) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._queue.put(None)  # another thread's stop: leave it for after this take
                    break
                calls.append(more)
            try:
                searches = self._prefetch(calls)
            except Exception:  # a batch that cannot be evaluated: each decision meets its own error alone
                searches = []
            for future, fn, args, kwargs in calls:
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # the caller's await raises it
                    future.set_exception(exc)
            for search in searches:
                search.prefetch([])  # what no decision took (one that resigned or doubled instead) goes

    def _prefetch(self, calls: list[_Call]) -> list[Any]:
        if len(calls) < 2:
            return []
        groups: dict[int, tuple[Any, list[Any]]] = {}
        for _, fn, args, _kwargs in calls:
            decision = _decision_of(fn, args)
            if decision is None:
                continue
            player, state = decision
            try:
                boards = player.move_candidates(state)
            except Exception:  # a state the decision itself will report on
                continue
            if boards is not None:
                search = player.analyser.search
                groups.setdefault(id(search), (search, []))[1].append(boards)
        done = []
        for search, batches in groups.values():
            if len(batches) >= 2:
                search.prefetch(batches)
                self.stats.batches += 1
                self.stats.batched += len(batches)
                done.append(search)
        return done

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self._shutdown = True
        if cancel_futures:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in self._threads:
            self._queue.put(None)
        if wait:
            for thread in self._threads:
                thread.join()


class EnginePool(Executor):
    """The daemon's engine executor (see the module docstring). ``worker_analyser`` makes the analyser in a
    worker process (a picklable callable: ``functools.partial(load_analyser, config)``); None: no processes."""

    def __init__(
        self,
        threads: int = 1,
        slow_workers: int = 1,
        worker_analyser: Callable[[], Analyser] | None = None,
        log: Any = None,
    ) -> None:
        self.stats = LaneStats()
        self._fast = EvaluationQueue(threads, self.stats)
        self._slow_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engine-slow")
        self._processes: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        if slow_workers > 0 and worker_analyser is not None:
            try:
                pickle.dumps(worker_analyser)
            except Exception as exc:  # an analyser built in memory (tests, scripts): the slow thread serves
                if log is not None:
                    log.warning("engine worker processes unavailable", error=str(exc)[:200])
            else:
                self._processes = concurrent.futures.ProcessPoolExecutor(
                    max_workers=slow_workers,
                    mp_context=multiprocessing.get_context("spawn"),  # no fork of a threaded process
                    initializer=_init_worker,
                    initargs=(worker_analyser,),
                )

    def __repr__(self) -> str:
        return f"<EnginePool processes={self._processes is not None} {self.stats}>"

    def warm_up(self) -> Future[Any] | None:
        """Start the worker processes and load their nets now rather than at the first slow decision."""
        if self._processes is None:
            return None
        return self._processes.submit(_ready)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        owner = getattr(fn, "__self__", None)
        index = next((i for i, a in enumerate(args) if isinstance(a, Player)), None)
        player: Player | None = owner if isinstance(owner, Player) else None
        if player is None and index is not None:
            player = args[index]
        if player is None or kwargs or not is_slow(player.level):
            self.stats.fast += 1
            return self._fast.submit(fn, args, kwargs)
        self.stats.slow += 1
        if self._processes is not None:
            # a method of the Player (player.decide) goes by name; otherwise the Player argument is replaced
            call: Callable[..., Any] | str = fn.__name__ if player is owner else fn
            rest = args if player is owner else (*args[:index], None, *args[index + 1 :])  # type: ignore[index]
            try:
                pickle.dumps((call, rest))  # what a worker cannot receive runs on the slow thread instead
            except Exception:
                return self._slow_thread.submit(fn, *args)
            with self._lock:  # the caller's rng is shared by its thread and this one
                seed = player.rng.getrandbits(64)
            self.stats.slow_in_process += 1
            return self._processes.submit(
                _call_in_worker, call, player.level, seed, player.resign_tolerance, index or 0, rest
            )
        return self._slow_thread.submit(fn, *args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._fast.shutdown(wait=wait, cancel_futures=cancel_futures)
        self._slow_thread.shutdown(wait=wait, cancel_futures=cancel_futures)
        if self._processes is not None:
            self._processes.shutdown(wait=wait, cancel_futures=cancel_futures)
