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
