"""`BlockingStore`: the `SessionStore` methods written once, over a backend with a blocking driver.

`SQLiteStore` and `PostgresStore` (one SQL core, `sql.py`) and `RedisStore` are this
class with a `Backend`. The backend keeps rows with its driver; this class does the
rest, the same for all three: the JSON text of each entry and of each summary, the
summary fold (`Append.summary`), the shape of what each method returns, the worker
threads that run the driver's blocking API (so the stores work on asyncio and on trio
alike: the drivers' async clients need asyncio), and the translation of the driver's
errors into `SessionStoreError` naming the file or server.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio.to_thread

from ..._conversation.transcript_store.protocol import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    check_entries,
    check_str,
    key_parts,
)
from ..._core.errors import MissingExtraError, SessionStoreError
from .summary import fold_session_summary

__all__ = [
    "Append",
    "Backend",
    "BlockingStore",
    "Parts",
    "as_text",
    "decode_json",
    "encode_json",
    "import_driver",
]

_T = TypeVar("_T")

Parts = tuple[str, str, str]
"""`(project_key, session_id, subpath)`, `subpath` `""` for the main transcript."""


def encode_json(value: Any) -> str:
    """The compact JSON text a store keeps for `value` (an entry, a summary)."""
    return json.dumps(value, separators=(",", ":"))


def decode_json(raw: str | bytes, where: str) -> Any:
    """A stored JSON text decoded.

    Args:
        raw: The text.
        where: The file or server it came from, for the error.

    Returns:
        The value.

    Raises:
        SessionStoreError: The text is not valid JSON.
    """
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise SessionStoreError(
            f"a stored session entry is not valid JSON: {exc}", path=where
        ) from exc


def import_driver(module: str, store: str, needs: str, extra: str) -> Any:
    """A store's driver, imported when the store is first used (it is an optional extra).

    Args:
        module: The driver's module.
        store: The store's class name, for the error.
        needs: The driver as a reader knows it, for the error.
        extra: The extra that installs it.

    Raises:
        MissingExtraError: The driver is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(store, needs, extra) from exc


def as_text(value: str | bytes) -> str:
    """`value` as text: a driver may answer bytes (UTF-8) or text."""
    return value.decode() if isinstance(value, bytes) else value


@dataclass(frozen=True)
class Append:
    """One `append` call, ready for a backend.

    Attributes:
        key: The transcript.
        parts: Its `(project_key, session_id, subpath)`.
        entries: The entries, as given.
        rows: `(uuid, JSON text)` of each entry in order, `uuid` `None` when the entry
            has no string `uuid` (only those with one are idempotent).
    """

    key: SessionKey
    parts: Parts
    entries: list[SessionStoreEntry]
    rows: list[tuple[str | None, str]]

    def summary(self, stored: Any) -> Any:
        """The session's summary `data` once these entries are folded in.

        A backend calls it for a main transcript only (`parts[2] == ""`), while it
        holds the session's write lock, and stores the result with its write time.

        Args:
            stored: The `data` stored so far, or `None` for a new session.

        Returns:
            The new `data`.
        """
        prev: SessionSummaryEntry | None = (
            None if stored is None else {"session_id": self.parts[1], "mtime": 0, "data": stored}
        )
        return fold_session_summary(prev, self.key, self.entries)["data"]


class Backend(Protocol):
    """How a store keeps transcripts with a blocking driver.

    Every method but `close` runs in a worker thread. A session's appends must be
    serialized (the summary fold reads, then writes); `mtime`s are epoch milliseconds
    that never go back for one transcript.
    """

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        """The driver's exceptions, raised to the caller as `SessionStoreError`."""
        ...

    @property
    def where(self) -> str:
        """The file or server, without credentials, for error messages."""
        ...

    def append(self, batch: Append) -> None:
        """Store the rows whose `uuid` is new, stamp the transcript, fold the summary."""
        ...

    def load(self, parts: Parts) -> Sequence[str | bytes]:
        """The JSON texts of a transcript in append order (empty if none)."""
        ...

    def sessions(self, project_key: str) -> Iterable[tuple[str | bytes, float]]:
        """`(session_id, mtime)` of each main transcript of a project."""
        ...

    def summaries(self, project_key: str) -> Iterable[tuple[str | bytes, float, Any]]:
        """`(session_id, mtime, data)` of each summary of a project, `data` decoded."""
        ...

    def delete(self, parts: Parts) -> None:
        """Delete a transcript; a main one takes its subkeys and summary along."""
        ...

    def subkeys(self, project_key: str, session_id: str) -> Iterable[str | bytes]:
        """The subpaths stored under a session."""
        ...

    def close(self) -> None:
        """Close what the backend keeps open for reuse."""
        ...


class BlockingStore(SessionStore):
    """A `SessionStore` over a `Backend`; implements every optional method.

    Each call runs in a worker thread. A call that is cancelled, or gets no answer
    within ``call_timeout``, returns at once: its thread is left to finish on its own
    (a driver waiting for a server that stopped answering cannot be interrupted).

    Args:
        backend: How the rows are kept.
        call_timeout: Seconds a call may wait for the backend (``None``: the driver's
            own timeouts bound it).
    """

    def __init__(self, backend: Backend, *, call_timeout: float | None = None) -> None:
        self._backend = backend
        self._call_timeout = call_timeout

    async def _call(self, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        backend = self._backend

        def call() -> _T:
            try:
                return fn(*args)
            except backend.errors as exc:
                raise SessionStoreError(
                    f"session store {what} failed: {exc}", path=backend.where
                ) from exc

        timeout = self._call_timeout
        with anyio.move_on_after(timeout):
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        raise SessionStoreError(
            f"session store {what} got no answer within {timeout:g} s (the server stopped "
            "answering; a write may still be applied when it comes back)",
            path=backend.where,
        )

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Append entries to `key` in one transaction (see `SessionStore.append`).

        Args:
            key: The transcript.
            entries: The entries; one with a `uuid` already stored is skipped.

        Raises:
            OptionsError: An argument has the wrong type (see `key_parts`).
            SessionStoreError: The store could not be reached or refused the write.
        """
        parts = key_parts(key)
        if not check_entries(entries):
            return
        rows = [
            (uuid if isinstance(uuid := e.get("uuid"), str) else None, encode_json(e))
            for e in entries
        ]
        batch = Append(key, parts, entries, rows)
        await self._call("append", self._backend.append, batch)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries of `key` in append order, or `None` if it holds none.

        Only a key never written (or deleted) holds none: `append(key, [])` writes
        nothing.

        Args:
            key: The transcript.

        Returns:
            The entries.

        Raises:
            OptionsError: An argument has the wrong type (see `key_parts`).
            SessionStoreError: The store could not be read, or holds invalid JSON.
        """
        texts = await self._call("load", self._backend.load, key_parts(key))
        return [decode_json(t, self._backend.where) for t in texts] if texts else None

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts under `project_key`, with their write times.

        Args:
            project_key: The scope.

        Returns:
            One entry per session.

        Raises:
            OptionsError: An argument has the wrong type (see `key_parts`).
            SessionStoreError: The store could not be read.
        """
        check_str("project_key", project_key)
        rows = await self._call("list_sessions", self._backend.sessions, project_key)
        return [{"session_id": as_text(s), "mtime": int(mtime)} for s, mtime in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of the sessions under `project_key`.

        Args:
            project_key: The scope.

        Returns:
            One summary per main transcript.

        Raises:
            OptionsError: An argument has the wrong type (see `key_parts`).
            SessionStoreError: The store could not be read, or holds invalid JSON.
        """
        check_str("project_key", project_key)
        rows = await self._call("list_session_summaries", self._backend.summaries, project_key)
        return [{"session_id": as_text(s), "mtime": int(mtime), "data": d} for s, mtime, d in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete `key`; a main transcript takes its subkeys and summary along.

        Args:
            key: The transcript.

        Raises:
            OptionsError: An argument has the wrong type (see `key_parts`).
            SessionStoreError: The store could not be reached or refused the delete.
        """
        await self._call("delete", self._backend.delete, key_parts(key))

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session, sorted.

        Args:
            key: The session.

        Returns:
            The subpaths.

        Raises:
            OptionsError: An argument has the wrong type (see `key_parts`).
            SessionStoreError: The store could not be read.
        """
        project_key, session_id, _ = key_parts(key)
        rows = await self._call("list_subkeys", self._backend.subkeys, project_key, session_id)
        return sorted(as_text(s) for s in rows)

    async def aclose(self) -> None:
        """Close the connections the store keeps for reuse.

        Calls in flight keep theirs until they end; a connection or client given to
        the store is left open.
        """
        self._backend.close()
