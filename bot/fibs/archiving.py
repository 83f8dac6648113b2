"""Writing a stored FIBS match to the archive: once per match key, and again after a crash left it unwritten."""

from __future__ import annotations

from typing import Any

from bot.archive import Archive, archive_name
from bot.fibs.match import MatchTracker, TrackerError
from bot.state import MatchStatus, StateStore, StoredMatch
from engine.errors import EngineError
from engine.formats.mat import write_mat


def render_mat(tracker: MatchTracker) -> str | None:
    """The .mat text of a tracker's record (None: no game was seen from its start)."""
    record = tracker.record()
    if record is None or not record.games:
        return None
    return write_mat(record)


def archive_stored(archive: Archive, stored: StoredMatch, log: Any = None) -> str:
    """Write ``stored`` to the archive (exactly once per match key); returns the file name ("" if none)."""
    tracker = MatchTracker.restore(stored.snapshot)
    text = render_mat(tracker)
    if text is None:
        if log is not None:
            log.warning("no record to archive", match=stored.key)
        return ""
    started = tracker.started
    name = archive_name(started, stored.server, tracker.names[0], tracker.names[1], tracker.length)
    path = archive.store_text(stored.key, name, text)
    return path.name if path is not None else archive.keys().get(stored.key, name)


def recover_unarchived(store: StateStore, archive: Archive, log: Any = None) -> int:
    """Archive the matches that ended before a crash let them reach the archive; returns how many."""
    count = 0
    for stored in store.finished_unarchived():
        if stored.snapshot.get("protocol") == "bgammon":
            continue  # the bgammon bot's own (bot/bgammon/persist.py), recovered when it starts
        try:
            name = archive_stored(archive, stored, log)
        except (TrackerError, EngineError, OSError) as exc:  # kept FINISHED: tried again at the next start
            if log is not None:
                log.error("cannot archive a finished match", match=stored.key, error=str(exc))
            continue
        store.set_status(stored.key, MatchStatus.ARCHIVED, name)
        count += 1
    return count
