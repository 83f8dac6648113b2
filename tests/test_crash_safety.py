"""Crash safety of the embedded server and the daemon (issue 15): the store as the one truth of a running
match, the archive written exactly once, private files, login throttling across connections, clean start-up
errors and the shutdown notice."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

from bot.server.store import Store
from protocols.fibs import events as ev
from tests.test_fibs_server import Harness, move_random, opening, start_match


def _saved_gnubg_id(path: Path) -> str | None:
    """What a crash right now would leave: the saved row as another process reads it from the file."""
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT gnubg_id FROM saved").fetchone()
    finally:
        db.close()
    return None if row is None else str(row[0])


async def test_every_action_is_stored_before_anyone_hears_of_it(tmp_path: Path) -> None:
    """A kill -9 at any instant resumes from what the players were shown: the saved row already holds the
    state each echoed action led to (it used to be written only every 5 s)."""
    path = tmp_path / "server.sqlite3"
    h = Harness(path)
    await h.server.start()
    try:
        ann, bob = [await h.client(n) for n in ("ann", "bob")]
        await start_match(ann, bob, 5)
        first, second = await opening(ann, bob)
        (table,) = h.server.tables.values()
        assert _saved_gnubg_id(path) == table.state.gnubg_id  # the opening roll, before the first move
        rng = random.Random(3)
        for _ in range(4):
            await move_random(first, rng)
            await second.expect(ev.Moves)
            assert _saved_gnubg_id(path) == table.state.gnubg_id
            second.send("roll")
            await second.expect(lambda e: isinstance(e, ev.Rolls) and e.player == ev.YOU)
            assert _saved_gnubg_id(path) == table.state.gnubg_id  # the roll too: a resume shows the same dice
            first, second = second, first
    finally:
        await h.close()
    store = Store(path)
    assert len(store.saved_matches()) == 1
    store.close()
