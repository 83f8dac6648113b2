"""bench.levels: the pure pieces (level lists, duplicate-dice pairing, random noise, the summary)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.levels import (
    GNUBG_PPG,
    PairOutcome,
    duplicate_pair,
    format_table,
    level_summary,
    main,
    noise_rng,
    pair_value,
    parse_levels,
    play_duel,
    random_noise,
)
from bench.strength import dice_sequence
from engine.levels import LEVELS, LevelError
from engine.moves import legal_plays
from engine.position import Position


def first_play(pos: Position, dice: tuple[int, int]) -> Position:
    return legal_plays(pos, dice)[0].position


def last_play(pos: Position, dice: tuple[int, int]) -> Position:
    return legal_plays(pos, dice)[-1].position


def test_parse_levels_names_and_options() -> None:
    levels = parse_levels("beginner, advanced")
    assert [lv.name for lv in levels] == ["beginner", "advanced"]
    assert levels[0].chequer_noise == pytest.approx(0.06)
    explicit = parse_levels("beginner;expert,noise=0.02")
    assert explicit[1].chequer_noise == pytest.approx(0.02) and explicit[1].name == "expert,noise=0.02"


@pytest.mark.parametrize("text", ["", " , ", "beginner,novice", "advanced,advanced"])
def test_parse_levels_rejects(text: str) -> None:
    with pytest.raises(LevelError):
        parse_levels(text)


def test_play_duel_sees_every_turn_and_scores_the_winner() -> None:
    seen: list[tuple[Position, int]] = []
    points = play_duel(dice_sequence(7), (first_play, last_play), on_turn=lambda p, s: seen.append((p, s)))
    assert points in (-3, -2, -1, 1, 2, 3)
    assert seen[0] == (Position.initial(), 0)
    assert [s for _, s in seen[:4]] == [0, 1, 0, 1]
    # The last mover is the winner: seat 0 won exactly when seat 0 made the last move.
    assert (points > 0) == (seen[-1][1] == 0)


def test_duplicate_pair_cancels_identical_players() -> None:
    for seed in range(3):
        a, b = duplicate_pair(dice_sequence(seed), lambda game: first_play, first_play)
        assert a == -b and pair_value((a, b)) == 0.0


def test_duplicate_pair_gives_each_game_its_own_level_chooser() -> None:
    games: list[int] = []

    def level(game: int):  # type: ignore[no-untyped-def]
        games.append(game)
        return last_play

    a, b = duplicate_pair(dice_sequence(3), level, first_play)
    assert games == [0, 1]
    assert a == play_duel(dice_sequence(3), (last_play, first_play))
    assert b == -play_duel(dice_sequence(3), (first_play, last_play))
    assert pair_value((a, b)) == (a + b) / 2


def test_random_noise_differs_between_games_and_repeats_with_the_seed() -> None:
    level = random_noise(LEVELS["beginner"])
    assert not level.deterministic and level.chequer_noise == LEVELS["beginner"].chequer_noise
    pos = Position.initial()

    def draws(game: int) -> np.ndarray:
        noise = level.chequer_perturber(noise_rng(1, level.name, 5, game))
        assert noise is not None
        return np.array([noise.normals(pos) for _ in range(3)])

    assert np.array_equal(draws(0), draws(0))  # reproducible
    assert not np.allclose(draws(0), draws(1))  # the two seats' noise differs
    assert not np.allclose(draws(0)[0], draws(0)[1])  # fresh draws at the same position
    hashed = LEVELS["beginner"].chequer_perturber()
    assert hashed is not None and np.array_equal(hashed.normals(pos), hashed.normals(pos))


def outcome(pair: int, points: tuple[int, int]) -> PairOutcome:
    return PairOutcome("beginner", pair, points, 10, 0.01, 10, 0.01, 0.5)


def test_level_summary_and_table() -> None:
    outs = [outcome(0, (-2, 1)), outcome(1, (-1, -1)), outcome(2, (1, -3)), outcome(3, (0, 0))]
    row = level_summary(LEVELS["beginner"], outs, seed=4)
    values = [-0.5, -1.0, -1.0, 0.0]
    assert row["pairs"] == 4 and row["games"] == 8
    assert row["ppg"] == pytest.approx(np.mean(values))
    assert row["ci95"] == pytest.approx(1.96 * np.std(values, ddof=1) / math.sqrt(4), abs=1e-4)
    assert row["seat0_ppg"] == pytest.approx(-0.5) and row["seat1_ppg"] == pytest.approx(-0.75)
    assert row["gnubg_ppg"] == GNUBG_PPG["beginner"] and row["ms_per_move"] == pytest.approx(1.0)
    table = format_table([row])
    assert "beginner" in table and "-0.89" in table and "-0.625" in table


@pytest.mark.parametrize("argv", [["--games", "1"], ["--workers", "0"], ["--levels", "novice"]])
def test_main_rejects_bad_options(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
