"""n-ply search, move filters, levels and noise, on a small deterministic evaluator (no model file needed)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.evaluator import invert, money_equity, terminal_probs
from engine.levels import LEVELS, Level, LevelError, Noise, parse_level
from engine.moves import legal_plays
from engine.position import Position
from engine.search import FILTERS, ROLLS, MoveFilter, Search, apply_filter, best_first, first_best


class PipEvaluator:
    """P(win) from the pip difference, a few gammons when far ahead: cheap, smooth and deterministic."""

    calls = 0

    def evaluate(self, positions):  # type: ignore[no-untyped-def]
        self.calls += 1
        out = np.zeros((len(positions), 5))
        for i, pos in enumerate(positions):
            if pos.is_over():
                out[i] = terminal_probs(pos)
                continue
            me, opp = pos.pips()
            w = 1.0 / (1.0 + np.exp(-(opp - me + 8) / 15.0))
            out[i] = (w, 0.2 * w * w, 0.0, 0.2 * (1 - w) ** 2, 0.0)
        return out


def race(points: dict[int, int]) -> Position:
    return Position.from_points(points)


def test_rolls_cover_all_36() -> None:
    assert len(ROLLS) == 21
    assert sum(w for _, w in ROLLS) == 36


def test_zero_ply_prefers_the_hit() -> None:
    # 6-1: 7/1* hits the blot on my ace point; the pip evaluator must rank it first.
    pos = Position.from_points({13: 5, 8: 3, 7: 1, 6: 5, 1: -1, 24: 1, 12: -5, 17: -3, 19: -5, 18: -1})
    ranked = Search(PipEvaluator()).rank(pos, (6, 1), plies=0)
    assert ranked[0].play.position.opp[24] == 1  # the opponent's chequer is on the bar
    assert ranked == sorted(ranked, key=lambda r: -r.equity)


def test_one_ply_is_the_average_over_rolls_of_the_best_reply() -> None:
    ev = PipEvaluator()
    pos = Position.from_points({6: 2, 5: 2, 20: 1, 19: -3, 3: -2})
    got = Search(ev).evaluate([pos], plies=1)[0]
    expected = np.zeros(5)
    for dice, weight in ROLLS:
        after = [p.position.swap() for p in legal_plays(pos, dice)]
        opp_view = ev.evaluate(after)
        best = int(np.argmax(money_equity(invert(opp_view))))
        expected += weight / 36.0 * invert(opp_view[best : best + 1])[0]
    assert np.allclose(got, expected, atol=1e-12)


def test_finished_positions_are_not_searched() -> None:
    ev = PipEvaluator()
    done = Position([0] * 25, Position.initial().opp)
    probs = Search(ev).evaluate([done], plies=2)[0]
    assert probs[0] == 1.0 and probs[1] == 1.0  # won a gammon: the loser has borne off nothing


def test_deeper_search_ranks_survivors_first_and_respects_the_filter() -> None:
    ev = PipEvaluator()
    pos = Position.initial()
    ranked = Search(ev).rank(pos, (4, 3), plies=1, move_filter="tiny")
    deep = [r for r in ranked if r.plies == 1]
    assert 1 <= len(deep) <= 5  # tiny keeps up to 5 moves within 0.08 of the best
    assert all(r.plies == 1 for r in ranked[: len(deep)])
    assert all(r.plies == 0 for r in ranked[len(deep) :])


def test_apply_filter_keeps_best_and_extras_within_threshold() -> None:
    eq = np.array([0.10, 0.50, 0.45, 0.20, 0.30, 0.49])
    kept = apply_filter(eq, MoveFilter(0, 2, 0.06))
    assert list(kept) == [1, 5]  # up to accept + extra = 2 moves in all
    assert list(apply_filter(eq, MoveFilter(2, 0, 0.0))) == [1, 5]
    assert len(apply_filter(eq, MoveFilter(-1))) == len(eq)


def test_filter_presets_match_gnubg() -> None:
    assert FILTERS["normal"][2] == (MoveFilter(0, 8, 0.16), MoveFilter(-1))
    assert FILTERS["large"][2][0] == MoveFilter(0, 16, 0.32)


def test_named_levels_are_gnubgs() -> None:
    assert LEVELS["beginner"].chequer_noise == 0.060
    assert LEVELS["intermediate"].cube_noise == 0.040
    assert LEVELS["expert"].plies == 0 and LEVELS["expert"].chequer_noise == 0
    assert LEVELS["worldclass"].plies == 2 and LEVELS["worldclass"].move_filter == "normal"
    assert parse_level("World Class") == LEVELS["worldclass"]
    explicit = parse_level("plies=1,noise=0.02,filter=large")
    assert (explicit.plies, explicit.chequer_noise, explicit.cube_noise, explicit.move_filter) == (
        1,
        0.02,
        0.02,
        "large",
    )
    assert parse_level("expert,cube_noise=0.01").cube_noise == 0.01


@pytest.mark.parametrize("bad", ["", "godlike", "plies=9", "noise=-1", "plies=x", "filter=huge", "what"])
def test_bad_levels_are_typed_errors(bad: str) -> None:
    with pytest.raises(LevelError):
        parse_level(bad)


def _sample_positions(n: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    out = []
    pos = Position.initial()
    while len(out) < n:
        plays = legal_plays(pos, (rng.randint(1, 6), rng.randint(1, 6)))
        nxt = rng.choice(plays).position
        if nxt.is_over():
            pos = Position.initial()
            continue
        pos = nxt.swap()
        out.append(pos)
    return out


def test_deterministic_noise_is_repeatable_and_unbiased() -> None:
    positions = _sample_positions(2000, 3)
    noise = Noise(1.0, deterministic=True, seed=5)
    z = np.array([noise.normals(p) for p in positions])
    assert np.array_equal(z[:10], np.array([noise.normals(p) for p in positions[:10]]))
    assert abs(z.mean()) < 0.05  # unbiased, unlike gnubg 1.07's signed byte sum
    assert 0.9 < z.std() < 1.1
    other = Noise(1.0, deterministic=True, seed=6)
    assert not np.array_equal(z[0], other.normals(positions[0]))


def test_noise_scales_gammons_and_backgammons_down() -> None:
    positions = _sample_positions(500, 4)
    base = np.tile(np.array([0.5, 0.2, 0.05, 0.2, 0.05]), (len(positions), 1))
    noisy = Noise(0.04, deterministic=True)(positions, base)
    delta = np.abs(noisy - base).mean(axis=0)
    assert delta[0] > 3 * delta[1] > 3 * 3 * delta[2] > 0


def test_same_seed_same_choice_and_zero_noise_is_noiseless() -> None:
    search = Search(PipEvaluator())
    positions = _sample_positions(40, 8)
    rng = random.Random(1)
    for pos in positions:
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        plain = search.rank(pos, dice)[0].play
        assert (
            search.rank(pos, dice, perturb=Level("z", chequer_noise=0.0).chequer_perturber())[0].play == plain
        )
        lv = Level("noisy", chequer_noise=0.06, seed=3)
        a = search.rank(pos, dice, perturb=lv.chequer_perturber())[0].play
        b = search.rank(pos, dice, perturb=lv.chequer_perturber())[0].play
        assert a == b


def test_best_per_run_keeps_the_k_best_of_each_run_in_order() -> None:
    from engine.search import best_per_run

    values = np.array([0.1, 0.9, 0.5, 0.7, 3.0, 1.0, 1.0, 1.0, 0.0])
    # runs: [0.1 0.9 0.5 0.7] [3.0] [1.0 1.0 1.0 0.0]
    assert list(best_per_run(values, np.array([4, 1, 4]), 2)) == [1, 3, 4, 5, 6]


def test_prune_counts_follow_gnubgs_rule() -> None:
    from engine.search import prune_counts

    # gnubg keeps MIN_PRUNE_MOVES (5) + floor(log2(legal plays)), never more than there are.
    sizes = np.array([1, 5, 7, 8, 9, 15, 16, 31, 32, 100, 1000])
    assert prune_counts(sizes).tolist() == [1, 5, 7, 8, 8, 8, 9, 9, 10, 11, 14]
    assert prune_counts(sizes, 2).tolist() == [1, 4, 4, 5, 5, 5, 6, 6, 7, 8, 11]


def test_best_per_run_with_a_count_per_run() -> None:
    from engine.search import best_per_run

    values = np.array([0.1, 0.9, 0.5, 0.7, 3.0, 1.0, 1.0, 1.0, 0.0])
    assert list(best_per_run(values, np.array([4, 1, 4]), np.array([3, 1, 1]))) == [1, 2, 3, 4, 5]


def test_best_per_run_matches_a_plain_sort_per_run() -> None:
    from engine.search import best_per_run

    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 40, size=300)
    # Equities as a pruner gives them, with exact ties (rounded) and one NaN case for the fallback sort.
    values = np.round(rng.uniform(-3.0, 3.0, size=int(sizes.sum())), 2)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))

    def plain(vals: np.ndarray, k: int) -> list[int]:
        out: list[int] = []
        for a, n in zip(starts, sizes, strict=True):
            run = sorted(range(a, a + n), key=lambda i: (-vals[i] if np.isfinite(vals[i]) else np.inf, i))
            out.extend(sorted(run[:k]))
        return out

    for k in (1, 5, 8):
        assert best_per_run(values, sizes, k).tolist() == plain(values, k)
    with_nan = values.copy()
    with_nan[3] = np.nan
    assert best_per_run(with_nan, sizes, 5).tolist() == plain(with_nan, 5)


def test_a_pruner_that_agrees_with_the_evaluator_changes_nothing() -> None:
    ev = PipEvaluator()
    positions = _sample_positions(6, 11)
    plain = Search(ev).evaluate(positions, plies=2)
    pruned_search = Search(ev, pruner=PipEvaluator())
    assert np.array_equal(pruned_search.evaluate(positions, plies=2), plain)

    # a pruner that ranks backwards keeps the worst moves only: the result must differ
    class Backwards(PipEvaluator):
        def evaluate(self, positions):  # type: ignore[no-untyped-def]
            return invert(super().evaluate(positions))

    assert not np.array_equal(Search(ev, pruner=Backwards()).evaluate(positions, plies=2), plain)


class LostEvaluator:
    """The opponent (on roll after our move) wins 90% whatever we play, so he doubles and we must pass after
    every move; his gammons grow as our back chequers leave (an odd evaluator: so that the move listed first
    is not the best), and the moves differ only in cubeless equity."""

    def evaluate(self, positions):  # type: ignore[no-untyped-def]
        out = np.zeros((len(positions), 5))
        for i, pos in enumerate(positions):
            back = pos.opp[23]  # the mover's chequers on his 24-point (he is not on roll here)
            out[i] = (0.85, 0.06 - 0.02 * back, 0.0, 0.02, 0.0)
        return out


def test_best_first_breaks_ties_by_the_secondary_key() -> None:
    from engine.search import best_first

    eq = np.array([-1.0, 0.2, -1.0, 0.2, -1.0])
    second = np.array([-0.3, -0.5, -0.1, -0.2, -0.1])
    assert list(best_first(eq, second)) == [3, 1, 2, 4, 0]
    assert list(best_first(eq)) == [1, 3, 0, 2, 4]  # no secondary key: stable order
    assert list(apply_filter(eq, MoveFilter(1, 1, 0.0), second)) == [3, 1]


def test_cubeful_ties_are_ranked_by_cubeless_equity_as_gnubg_does() -> None:
    # After every move the opponent has a double/pass: every cubeful equity is exactly -1. gnubg then sorts by
    # the cubeless equity; ranking in generation order played the first listed move instead (issue 13's
    # cubeful ranking loss in cubeless duels).
    from engine.cube import CubeInfo

    pos = Position.initial()
    search = Search(LostEvaluator())
    ci = CubeInfo.money(jacoby=False, beavers=False)
    cubeful = search.rank(pos, (6, 5), 0, cube=ci)
    cubeless = search.rank(pos, (6, 5), 0)
    assert {r.equity for r in cubeful} == {-1.0}
    assert cubeful[0].play == cubeless[0].play
    assert [r.play for r in cubeful] == [r.play for r in cubeless]
    assert cubeful[0].cubeless == pytest.approx(cubeless[0].equity)


def test_ties_that_differ_in_the_last_bit_go_to_the_cubeless_equity() -> None:
    """Deeper than 0-ply a cash after every roll is a mean of +1s, which rounding can leave a bit off 1
    (sum([1/36] * 36) is 1.0000000000000002): such values still tie, and the cubeless equity decides (a 2-ply case
    of self-play, 66 in a bearoff: 8/2 8/2 7/1 7/1 keeps more, both cash)."""
    off = float(np.nextafter(1.0, 2.0))
    cubeful = np.array([off, 1.0, 0.5])
    cubeless = np.array([0.974, 0.979, 0.990])
    assert best_first(cubeful, cubeless)[0] == 1
    runs = np.concatenate([cubeful, cubeful[::-1]])  # the second run: 0.5, 1.0, 1 + 2e-16
    assert list(first_best(runs, np.array([3, 3]), np.tile(cubeless, 2))) == [1, 5]
    # A real difference is still a difference.
    assert best_first(np.array([1.0, 1.0 - 1e-6]), np.array([0.0, 1.0]))[0] == 0


def test_grandmaster_filters_are_gnubgs_large_at_three_plies() -> None:
    # gnubg's grandmaster (eval.c aecSettings / aiSettingsMoveFilter): 3-ply, pruning, the "Large" filters
    # (keep 16 within 0.32 at 0-ply, skip 1-ply, keep 4 within 0.08 at 2-ply).
    gm = LEVELS["grandmaster"]
    assert (gm.plies, gm.move_filter, gm.cube_depth, gm.chequer_noise) == (3, "large", 3, 0.0)
    assert FILTERS["large"][3] == (MoveFilter(0, 16, 0.32), MoveFilter(-1), MoveFilter(0, 4, 0.08))
    assert parse_level("grandmaster") == gm and parse_level("Grandmaster") == gm


def test_a_three_ply_filter_judges_the_moves_scored_at_two_plies() -> None:
    # gnubg's FindnSaveBestMoves scores the survivors at ply k before applying filter k: the 2-ply filter of a
    # 3-ply search must see 2-ply equities, not the 0-ply ones of the first filter.
    ev = PipEvaluator()
    search = Search(ev)
    pos = Position.initial()
    flts = (MoveFilter(0, 16, 0.32), MoveFilter(-1), MoveFilter(0, 4, 0.08))
    seen: list[int] = []
    real = search.evaluate_boards
    nested = [0]

    def spy(boards, plies, equity=money_equity):  # type: ignore[no-untyped-def]
        if not nested[0]:  # the root's calls only, not the tree's recursion
            seen.append(plies)
        nested[0] += 1
        try:
            return real(boards, plies, equity)
        finally:
            nested[0] -= 1

    search.evaluate_boards = spy  # type: ignore[method-assign]
    ranked = search.rank(pos, (4, 3), plies=3, move_filter=flts)
    assert seen == [0, 2, 3]  # scored at 0, then the first filter's survivors at 2, the last few at 3
    two = search.rank(pos, (4, 3), plies=2, move_filter=(flts[0], flts[1]))
    by_move = {str(r.play.move): r for r in two}
    top = [r for r in ranked if r.plies == 3]
    assert 1 <= len(top) <= 4
    best2 = max(r.equity for r in two if r.plies == 2)
    # exactly the moves the 2-ply filter keeps: up to 4, within 0.08 of the best 2-ply equity
    assert all(by_move[str(r.play.move)].equity >= best2 - 0.08 - 1e-12 for r in top)
    kept = [r for r in two if r.plies == 2 and r.equity >= best2 - 0.08 - 1e-12]
    assert len(top) == min(4, len(kept))


def test_three_ply_is_the_plain_recursion_over_rolls() -> None:
    # Two chequers against two: each node's best reply found one position at a time, 21^3 roll sequences.
    ev = PipEvaluator()
    pos = race({9: 1, 4: 1, 21: -1, 17: -1})

    def direct(p: Position, plies: int) -> np.ndarray:
        if plies == 0 or p.is_over():
            return ev.evaluate([p])[0]
        total = np.zeros(5)
        for dice, weight in ROLLS:
            after = [q.position.swap() for q in legal_plays(p, dice)]
            opp_view = ev.evaluate(after)
            best = int(np.argmax(money_equity(invert(opp_view))))
            total += weight / 36.0 * invert(direct(after[best], plies - 1)[None, :])[0]
        return total

    assert np.allclose(Search(ev).evaluate([pos], plies=3)[0], direct(pos, 3), atol=1e-12)


def test_unique_boards_finds_each_board_once_in_order_of_appearance() -> None:
    from engine.encoding import positions_to_array
    from engine.search import unique_boards

    a, b, c = (positions_to_array([p]) for p in _sample_positions(3, 5))
    boards = np.concatenate([b, a, b, c, a, a])
    uniq, back = unique_boards(boards)
    assert np.array_equal(uniq, np.concatenate([b, a, c]))
    assert np.array_equal(uniq[back], boards)
    single, back1 = unique_boards(a)
    assert single is a and list(back1) == [0]


def test_a_player_stops_at_a_lone_survivor_of_the_filters() -> None:
    # gnubg's player: when a filter leaves one move, that move is the choice and is searched no deeper; the
    # hint list (lone_stops off) searches it to the full depth. Same choice either way.
    ev = PipEvaluator()
    pos = Position.from_points({13: 5, 8: 3, 7: 1, 6: 5, 1: -1, 24: 1, 12: -5, 17: -3, 19: -5, 18: -1})
    lone = (MoveFilter(0, 0, 0.0), MoveFilter(-1))  # keeps the best 0-ply move only
    full = Search(ev).rank(pos, (6, 1), plies=2, move_filter=lone)
    short = Search(ev).rank(pos, (6, 1), plies=2, move_filter=lone, lone_stops=True)
    assert full[0].plies == 2 and short[0].plies == 0
    assert short[0].play.move == full[0].play.move
