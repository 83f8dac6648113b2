"""The contact features of engine.features, against counts a backgammon player knows by heart."""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoding import (
    N_CONTACT_INPUTS,
    N_INPUTS,
    N_RACE_INPUTS,
    encode,
    encode_contact,
    encode_race,
    encoder_for,
    positions_to_array,
    race_inputs,
)
from engine.features import FEATURE_NAMES, N_PER_SIDE, escapes_table, features, hit_chance
from engine.moves import legal_plays
from engine.position import Position

# Rolls (of 36) that hit a lone blot this many pips away, nothing in between: the shot table every player learns.
SHOTS = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2}


def _sides(target: dict[int, int], shooter: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    t, s = np.zeros(25, int), np.zeros(25, int)
    for idx, n in target.items():
        t[idx] = n
    for idx, n in shooter.items():
        s[idx] = n
    return t[None], s[None]


@pytest.mark.parametrize("distance", sorted(SHOTS))
def test_direct_and_indirect_shots_match_the_shot_table(distance: int) -> None:
    # The target's blot on its 11-point is the shooter's 14-point (index 13); the rest sit out of the way.
    t, s = _sides({10: 1, 0: 14}, {0: 14, 13 + distance: 1})
    assert hit_chance(t, s)[0] * 36 == pytest.approx(SHOTS[distance])


def test_a_made_point_in_between_blocks_the_combination_shots() -> None:
    # 8 away with the point 4 pips ahead made: 6-2 and 5-3 still hit, 4-4 and 2-2 do not.
    t, s = _sides({10: 1, 6: 2, 0: 12}, {0: 14, 21: 1})
    assert hit_chance(t, s)[0] * 36 == pytest.approx(4)


@pytest.mark.parametrize(
    ("on_bar", "rolls"),
    [
        (
            1,
            14,
        ),  # any 4 (11), 3-1 twice (enter with the 3: the 1-point entry is closed), 2-2; 1-1 cannot enter
        (
            2,
            12,
        ),  # both dice must enter: any 4 (11) and 2-2 (two enter on the 2, then two steps of 2 reach it)
        (4, 11),  # a double enters four chequers and has no steps left: only a 4 hits, entering on it
    ],
)
def test_shots_from_the_bar_must_enter_first(on_bar: int, rolls: int) -> None:
    # The blot is on the target's 4-point, 4 pips in from the bar; the target holds its ace point.
    t, s = _sides({3: 1, 0: 14}, {0: 15 - on_bar, 24: on_bar})
    assert hit_chance(t, s)[0] * 36 == pytest.approx(rolls)


def test_escapes_table() -> None:
    esc = escapes_table()
    assert esc[0] == 36  # nothing in front
    assert esc[0b111111] == 0  # a full prime directly in front
    assert esc[0b1111110] == 0  # a full prime one pip further
    assert esc[0b1] == 35  # only 1-1 stays behind a single point right in front
    assert esc[1 << 11] == 1  # a lone point 12 pips away: only 5-5 passes it (6-6 and 4-4 land on it)
    assert not esc.flags.writeable


def test_initial_position() -> None:
    f = features(positions_to_array([Position.initial()]))[0]
    named = dict(zip(FEATURE_NAMES, f[:N_PER_SIDE], strict=True))
    assert named["hit"] == 0  # no blots
    assert named["escapes"] == 0  # the back chequers are held by the 6-, 8- and mid-points
    assert named["anchor"] == pytest.approx(1.0)  # the 24-point anchor
    assert named["contact"] == pytest.approx(
        1.67
    )  # every pip is still to be moved past the opponent's back men
    assert np.array_equal(f[:N_PER_SIDE], f[N_PER_SIDE:])  # the start is symmetric


def _random_games(seed: int, games: int) -> np.ndarray:
    """Every position of random-move games: blots, bar chequers, primes and bearoffs of every kind."""
    rng = np.random.default_rng(seed)
    boards = []
    for _game in range(games):
        pos = Position.initial()
        while True:
            plays = legal_plays(pos, (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
            pos = plays[int(rng.integers(len(plays)))].position.swap()
            if not any(pos.me) or not any(pos.opp):
                break
            boards.append(pos)
    return positions_to_array(boards)


def test_features_are_each_sides_own() -> None:
    """Swapping the sides swaps the two halves: each half depends on its side's point of view only."""
    b = _random_games(3, 2)
    f, g = features(b), features(b[:, ::-1])
    assert np.array_equal(f[:, :N_PER_SIDE], g[:, N_PER_SIDE:])
    assert np.all((f >= 0) & (f <= 2))


def test_encoder_for_picks_by_width() -> None:
    b = positions_to_array([Position.initial()])
    assert encoder_for(N_INPUTS) is encode
    x = encoder_for(N_CONTACT_INPUTS)(b)
    assert x.shape == (1, N_CONTACT_INPUTS) and x.dtype == np.float32
    assert np.array_equal(x[:, :N_INPUTS], encode(b))
    assert np.array_equal(encode_contact(b)[:, N_INPUTS:], features(b))
    assert encoder_for(N_RACE_INPUTS) is encode_race
    with pytest.raises(KeyError):
        encoder_for(199)


def test_race_inputs_count_chequers_off_and_crossovers() -> None:
    # on roll: 3 off, 2 on the 6-point (home), 5 on the 8-point (2nd quadrant), 5 on the 20-point (4th);
    # opponent: none off, 15 on its 13-point (3rd quadrant)
    pos = Position.from_points({6: 2, 8: 5, 20: 5, 12: -15})
    r = race_inputs(positions_to_array([pos])).reshape(2, 15)
    assert r[0, :14].tolist() == [1.0 if k == 3 else 0.0 for k in range(1, 15)]
    assert r[0, 14] == pytest.approx((5 * 1 + 5 * 3) / 10)
    assert not r[1, :14].any()  # none off: no unit set
    assert r[1, 14] == pytest.approx(15 * 2 / 10)
    x = encode_race(positions_to_array([pos]))
    assert x.shape == (1, N_RACE_INPUTS) and np.array_equal(
        x[:, :N_INPUTS], encode(positions_to_array([pos]))
    )


def test_c_extension_equals_the_numpy_reference() -> None:
    import engine.features as ef

    if ef.IMPLEMENTATION != "c":
        pytest.skip("the C extension is not built (engine/_movegen.c); engine.features uses numpy")
    b = _random_games(11, 12)
    assert len(b) > 500
    assert np.array_equal(ef.features(b), ef.features_numpy(b))
    assert ef.features(b[:0]).shape == (0, 2 * N_PER_SIDE)
    with pytest.raises(ValueError):
        ef.features(np.zeros((1, 2, 24), dtype=np.int8))


def _scattered(seed: int, n: int) -> np.ndarray:
    """Boards of 0-15 chequers a side scattered anywhere (points shared, stacks of 15, all off): not legal, but
    every count the encodings and the classes read, including finished games."""
    rng = np.random.default_rng(seed)
    boards = np.zeros((n, 2, 25), dtype=np.int8)
    for i in range(n):
        for s in (0, 1):
            on = int(rng.choice([0, 1, 2, 15, int(rng.integers(0, 16))]))
            np.add.at(boards[i, s], rng.integers(0, 25, size=on), 1)
    return boards


def test_c_encodings_and_classes_equal_the_numpy_references() -> None:
    import engine.encoding as enc
    import engine.evaluator as ev

    if enc.encode is enc.encode_numpy:
        pytest.skip("the C extension is not built (engine/_movegen.c); engine.encoding uses numpy")
    legal, odd = _random_games(5, 8), _scattered(6, 3000)
    for b in (legal, odd):
        assert np.array_equal(enc.encode(b), enc.encode_numpy(b))  # bit for bit, not approximately
        assert all(np.array_equal(c, p) for c, p in zip(ev.route(b), ev.route_numpy(b), strict=True))
    assert np.array_equal(enc.encode_contact(legal), enc.encode_contact_numpy(legal))
    over, home, contact, crashed = ev.route(odd)
    assert over.any() and home.any() and contact.any() and crashed.any() and (~contact & ~over).any()
    assert enc.encode(legal[:0]).shape == (0, N_INPUTS) and enc.encode_contact(legal[:0]).shape == (0, 226)
    for wrong in (np.zeros((1, 2, 24), dtype=np.int8), np.zeros((2, 50), dtype=np.int8)):
        with pytest.raises(ValueError):
            enc.encode(wrong)
        with pytest.raises(ValueError):
            ev.route(wrong)
