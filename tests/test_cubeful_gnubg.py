"""Our cubeful move ranking against gnubg's, on gnubg's own 0-ply numbers (tests/data/gnubg_ranking.jsonl).

The vectors were written by ``python -m bench.cubeful_gnubg --n 120 --seed 21 --jobs 1 --vectors
tests/data/gnubg_ranking.jsonl --vector-n 120``: positions from our self-play with their roll and a cube state
(money centred with and without Jacoby, money cubes owned by either side, 7-point match scores), and for every
legal move gnubg 1.07's 0-ply cubeless probabilities of the board after it (opponent on roll) and his 0-ply
cubeful value after his best cube action, which is what gnubg's ScoreMove ranks by. Fed the same probabilities,
``Search.node_values`` (the path of ``Analyser.hint`` at 0-ply) must give gnubg's values, and our ranking, ties
broken by cubeless equity as gnubg's move sort does, must choose gnubg's move.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine import cubeful as cf
from engine.bearoff import BearoffDatabase
from engine.cube import CubeInfo
from engine.encoding import positions_to_array
from engine.evaluator import invert, money_equity
from engine.met import MatchEquityTable
from engine.position import Position
from engine.search import Search, best_first

VECTORS = Path(__file__).parent / "data" / "gnubg_ranking.jsonl"


def _vectors() -> list[dict]:
    return [json.loads(line) for line in VECTORS.read_text().splitlines()]


@pytest.fixture(scope="module")
def search() -> Search:
    return Search(evaluator=None, bearoff=BearoffDatabase.load(), met=MatchEquityTable.load())  # type: ignore[arg-type]


def _ours(search: Search, row: dict) -> tuple[CubeInfo, np.ndarray, np.ndarray, np.ndarray]:
    cube, owner, on_roll, length, score, crawford, jacoby, beavers = row["ci"]
    ci = CubeInfo(cube, owner, on_roll, length, tuple(score), crawford, jacoby, beavers)
    reply = ci.swapped()
    boards = positions_to_array([Position.from_id(m[0]) for m in row["moves"]], np.uint8)
    opp_probs = np.array([m[1] for m in row["moves"]])
    values = search.node_values(boards, opp_probs, [reply])
    opp = cf.to_equity(values[:, 0], reply, search.met)
    mover = cf.to_equity(cf.flip(values, [reply])[:, 0], ci, search.met)
    return ci, opp, mover, opp_probs


def test_the_vectors_cover_every_kind_of_cube_state() -> None:
    labels = {row["label"] for row in _vectors()}
    assert len(_vectors()) >= 100
    assert {
        "money centred, Jacoby off",
        "money centred, Jacoby on",
        "money cube 2 owned by mover",
        "money cube 2 owned by opponent",
        "7-point match, centred",
        "7-point match, owned",
    } <= labels


def test_our_cubeful_values_equal_gnubgs_on_its_own_probabilities(search: Search) -> None:
    worst = 0.0
    for row in _vectors():
        _, opp, mover, _ = _ours(search, row)
        gnubg_opp = np.array([m[2] for m in row["moves"]])
        gnubg_mover = np.array([m[3] for m in row["moves"]])
        worst = max(worst, float(np.max(np.abs(opp - gnubg_opp))), float(np.max(np.abs(mover - gnubg_mover))))
    assert worst < 1e-4  # gnubg computes in single precision


def test_our_ranking_chooses_gnubgs_move_ties_broken_by_cubeless_equity(search: Search) -> None:
    ties = 0
    for row in _vectors():
        ci, _, mover, opp_probs = _ours(search, row)
        gnubg = np.array([m[3] for m in row["moves"]])
        if ci.is_money:
            cubeless = money_equity(invert(opp_probs))
        else:
            cubeless = cf.to_equity(cf.cubeless_mwc(invert(opp_probs), ci, search.met), ci, search.met)
        # gnubg's values are rounded to 9 digits here: round ours the same way before comparing equal values.
        ours = best_first(np.round(mover, 6), cubeless)[0]
        assert gnubg[ours] == pytest.approx(gnubg.max(), abs=2e-6), row["gnubgid"]
        top = gnubg == gnubg.max()
        if top.sum() > 1:
            ties += 1
            # Among gnubg's tied moves the hint lists first the best cubeless one: so do we.
            assert cubeless[ours] == pytest.approx(cubeless[top].max(), abs=1e-6), row["gnubgid"]
            assert int(np.argmax(gnubg)) == ours or cubeless[int(np.argmax(gnubg))] == pytest.approx(
                cubeless[ours], abs=1e-6
            )
    assert ties >= 3  # the vectors hold positions where every move is a pass of the opponent's double
