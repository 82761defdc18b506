"""`TranscriptMirrorBatcher`: the CLI's `transcript_mirror` frames, batched into a store.

It lives in the conversation layer (not with the store adapters in
`ccwire._sessions.stores`) because the connection drives it for the `session_store`
option, and a layer only imports downwards; it needs nothing but the `SessionStore`
protocol.

With `--session-mirror` the CLI sends, next to its messages, a `transcript_mirror`
frame (`{"filePath", "entries"}`) for every batch of lines it writes to a transcript.
The batcher collects them and appends them to a `SessionStore`: at the end of each
turn (`flush()`, on the result message), when more than 500 entries or 1 MiB are
pending (a flush in the background, so memory stays flat in long turns), and at the
end (`close()`). The local transcript is already on disk, so a failing store never
disturbs the session: each batch is tried three times (0.2 s, then 0.8 s apart; a
timeout is not retried, as the call in flight may still land), then dropped and
reported through `on_error`, which turns it into a `MirrorErrorMessage`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath

import anyio
import anyio.abc

from ..._core.cancel import raised_by_callback
from .protocol import SessionKey, SessionStore, SessionStoreEntry, SessionStoreFlushMode

__all__ = [
    "MAX_PENDING_BYTES",
    "MAX_PENDING_ENTRIES",
    "MIRROR_APPEND_ATTEMPTS",
    "MIRROR_APPEND_BACKOFF",
    "TranscriptMirrorBatcher",
    "file_path_to_session_key",
]

logger = logging.getLogger("ccwire")

MAX_PENDING_ENTRIES = 500
"""More pending entries than this start a flush in the background."""
MAX_PENDING_BYTES = 1 << 20
"""More pending bytes (of JSON) than this start a flush in the background."""
MIRROR_APPEND_ATTEMPTS = 3
"""How many times one batch is offered to `SessionStore.append`."""
MIRROR_APPEND_BACKOFF = (0.2, 0.8)
"""Seconds between two attempts."""
SEND_TIMEOUT = 60.0
"""Seconds one `append` may take; a timed-out append is not retried."""

OnMirrorError = Callable[[SessionKey | None, str], Awaitable[None]]
"""Called with the key and the error text of a batch that was dropped."""


def file_path_to_session_key(file_path: str, projects_dir: str) -> SessionKey | None:
    """The store key of a transcript file under the CLI's `projects` directory.

    `<projects_dir>/<project_key>/<session_id>.jsonl` is a main transcript;
    `<projects_dir>/<project_key>/<session_id>/<sub/path>.jsonl` (for example
    `subagents/agent-1.jsonl`) a subagent's, with the subpath `/`-joined on every
    platform.

    Args:
        file_path: The absolute path from the `transcript_mirror` frame.
        projects_dir: The CLI's `projects` directory.

    Returns:
        The key, or `None` for a path outside `projects_dir` or of another shape.
    """
    try:
        rel = os.path.relpath(file_path, projects_dir)
    except ValueError:  # another drive (Windows)
        return None
    parts = PurePath(rel).parts
    if len(parts) < 2 or parts[0] == ".." or PurePath(rel).is_absolute():
        return None
    project_key, second = parts[0], parts[1]
    if len(parts) == 2:
        if not second.endswith(".jsonl"):
            return None
        return {"project_key": project_key, "session_id": second[: -len(".jsonl")]}
    if len(parts) < 4:
        return None
    sub = list(parts[2:])
    if sub[-1].endswith(".jsonl"):
        sub[-1] = sub[-1][: -len(".jsonl")]
    return {"project_key": project_key, "session_id": second, "subpath": str(PurePosixPath(*sub))}


@dataclass
class _Frame:
    file_path: str
    entries: list[SessionStoreEntry]


class TranscriptMirrorBatcher:
    """Collects `transcript_mirror` frames and appends them to a store, in order.

    `enqueue` never blocks; `flush` and `close` never raise (failures go to
    `on_error`). Appends are serialized, so entries reach the store in frame order.

    Args:
        store: The transcript store.
        projects_dir: The CLI's `projects` directory, to turn file paths into keys.
        on_error: Called for each dropped batch (after the lock is released, so a slow
            callback does not hold up later flushes).
        task_group: Where background flushes run; without one, batches wait for the
            next `flush()`.
        flush_mode: `"batched"` (flush per turn or past the thresholds) or `"eager"`
            (a background flush after every frame).
        send_timeout: Seconds one `append` may take.
    """

    def __init__(
        self,
        store: SessionStore,
        projects_dir: str,
        on_error: OnMirrorError,
        *,
        task_group: anyio.abc.TaskGroup | None = None,
        flush_mode: SessionStoreFlushMode = "batched",
        send_timeout: float = SEND_TIMEOUT,
    ) -> None:
        self.store = store
        self.projects_dir = projects_dir
        self.on_error = on_error
        self.send_timeout = send_timeout
        eager = flush_mode == "eager"
        self.max_pending_entries = 0 if eager else MAX_PENDING_ENTRIES
        self.max_pending_bytes = 0 if eager else MAX_PENDING_BYTES
        self._task_group = task_group
        self._pending: list[_Frame] = []
        self._pending_entries = 0
        self._pending_bytes = 0
        self._lock = anyio.Lock()

    def enqueue(self, file_path: str, entries: list[SessionStoreEntry]) -> None:
        """Buffer one frame; past the thresholds, start a flush in the background.

        Args:
            file_path: The frame's `filePath`.
            entries: The frame's entries.
        """
        size = len(json.dumps(entries, separators=(",", ":"), default=str))
        self._pending.append(_Frame(file_path, list(entries)))
        self._pending_entries += len(entries)
        self._pending_bytes += size
        over = (
            self._pending_entries > self.max_pending_entries
            or self._pending_bytes > self.max_pending_bytes
        )
        if over and self._task_group is not None:
            self._task_group.start_soon(self._drain)

    @property
    def pending(self) -> int:
        """How many entries wait for the next flush."""
        return self._pending_entries

    @property
    def busy(self) -> bool:
        """Whether a flush is in flight (or waiting for one)."""
        stats = self._lock.statistics()
        return stats.locked or stats.tasks_waiting > 0

    async def flush(self) -> None:
        """Append everything pending (after any flush in flight). Never raises."""
        await self._drain()

    async def close(self) -> None:
        """The last flush, shielded from cancellation. Never raises."""
        with anyio.CancelScope(shield=True):
            await self._drain()

    async def _drain(self) -> None:
        frames, self._pending = self._pending, []
        self._pending_entries = self._pending_bytes = 0
        errors: list[tuple[SessionKey | None, str]] = []
        async with self._lock:
            try:
                await self._send(frames, errors)
            except Exception as exc:  # a bug of ours: never into the read loop
                logger.exception("ccwire: transcript mirror flush failed")
                errors.append((None, repr(exc)))
        for key, message in errors:
            try:
                await self.on_error(key, message)
            except Exception:
                logger.exception("ccwire: the transcript mirror's error callback raised")

    async def _send(
        self, frames: list[_Frame], errors: list[tuple[SessionKey | None, str]]
    ) -> None:
        by_path: dict[str, list[SessionStoreEntry]] = {}
        for frame in frames:  # one append per file and flush, entries in frame order
            by_path.setdefault(frame.file_path, []).extend(frame.entries)
        for file_path, entries in by_path.items():
            if not entries:
                continue
            key = self._key(file_path)
            if key is None:
                logger.warning(
                    "ccwire: dropping transcript mirror entries: %s is not under %s "
                    "(does the CLI run with another CLAUDE_CONFIG_DIR?)",
                    file_path,
                    self.projects_dir,
                )
                continue
            failure = await self._append(key, entries)
            if failure is not None:
                logger.error("ccwire: mirroring %s to the store failed: %s", file_path, failure)
                errors.append((key, failure))

    def _key(self, file_path: str) -> SessionKey | None:
        key = file_path_to_session_key(file_path, self.projects_dir)
        if key is None:  # the CLI may name the file by its resolved path (a symlinked HOME)
            resolved = os.path.realpath(self.projects_dir)
            if resolved != self.projects_dir:
                key = file_path_to_session_key(file_path, resolved)
        return key

    async def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> str | None:
        last: BaseException | None = None
        for attempt in range(MIRROR_APPEND_ATTEMPTS):
            if attempt:
                await anyio.sleep(MIRROR_APPEND_BACKOFF[attempt - 1])
            try:
                with anyio.fail_after(self.send_timeout):
                    await self.store.append(key, entries)
                return None
            except TimeoutError as exc:  # the call may still land: a retry could duplicate
                return f"append timed out after {self.send_timeout:g} s: {exc!r}"
            except Exception as exc:  # the adapter is user code
                last = exc
            except BaseException as exc:  # its own cancellation exception is its failure
                if not raised_by_callback(exc):
                    raise
                last = exc
        return f"{type(last).__name__}: {last}" if last is not None else "append failed"
