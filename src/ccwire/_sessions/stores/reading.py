"""Past sessions read from a `SessionStore`: the store-backed twins of the transcript readers.

`list_sessions_from_store`, `get_session_info_from_store`,
`get_session_messages_from_store`, `list_subagents_from_store` and
`get_subagent_messages_from_store` have the signatures and results of the reference
SDK's helpers of the same names. They run the same parsing as the readers of local
transcripts (`ccwire._sessions.transcripts`) over what the store's `load` returns, so a
session reads the same from disk and from a store.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from ..._conversation.cli_paths import canonicalize_path, sanitize_path, valid_uuid
from ..._conversation.transcript_store.protocol import (
    SessionKey,
    SessionStore,
    SessionSummaryEntry,
    store_implements,
)
from ..._core.cancel import raised_by_callback
from ..transcripts.chain import session_messages, subagent_messages
from ..transcripts.lite import LITE_READ_BUF_SIZE, info_from_head_tail, iso_to_epoch_ms
from ..transcripts.paths import project_key_for_directory
from ..transcripts.types import SDKSessionInfo, SessionMessage

__all__ = [
    "get_session_info_from_store",
    "get_session_messages_from_store",
    "get_subagent_messages_from_store",
    "list_sessions_from_store",
    "list_subagents_from_store",
    "summary_to_session_info",
]

LOAD_CONCURRENCY = 16
"""At most this many `load` calls run at once while listing sessions."""

_CHAIN_TYPES = frozenset({"user", "assistant", "progress", "system", "attachment"})


def _project_path(directory: str | None) -> str:
    return canonicalize_path(str(directory) if directory is not None else ".")


def _type_first(entry: Any) -> Any:
    # a store may reorder an entry's keys (PostgreSQL JSONB does); the transcript
    # readers expect each line to start with its type, as the CLI writes it
    if isinstance(entry, dict) and "type" in entry:
        return {"type": entry["type"], **entry}
    return entry


def _to_jsonl(entries: list[Any]) -> str:
    return "\n".join(json.dumps(_type_first(e), separators=(",", ":")) for e in entries) + "\n"


def _info_from_jsonl(
    session_id: str, jsonl: str, mtime: int, project_path: str
) -> SDKSessionInfo | None:
    """What the listing of a local file would say, from the same bytes in memory."""
    data = jsonl.encode("utf-8")
    head = data[:LITE_READ_BUF_SIZE].decode("utf-8", errors="replace")
    tail = (
        data[max(0, len(data) - LITE_READ_BUF_SIZE) :].decode("utf-8", errors="replace")
        if len(data) > LITE_READ_BUF_SIZE
        else head
    )
    info, _ = info_from_head_tail(session_id, head, tail, mtime, len(data), project_path)
    return info


def _mtime_of(last: Any) -> int:
    """The `timestamp` of a session's last entry in epoch milliseconds, else now."""
    stamp = iso_to_epoch_ms(last.get("timestamp")) if isinstance(last, dict) else None
    return int(time.time() * 1000) if stamp is None else stamp


def _chain_entries(entries: list[Any]) -> list[dict[str, Any]]:
    return [
        e
        for e in entries
        if isinstance(e, dict) and e.get("type") in _CHAIN_TYPES and isinstance(e.get("uuid"), str)
    ]


async def _load(store: SessionStore, session_id: str, directory: str | None) -> list[Any] | None:
    key: SessionKey = {
        "project_key": project_key_for_directory(directory),
        "session_id": session_id,
    }
    entries = await store.load(key)
    return list(entries) if entries else None


async def _load_jsonl(store: SessionStore, session_id: str, directory: str | None) -> str | None:
    entries = await _load(store, session_id, directory)
    return None if entries is None else _to_jsonl(entries)


def summary_to_session_info(
    summary: SessionSummaryEntry, project_path: str | None
) -> SDKSessionInfo | None:
    """The `SDKSessionInfo` of a stored session summary (`fold_session_summary`).

    Args:
        summary: The summary, as `list_session_summaries` returns it.
        project_path: The project path, the fallback `cwd`.

    Returns:
        The info, or `None` for a subagent transcript or a session with nothing to
        title it by (as the listing of local files leaves them out).
    """
    data = summary["data"]
    if data.get("is_sidechain"):
        return None
    locked = data.get("first_prompt_locked")
    first_prompt = (data.get("first_prompt") if locked else data.get("command_fallback")) or None
    custom_title = data.get("custom_title") or data.get("ai_title") or None
    title = custom_title or data.get("last_prompt") or data.get("summary_hint") or first_prompt
    if not title:
        return None
    return SDKSessionInfo(
        session_id=summary["session_id"],
        summary=title,
        last_modified=summary["mtime"],
        file_size=None,  # a byte count of a local file: a store has none
        custom_title=custom_title,
        first_prompt=first_prompt,
        git_branch=data.get("git_branch") or None,
        cwd=data.get("cwd") or project_path or None,
        tag=data.get("tag") or None,
        created_at=data.get("created_at"),
    )


async def _infos_by_loading(
    store: SessionStore, listing: list[dict[str, Any]], directory: str | None, project_path: str
) -> list[SDKSessionInfo]:
    """One `load` per listed session (at most `LOAD_CONCURRENCY` at once).

    A failing `load` gives that session an info with an empty summary rather than
    failing the listing; subagent and untitled sessions are left out.
    """
    limiter = anyio.CapacityLimiter(LOAD_CONCURRENCY)
    loaded: list[str | BaseException | None] = [None] * len(listing)

    async def load(i: int, session_id: str) -> None:
        async with limiter:
            try:
                loaded[i] = await _load_jsonl(store, session_id, directory)
            except Exception as exc:  # the adapter is user code: one row, not the list
                loaded[i] = exc
            except BaseException as exc:  # its own cancellation exception is its failure
                if not raised_by_callback(exc):
                    raise
                loaded[i] = exc

    async with anyio.create_task_group() as tg:
        for i, row in enumerate(listing):
            tg.start_soon(load, i, row["session_id"])
    infos: list[SDKSessionInfo] = []
    for row, outcome in zip(listing, loaded, strict=True):
        session_id, mtime = row["session_id"], row["mtime"]
        if isinstance(outcome, BaseException):
            infos.append(SDKSessionInfo(session_id=session_id, summary="", last_modified=mtime))
        elif outcome is not None:
            info = _info_from_jsonl(session_id, outcome, mtime, project_path)
            if info is not None:
                infos.append(info)
    return infos


def _page(items: list[Any], limit: int | None, offset: int) -> list[Any]:
    if offset > 0:
        items = items[offset:]
    if limit is not None and limit > 0:
        items = items[:limit]
    return items


async def _list_with_summaries(
    store: SessionStore,
    summaries: list[SessionSummaryEntry],
    directory: str | None,
    project_path: str,
    limit: int | None,
    offset: int,
) -> list[SDKSessionInfo]:
    has_list = store_implements(store, "list_sessions")
    listing = list(await store.list_sessions(sanitize_path(project_path))) if has_list else []
    known = {row["session_id"]: row["mtime"] for row in listing}
    slots: list[dict[str, Any]] = []
    fresh: set[str] = set()
    for summary in summaries:
        session_id = summary["session_id"]
        if has_list and (session_id not in known or summary["mtime"] < known[session_id]):
            continue  # gone from the listing, or stale: loaded below instead
        fresh.add(session_id)
        info = summary_to_session_info(summary, project_path)
        if info is not None:  # subagent and untitled sessions take no place in a page
            slots.append({"mtime": summary["mtime"], "info": info})
    slots += [
        {"mtime": row["mtime"], "session_id": row["session_id"], "info": None}
        for row in listing
        if row["session_id"] not in fresh
    ]
    slots.sort(key=lambda slot: slot["mtime"], reverse=True)
    page = _page(slots, limit, offset)  # before loading: at most a page of loads
    missing = [slot for slot in page if slot["info"] is None]
    if missing:
        found = await _infos_by_loading(store, missing, directory, project_path)
        by_id = {info.session_id: info for info in found}
        for slot in missing:
            slot["info"] = by_id.get(slot["session_id"])
    return [slot["info"] for slot in page if slot["info"] is not None]


async def list_sessions_from_store(
    session_store: SessionStore,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SDKSessionInfo]:
    """List the sessions a store keeps for a project, newest first.

    The store-backed twin of `list_sessions`: the same `SDKSessionInfo` for the same
    transcript (but `file_size`, which is the byte length of the transcript as JSON
    lines, and `None` for a session read from a stored summary). With
    `list_session_summaries`, the summaries answer in one call; sessions without a
    summary, or with one older than the session (`list_sessions` tells), are loaded
    (only those on the requested page). Otherwise every session is loaded, at most 16
    at a time. Git worktrees are not looked into: a store has one `project_key`.

    Args:
        session_store: The store; it must implement `list_session_summaries` or
            `list_sessions`.
        directory: The project directory that gives the `project_key` (default: the
            current directory).
        limit: At most this many sessions (ignored unless positive).
        offset: Skip this many first.

    Returns:
        One `SDKSessionInfo` per session, by `last_modified` (the store's write time),
        newest first; subagent transcripts and sessions with nothing to title them by
        are left out.

    Raises:
        ValueError: The store implements neither `list_session_summaries` nor
            `list_sessions`.

    Example:
        ```python
        from ccwire import SQLiteStore, list_sessions_from_store

        for info in await list_sessions_from_store(SQLiteStore(), "/home/ann/src/app"):
            print(info.session_id, info.summary)
        ```
    """
    project_path = _project_path(directory)
    project_key = sanitize_path(project_path)
    if store_implements(session_store, "list_session_summaries"):
        try:
            summaries = await session_store.list_session_summaries(project_key)
        except NotImplementedError:
            pass
        else:
            return await _list_with_summaries(
                session_store, list(summaries), directory, project_path, limit, offset
            )
    if not store_implements(session_store, "list_sessions"):
        raise ValueError(
            "session_store implements neither list_session_summaries() nor list_sessions() "
            "-- cannot list sessions. Provide a store with at least one of those methods."
        )
    listing = [dict(row) for row in await session_store.list_sessions(project_key)]
    infos = await _infos_by_loading(session_store, listing, directory, project_path)
    infos.sort(key=lambda info: info.last_modified, reverse=True)
    return _page(infos, limit, offset)


async def get_session_info_from_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
) -> SDKSessionInfo | None:
    """The metadata of one session kept in a store.

    The store-backed twin of `get_session_info`; `last_modified` is the timestamp of
    the session's last entry (the current time if it has none).

    Args:
        session_store: The store.
        session_id: The session's UUID.
        directory: The project directory that gives the `project_key`.

    Returns:
        The session's `SDKSessionInfo`, or `None` when the store does not have it,
        `session_id` is not a UUID, or it is a subagent transcript or has nothing to
        title it by.
    """
    if not valid_uuid(session_id):
        return None
    entries = await _load(session_store, session_id, directory)
    if entries is None:
        return None
    return _info_from_jsonl(
        session_id, _to_jsonl(entries), _mtime_of(entries[-1]), _project_path(directory)
    )


async def get_session_messages_from_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """A session's conversation, read from a store.

    The store-backed twin of `get_session_messages`: the same `parentUuid` chain,
    parallel tool calls put back in place.

    Args:
        session_store: The store.
        session_id: The session's UUID.
        directory: The project directory that gives the `project_key`.
        limit: At most this many messages (ignored unless positive).
        offset: Skip this many first.

    Returns:
        The user and assistant messages, oldest first; empty when the store does not
        have the session or `session_id` is not a UUID.
    """
    if not valid_uuid(session_id):
        return []
    key: SessionKey = {
        "project_key": project_key_for_directory(directory),
        "session_id": session_id,
    }
    entries = await session_store.load(key)
    if not entries:
        return []
    return session_messages(_chain_entries(list(entries)), limit, offset)


async def list_subagents_from_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
) -> list[str]:
    """The ids of the subagents whose transcripts a store keeps for a session.

    Args:
        session_store: The store; it must implement `list_subkeys`.
        session_id: The parent session's UUID.
        directory: The project directory that gives the `project_key`.

    Returns:
        The agent ids (subpaths `subagents/.../agent-<id>`), each once, in the store's
        order; empty when there are none or `session_id` is not a UUID.

    Raises:
        ValueError: The store does not implement `list_subkeys`.
    """
    if not valid_uuid(session_id):
        return []
    if not store_implements(session_store, "list_subkeys"):
        raise ValueError(
            "session_store does not implement list_subkeys() -- cannot list subagents. "
            "Provide a store with a list_subkeys() method."
        )
    subpaths = await session_store.list_subkeys(
        {"project_key": project_key_for_directory(directory), "session_id": session_id}
    )
    ids: list[str] = []
    for subpath in subpaths:
        last = subpath.rsplit("/", 1)[-1]
        if subpath.startswith("subagents/") and last.startswith("agent-"):
            agent_id = last[len("agent-") :]
            if agent_id not in ids:
                ids.append(agent_id)
    return ids


async def get_subagent_messages_from_store(
    session_store: SessionStore,
    session_id: str,
    agent_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """One subagent's conversation, read from a store.

    The subagent's transcript is found under `subagents/agent-<id>`, or nested deeper
    (`subagents/workflows/<run>/agent-<id>`) when the store implements
    `list_subkeys`. `parent_tool_use_id` and `parent_agent_id` come from the last
    `agent_metadata` entry (the store's copy of the `.meta.json` sidecar).

    Args:
        session_store: The store.
        session_id: The parent session's UUID.
        agent_id: The subagent's id, from `list_subagents_from_store`.
        directory: The project directory that gives the `project_key`.
        limit: At most this many messages (ignored unless positive).
        offset: Skip this many first.

    Returns:
        The subagent's user and assistant messages, oldest first; empty when not found.
    """
    if not valid_uuid(session_id) or not agent_id:
        return []
    project_key = project_key_for_directory(directory)
    subpath = f"subagents/agent-{agent_id}"
    if store_implements(session_store, "list_subkeys"):
        subpaths = await session_store.list_subkeys(
            {"project_key": project_key, "session_id": session_id}
        )
        target = f"agent-{agent_id}"
        match = next(
            (s for s in subpaths if s.startswith("subagents/") and s.rsplit("/", 1)[-1] == target),
            None,
        )
        if match is None:
            return []
        subpath = match
    entries = await session_store.load(
        {"project_key": project_key, "session_id": session_id, "subpath": subpath}
    )
    if not entries:
        return []
    meta: dict[str, Any] = {}
    transcript: list[Any] = []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == "agent_metadata":
            meta = dict(entry)  # rewritten on resume: the last one wins
        else:
            transcript.append(entry)
    tool_use_id, parent_agent = meta.get("toolUseId"), meta.get("parentAgentId")
    return subagent_messages(
        _chain_entries(transcript),
        limit,
        offset,
        tool_use_id if isinstance(tool_use_id, str) else None,
        parent_agent if isinstance(parent_agent, str) else None,
    )
