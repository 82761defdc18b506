"""`rename_session`, `tag_session`, `delete_session`, `fork_session`: writing transcripts.

Renames and tags append one metadata line, as the CLI itself does (the last one
wins), with `O_APPEND` so a CLI writing the same file concurrently is not
overwritten. A delete removes the transcript and its subagent directory. A fork
writes a new transcript next to the source.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from pathlib import Path

from .errors import SessionNotFoundError, TranscriptArgumentError
from .fork import dumps, fork_lines, parse_fork_source, sanitize_unicode
from .lite import LITE_READ_BUF_SIZE, first_prompt_from_head, last_string_field
from .paths import candidate_project_dirs, valid_uuid
from .reading import find_session_file
from .types import ForkSessionResult

__all__ = ["delete_session", "fork_session", "rename_session", "tag_session"]

logger = logging.getLogger("ccwire.transcripts")


def _check_id(session_id: str) -> None:
    if not valid_uuid(session_id):
        raise TranscriptArgumentError(f"Invalid session_id: {session_id}")


def _not_found(session_id: str, directory: str | None) -> SessionNotFoundError:
    where = f" in project directory for {directory}" if directory else ""
    return SessionNotFoundError(f"Session {session_id} not found{where}")


def _try_append(path: Path, data: bytes) -> bool:
    """Append to an existing, non-empty file; `False` if it is missing or empty."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return False
        raise
    try:
        if os.fstat(fd).st_size == 0:
            return False
        os.write(fd, data)
        return True
    finally:
        os.close(fd)


def _append(session_id: str, line: str, directory: str | None) -> None:
    data = (line + "\n").encode("utf-8")
    name = f"{session_id}.jsonl"
    for project_dir, _ in candidate_project_dirs(directory):
        if _try_append(project_dir / name, data):
            return
    if directory:
        raise _not_found(session_id, directory)
    raise SessionNotFoundError(f"Session {session_id} not found in any project directory")


def rename_session(session_id: str, title: str, directory: str | None = None) -> None:
    """Give a session a title, shown by `list_sessions` as its summary.

    Args:
        session_id: The session's UUID.
        title: The new title; surrounding whitespace is stripped.
        directory: Its project directory; `None` searches every project.

    Raises:
        TranscriptArgumentError: `session_id` is not a UUID or `title` is blank
            (also a `ValueError`).
        SessionNotFoundError: No such session (also a `FileNotFoundError`).
    """
    _check_id(session_id)
    if not isinstance(title, str):
        raise TranscriptArgumentError(f"title must be a str, not {type(title).__name__}")
    stripped = title.strip()
    if not stripped:
        raise TranscriptArgumentError("title must be non-empty")
    line = dumps({"type": "custom-title", "customTitle": stripped, "sessionId": session_id})
    _append(session_id, line, directory)


def tag_session(session_id: str, tag: str | None, directory: str | None = None) -> None:
    """Tag a session, or clear its tag with `None`.

    Invisible and private-use characters are removed from the tag first.

    Args:
        session_id: The session's UUID.
        tag: The tag, or `None` to clear it.
        directory: Its project directory; `None` searches every project.

    Raises:
        TranscriptArgumentError: `session_id` is not a UUID or `tag` is blank
            (also a `ValueError`).
        SessionNotFoundError: No such session (also a `FileNotFoundError`).
    """
    _check_id(session_id)
    if tag is not None:
        if not isinstance(tag, str):
            raise TranscriptArgumentError(f"tag must be a str or None, not {type(tag).__name__}")
        tag = sanitize_unicode(tag).strip()
        if not tag:
            raise TranscriptArgumentError("tag must be non-empty (use None to clear)")
    line = dumps({"type": "tag", "tag": tag if tag is not None else "", "sessionId": session_id})
    _append(session_id, line, directory)


def delete_session(session_id: str, directory: str | None = None) -> None:
    """Delete a session's transcript and its subagent transcripts, for good.

    Args:
        session_id: The session's UUID.
        directory: Its project directory; `None` searches every project.

    Raises:
        TranscriptArgumentError: `session_id` is not a UUID (also a `ValueError`).
        SessionNotFoundError: No such session (also a `FileNotFoundError`).
    """
    _check_id(session_id)
    found = find_session_file(session_id, directory)
    if found is None:
        raise _not_found(session_id, directory)
    path = found[0]
    try:
        path.unlink()
    except FileNotFoundError as exc:
        raise _not_found(session_id, None) from exc
    shutil.rmtree(path.parent / session_id, ignore_errors=True)


def fork_session(
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Copy a session into a new one, whole or up to one message.

    The copy gets new entry ids (the `parentUuid` chain is kept) and a title: the
    given one, else the source's title plus " (fork)". Resume it like any session.

    Args:
        session_id: The source session's UUID.
        directory: Its project directory; `None` searches every project.
        up_to_message_id: Copy up to and including this entry (a
            `SessionMessage.uuid`); `None` copies everything.
        title: The new session's title.

    Returns:
        The new session's id.

    Raises:
        TranscriptArgumentError: An id is not a UUID, there is nothing to fork, or
            `up_to_message_id` is not in the session (also a `ValueError`).
        SessionNotFoundError: No such session (also a `FileNotFoundError`).

    Example:
        ```python
        from ccwire import fork_session, get_session_messages

        messages = get_session_messages(session_id)
        fork = fork_session(session_id, up_to_message_id=messages[1].uuid)
        ```
    """
    _check_id(session_id)
    if up_to_message_id and not valid_uuid(up_to_message_id):
        raise TranscriptArgumentError(f"Invalid up_to_message_id: {up_to_message_id}")
    found = find_session_file(session_id, directory)
    if found is None:
        raise _not_found(session_id, directory)
    path, project_dir = found
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise _not_found(session_id, directory) from exc
    if not content:
        raise TranscriptArgumentError(f"Session {session_id} has no messages to fork")
    entries, replacements, skipped = parse_fork_source(
        content.decode("utf-8", errors="replace"), session_id
    )
    if skipped:
        logger.warning("%s: skipped %d unreadable line(s)", path, skipped)

    def derive_title() -> str | None:
        head = content[:LITE_READ_BUF_SIZE].decode("utf-8", errors="replace")
        tail = content[-LITE_READ_BUF_SIZE:].decode("utf-8", errors="replace")
        return (
            last_string_field(tail, "customTitle")
            or last_string_field(head, "customTitle")
            or last_string_field(tail, "aiTitle")
            or last_string_field(head, "aiTitle")
            or first_prompt_from_head(head).text
            or None
        )

    fork_id, lines = fork_lines(
        entries, replacements, session_id, up_to_message_id, title, derive_title
    )
    fd = os.open(project_dir / f"{fork_id}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    return ForkSessionResult(session_id=fork_id)
