"""A progress bar for long work: tqdm when installed (the train extra), else a plain line per step on stderr."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], desc: str = "", total: int | None = None) -> Iterator[T]:
    try:
        from tqdm import tqdm
    except ImportError:
        if total is None:  # a total given: stream (a pool's results arrive one by one)
            items = list(items)
            total = len(items)
        t0 = time.time()
        for i, item in enumerate(items, 1):
            yield item
            print(f"\r{desc} {i}/{total} {time.time() - t0:.0f}s", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        return
    yield from tqdm(items, desc=desc, total=total, dynamic_ncols=True)
