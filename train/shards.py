"""The shard numbers a stage works on: every stage writes ``shard_NNNN.npz`` files and may take a range of them,
so that one process per range fills the cores."""

from __future__ import annotations


def shard_range(text: str) -> range:
    """``"8-39"`` as range(8, 40); ``"8"`` as range(8, 9)."""
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)
