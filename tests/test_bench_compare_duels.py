"""bench.compare_duels: pairing two duels' checkpoints by dice sequence, and the running means it plots."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bench.compare_duels import compare, main, running_mean


def _checkpoint(prefix: Path, pairs: dict[int, float], part: int = 0) -> None:
    lines = [
        json.dumps({"seed": s, "pair": p, "timing": {"our_moves": 1, "our_seconds": 0.1}})
        for s, p in pairs.items()
    ]
    prefix.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{prefix}.{part}").write_text("\n".join(lines) + "\n")


def test_running_mean_matches_each_prefix_computed_directly() -> None:
    rng = np.random.default_rng(3)
    values = rng.choice([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0], size=50)
    mean, half = running_mean(values)
    assert math.isnan(half[0])
    for k in (2, 7, 50):
        head = values[:k]
        assert mean[k - 1] == pytest.approx(head.mean())
        assert half[k - 1] == pytest.approx(1.96 * head.std(ddof=1) / math.sqrt(k))


def test_running_mean_of_equal_values_has_no_spread() -> None:
    # Running sums of equal values can round below zero variance; the band must be 0, not NaN.
    mean, half = running_mean([0.1] * 30)
    assert np.allclose(mean, 0.1)
    assert np.all(half[1:] == pytest.approx(0.0, abs=1e-9))


def test_compare_pairs_common_sequences_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _checkpoint(a, {1: 2.0, 2: 0.0}, part=0)
    _checkpoint(a, {3: -1.0}, part=1)  # a second worker's file of the same duel
    _checkpoint(b, {1: 2.0, 2: -2.0, 3: -1.0, 4: 6.0})  # sequence 4 was not played by a: left out
    r = compare(a, b)
    assert r["pairs"] == 3
    assert r["ppg"] == pytest.approx(2.0 / 3.0)  # differences 0, 2, 0
    assert r["sequences_differing"] == pytest.approx(1.0 / 3.0)
    assert r["a_ppg"] == pytest.approx(1.0 / 3.0)
    assert r["b_ppg"] == pytest.approx(-1.0 / 3.0)


def test_main_writes_the_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    a, b = tmp_path / "a", tmp_path / "b"
    _checkpoint(a, {s: float(s % 3 - 1) for s in range(40)})
    _checkpoint(b, {s: float(s % 2) for s in range(40)})
    png = tmp_path / "plots" / "ab.png"
    assert main([str(a), str(b), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "40 common dice sequences" in capsys.readouterr().out


def test_duels_of_the_same_file_name_are_named_by_their_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "v3.2" / "duel_s7", tmp_path / "v3.1" / "duel_s7"
    _checkpoint(a, {1: 1.0, 2: 0.0})
    _checkpoint(b, {1: 0.0, 2: 0.0})
    assert main([str(a), str(b)]) == 0
    assert "v3.2/duel_s7 - v3.1/duel_s7: +0.5000" in capsys.readouterr().out
