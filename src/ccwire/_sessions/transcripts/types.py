"""The public result types of the transcript helpers.

They mirror the reference SDK's classes field for field, so results compare equal
across the two packages. They are plain (mutable) dataclasses because the
reference's are: code that builds or updates them keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ForkSessionResult", "SDKSessionInfo", "SessionMessage"]


@dataclass
class SDKSessionInfo:
    """Metadata of one session, as `list_sessions` and `get_session_info` return it.

    Everything here comes from a stat and a read of the transcript's first and last
    64 KiB: no full parse.

    Attributes:
        session_id: The session's UUID (the transcript's file name).
        summary: The display title: the custom title, else the AI title, else the
            last prompt, else the CLI's summary, else the first prompt.
        last_modified: When the transcript was last written, in milliseconds since
            the epoch.
        file_size: The transcript's size in bytes (`None` for stores without files).
        custom_title: The user-set title, else the AI-generated one.
        first_prompt: The first meaningful user prompt, at most 200 characters.
        git_branch: The git branch at the end of the session.
        cwd: The session's working directory.
        tag: The user-set tag (`tag_session`), or `None`.
        created_at: The first entry's timestamp, in milliseconds since the epoch.
        archived: Whether the session is archived (`archive_session`); `None` when it
            never was, or was never unarchived either.
    """

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None
    archived: bool | None = None


@dataclass
class SessionMessage:
    """One user or assistant (or, when asked for, system) message of a transcript.

    Attributes:
        type: `"user"`, `"assistant"`, or `"system"` (with
            `get_session_messages(include_system_messages=True)`).
        uuid: The transcript entry's id (usable as `fork_session`'s
            `up_to_message_id`).
        session_id: The session the entry belongs to.
        message: The raw Messages API message (`role`, `content`, ...), as written; for
            a system message, the whole transcript entry (`subtype`, `content`, ...).
        parent_tool_use_id: For subagent messages, the id of the `Agent` tool call
            that started the subagent (from its `.meta.json` sidecar); else `None`.
        parent_agent_id: For a nested subagent, the id of the subagent that started
            it; else `None`.
    """

    type: Literal["user", "assistant", "system"]
    uuid: str
    session_id: str
    message: Any
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


@dataclass
class ForkSessionResult:
    """What `fork_session` made.

    Attributes:
        session_id: The UUID of the new, forked session.
    """

    session_id: str
