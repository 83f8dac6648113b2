"""The money-game driver of bench/strength.py on a fake gnubg: duplicate dice, the cube, board lines."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench._money_game import Ours, gnubg_board, play_game
from bench.strength import dice_sequence, finish
from engine.match import MatchState
from engine.moves import legal_plays
from engine.notation import format_gnubg
from engine.position import Position
from protocols.fibs.board import Side, parse_board

ROOT = Path(__file__).resolve().parents[1]


class FakeGnubg:
    """Answers board lines like gnubg's external engine: the first legal play; doubles whenever asked if
    ``doubles``; takes every double. Records what it was asked."""

    def __init__(self, doubles: bool) -> None:
        self.doubles = doubles
        self.asked: list[str] = []

    def ask(self, line: str) -> str:
        board = parse_board(line.split(" ")[0])
        if board.double_pending:
            self.asked.append("answer")
            return "take"
        if board.dice is None:
            self.asked.append("cube")
            return "double" if self.doubles else "roll"
        pos = board.position_for_me()
        self.asked.append("move")
        return format_gnubg(pos, legal_plays(pos, board.dice)[0].move)


def same_as_fake(doubles: bool) -> Ours:
    return Ours(
        move=lambda s: legal_plays(s.position, s.dice)[0],
        double=lambda s: doubles,
        take=lambda s: True,
    )


def test_identical_players_score_zero_over_a_duplicate_pair_with_and_without_the_cube() -> None:
    for cube, doubles in ((False, False), (True, False), (True, True)):
        for seed in range(3):
            rolls = dice_sequence(seed)
            fake = FakeGnubg(doubles)
            a = play_game(rolls, 0, same_as_fake(doubles), fake, {}, cube)
            b = play_game(rolls, 1, same_as_fake(doubles), fake, {}, cube)
            assert a == b != 0  # the same game from both seats: seat 0 scores the same
            assert ("answer" in fake.asked) == (cube and doubles)


def test_the_cube_multiplies_the_points() -> None:
    rolls = dice_sequence(1)
    plain = play_game(rolls, 0, same_as_fake(False), FakeGnubg(False), {}, True)
    doubling = play_game(rolls, 0, same_as_fake(True), FakeGnubg(True), {}, True)
    assert abs(doubling) > abs(plain) and abs(doubling) % abs(plain) == 0


def test_board_for_gnubgs_answer_names_the_doubler_on_turn() -> None:
    # gnubg's external engine answers a double for the side NOT named by the turn field (shared README 2b).
    state = MatchState.new_session().new_game((6, 5)).replace(dice=(0, 0)).double()  # seat 0 doubles
    board = parse_board(gnubg_board(state, seat=1).split(" ")[0])
    assert (
        board.was_doubled == 0 and board.turn == -board.colour
    )  # the turn field: the other side, the doubler
    assert board.position_for_me() == state.position.swap()  # gnubg's own view of the chequers
    line = gnubg_board(state.take(), seat=1)
    taken = parse_board(line.split(" ")[0])
    assert taken.cube == 2 and taken.cube_owner == Side.PLAYER  # the taker owns it
    assert line.endswith(" jacobyrule off beavers off")
    assert Position.initial() == state.position


def test_the_cube_log_holds_each_decision_before_the_double_with_the_doubler_on_roll() -> None:
    log: list[dict[str, object]] = []
    play_game(dice_sequence(2), 0, same_as_fake(True), FakeGnubg(True), {}, True, log)
    first, answer = log[0], log[1]
    # We open (no cube decision before the opening roll); gnubg is the first who may double.
    assert first == {**first, "who": "gnubg", "kind": "double", "yes": True, "cube": 1}
    assert answer == {**answer, "who": "ours", "kind": "take", "yes": True, "cube": 1}
    assert answer["gnubgid"] == first["gnubgid"]  # both judged on the state before the double
    state = MatchState.from_gnubg_id(str(first["gnubgid"]))
    assert not state.doubled and state.turn == state.on_roll and state.dice == (0, 0)
    assert {r["kind"] for r in log} == {"double", "take"} and len({r["cube"] for r in log}) > 1  # redoubles


def test_a_workers_gnubg_dies_with_the_worker(tmp_path: Path) -> None:
    # The worker is killed outright (no handler runs); the kernel still takes its child with it.
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "from bench.strength import die_with_parent\n"
        "p = subprocess.Popen(['sleep', '60'], preexec_fn=die_with_parent)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    worker = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    deadline = time.time() + 20
    while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline:
        time.sleep(0.05)
    child = int(pidfile.read_text())
    worker.kill()
    worker.wait()
    while time.time() < deadline:
        try:
            state = Path(f"/proc/{child}/stat").read_text().split()[2]
        except FileNotFoundError:
            break
        if state == "Z":  # reaped by init soon; it is dead
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the worker's child outlived it")


def test_finish_ends_a_done_pool_without_signalling_its_workers() -> None:
    with mp.get_context("spawn").Pool(2) as pool:
        assert pool.map(abs, [-1, -2]) == [1, 2]
        workers = list(pool._pool)
        finish(pool)
    assert [w.exitcode for w in workers] == [0, 0]  # Pool.terminate's SIGTERM would read -15
