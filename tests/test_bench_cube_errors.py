"""bench.cube_errors scores a cube decision against gnubg's no double / double-take / double-pass values."""

from __future__ import annotations

import pytest

from bench.cube_errors import error

# The doubler's view, per unit of the cube (gnubg's cfevaluate).
DOUBLE_TAKE = {"no_double": 0.55, "double_take": 0.70, "double_pass": 1.0}  # double, and a take
TOO_GOOD = {"no_double": 1.20, "double_take": 1.40, "double_pass": 1.0}  # play on for the gammon
NO_DOUBLE = {"no_double": 0.30, "double_take": 0.10, "double_pass": 1.0}


@pytest.mark.parametrize(
    ("ev", "doubled", "expected"),
    [
        (DOUBLE_TAKE, True, 0.0),
        (DOUBLE_TAKE, False, 0.15),  # a missed double gives up DT - ND
        (TOO_GOOD, True, 0.20),  # doubling out a gammonish position cashes 1.0 instead of 1.2
        (TOO_GOOD, False, 0.0),
        (NO_DOUBLE, True, 0.20),
        (NO_DOUBLE, False, 0.0),
    ],
)
def test_doubler_error_is_the_best_action_minus_his(ev: dict, doubled: bool, expected: float) -> None:
    assert error({"kind": "double", "yes": doubled}, ev) == pytest.approx(expected)


def test_taker_error_is_seen_from_his_side() -> None:
    # A take costs him 0.70, a pass 1.0: passing gives up 0.30.
    assert error({"kind": "take", "yes": False}, DOUBLE_TAKE) == pytest.approx(0.30)
    assert error({"kind": "take", "yes": True}, DOUBLE_TAKE) == pytest.approx(0.0)
    # Against a gammonish double the take costs 1.4 and the pass only 1.0.
    assert error({"kind": "take", "yes": True}, TOO_GOOD) == pytest.approx(0.40)
