"""Rollouts (engine/rollout.py) and `gammond rollout`."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter

import numpy as np
import pytest

from bot.cli import main
from engine import moves
from engine.analyser import Analyser
from engine.cube import CubeInfo
from engine.encoding import positions_to_array
from engine.errors import InvalidPositionError
from engine.ids import GameState, MatchKey
from engine.moves import ROLLS, legal_plays, roll_children, rolled_children
from engine.position import Position
from engine.rollout import (
    RolloutError,
    RolloutSettings,
    _rolls,
    finish,
    rollout,
    rollout_plays,
    rollout_sums,
)
from tests.test_search import _sample_positions as sample_positions

OPENING = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser.default()


def test_first_two_rolls_are_stratified_over_1296_trials() -> None:
    perms = [np.random.default_rng(5).permutation(36) for _ in range(3)]
    rng = np.random.default_rng(0)
    ids = np.arange(1296)
    first, second = _rolls(ids, 0, perms, rng, 1296), _rolls(ids, 1, perms, rng, 1296)
    weights = {k: w for k, (_, w) in enumerate(ROLLS)}
    # every roll comes up in proportion to its chance (36 x its weight) at both plies
    assert Counter(first.tolist()) == {k: 36 * w for k, w in weights.items()}
    assert Counter(second.tolist()) == {k: 36 * w for k, w in weights.items()}
    # and every pair of first two ordered rolls once: 21 x 21 roll pairs in proportion to their chances
    pairs = Counter(zip(first.tolist(), second.tolist(), strict=True))
    assert all(n == weights[a] * weights[b] for (a, b), n in pairs.items()) and len(pairs) == 441


def test_plies_with_too_few_trials_to_stratify_get_random_rolls() -> None:
    # A bug once gave all 1,296 trials the same third roll (stratified over 46,656 trials that were not there),
    # which made every rollout lean to one side by ~0.1.
    perms = [np.random.default_rng(5).permutation(36) for _ in range(3)]
    rng = np.random.default_rng(0)
    ids = np.arange(1296)
    third = Counter(_rolls(ids, 2, perms, rng, 1296).tolist())
    assert len(third) == 21 and max(third.values()) < 2.5 * 1296 / 18
    second_of_36 = Counter(_rolls(np.arange(36), 1, perms, rng, 36).tolist())
    assert len(second_of_36) > 10  # 36 trials stratify the first roll only


def test_opening_reply_rollout_agrees_with_the_evaluation(analyser: Analyser) -> None:
    # the nets' own 2-ply view of a quiet opening position and a rollout by the same nets agree within noise
    pos = Position.from_id("4HPwARHgc/ABMA")
    ev = analyser.evaluate(pos, CubeInfo.money(), 0)
    r = rollout(
        analyser,
        pos,
        CubeInfo.money(),
        RolloutSettings(trials=1296, truncate=6, cubeful=False, variance_reduction=False, seed=1),
    )
    assert abs(r.equity - ev.cubeless) < 3 * r.equity_se + 0.03


def test_a_certain_win_has_no_error(analyser: Analyser) -> None:
    pos = Position.from_points({1: 1, 19: -1, 20: -1})  # any roll bears my last chequer off; they have two
    r = rollout(analyser, pos, CubeInfo.money(), RolloutSettings(trials=36))
    assert r.probs == pytest.approx((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), abs=1e-12)
    assert r.equity == pytest.approx(1.0) and r.equity_se < 1e-6 and r.cubeful_equity == pytest.approx(1.0)
    assert r.trials == 36


def test_bearoff_rollout_agrees_with_the_exact_database(analyser: Analyser) -> None:
    pos = Position.from_points(
        {1: 2, 3: 1, 5: 1, 20: -1, 22: -1, 23: -2}
    )  # both sides in a two-sided bearoff
    exact = analyser.evaluate(pos, CubeInfo.money(), 0)
    for prune in (True, False):  # with and without the pruning nets' preselection
        # played out to the end (no truncation at the databases): the rollout's own play meets the table
        s = RolloutSettings(
            trials=1296,
            cubeful=False,
            seed=3,
            prune=prune,
            bearoff_truncation=False,
            one_sided_truncation=False,
        )
        r = rollout(analyser, pos, CubeInfo.money(), s)
        assert abs(r.probs[0] - exact.probs[0]) <= 3 * r.probs_se[0] + 1e-3
        assert abs(r.equity - exact.cubeless) <= 3 * r.equity_se + 2e-3


TWO_SIDED = {1: 2, 3: 1, 5: 1, 20: -1, 22: -1, 23: -2}


def _plies(
    analyser: Analyser, pos: Position, ci: CubeInfo, s: RolloutSettings, **kw: bool
) -> tuple[object, int]:
    plies: list[int] = []
    sums = rollout_sums(analyser, pos, ci, s, progress=lambda ply, _left: plies.append(ply), **kw)
    return sums, len(plies)


def test_a_rollout_in_the_two_sided_database_is_its_exact_value(analyser: Analyser) -> None:
    # gnubg's "truncate at bearoff database": the trials end at once, scored by the table
    pos, ci = Position.from_points(TWO_SIDED), CubeInfo.money()
    db = analyser.search.bearoff
    exact = db.evaluate([pos])[0]  # type: ignore[union-attr]
    cubeful = db.cubeful_equities(pos)  # type: ignore[union-attr]
    r = rollout(analyser, pos, ci, RolloutSettings(trials=72, cubeful=False, seed=1))
    assert r.probs[0] == pytest.approx(exact[0], abs=1e-12) and r.equity_se == 0.0
    sums, plies = _plies(analyser, pos, ci, RolloutSettings(trials=72, seed=1))
    assert plies == 0
    # the rollout's root: no double, the table's centred equity
    assert sums.cubeful / sums.n == pytest.approx(cubeful.centred, abs=1e-6)  # type: ignore[attr-defined]
    # after a play of the other side: its opponent on roll may double at once, the optimal value
    sums, plies = _plies(analyser, pos, ci, RolloutSettings(trials=72, seed=1), opponent_first=True)
    assert plies == 0
    assert sums.cubeful / sums.n == pytest.approx(-cubeful.centred_optimal, abs=1e-6)  # type: ignore[attr-defined]
    _, plies = _plies(
        analyser,
        pos,
        ci,
        RolloutSettings(trials=72, seed=1, bearoff_truncation=False, one_sided_truncation=False),
    )
    assert plies > 0


def test_cubeless_rollouts_end_in_the_one_sided_database_cubeful_ones_play_on(analyser: Analyser) -> None:
    pos = Position.from_points(
        {1: 3, 2: 3, 3: 3, 4: 2, 5: 2, 6: 2, 19: -2, 20: -3, 21: -3, 22: -3, 23: -2, 24: -2}
    )
    ci = CubeInfo.money()
    exact = analyser.search.bearoff.evaluate([pos])[0]  # type: ignore[union-attr]
    r = rollout(analyser, pos, ci, RolloutSettings(trials=36, cubeful=False, seed=1))
    assert r.probs[0] == pytest.approx(exact[0], abs=1e-12) and r.equity_se == 0.0
    _, plies = _plies(analyser, pos, ci, RolloutSettings(trials=36, seed=1))
    assert plies > 0  # no exact cubeful table for 15 chequers: gnubg plays those on too


@pytest.mark.parametrize("cubeful", [False, True])
def test_a_race_rolled_out_with_and_without_truncation_agrees(analyser: Analyser, cubeful: bool) -> None:
    pos = Position.from_points({4: 3, 5: 3, 6: 3, 7: 3, 8: 3, 17: -3, 18: -3, 19: -3, 20: -3, 21: -3})
    ci = CubeInfo.money()
    on = RolloutSettings(trials=432, cubeful=cubeful, seed=7)
    off = RolloutSettings(
        trials=432, cubeful=cubeful, seed=7, bearoff_truncation=False, one_sided_truncation=False
    )
    (a, plies_on), (b, plies_off) = _plies(analyser, pos, ci, on), _plies(analyser, pos, ci, off)
    ra, rb = (finish(x, ci, analyser, cubeful, 0.0, 0) for x in (a, b))  # type: ignore[arg-type]
    assert plies_on < plies_off  # the trials stop once in the databases
    ea, eb = (ra.cubeful_equity, rb.cubeful_equity) if cubeful else (ra.equity, rb.equity)
    sa, sb = (ra.cubeful_se, rb.cubeful_se) if cubeful else (ra.equity_se, rb.equity_se)
    assert abs(ea - eb) <= 3 * (sa**2 + sb**2) ** 0.5 + 1e-3  # type: ignore[operator]


def test_variance_reduction_cuts_the_standard_error(analyser: Analyser) -> None:
    pos = Position.from_id(OPENING)
    plain = rollout(
        analyser,
        pos,
        CubeInfo.money(),
        RolloutSettings(trials=144, truncate=4, variance_reduction=False, seed=1),
    )
    vr = rollout(
        analyser,
        pos,
        CubeInfo.money(),
        RolloutSettings(trials=144, truncate=4, variance_reduction=True, seed=1),
    )
    assert vr.equity_se < plain.equity_se / 2
    assert abs(vr.equity - plain.equity) < 3 * plain.equity_se


def test_slices_merge_into_one_rollout(analyser: Analyser) -> None:
    pos, ci = Position.from_id(OPENING), CubeInfo.money()
    s = RolloutSettings(trials=72, truncate=3, seed=2)
    whole = rollout_sums(analyser, pos, ci, s, first_trial=0, trials=72)
    a = rollout_sums(analyser, pos, ci, s, first_trial=0, trials=36)
    b = rollout_sums(analyser, pos, ci, s, first_trial=36, trials=36)
    merged = a + b
    assert merged.n == 72
    # the first 36 trials are the same games in both (same trial numbers, same stratified dice)
    assert np.allclose(a.probs, rollout_sums(analyser, pos, ci, s, first_trial=0, trials=36).probs)
    result = finish(merged, ci, analyser, True, 0.0, 3)
    assert result.trials == 72 and abs(result.equity - finish(whole, ci, analyser, True, 0.0, 3).equity) < 0.3


def test_crawford_game_cubeful_equals_cubeless(analyser: Analyser) -> None:
    # no cube in the Crawford game: the cubeful rollout plays the same games and scores them the same
    ci = CubeInfo(1, -1, 0, 5, (4, 2), crawford=True, jacoby=False, beavers=False)
    pos = Position.from_id(OPENING)
    s = RolloutSettings(trials=36, truncate=6, variance_reduction=False, seed=4)
    r = rollout(analyser, pos, ci, s)
    assert r.cubeful_equity == pytest.approx(r.equity, abs=1e-9)


def test_hint_by_rollout_ranks_the_plays(analyser: Analyser) -> None:
    pos = Position.from_id(OPENING)
    plays = rollout_plays(
        analyser,
        pos,
        (3, 1),
        CubeInfo.money(),
        RolloutSettings(trials=36, truncate=2, cubeful=False),
        candidates=3,
    )
    assert len(plays) == 3 and "8/5 6/5" in [m for m, _ in plays]
    equities = [r.equity for _, r in plays]
    assert equities == sorted(equities, reverse=True)


def test_bad_settings_are_typed_errors() -> None:
    with pytest.raises(RolloutError):
        RolloutSettings(trials=0)
    with pytest.raises(RolloutError):
        RolloutSettings(truncate=-1)


def test_cli_json_has_gnubgs_figures(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["rollout", OPENING, "--trials", "36", "--truncate", "2", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert len(obj["probs"]) == 6 and obj["probs"][0] + obj["probs"][3] == pytest.approx(1.0)
    for key in ("equity", "cubeful_equity", "se", "trials", "seconds"):
        assert key in obj
    assert obj["trials"] == 36 and obj["se"]["equity"] >= 0
    assert main(["rollout", "not-an-id", "--trials", "36", "--json"]) == 2  # a clear error, no traceback
    assert "error" in capsys.readouterr().err


def test_cli_bearoff_truncation_is_on_by_default(capsys) -> None:  # type: ignore[no-untyped-def]
    pid = Position.from_points(TWO_SIDED).position_id
    assert main(["rollout", pid, "--trials", "36", "--cubeless", "--no-vr", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["se"]["equity"] == 0.0  # the table's value, no game played
    assert (
        main(
            [
                "rollout",
                pid,
                "--trials",
                "36",
                "--cubeless",
                "--no-vr",
                "--json",
                "--quiet",
                "--no-bearoff-truncation",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["se"]["equity"] > 0.0


def test_cli_several_positions_fan_out(capsys) -> None:  # type: ignore[no-untyped-def]
    key = MatchKey(1, -1, 0, False, GameState.PLAYING, 0, False, 0, (0, 0), 5, (1, 2), False).encode()
    match = f"{OPENING}:{key}"  # a 5-point match at 1-2
    args = ["rollout", OPENING, match, "--trials", "36", "--truncate", "1", "--cubeless", "--jobs", "2"]
    rc = main([*args, "--json"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rc == 0 and [x["id"] for x in lines] == [OPENING, match]
    assert all(x["cubeful_equity"] is None for x in lines)
    assert lines[0]["equity"] != lines[1]["equity"]  # the match score changes the cubeless equity


# -- the children of the rolled dice only (the rollouts without variance reduction) ------------------------


def _old_rolled_children(boards: np.ndarray, rolls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rolled dice's children cut out of every roll's children: what the rollout did before."""
    kids, counts = roll_children(boards)
    flat = counts.ravel()
    start = np.concatenate([[0], np.cumsum(flat)[:-1]])
    runs = np.arange(len(boards)) * 21 + rolls
    take = [np.arange(start[r], start[r] + flat[r]) for r in runs]
    return kids[np.concatenate(take)] if take else kids[:0], flat[runs]


def test_rolled_children_are_the_legal_plays_of_the_roll() -> None:
    positions = sample_positions(80, 11)
    rolls = np.random.default_rng(3).integers(0, 21, size=len(positions))
    kids, counts = rolled_children(positions_to_array(positions), rolls)
    assert counts.shape == (80,) and counts.min() >= 1 and len(kids) == counts.sum()
    i = 0
    for pos, k, n in zip(positions, rolls, counts, strict=True):
        plays = legal_plays(pos, ROLLS[k][0])
        assert n == len(plays)
        assert np.array_equal(kids[i : i + n], positions_to_array([p.position.swap() for p in plays]))
        i += n
    old_kids, old_counts = _old_rolled_children(positions_to_array(positions), rolls)
    assert np.array_equal(kids, old_kids) and np.array_equal(counts, old_counts)


def test_rolled_children_python_fallback_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    positions = positions_to_array(sample_positions(20, 12))
    rolls = np.arange(20) % 21
    fast = rolled_children(positions, rolls)
    monkeypatch.setattr(moves, "_legal_plays_c", None)
    slow = rolled_children(positions, rolls)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])


def test_rolled_children_rejects_bad_input() -> None:
    bad = np.zeros((1, 2, 25), dtype=np.uint8)
    bad[0, 1, 3] = 16
    with pytest.raises(InvalidPositionError):
        rolled_children(bad, np.array([0]))
    good = positions_to_array([Position.initial()])
    with pytest.raises(ValueError):
        rolled_children(good, np.array([21]))
    with pytest.raises(ValueError):
        rolled_children(good, np.array([0, 1]))
    with pytest.raises(InvalidPositionError):
        rolled_children(np.zeros((2, 25)), np.array([0]))


def test_no_vr_rollout_unchanged_by_the_rolled_children(
    analyser: Analyser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same seed, same dice: generating only the rolled dice's children gives the very same rollout."""
    import engine.rollout as ro

    pos, ci = Position.from_id(OPENING), CubeInfo.money()
    settings = RolloutSettings(trials=72, variance_reduction=False, seed=5)
    new = rollout_sums(analyser, pos, ci, settings)
    monkeypatch.setattr(ro, "rolled_children", _old_rolled_children)
    old = rollout_sums(analyser, pos, ci, settings)
    assert np.array_equal(new.probs, old.probs) and new.cubeful == old.cubeful
    assert new.cubeless == old.cubeless and new.cubeful_sq == old.cubeful_sq


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_json_shows_progress_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 28 item 15: with --json there was no progress at all, even on a terminal
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["rollout", OPENING, "--trials", "36", "--truncate", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["trials"] == 36  # stdout holds the JSON alone
    assert "/36 games done" in terminal.getvalue()
    shown = len(terminal.getvalue())
    assert main(["rollout", OPENING, "--trials", "36", "--truncate", "2", "--json", "--quiet"]) == 0
    assert len(terminal.getvalue()) == shown  # --quiet: none
