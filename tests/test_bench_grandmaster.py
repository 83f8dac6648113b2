"""bench.grandmaster's judgement: losses against the best 3-ply equity gnubg knows, the lone survivor's explicit
3-ply value included, and the paired figures of the report (synthetic answers: no gnubg needed)."""

from __future__ import annotations

import pytest

from bench.grandmaster import CHOOSERS, judge, report


def _answer() -> dict:
    # gnubg's 3-ply hint: A and B searched to 3 plies, C left at 2; D (a choice) evaluated explicitly at 3-ply
    return {
        "moves": [["m1", "A", 0.100, 3], ["m2", "B", 0.080, 3], ["m3", "C", 0.300, 2]],
        "extra": {"D": 0.120},
        "check": [0.100, 0.100],
        "cpu": 0.5,
    }


def test_losses_are_against_the_best_three_ply_equity_known() -> None:
    ours = {"choice": {"our_grandmaster": "A", "our_worldclass": "B"}, "gnubg_worldclass": "D"}
    row = {"choice": {"gnubg_2ply": "B"}}
    got = judge(ours, row, _answer())
    # D's explicit 3-ply value (0.120) beats gnubg's own first (0.100): the best known; C's 2-ply value is not used
    assert got["loss"] == pytest.approx(
        {
            "our_grandmaster": 20.0,
            "our_worldclass": 40.0,
            "gnubg_worldclass": 0.0,
            "gnubg_grandmaster": 20.0,
            "gnubg_worldclass_external": 40.0,
        }
    )
    assert got["same"]["our_grandmaster"] and not got["same"]["our_worldclass"]
    assert got["check_diff"] == 0.0


def test_report_pairs_the_choosers_position_by_position() -> None:
    recs = []
    for k, (gm, wc, gw) in enumerate([(0.0, 2.0, 1.0), (1.0, 1.0, 1.0), (0.0, 3.0, 0.0)]):
        loss = dict.fromkeys(CHOOSERS, 0.0)
        loss.update(our_grandmaster=gm, our_worldclass=wc, gnubg_worldclass=gw)
        recs.append(
            {
                "class": "contact" if k else "race",
                "loss": loss,
                "same": dict.fromkeys(CHOOSERS, True),
                "cpu": {"our_grandmaster": 0.1 * (k + 1), "our_worldclass": 0.01},
                "gm_depth": 3,
                "gnubgid": f"id{k}",
                "dice": [3, 1],
                "check_diff": None,
            }
        )
    rep = report(recs)
    assert rep["memg_per_move"]["our_grandmaster"] == pytest.approx(1 / 3, abs=0.01)
    assert rep["paired_memg"]["grandmaster_minus_worldclass"][0] == pytest.approx(-5 / 3, abs=0.01)
    assert rep["cpu_ms"]["our_grandmaster"]["max"] == pytest.approx(300.0)
    assert rep["slowest_grandmaster"][0]["gnubgid"] == "id2"
    assert set(rep["by_class"]) == {"contact", "race"}
