"""The C generator (engine/_movegen.c) returns exactly the pure-Python reference's list."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import engine.moves as moves
from bench._positions import ALL_ROLLS, random_cases
from engine.errors import InvalidPositionError
from engine.position import Position

ROOT = Path(__file__).resolve().parents[1]
Generator = Callable[[Position, int, int], list[moves.Play]]


@pytest.fixture
def c() -> Generator:
    """The C generator, also when GAMMOND_PURE_PYTHON=1 keeps legal_plays on the reference."""
    if moves._legal_plays_c is not None:
        return moves._legal_plays_c
    try:
        from engine import _movegen  # type: ignore[attr-defined]
    except ImportError:
        pytest.skip("engine._movegen is not built")
    _movegen.setup(Position, moves.Move, moves.Play, InvalidPositionError)
    return _movegen.legal_plays


def as_data(plays: list[moves.Play]) -> list[tuple[object, ...]]:
    """Everything a caller can see of a play list, the cached hash included."""
    return [(p.move.steps, p.position.me, p.position.opp, hash(p.position)) for p in plays]


def test_same_lists_as_python_on_random_positions_and_all_rolls(c: Generator) -> None:
    py = moves._legal_plays_python
    compared = 0
    for kind, pos, _ in random_cases(1000, 2024):
        for d1, d2 in ALL_ROLLS:  # the larger die first; test_moves checks that the order does not matter
            assert as_data(c(pos, d1, d2)) == as_data(py(pos, d1, d2)), (kind, pos.position_id, (d1, d2))
            compared += 1
    assert compared == 1000 * 21


def test_plays_are_ordinary_values(c: Generator) -> None:
    plays = c(Position.initial(), 6, 4)
    for play in plays:
        assert type(play) is moves.Play and type(play.move) is moves.Move and type(play.position) is Position
        assert play == moves.Play(moves.Move(play.move.steps), Position(play.position.me, play.position.opp))
        assert hash(play.position) == hash((play.position.me, play.position.opp))
        assert eval(repr(play.move), vars(moves)) == play.move
        assert Position.from_id(play.position.position_id) == play.position
    with pytest.raises(AttributeError):
        plays[0].position.me = ()  # type: ignore[misc]


def test_doubles_with_many_plays_grow_the_tables(c: Generator) -> None:
    # 1-1 from scattered blots: hundreds of distinct results, past the generator's first table size
    their_board = {p: -2 for p in range(19, 25)}
    pos = Position.from_points({p: 1 for p in range(1, 16)} | their_board)
    plays = c(pos, 1, 1)
    assert len(plays) > 256
    assert as_data(plays) == as_data(moves._legal_plays_python(pos, 1, 1))


def test_bad_boards_are_refused_not_crashed(c: Generator) -> None:
    over = Position._trusted((16,) + (0,) * 24, (0,) * 24 + (1,))
    with pytest.raises(InvalidPositionError, match="counts"):
        c(over, 3, 1)
    short = Position._trusted((1,) * 3, (0,) * 25)
    with pytest.raises(InvalidPositionError, match="25 counts"):
        c(short, 3, 1)
    with pytest.raises(TypeError):
        c("not a position", 3, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dice"):
        c(Position.initial(), 0, 7)


def test_generic_hash_path_gives_the_same_lists(c: Generator) -> None:
    # Position hashes come from CPython's tuple-hash formula when setup() finds that it agrees with
    # PyObject_Hash; generic_hash=True takes the PyObject_Hash path that other interpreters would get.
    from engine import _movegen  # type: ignore[attr-defined]

    cases = [(pos, roll) for _, pos, roll in random_cases(60, 77)]
    expected = [as_data(moves._legal_plays_python(pos, *roll)) for pos, roll in cases]
    try:
        assert _movegen.setup(Position, moves.Move, moves.Play, InvalidPositionError, True) is False
        assert [as_data(_movegen.legal_plays(pos, *roll)) for pos, roll in cases] == expected
    finally:
        _movegen.setup(Position, moves.Move, moves.Play, InvalidPositionError)
    assert [as_data(_movegen.legal_plays(pos, *roll)) for pos, roll in cases] == expected


def test_setup_refuses_classes_without_the_slots(c: Generator) -> None:
    from engine import _movegen  # type: ignore[attr-defined]

    with pytest.raises(TypeError, match="slot"):
        _movegen.setup(int, moves.Move, moves.Play, InvalidPositionError)
    start = Position.initial()
    assert as_data(c(start, 3, 1)) == as_data(moves._legal_plays_python(start, 3, 1))  # the old setup holds


def _implementation_in_child(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GAMMOND_PURE_PYTHON"}
    if env_value is not None:
        env["GAMMOND_PURE_PYTHON"] = env_value
    out = subprocess.run(
        [sys.executable, "-c", "import engine.moves as m; print(m.IMPLEMENTATION)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_pure_python_env_var_forces_the_fallback() -> None:
    assert _implementation_in_child("1") == "python"
    expected = "c" if importlib.util.find_spec("engine._movegen") else "python"
    assert _implementation_in_child("0") == expected
    assert _implementation_in_child(None) == expected


def test_the_encodings_follow_the_generator_into_the_fallback() -> None:
    code = (
        "import engine.encoding as e, engine.evaluator as v, engine.features as f, engine.moves as m; "
        "print(m.IMPLEMENTATION, f.IMPLEMENTATION, e.encode.__name__, e.encode_contact.__name__, v.route.__name__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "GAMMOND_PURE_PYTHON"}
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "GAMMOND_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.split() == ["python", "numpy", "encode_numpy", "encode_contact_numpy", "route_numpy"]
    if importlib.util.find_spec("engine._movegen"):
        run = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        assert run.stdout.split() == ["c", "c", "_encode_c", "_encode_contact_c", "_route_c"]
