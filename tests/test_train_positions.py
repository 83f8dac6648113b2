"""train.positions: a shard range per process, so that two processes fill two cores without writing the same shard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from train import positions


def _fake_teacher(rows: list, level: str, threads: int) -> np.ndarray:
    # equal equities: the player's Gaussian noise decides, so each game follows the shard's seed alone
    return np.full((len(rows), 5), 0.5)


def test_only_writes_the_named_shards_and_seeds_them_as_a_full_run_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(positions.teacher, "evaluate_positions", _fake_teacher)
    part = tmp_path / "part"
    positions.main(["--out", str(part), "--shards", "4", "--games", "2", "--seed", "3", "--only", "2-3"])
    assert sorted(p.name for p in part.iterdir()) == ["shard_0002.npz", "shard_0003.npz"]
    whole = tmp_path / "whole"
    positions.main(["--out", str(whole), "--shards", "4", "--games", "2", "--seed", "3"])
    for name in ("shard_0002.npz", "shard_0003.npz"):
        a, b = np.load(part / name), np.load(whole / name)
        assert int(a["seed"]) == int(b["seed"]) == 3 * 100_003 + int(name[6:10])
        assert np.array_equal(a["boards"], b["boards"])
    # a second run over the same range finds its shards and writes nothing new
    before = (part / "shard_0002.npz").stat().st_mtime_ns
    positions.main(["--out", str(part), "--shards", "4", "--games", "2", "--seed", "3", "--only", "2"])
    assert (part / "shard_0002.npz").stat().st_mtime_ns == before


def test_shard_range_reads_a_range_or_one_shard() -> None:
    from train.shards import shard_range

    assert shard_range("8-39") == range(8, 40)
    assert shard_range("8") == range(8, 9)
