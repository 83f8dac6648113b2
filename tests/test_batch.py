"""`moves/eval/hint --batch`: every bad line is answered {"error": ...} naming the problem, and the loop goes on."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands._output import RequestError, batch, parse_request

START = "4HPwATDgc/ABMA"
GOOD_MOVES = json.dumps({"id": START, "dice": [6, 2]})


def _with(fields: str) -> str:
    """A request line for the starting position with more fields, written as JSON text."""
    return '{"id": "' + START + '"' + (", " + fields if fields else "") + "}"


# (line, words the error must contain): each would once end the loop with a traceback or answer nonsense
BAD_ANY_LINES = [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"id": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
    ('{"id": 12}', "'id' must be a string"),
    ('{"id": null}', "'id' must be a string"),
    ('{"id": {"a": 1}}', "'id' must be a string"),
    ("{}", "missing field 'id'"),
    ("[1, 2]", "must be a JSON object, not a list"),
    ('"text"', "must be a JSON object"),
    ("{", "not JSON"),
    ('{"id": "' + "x" * 100_000 + '"}', "at most 200 characters"),
    (_with('"x": ' + "1" * 5000), "too many digits"),
]
BAD_EVAL_LINES = [
    *BAD_ANY_LINES,
    (_with('"plies": 1e999'), "'plies' must be an integer in 0..3, not inf"),
    (_with('"plies": -1e999'), "not -inf"),
    (_with('"plies": NaN'), "NaN is not a JSON number"),
    (_with('"plies": Infinity'), "Infinity is not a JSON number"),
    (_with('"plies": -1'), "'plies' must be an integer in 0..3, not -1"),
    (_with('"plies": 99999999999999999999999'), "not a huge integer"),
    (_with('"plies": 1' + "0" * 5000), "too many digits"),
    (_with('"plies": 1.5'), "not 1.5"),
    (_with('"plies": 2.0'), "not 2.0"),
    (_with('"plies": true'), "not true"),
    (_with('"plies": "1"'), "'plies' must be an integer"),
    (_with('"ply": 2'), "unknown field 'ply'"),
    ('{"id": "//////////////"}', "position ID"),
]

BAD_HINT_LINES = [
    *BAD_EVAL_LINES[:-1],
    (_with('"dice": "62", "level": 5'), "'level' must be a string"),
    (_with('"dice": "62", "level": ["expert"]'), "'level' must be a string"),
    (_with('"dice": "62", "level": "plies=1,noise=nan"'), "noise must be a finite number"),
    (_with('"dice": "62", "level": "plies=99"'), "plies must be 0..3"),
    (_with('"dice": "62", "level": "plies=' + "9" * 150 + '"'), "plies must be 0..3"),
    (_with('"dice": "62", "n": 1e999'), "'n' must be an integer in 1..10000, not inf"),
    (_with('"dice": "62", "n": 0'), "'n' must be an integer"),
    (_with('"dice": "62", "n": -3'), "'n' must be an integer"),
    (_with('"dice": [true, true]'), "two numbers in 1..6"),
    (_with('"dice": [6.0, 2]'), "two numbers in 1..6"),
    (_with('"dice": "99"'), "two numbers in 1..6"),
    (_with('"dice": {"a": 1}'), "dice must be a string"),
    (_with('"dice": ' + "[" * 900 + "]" * 900), "two numbers in 1..6"),
    (_with(""), "no dice given"),
]

BAD_MOVES_LINES = [
    *BAD_ANY_LINES,
    ('{"id": "//////////////", "dice": "62"}', "position ID"),
    (_with(""), "missing field 'dice'"),
    (_with('"dice": 99'), "two numbers in 1..6"),
    (_with('"dice": [6, 2, 1]'), "two numbers in 1..6"),
    (_with('"dice": [7, 2]'), "two numbers in 1..6"),
    (_with('"dice": [6, 2], "plies": 1'), "unknown field 'plies'"),
]


def _run(argv: list[str], lines: list[str | bytes], monkeypatch: pytest.MonkeyPatch, capsys) -> list[dict]:
    data = b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc = main(argv)
    out = capsys.readouterr().out.splitlines()
    replies = [json.loads(line) for line in out]
    assert rc == (1 if any("error" in r for r in replies) else 0)
    return replies


def _check(replies: list[dict], cases: list[tuple[str, str]], good_first: bool) -> None:
    # the good line is answered, then one error per bad line, in order, each naming its line, and the loop
    # reaches the last (good) line again
    assert len(replies) == len(cases) + 2
    if good_first:
        assert "error" not in replies[0] and "error" not in replies[-1]
    for number, (reply, (_, words)) in enumerate(zip(replies[1:-1], cases, strict=True), 2):
        assert "error" in reply, reply
        assert words in reply["error"], (words, reply)
        assert reply["line"] == number
        assert "internal" not in reply


def test_moves_batch_answers_every_bad_line(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    lines = [GOOD_MOVES, *[c[0] for c in BAD_MOVES_LINES], GOOD_MOVES]
    replies = _run(["moves", "--batch"], lines, monkeypatch, capsys)
    _check(replies, BAD_MOVES_LINES, True)
    assert replies[0]["moves"][0] == {"move": "24/22 24/18", "position_id": "4HPwQQjgc/ABMA"}
    assert replies[0]["id"] == START


def test_eval_batch_answers_every_bad_line(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    good = json.dumps({"id": START, "plies": 0})
    replies = _run(["eval", "--batch"], [good, *[c[0] for c in BAD_EVAL_LINES], good], monkeypatch, capsys)
    _check(replies, BAD_EVAL_LINES, True)
    assert replies[0]["plies"] == 0 and 0.4 < replies[0]["probs"]["win"] < 0.6


def test_hint_batch_answers_every_bad_line(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    good = json.dumps({"id": START, "dice": "62", "n": 2})
    replies = _run(["hint", "--batch"], [good, *[c[0] for c in BAD_HINT_LINES], good], monkeypatch, capsys)
    _check(replies, BAD_HINT_LINES, True)
    assert len(replies[0]["moves"]) == 2 and replies[0]["moves"][0]["move"] == "24/18 13/11"


def test_bytes_that_are_not_utf8_are_one_bad_line(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    replies = _run(["moves", "--batch"], [GOOD_MOVES, b"\xff\xfe{}", GOOD_MOVES], monkeypatch, capsys)
    assert "not UTF-8" in replies[1]["error"] and replies[1]["line"] == 2
    assert replies[0] == replies[2]


def test_an_unexpected_exception_is_answered_and_the_loop_goes_on(capsys) -> None:
    def handle(req: dict) -> dict:
        if req.get("boom"):
            raise IndexError("a bug")
        return {"ok": True}

    out = io.StringIO()
    rc = batch(handle, ['{"boom": 1}\n', "\n", '{"boom": 0}\n'], out)
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert rc == 1
    assert replies[0] == {"error": "internal error: IndexError: a bug", "line": 1, "internal": True}
    assert replies[1] == {"ok": True}
    assert "IndexError" in capsys.readouterr().err


def test_parse_request_raises_only_request_error() -> None:
    for line in ("[" * 10**6, '{"a": 1e999}', "NaN", "-Infinity", "1" * 5000, "\ud800"):
        try:
            request = parse_request(line)
        except RequestError:
            continue
        assert isinstance(request, dict)  # {"a": inf} is an object; its fields are checked later


def test_subprocess_batch_exits_cleanly_on_hostile_input(tmp_path: Path) -> None:
    data = "\n".join([GOOD_MOVES, "[" * 200_000, _with('"dice": [1e999, 2]'), GOOD_MOVES])
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "moves", "--batch"],
        input=data.encode(),
        capture_output=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.stderr == b""
    assert done.returncode == 1  # some lines failed, none ended the loop
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [("error" in r) for r in replies] == [False, True, True, False]
