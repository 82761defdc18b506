"""`SQLiteStore`: a `SessionStore` in an SQLite file, with the standard library only.

The SQL core's three tables (see `sql.py`), all prefixed `ccwire_` so they can share a
database file with anything else (ccwire's own snapshot table `sessions` included):
`ccwire_entries`, `ccwire_transcripts` and `ccwire_summaries`.

Every call opens a short-lived connection in a worker thread (so it works on asyncio
and trio, and several processes can share the file), in WAL mode with a busy
timeout; an append is one `BEGIN IMMEDIATE` transaction, which also serializes the
summary fold. Write times come from the store's clock, which never repeats nor goes
back in the process. Nothing is ever deleted except by `delete`: retention is yours
(for example a periodic `SELECT project_key, session_id FROM ccwire_transcripts WHERE
subpath = '' AND mtime < ?`, then deleting those keys through `delete`).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..store import default_session_store_path
from .blocking import BlockingStore
from .memory import MonotonicMillis
from .sql import Dialect, SqlBackend

__all__ = ["SQLiteStore", "default_store_path"]

_NOW = "ccwire_now_ms"

_SQLITE = Dialect(
    placeholder="?",
    serial="INTEGER PRIMARY KEY AUTOINCREMENT",
    greatest="max",
    now_ms=f"{_NOW}()",  # the store's own clock (MonotonicMillis), given to each connection
    begin="BEGIN IMMEDIATE",  # takes the file's write lock: appends are serialized
    lock="",
    setup=("PRAGMA journal_mode=WAL",),
)


def default_store_path() -> Path:
    """`sessions.sqlite3` in ccwire's directory under the user's data directory.

    Returns:
        The same file as `default_session_store_path()`: transcripts and snapshots
        share it.
    """
    return default_session_store_path()


class _Files:
    """A short-lived connection per call to one SQLite file."""

    errors: tuple[type[Exception], ...] = (sqlite3.Error, OSError)

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self.where = str(path)
        self._clock = MonotonicMillis()

    def open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        db.create_function(_NOW, 0, self._clock)
        return db

    def release(self, conn: sqlite3.Connection) -> None:
        conn.close()

    def close(self) -> None:
        pass  # nothing is kept between calls


class SQLiteStore(BlockingStore):
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
        super().__init__(SqlBackend(_SQLITE, _Files(self.path, timeout), "ccwire"))
