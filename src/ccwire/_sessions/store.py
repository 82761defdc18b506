"""Where session snapshots are kept, so a session can be found and resumed after a crash.

A session saves a `SessionStateInfo` snapshot after every transition.
`SessionStore` is the small interface a store implements; ccwire ships
`SQLiteSessionStore` (the default: one file under the user's data directory)
and `MemorySessionStore` (for tests and throw-away sessions).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Protocol, runtime_checkable

import anyio.to_thread

from .._core.public import publish
from .state import SessionStateInfo

__all__ = ["MemorySessionStore", "SQLiteSessionStore", "SessionStore", "default_session_store_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at TEXT,
    snapshot TEXT NOT NULL
)
"""


@runtime_checkable
class SessionStore(Protocol):
    """Keeps the latest snapshot of each session, by session id.

    ``save`` replaces the snapshot stored for ``info.session_id``; ``load`` returns it
    (``None`` if unknown); ``list`` returns every stored snapshot, most recently updated
    first. Implementations must tolerate concurrent calls from many sessions.
    """

    async def save(self, info: SessionStateInfo) -> None:
        """Store ``info`` as the latest snapshot of its session."""
        ...

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of ``session_id``, or ``None``."""
        ...

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first."""
        ...


def default_session_store_path() -> Path:
    """``sessions.sqlite3`` in ccwire's directory under the user's data directory.

    ``$XDG_DATA_HOME/ccwire`` (default ``~/.local/share/ccwire``) on Linux and other
    Unix systems, ``~/Library/Application Support/ccwire`` on macOS and
    ``%LOCALAPPDATA%\\ccwire`` on Windows.
    """
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "ccwire" / "sessions.sqlite3"


def _sort_key(info: SessionStateInfo) -> str:
    return info.updated_at.isoformat() if info.updated_at else ""


class MemorySessionStore:
    """A `SessionStore` in a dict: nothing survives the process."""

    def __init__(self) -> None:
        self._data: dict[str, SessionStateInfo] = {}

    async def save(self, info: SessionStateInfo) -> None:
        """Store ``info`` as the latest snapshot of its session."""
        self._data[info.session_id] = info

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of ``session_id``, or ``None``."""
        return self._data.get(session_id)

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first."""
        return sorted(self._data.values(), key=_sort_key, reverse=True)


class SQLiteSessionStore:
    """A `SessionStore` in an SQLite file (stdlib ``sqlite3``).

    ``path`` defaults to `default_session_store_path()`; its directory is created on first
    use. Every call opens a short-lived connection in a worker thread, so many sessions
    (and several processes) can share one file; the database runs in WAL mode with a
    busy timeout. Snapshots are stored as JSON (`SessionStateInfo.to_dict()`).
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, timeout: float = 10.0
    ) -> None:
        self.path = Path(path) if path is not None else default_session_store_path()
        self.timeout = timeout
        self._ready = False
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            with self._lock:
                if not self._ready:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite3.connect(self.path, timeout=self.timeout)
                    try:
                        db.execute("PRAGMA journal_mode=WAL")
                        db.execute(_SCHEMA)
                        db.commit()
                    finally:
                        db.close()
                    self._ready = True
        return sqlite3.connect(self.path, timeout=self.timeout)

    def _save(self, info: SessionStateInfo) -> None:
        data = json.dumps(info.to_dict(), separators=(",", ":"), default=str)
        db = self._connect()
        try:
            with db:
                db.execute(
                    "INSERT INTO sessions (session_id, state, updated_at, snapshot) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET "
                    "state = excluded.state, updated_at = excluded.updated_at, "
                    "snapshot = excluded.snapshot",
                    (
                        info.session_id,
                        info.state.value,
                        info.updated_at.isoformat() if info.updated_at else None,
                        data,
                    ),
                )
        finally:
            db.close()

    def _load(self, session_id: str) -> SessionStateInfo | None:
        db = self._connect()
        try:
            row = db.execute(
                "SELECT snapshot FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        finally:
            db.close()
        return SessionStateInfo.from_dict(json.loads(row[0])) if row else None

    def _list(self) -> list[SessionStateInfo]:
        db = self._connect()
        try:
            rows = db.execute("SELECT snapshot FROM sessions ORDER BY updated_at DESC").fetchall()
        finally:
            db.close()
        return [SessionStateInfo.from_dict(json.loads(r[0])) for r in rows]

    async def save(self, info: SessionStateInfo) -> None:
        """Store ``info`` as the latest snapshot of its session."""
        await anyio.to_thread.run_sync(self._save, info)

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of ``session_id``, or ``None``."""
        return await anyio.to_thread.run_sync(self._load, session_id)

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first."""
        return await anyio.to_thread.run_sync(self._list)


publish(MemorySessionStore, SQLiteSessionStore, SessionStore, default_session_store_path)
