"""train.label: deeper labels for the contact rows only, the race rows' labels kept from the shallower run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.encoding import positions_to_array
from engine.position import Position
from train import label
from train.fit import class_mask


def _boards() -> np.ndarray:
    race = Position.from_points({1: 5, 2: 5, 3: 5, 22: -5, 23: -5, 24: -5})
    return positions_to_array([Position.initial(), race, Position.initial().swap()], np.uint8)


def test_race_from_relabels_contact_rows_and_copies_race_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    boards = _boards()
    assert class_mask(boards, "contact").tolist() == [True, False, True]
    (tmp_path / "pos").mkdir()
    (tmp_path / "old").mkdir()
    np.savez(tmp_path / "pos" / "shard_0003.npz", boards=boards)
    old = np.full((3, 5), 0.25, dtype=np.float32)
    np.savez(tmp_path / "old" / "shard_0003.npz", probs=old)
    asked: list[tuple[int, str]] = []

    def fake_teacher(rows: np.ndarray, level: str, threads: int) -> np.ndarray:
        asked.append((len(rows), level))
        return np.full((len(rows), 5), 0.5)

    monkeypatch.setattr(label.teacher, "evaluate", fake_teacher)
    label.main(
        [
            "--positions", str(tmp_path / "pos"), "--out", str(tmp_path / "new"), "--level", "3ply",
            "--race-from", str(tmp_path / "old"), "--shards", "2-3",
        ]
    )  # fmt: skip
    out = np.load(tmp_path / "new" / "shard_0003.npz")
    assert asked == [(2, "3ply")]  # only the two contact rows went to the teacher, at the level asked
    assert out["probs"][:, 0].tolist() == [0.5, 0.25, 0.5]
    assert str(out["level"]).startswith("3ply contact, race from")


def test_shards_outside_the_range_are_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pos").mkdir()
    np.savez(tmp_path / "pos" / "shard_0001.npz", boards=_boards())
    monkeypatch.setattr(label.teacher, "evaluate", lambda rows, level, threads: np.zeros((len(rows), 5)))
    label.main(["--positions", str(tmp_path / "pos"), "--out", str(tmp_path / "new"), "--shards", "2-3"])
    assert not (tmp_path / "new" / "shard_0001.npz").exists()
