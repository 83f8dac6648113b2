"""The bearoff databases: ranking, move generation, the one- and two-sided tables, the API and the cache."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from engine.bearoff import (
    BearoffDatabase,
    BearoffDataError,
    BearoffRangeError,
    CubefulEquities,
    OneSidedTable,
    TwoSidedTable,
    cache,
    rank,
    unrank,
)
from engine.bearoff import two_sided as two_sided_dp
from engine.bearoff.database import ONE_SIDED_FILE, TWO_SIDED_FILE
from engine.bearoff.moves import ROLLS, roll_successors, step_table
from engine.bearoff.ranking import ONE_SIDED_SIZE, all_sides, rank_array, table_size
from engine.errors import InvalidPositionError
from engine.moves import legal_plays
from engine.position import Position, PositionClass

VECTORS = Path(__file__).parent / "data" / "gnubg_bearoff.jsonl"
N = np.arange(32)
# A lone opposing chequer on its ace point: out of the way of any bear-off of ours, for legal_plays.
FAR_AWAY = [1] + [0] * 24


def side(*counts: int) -> list[int]:
    """25 counts from the counts of points 1, 2, ..."""
    return list(counts) + [0] * (25 - len(counts))


def bearoff(me: list[int], opp: list[int]) -> Position:
    return Position(side(*me), side(*opp))


@pytest.fixture(scope="module")
def db() -> BearoffDatabase:
    return BearoffDatabase.generate()


@pytest.fixture(scope="module")
def sides() -> np.ndarray:
    return all_sides()


# -- ranking ----------------------------------------------------------------------------------------------


def test_ranking_is_a_bijection_in_nested_order(sides: np.ndarray) -> None:
    assert sides.shape == (54_264, 6) == (ONE_SIDED_SIZE, 6)
    assert np.array_equal(rank_array(sides), np.arange(ONE_SIDED_SIZE))
    assert len({tuple(r) for r in sides}) == ONE_SIDED_SIZE
    totals = sides.sum(axis=1)
    for n in range(16):  # the sides of at most n chequers are exactly the first C(n + 6, 6) ranks
        assert (totals[: table_size(n)] <= n).all() and (totals[table_size(n) :] > n).all()
    assert table_size(6) == 924


def test_rank_and_unrank_known_values() -> None:
    assert rank(side()) == 0
    assert rank(side(1)) == 1  # gnubg's PositionBearoff order: the ace point first
    assert rank(side(0, 0, 0, 0, 0, 1)) == 6
    assert rank(side(0, 0, 0, 0, 0, 15)) == ONE_SIDED_SIZE - 1
    for i in (0, 1, 923, 924, 12_345, ONE_SIDED_SIZE - 1):
        assert rank(unrank(i)) == i
    assert rank([2, 0, 1, 0, 0, 3]) == rank(side(2, 0, 1, 0, 0, 3))


@pytest.mark.parametrize(
    "bad",
    [side(0, 0, 0, 0, 0, 0, 1), side(16), side(1, -1), [1, 2, 3], "abcdef", [*side(1)[:24], 1]],
)
def test_rank_rejects_non_bearoff_sides(bad: object) -> None:
    with pytest.raises(BearoffRangeError):
        rank(bad)  # type: ignore[arg-type]
    assert issubclass(BearoffRangeError, InvalidPositionError)


@pytest.mark.parametrize("bad", [-1, ONE_SIDED_SIZE, 1.5, "3"])
def test_unrank_rejects_bad_indices(bad: object) -> None:
    with pytest.raises(BearoffRangeError):
        unrank(bad)  # type: ignore[arg-type]


# -- the bear-off move generator --------------------------------------------------------------------------


def test_roll_successors_match_the_general_move_generator(sides: np.ndarray) -> None:
    step = step_table(sides)
    rng = random.Random(5)
    picks = [rng.randrange(1, ONE_SIDED_SIZE) for _ in range(25)] + [1, 6, 923, ONE_SIDED_SIZE - 1]
    for roll in ROLLS:
        ours = roll_successors(step, roll, np.array(picks))
        for i, found in zip(picks, ours, strict=True):
            pos = Position(side(*unrank(i)), FAR_AWAY)
            theirs = {rank(p.position.me) for p in legal_plays(pos, roll)}
            assert set(found.tolist()) == theirs, (unrank(i), roll)


# -- one-sided table --------------------------------------------------------------------------------------


def test_one_sided_hand_checked_distributions(db: BearoffDatabase) -> None:
    table = db.one_sided
    assert table.distribution(side(1))[1] == pytest.approx(1.0)
    assert table.distribution(side(0, 1))[1] == pytest.approx(1.0)
    # One on the 6-point: off at once unless the dice total less than 6 without a 6 (11, 21, 31, 41, 32).
    assert table.distribution(side(0, 0, 0, 0, 0, 1))[1:3] == pytest.approx([27 / 36, 9 / 36])
    # Two on the 6-point in one roll: 33, 44, 55, 66.
    assert table.distribution(side(0, 0, 0, 0, 0, 2))[1] == pytest.approx(4 / 36)
    # Three or four on the ace point: one roll with a double, else two.
    for n in (3, 4):
        assert table.distribution(side(n))[1:3] == pytest.approx([6 / 36, 30 / 36])
    assert table.expected_rolls(side(4)) == pytest.approx(1 + 30 / 36)
    assert table.expected_rolls(side()) == 0.0
    # A side with a chequer off has saved the gammon; all 15 on the ace point get one off with the first roll.
    assert table.gammon_distribution(side(14))[0] == 1.0
    assert table.gammon_distribution(side(15))[1] == pytest.approx(1.0)
    assert table.gammon_distribution(side(0, 0, 0, 0, 0, 15))[0] == 0.0


def test_one_sided_distributions_are_probabilities(db: BearoffDatabase) -> None:
    for table in (db.one_sided.rolls, db.one_sided.gammon_rolls):
        assert (table >= 0).all()
        assert np.abs(table.sum(axis=1) - 1).max() < 1e-12
        assert (table[:, 31] == 0).all()  # 30 rolls at most: the 32 slots lose nothing
    assert db.one_sided.rolls[1:, 0].max() == 0  # a side with chequers needs at least one roll


def test_one_sided_an_extra_chequer_never_helps(db: BearoffDatabase, sides: np.ndarray) -> None:
    mean = db.one_sided.rolls @ N
    rows = np.flatnonzero(sides.sum(axis=1) < 15)
    for p in range(6):
        bigger = sides[rows].copy()
        bigger[:, p] += 1
        assert (mean[rank_array(bigger)] >= mean[rows] - 1e-12).all()
    # Not so for moving a chequer up: 7-1-6 on points 1-2-3 bears off faster than 8-0-6 (a 2 bears off).
    assert db.expected_rolls([7, 1, 6, 0, 0, 0]) < db.expected_rolls([8, 0, 6, 0, 0, 0]) - 0.3


def test_one_sided_play_is_optimal_for_the_mean(db: BearoffDatabase) -> None:
    """Bellman check against the general move generator: E = 1 + mean over rolls of the best play's E."""
    mean, first_off = db.one_sided.rolls @ N, db.one_sided.gammon_rolls @ N
    rng = random.Random(11)
    for _ in range(40):
        i = rng.randrange(1, ONE_SIDED_SIZE)
        pos = Position(side(*unrank(i)), FAR_AWAY)
        best_all = best_first = 0.0
        for a in range(1, 7):
            for b in range(1, 7):
                after = [rank(p.position.me) for p in legal_plays(pos, (a, b))]
                best_all += min(mean[after]) / 36
                best_first += min(first_off[after]) / 36
        assert mean[i] == pytest.approx(1 + best_all, abs=1e-12)
        if sum(unrank(i)) == 15:
            assert first_off[i] == pytest.approx(1 + best_first, abs=1e-12)


# -- two-sided table --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_two_sided() -> np.ndarray:
    return two_sided_dp.generate(chequers=3)


def test_two_sided_small_table_is_the_corner_of_the_full_one(
    db: BearoffDatabase, small_two_sided: np.ndarray
) -> None:
    assert db.two_sided is not None
    n = table_size(3)
    assert np.abs(db.two_sided.table[:n, :n] - small_two_sided).max() < 1e-6


def test_two_sided_is_optimal_against_the_general_move_generator(small_two_sided: np.ndarray) -> None:
    """Bellman check of P(win) and the three no-double equities with legal_plays, on random pairs."""
    t = small_two_sided
    n = len(t)
    win, centred, owned, opp_owns = (t[..., k] for k in range(4))

    def after_cube(x: int, y: int) -> np.ndarray:
        double = min(1.0, 2 * opp_owns[x, y])
        return np.array([win[x, y], max(centred[x, y], double), max(owned[x, y], double), opp_owns[x, y]])

    rng = random.Random(3)
    for _ in range(30):
        x, y = rng.randrange(1, n), rng.randrange(1, n)
        pos = Position(side(*unrank(x)), side(*unrank(y)))
        expect = np.zeros(4)
        for a in range(1, 7):
            for b in range(1, 7):
                nexts = [rank(p.position.me) for p in legal_plays(pos, (a, b))]
                theirs = np.array([after_cube(y, x2) for x2 in nexts])  # opponent on roll at [y, x']
                expect[0] += max(1 - theirs[:, 0]) / 36
                expect[1] += max(-theirs[:, 1]) / 36  # centred stays centred
                expect[2] += max(-theirs[:, 3]) / 36  # I own it: they see it owned by the other side
                expect[3] += max(-theirs[:, 2]) / 36  # they own it
        assert t[x, y] == pytest.approx(expect, abs=1e-12)


def test_two_sided_values_are_consistent(db: BearoffDatabase) -> None:
    assert db.two_sided is not None
    t = db.two_sided.table[1:, 1:].astype(np.float64)
    win, centred, owned, opp_owns = (t[..., k] for k in range(4))
    cubeless = 2 * win - 1
    eps = 1e-6
    assert (win >= 0).all() and (win <= 1).all()
    assert (np.abs(t[..., 1:]) <= 1 + eps).all()
    # Holding the cube is an option, worth something to its holder and never a loss.
    assert (owned >= centred - eps).all() and (centred >= opp_owns - eps).all()
    assert (owned >= cubeless - eps).all() and (opp_owns <= cubeless + eps).all()


def test_two_sided_last_roll_position(db: BearoffDatabase) -> None:
    # One chequer on my 6-point, theirs on their ace point: I win 27/36 now, else they are off.
    eq = db.cubeful_equities(bearoff([0, 0, 0, 0, 0, 1], [1]))
    assert eq == CubefulEquities(cubeless=0.5, centred=0.5, owned=0.5, opponent_owns=0.5)
    assert eval(repr(eq)) == eq
    assert (eq.double_take, eq.double_pass, eq.centred_optimal, eq.owned_optimal) == (1.0, 1.0, 1.0, 1.0)
    assert db.evaluate([bearoff([0, 0, 0, 0, 0, 1], [1])])[0] == pytest.approx([0.75, 0, 0, 0, 0])
    # Whoever is on roll with a chequer on the ace point has won.
    assert db.cubeful_equities(bearoff([1], [0, 0, 3, 3])).centred == pytest.approx(1.0)


# -- the API ----------------------------------------------------------------------------------------------


def test_applies_to_both_bearoff_classes_only(db: BearoffDatabase) -> None:
    yes = [bearoff([1], [1]), bearoff([0, 0, 0, 0, 0, 15], [15]), bearoff([3, 3, 3], [0, 0, 0, 0, 7])]
    assert all(db.applies(p) for p in yes)
    assert [p.classify() for p in yes] == [
        PositionClass.BEAROFF2,
        PositionClass.BEAROFF1,
        PositionClass.BEAROFF1,
    ]
    no = [
        Position.initial(),
        bearoff([0, 0, 0, 0, 0, 0, 1], [1]),  # a chequer on the 7-point
        bearoff([1], [0, 0, 0, 0, 0, 0, 1]),  # theirs on their 7-point
        Position(side(), side(1)),  # game over
        Position([*side(1)[:24], 1], side(1)),  # on the bar
    ]
    assert not any(db.applies(p) for p in no)
    for p in no:
        with pytest.raises(BearoffRangeError):
            db.evaluate([p])
    assert db.evaluate([]).shape == (0, 5)


def test_evaluate_outputs_are_coherent(db: BearoffDatabase) -> None:
    rng = random.Random(8)
    positions = []
    while len(positions) < 300:
        me = side(*[rng.randint(0, 4) for _ in range(6)])
        opp = side(*[rng.randint(0, 4) for _ in range(6)])
        if 0 < sum(me) <= 15 and 0 < sum(opp) <= 15:
            positions.append(Position(me, opp))
    out = db.evaluate(positions)
    assert out.shape == (300, 5) and out.dtype == np.float64
    assert (out >= 0).all() and (out[:, 0] <= 1).all()
    assert (out[:, 1] <= out[:, 0] + 1e-12).all() and (out[:, 3] <= 1 - out[:, 0] + 1e-12).all()
    assert (out[:, [2, 4]] == 0).all()  # no backgammon in a bear-off
    on_board = np.array([[sum(p.me), sum(p.opp)] for p in positions])
    assert (out[on_board[:, 1] < 15, 1] == 0).all() and (out[on_board[:, 0] < 15, 3] == 0).all()
    # Same answers one by one as in a batch.
    for i in (0, 7, 99):
        assert np.array_equal(db.evaluate([positions[i]])[0], out[i])


def test_one_sided_race_formula_on_a_hand_case(db: BearoffDatabase) -> None:
    # Me: one on the 6-point (off in 1 roll 3/4, else 2). Them: two on the ace point (1 roll). I win 3/4.
    one = db.one_sided.probabilities(np.array([rank(side(0, 0, 0, 0, 0, 1))]), np.array([rank(side(2))]))
    assert one[0] == pytest.approx([0.75, 0, 0, 0, 0])
    # All 15 on their ace point: they need 4 rolls or more, and get a chequer off with their first roll, so
    # I win for sure, and a gammon if I am off with my first roll.
    pos = bearoff([0, 0, 0, 0, 0, 1], [15])
    assert pos.classify() == PositionClass.BEAROFF1
    assert db.evaluate([pos])[0] == pytest.approx([1, 0.75, 0, 0, 0])
    # Turned round, the side with 15 rolls first and gets a chequer off at once: no gammon.
    assert db.evaluate([pos.swap()])[0] == pytest.approx([0, 0, 0, 0, 0])
    # 15 against 15 on the 6-points: being on roll is worth something, gammons are next to impossible.
    p = db.evaluate([bearoff([0, 0, 0, 0, 0, 15], [0, 0, 0, 0, 0, 15])])[0]
    assert 0.55 < p[0] < 0.65 and p[1] < 1e-6 and p[3] < 1e-6


def test_matches_gnubg_vectors(db: BearoffDatabase) -> None:
    rows = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]
    assert len(rows) >= 100
    positions = [Position.from_id(r["position_id"]) for r in rows]
    assert [p.classify().name for p in positions] == [r["class"] for r in rows]
    diff = np.abs(db.evaluate(positions) - np.array([r["gnubg"] for r in rows]))
    classes = np.array([r["class"] for r in rows])
    # gnubg stores 16-bit values (and rounds as it builds): 1e-4 is its resolution, not ours.
    assert diff[classes == "BEAROFF2"].max() < 1e-4
    assert diff[classes == "BEAROFF1"].max() < 1e-4
    assert (classes == "BEAROFF1").sum() >= 40 and (classes == "BEAROFF2").sum() >= 40


def test_cubeful_and_expected_rolls_errors(db: BearoffDatabase) -> None:
    with pytest.raises(BearoffRangeError):
        db.cubeful_equities(bearoff([7], [1]))  # 7 chequers: one-sided only
    with pytest.raises(BearoffRangeError):
        db.cubeful_equities(Position.initial())
    no_two_sided = BearoffDatabase(db.one_sided)
    with pytest.raises(BearoffRangeError):
        no_two_sided.cubeful_equities(bearoff([1], [1]))
    assert not no_two_sided.is_two_sided(bearoff([1], [1])) and db.is_two_sided(bearoff([1], [1]))
    # Without the two-sided table, small bearoffs fall back on the one-sided tables.
    pos = bearoff([0, 0, 3], [0, 2, 1])
    assert abs(no_two_sided.evaluate([pos])[0, 0] - db.evaluate([pos])[0, 0]) < 0.02
    pos = Position.from_points({3: 2, 1: 1, 24: -3})
    assert db.expected_rolls(pos.me) == db.expected_rolls([1, 0, 2, 0, 0, 0])
    with pytest.raises(BearoffRangeError):
        db.expected_rolls(side(0, 0, 0, 0, 0, 0, 1))


@pytest.mark.skipif(not Path("/var/lib/gnubg/gnubg_ts0.bd").exists(), reason="gnubg's two-sided file absent")
def test_two_sided_table_matches_gnubg_file(db: BearoffDatabase) -> None:
    from bench.bearoff_gnubg import in_gnubg_columns, read_gnubg_two_sided

    assert db.two_sided is not None
    diff = np.abs(in_gnubg_columns(db.two_sided.table) - read_gnubg_two_sided())[1:, 1:]
    assert diff.max() < 2e-4  # 16-bit storage plus gnubg's integer rounding during generation


@pytest.mark.skipif(
    not Path("/usr/share/gnubg/gnubg_os0.bd").exists(), reason="gnubg's one-sided file absent"
)
def test_one_sided_table_matches_gnubg_file(db: BearoffDatabase) -> None:
    from bench.bearoff_gnubg import read_gnubg_one_sided

    rolls, first_off = read_gnubg_one_sided()
    assert np.abs(db.one_sided.rolls @ N - rolls @ N).max() < 5e-4
    assert np.abs(db.one_sided.gammon_rolls - first_off).max() < 1e-4
    # Distributions agree to gnubg's 16 bits except where two plays tie on the mean (a handful of sides).
    assert (np.abs(db.one_sided.rolls - rolls).max(axis=1) > 1e-3).sum() < 20


# -- the cache --------------------------------------------------------------------------------------------


def _reuse_fixture_tables(db: BearoffDatabase, monkeypatch: pytest.MonkeyPatch, made: list[str]) -> None:
    """Make "generating" a table hand out a copy of the fixture's (the real thing takes seconds)."""
    assert db.two_sided is not None
    one, two = db.one_sided, db.two_sided

    def one_sided() -> OneSidedTable:
        made.append("one")
        return OneSidedTable(one.rolls.copy(), one.gammon_rolls.copy())

    def two_sided() -> TwoSidedTable:
        made.append("two")
        return TwoSidedTable(two.table.copy())

    monkeypatch.setattr(OneSidedTable, "generate", staticmethod(one_sided))
    monkeypatch.setattr(TwoSidedTable, "generate", staticmethod(two_sided))


def test_cache_round_trip_and_regeneration(
    db: BearoffDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert db.two_sided is not None
    made: list[str] = []
    _reuse_fixture_tables(db, monkeypatch, made)
    first = BearoffDatabase.load(tmp_path)
    assert first.sources == {"one_sided": "generated", "two_sided": "generated"}
    assert made == ["one", "two"]
    assert {p.name for p in tmp_path.iterdir()} == {ONE_SIDED_FILE, TWO_SIDED_FILE}
    again = BearoffDatabase.load(tmp_path)
    assert again.sources == {
        "one_sided": str(tmp_path / ONE_SIDED_FILE),
        "two_sided": str(tmp_path / TWO_SIDED_FILE),
    }
    assert made == ["one", "two"]
    assert np.array_equal(again.one_sided.rolls, db.one_sided.rolls)
    assert np.array_equal(again.one_sided.gammon_rolls, db.one_sided.gammon_rolls)
    assert np.array_equal(again.two_sided.table, db.two_sided.table)  # type: ignore[union-attr]
    assert not again.one_sided.rolls.flags.writeable

    # A damaged file is rebuilt, not trusted and not fatal.
    path = tmp_path / ONE_SIDED_FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\x00" * 64
    path.write_bytes(bytes(data))
    rebuilt = BearoffDatabase.load(tmp_path, two_sided=False)
    assert rebuilt.sources == {"one_sided": "generated"} and rebuilt.two_sided is None
    assert made == ["one", "two", "one"]
    assert BearoffDatabase.load(tmp_path, two_sided=False).sources["one_sided"] == str(path)


def test_cache_read_rejects_stale_or_tampered_files(tmp_path: Path) -> None:
    arrays = {"a": np.arange(6.0).reshape(2, 3)}
    spec = {"a": ((2, 3), "<f8")}
    path = tmp_path / "t.npz"
    assert cache.write(path, "key 1", arrays)
    assert np.array_equal(cache.read(path, "key 1", spec)["a"], arrays["a"])  # type: ignore[index]
    assert cache.read(path, "key 2", spec) is None
    assert cache.read(path, "key 1", {"a": ((3, 2), "<f8")}) is None
    assert cache.read(path, "key 1", {"a": ((2, 3), "<f4")}) is None
    assert cache.read(tmp_path / "missing.npz", "key 1", spec) is None
    np.savez(path, key=np.array("key 1"), digest=np.array(cache.digest(arrays)), a=arrays["a"] + 1)
    assert cache.read(path, "key 1", spec) is None
    path.write_bytes(b"not a zip file")
    assert cache.read(path, "key 1", spec) is None
    # An unwritable place is reported, not raised.
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert not cache.write(blocker / "sub" / "t.npz", "key 1", arrays)


def test_cache_write_failure_is_not_fatal(
    db: BearoffDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reuse_fixture_tables(db, monkeypatch, [])
    blocker = tmp_path / "file"
    blocker.write_text("x")
    loaded = BearoffDatabase.load(blocker / "cache")
    assert loaded.sources == {"one_sided": "generated", "two_sided": "generated"}
    assert loaded.evaluate([bearoff([1], [1])])[0, 0] == 1.0


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GAMMOND_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache.default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("GAMMOND_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_cache_dir() == tmp_path / "xdg" / "gammond"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.default_cache_dir() == Path.home() / ".cache" / "gammond"


def test_tables_reject_wrong_shapes() -> None:
    with pytest.raises(BearoffDataError):
        OneSidedTable(np.zeros((10, 32)), np.zeros((10, 32)))
    with pytest.raises(BearoffDataError):
        TwoSidedTable(np.zeros((924, 924, 4)))  # float64: the table is float32
