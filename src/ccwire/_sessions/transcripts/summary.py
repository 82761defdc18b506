"""`fold_session_summary`: a session's listing metadata, kept up to date entry by entry.

A transcript store calls it from its `append` so that listing sessions needs one
summary per session instead of a full load. Every field is set once or last-wins,
so a batch never needs the entries before it.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from typing_extensions import NotRequired, Required

from .lite import iso_to_epoch_ms, prompt_from_texts

__all__ = ["SessionKey", "SessionStoreEntry", "SessionSummaryEntry", "fold_session_summary"]


class SessionKey(TypedDict):
    """Names one transcript in a store.

    Attributes:
        project_key: The project, by default `project_key_for_directory(cwd)`.
        session_id: The session's UUID.
        subpath: Set for a subagent transcript (e.g. `subagents/agent-<id>`);
            absent for the main one.
    """

    project_key: str
    session_id: str
    subpath: NotRequired[str]


class SessionStoreEntry(TypedDict, total=False):
    """One transcript line as a store sees it: a JSON object with a `type`.

    Attributes:
        type: The entry's kind (`user`, `assistant`, `custom-title`, ...).
        uuid: The entry's id, when it has one.
        timestamp: When it was written (ISO-8601), when it has one.
    """

    type: Required[str]
    uuid: str
    timestamp: str


class SessionSummaryEntry(TypedDict):
    """The running summary a store keeps per session.

    Attributes:
        session_id: The session's UUID.
        mtime: When the store last wrote the summary, in milliseconds since the
            epoch; stamped by the store, not by the fold.
        data: Opaque state owned by the fold; stores persist it as is.
    """

    session_id: str
    mtime: int
    data: dict[str, Any]


_LAST_WINS = {
    "customTitle": "custom_title",
    "aiTitle": "ai_title",
    "lastPrompt": "last_prompt",
    "summary": "summary_hint",
    "gitBranch": "git_branch",
}


def _fold_first_prompt(data: dict[str, Any], entry: dict[str, Any]) -> None:
    if data.get("first_prompt_locked") or entry.get("type") != "user":
        return
    if entry.get("isMeta") is True or entry.get("isCompactSummary") is True:
        return
    message = entry.get("message")
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return
        texts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    else:
        return
    prompt, command = prompt_from_texts(texts, data.get("command_fallback") or "")
    if command:
        data["command_fallback"] = command
    if prompt is not None:
        data["first_prompt"] = prompt
        data["first_prompt_locked"] = True


def fold_session_summary(
    prev: SessionSummaryEntry | None,
    key: SessionKey,
    entries: list[SessionStoreEntry],
) -> SessionSummaryEntry:
    """Fold a batch of appended entries into a session's running summary.

    Call it only for main transcripts (`key` without `subpath`): subagent
    transcripts must not change the session's summary.

    Args:
        prev: The summary so far, or `None` for the session's first batch.
        key: The transcript the entries were appended to.
        entries: The batch, in order.

    Returns:
        The new summary (a new dict; `prev` is not modified). Its `mtime` is
        `prev`'s, or 0 for a new session: the store stamps it after writing.

    Example:
        ```python
        summary = fold_session_summary(None, key, [{"type": "user", ...}])
        ```
    """
    if prev is not None:
        summary: SessionSummaryEntry = {
            "session_id": prev["session_id"],
            "mtime": prev["mtime"],
            "data": dict(prev["data"]),
        }
    else:
        summary = {"session_id": key["session_id"], "mtime": 0, "data": {}}
    data = summary["data"]
    for raw in entries:
        entry = cast("dict[str, Any]", raw)
        ms = iso_to_epoch_ms(entry.get("timestamp"))
        if "is_sidechain" not in data:
            data["is_sidechain"] = entry.get("isSidechain") is True
        if "created_at" not in data and ms is not None:
            data["created_at"] = ms
        if "cwd" not in data:
            cwd = entry.get("cwd")
            if isinstance(cwd, str) and cwd:
                data["cwd"] = cwd
        _fold_first_prompt(data, entry)
        for src, dst in _LAST_WINS.items():
            value = entry.get(src)
            if isinstance(value, str):
                data[dst] = value
        if entry.get("type") == "tag":
            tag = entry.get("tag")
            if isinstance(tag, str) and tag:
                data["tag"] = tag
            else:
                data.pop("tag", None)
    return summary
