"""The evaluator: vectorised routing equals gnubg's classification, terminal scoring, encoding, shipped nets."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.analyser import Analyser
from engine.encoding import N_INPUTS, encode, encode_contact, encode_race, positions_to_array
from engine.evaluator import (
    MODELS_DIR,
    CompositeEvaluator,
    ModelError,
    NetEvaluator,
    invert,
    money_equity,
    route,
    sanitise,
    terminal_probs,
    terminal_rows,
)
from engine.position import Position, PositionClass
from tests.strategies import random_position


def _positions(n: int, seed: int, finished: bool = True) -> list[Position]:
    rng = random.Random(seed)
    return [random_position(rng, allow_finished=finished) for _ in range(n)]


def test_route_agrees_with_position_classify() -> None:
    positions = _positions(3000, 1)
    over, home, contact, crashed = route(positions_to_array(positions))
    for i, pos in enumerate(positions):
        cls = pos.classify()
        assert over[i] == (cls == PositionClass.OVER)
        assert crashed[i] == (cls == PositionClass.CRASHED)
        assert contact[i] == (cls in (PositionClass.CONTACT, PositionClass.CRASHED))
        in_home = (
            not over[i]
            and max(max((j for j, n in enumerate(side) if n), default=-1) for side in (pos.me, pos.opp)) < 6
        )
        assert home[i] == in_home


def test_terminal_rows_equal_terminal_probs() -> None:
    rng = random.Random(2)
    finished = []
    while len(finished) < 300:
        pos = random_position(rng, allow_finished=True)
        if pos.is_over():
            finished.append(pos)
    got = terminal_rows(positions_to_array(finished))
    want = np.array([terminal_probs(p) for p in finished])
    assert np.array_equal(got, want)


def test_terminal_scoring_of_gammon_and_backgammon() -> None:
    # I have borne off everything; the opponent has all 15 on the board, one on my home board: a backgammon.
    opp = [0] * 25
    opp[23] = 1  # the opponent's 24-point is my ace point
    opp[5] = 14
    won = Position([0] * 25, opp)
    assert list(terminal_probs(won)) == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert list(terminal_probs(won.swap())) == [0.0, 0.0, 0.0, 1.0, 1.0]


def test_encoding_of_the_opening() -> None:
    x = encode(positions_to_array([Position.initial()]))
    assert x.shape == (1, N_INPUTS) and x.dtype == np.float32
    base = x[0, :200].reshape(2, 25, 4)
    assert list(base[0, 5]) == [0, 0, 1, 1.0]  # five on the 6-point: n >= 3 and (5 - 3) / 2
    assert list(base[0, 23]) == [0, 1, 0, 0]  # two on the 24-point
    assert np.array_equal(base[0], base[1])  # the opening is symmetric
    assert x[0, 200 + 1] == pytest.approx(167 / 167)


def test_sanitise_keeps_gnubg_order() -> None:
    p = sanitise(np.array([[0.4, 0.5, 0.6, 0.7, 0.8], [1.2, -0.1, 0.0, 0.0, 0.0]]))
    assert (p[:, 1] <= p[:, 0]).all() and (p[:, 2] <= p[:, 1]).all()
    assert (p[:, 3] <= 1 - p[:, 0]).all() and (p[:, 4] <= p[:, 3]).all()


def test_invert_is_an_involution_and_negates_equity() -> None:
    p = np.array([0.6, 0.2, 0.01, 0.1, 0.005])
    assert np.allclose(invert(invert(p)), p)
    assert money_equity(invert(p)) == pytest.approx(-money_equity(p))


def test_shipped_nets_load_and_answer_sensibly() -> None:
    nets = NetEvaluator(MODELS_DIR)
    ev = CompositeEvaluator(nets)
    probs = ev.evaluate([Position.initial()])[0]
    assert 0.5 < probs[0] < 0.56  # the side on roll at the opening wins a little more than half
    assert 0.1 < probs[1] < 0.2 and 0.1 < probs[3] < 0.2
    batch = ev.evaluate(_positions(200, 3, finished=False))
    assert ((batch >= 0) & (batch <= 1)).all()


def test_each_shipped_net_gets_the_encoding_of_its_width() -> None:
    """gammond-v3's contact and crashed nets take the contact features, its race net gnubg's race inputs."""
    nets = NetEvaluator(MODELS_DIR)
    assert nets.net_for(PositionClass.CONTACT).encode is encode_contact
    assert nets.net_for(PositionClass.CRASHED).encode is encode_contact
    assert nets.net_for(PositionClass.CRASHED) is not nets.net_for(PositionClass.CONTACT)
    assert nets.net_for(PositionClass.RACE).encode is encode_race
    crashed = [p for p in _positions(400, 5, finished=False) if p.classify() == PositionClass.CRASHED]
    assert crashed
    got = nets.evaluate_boards(positions_to_array(crashed), nets.net_for(PositionClass.CRASHED))
    assert ((got >= 0) & (got <= 1)).all()


def test_missing_model_folder_is_a_typed_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelError):
        NetEvaluator(tmp_path)
    (tmp_path / "manifest.json").write_text('{"nets": {"contact": "nope.onnx"}}')
    with pytest.raises(ModelError):
        NetEvaluator(tmp_path)


def test_default_analyser_uses_exact_bearoff() -> None:
    analyser = Analyser.default()
    # Two chequers each on the ace point, player on roll: wins unless ... always bears off both with any roll.
    pos = Position.from_points({1: 2, 24: -2})
    probs = analyser.evaluator.evaluate([pos])[0]
    assert probs[0] == pytest.approx(1.0)
