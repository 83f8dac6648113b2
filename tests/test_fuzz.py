"""What the fuzz campaign (bench/fuzz.py) found, each pinned by the input that found it, and a short smoke run."""

from __future__ import annotations

import json
import time

import pytest

from bench import fuzz
from protocols.bgammon import events as bev
from protocols.bgammon.codec import BgammonClientProtocol, BgammonEventError, parse_event
from protocols.fibs import events as fev
from protocols.fibs.client import FibsClientProtocol
from protocols.web import MessageSyntaxError, parse_client

HUGE = "1" * 5000  # Python refuses to convert an integer of more than 4300 digits: a ValueError from json


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "invite", "name": "bob", "length": ' + HUGE + "}",  # fuzz web crash-289 (ValueError)
        '{"type": "move", "steps": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
)
def test_web_numbers_too_long_or_json_too_deep_are_syntax_errors(text: str) -> None:
    with pytest.raises(MessageSyntaxError, match="not JSON"):
        parse_client(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"Type":"ping","Player":"","Message":' + HUGE + "}",  # fuzz bgammon crash-333 (ValueError)
        '{"Type":"ping","Player":"","Message":'
        + "[" * 100_000
        + "}",  # fuzz bgammon crash-940 (RecursionError)
    ],
)
def test_bgammon_numbers_too_long_or_json_too_deep_are_malformed_events(text: str) -> None:
    with pytest.raises(BgammonEventError, match="not valid JSON"):
        parse_event(text)
    client = BgammonClientProtocol()
    events = client.receive_data(text.encode() + b"\n" + b'{"Type":"ping","Player":"","Message":"1"}\n')
    assert isinstance(events[0], bev.Malformed) and events[1] == bev.Ping(message="1")


def test_a_megabyte_fibs_line_is_not_scanned_by_every_rule() -> None:
    # fuzz fibs-client hang-813: 2 MiB in a few lines took over a second in the line rules
    data = b"GammonBot_VII rolls 6 and 4.\r\n" + b"x" * (1 << 21) + b"\r\n6\r\n"
    client = FibsClientProtocol()
    start = time.perf_counter()
    events = client.receive_data(data)
    elapsed = time.perf_counter() - start
    assert [type(e) for e in events] == [fev.Rolls, fev.Unknown, fev.WhoEnd]
    assert "over 65536" in events[1].reason and len(events[1].raw) == 1 << 21
    assert elapsed < 0.5  # about 0.01 s; the rules took 0.8 s on the same line


def test_fuzz_smoke_every_target_a_few_hundred_inputs() -> None:
    # the campaign in small: any crash or hang names its target, input index and traceback
    failures = []
    for name, n in fuzz.plan(3000, None).items():
        target = fuzz.targets()[name]
        fuzz.warm_up(target)
        for i in range(n):
            data = fuzz.make_input(target, 99, i)
            kind, detail = fuzz.run_one(target, data, slack=10.0)
            if kind not in ("ok", "error"):
                failures.append(f"{name} #{i} ({kind}): {detail[-600:]}")
    assert not failures, "\n".join(failures[:5])


def test_inputs_are_reproducible_and_varied() -> None:
    target = fuzz.targets()["web"]
    first = [fuzz.make_input(target, 5, i) for i in range(200)]
    assert first == [fuzz.make_input(target, 5, i) for i in range(200)]
    assert len(set(first)) > 150
    assert any(len(x) > 60_000 for x in first) and any(not x.strip() for x in first)
    assert json.loads(fuzz.targets()["batch-moves"].seeds()[0])["id"]


# -- patterns that backtracked for seconds or minutes on a long run of spaces (fuzz hangs) -------------------

SPACES = " " * 100_000


def _quick(call, *args, limit: float = 0.5):
    start = time.process_time()
    try:
        return call(*args)
    finally:
        assert time.process_time() - start < limit


def test_mat_score_and_tag_lines_read_in_linear_time() -> None:
    from engine.formats import MatFormatError, read_mat

    # fuzz mat hang-2828: a score line and a tag line padded with 55,000 spaces
    head = "; [Variation" + SPACES + '"Backgammon"]\n 1 point match\n\n Game 1\n'
    text = head + " Alice" + SPACES + ": 0" + SPACES + "Bob : 0\n  1) 31: 8/5 6/5\n"
    record = _quick(read_mat, text)
    assert record.names == ("Alice", "Bob") and record.partial
    with pytest.raises(MatFormatError, match="is not a score line"):
        _quick(read_mat, head + " Alice" + SPACES + ": 0" + SPACES + "Bob : x\n  1) 31: 8/5 6/5\n")


def test_oldmoves_players_and_action_lines_read_in_linear_time() -> None:
    from engine.formats import OldmovesFormatError, read_oldmoves

    # fuzz oldmoves hang-1413: "X: (6 4) bar-4" + 220,000 spaces + "12-18"
    head = "Score is 0-0 in a 1 point match.\nAnn is X" + SPACES + "- Bob is O.\n"
    record = _quick(read_oldmoves, head + "X: (3 1) 17-20 19-20" + SPACES + "\n")
    assert record.names == ("Ann", "Bob") and len(record.games[0].actions) == 1
    with pytest.raises(OldmovesFormatError, match="more than 1000 characters"):
        _quick(read_oldmoves, head + "X: (3 1) 17-20" + SPACES + "19-20\nO: (6 5) 24-18 18-13\n")
    with pytest.raises(OldmovesFormatError, match="is not '<name> is X"):
        _quick(read_oldmoves, "Score is 0-0 in a 1 point match.\nAnn is X - Bob" + SPACES + "is\nX: (3 1)\n")


def test_fibs_move_lines_read_in_linear_time_and_huge_numbers_are_unknown() -> None:
    from protocols.fibs.lines import parse_line

    # fuzz fibs-client hang-7981: "bob moves 21-24 1" + 64,000 spaces + "x" took 84 s
    event = _quick(parse_line, "bob moves 21-24 1" + SPACES[:64_000] + "x")
    assert isinstance(event, fev.Moves) and event.text.endswith("x")
    assert parse_line("bob moves 24-18 13-11 .").text == "24-18 13-11"
    assert parse_line("The only possible move is 24-23 .").text == "24-23"
    # fuzz fibs-client crash-417: int() of a 5000-digit count raised ValueError out of parse_line
    event = parse_line("** " + HUGE + " users heard you.")
    assert isinstance(event, fev.Unknown) and "digits" in event.reason


def test_move_text_of_megabytes_is_refused_at_once() -> None:
    from engine.notation import MoveSyntaxError, parse_gnubg

    # fuzz notation hang-6022: 200 KB of move text went through the character loop four times
    with pytest.raises(MoveSyntaxError, match="more than 1000 characters"):
        _quick(parse_gnubg, "24/18 " * 40_000, limit=0.05)
