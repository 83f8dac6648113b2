"""bench.ranking_depth's figures from our two choices and gnubg's answers."""

from __future__ import annotations

import pytest

from bench.ranking_depth import score

# Boards are opaque keys here; equities are gnubg's 2-ply [cubeful, cubeless] for the mover.
CASH = {"choice": {"cubeful": "A", "cubeless": "A"}, "extra": {"A": [1.000, 0.80], "B": [0.990, 0.85]}}
SAME = {"choice": {"cubeful": "C", "cubeless": "C"}, "extra": {"C": [0.20, 0.20], "D": [0.18, 0.19]}}


def test_a_cube_play_gains_cubefully_what_it_loses_cubelessly() -> None:
    # Position 0: our cubeful ranking cashes (A), our cubeless ranking plays on (B); position 1: both pick C.
    out = score([("A", "B"), ("C", "C")], [CASH, SAME])
    assert (out["ours_differ"], out["gnubg_differ"], out["both_differ"]) == (1, 0, 0)
    assert out["ours_differ_rows"] == [0]
    assert out["ours_cubeful_gain_cubeful_memg"][0] == pytest.approx(10.0)
    assert out["ours_cubeful_gain_cubeless_memg"][0] == pytest.approx(-50.0)
    # Against gnubg's own choices: the cubeful ranking loses nothing cubefully, the cubeless one 10 mEMG at one
    # position of two; cubelessly gnubg's choice A is 50 below B, which counts as no loss for B.
    assert out["ours_cubeful_choice_loss_cubeful_memg"][0] == pytest.approx(0.0)
    assert out["ours_cubeless_choice_loss_cubeful_memg"][0] == pytest.approx(5.0)
    assert out["ours_cubeless_choice_loss_cubeless_memg"][0] == pytest.approx(0.0)


def test_gnubg_differing_is_counted_from_its_two_hints() -> None:
    split = {"choice": {"cubeful": "A", "cubeless": "B"}, "extra": CASH["extra"]}
    out = score([("A", "B")], [split])
    assert (out["ours_differ"], out["gnubg_differ"], out["both_differ"]) == (1, 1, 1)
