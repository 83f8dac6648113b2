"""Run one function over many items: in this process, over local processes, or over a Ray cluster.

Analysis of an archive and rollouts of many positions are embarrassingly parallel; each item is a file name
or a small request, each result a JSON-able dict, so the same picklable top-level function serves all three
ways. Ray is an optional extra (``pip install gammond[ray]``), imported only when ``ray_address`` is given.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class FanoutError(ValueError):
    """Ray asked for but not installed, or a cluster that cannot be joined."""


def default_jobs(items: int) -> int:
    return max(1, min(items, os.cpu_count() or 1))


def run_many(
    fn: Callable[[T], dict[str, Any]],
    items: Sequence[T],
    jobs: int | None = None,
    ray_address: str | None = None,
) -> Iterator[dict[str, Any]]:
    """``fn(item)`` for each item, results in the items' order (each yielded as soon as it and all before it
    are done). ``jobs`` local worker processes (default: one per core, at most one per item); 1 runs here.
    ``ray_address``: a Ray cluster address (``auto``, ``ray://host:10001``, or ``local`` for a fresh local
    instance) instead of local processes."""
    if ray_address:
        yield from _ray_map(fn, items, ray_address)
        return
    n = default_jobs(len(items)) if jobs is None else max(1, jobs)
    if n == 1 or len(items) <= 1:
        for item in items:
            yield fn(item)
        return
    with ProcessPoolExecutor(max_workers=min(n, len(items))) as pool:
        yield from pool.map(fn, items)


def _ray_map(fn: Callable[[T], dict[str, Any]], items: Sequence[T], address: str) -> Iterator[dict[str, Any]]:
    try:
        import ray  # type: ignore[import-not-found]
    except ImportError:
        raise FanoutError("--ray needs the optional extra: pip install 'gammond[ray]'") from None
    started_here = False
    if not ray.is_initialized():
        try:
            if address == "local":
                ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise FanoutError(f"cannot join the Ray cluster at {address!r}: {exc}") from None
        started_here = True
    try:
        remote = ray.remote(num_cpus=1)(_call)  # ray.remote takes functions only, not partials
        refs = [remote.remote(fn, item) for item in items]
        for ref in refs:
            yield ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()


def _call(fn: Callable[[T], dict[str, Any]], item: T) -> dict[str, Any]:
    return fn(item)
