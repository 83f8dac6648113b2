"""The archive: one Jellyfish .mat file per finished match, written atomically and exactly once.

A file is written to a temporary name in the same folder, flushed and fsynced, then renamed into place, and the
folder is fsynced: after a crash the archive holds the whole file or none. Exactly once: the match key is
recorded in ``.keys`` (one line per archived match, fsynced) *before* the rename, and a key already there is
never written again; a restart that finds a key recorded but no file (a crash between the two steps) writes the
file then. Unfinished matches are kept by the daemon's store, not here.
"""

from __future__ import annotations

import os
import re
import time as _time
from collections.abc import Callable
from datetime import UTC, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.record import MatchRecord

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Set only by bench/crash.py: seconds to pause at each step of a write (the step is written to STAGE_FILE
# first), so that the campaign can kill the daemon in the middle of one.
PAUSE_ENV = "GAMMOND_BENCH_ARCHIVE_PAUSE"
STAGE_FILE = ".bench-stage"


def safe(text: str, limit: int = 40) -> str:
    """A file-name-safe rendering of a name or host: unsafe characters become '-'."""
    out = _UNSAFE.sub("-", text.strip()).strip("-.")
    return (out or "unknown")[:limit]


def archive_name(when: datetime, site: str, player0: str, player1: str, length: int) -> str:
    """``2026-11-22T1530Z_fibs.com_gammond-vs-alice_7p.mat``: sorts by time, says who played what."""
    stamp = when.astimezone(UTC).strftime("%Y-%m-%dT%H%MZ")
    size = f"{length}p" if length else "money"
    return f"{stamp}_{safe(site)}_{safe(player0)}-vs-{safe(player1)}_{size}.mat"


class Archive:
    """The folder of finished matches (``oldmoves/`` by default)."""

    KEYS = ".keys"
    on_stored: Callable[[Path], object] | None = None  # bot.analysis_jobs: analyse each stored match

    def __init__(self, folder: Path, fsync: Callable[[int], None] = os.fsync) -> None:
        self.folder = Path(folder)
        self._fsync = fsync
        self.folder.mkdir(parents=True, exist_ok=True)

    def keys(self) -> dict[str, str]:
        """Archived match keys and their file names."""
        path = self.folder / self.KEYS
        out: dict[str, str] = {}
        if not path.exists():
            return out
        for line in path.read_text(encoding="utf-8").splitlines():
            key, sep, name = line.partition("\t")
            if sep:
                out[key] = name
        return out

    def contains(self, key: str) -> bool:
        entry = self.keys().get(key)
        return entry is not None and (self.folder / entry).exists()

    def store(self, record: MatchRecord, key: str | None = None) -> Path | None:
        """Archive a finished match as .mat (key: the record's match ID); None if it was archived already."""
        from engine.formats.mat import write_mat

        key = key or record.match_id
        if not key:
            raise ValueError("a record without a match ID needs an explicit archive key")
        when = datetime.now(UTC)
        if record.date is not None:
            when = datetime.combine(record.date, record.time or time(), UTC)
        name = archive_name(when, record.site or "local", record.names[0], record.names[1], record.length)
        return self.store_text(key, name, write_mat(record))

    def store_text(self, key: str, name: str, text: str) -> Path | None:
        """Write ``text`` as ``name`` unless ``key`` was archived already; returns the path written, or None."""
        if "\t" in key or "\n" in key:
            raise ValueError(f"archive key {key!r} contains a tab or line break")
        known = self.keys()
        if key in known:
            if (self.folder / known[key]).exists():
                return None
            name = known[key]  # recorded but never renamed into place: finish the job
        else:
            name = self._unique(name)
        tmp = self.folder / f".{name}.{os.getpid()}.tmp"
        data = text.encode("utf-8")
        self._bench_pause("begin")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data[: len(data) // 2])
            self._bench_pause("half-written")
            os.write(fd, data[len(data) // 2 :])
            self._fsync(fd)
        finally:
            os.close(fd)
        self._bench_pause("written")
        if key not in known:
            self._record_key(key, name)
        self._bench_pause("keyed")
        os.replace(tmp, self.folder / name)
        self._sync_folder()
        self._bench_pause("renamed")
        if self.on_stored is not None:
            self.on_stored(self.folder / name)
        return self.folder / name

    def _bench_pause(self, stage: str) -> None:
        pause = os.environ.get(PAUSE_ENV)
        if not pause:
            return
        (self.folder / STAGE_FILE).write_text(f"{stage} {os.getpid()}\n")
        _time.sleep(float(pause))

    def _unique(self, name: str) -> str:
        stem, dot, ext = name.rpartition(".")
        candidate, n = name, 1
        while (self.folder / candidate).exists():
            n += 1
            candidate = f"{stem}-{n}{dot}{ext}"
        return candidate

    def _record_key(self, key: str, name: str) -> None:
        fd = os.open(self.folder / self.KEYS, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{key}\t{name}\n".encode())
            self._fsync(fd)
        finally:
            os.close(fd)

    def _sync_folder(self) -> None:
        try:
            fd = os.open(self.folder, os.O_RDONLY)
        except OSError:
            return
        try:
            self._fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def cleanup(self) -> int:
        """Remove temporary files a crash left behind; returns how many."""
        n = 0
        for tmp in self.folder.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)
            n += 1
        return n
