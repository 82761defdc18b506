"""`fold_session_summary`: a store's per-session summary, kept up to date in `append`.

A store that keeps summaries answers `list_session_summaries` in one call instead of
loading every transcript. Every field of the summary is either set once or replaced
by the latest value, so a store never re-reads what it already stored.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..._conversation.transcript_store.protocol import (
    SessionKey,
    SessionStoreEntry,
    SessionSummaryEntry,
)

__all__ = ["fold_session_summary"]

# Transcript fields whose latest value wins, and the summary field that keeps it.
_LATEST: tuple[tuple[str, str], ...] = (
    ("customTitle", "custom_title"),
    ("aiTitle", "ai_title"),
    ("lastPrompt", "last_prompt"),
    ("summary", "summary_hint"),
    ("gitBranch", "git_branch"),
)

# Prompts the CLI or an IDE wrote on the user's behalf: never a session's first prompt.
_NOT_A_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>"
    r"|\[Request interrupted by user[^\]]*\]"
    r"|\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$"
    r"|\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")
_FIRST_PROMPT_MAX = 200


def _epoch_ms(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        return int(datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        return None


def _texts(entry: dict[str, Any]) -> list[str]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _has_tool_result(entry: dict[str, Any]) -> bool:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _first_prompt(data: dict[str, Any], entry: dict[str, Any]) -> None:
    if data.get("first_prompt_locked") or entry.get("type") != "user":
        return
    if entry.get("isMeta") is True or entry.get("isCompactSummary") is True:
        return
    if _has_tool_result(entry):
        return
    for raw in _texts(entry):
        prompt = raw.replace("\n", " ").strip()
        if not prompt:
            continue
        command = _COMMAND_NAME.search(prompt)
        if command is not None:
            if not data.get("command_fallback"):
                data["command_fallback"] = command.group(1)
            continue
        if _NOT_A_PROMPT.match(prompt):
            continue
        if len(prompt) > _FIRST_PROMPT_MAX:
            prompt = prompt[:_FIRST_PROMPT_MAX].rstrip() + "\u2026"
        data["first_prompt"] = prompt
        data["first_prompt_locked"] = True
        return


def fold_session_summary(
    prev: SessionSummaryEntry | None,
    key: SessionKey,
    entries: list[SessionStoreEntry],
) -> SessionSummaryEntry:
    """Fold a batch of appended entries into the running summary of `key`.

    A pure function: the store calls it inside `append` for main transcripts only
    (never for a key with a `subpath`), persists the result verbatim, and stamps its
    `mtime` with the store's own write time afterwards. Concurrent appends to one
    session must be serialized by the store.

    Args:
        prev: The summary stored so far for this session, or `None` for the first
            append.
        key: The session's main-transcript key.
        entries: The entries just appended.

    Returns:
        A new summary; `mtime` is copied from `prev` (`0` for a new session) and
        `data` holds the derived state (sidechain flag, creation time, working
        directory, first prompt, latest title, tag...).
    """
    summary: SessionSummaryEntry = (
        {"session_id": prev["session_id"], "mtime": prev["mtime"], "data": dict(prev["data"])}
        if prev is not None
        else {"session_id": key["session_id"], "mtime": 0, "data": {}}
    )
    data = summary["data"]
    for raw in entries:
        entry: dict[str, Any] = dict(raw)
        if "is_sidechain" not in data:
            data["is_sidechain"] = entry.get("isSidechain") is True
        if "created_at" not in data:
            created = _epoch_ms(entry.get("timestamp"))
            if created is not None:
                data["created_at"] = created
        cwd = entry.get("cwd")
        if "cwd" not in data and isinstance(cwd, str) and cwd:
            data["cwd"] = cwd
        _first_prompt(data, entry)
        for source, target in _LATEST:
            value = entry.get(source)
            if isinstance(value, str):
                data[target] = value
        if entry.get("type") == "tag":
            tag = entry.get("tag")
            if isinstance(tag, str) and tag:
                data["tag"] = tag
            else:
                data.pop("tag", None)  # an empty tag clears it
    return summary
