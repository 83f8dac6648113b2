"""Writing a bgammon match to the archive as ``.mat``: once per match key, and as far as it goes when the tracker
could not follow it to the end or the match was left before its end (marked partial, with the reason in its
comment)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.archive import Archive, archive_name
from bot.bgammon.match import MatchTracker
from engine.errors import EngineError
from engine.formats.mat import write_mat
from protocols.bgammon.board import BoardState

__all__ = ["archive_match", "match_key"]


def match_key(site: str, game_id: int, opponent: str, b: BoardState) -> str:
    """The archive key of the match ``b`` ends. bgammon reuses a match's ID for its rematch: the start time and
    the score tell them apart."""
    return f"bgammon:{site}:{game_id}:{b.started}:{opponent}:{b.score[0]}-{b.score[1]}"


def archive_match(
    archive: Archive,
    site: str,
    game_id: int,
    opponent: str,
    tracker: MatchTracker | None,
    b: BoardState,
    log: Any,
    *,
    reason: str | None = None,
) -> str | None:
    """Store the record of the match that ends with board ``b``; its key, or None when nothing was stored (the
    reason is logged). ``reason``: why a match left before its end stops there (an opponent who never came
    back ...)."""
    record = tracker.record() if tracker is not None else None
    if tracker is None or record is None or not record.games:
        log.error("bgammon.not_archived", game=game_id, reason="nothing was recorded")
        return None
    if not tracker.complete or reason:
        # keep what replays up to the action the record could not follow (see bot/bgammon/match.py)
        why = "; ".join(filter(None, (reason, tracker.error))) or "the record is incomplete"
        log.error("bgammon.archived_partly", game=game_id, reason=why)
        note = f"gammond: the record stops early: {why}"
        record = record.replace(partial=True, comment=f"{record.comment}\n{note}".strip())
    started = datetime.fromtimestamp(b.started, UTC) if b.started else datetime.now(UTC)
    key = match_key(site, game_id, opponent, b)
    record = record.replace(
        match_id=key, date=started.date(), time=started.time().replace(microsecond=0, tzinfo=None)
    )
    try:
        text = write_mat(record)
        name = archive_name(started, site, record.names[0], record.names[1], record.length)
        path = archive.store_text(key, name, text)
    except (EngineError, OSError, ValueError) as exc:
        log.error("bgammon.archive_failed", game=game_id, error=str(exc))
        return None
    log.info("bgammon.archived", path=str(path) if path else None, key=key)
    return key
