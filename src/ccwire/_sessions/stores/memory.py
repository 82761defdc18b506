"""`InMemorySessionStore`: a `SessionStore` in dicts, for tests and development."""

from __future__ import annotations

import time

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
from .summary import fold_session_summary

__all__ = ["InMemorySessionStore", "MonotonicMillis"]

_Parts = tuple[str, str, str]


class MonotonicMillis:
    """Wall-clock Unix epoch milliseconds that never repeat nor go back in this process.

    Back-to-back writes then always get distinct, increasing `mtime`s, as a real
    database's commit order gives them.
    """

    def __init__(self) -> None:
        self._last = 0

    def __call__(self) -> int:
        """The next write time."""
        now = int(time.time() * 1000)
        self._last = now if now > self._last else self._last + 1
        return self._last


class InMemorySessionStore(SessionStore):
    """A `SessionStore` in process memory: nothing survives the process.

    Implements every optional method; `get_entries`, `size` and `clear` are extra
    helpers for tests.
    """

    def __init__(self) -> None:
        self._entries: dict[_Parts, list[SessionStoreEntry]] = {}
        self._mtimes: dict[_Parts, int] = {}
        self._summaries: dict[tuple[str, str], SessionSummaryEntry] = {}
        self._clock = MonotonicMillis()

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Append entries to `key` (see `SessionStore.append`).

        Args:
            key: The transcript.
            entries: The entries, kept as given (not copied).
        """
        parts = key_parts(key)
        self._entries.setdefault(parts, []).extend(check_entries(entries))
        now = self._clock()
        if not parts[2]:
            project, session, _ = parts
            folded = fold_session_summary(self._summaries.get((project, session)), key, entries)
            folded["mtime"] = now
            self._summaries[project, session] = folded
        self._mtimes[parts] = now

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries of `key`, or `None` if it was never written.

        Args:
            key: The transcript.

        Returns:
            A new list of the stored entries.
        """
        entries = self._entries.get(key_parts(key))
        return None if entries is None else list(entries)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts under `project_key`, with their write times.

        Args:
            project_key: The scope.

        Returns:
            One entry per session.
        """
        check_str("project_key", project_key)
        return [
            {"session_id": session, "mtime": self._mtimes.get((p, session, sub), 0)}
            for (p, session, sub) in self._entries
            if p == project_key and not sub
        ]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of the sessions under `project_key`.

        Args:
            project_key: The scope.

        Returns:
            One summary per main transcript.
        """
        check_str("project_key", project_key)
        return [s for (p, _), s in self._summaries.items() if p == project_key]

    async def delete(self, key: SessionKey) -> None:
        """Delete `key`; a main transcript takes its subkeys and summary along.

        Args:
            key: The transcript.
        """
        project, session, sub = key_parts(key)
        doomed = (
            [(project, session, sub)]
            if sub
            else [k for k in self._entries if k[0] == project and k[1] == session]
        )
        for parts in doomed:
            self._entries.pop(parts, None)
            self._mtimes.pop(parts, None)
        if not sub:
            self._summaries.pop((project, session), None)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session.

        Args:
            key: The session.

        Returns:
            The subpaths.
        """
        project, session_id, _ = key_parts(key)
        return [
            sub
            for (p, session, sub) in self._entries
            if p == project and session == session_id and sub
        ]

    def get_entries(self, key: SessionKey) -> list[SessionStoreEntry]:
        """The entries of `key` (empty if unknown), without awaiting. For tests.

        Args:
            key: The transcript.

        Returns:
            A new list of the stored entries.
        """
        return list(self._entries.get(key_parts(key), []))

    @property
    def size(self) -> int:
        """How many main transcripts are stored. For tests."""
        return sum(1 for (_, _, sub) in self._entries if not sub)

    def clear(self) -> None:
        """Forget everything. For tests."""
        self._entries.clear()
        self._mtimes.clear()
        self._summaries.clear()
