"""The command line as a new user meets it (issue 16, item 10): --version, `position` with an XGID and its text
board, the help of `selfplay` and `fibs-parse`, `run --web-port`, `fibs-parse` on direction-prefixed logs."""

from __future__ import annotations

import io
import json

import pytest

from bot.cli import build_parser, main
from bot.commands.run import overrides
from engine.position import BAR, Position
from engine.xgid import format_xgid, parse_xgid
from protocols.fibs.cli_parse import detect_format, run
from tests.samples import sample_path

START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:5:10"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("gammond ") and out.split()[1][0].isdigit()


def test_run_takes_a_web_port_beside_the_port() -> None:
    args = build_parser().parse_args(["run", "--port", "4000", "--web-port", "4001"])
    assert overrides(args) == {"server.port": 4000, "server.web_port": 4001}
    assert overrides(build_parser().parse_args(["run", "--web-port", "0"])) == {"server.web_port": 0}


def test_position_reads_an_xgid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["position", START_XGID, "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    state = parse_xgid(START_XGID)
    assert obj["position_id"] == state.position.position_id == "4HPwATDgc/ABMA"
    assert obj["match_id"] == state.match_key.encode()
    assert obj["match"]["length"] == 5 and sorted(obj["match"]["dice"]) == [2, 5]
    # Without the prefix too (the ten fields), and the same as gnubg's IDs of that state.
    # (an XGID's board starts with "-" when the bar is empty: after "--" argparse takes it as the ID)
    assert main(["position", "--json", "--", START_XGID.removeprefix("XGID=")]) == 0
    assert json.loads(capsys.readouterr().out) == obj
    assert format_xgid(state) == START_XGID


def test_position_errors_name_the_forms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["position", "4HPwATDgc/ABMA:cAkZAAAAAAAA:x"]) == 2
    err = capsys.readouterr().err
    assert "XGID" in err and "POSID:MATCHID" in err and err.count("\n") == 1
    assert main(["position", START_XGID.rsplit(":", 1)[0]]) == 2  # nine fields
    assert "XGID" in capsys.readouterr().err


def test_position_text_prints_dice_high_first(capsys: pytest.CaptureFixture[str]) -> None:
    # Match ID cAkZAAAAAAAA holds the dice as 2 then 6.
    assert main(["position", "4HPwATDgc/ABMA:cAkZAAAAAAAA", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["match"]["dice"] == [2, 6]
    assert main(["position", "4HPwATDgc/ABMA:cAkZAAAAAAAA"]) == 0
    out = capsys.readouterr().out
    assert "dice 62" in out and "dice 26" not in out
    assert main(["position", "4HPwATDgc/ABMA:cAkAAAAAAAAA"]) == 0  # no dice yet
    assert "to roll" in capsys.readouterr().out


def test_text_board_has_bar_and_home_separators() -> None:
    lines = str(Position.initial()).splitlines()
    assert lines[0] == "  13  14  15  16  17  18 | BAR|  19  20  21  22  23  24 | OFF"
    assert lines[1] == "  5X   .   .   .  3O   . |    |  5O   .   .   .   .  2X |"
    assert lines[2] == "  5O   .   .   .  3X   . |    |  5X   .   .   .   .  2O |"
    assert lines[3] == "  12  11  10   9   8   7 | BAR|   6   5   4   3   2   1 | OFF"
    assert lines[-1] == "Position ID: 4HPwATDgc/ABMA"
    # Chequers on the bar and borne off are drawn in their columns; a stack of 10+ keeps its letter.
    me = [0] * 25
    me[BAR], me[0] = 2, 11  # 2 on the bar, 11 on the ace point, 2 off
    opp = [0] * 25
    opp[BAR], opp[5] = 1, 3  # 1 on the bar, 3 on its 6-point (our 19), 11 off
    lines = str(Position(me, opp)).splitlines()
    assert lines[1] == "   .   .   .   .   .   . |  2X|  3O   .   .   .   .   . | 11O"
    assert lines[2] == "   .   .   .   .   .   . |  1O|   .   .   .   .   . 11X |  2X"
    assert lines[4] == "X on roll: pips 61, bar 2, off 2   O: pips 43, bar 1, off 11"


def test_selfplay_and_fibs_parse_help_document_options_and_formats(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["selfplay", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal's width
    for needed in ("--matches N", "--length POINTS", "money session", "worldclass", "plies=1", "--seed",
                   ".mat", "--json", '"score"'):  # fmt: skip
        assert needed in text, needed
    with pytest.raises(SystemExit):
        main(["fibs-parse", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needed in ("--format", "[alice <]", "[alice >]", '"event"', "position_id", "match_id", "Sent"):
        assert needed in text, needed


def test_fibs_parse_reads_direction_prefixed_logs() -> None:
    log = (
        b"# a comment line\n\n"
        b"[alice <] login: \n"
        b"[alice >] login pyclient 1008 alice secret1\n"
        b"[alice <] 1 alice 1795315534 127.0.0.1\n"
        b"[bob <] 1 bob 1795315534 127.0.0.1\n"
        b"[alice <] bob moves 24-18 13-11 .\n"
    )
    out = io.StringIO()
    assert run(io.BytesIO(log), out) == 0
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(o["event"], o["client"]) for o in objects] == [
        ("LoginPrompt", "alice"),
        ("Sent", "alice"),
        ("Welcome", "alice"),
        ("Welcome", "bob"),
        ("Moves", "alice"),
    ]
    assert objects[1]["raw"] == "login pyclient 1008 alice secret1"
    assert objects[3]["raw"] == "1 bob 1795315534 127.0.0.1"
    assert objects[4]["move"] == "24/18 13/11"
    # The same lines unprefixed are the raw form; forcing a form is possible too.
    assert detect_format(b"# x\n[alice <] 1 alice 1 h\n", final=False) == "prefixed"
    assert detect_format(b"1 alice 1 h\r\n", final=False) == "raw"
    assert detect_format(b"[alice <] 1 ali", final=False) is None
    assert detect_format(b"", final=True) == "raw"
    out = io.StringIO()
    run(io.BytesIO(b"[alice <] 1 alice 1795315534 127.0.0.1\n"), out, "raw")
    assert json.loads(out.getvalue())["event"] != "Welcome"


def test_fibs_parse_reads_a_shared_style_transcript() -> None:
    data = sample_path("fibs", "baldlies-login-invite-join-watch.txt").read_bytes()
    out = io.StringIO()
    run(io.BytesIO(data), out)
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    clients = {o.get("client") for o in objects}
    assert {"alice", "bob", "carol"} <= clients and None not in clients
    boards = [o for o in objects if o["event"] == "Board"]
    assert boards and all(o["position_id"] for o in boards)
    assert any(o["event"] == "Sent" and o["raw"].startswith("invite bob") for o in objects)
    assert not any(o["event"] == "Unprefixed" for o in objects)


def test_hint_eval_and_analyse_take_the_grandmaster_level(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # hint: 3-ply with gnubg's "large" filters; the opening 31's 8/5 6/5 is searched to 3 plies
    assert main(["hint", "4HPwATDgc/ABMA", "31", "--level", "grandmaster", "--json", "-n", "3"]) == 0
    hint = json.loads(capsys.readouterr().out)
    assert hint["moves"][0]["move"] == "8/5 6/5" and hint["moves"][0]["plies"] == 3
    # eval: the level's cube depth
    assert main(["eval", "4HPwATDgc/ABMA:cAkAAAAAAAAA", "--level", "grandmaster", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plies"] == 3
    # analyse: the level's depth and filters reach every file's analysis
    import bot.commands.analyse as analyse

    seen: list[dict[str, object]] = []

    def fake_run_many(work, files, jobs, ray):  # type: ignore[no-untyped-def]
        seen.append(dict(work.keywords))
        return iter(())

    monkeypatch.setattr(analyse, "run_many", fake_run_many)
    assert main(["analyse", "--level", "grandmaster", "some.mat"]) == 0
    assert seen[0]["plies"] == 3 and seen[0]["move_filter"] == "large"
    assert main(["analyse", "--plies", "3", "some.mat"]) == 0
    assert seen[1]["plies"] == 3 and seen[1]["move_filter"] == "normal"
    with pytest.raises(SystemExit):
        main(["analyse", "--plies", "4", "some.mat"])
