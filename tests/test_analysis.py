"""Match analysis (engine/analysis.py), `gammond analyse`, the background analysis and levels by FIBS rating."""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import os
import shutil
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from bot.analysis_jobs import SUFFIX, BackgroundAnalysis, analysis_path
from bot.archive import Archive
from bot.cli import main
from bot.commands.analyse import PLAYER_KEYS, Progress, analyse_file, report_text
from bot.config import ConfigError, level_notes, load
from bot.fanout import run_many
from engine.analyser import Analyser
from engine.analysis import (
    _WEIGHTS,
    _RollTable,
    analyse_record,
    chequer_rating_loss,
    cube_rating_loss,
    fibs_rating,
    luck_mark,
    luck_rating,
    rating_word,
    skill_mark,
)
from engine.cube import CubeInfo
from engine.levels import LEVELS, LevelError, level_for_rating, noise_for_rating, parse_level
from engine.moves import Move
from engine.position import Position
from engine.record import RecordBuilder

SHARED = Path(os.environ.get("GAMMOND_SHARED", Path(__file__).resolve().parents[2] / "shared"))
SAMPLE = SHARED / "samples" / "mat" / "gnubg_selfplay_3p.mat"
needs_sample = pytest.mark.skipif(
    not SAMPLE.exists(), reason=f"{SAMPLE} (the shared reference pack) is absent"
)


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser.default()


# -- gnubg's definitions --------------------------------------------------------------------------------------


def test_fibs_rating_is_gnubgs_figure() -> None:
    # gnubg's own statistics of a 7-point match (shared/tools/gnubg/README.md section 3): chequer 31.24 mEMG per
    # unforced move, cube 45.32 mEMG per close decision -> rating 1625.49, losses 388.76 and 35.75.
    assert fibs_rating(0.03124, 0.04532, 7) == pytest.approx(1625.49, abs=0.05)
    assert fibs_rating(0.0, 0.0, 3) == 2050.0
    assert chequer_rating_loss(0.03124, 7) == pytest.approx(388.76, abs=0.05)
    assert cube_rating_loss(0.04532, 7) == pytest.approx(35.75, abs=0.05)


def test_luck_rating_words_follow_gnubgs_thresholds() -> None:
    # gnubg rates the luck per move with its roll marks at a tenth of their size (0.06 / 0.03 EMG), strictly
    # beyond; its own report: +261.9 mEMG a move "Go to Las Vegas", +19.2 "None".
    rates = (0.2619, 0.0601, 0.06, 0.0301, 0.0192, -0.03, -0.0301, -0.06, -0.0601)
    assert [luck_rating(r) for r in rates] == [
        "Go to Las Vegas",
        "Go to Las Vegas",
        "Good dice, man!",
        "Good dice, man!",
        "None",
        "None",
        "Bad dice, man!",
        "Bad dice, man!",
        "Go to bed",
    ]


@pytest.mark.parametrize(
    ("memg", "word"),
    [
        (0.0, "Supernatural"),
        (1.99, "Supernatural"),
        (2.0, "World class"),
        (4.9, "World class"),
        (7.9, "Expert"),
        (11.9, "Advanced"),
        (17.9, "Intermediate"),
        (25.9, "Casual player"),
        (34.9, "Beginner"),
        (35.0, "Awful!"),
    ],
)
def test_rating_words_follow_gnubgs_thresholds(memg: float, word: str) -> None:
    assert rating_word(memg) == word


def test_marks_follow_gnubgs_thresholds() -> None:
    assert [skill_mark(x) for x in (0.04, 0.0401, 0.08, 0.0801, 0.16, 0.161)] == [
        "",
        "doubtful",
        "doubtful",
        "bad",
        "bad",
        "very bad",
    ]
    assert [luck_mark(x) for x in (0.61, 0.31, 0.2, -0.2, -0.31, -0.61)] == [
        "very lucky",
        "lucky",
        "",
        "",
        "unlucky",
        "very unlucky",
    ]


def test_luck_of_all_rolls_averages_to_zero(analyser: Analyser) -> None:
    pos = Position.from_id("4HPwATDgc/ABMA")
    table = _RollTable(analyser).best_by_roll([pos], [CubeInfo.money()])[0]
    luck = table - table @ _WEIGHTS
    assert abs(float(luck @ _WEIGHTS)) < 1e-12
    assert luck.max() > 0.05 and luck.min() < -0.05  # the rolls are not all alike


# -- a match analysed -----------------------------------------------------------------------------------------


def _blunder_record():  # type: ignore[no-untyped-def]
    b = RecordBuilder(5, ("Alice", "Bob"), match_id="t1")
    b.start_game((3, 1))  # Alice opens with 31
    b.add_move(0, Move(((24, 21), (21, 20))))  # instead of making her 5-point
    b.add_double(1)  # Bob doubles before his first roll: far too early
    b.add_drop(0)  # and Alice passes a trivial take
    return b.record()


def test_a_blunder_and_wrong_cube_actions_are_marked(analyser: Analyser) -> None:
    m = analyse_record(_blunder_record(), analyser, 0)
    move, double, drop = m.decisions
    assert move.kind == "move" and move.player == 0 and move.unforced
    assert move.best_move == "8/5 6/5" and move.move == "24/20"
    assert move.loss == pytest.approx(move.best_equity - move.equity)
    assert move.loss > 0.04 and move.mark == skill_mark(move.loss) != ""
    assert move.luck is not None and move.position_id == Position.initial().position_id
    assert double.kind == "double" and double.cube.error == "wrong-double-below-dp" and double.cube.loss > 0.1
    assert drop.kind == "pass" and drop.cube.error == "wrong-pass" and drop.cube.loss > 0.1
    alice, bob = m.stats()
    assert alice["unforced_moves"] == 1 and alice["cube_decisions"] == 1 and alice["passes"] == 1
    assert alice["overall_error_rate_memg"] == pytest.approx(
        1000 * (move.loss + drop.cube.loss) / 2, abs=0.01
    )
    assert bob["doubles"] == 1 and bob["cube_errors"]["wrong-double-below-dp"] == 1
    assert alice["actual_result"] < 0 < bob["actual_result"]  # Bob won the 1-point pass in a 5-point match


def test_text_report_has_gnubgs_rows(analyser: Analyser) -> None:
    # issue 28 item 18: gnubg's `show statistics match` also gives the unmarked moves and rolls, the luck
    # rating, what each kind of cube error cost and the FIBS rating lost to chequer and cube errors.
    m = analyse_record(_blunder_record(), analyser, 0)
    obj = {"file": "t.mat", "format": "mat", **m.to_json()}
    alice, bob = obj["players"]
    move, double, drop = m.decisions
    assert alice["unmarked_moves"] == 0 and alice["unmarked_rolls"] == (0 if move.luck_mark else 1)
    assert bob["cube_error_kinds_emg"]["wrong-double-below-dp"] == pytest.approx(double.cube.loss, abs=1e-5)
    assert alice["cube_error_kinds_emg"]["wrong-pass"] == pytest.approx(drop.cube.loss, abs=1e-5)
    assert alice["cube_error_kinds_emg"]["wrong-take"] == 0.0
    assert alice["chequer_rating_loss"] == pytest.approx(chequer_rating_loss(move.loss, 5), abs=0.01)
    assert alice["fibs_rating"] == pytest.approx(
        2050 - alice["chequer_rating_loss"] - alice["cube_rating_loss"], abs=0.02
    )
    text = report_text(obj)

    def cells(label: str) -> list[str]:
        line = next(x for x in text.splitlines() if x.startswith(label + " "))
        return [line[40:62].strip(), line[62:].strip()]

    assert cells("Unmarked moves") == ["0", "0"]
    assert cells("Rolls unmarked") == [str(alice["unmarked_rolls"]), "0"]
    assert cells("Luck rating") == [luck_rating(move.luck), "-"]  # one roll each; Bob never rolled
    u = drop.cube_loss_unnormalised
    assert cells("Wrong passes (EMG (MWC))") == [f"1 ({-drop.cube.loss:+.3f} ({-100 * u:+.3f}%))", "0"]
    assert cells("Wrong doubles below DP (EMG (MWC))")[1].startswith("1 (-")
    assert cells("Chequerplay errors rating loss") == [f"{alice['chequer_rating_loss']:.1f}", "0.0"]
    assert cells("Cube errors rating loss") == [
        f"{alice['cube_rating_loss']:.1f}",
        f"{bob['cube_rating_loss']:.1f}",
    ]


@needs_sample
def test_sample_counts_and_luck_agree_with_gnubgs_own_analysis() -> None:
    # gnubg 1.07's analysis of this file (analyse_mat.sh, any depth): total moves 63/63, unforced 52/49,
    # close or actual cube decisions 8/2, luck rate 15.44 / -0.12 mEMG, the match won by BotA.
    obj = analyse_file(str(SAMPLE), plies=0)
    a, b = obj["players"]
    assert (a["total_moves"], b["total_moves"]) == (63, 63)
    assert (a["unforced_moves"], b["unforced_moves"]) == (52, 49)
    assert (a["cube_decisions"], b["cube_decisions"]) == (8, 2)
    # gnubg counts forced moves as unmarked: 63/63 unmarked moves; its rolls: 59 + 4 and 60 + 3 marked
    assert a["unmarked_moves"] == 63 - sum(n for k, n in a["marked_moves"].items() if k != "none")
    assert a["unmarked_rolls"] + sum(a["luck_marked_rolls"].values()) == 63
    assert abs(a["luck_rate_memg"] - 15.44) < 3.0 and abs(b["luck_rate_memg"] + 0.12) < 3.0
    assert a["actual_result"] == pytest.approx(0.5) and b["actual_result"] == pytest.approx(-0.5)
    assert set(PLAYER_KEYS) <= set(a)
    d = a["decisions"][0]
    for key in (
        "position_id",
        "match_id",
        "dice",
        "move",
        "best_move",
        "loss",
        "mark",
        "luck",
        "luck_mark",
        "probs",
        "p0_win",
        "cube",
    ):
        assert key in d
    assert len(obj["games"]) == 3 and set(PLAYER_KEYS) - {"decisions"} <= set(obj["games"][0]["players"][0])


@needs_sample
def test_cli_json_one_object_per_file_and_a_broken_file_is_an_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    broken = tmp_path / "broken.mat"
    broken.write_text("hello world\n")  # not a match file
    rc = main(["analyse", "--plies", "0", "--json", "--jobs", "1", str(SAMPLE), str(broken)])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 1 and len(lines) == 2
    good, bad = (json.loads(x) for x in lines)
    assert [p["name"] for p in good["players"]] == ["BotA", "BotB"]
    assert bad["file"] == str(broken) and bad["error"]
    rc = main(["analyse", "--plies", "0", str(SAMPLE)])
    text = capsys.readouterr().out
    assert rc == 0 and "Error based abs. FIBS rating" in text and "Overall rating" in text


def _square(x: int) -> dict[str, int]:
    return {"x": x, "y": x * x, "pid": os.getpid()}


def _power(x: int, exp: int) -> dict[str, int]:
    return {"y": x**exp}


def test_fanout_keeps_order_over_processes() -> None:
    here = list(run_many(_square, [1, 2, 3, 4], jobs=1))
    apart = list(run_many(_square, [1, 2, 3, 4], jobs=2))
    assert [r["y"] for r in apart] == [r["y"] for r in here] == [1, 4, 9, 16]
    assert {r["pid"] for r in apart} != {os.getpid()}


def test_fanout_over_a_local_ray_instance() -> None:
    pytest.importorskip(
        "ray", reason="ray is an optional extra (pip install 'gammond[ray]'); not installed here"
    )
    out = list(run_many(partial(_power, exp=3), [3, 1, 2], ray_address="local"))  # as the commands call it
    assert [r["y"] for r in out] == [27, 1, 8]


# -- background analysis --------------------------------------------------------------------------------------


@needs_sample
def test_archived_match_gets_its_analysis_beside_it(tmp_path: Path) -> None:
    archive = Archive(tmp_path)
    jobs = BackgroundAnalysis(plies=0)
    archive.on_stored = jobs.submit
    try:
        path = archive.store_text("k1", "m.mat", SAMPLE.read_text())
        assert path is not None
        jobs.join()
        data = json.loads(analysis_path(path).read_text())
        assert data["plies"] == 0 and [p["name"] for p in data["players"]] == ["BotA", "BotB"]
        assert not list(tmp_path.glob(".*.tmp"))
        # a file that was archived before the analysis existed is found by the backfill, once
        shutil.copy(SAMPLE, tmp_path / "old.mat")
        assert jobs.backfill(tmp_path) == 1
        jobs.join()
        assert (tmp_path / ("old.mat" + SUFFIX)).exists() and jobs.backfill(tmp_path) == 0
    finally:
        jobs.shutdown()


def test_unreadable_archive_file_gets_an_error_analysis(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mat"
    bad.write_text("not a match\n")
    jobs = BackgroundAnalysis(plies=0)
    try:
        assert jobs.submit(bad) and not jobs.submit(tmp_path / ("bad.mat" + SUFFIX))
        jobs.join()
        assert "error" in json.loads(analysis_path(bad).read_text())
    finally:
        jobs.shutdown()


# -- levels by FIBS rating ------------------------------------------------------------------------------------


def test_fibs_level_interpolates_noise_between_named_levels() -> None:
    adv, inter = LEVELS["advanced"].chequer_noise, LEVELS["intermediate"].chequer_noise
    lv = parse_level("fibs:1650")
    assert lv.plies == 0 and adv < lv.chequer_noise < inter and lv.cube_noise == lv.chequer_noise
    ratings = np.linspace(900, 2200, 27)
    noise = [noise_for_rating(r) for r in ratings]
    assert all(a >= b for a, b in itertools.pairwise(noise))  # stronger asks less noise
    assert level_for_rating(2200).chequer_noise == 0.0
    assert lv.note == ""


def test_a_fibs_rating_outside_the_measured_levels_says_it_is_clamped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 28 item 18: fibs:2400 played as expert and fibs:900 as beginner without a word
    high, low = parse_level("fibs:2400"), parse_level("fibs:900")
    assert high.chequer_noise == 0.0 and "above the strongest measured level" in high.note
    assert "plays as expert" in high.note
    assert low.chequer_noise == LEVELS["beginner"].chequer_noise and "below the weakest" in low.note
    assert high == dataclasses.replace(high, note="")  # the note does not make it another level
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[engine]\nlevel = "fibs:2400"\n[engine.opponent_levels]\nbob = "fibs:1650"\ncarl = "fibs:900"\n'
    )
    notes = level_notes(load(cfg, environ={}))
    assert len(notes) == 2 and notes[0].startswith("engine.level: fibs:2400 is above")
    assert notes[1].startswith("engine.opponent_levels.carl: fibs:900 is below")
    # the hint's reply says so too
    main(["hint", "--level", "fibs:2400", "--json", "4HPwATDgc/ABMA", "31"])
    reply = json.loads(capsys.readouterr().out)
    assert "above the strongest measured level" in reply["note"]
    with pytest.raises(LevelError, match="FIBS rating"):
        parse_level("fibs:strong")
    with pytest.raises(LevelError, match="outside"):
        parse_level("fibs:99999")


def test_config_takes_a_fibs_rating_per_opponent_too(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[engine]\nlevel = "fibs:1650"\n[engine.opponent_levels]\nalice = "fibs:1400"\n')
    c = load(cfg, environ={})
    assert parse_level(c.engine.level).chequer_noise > 0
    assert (
        parse_level(c.engine.opponent_levels["alice"]).chequer_noise
        > parse_level(c.engine.level).chequer_noise
    )
    cfg.write_text('[engine]\nlevel = "fibs:abc"\n')
    with pytest.raises(ConfigError, match=r"engine\.level"):
        load(cfg, environ={})


def test_the_analysis_child_ends_when_the_daemon_is_killed(tmp_path: Path) -> None:
    # A daemon killed with -9 cannot terminate its analysis child; orphans used to run on, and every restart's
    # backfill started one more beside them (dozens of 2-ply analyses after a crash campaign).
    import signal
    import subprocess
    import sys
    import time

    match = tmp_path / "m.mat"
    shutil.copy(next((Path(__file__).parent / "data" / "archive").glob("*.mat")), match)
    parent_code = (
        "import sys, time\n"
        "from bot.analysis_jobs import BackgroundAnalysis\n"
        "ba = BackgroundAnalysis(plies=2)\n"
        f"ba.submit({str(match)!r})\n"
        "while ba._child is None: time.sleep(0.05)\n"
        "print(ba._child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    root = Path(__file__).resolve().parent.parent
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code], cwd=root, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(1.0)  # the child is analysing (a 2-ply analysis of this match takes far longer)

    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state != "Z"

    assert alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    still = alive(child)
    if still:
        os.kill(child, signal.SIGKILL)
    assert not still, "the analysis child outlived its killed daemon"
    assert not analysis_path(match).exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@needs_sample
def test_cli_progress_on_a_terminal_errors_on_stderr_and_a_cut_file_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 28 item 15: no progress on a terminal; errors on stdout naming the file twice. Item 16: a .mat cut
    # off mid-line was analysed with exit 0 and no warning.
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(Progress, "INTERVAL", 0.0)  # every decision: a 0-ply analysis is quick
    assert main(["analyse", "--plies", "0", str(SAMPLE)]) == 0
    shown = terminal.getvalue()
    assert f"\r{SAMPLE}: decisions analysed: 0/" in shown and " left" in shown
    assert shown.endswith("\r") and "Overall rating" in capsys.readouterr().out  # the line is cleared
    broken = tmp_path / "broken.mat"
    broken.write_text("hello world\n")
    before = len(terminal.getvalue())
    assert main(["analyse", "--plies", "0", "--quiet", str(broken)]) == 1
    assert capsys.readouterr().out == ""
    said = terminal.getvalue()[before:]
    assert said.count(str(broken)) == 1 and "N point match" in said
    text = SAMPLE.read_text()
    cut = tmp_path / "cut.mat"
    cut.write_text(text[: text.index(")", text.index("Game 2") + 200) + 4])  # inside a row of game 2
    before = len(terminal.getvalue())
    assert main(["analyse", "--plies", "0", "--json", "--quiet", str(cut)]) == 1
    obj = json.loads(capsys.readouterr().out)
    assert "cut short" in obj["warning"] and len(obj["games"]) == 2
    assert f"warning: {cut}: the file stops in the middle of a line" in terminal.getvalue()[before:]
