"""The bgammon bot's matches in the daemon's state store (bot/state.py), as the FIBS bot keeps its own: one row
per match, written before the bot acts on each new board, so that after a restart (SIGTERM or kill -9) the bot
takes its match back when the server seats it again and the record goes on where it stopped.

The row's snapshot holds the server's match ID, the opponent, the tracker's snapshot (the record so far and the
turn under way, bot/bgammon/match.py) and what the archive key needs of the last board (its start time and the
score). Its status moves ``active`` -> ``finished`` (archive file maybe not written) -> ``archived``;
``abandoned`` marks a match the server no longer seats the bot in.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from bot.archive import Archive
from bot.bgammon.archiving import archive_match
from bot.bgammon.match import MatchTracker
from bot.state import MatchStatus, StateStore, StoredMatch
from engine.errors import EngineError
from protocols.bgammon.board import BoardState, PlayerInfo

__all__ = [
    "PROTOCOL",
    "archive_stored",
    "is_bgammon",
    "new_key",
    "recover_unarchived",
    "restore",
    "stored_match",
]

PROTOCOL = "bgammon"


def new_key(site: str, game_id: int) -> str:
    """The store key of a match the bot begins to record now (bgammon reuses an ID for the rematch)."""
    return f"bgammon:{site}:{game_id}:{time.time_ns() // 1_000_000}"


def is_bgammon(stored: StoredMatch) -> bool:
    return stored.snapshot.get("protocol") == PROTOCOL


def stored_match(
    key: str,
    site: str,
    user: str,
    game_id: int,
    opponent: str,
    tracker: MatchTracker,
    b: BoardState,
    status: MatchStatus = MatchStatus.ACTIVE,
    started: str = "",
) -> StoredMatch:
    """The row of a match at board ``b``."""
    return StoredMatch(
        key=key,
        server=site,
        player=user,
        opponent=opponent,
        length=tracker.length,
        status=status,
        snapshot={
            "protocol": PROTOCOL,
            "game_id": game_id,
            "opponent": opponent,
            "board": {"started": b.started, "score": list(b.score), "points": b.points},
            "tracker": tracker.snapshot(),
        },
        started=started or datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    )


def restore(stored: StoredMatch) -> tuple[int, str, MatchTracker]:
    """(game ID, opponent, tracker) of a stored row; EngineError (BgammonBoardError) if it cannot be read."""
    snap = stored.snapshot
    try:
        game_id, opponent = int(snap["game_id"]), str(snap["opponent"])
        tracker_data = snap["tracker"]
    except (KeyError, TypeError, ValueError) as exc:
        raise EngineError(f"unreadable bgammon match row {stored.key!r}: {exc!r}") from None
    return game_id, opponent, MatchTracker.restore(tracker_data)


def last_board(stored: StoredMatch) -> BoardState:
    """What the archive key needs of the last board seen: its start time, score and match length."""
    board = stored.snapshot.get("board") or {}
    score = board.get("score") or [0, 0]
    return BoardState(
        started=int(board.get("started") or 0),
        points=int(board.get("points") or stored.length),
        player1=PlayerInfo(1, points=int(score[0])),
        player2=PlayerInfo(2, points=int(score[1])),
    )


def archive_stored(archive: Archive, stored: StoredMatch, log: Any) -> str | None:
    """Write a stored bgammon match to the archive (once per key); its key, or None (the reason is logged)."""
    game_id, opponent, tracker = restore(stored)
    return archive_match(archive, stored.server, game_id, opponent, tracker, last_board(stored), log)


def recover_unarchived(store: StateStore, archive: Archive, log: Any, site: str | None = None) -> int:
    """Archive the bgammon matches that ended before a crash let them reach the archive; returns how many."""
    count = 0
    for stored in store.finished_unarchived():
        if not is_bgammon(stored) or (site is not None and stored.server != site):
            continue
        try:
            key = archive_stored(archive, stored, log)
        except (EngineError, OSError) as exc:  # kept FINISHED: tried again at the next start
            log.error("bgammon.recover_failed", match=stored.key, error=str(exc))
            continue
        # None: nothing to write, or a failure archive_match logged; either way not tried again
        store.set_status(stored.key, MatchStatus.ARCHIVED if key else MatchStatus.ABANDONED)
        count += key is not None
    return count
