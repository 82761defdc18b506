"""`SQLiteStore`: a `SessionStore` in an SQLite file, with the standard library only.

Three tables, all prefixed `ccwire_` so they can share a database file with anything
else (ccwire's own snapshot table `sessions` included):

* `ccwire_entries(seq, project_key, session_id, subpath, uuid, entry)`: one row per
  transcript entry, `entry` the JSON text as appended, `seq` the append order; a
  partial unique index on `(project_key, session_id, subpath, uuid)` makes an
  entry's `uuid` an idempotency key;
* `ccwire_transcripts(project_key, session_id, subpath, mtime)`: one row per
  transcript, its last write time in epoch milliseconds (`subpath` is `''` for the
  main transcript);
* `ccwire_summaries(project_key, session_id, mtime, data)`: the folded summary of
  each main transcript.

Every call opens a short-lived connection in a worker thread (so it works on asyncio
and trio, and several processes can share the file), in WAL mode with a busy
timeout; an append is one `BEGIN IMMEDIATE` transaction, which also serializes the
summary fold. Nothing is ever deleted except by `delete`: retention is yours (for
example a periodic `DELETE FROM ccwire_transcripts WHERE mtime < ?` followed by
deleting those keys through `delete`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from ..._core.errors import SessionStoreError
from ..store import default_session_store_path
from .memory import MonotonicMillis
from .protocol import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    key_parts,
)
from .summary import fold_session_summary

__all__ = ["SQLiteStore", "default_store_path"]

_T = TypeVar("_T")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ccwire_entries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        project_key TEXT NOT NULL,
        session_id TEXT NOT NULL,
        subpath TEXT NOT NULL,
        uuid TEXT,
        entry TEXT NOT NULL
    )""",
    """CREATE INDEX IF NOT EXISTS ccwire_entries_key
        ON ccwire_entries (project_key, session_id, subpath, seq)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS ccwire_entries_uuid
        ON ccwire_entries (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS ccwire_transcripts (
        project_key TEXT NOT NULL,
        session_id TEXT NOT NULL,
        subpath TEXT NOT NULL,
        mtime INTEGER NOT NULL,
        PRIMARY KEY (project_key, session_id, subpath)
    )""",
    """CREATE TABLE IF NOT EXISTS ccwire_summaries (
        project_key TEXT NOT NULL,
        session_id TEXT NOT NULL,
        mtime INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (project_key, session_id)
    )""",
)


def default_store_path() -> Path:
    """`sessions.sqlite3` in ccwire's directory under the user's data directory.

    Returns:
        The same file as `default_session_store_path()`: transcripts and snapshots
        share it.
    """
    return default_session_store_path()


def _uuid_of(entry: SessionStoreEntry) -> str | None:
    value = entry.get("uuid")
    return value if isinstance(value, str) else None


class SQLiteStore(SessionStore):
    """A `SessionStore` in an SQLite file; implements every optional method.

    Args:
        path: The database file; defaults to `default_store_path()`. Its directory is
            created on first use.
        timeout: How long a call waits for another writer's lock, in seconds.

    Attributes:
        path: The database file.
        timeout: The lock wait, in seconds.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 10.0):
        self.path = Path(path) if path is not None else default_store_path()
        self.timeout = timeout
        self._ready = False
        self._lock = threading.Lock()
        self._clock = MonotonicMillis()

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            with self._lock:
                if not self._ready:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite3.connect(self.path, timeout=self.timeout)
                    try:
                        db.execute("PRAGMA journal_mode=WAL")
                        for statement in _SCHEMA:
                            db.execute(statement)
                        db.commit()
                    finally:
                        db.close()
                    self._ready = True
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        return db

    async def _run(self, what: str, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        def call() -> _T:
            try:
                db = self._connect()
            except (sqlite3.Error, OSError) as exc:
                raise SessionStoreError(
                    f"cannot open the session store database: {exc}", path=str(self.path)
                ) from exc
            try:
                return fn(db)
            except sqlite3.Error as exc:
                raise SessionStoreError(
                    f"session store {what} failed: {exc}", path=str(self.path)
                ) from exc
            finally:
                db.close()

        return await anyio.to_thread.run_sync(call)

    def _decode(self, text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            raise SessionStoreError(
                f"a stored session entry is not valid JSON: {exc}", path=str(self.path)
            ) from exc

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Append entries to `key` in one transaction (see `SessionStore.append`).

        Args:
            key: The transcript.
            entries: The entries; one with a `uuid` already stored is skipped.

        Raises:
            SessionStoreError: The database could not be opened or written.
        """
        if not entries:
            return
        project, session, sub = key_parts(key)
        rows = [
            (project, session, sub, _uuid_of(e), json.dumps(e, separators=(",", ":")))
            for e in entries
        ]

        def write(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT OR IGNORE INTO ccwire_entries "
                    "(project_key, session_id, subpath, uuid, entry) VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
                now = self._clock()
                db.execute(
                    "INSERT INTO ccwire_transcripts VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (project_key, session_id, subpath) "
                    "DO UPDATE SET mtime = excluded.mtime",
                    (project, session, sub, now),
                )
                if not sub:
                    row = db.execute(
                        "SELECT mtime, data FROM ccwire_summaries "
                        "WHERE project_key = ? AND session_id = ?",
                        (project, session),
                    ).fetchone()
                    prev: SessionSummaryEntry | None = (
                        {"session_id": session, "mtime": row[0], "data": self._decode(row[1])}
                        if row
                        else None
                    )
                    folded = fold_session_summary(prev, key, entries)
                    db.execute(
                        "INSERT INTO ccwire_summaries VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (project_key, session_id) "
                        "DO UPDATE SET mtime = excluded.mtime, data = excluded.data",
                        (project, session, now, json.dumps(folded["data"])),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run("append", write)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries of `key` in append order, or `None` if it was never written.

        Args:
            key: The transcript.

        Returns:
            The entries.

        Raises:
            SessionStoreError: The database could not be read, or holds invalid JSON.
        """
        parts = key_parts(key)

        def read(db: sqlite3.Connection) -> list[str] | None:
            known = db.execute(
                "SELECT 1 FROM ccwire_transcripts "
                "WHERE project_key = ? AND session_id = ? AND subpath = ?",
                parts,
            ).fetchone()
            if known is None:
                return None
            rows = db.execute(
                "SELECT entry FROM ccwire_entries "
                "WHERE project_key = ? AND session_id = ? AND subpath = ? ORDER BY seq",
                parts,
            ).fetchall()
            return [r[0] for r in rows]

        texts = await self._run("load", read)
        return None if texts is None else [self._decode(t) for t in texts]

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts under `project_key`, with their write times.

        Args:
            project_key: The scope.

        Returns:
            One entry per session.

        Raises:
            SessionStoreError: The database could not be read.
        """
        rows = await self._run(
            "list_sessions",
            lambda db: db.execute(
                "SELECT session_id, mtime FROM ccwire_transcripts "
                "WHERE project_key = ? AND subpath = ''",
                (project_key,),
            ).fetchall(),
        )
        return [{"session_id": r[0], "mtime": r[1]} for r in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of the sessions under `project_key`.

        Args:
            project_key: The scope.

        Returns:
            One summary per main transcript.

        Raises:
            SessionStoreError: The database could not be read, or holds invalid JSON.
        """
        rows = await self._run(
            "list_session_summaries",
            lambda db: db.execute(
                "SELECT session_id, mtime, data FROM ccwire_summaries WHERE project_key = ?",
                (project_key,),
            ).fetchall(),
        )
        return [{"session_id": r[0], "mtime": r[1], "data": self._decode(r[2])} for r in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete `key`; a main transcript takes its subkeys and summary along.

        Args:
            key: The transcript.

        Raises:
            SessionStoreError: The database could not be written.
        """
        project, session, sub = key_parts(key)
        where = "project_key = ? AND session_id = ?" + (" AND subpath = ?" if sub else "")
        args: tuple[str, ...] = (project, session, sub) if sub else (project, session)

        def remove(db: sqlite3.Connection) -> None:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(f"DELETE FROM ccwire_entries WHERE {where}", args)
                db.execute(f"DELETE FROM ccwire_transcripts WHERE {where}", args)
                if not sub:
                    db.execute(f"DELETE FROM ccwire_summaries WHERE {where}", args)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

        await self._run("delete", remove)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session.

        Args:
            key: The session.

        Returns:
            The subpaths.

        Raises:
            SessionStoreError: The database could not be read.
        """
        rows = await self._run(
            "list_subkeys",
            lambda db: db.execute(
                "SELECT subpath FROM ccwire_transcripts "
                "WHERE project_key = ? AND session_id = ? AND subpath != '' ORDER BY subpath",
                (key["project_key"], key["session_id"]),
            ).fetchall(),
        )
        return [r[0] for r in rows]
