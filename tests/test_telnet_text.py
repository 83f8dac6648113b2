"""What a person at a telnet prompt reads from the embedded server: help texts, the drawn board, one board per
turn (issue 16, items 11)."""

from __future__ import annotations

import asyncio
import itertools
import random
from pathlib import Path

from bot.server.scripted import RandomPlayer
from bot.server.table import BoardAt, Table
from engine.dice import ManualDice
from engine.moves import legal_plays
from engine.notation import format_fibs
from engine.position import BAR
from protocols.fibs import events as ev
from protocols.fibs import server as fs
from protocols.fibs.board import parse_board
from protocols.fibs.server import Msg, render
from tests.test_fibs_server import Harness, start_match

# bob (X, on the bar) as alice (O) sees it on BaldLies (the line of tests/test_fibs_board.py).
ALICE_VIEW = (
    "board:You:bob:3:0:0:-1:-1:0:0:1:0:4:0:3:0:0:0:-5:5:0:0:0:-3:1:-4:-1:0:0:0:1:0:-1:0:0:0:0:1:1:1:0:1:-1:0:25"
    ":0:0:0:1:0:0:0:0"
)


def test_help_beginner_is_a_walk_through_not_the_command_list() -> None:
    assert fs.parse_command("help beginner") == fs.Help("beginner")
    commands, beginner = fs.help_lines(), fs.help_lines("beginner")
    assert beginner != commands and not set(beginner) & set(commands)
    text = "\n".join(beginner)
    for needed in ("invite gammond 3", "join <name>", "Please move", "move 13-7 13-11", "bar-22", "6-off",
                   "double", "accept", "reject", "resign", "leave", "'help'"):  # fmt: skip
        assert needed in text, needed
    assert "help beginner" in commands[-1]  # the command list points newcomers to it
    assert fs.help_lines("BEGINNER ") == beginner
    assert fs.help_lines("nonsense") == [
        "** No help on 'nonsense'. Try 'help' (the commands) or 'help beginner' (how to play)."
    ]


async def test_help_beginner_over_telnet(tmp_path: Path) -> None:
    harness = Harness(tmp_path / "server.sqlite3")
    await harness.server.start()
    try:
        ann = await harness.client("ann")
        ann.send("help beginner")
        await ann.expect_raw("Your first match, step by step:")
        ann.send("help")
        await ann.expect(lambda e: e.raw.startswith("Commands: who"))
        await ann.expect(lambda e: e.raw.startswith("New here?"))
        assert len(ann.seen(lambda e: e.raw.startswith("Commands: who"))) == 1  # not for 'help beginner'
        assert len(ann.seen(lambda e: e.raw.startswith("Your first match"))) == 1
    finally:
        await harness.close()


def _bar_column(lines: list[str]) -> tuple[list[str], list[str]]:
    """The bar column's cells in the top and bottom halves of a drawn board."""
    rows = [line for line in lines if line.startswith("  |")]
    middle = next(i for i, line in enumerate(rows) if "|BAR|" in line)
    column = rows[0].index("|", 3)
    cells = [line[column + 1 : column + 4] for line in rows]
    return cells[:middle], cells[middle + 1 :]


def test_drawn_board_shows_chequers_on_the_bar() -> None:
    board = parse_board(ALICE_VIEW)
    position = board.position_for_me()
    assert (position.me[BAR], position.opp[BAR]) == (0, 1)
    lines = fs.ascii_board(board)
    top, bottom = _bar_column(lines)
    assert [c.strip() for c in top] == [""] * 5  # alice has none on the bar
    assert [c.strip() for c in bottom] == ["X", "", "", "", ""]  # bob's one, next to the middle
    assert "BAR: O-0 X-1" in lines[-1]

    fields = ALICE_VIEW.split(":")
    fields[6], fields[48] = "-7", "7"  # X's bar cell and count in this view; six X chequers come off points
    for _ in range(6):
        i = max(i for i in range(7, 31) if int(fields[i]) < 0)
        fields[i] = str(int(fields[i]) + 1)
    board = parse_board(":".join(fields))
    assert board.position_for_me().opp[BAR] == 7
    _, bottom = _bar_column(fs.ascii_board(board))
    assert [c.strip() for c in bottom] == ["X", "X", "X", "X", "7"]  # the fifth row counts


def _autoroll(seat: int, toggle: str) -> bool:
    return toggle in ("autoboard", "crawford")  # no "double": the server rolls for the player at once


def test_each_turn_draws_the_board_once() -> None:
    t = Table(
        "m1", ("ann", "bob"), 3, ManualDice(["31", "62", "54"]), _autoroll, rng=random.Random(0), site="t"
    )
    t.start_game()
    opening = t.take()
    assert sum(isinstance(text, BoardAt) for who, text in opening if who == 0) == 1
    first = t.state.on_roll
    play = legal_plays(t.state.position, t.state.dice)[0]
    t.move(first, format_fibs(play.move, t.direction(first)))
    out = t.take()
    other = [text for who, text in out if who == 1 - first]
    # The opponent's move, then the roll made for them at once, then one board (with the dice).
    assert sum(isinstance(text, BoardAt) for text in other) == 1, other
    roll = other.index(render(Msg.YOU_ROLL, d1=6, d2=2))
    assert isinstance(other[roll + 1], BoardAt), other
    assert any(isinstance(text, str) and text.startswith(f"{t.names[first]} moves") for text in other)
    mover = [text for who, text in out if who == first]
    assert sum(isinstance(text, BoardAt) for text in mover) == 1  # the board after the move
    watchers = [text for who, text in out if who >= 2]
    assert sum(isinstance(text, BoardAt) for text in watchers) == 2  # one for each seat's watchers
    rolls = render(Msg.ROLLS, name=t.names[1 - first], d1=6, d2=2)
    for target in (2, 3):  # the watchers' board shows the roll after the line that announces it
        lines = [text for who, text in out if who == target]
        assert lines.index(rolls) < next(i for i, x in enumerate(lines) if isinstance(x, BoardAt))


async def test_a_person_sees_one_board_per_turn_through_a_match(tmp_path: Path) -> None:
    """ann at a terminal (drawn boards) against a CLIP robot: between two of her rolls she sees the board after
    her roll and after her move, never again after bob's move (the board with her next roll shows that)."""
    harness = Harness(tmp_path / "server.sqlite3")
    await harness.server.start()
    try:
        ann, bob = await harness.client("ann"), await harness.client("bob")
        ann.send("set boardstyle 1")
        await ann.expect_raw("Value of 'boardstyle' set to 1.")
        await start_match(ann, bob, 1)
        robot = asyncio.create_task(RandomPlayer(bob, random.Random(3)).play(60))
        lines: list[str] = []
        while True:
            event = await ann.expect(lambda e: True, 30)
            lines.append(event.raw)
            if isinstance(event, ev.MatchWon):
                break
            if event.raw == "It's your turn to move." or event.raw.startswith("Please move"):
                session = harness.server.online["ann"]
                table, seat = session.table, session.seat
                assert table is not None and seat is not None
                state = table.state
                play = legal_plays(state.position, state.dice)[0]
                ann.send("move " + format_fibs(play.move, table.direction(seat)))
            elif isinstance(event, ev.RollOrDouble):
                ann.send("roll")
        await robot
    finally:
        await harness.close()
    rolls = [i for i, line in enumerate(lines) if line.startswith("You roll ")]
    assert len(rolls) >= 3
    bob_moved = 0
    for start, end in itertools.pairwise(rolls):
        window = lines[start:end]
        assert sum("|BAR|" in line for line in window) <= 2, window
        bob_moved += any(line.startswith("bob moves") for line in window)
    assert bob_moved >= 2
