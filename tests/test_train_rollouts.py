"""train.rollouts: which race positions are rolled out, chunks that resume, and bgsage's view turned back to ours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.encoding import positions_to_array
from engine.position import Position
from train import rollouts
from train.fit import with_rollouts

CONTACT = Position.initial()
RACE = Position.from_points({7: 5, 8: 5, 9: 5, 16: -5, 17: -5, 18: -5})
HOME = Position.from_points({1: 5, 2: 5, 3: 5, 22: -5, 23: -5, 24: -5})  # the bearoff databases' domain
# On roll with two chequers outside, none off; the opponent bears his last two off next turn. Only the doubles
# 2-2 to 6-6 bring both in and one off: a gammon lost 31 times in 36.
FORCED_GAMMON = Position.from_points({1: 1, 2: 3, 3: 3, 5: 2, 6: 4, 8: 1, 10: 1, 24: -2})


def _boards(*positions: Position) -> np.ndarray:
    return positions_to_array(list(positions), np.uint8)


def test_sample_takes_distinct_races_outside_the_bearoff_databases(tmp_path: Path) -> None:
    np.savez(tmp_path / "shard_0000.npz", boards=_boards(CONTACT, RACE, HOME, RACE))
    np.savez(tmp_path / "shard_0001.npz", boards=_boards(FORCED_GAMMON, CONTACT))
    got = rollouts.sample([tmp_path], 10, seed=1)
    assert sorted(map(bytes, got)) == sorted(map(bytes, _boards(RACE, FORCED_GAMMON)))
    assert len(rollouts.sample([tmp_path], 1, seed=1)) == 1


def test_run_writes_chunks_merges_them_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    boards = np.repeat(_boards(RACE), 2 * rollouts.CHUNK + 7, axis=0)
    np.savez(tmp_path / "sample.npz", boards=boards)
    monkeypatch.setattr(rollouts, "_init", lambda trials, seed: None)  # no bgsage: a stand-in rollout
    monkeypatch.setattr(rollouts, "rollout", lambda board: (np.full(5, 0.25), 0.01))
    out = tmp_path / "ro"
    assert rollouts.run(tmp_path / "sample.npz", out, procs=2, trials=36, seconds=0.0, seed=1) == 0
    assert rollouts.run(tmp_path / "sample.npz", out, procs=2, trials=36, seconds=60.0, seed=1) == len(boards)
    chunks = sorted(out.glob("chunk_*.npz"))
    assert [len(np.load(c)["boards"]) for c in chunks] == [rollouts.CHUNK, rollouts.CHUNK, 7]
    merged = np.load(out / "merged.npz")
    assert merged["probs"].shape == (len(boards), 5) and merged["se"].shape == (len(boards),)

    monkeypatch.setattr(
        rollouts, "rollout", lambda board: pytest.fail("a finished chunk was rolled out again")
    )
    assert rollouts.run(tmp_path / "sample.npz", out, procs=2, trials=36, seconds=60.0, seed=1) == len(boards)


def test_bgsage_rollout_seen_from_the_side_on_roll() -> None:
    pytest.importorskip("bgbot_cpp")
    rollouts._init(36, seed=1)
    # bgsage's rollout holds a bare pointer to the database: freed with _init's frame, it was read after free
    # (the first device run's labels: 0.006 equity off on average, found by rolling out again)
    assert rollouts._DB is not None
    probs, se = rollouts.rollout(_boards(FORCED_GAMMON)[0])
    assert probs[0] == pytest.approx(0.0, abs=1e-6)  # the side on roll cannot win
    assert probs[3] == pytest.approx(31 / 36, abs=1e-3)  # P(lose gammon): every roll but 2-2..6-6
    assert se >= 0.0
    with pytest.raises(ValueError, match="races only"):
        rollouts.rollout(_boards(CONTACT)[0])


def test_rollouts_replace_the_teachers_race_rows_outside_the_databases(tmp_path: Path) -> None:
    boards = _boards(RACE, HOME, RACE)
    probs = np.full((3, 5), 0.5, dtype=np.float32)
    val = np.array([False, True, False])
    rolled = np.repeat(_boards(FORCED_GAMMON), 40, axis=0)
    path = tmp_path / "ro.npz"
    np.savez(path, boards=rolled, probs=np.full((40, 5), 0.1, dtype=np.float32), se=np.zeros(40))
    b, p, v = with_rollouts(boards, probs, val, [path], "race")
    assert len(b) == 1 + 40  # the home row stays (exact labels come later); both teacher race rows go
    assert bytes(b[0]) == bytes(_boards(HOME)[0]) and p[0, 0] == 0.5 and v[0]
    assert p[1:, 0].tolist() == [pytest.approx(0.1)] * 40
    assert v[1:].sum() == 2  # the last 5% of the rolled-out rows are held out
    with pytest.raises(SystemExit):
        with_rollouts(boards, probs, val, [path], "contact")


def test_deep_labels_blend_into_rolled_out_boards_and_add_the_others(tmp_path: Path) -> None:
    boards = _boards(RACE, HOME)
    probs = np.full((2, 5), 0.5, dtype=np.float32)
    val = np.array([False, False])
    ro = tmp_path / "ro.npz"
    np.savez(ro, boards=_boards(FORCED_GAMMON, RACE), probs=np.full((2, 5), 0.1, dtype=np.float32))
    deep = tmp_path / "deep.npz"
    np.savez(deep, boards=_boards(RACE, CONTACT), probs=np.full((2, 5), 0.3, dtype=np.float32))
    b, p, v = with_rollouts(boards, probs, val, [ro], "race", [deep], deep_weight=0.25)
    assert [bytes(x) for x in b] == [bytes(x) for x in _boards(HOME, FORCED_GAMMON, RACE, CONTACT)]
    assert p[:, 0].tolist() == pytest.approx([0.5, 0.1, 0.75 * 0.1 + 0.25 * 0.3, 0.3])
    assert v.tolist() == [False, False, True, True]  # each kind's last row (of two) is held out
    only_deep = with_rollouts(boards, probs, val, [], "race", [deep])[1]
    assert only_deep[1:, 0].tolist() == pytest.approx([0.3, 0.3])


def test_deep_labels_for_a_contact_net_blend_into_training_rows_only(tmp_path: Path) -> None:
    from train.fit import with_deep

    boards = _boards(CONTACT, RACE, CONTACT, HOME)
    probs = np.full((4, 5), 0.5, dtype=np.float32)
    val = np.array([False, False, True, False])  # the third row is the same board, held out
    deep = tmp_path / "deep.npz"
    np.savez(deep, boards=_boards(FORCED_GAMMON, CONTACT), probs=np.array([[0.2] * 5, [0.9] * 5], np.float32))
    b, p, v = with_deep(boards, probs, val, [deep], 0.5)
    assert len(b) == 5 and bytes(b[4]) == bytes(_boards(FORCED_GAMMON)[0])  # the new board is added
    assert p[:, 0].tolist() == pytest.approx([0.7, 0.5, 0.5, 0.5, 0.2])  # the held-out twin keeps its label
    assert v.tolist() == [False, False, True, False, False]
