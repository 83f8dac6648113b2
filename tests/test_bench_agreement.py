"""bench.agreement's move report: per class, our 0-ply and 2-ply beside gnubg's 0-ply, judged by gnubg 2-ply."""

from __future__ import annotations

import json
from pathlib import Path

from bench.agreement import MoveRun, Sample, move_report
from engine.cube import CubeInfo
from engine.position import Position

RACE = Position.from_points({7: 5, 8: 5, 9: 5, 16: -5, 17: -5, 18: -5})
CONTACT = Position.initial()


def _sample(pos: Position) -> Sample:
    return Sample(pos, (3, 1), CubeInfo.money())


def _answer(equities: dict[str, float]) -> dict:
    # gnubg's hint list: best first, every move searched at 2 plies
    ranked = sorted(equities.items(), key=lambda kv: -kv[1])
    return {"moves": [[i, key, eq, 2] for i, (key, eq) in enumerate(ranked)], "extra": {}}


def test_class_rows_hold_gnubg_0ply_beside_ours() -> None:
    samples = [_sample(CONTACT), _sample(RACE), _sample(RACE)]
    runs = [
        MoveRun(choice={"our_0ply": "a", "our_2ply": "a", "gnubg_0ply": "b", "gnubg_2ply": "a"}),
        MoveRun(choice={"our_0ply": "y", "our_2ply": "x", "gnubg_0ply": "x", "gnubg_2ply": "x"}),
        MoveRun(choice={"our_0ply": "x", "our_2ply": "x", "gnubg_0ply": "y", "gnubg_2ply": "x"}),
    ]
    answers = {
        0: _answer({"a": 0.100, "b": 0.080}),
        1: _answer({"x": 0.500, "y": 0.496}),
        2: _answer({"x": -0.200, "y": -0.200}),  # a tie: y is as good as gnubg's x, though not the same move
    }
    report = move_report(samples, runs, answers)
    assert report["scored"] == 3 and report["error_count"] == 0
    race, contact = report["by_class"]["race"], report["by_class"]["contact"]
    assert race["n"] == 2 and contact["n"] == 1
    assert race["agree_0ply"] == 50.0 and race["agree_gnubg_0ply"] == 50.0
    assert race["asgood_0ply"] == 50.0 and race["asgood_gnubg_0ply"] == 100.0
    assert race["loss_0ply"] == 2.0 and race["loss_gnubg_0ply"] == 0.0
    assert contact["agree_0ply"] == 100.0 and contact["agree_gnubg_0ply"] == 0.0
    assert contact["loss_gnubg_0ply"] == 20.0
    assert report["agree_pct"]["gnubg_0ply"] == round(100 / 3, 1)


def test_self_play_can_sample_one_class_only() -> None:
    from bench.agreement import self_play
    from engine.analyser import Analyser
    from engine.position import PositionClass

    moves, cube, games = self_play(Analyser.default(), 4, 1, seed=3, only=PositionClass.RACE)
    assert len(moves) == 4 and games >= 1
    assert {s.position.classify() for s in moves} == {PositionClass.RACE}
    assert len(cube) == 1  # the cube samples are not filtered


def test_ours_minus_gnubg_is_paired_on_the_same_positions() -> None:
    samples = [_sample(RACE)] * 4
    choices = [("x", "x"), ("y", "x"), ("x", "y"), ("x", "y")]  # ours, gnubg 0-ply
    runs = [
        MoveRun(choice={"our_0ply": o, "our_2ply": o, "gnubg_0ply": g, "gnubg_2ply": "x"}) for o, g in choices
    ]
    answers = {i: _answer({"x": 0.500, "y": 0.490}) for i in range(4)}
    diff = move_report(samples, runs, answers)["ours_minus_gnubg_0ply"]
    # per position, same move: 0, -1, +1, +1 (points of 100%); loss: 0, +10, -10, -10 mEMG
    assert diff["agree"][0] == 25.0 and diff["loss"][0] == -2.5
    sd = (sum((d - 0.25) ** 2 for d in (0, -1, 1, 1)) / 3) ** 0.5
    assert diff["agree"][1] == round(1.96 * 100 * sd / 2, 2)
    assert diff["asgood"] == diff["agree"]


def test_dumps_of_several_seeds_pool_into_one_paired_figure(tmp_path: Path) -> None:
    from bench.agreement import pool_dumps

    def row(ours: str, gnubg: str, kind: str = "contact") -> str:
        equity = {"a": 0.10, "b": 0.10, "c": 0.05}  # b ties gnubg 2-ply's choice a; c loses 50 mEMG
        choice = {"our_0ply": ours, "gnubg_0ply": gnubg}
        line = {"gnubg_best": "a", "best": 0.10, "choice": choice, "equity": equity, "class": kind}
        return json.dumps(line) + "\n"

    first, second = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    first.write_text(row("a", "c") + row("b", "a", "bearoff1"))
    second.write_text(row("c", "a") + row("a", "a", "bearoff2"))
    pooled = pool_dumps([first, second])
    assert pooled["positions"] == 4
    assert pooled["our_0ply"] == [50.0, 75.0, 12.5]  # same move, as good (b ties), mEMG lost
    assert pooled["gnubg_0ply"] == [75.0, 75.0, 12.5]
    assert pooled["ours_minus_gnubg_0ply"]["agree"][0] == -25.0
    assert pooled["ours_minus_gnubg_0ply"]["loss"][0] == 0.0
    by_class = pooled["by_class"]
    assert sorted(by_class) == ["bearoff", "contact"]  # the two bearoff classes pool
    assert by_class["contact"]["positions"] == 2
    assert by_class["contact"]["our_0ply"] == [50.0, 50.0, 25.0]  # a (right), c (50 mEMG lost)
    assert by_class["contact"]["gnubg_0ply"] == [50.0, 50.0, 25.0]  # c, then a
    assert by_class["bearoff"]["our_0ply"] == [50.0, 100.0, 0.0]  # b ties a: as good, not the same move
    assert by_class["bearoff"]["ours_minus_gnubg_0ply"]["agree"][0] == -50.0
