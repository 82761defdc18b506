"""Archiving sessions, and telling programmatic ones apart, as the TypeScript SDK does.

An archived session keeps its transcript: the mark is a small file beside it,
``<project dir>/<session id>/archived.json`` (``{"archived": true, "at": ..., "by":
"sdk"}``, mode 0600 in a 0700 directory). `list_sessions` reports it as
``archived=True`` until a prompt is sent in the session later, which unarchives it.

A programmatic session is one an SDK started (entrypoint ``sdk-cli``, ``sdk-ts`` or
``sdk-py``) or a daemon ran; `list_sessions(include_programmatic=False)` leaves them out.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import SessionNotFoundError, TranscriptArgumentError
from .lite import first_string_field, iso_to_epoch_ms, last_string_field
from .paths import candidate_project_dirs, valid_uuid

__all__ = [
    "archive_session",
    "archived_state",
    "is_programmatic",
    "unarchive_session",
]

_MARK = "archived.json"
_MARK_MAX_BYTES = 4096
_PROGRAMMATIC_ENTRYPOINTS = frozenset({"sdk-cli", "sdk-ts", "sdk-py"})
_DAEMON_KINDS = frozenset({"daemon", "daemon-worker"})


def _mark_path(transcript: Path, session_id: str) -> Path:
    return transcript.parent / session_id / _MARK


def _set_archived(session_id: str, archived: bool, directory: str | None) -> None:
    if not valid_uuid(session_id):
        raise TranscriptArgumentError(f"Invalid session_id: {session_id}")
    name = f"{session_id}.jsonl"
    found = [
        project_dir / name
        for project_dir, _ in candidate_project_dirs(directory)
        if (project_dir / name).is_file()
    ]
    if not found:
        where = f"in project directory for {directory}" if directory else "in any project directory"
        raise SessionNotFoundError(f"Session {session_id} not found {where}")
    at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    record = json.dumps({"archived": archived, "at": at, "by": "sdk"}, separators=(",", ":"))
    for transcript in found:
        mark = _mark_path(transcript, session_id)
        mark.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = mark.with_name(f".{_MARK}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, record.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, mark)


def archive_session(session_id: str, directory: str | None = None) -> None:
    """Archive a session: it stays on disk, and `list_sessions` still lists it, with
    ``archived=True``. A prompt sent in the session later unarchives it. The transcript
    is not changed, and a process running the session is not stopped.

    Args:
        session_id: The session's UUID.
        directory: Its project directory; `None` searches every project.

    Raises:
        TranscriptArgumentError: ``session_id`` is not a UUID.
        SessionNotFoundError: No transcript of the session was found.

    Example:
        ```python
        from ccwire import archive_session, list_sessions

        archive_session("550e8400-e29b-41d4-a716-446655440000")
        active = [s for s in list_sessions() if not s.archived]
        ```
    """
    _set_archived(session_id, True, directory)


def unarchive_session(session_id: str, directory: str | None = None) -> None:
    """Undo `archive_session`: `list_sessions` reports the session with
    ``archived=False``.

    Args:
        session_id: The session's UUID.
        directory: Its project directory; `None` searches every project.

    Raises:
        TranscriptArgumentError: ``session_id`` is not a UUID.
        SessionNotFoundError: No transcript of the session was found.
    """
    _set_archived(session_id, False, directory)


def _read_mark(transcript: Path, session_id: str) -> tuple[bool, int] | None:
    """The mark's value and when it was written; None without a readable mark (missing,
    too big, not JSON, or without a boolean ``archived`` and an ISO ``at``)."""
    try:
        with open(_mark_path(transcript, session_id), "rb") as fh:
            data = fh.read(_MARK_MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > _MARK_MAX_BYTES:
        return None
    try:
        record: Any = json.loads(data)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("archived"), bool):
        return None
    at = iso_to_epoch_ms(record.get("at"))
    return None if at is None else (record["archived"], at)


_QUIET_FLAGS = (
    "isCompactSummary",
    "isSidechain",
    "isVirtual",
    "isVisibleInTranscriptOnly",
    "isMeta",
)


def _prompt_time(line: str) -> int | None:
    """When a person's prompt on ``line`` was sent (a user entry, or a queued command),
    else None."""
    if '"user"' not in line and '"queued_command"' not in line:
        return None
    try:
        entry: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    if entry.get("type") == "user":
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        origin = entry.get("origin")
        if any(entry.get(flag) for flag in _QUIET_FLAGS):
            return None
    elif entry.get("type") == "attachment":
        attachment = entry.get("attachment")
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return None
        content, origin = attachment.get("prompt"), attachment.get("origin")
    else:
        return None
    if isinstance(origin, dict) and origin.get("kind") != "human":
        return None
    if isinstance(content, str):
        said = bool(content.strip())
    elif isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict)]
        if any(b.get("type") == "tool_result" for b in blocks):
            return None
        said = any(
            b.get("type") in ("image", "document")
            or (isinstance(b.get("text"), str) and b["text"].strip())
            for b in blocks
        )
    else:
        return None
    return iso_to_epoch_ms(entry.get("timestamp")) if said else None


def archived_state(transcript: Path, session_id: str, head: str, tail: str) -> bool | None:
    """Whether `list_sessions` reports the session archived: its mark's value, except
    that a person's prompt sent after the mark was written unarchives it; None without
    a mark."""
    mark = _read_mark(transcript, session_id)
    if mark is None:
        return None
    archived, at = mark
    if not archived:
        return False
    for text in (tail,) if head is tail else (tail, head):
        for line in text.splitlines():
            sent = _prompt_time(line)
            if sent is not None and sent > at:
                return False
    return True


def is_programmatic(head: str, tail: str) -> bool:
    """Whether an SDK or a daemon ran the session (its entrypoint, or its first
    chain entry's ``sessionKind``)."""
    entrypoint = first_string_field(head, "entrypoint") or last_string_field(tail, "entrypoint")
    if entrypoint in _PROGRAMMATIC_ENTRYPOINTS:
        return True
    first = next((line for line in head.split("\n") if '"parentUuid":' in line), head)
    return first_string_field(first, "sessionKind") in _DAEMON_KINDS
