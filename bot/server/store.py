"""The embedded server's SQLite store (WAL): accounts, ratings, saved matches, offline messages, finished
matches waiting for the archive.

Passwords are kept as ``scrypt$n$r$p$salt$hash`` (hashlib.scrypt with a random 16-byte salt per user); the
hashing itself is slow on purpose, so ``hash_password``/``verify_password`` are plain functions the server runs
in a worker thread, and the store only keeps the result. Every other call is one short local transaction.

A match the server has not finished is a row of ``saved`` (its gnubg ID and its record as JSON), written after
every action and before the server tells anyone of it: the one truth of a running match, so that a restart or a
crash at any instant resumes exactly where the players were last shown. Finishing a match moves it from
``saved`` to ``finished`` and updates both ratings in one transaction; ``finished`` rows stay marked
unarchived until the archive has taken them, so none is lost between the two.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.server.ratings import INITIAL_RATING
from bot.state import private_database

SCRYPT_N = 1 << 14  # about 16 MiB and tens of milliseconds per hash: slow for guessing, fine for a login
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
WEB_LOGINS_KEPT = 10  # saved web logins per account (browsers and devices)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    folded TEXT NOT NULL UNIQUE,
    password TEXT NOT NULL,
    rating REAL NOT NULL,
    experience INTEGER NOT NULL,
    created INTEGER NOT NULL,
    last_login INTEGER NOT NULL DEFAULT 0,
    last_host TEXT NOT NULL DEFAULT '',
    bot INTEGER NOT NULL DEFAULT 0,
    toggles TEXT NOT NULL DEFAULT '{}',
    settings TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS saved (
    id TEXT PRIMARY KEY,
    player0 TEXT NOT NULL,
    player1 TEXT NOT NULL,
    length INTEGER NOT NULL,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    gnubg_id TEXT NOT NULL,
    data TEXT NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS saved_player0 ON saved(player0);
CREATE INDEX IF NOT EXISTS saved_player1 ON saved(player1);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recipient TEXT NOT NULL,
    sender TEXT NOT NULL,
    time INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_recipient ON messages(recipient);
CREATE TABLE IF NOT EXISTS web_logins (
    digest TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    used INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS web_logins_name ON web_logins(name);
CREATE TABLE IF NOT EXISTS finished (
    key TEXT PRIMARY KEY,
    player0 TEXT NOT NULL,
    player1 TEXT NOT NULL,
    length INTEGER NOT NULL,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    data TEXT NOT NULL,
    finished REAL NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0
);
"""


class StoreError(ValueError):
    """A store request that cannot be met (an account that exists already, a corrupt row)."""


class AccountExistsError(StoreError):
    pass


class PasswordFormatError(StoreError):
    """A stored password field that is not ``scrypt$n$r$p$salt$hash``."""


def hash_password(password: str, n: int = SCRYPT_N, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$salt$hash`` for ``password`` with a fresh random salt (slow: run it in a thread)."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    digest = hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=SCRYPT_R, p=SCRYPT_P, maxmem=256 * n * SCRYPT_R
    )
    return f"scrypt${n}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a ``hash_password`` result (constant-time comparison)."""
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        raise PasswordFormatError("stored password is not scrypt$n$r$p$salt$hash")
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, expected = bytes.fromhex(parts[4]), bytes.fromhex(parts[5])
    except ValueError:
        raise PasswordFormatError("stored password has malformed numbers") from None
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=256 * n * r)
    return hmac.compare_digest(digest, expected)


@dataclass(slots=True)
class Account:
    """A registered user as stored. ``toggles`` and ``settings`` hold only values changed from the defaults'
    point of view of the server (it fills in the rest)."""

    name: str
    password: str = field(repr=False)
    rating: float = INITIAL_RATING
    experience: int = 0
    created: int = 0
    last_login: int = 0
    last_host: str = ""
    bot: bool = False
    toggles: dict[str, bool] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SavedRow:
    """An unfinished match: players, length (0 unlimited), score, gnubg ID and the server's JSON: ``data`` is a
    dict as the store reads it back, or the compact JSON text the server writes (``Table.to_json_text``)."""

    id: str
    player0: str
    player1: str
    length: int
    score: tuple[int, int]
    gnubg_id: str
    data: dict[str, Any] | str

    def involves(self, name: str) -> bool:
        return name in (self.player0, self.player1)


@dataclass(frozen=True, slots=True)
class FinishedRow:
    key: str
    player0: str
    player1: str
    length: int
    score: tuple[int, int]
    data: dict[str, Any]


class Store:
    """One SQLite database; ``path`` ":memory:" keeps everything in memory (tests)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            private_database(self.path)  # password hashes: owner-only, the WAL and SHM files included
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoints, never corrupt
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"Store({self.path!r})"

    def close(self) -> None:
        self._db.close()

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)

    # -- the web page's saved logins -------------------------------------------------------------------------
    # The page keeps a random token; the store only its SHA-256 digest (not the token: a copy of the database
    # logs no one in), the account and when it was last used.

    def add_web_login(
        self, digest: str, name: str, now: float, max_age: float, keep: int = WEB_LOGINS_KEPT
    ) -> None:
        """Remember a saved login of ``name``; only its ``keep`` most recently used ones stay, and those of any
        account unused for ``max_age`` seconds go."""
        with self._tx():
            self._db.execute("DELETE FROM web_logins WHERE used < ?", (int(now - max_age),))
            self._db.execute(
                "INSERT OR REPLACE INTO web_logins (digest, name, created, used) VALUES (?, ?, ?, ?)",
                (digest, name, int(now), int(now)),
            )
            self._db.execute(
                "DELETE FROM web_logins WHERE name = ? AND digest NOT IN "
                "(SELECT digest FROM web_logins WHERE name = ? ORDER BY used DESC LIMIT ?)",
                (name, name, keep),
            )

    def web_login(self, digest: str, now: float, max_age: float) -> str | None:
        """The account of a saved login used within ``max_age`` seconds (its use is noted), else None. A
        login not found writes nothing (a flood of wrong tokens only reads)."""
        row = self._db.execute("SELECT name, used FROM web_logins WHERE digest = ?", (digest,)).fetchone()
        if row is None or row[1] < now - max_age:
            return None
        with self._tx():
            self._db.execute("UPDATE web_logins SET used = ? WHERE digest = ?", (int(now), digest))
        return str(row[0])

    def drop_web_login(self, digest: str) -> None:
        with self._tx():
            self._db.execute("DELETE FROM web_logins WHERE digest = ?", (digest,))

    # -- accounts -------------------------------------------------------------------------------------------

    def create_account(
        self, name: str, password_hash: str, *, bot: bool = False, now: float | None = None
    ) -> Account:
        account = Account(name=name, password=password_hash, created=int(now or time.time()), bot=bot)
        try:
            with self._tx():
                self._db.execute(
                    "INSERT INTO users (name, folded, password, rating, experience, created, bot) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (name, name.casefold(), password_hash, account.rating, 0, account.created, int(bot)),
                )
        except sqlite3.IntegrityError:
            raise AccountExistsError(f"an account named {name!r} (in any case) exists already") from None
        return account

    def account(self, name: str) -> Account | None:
        row = self._db.execute(
            "SELECT name, password, rating, experience, created, last_login, last_host, bot, toggles, settings "
            "FROM users WHERE name = ?",
            (name,),
        ).fetchone()
        if row is None:
            return None
        return Account(
            name=row[0],
            password=row[1],
            rating=row[2],
            experience=row[3],
            created=row[4],
            last_login=row[5],
            last_host=row[6],
            bot=bool(row[7]),
            toggles=_json_dict(row[8]),
            settings=_json_dict(row[9]),
        )

    def name_taken(self, name: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM users WHERE folded = ?", (name.casefold(),)).fetchone()
            is not None
        )

    def save_account(self, account: Account) -> None:
        """Write the mutable fields (login, toggles, settings, password, bot flag)."""
        with self._tx():
            self._db.execute(
                "UPDATE users SET password = ?, last_login = ?, last_host = ?, bot = ?, toggles = ?, settings = ? "
                "WHERE name = ?",
                (
                    account.password,
                    account.last_login,
                    account.last_host,
                    int(account.bot),
                    json.dumps(account.toggles, sort_keys=True),
                    json.dumps(account.settings, sort_keys=True),
                    account.name,
                ),
            )

    def account_names(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT name FROM users ORDER BY name")]

    # -- unfinished matches ---------------------------------------------------------------------------------

    def save_match(self, row: SavedRow, now: float | None = None) -> None:
        with self._tx():
            self._db.execute(
                "INSERT INTO saved (id, player0, player1, length, score0, score1, gnubg_id, data, updated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET score0 = excluded.score0, "
                "score1 = excluded.score1, gnubg_id = excluded.gnubg_id, data = excluded.data, "
                "updated = excluded.updated",
                (
                    row.id,
                    row.player0,
                    row.player1,
                    row.length,
                    row.score[0],
                    row.score[1],
                    row.gnubg_id,
                    row.data if isinstance(row.data, str) else json.dumps(row.data, separators=(",", ":")),
                    now or time.time(),
                ),
            )

    def delete_match(self, match_id: str) -> None:
        with self._tx():
            self._db.execute("DELETE FROM saved WHERE id = ?", (match_id,))

    def saved_matches(self, name: str | None = None) -> list[SavedRow]:
        """Unfinished matches (of ``name``, or all), oldest first."""
        sql = "SELECT id, player0, player1, length, score0, score1, gnubg_id, data FROM saved"
        args: tuple[str, ...] = ()
        if name is not None:
            sql += " WHERE player0 = ? OR player1 = ?"
            args = (name, name)
        return [self._saved(row) for row in self._db.execute(sql + " ORDER BY updated", args)]

    def saved_match_between(self, a: str, b: str) -> SavedRow | None:
        row = self._db.execute(
            "SELECT id, player0, player1, length, score0, score1, gnubg_id, data FROM saved "
            "WHERE (player0 = ? AND player1 = ?) OR (player0 = ? AND player1 = ?) ORDER BY updated DESC",
            (a, b, b, a),
        ).fetchone()
        return None if row is None else self._saved(row)

    def saved_count(self, name: str) -> int:
        row = self._db.execute("SELECT COUNT(*) FROM saved WHERE player0 = ? OR player1 = ?", (name, name))
        return int(row.fetchone()[0])

    @staticmethod
    def _saved(row: tuple[Any, ...]) -> SavedRow:
        return SavedRow(
            id=row[0],
            player0=row[1],
            player1=row[2],
            length=row[3],
            score=(row[4], row[5]),
            gnubg_id=row[6],
            data=_json_dict(row[7]),
        )

    # -- finished matches -----------------------------------------------------------------------------------

    def finish_match(
        self,
        row: FinishedRow,
        saved_id: str | None,
        ratings: dict[str, tuple[float, int]],
        now: float | None = None,
    ) -> None:
        """Record a finished match, drop its saved row and set the players' (rating, experience): atomically."""
        with self._tx():
            if saved_id is not None:
                self._db.execute("DELETE FROM saved WHERE id = ?", (saved_id,))
            self._db.execute(
                "INSERT OR IGNORE INTO finished (key, player0, player1, length, score0, score1, data, finished) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.key,
                    row.player0,
                    row.player1,
                    row.length,
                    row.score[0],
                    row.score[1],
                    json.dumps(row.data, separators=(",", ":")),
                    now or time.time(),
                ),
            )
            for name, (rating, experience) in ratings.items():
                self._db.execute(
                    "UPDATE users SET rating = ?, experience = ? WHERE name = ?", (rating, experience, name)
                )

    def unarchived(self) -> list[FinishedRow]:
        rows = self._db.execute(
            "SELECT key, player0, player1, length, score0, score1, data FROM finished WHERE archived = 0 "
            "ORDER BY finished"
        )
        return [FinishedRow(r[0], r[1], r[2], r[3], (r[4], r[5]), _json_dict(r[6])) for r in rows]

    def mark_archived(self, key: str) -> None:
        with self._tx():
            self._db.execute("UPDATE finished SET archived = 1 WHERE key = ?", (key,))

    def last_finished_between(self, a: str, b: str) -> FinishedRow | None:
        r = self._db.execute(
            "SELECT key, player0, player1, length, score0, score1, data FROM finished "
            "WHERE (player0 = ? AND player1 = ?) OR (player0 = ? AND player1 = ?) ORDER BY finished DESC",
            (a, b, b, a),
        ).fetchone()
        return None if r is None else FinishedRow(r[0], r[1], r[2], r[3], (r[4], r[5]), _json_dict(r[6]))

    def finished_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM finished").fetchone()[0])

    # -- messages -------------------------------------------------------------------------------------------

    def add_message(self, recipient: str, sender: str, when: int, text: str) -> None:
        with self._tx():
            self._db.execute(
                "INSERT INTO messages (recipient, sender, time, text) VALUES (?, ?, ?, ?)",
                (recipient, sender, when, text),
            )

    def take_messages(self, recipient: str) -> list[tuple[str, int, str]]:
        """The stored messages for ``recipient`` (sender, time, text), oldest first; they are deleted."""
        with self._tx():
            rows = self._db.execute(
                "SELECT sender, time, text FROM messages WHERE recipient = ? ORDER BY id", (recipient,)
            ).fetchall()
            self._db.execute("DELETE FROM messages WHERE recipient = ?", (recipient,))
        return [(r[0], r[1], r[2]) for r in rows]

    def message_count(self, recipient: str) -> int:
        row = self._db.execute("SELECT COUNT(*) FROM messages WHERE recipient = ?", (recipient,))
        return int(row.fetchone()[0])


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


def _json_dict(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise StoreError(f"corrupt JSON in the store: {text[:60]!r}") from None
    if not isinstance(value, dict):
        raise StoreError(f"expected a JSON object in the store, got {type(value).__name__}")
    return value
