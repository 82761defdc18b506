"""Session helpers over a `SessionStore`: rename, tag, delete, fork, import local transcripts.

The same signatures and results as the reference SDK's `rename_session_via_store`,
`tag_session_via_store`, `delete_session_via_store`, `fork_session_via_store` and
`import_session_to_store`.
"""

from __future__ import annotations

import json
import os
import unicodedata
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import anyio.to_thread

from ..._conversation.cli_paths import project_key_for_directory, valid_uuid
from ..._conversation.transcript_store.mirror import MAX_PENDING_BYTES, MAX_PENDING_ENTRIES
from ..._conversation.transcript_store.protocol import (
    SessionKey,
    SessionStore,
    SessionStoreEntry,
    store_implements,
)
from ..transcripts.errors import SessionNotFoundError, TranscriptArgumentError
from ..transcripts.fork import fork_lines, sanitize_unicode, split_fork_source
from ..transcripts.lite import first_prompt_from_head
from ..transcripts.types import ForkSessionResult

__all__ = [
    "delete_session_via_store",
    "fork_session_via_store",
    "import_session_to_store",
    "rename_session_via_store",
    "tag_session_via_store",
]


def _check_id(session_id: str) -> None:
    if not valid_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _key(session_id: str, directory: str | os.PathLike[str] | None) -> SessionKey:
    return {"project_key": project_key_for_directory(directory), "session_id": session_id}


async def _append(
    session_store: SessionStore, session_id: str, directory: str | None, entry: dict[str, Any]
) -> None:
    """Append ``entry`` to the session's transcript, with the session's id, an entry id
    and the time."""
    entry = {**entry, "sessionId": session_id, "uuid": str(uuid.uuid4()), "timestamp": _now()}
    await session_store.append(_key(session_id, directory), [cast("SessionStoreEntry", entry)])


async def rename_session_via_store(
    session_store: SessionStore,
    session_id: str,
    title: str,
    directory: str | None = None,
) -> None:
    """Rename a session: append a `custom-title` entry to its transcript in the store.

    Args:
        session_store: The store.
        session_id: The session's UUID.
        title: The new title; surrounding whitespace is stripped.
        directory: The project directory that gives the `project_key` (default: the
            current directory).

    Raises:
        ValueError: `session_id` is not a UUID, or `title` is blank.
    """
    _check_id(session_id)
    stripped = title.strip()
    if not stripped:
        raise ValueError("title must be non-empty")
    await _append(
        session_store, session_id, directory, {"type": "custom-title", "customTitle": stripped}
    )


async def tag_session_via_store(
    session_store: SessionStore,
    session_id: str,
    tag: str | None,
    directory: str | None = None,
) -> None:
    """Tag a session (`None` clears the tag): append a `tag` entry in the store.

    Args:
        session_store: The store.
        session_id: The session's UUID.
        tag: The tag, cleaned of invisible and format characters and stripped; `None`
            clears it.
        directory: The project directory that gives the `project_key`.

    Raises:
        ValueError: `session_id` is not a UUID, or `tag` is blank once cleaned.
    """
    _check_id(session_id)
    if tag is not None:
        tag = sanitize_unicode(tag).strip()
        if not tag:
            raise ValueError("tag must be non-empty (use None to clear)")
    await _append(
        session_store, session_id, directory, {"type": "tag", "tag": tag if tag is not None else ""}
    )


async def delete_session_via_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
) -> None:
    """Delete a session from the store (nothing, if the store has no `delete`).

    Whether subagent transcripts go too is the store's `delete` semantics; every
    adapter ccwire ships cascades.

    Args:
        session_store: The store.
        session_id: The session's UUID.
        directory: The project directory that gives the `project_key`.

    Raises:
        ValueError: `session_id` is not a UUID.
    """
    _check_id(session_id)
    if store_implements(session_store, "delete"):
        await session_store.delete(_key(session_id, directory))


def _title_of(entries: list[Any]) -> str | None:
    """The last custom title, else the last AI title, else the first prompt."""
    custom = ai = None
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("customTitle"), str) and entry["customTitle"]:
            custom = entry["customTitle"]
        if isinstance(entry.get("aiTitle"), str) and entry["aiTitle"]:
            ai = entry["aiTitle"]
    if custom or ai:
        return custom or ai
    jsonl = "\n".join(json.dumps(e, separators=(",", ":")) for e in entries) + "\n"
    return first_prompt_from_head(jsonl).text or None


async def fork_session_via_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Copy a session kept in a store into a new session of the same store.

    The store-backed twin of `fork_session`: the copy gets a new session id and new
    entry ids (the `parentUuid` chain is kept, each entry records its origin in
    `forkedFrom`), and a title: the given one, else the source's title plus
    " (fork)". It is appended to the store under the same `project_key`, so it can be
    resumed with `session_store=...` and `resume=<new id>`. A copy made by the storage
    itself would not do: every entry is rewritten.

    Args:
        session_store: The store to read the session from and write the fork to.
        session_id: The source session's UUID.
        directory: The project directory that gives the `project_key` (default: the
            current directory).
        up_to_message_id: Copy up to and including this entry (a
            `SessionMessage.uuid`); `None` copies everything.
        title: The new session's title.

    Returns:
        The new session's id.

    Raises:
        TranscriptArgumentError: An id is not a UUID, there is nothing to fork, or
            `up_to_message_id` is not in the session (also a `ValueError`).
        SessionNotFoundError: The store does not have the session (also a
            `FileNotFoundError`).
    """
    if not valid_uuid(session_id):
        raise TranscriptArgumentError(f"Invalid session_id: {session_id}")
    if up_to_message_id and not valid_uuid(up_to_message_id):
        raise TranscriptArgumentError(f"Invalid up_to_message_id: {up_to_message_id}")
    source = _key(session_id, directory)
    loaded = await session_store.load(source)
    if not loaded:
        raise SessionNotFoundError(f"Session {session_id} not found")
    raw: list[Any] = list(loaded)
    entries, replacements, _ = split_fork_source(raw, session_id)
    fork_id, lines = fork_lines(
        entries, replacements, session_id, up_to_message_id, title, lambda: _title_of(raw)
    )
    await session_store.append(
        {"project_key": source["project_key"], "session_id": fork_id},
        [json.loads(line) for line in lines],
    )
    return ForkSessionResult(session_id=fork_id)


def _projects_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured) if configured else Path.home() / ".claude"
    return Path(unicodedata.normalize("NFC", str(base))) / "projects"


def _find_transcript(session_id: str, directory: str | None) -> Path | None:
    name = f"{session_id}.jsonl"
    projects = _projects_dir()

    def usable(path: Path) -> bool:
        try:
            return path.stat().st_size > 0
        except OSError:
            return False

    if directory:
        key = project_key_for_directory(directory)
        exact = projects / key / name
        if usable(exact):
            return exact
        if len(key) > 200:  # the CLI's hash suffix may differ: match the prefix
            for candidate in sorted(projects.glob(f"{key[:200]}-*")):
                if usable(candidate / name):
                    return candidate / name
        return None
    try:
        dirs = sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        return None
    return next((d / name for d in dirs if usable(d / name)), None)


def _jsonl_files(root: Path) -> Iterator[Path]:
    try:
        children = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for child in children:
        if child.is_dir():
            yield from _jsonl_files(child)
        elif child.is_file() and child.name.endswith(".jsonl"):
            yield child


def _read_batches(path: Path, batch_size: int) -> list[list[SessionStoreEntry]]:
    batches: list[list[SessionStoreEntry]] = []
    batch: list[SessionStoreEntry] = []
    size = 0
    with path.open(encoding="utf-8") as lines:
        for raw in lines:
            line = raw.rstrip("\n")
            if not line:
                continue
            batch.append(json.loads(line))
            size += len(line)
            if len(batch) >= batch_size or size >= MAX_PENDING_BYTES:
                batches.append(batch)
                batch, size = [], 0
    if batch:
        batches.append(batch)
    return batches


def _read_sidecar(transcript: Path) -> dict[str, Any] | None:
    sidecar = transcript.with_name(transcript.name[: -len(".jsonl")] + ".meta.json")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


async def _import_file(store: SessionStore, key: SessionKey, path: Path, batch_size: int) -> None:
    for batch in await anyio.to_thread.run_sync(_read_batches, path, batch_size):
        await store.append(key, batch)


async def import_session_to_store(
    session_id: str,
    store: SessionStore,
    *,
    directory: str | None = None,
    include_subagents: bool = True,
    batch_size: int = MAX_PENDING_ENTRIES,
) -> None:
    """Copy a local CLI transcript (and its subagents') into a store.

    The lines are appended in batches of `batch_size` entries (or 1 MiB). The key's
    `project_key` is the name of the project folder the file was found in, as the
    transcript mirror would have used, so the imported session resumes like a
    mirrored one. Entries keep their `uuid`, so importing twice is harmless with a
    store that deduplicates by `uuid` (every adapter ccwire ships does). A subagent's
    `.meta.json` sidecar is appended as an `agent_metadata` entry.

    Args:
        session_id: The session's UUID.
        store: The destination store.
        directory: The project directory to look in (default: every project).
        include_subagents: Also import the transcripts under
            `<session_id>/subagents/`.
        batch_size: Entries per `append` (a non-positive value means 500).

    Raises:
        ValueError: `session_id` is not a UUID.
        FileNotFoundError: No local transcript of that session was found.
    """
    _check_id(session_id)
    path = await anyio.to_thread.run_sync(_find_transcript, session_id, directory)
    if path is None:
        raise FileNotFoundError(f"Session {session_id} not found")
    if batch_size <= 0:
        batch_size = MAX_PENDING_ENTRIES
    project_key = path.parent.name
    await _import_file(
        store, {"project_key": project_key, "session_id": session_id}, path, batch_size
    )
    if not include_subagents:
        return
    session_dir = path.with_suffix("")
    files = await anyio.to_thread.run_sync(lambda: list(_jsonl_files(session_dir / "subagents")))
    for file in files:
        parts = list(file.relative_to(session_dir).parts)
        parts[-1] = parts[-1][: -len(".jsonl")]
        key: SessionKey = {
            "project_key": project_key,
            "session_id": session_id,
            "subpath": "/".join(parts),
        }
        await _import_file(store, key, file, batch_size)
        meta = await anyio.to_thread.run_sync(_read_sidecar, file)
        if meta is not None:
            await store.append(key, [cast("SessionStoreEntry", {**meta, "type": "agent_metadata"})])
