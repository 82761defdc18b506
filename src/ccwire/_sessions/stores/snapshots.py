"""`StoreSnapshots`: ccwire's session snapshots kept in a transcript `SessionStore`.

One store then serves both needs: the transcripts the CLI writes, and the snapshots a
`ClaudeCodeAgent` saves after every transition (to find and resume a session after a
crash). Each session's snapshots are appended, one entry per save, to the key
`{"project_key": SNAPSHOT_PROJECT_KEY, "session_id": <id>}`; the last one is the
current snapshot. A dedicated project key (rather than a subkey of the session's
transcript) is what lets `load` find a snapshot from its session id alone, and `list`
enumerate all of them with `list_sessions`, whichever directory the session ran in.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ..._conversation.transcript_store.protocol import (
    SessionKey,
    SessionStore,
    SessionStoreEntry,
    check_str,
    store_implements,
)
from ..._core.errors import OptionsError, SessionStoreError
from ..state import SessionStateInfo
from ..store import (
    DEFAULT_SNAPSHOT_TIMEOUT,
    SnapshotStore,
    check_snapshot,
    decode_snapshot,
    encode_snapshot,
)

__all__ = ["SNAPSHOT_ENTRY_TYPE", "SNAPSHOT_PROJECT_KEY", "StoreSnapshots", "as_snapshot_store"]

SNAPSHOT_PROJECT_KEY = "ccwire-snapshots"
"""The project key under which `StoreSnapshots` keeps snapshots."""

SNAPSHOT_ENTRY_TYPE = "ccwire_snapshot"
"""The `type` of a snapshot entry; its `snapshot` field is `SessionStateInfo.to_dict()`."""


def _key(session_id: str) -> SessionKey:
    return {"project_key": SNAPSHOT_PROJECT_KEY, "session_id": session_id}


class StoreSnapshots:
    """A `SnapshotStore` over any transcript `SessionStore`.

    Every save appends one small entry, so a session's snapshot history grows by one
    entry per transition until the session is deleted from the store (`delete` of its
    key); the store's own retention applies to it as to transcripts.

    Args:
        store: The transcript store; `list` needs it to implement `list_sessions`.
        snapshot_timeout: Seconds a closing session waits for its last snapshots.

    Attributes:
        store: The transcript store.
        snapshot_timeout: Seconds a closing session waits for its last snapshots.
    """

    def __init__(self, store: SessionStore, *, snapshot_timeout: float | None = None) -> None:
        self.store = store
        given = getattr(store, "snapshot_timeout", None)
        self.snapshot_timeout = (
            snapshot_timeout
            if snapshot_timeout is not None
            else float(given)
            if isinstance(given, (int, float))
            else DEFAULT_SNAPSHOT_TIMEOUT
        )

    def _where(self) -> str:
        return f"{type(self.store).__name__} key {SNAPSHOT_PROJECT_KEY!r}"

    async def save(self, info: SessionStateInfo) -> None:
        """Append `info` as the latest snapshot of its session.

        Args:
            info: The snapshot.

        Raises:
            OptionsError: ``info`` is not a `SessionStateInfo`.
        """
        info = check_snapshot(info)
        entry = {"type": SNAPSHOT_ENTRY_TYPE, "snapshot": json.loads(encode_snapshot(info))}
        await self.store.append(_key(info.session_id), [cast("SessionStoreEntry", entry)])

    async def load(self, session_id: str) -> SessionStateInfo | None:
        """The latest snapshot of `session_id`, or `None`.

        Args:
            session_id: The session.

        Returns:
            The last snapshot appended for it.

        Raises:
            OptionsError: ``session_id`` is not a str.
            SessionStoreError: The stored snapshot is corrupt (or of another session).
        """
        entries = await self.store.load(_key(check_str("session_id", session_id)))
        for entry in reversed(entries or []):
            raw = cast("dict[str, Any]", entry)
            if raw.get("type") == SNAPSHOT_ENTRY_TYPE:
                text = json.dumps(raw.get("snapshot"))
                return decode_snapshot(text, where=self._where(), session_id=session_id)
        return None

    async def list(self) -> list[SessionStateInfo]:
        """Every stored snapshot, most recently updated first.

        Returns:
            The latest snapshot of each session.

        Raises:
            SessionStoreError: The store cannot list sessions, or a snapshot is corrupt.
        """
        if not store_implements(self.store, "list_sessions"):
            raise SessionStoreError(
                f"{type(self.store).__name__} does not implement list_sessions(), "
                "so its snapshots cannot be listed"
            )
        found: list[SessionStateInfo] = []
        for listed in await self.store.list_sessions(SNAPSHOT_PROJECT_KEY):
            info = await self.load(listed["session_id"])
            if info is not None:
                found.append(info)
        found.sort(key=lambda i: i.updated_at.isoformat() if i.updated_at else "", reverse=True)
        return found


def as_snapshot_store(store: SnapshotStore | SessionStore) -> SnapshotStore:
    """The snapshot store to use for `store`.

    Args:
        store: A `SnapshotStore` (used as it is) or a transcript `SessionStore`
            (wrapped in `StoreSnapshots`).

    Returns:
        A `SnapshotStore`.

    Raises:
        OptionsError: `store` is neither (a `TypeError` too).
    """
    if callable(getattr(store, "save", None)) and callable(getattr(store, "list", None)):
        return cast("SnapshotStore", store)
    if callable(getattr(store, "append", None)) and callable(getattr(store, "load", None)):
        return StoreSnapshots(cast("SessionStore", store))
    raise OptionsError(
        f"not a session store: {type(store).__name__} has neither save/load/list "
        "(a SnapshotStore) nor append/load (a SessionStore)"
    )
