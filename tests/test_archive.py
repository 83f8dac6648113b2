"""The archive: atomic .mat files, exactly once per match, even across a crash between write and rename."""

from __future__ import annotations

import datetime as dt
import os
import random
from pathlib import Path

import pytest

from bot.archive import Archive, archive_name, safe
from bot.selfplay import play_match
from engine.formats.mat import read_mat


def _record(seed: int = 1):  # type: ignore[no-untyped-def]
    from engine.analyser import Analyser
    from engine.levels import LEVELS
    from engine.player import Player

    analyser = Analyser.default()
    players = (Player(analyser, LEVELS["expert"], random.Random(1)),) * 2
    return play_match(players, 1, seed, ("gammond", "alice"), site="fibs.com", match_id=f"m-{seed}")


def test_name_sorts_by_time_and_says_who_played() -> None:
    when = dt.datetime(2026, 11, 22, 15, 30, tzinfo=dt.UTC)
    assert (
        archive_name(when, "fibs.com", "gammond", "alice", 7)
        == "2026-11-22T1530Z_fibs.com_gammond-vs-alice_7p.mat"
    )
    assert archive_name(when, "x", "a b/c", "..", 0).endswith("_x_a-b-c-vs-unknown_money.mat")
    assert safe("../../etc/passwd") == "etc-passwd"


def test_store_writes_a_readable_match_once(tmp_path: Path) -> None:
    record = _record()
    archive = Archive(tmp_path)
    path = archive.store(record)
    assert path is not None and path.exists()
    assert read_mat(path.read_text()).final_score == record.final_score
    assert archive.store(record) is None  # the same match again: nothing written
    assert len(list(tmp_path.glob("*.mat"))) == 1
    assert archive.contains("m-1")


def test_crash_between_write_and_rename_leaves_no_file_and_restart_writes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record(2)
    real_replace = os.replace

    def crash(src, dst):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt("killed between write and rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        Archive(tmp_path).store(record)
    assert not list(tmp_path.glob("*.mat"))  # the whole file or none: none
    monkeypatch.setattr(os, "replace", real_replace)

    restarted = Archive(tmp_path)
    assert restarted.cleanup() == 1  # the temporary file the crash left
    path = restarted.store(record)
    assert path is not None and read_mat(path.read_text()).final_score == record.final_score
    assert restarted.store(record) is None
    assert len(list(tmp_path.glob("*.mat"))) == 1


def test_keys_with_line_breaks_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Archive(tmp_path).store_text("a\nb", "x.mat", "text")
