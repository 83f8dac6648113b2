"""StateStore.commit_later: the match writes of one turn of the event loop go in one transaction, committed when
the loop comes round or at once before a bot sends a command (bot/state.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from bot.state import DB_NAME, MatchStatus, StateStore, StoredMatch


def row(key: str, opponent: str = "alice") -> StoredMatch:
    return StoredMatch(
        key=key,
        server="local",
        player="gammond",
        opponent=opponent,
        length=3,
        status=MatchStatus.ACTIVE,
        snapshot={"steps": [1, 2, 3]},
        started="2026-11-28T15:00:00",
    )


def seen_by_another_process(folder: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(folder / DB_NAME)
    try:
        return sorted(db.execute("SELECT key, status FROM matches").fetchall())
    finally:
        db.close()


def test_writes_of_one_turn_are_committed_together_when_the_loop_comes_round(tmp_path: Path) -> None:
    scheduled: list[Callable[[], None]] = []
    store = StateStore.open(tmp_path)
    store.commit_later(scheduled.append)
    store.put(row("m1"))
    store.put(row("m2", "bob"))
    store.set_status("m1", MatchStatus.FINISHED)
    assert len(scheduled) == 1  # one commit for the turn, not one per write
    assert store.get("m1") is not None and store.get("m1").status == MatchStatus.FINISHED  # type: ignore[union-attr]
    assert seen_by_another_process(tmp_path) == []  # not committed yet
    scheduled.pop()()
    assert seen_by_another_process(tmp_path) == [("m1", "finished"), ("m2", "active")]
    store.put(row("m3"))  # the next turn opens the next transaction
    assert len(scheduled) == 1
    store.close()  # close commits what is pending; the commit scheduled before it then finds nothing to do
    scheduled.pop()()
    assert [key for key, _ in seen_by_another_process(tmp_path)] == ["m1", "m2", "m3"]


def test_a_command_commits_at_once(tmp_path: Path) -> None:
    scheduled: list[Callable[[], None]] = []
    store = StateStore.open(tmp_path)
    store.commit_later(scheduled.append)
    store.put(row("m1"))
    store.commit()  # what a bot does before it sends a command
    assert seen_by_another_process(tmp_path) == [("m1", "active")]
    scheduled.pop()()  # the turn's own commit: nothing left
    store.commit()
    store.close()


def test_without_commit_later_each_write_commits_by_itself(tmp_path: Path) -> None:
    store = StateStore.open(tmp_path)
    store.put(row("m1"))
    assert seen_by_another_process(tmp_path) == [("m1", "active")]
    store.close()
