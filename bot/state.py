"""The daemon's store (SQLite in WAL mode in ``daemon.state_dir``): each match the bot plays or archives, as
the tracker's snapshot (gnubg position and match ID, opponent, length, record so far), and generated secrets.

A match row is written *before* the bot acts on a new state, so a restart (even after ``kill -9``) finds the
match where the bot left it. Its ``status`` moves ``active`` -> ``finished`` (the match is over, the archive
file may not be written yet) -> ``archived``; ``abandoned`` marks a match the server no longer knows. Writes
are single short transactions on a local file: fast enough to run on the event loop.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
DB_NAME = "gammond.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    key      TEXT PRIMARY KEY,
    server   TEXT NOT NULL,
    player   TEXT NOT NULL,
    opponent TEXT NOT NULL,
    length   INTEGER NOT NULL,
    watched  INTEGER NOT NULL DEFAULT 0,
    status   TEXT NOT NULL,
    gnubg_id TEXT NOT NULL DEFAULT '',
    snapshot TEXT NOT NULL,
    started  TEXT NOT NULL,
    updated  REAL NOT NULL,
    archived TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS matches_by_status ON matches (server, status);
CREATE TABLE IF NOT EXISTS secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


def private_database(path: str | Path) -> None:
    """Create the SQLite file owner-only (0600) before SQLite opens it, so that its -wal and -shm files, which
    SQLite creates with the database file's mode, are private from their first byte; files an older version
    left readable by others are tightened."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(FileNotFoundError):
            if name.stat().st_mode & 0o077:
                os.chmod(name, 0o600)


class StateError(ValueError):
    """A store that cannot be opened or a row that cannot be read."""


class MatchStatus(StrEnum):
    ACTIVE = "active"
    FINISHED = "finished"
    ARCHIVED = "archived"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class StoredMatch:
    key: str
    server: str
    player: str  # the bot's user, or the watched player
    opponent: str
    length: int
    status: MatchStatus
    # read back always a dict; a writer may give its compact JSON text already encoded (put writes it as is)
    snapshot: dict[str, Any] | str
    started: str  # ISO 8601, UTC
    watched: bool = False
    gnubg_id: str = ""
    archived: str = ""  # file name in the archive once written

    def __repr__(self) -> str:
        return (
            f"StoredMatch(key={self.key!r}, server={self.server!r}, player={self.player!r}, "
            f"opponent={self.opponent!r}, length={self.length}, status=MatchStatus.{self.status.name}, "
            f"snapshot=..., started={self.started!r}, watched={self.watched}, gnubg_id={self.gnubg_id!r})"
        )


class StateStore:
    """One SQLite database; ``StateStore.open(state_dir)``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            private_database(self.path)  # it holds generated passwords
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a commit survives the process being killed (not a power cut), far cheaper
            # than FULL's fsync per commit.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as exc:
            raise StateError(f"cannot open the state database {self.path}: {exc}") from None
        self._schedule: Callable[[Callable[[], None]], object] | None = None
        self._closed = False

    @classmethod
    def open(cls, state_dir: Path) -> StateStore:
        folder = Path(state_dir)
        folder.mkdir(parents=True, exist_ok=True)
        return cls(folder / DB_NAME)

    def close(self) -> None:
        self.commit()
        self._db.close()
        self._closed = True

    def commit_later(self, schedule: Callable[[Callable[[], None]], object]) -> None:
        """Group the match writes of one turn of the event loop into one transaction: the first write opens it
        and ``schedule(self.commit)`` closes it (the daemon passes ``loop.call_soon``). With 200 matches a
        commit per board was the daemon's largest cost (SQLite's WAL write and its checkpoints). A bot calls
        ``commit()`` before each command it sends, so its match is still stored before each action; a kill
        loses at most rows written in the same turn of the loop after the last action."""
        self._schedule = schedule

    def commit(self) -> None:
        """Commit the writes grouped so far (none: nothing to do)."""
        if not self._closed and self._db.in_transaction:  # a commit scheduled before close() finds it done
            self._db.execute("COMMIT")

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        if self._schedule is not None and not self._db.in_transaction:
            self._db.execute("BEGIN")
            self._schedule(self.commit)
        self._db.execute(sql, args)

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- matches ----------------------------------------------------------------------------------------

    def put(self, match: StoredMatch) -> None:
        """Insert or replace the row of ``match`` (one committed transaction, or grouped: ``commit_later``)."""
        self._write(
            "INSERT OR REPLACE INTO matches (key, server, player, opponent, length, watched, status, gnubg_id,"
            " snapshot, started, updated, archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                match.key,
                match.server,
                match.player,
                match.opponent,
                match.length,
                int(match.watched),
                match.status.value,
                match.gnubg_id,
                snapshot
                if isinstance(snapshot := match.snapshot, str)
                else json.dumps(snapshot, separators=(",", ":")),
                match.started,
                time.time(),
                match.archived,
            ),
        )

    def get(self, key: str) -> StoredMatch | None:
        rows = list(self._select("WHERE key = ?", (key,)))
        return rows[0] if rows else None

    def set_status(self, key: str, status: MatchStatus, archived: str = "") -> None:
        self._write(
            "UPDATE matches SET status = ?, archived = CASE WHEN ? != '' THEN ? ELSE archived END, updated = ?"
            " WHERE key = ?",
            (status.value, archived, archived, time.time(), key),
        )

    def active(self, server: str, player: str | None = None, watched: bool = False) -> list[StoredMatch]:
        """Unfinished matches on ``server`` (of ``player``), oldest first."""
        sql = "WHERE server = ? AND status = 'active' AND watched = ?"
        args: tuple[Any, ...] = (server, int(watched))
        if player is not None:
            sql += " AND player = ?"
            args += (player,)
        return list(self._select(sql + " ORDER BY started", args))

    def find_active(self, server: str, player: str, opponent: str) -> StoredMatch | None:
        """The unfinished played match between ``player`` and ``opponent`` (FIBS keeps one per pair)."""
        rows = list(
            self._select(
                "WHERE server = ? AND player = ? AND opponent = ? AND status = 'active' AND watched = 0"
                " ORDER BY started DESC",
                (server, player, opponent),
            )
        )
        return rows[0] if rows else None

    def finished_unarchived(self) -> list[StoredMatch]:
        """Matches that ended but whose archive file may not be written (a crash in between)."""
        return list(self._select("WHERE status = 'finished' ORDER BY started", ()))

    def all(self) -> list[StoredMatch]:
        return list(self._select("ORDER BY started", ()))

    def _select(self, where: str, args: tuple[Any, ...]) -> Iterator[StoredMatch]:
        cursor = self._db.execute(
            "SELECT key, server, player, opponent, length, watched, status, gnubg_id, snapshot, started, archived"
            f" FROM matches {where}",
            args,
        )
        for row in cursor:
            key = row[0]
            try:
                yield StoredMatch(
                    key=key,
                    server=row[1],
                    player=row[2],
                    opponent=row[3],
                    length=int(row[4]),
                    watched=bool(row[5]),
                    status=MatchStatus(row[6]),
                    gnubg_id=row[7],
                    snapshot=json.loads(row[8]),
                    started=row[9],
                    archived=row[10],
                )
            except ValueError as exc:
                raise StateError(f"match {key!r} in {self.path}: unreadable row: {exc}") from None

    # -- secrets ----------------------------------------------------------------------------------------

    def secret(self, name: str) -> str | None:
        row = self._db.execute("SELECT value FROM secrets WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def generated_secret(self, name: str, nbytes: int = 18) -> str:
        """The secret stored as ``name``, generated (URL-safe, no spaces) on first use."""
        value = self.secret(name)
        if value is None:
            value = secrets.token_urlsafe(nbytes)
            self._db.execute("INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)", (name, value))
            value = self.secret(name) or value
        return value
