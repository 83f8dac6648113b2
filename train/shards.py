"""The shard numbers a stage works on: every stage writes ``shard_NNNN.npz`` files and may take a range of them,
so that one process per range fills the cores. Stages that label a sample in chunks (train.rollouts,
train.deepen) write ``chunk_NNNNN.npz`` files the same way and merge them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np


def shard_range(text: str) -> range:
    """``"8-39"`` as range(8, 40); ``"8"`` as range(8, 9)."""
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def save_atomic(path: Path, **arrays: np.ndarray) -> None:
    """Write an .npz under a temporary name, then rename it: a killed run leaves no half-written file."""
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)


def merge_chunks(folder: Path, keys: tuple[str, ...]) -> int:
    """Every finished ``chunk_*.npz`` of ``folder``, in chunk order, into ``merged.npz``; the number of rows."""
    parts = [np.load(p) for p in sorted(folder.glob("chunk_*.npz")) if ".tmp" not in p.name]
    if not parts:
        return 0
    merged = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    save_atomic(folder / "merged.npz", **merged)
    return len(merged[keys[0]])


def draw_boards(
    positions: list[Path], keep: Callable[[np.ndarray], np.ndarray], n: int, seed: int
) -> np.ndarray:
    """Up to ``n`` distinct boards of the positions shards in ``positions`` that ``keep`` (a mask of a shard's
    boards) selects, in a seeded random order."""
    picked = []
    for folder in positions:
        for shard in sorted(folder.glob("shard_*.npz")):
            if ".tmp" not in shard.name:
                boards = np.load(shard)["boards"]
                picked.append(boards[keep(boards)])
    boards = np.unique(np.concatenate(picked), axis=0)
    return boards[np.random.default_rng(seed).permutation(len(boards))[:n]]
