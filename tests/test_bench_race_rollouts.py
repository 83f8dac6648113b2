"""bench.race_rollouts: the rows train.fit held out, and the error figures of an evaluator against them."""

from __future__ import annotations

import numpy as np
import pytest

from bench.race_rollouts import held_out, score


def test_held_out_rows_are_the_last_twentieth_of_the_rollouts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    boards = np.arange(40 * 50, dtype=np.uint8).reshape(40, 2, 25)
    np.savez(tmp_path / "ro.npz", boards=boards, probs=np.zeros((40, 5), np.float32), se=np.zeros(40))
    got, probs, _ = held_out(tmp_path / "ro.npz")
    assert len(got) == 2 and (got == boards[38:]).all() and probs.dtype == np.float64


def test_score_measures_equity_errors_against_the_rollout() -> None:
    reference = np.array([[0.5, 0.1, 0.0, 0.1, 0.0]] * 4)
    probs = reference.copy()
    probs[0, 0] += 0.04  # +0.08 equity
    probs[1, 3] += 0.06  # -0.06 equity
    row, err = score(probs, reference)
    assert err == pytest.approx([0.08, -0.06, 0.0, 0.0])
    assert row["equity_mae"] == pytest.approx(0.035)
    assert row["equity_bias"] == pytest.approx(0.005)
    assert row["over_0.05_pct"] == 50.0 and row["over_0.1_pct"] == 0.0
    assert row["win_mae"] == pytest.approx(0.01)
