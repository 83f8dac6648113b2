"""Match equity table and conversions, checked against gnubg's manual and gnubg 1.07's own output."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from engine.errors import EngineError
from engine.met import (
    GammonPrices,
    InvalidProbabilitiesError,
    InvalidScoreError,
    InvalidTableError,
    MatchEquityTable,
    Probs,
    check_probs,
    post_crawford_extension,
)

DATA = Path(__file__).parent / "data"
GNUBG_KAZAROSS = Path("/usr/share/gnubg/met/Kazaross-XG2.xml")
PACKAGED = Path(__file__).parents[1] / "engine" / "data" / "met_kazaross_xg2.json"


@pytest.fixture(scope="module")
def met() -> MatchEquityTable:
    return MatchEquityTable.load()


def test_packaged_table_shape_and_first_values(met: MatchEquityTable) -> None:
    assert met.name == "Kazaross XG2 25 point MET"
    assert met.length == 25
    assert met.pre_crawford[0][:5] == (0.5, 0.67736, 0.75076, 0.81436, 0.84179)
    assert met.post_crawford[:4] == (0.5, 0.48803, 0.32264, 0.31002)
    for i in range(25):
        for j in range(25):
            assert met.pre_crawford[i][j] + met.pre_crawford[j][i] == pytest.approx(1.0, abs=1e-12)
    assert repr(met) == "MatchEquityTable.load('kazaross_xg2')"
    assert MatchEquityTable.load() is met  # cached


def test_packaged_file_keeps_the_notice() -> None:
    data = json.loads(PACKAGED.read_text(encoding="utf-8"))
    notice = " ".join(data["notice"])
    assert "Copyright (C) 2011 Neil Kazaross" in notice
    assert "Copying and distribution of this file, with or without modification," in notice
    assert "notice and this notice are preserved." in notice


@pytest.mark.skipif(not GNUBG_KAZAROSS.exists(), reason="gnubg-data not installed")
def test_packaged_table_equals_gnubg_xml(met: MatchEquityTable) -> None:
    from_xml = MatchEquityTable.from_gnubg_xml(GNUBG_KAZAROSS.read_text(encoding="utf-8"))
    assert from_xml == met


def test_post_crawford_row_is_extended_like_gnubg(met: MatchEquityTable) -> None:
    # gnubg keeps the file's first 24 entries and recomputes 25-away: `show matchequitytable` prints 0.1181%.
    assert met.post_crawford[23] == 0.00182
    assert met.post_crawford[24] == pytest.approx(0.125 * 0.00336 + 0.375 * 0.00203, abs=1e-15)
    assert round(100 * met.post_crawford[24], 4) == 0.1181
    # From nothing: Zadeh's recursion with G = 0.25 and the 1.5% / 0.4% free drops.
    assert post_crawford_extension([], 4) == pytest.approx(
        (0.5, 0.485, 0.3125, 0.125 + 0.375 * 0.485 - 0.004)
    )


def test_mwc_lookups(met: MatchEquityTable) -> None:
    assert met.mwc(1, 2) == 0.67736  # Crawford game, leader's side
    assert met.mwc(2, 1) == pytest.approx(0.32264)
    assert met.mwc(2, 1, crawford_done=True) == 0.48803  # post-Crawford trailer
    assert met.mwc(1, 2, crawford_done=True) == pytest.approx(1 - 0.48803)
    assert met.mwc(1, 1) == met.mwc(1, 1, crawford_done=True) == 0.5
    assert met.mwc(25, 25) == 0.5


def test_mwc_after_a_game(met: MatchEquityTable) -> None:
    # 2-away 2-away, I win one point: the next game is the Crawford game, me 1-away.
    assert met.mwc_after(2, 2, 1) == 0.67736
    # Crawford game at 1-away 3-away, the opponent wins a single: post-Crawford, he is 2-away.
    assert met.mwc_after(1, 3, -1) == pytest.approx(1 - 0.48803)
    assert met.mwc_after(3, 1, 4) == 1.0
    assert met.mwc_after(3, 1, -1) == 0.0
    assert met.mwc_after(4, 4, 0) == 0.5


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((0, 3), {}), ((26, 1), {}), ((3, 3), {"crawford_done": True}), ((1.5, 3), {}), ((True, 3), {})],
)
def test_bad_scores_raise_typed_errors(met: MatchEquityTable, args: tuple, kwargs: dict) -> None:
    with pytest.raises(InvalidScoreError):
        met.mwc(*args, **kwargs)


def test_bad_cube_values_raise(met: MatchEquityTable) -> None:
    for cube in (0, 3, -2, 1.0):
        with pytest.raises(InvalidScoreError, match="cube"):
            met.cubeless_mwc((0.5, 0.1, 0, 0.1, 0), 3, 3, cube)


def test_manual_cubeless_mwc_example(met: MatchEquityTable) -> None:
    # gnubg manual, "Match Winning Chance": 1-3 to 5, cube on 2; singles 30/30, gammons 30/10 -> 45%.
    probs = (0.6, 0.3, 0.0, 0.1, 0.0)
    assert met.cubeless_mwc(probs, 4, 2, cube=2) == pytest.approx(0.45)


def test_manual_nemg_table(met: MatchEquityTable) -> None:
    # gnubg manual, "Normalized equity": 3-1 to 5 with the cube on 2 (seen by the player with 1 point):
    # MWC(l) = 0%, MWC(w) = 50%, so NEMG runs -1 .. +3 over MWC 0% .. 100%.
    table = met.nemg_table(4, 2, cube=2)
    assert [m for m, _ in table] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [e for _, e in table] == pytest.approx([-1.0, 0.0, 1.0, 2.0, 3.0])
    # "0 100 100 - 0 0 0 gives a NEMG of +3"
    assert met.mwc2eq(met.cubeless_mwc((1, 1, 1, 0, 0), 4, 2, 2), 4, 2, 2) == pytest.approx(3.0)
    for eq in (-1.7, 0.0, 0.4, 2.5):
        assert met.mwc2eq(met.eq2mwc(eq, 7, 5, 2), 7, 5, 2) == pytest.approx(eq)


def test_gammon_prices_match_gnubg_show_gammonvalues(met: MatchEquityTable) -> None:
    # gnubg 1.07, `new match 7`, `set score 3 1`, `show gammonvalues` (Kazaross-XG2):
    #   gnubg (3 points, 4-away)  0.65843  1.31491;  root (6-away)  0.57740  1.11134
    # gnubg prints half the price (the "usual" gammon value) and the sum for the backgammon.
    prices = met.gammon_prices(4, 6)
    assert prices.win_gammon / 2 == pytest.approx(0.65843, abs=5e-6)
    assert (prices.win_gammon + prices.win_backgammon) / 2 == pytest.approx(1.31491, abs=5e-6)
    assert prices.lose_gammon / 2 == pytest.approx(0.57740, abs=5e-6)
    assert (prices.lose_gammon + prices.lose_backgammon) / 2 == pytest.approx(1.11134, abs=5e-6)
    assert met.gammon_prices(6, 4) == pytest.approx(
        GammonPrices(prices.lose_gammon, prices.win_gammon, prices.lose_backgammon, prices.win_backgammon)
    )
    # Money-like scores are close to 1; a dead gammon (DMP) is worth nothing.
    assert met.gammon_prices(1, 1) == GammonPrices(0.0, 0.0, 0.0, 0.0)


def test_cubeless_mwc_is_the_normalised_utility(met: MatchEquityTable) -> None:
    # Equity with gammon prices (gnubg Utility) and eq2mwc give the directly summed cubeless MWC.
    probs = check_probs((0.55, 0.2, 0.02, 0.12, 0.01))
    for a, b, cube in ((7, 5, 1), (4, 9, 2), (3, 2, 1), (11, 11, 4)):
        gp = met.gammon_prices(a, b, cube)
        w, wg, wbg, lg, lbg = probs
        equity = 2 * w - 1 + wg * gp.win_gammon - lg * gp.lose_gammon
        equity += wbg * gp.win_backgammon - lbg * gp.lose_backgammon
        assert met.eq2mwc(equity, a, b, cube) == pytest.approx(met.cubeless_mwc(probs, a, b, cube))


def test_probabilities() -> None:
    p = check_probs([0.6, 0.3, 0.05, 0.1, 0.01])
    assert isinstance(p, Probs)
    assert p.outcomes() == pytest.approx((0.3, 0.25, 0.05, 0.3, 0.09, 0.01))
    assert math.fsum(p.outcomes()) == pytest.approx(1.0)
    assert p.flipped().flipped() == pytest.approx(p)
    assert eval(repr(p)) == p
    for bad in (
        (0.5, 0.1, 0.0, 0.1),
        (0.5, 0.6, 0.0, 0.1, 0.0),
        (0.5, 0.1, 0.2, 0.1, 0.0),
        (0.5, 0.1, 0.0, 0.6, 0.0),
        (1.2, 0, 0, 0, 0),
        (float("nan"), 0, 0, 0, 0),
        "abcde",
        None,
    ):
        with pytest.raises(InvalidProbabilitiesError):
            check_probs(bad)  # type: ignore[arg-type]


def test_woolsey_xml_fixture_parses() -> None:
    woolsey = MatchEquityTable.from_gnubg_xml((DATA / "met_woolsey.xml").read_text(encoding="utf-8"))
    assert woolsey.name == "Kit Woolsey"
    assert woolsey.length == 15
    # The manual's "Cubeful equities" example: "If White cashes 1 point he has MWC(-3,-7)=76% and if Black
    # cashes he has MWC(-4,-6)=36%" (Black's MWC at 6-away against 4-away).
    assert woolsey.mwc(3, 7) == 0.76
    assert woolsey.mwc(6, 4) == 0.36


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"name": "x"}',
        '{"name": "x", "pre_crawford": [[0.5, 0.6]], "post_crawford": []}',
        '{"name": "x", "pre_crawford": [[1.5]], "post_crawford": [0.5]}',
        "<met>",
    ],
)
def test_bad_tables_raise(text: str) -> None:
    with pytest.raises(InvalidTableError):
        if text.startswith("<"):
            MatchEquityTable.from_gnubg_xml(text)
        else:
            MatchEquityTable.from_json(text)


def test_unknown_packaged_table() -> None:
    with pytest.raises(InvalidTableError):
        MatchEquityTable.load("no_such_table")
    with pytest.raises(EngineError):
        MatchEquityTable.load("../etc/passwd")
