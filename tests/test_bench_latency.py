"""bench.latency's pick and report (the timing itself needs gnubg and minutes: run the bench)."""

from __future__ import annotations

import argparse
from collections import Counter

from bench.latency import DUMPS, markdown, pick, report


def test_the_pick_keeps_its_class_shares_in_every_prefix() -> None:
    positions = pick(200, 29, DUMPS)
    assert len(positions) == len({p["id"] for p in positions}) == 200
    assert Counter(p["class"] for p in positions) == {
        "contact": 100,
        "race": 50,
        "crashed": 26,
        "bearoff": 24,
    }
    first = Counter(p["class"] for p in positions[:40])  # the 2-ply subset of a run is a prefix
    assert first["race"] >= 9 and first["bearoff"] >= 4 and first["contact"] >= 19
    assert pick(200, 29, DUMPS) == positions  # seeded


def test_report_gives_percentiles_ratios_and_the_slowest_by_id() -> None:
    rows = [
        {
            "id": f"p{i}",
            "class": "race" if i % 2 else "contact",
            "ours": {"0ply": float(i)},
            "gnubg": {"0ply": 2.0},
        }
        for i in range(1, 101)
    ]
    rows.append({"id": "nogn", "class": "race", "ours": {"0ply": 1000.0}, "gnubg": {}})  # unpaired: left out
    result = report(rows, argparse.Namespace(worst=3))
    everything = result["by"]["0ply"]["all"]
    assert everything["ours"] == {"n": 100, "p50": 50.5, "p90": 90.1, "p99": 99.01, "max": 100.0}
    assert everything["ratio"]["p50"] == 25.25
    assert result["by"]["0ply"]["race"]["ours"]["n"] == 50
    assert [w["id"] for w in result["worst"]["0ply"]] == ["p100", "p99", "p98"]
    assert "| 0-ply move | **all** | 100 |" in markdown(result)
