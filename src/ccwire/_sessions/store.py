"""Where session snapshots are kept, so a session can be found and resumed after a crash.

A session saves a `SessionStateInfo` snapshot after every transition.
`SnapshotStore` is the small interface a snapshot store implements; ccwire ships
`SQLiteSnapshotStore` (the default: one file under the user's data directory),
`MemorySnapshotStore` (for tests and throw-away sessions), and `StoreSnapshots`,
which keeps snapshots in any transcript `SessionStore` (PostgreSQL, Redis...), so one
store serves both needs.

`MemorySessionStore` and `SQLiteSessionStore` are the old names of the first two,
kept for one release with a `DeprecationWarning`: `SessionStore` now names the
reference SDK's transcript store protocol.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import warnings
from collections.abc import Callable, Sized
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

import anyio
import anyio.to_thread

from .._conversation.transcript_store.protocol import check_str
from .._core.errors import CcwireError, OptionsError, SessionStoreError, SnapshotTimeoutError
from .state import SessionStateInfo

__all__ = [
    "DEFAULT_SNAPSHOT_TIMEOUT",
    "MemorySessionStore",
    "MemorySnapshotStore",
    "SQLiteSessionStore",
    "SQLiteSnapshotStore",
    "SnapshotStore",
    "check_snapshot",
    "decode_snapshot",
    "default_session_store_path",
    "encode_snapshot",
    "load_snapshot",
    "snapshot_timeout",
    "stale_snapshot_error",
    "wait_for_snapshots",
]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at TEXT,
    snapshot TEXT NOT NULL
)
"""


@runtime_checkable
class SnapshotStore(Protocol):
    """Keeps the latest snapshot of each session, by session id.

    `save` replaces the snapshot stored for `info.session_id`; `load` returns it
    (`None` if unknown); `list` returns every stored snapshot, most recently updated
    first. Implementations must tolerate concurrent calls from many sessions, and
    report a corrupt or unreachable store as `SessionStoreError`.

    A store may set a `snapshot_timeout` attribute (seconds): closing a session
    waits that long for its last snapshots to be saved (default
    `DEFAULT_SNAPSHOT_TIMEOUT`), then raises `SnapshotTimeoutError`; resuming a
    session waits that long for `load`, then raises `SessionStoreError`.
    """

    async def save(self, info: SessionStateInfo) -> None:
        """Store `info` as the latest snapshot of its session."""
        ...

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of `session_id`, or `None`."""
        ...

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first."""
        ...


DEFAULT_SNAPSHOT_TIMEOUT = 30.0
"""Seconds a closing session waits for its last snapshots, unless its store says
otherwise with a `snapshot_timeout` attribute."""


def snapshot_timeout(store: object) -> float:
    """How long closing a session waits for `store` to save its last snapshots.

    Args:
        store: The session's snapshot store.

    Returns:
        The store's `snapshot_timeout` attribute when it is a positive number, else
        `DEFAULT_SNAPSHOT_TIMEOUT`.
    """
    value = getattr(store, "snapshot_timeout", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_SNAPSHOT_TIMEOUT


def default_session_store_path() -> Path:
    """`sessions.sqlite3` in ccwire's directory under the user's data directory.

    `$XDG_DATA_HOME/ccwire` (default `~/.local/share/ccwire`) on Linux and other
    Unix systems, `~/Library/Application Support/ccwire` on macOS and
    `%LOCALAPPDATA%\\ccwire` on Windows.
    """
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "ccwire" / "sessions.sqlite3"


def check_snapshot(info: SessionStateInfo) -> SessionStateInfo:
    """Refuse a snapshot to save (of `SnapshotStore.save`) that is not a `SessionStateInfo`.

    Args:
        info: What was given to save.

    Returns:
        ``info``.

    Raises:
        OptionsError: It is not a `SessionStateInfo`.
    """
    if not isinstance(info, SessionStateInfo):
        raise OptionsError(f"info must be a SessionStateInfo, not {type(info).__name__}")
    return info


def _sort_key(info: SessionStateInfo) -> str:
    return info.updated_at.isoformat() if info.updated_at else ""


def decode_snapshot(
    text: str | bytes, *, where: str, session_id: str | None = None
) -> SessionStateInfo:
    """A snapshot from its stored JSON text.

    Args:
        text: The JSON of `SessionStateInfo.to_dict()`.
        where: The file or server it came from, for the error message.
        session_id: The session it is stored under, if known: a snapshot of another
            session is corrupt.

    Returns:
        The snapshot.

    Raises:
        SessionStoreError: The text is not a valid snapshot (of ``session_id``).
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise SessionStoreError(f"corrupt session snapshot: {exc}", path=where) from exc
    if not isinstance(data, dict):
        raise SessionStoreError(
            f"corrupt session snapshot: a JSON {type(data).__name__}, not an object", path=where
        )
    try:
        info = SessionStateInfo.from_dict(data)
    except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as exc:
        # ArithmeticError: a count of 1e999 (int(inf) raises OverflowError)
        raise SessionStoreError(f"corrupt session snapshot: {exc!r}", path=where) from exc
    if session_id is not None and info.session_id != session_id:
        raise SessionStoreError(
            f"corrupt session snapshot: stored for session {session_id!r}, it is of "
            f"session {info.session_id!r}",
            path=where,
        )
    return info


def encode_snapshot(info: SessionStateInfo) -> str:
    """The JSON text a snapshot is stored as.

    Args:
        info: The snapshot.

    Returns:
        Compact JSON of `SessionStateInfo.to_dict()`.
    """
    return json.dumps(info.to_dict(), separators=(",", ":"), default=str)


class MemorySnapshotStore:
    """A `SnapshotStore` in a dict: nothing survives the process.

    Attributes:
        snapshot_timeout: Seconds a closing session waits for its last snapshots.
    """

    def __init__(self, *, snapshot_timeout: float = DEFAULT_SNAPSHOT_TIMEOUT) -> None:
        self._data: dict[str, SessionStateInfo] = {}
        self.snapshot_timeout = snapshot_timeout

    async def save(self, info: SessionStateInfo) -> None:
        """Store `info` as the latest snapshot of its session.

        Raises:
            OptionsError: ``info`` is not a `SessionStateInfo`.
        """
        self._data[check_snapshot(info).session_id] = info

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of `session_id`, or `None`.

        Raises:
            OptionsError: ``session_id`` is not a str.
        """
        return self._data.get(check_str("session_id", session_id))

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first."""
        return sorted(self._data.values(), key=_sort_key, reverse=True)


class SQLiteSnapshotStore:
    """A `SnapshotStore` in an SQLite file (stdlib `sqlite3`).

    `path` defaults to `default_session_store_path()`; its directory is created on
    first use. Every call opens a short-lived connection in a worker thread, so many
    sessions (and several processes) can share one file; the database runs in WAL
    mode with a busy timeout. Snapshots are stored as JSON
    (`SessionStateInfo.to_dict()`) in the table `sessions`. A file that is not a
    database, or a corrupt snapshot, raises `SessionStoreError` naming the file.

    Attributes:
        path: The database file.
        timeout: How long a call waits for another writer's lock, in seconds.
        snapshot_timeout: Seconds a closing session waits for its last snapshots.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        timeout: float = 10.0,
        snapshot_timeout: float = DEFAULT_SNAPSHOT_TIMEOUT,
    ) -> None:
        self.path = Path(path) if path is not None else default_session_store_path()
        self.timeout = timeout
        self.snapshot_timeout = snapshot_timeout
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

    def _call(self, what: str, fn: Callable[[sqlite3.Connection], _T]) -> _T:
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

    def _save(self, info: SessionStateInfo) -> None:
        data = encode_snapshot(info)

        def write(db: sqlite3.Connection) -> None:
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

        self._call("save", write)

    def _load(self, session_id: str) -> SessionStateInfo | None:
        row = self._call(
            "load",
            lambda db: db.execute(
                "SELECT snapshot FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone(),
        )
        return decode_snapshot(row[0], where=str(self.path), session_id=session_id) if row else None

    def _list(self) -> list[SessionStateInfo]:
        rows = self._call(
            "list",
            lambda db: db.execute(
                "SELECT snapshot, session_id FROM sessions ORDER BY updated_at DESC"
            ).fetchall(),
        )
        return [decode_snapshot(r[0], where=str(self.path), session_id=r[1]) for r in rows]

    async def save(self, info: SessionStateInfo) -> None:
        """Store `info` as the latest snapshot of its session.

        Raises:
            OptionsError: ``info`` is not a `SessionStateInfo`.
            SessionStoreError: The database could not be opened or written.
        """
        await anyio.to_thread.run_sync(self._save, check_snapshot(info))

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of `session_id`, or `None`.

        Raises:
            OptionsError: ``session_id`` is not a str.
            SessionStoreError: The database could not be read, or the snapshot is
                corrupt.
        """
        return await anyio.to_thread.run_sync(self._load, check_str("session_id", session_id))

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first.

        Raises:
            SessionStoreError: The database could not be read, or a snapshot is
                corrupt.
        """
        return await anyio.to_thread.run_sync(self._list)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"ccwire.{old} is deprecated and will be removed in the next release: it is now "
        f"ccwire.{new} (ccwire.SessionStore is the transcript store protocol of the "
        "reference SDK)",
        DeprecationWarning,
        stacklevel=3,
    )


class MemorySessionStore(MemorySnapshotStore):
    """Deprecated: the old name of `MemorySnapshotStore`, for one release."""

    def __init__(self, *, snapshot_timeout: float = DEFAULT_SNAPSHOT_TIMEOUT) -> None:
        _deprecated("MemorySessionStore", "MemorySnapshotStore")
        super().__init__(snapshot_timeout=snapshot_timeout)


class SQLiteSessionStore(SQLiteSnapshotStore):
    """Deprecated: the old name of `SQLiteSnapshotStore`, for one release."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        timeout: float = 10.0,
        snapshot_timeout: float = DEFAULT_SNAPSHOT_TIMEOUT,
    ) -> None:
        _deprecated("SQLiteSessionStore", "SQLiteSnapshotStore")
        super().__init__(path, timeout=timeout, snapshot_timeout=snapshot_timeout)


async def wait_for_snapshots(
    saved: anyio.Event, store: object, *, session_id: str, queued: Sized
) -> SnapshotTimeoutError | None:
    """Wait, shielded, until a closing session's snapshot writer has saved everything.

    Args:
        saved: Set by the writer once it has saved the last snapshot.
        store: The session's snapshot store (its `snapshot_timeout` bounds the wait).
        session_id: The session, for the error.
        queued: The snapshots still waiting for the writer (besides the one it is
            saving), counted for the error.

    Returns:
        `None` once everything is saved, or the `SnapshotTimeoutError` to raise from
        `close()` when the store took longer than its `snapshot_timeout`.
    """
    timeout = snapshot_timeout(store)
    with anyio.move_on_after(timeout, shield=True):
        await saved.wait()
    if saved.is_set():
        return None
    return SnapshotTimeoutError(session_id, timeout, len(queued) + 1)


async def load_snapshot(store: SnapshotStore, session_id: str) -> SessionStateInfo | None:
    """``store.load(session_id)``, bounded, with the store's failures typed.

    Args:
        store: A snapshot store (possibly the user's own).
        session_id: The session to look up.

    Returns:
        The stored snapshot, or `None`.

    Raises:
        SessionStoreError: The store raised (a `CcwireError` it raises is kept as it
            is, any other exception becomes the ``__cause__``), or did not answer
            within its `snapshot_timeout`.
    """
    timeout = snapshot_timeout(store)
    with anyio.move_on_after(timeout):
        try:
            return await store.load(session_id)
        except CcwireError:
            raise
        except Exception as exc:
            raise SessionStoreError(
                f"the session store {type(store).__name__} could not load session "
                f"{session_id}: {exc!r}"
            ) from exc
    raise SessionStoreError(
        f"the session store {type(store).__name__} did not load session {session_id} "
        f"within {timeout:g} s"
    )


def stale_snapshot_error(info: SessionStateInfo, cause: BaseException) -> SessionStoreError:
    """The error `close()` raises when the store failed to save a session's last snapshot.

    Args:
        info: The session's final snapshot (the one the store does not hold).
        cause: What the store raised; kept as ``__cause__``.

    Returns:
        A `SessionStoreError` saying the stored state is older than the session's.
    """
    error = SessionStoreError(
        f"session {info.session_id}: the store could not save its last snapshot "
        f"({info.state.value}): {cause}; the stored state is older than the session's"
    )
    path = getattr(cause, "path", None)  # already named in the message of the cause
    error.path = path if isinstance(path, str) else None
    error.__cause__ = cause
    return error
