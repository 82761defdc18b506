"""`get_session_messages` and the subagent readers: whole transcripts, read from disk."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .chain import ParsedTranscript, parse_transcript, session_messages, subagent_messages
from .paths import candidate_project_dirs, valid_uuid
from .types import SessionMessage

__all__ = [
    "find_session_file",
    "get_session_messages",
    "get_subagent_messages",
    "list_subagents",
    "read_transcript",
    "subagent_files",
]

logger = logging.getLogger("ccwire.transcripts")


def find_session_file(session_id: str, directory: str | None) -> tuple[Path, Path] | None:
    """Find a session's transcript.

    Args:
        session_id: The session's UUID.
        directory: Its project directory (its git worktrees are tried too); `None`
            searches every project.

    Returns:
        `(transcript path, project directory)` for the first non-empty transcript
        found, or `None`.
    """
    name = f"{session_id}.jsonl"
    for project_dir, _ in candidate_project_dirs(directory):
        path = project_dir / name
        try:
            if path.stat().st_size > 0:
                return path, project_dir
        except OSError:
            continue
    return None


def read_transcript(path: Path) -> ParsedTranscript | None:
    """Read and parse one transcript file, logging how many lines were unreadable.

    Args:
        path: The `.jsonl` file.

    Returns:
        The parsed transcript, or `None` if the file cannot be read.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None
    parsed = parse_transcript(data.decode("utf-8", errors="replace"))
    if parsed.skipped:
        logger.warning("%s: skipped %d unreadable line(s)", path, parsed.skipped)
    return parsed


def get_session_messages(
    session_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    *,
    include_system_messages: bool = False,
) -> list[SessionMessage]:
    """Read a session's conversation from its transcript.

    The conversation is the `parentUuid` chain from the newest main-chain message
    back to the first. A turn that ran tools in parallel comes back whole: every
    `tool_use` and every `tool_result`, not only those on the branch the
    conversation continued from. Corrupt or truncated lines are skipped (and counted
    in a warning on the `ccwire.transcripts` logger).

    Args:
        session_id: The session's UUID.
        directory: Its project directory; `None` searches every project.
        limit: At most this many messages (ignored unless positive).
        offset: Skip this many first.
        include_system_messages: Also the system messages of the conversation
            (compaction boundaries, informational notices, ...): their `message` is
            the whole transcript entry.

    Returns:
        The user and assistant messages, oldest first; empty when the session is not
        found or `session_id` is not a UUID.

    Example:
        ```python
        from ccwire import get_session_messages

        for m in get_session_messages("550e8400-e29b-41d4-a716-446655440000"):
            print(m.type, m.message["content"])
        ```
    """
    if not valid_uuid(session_id):
        return []
    found = find_session_file(session_id, directory)
    if found is None:
        return []
    parsed = read_transcript(found[0])
    if parsed is None:
        return []
    return session_messages(parsed.entries, limit, offset, include_system_messages)


def subagent_files(session_id: str, directory: str | None) -> list[tuple[str, Path]]:
    """The subagent transcripts of a session, as `(agent id, path)` pairs.

    They live under `<project>/<session id>/subagents/`, possibly nested (e.g.
    `workflows/<run id>/`), as `agent-<agent id>.jsonl`.

    Args:
        session_id: The parent session's UUID.
        directory: Its project directory; `None` searches every project.

    Returns:
        The pairs, depth first in name order; empty if the session is not found.
    """
    found = find_session_file(session_id, directory)
    if found is None:
        return []
    out: list[tuple[str, Path]] = []
    _walk(found[0].with_suffix("") / "subagents", out)
    return out


def _walk(directory: Path, out: list[tuple[str, Path]]) -> None:
    try:
        children = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for child in children:
        name = child.name
        if child.is_file() and name.startswith("agent-") and name.endswith(".jsonl"):
            out.append((name[len("agent-") : -len(".jsonl")], child))
        elif child.is_dir():
            _walk(child, out)


def list_subagents(session_id: str, directory: str | None = None) -> list[str]:
    """The ids of the subagents a session ran.

    Args:
        session_id: The parent session's UUID.
        directory: Its project directory; `None` searches every project.

    Returns:
        The agent ids (for `get_subagent_messages`); empty when there are none, the
        session is not found or `session_id` is not a UUID.
    """
    if not valid_uuid(session_id):
        return []
    return [agent_id for agent_id, _ in subagent_files(session_id, directory)]


def _sidecar(transcript: Path) -> dict[str, Any] | None:
    path = transcript.with_name(transcript.name[: -len(".jsonl")] + ".meta.json")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def get_subagent_messages(
    session_id: str,
    agent_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """Read one subagent's conversation.

    Each message carries `parent_tool_use_id` (the `Agent` call that started the
    subagent) and `parent_agent_id` (for nested subagents), from the
    `agent-<id>.meta.json` file beside the transcript; both are `None` without it.

    Args:
        session_id: The parent session's UUID.
        agent_id: The subagent's id, from `list_subagents`.
        directory: The project directory; `None` searches every project.
        limit: At most this many messages (ignored unless positive).
        offset: Skip this many first.

    Returns:
        The subagent's user and assistant messages, oldest first; empty when not
        found.
    """
    if not valid_uuid(session_id) or not agent_id:
        return []
    path = next(
        (p for found, p in subagent_files(session_id, directory) if found == agent_id), None
    )
    if path is None:
        return []
    parsed = read_transcript(path)
    if parsed is None or not parsed.entries:
        return []
    meta = _sidecar(path) or {}
    tool_use_id = meta.get("toolUseId")
    parent_agent = meta.get("parentAgentId")
    return subagent_messages(
        parsed.entries,
        limit,
        offset,
        tool_use_id if isinstance(tool_use_id, str) else None,
        parent_agent if isinstance(parent_agent, str) else None,
    )
