"""The conversation in a transcript: parse its lines, walk the `parentUuid` chain.

Pure functions over text and dicts. A transcript is a tree: each entry names its
parent, resumes and rewinds branch off, and parallel tool calls fan out (one
assistant entry per content block, each tool result a child of its own call). The
conversation is the path from the newest main-chain leaf back to the root, with the
parallel calls and results the path skipped put back in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .types import SessionMessage

__all__ = [
    "ParsedTranscript",
    "build_conversation_chain",
    "build_subagent_chain",
    "page",
    "parse_transcript",
    "session_messages",
    "subagent_messages",
]

Entry = dict[str, Any]

_CHAIN_TYPES = frozenset({"user", "assistant", "progress", "system", "attachment"})


@dataclass(frozen=True)
class ParsedTranscript:
    """The chain entries of a transcript and the lines that could not be read.

    Attributes:
        entries: Entries of a chain type (`user`, `assistant`, `progress`, `system`,
            `attachment`) that have a `uuid`, in file order.
        skipped: Lines that were not valid JSON objects (corrupt, or cut off by a
            crash mid-write); they are left out.
    """

    entries: list[Entry]
    skipped: int


def parse_transcript(content: str) -> ParsedTranscript:
    """Parse JSONL transcript text, skipping blank, corrupt and truncated lines.

    Args:
        content: The whole transcript file, decoded.

    Returns:
        The chain entries and the count of unreadable lines.
    """
    entries: list[Entry] = []
    skipped = 0
    loads = json.loads
    for raw in content.split("\n"):
        line = raw.strip()
        if not line:
            continue
        try:
            entry = loads(line)
        except ValueError:
            skipped += 1
            continue
        if not isinstance(entry, dict):
            skipped += 1
            continue
        if entry.get("type") in _CHAIN_TYPES and isinstance(entry.get("uuid"), str):
            entries.append(entry)
    return ParsedTranscript(entries, skipped)


def _walk_back(start: Entry, by_uuid: dict[str, Entry]) -> list[Entry]:
    """`start` and its ancestors, newest first, stopping at a cycle or a gap."""
    out: list[Entry] = []
    seen: set[str] = set()
    cur: Entry | None = start
    while cur is not None and cur["uuid"] not in seen:
        seen.add(cur["uuid"])
        out.append(cur)
        parent = cur.get("parentUuid")
        cur = by_uuid.get(parent) if parent else None
    return out


def build_conversation_chain(entries: list[Entry]) -> list[Entry]:
    """The main conversation, root first, parallel tool calls and results included.

    The leaf is the newest (by file position) user or assistant entry that ends a
    branch, preferring the main chain over sidechains, team and meta entries.
    `logicalParentUuid` (compaction) is not followed: the compaction summary stands
    for what came before.

    Args:
        entries: Parsed chain entries, in file order.

    Returns:
        The chain's entries, oldest first.
    """
    if not entries:
        return []
    by_uuid: dict[str, Entry] = {}
    position: dict[str, int] = {}
    for i, entry in enumerate(entries):
        by_uuid[entry["uuid"]] = entry
        position[entry["uuid"]] = i
    parents = {e["parentUuid"] for e in entries if e.get("parentUuid")}
    leaves: list[Entry] = []
    for terminal in entries:
        if terminal["uuid"] in parents:
            continue
        for entry in _walk_back(terminal, by_uuid):
            if entry.get("type") in ("user", "assistant"):
                leaves.append(entry)
                break
    if not leaves:
        return []
    main = [
        e
        for e in leaves
        if not e.get("isSidechain") and not e.get("teamName") and not e.get("isMeta")
    ]
    pool = main or leaves
    best = pool[0]
    for cand in pool[1:]:
        if position.get(cand["uuid"], -1) > position.get(best["uuid"], -1):
            best = cand
    chain = _walk_back(best, by_uuid)
    chain.reverse()
    return _recover_parallel(by_uuid, chain, {e["uuid"] for e in chain})


def _message_id(entry: Entry) -> str | None:
    if entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    mid = message.get("id")
    return mid if isinstance(mid, str) and mid else None


def _block_ids(entry: Entry, block_type: str, field: str) -> list[str]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        b[field]
        for b in content
        if isinstance(b, dict) and b.get("type") == block_type and isinstance(b.get(field), str)
    ]


def _is_tool_result(entry: Entry) -> bool:
    if entry.get("type") != "user":
        return False
    parent = entry.get("parentUuid")
    if not isinstance(parent, str) or not parent:
        return False
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _same_writer(a: Entry, b: Entry) -> bool:
    return bool(a.get("isSidechain")) == bool(b.get("isSidechain")) and a.get("agentId") == b.get(
        "agentId"
    )


def _stamp(entry: Entry) -> str:
    ts = entry.get("timestamp")
    return ts if isinstance(ts, str) else ""


class _Responses:
    """Index of every assistant response (entries sharing a `message.id`) and result."""

    def __init__(self, by_uuid: dict[str, Entry]) -> None:
        self.by_uuid = by_uuid
        self.members: dict[str, list[Entry]] = {}
        # Which entry made each tool call; None when two responses claim the id.
        self.call_owner: dict[str, Entry | None] = {}
        self.results_of: dict[str, list[Entry]] = {}
        results: list[Entry] = []
        for entry in by_uuid.values():
            mid = _message_id(entry)
            if mid:
                self.members.setdefault(mid, []).append(entry)
                for call in _block_ids(entry, "tool_use", "id"):
                    if call not in self.call_owner:
                        self.call_owner[call] = entry
                        continue
                    owner = self.call_owner[call]
                    same = owner is not None and _message_id(owner) == mid
                    self.call_owner[call] = entry if same else None
            elif _is_tool_result(entry):
                results.append(entry)
        for result in results:
            self._index(result)

    def _index(self, result: Entry) -> None:
        self.results_of.setdefault(result["parentUuid"], []).append(result)
        source = result.get("sourceToolAssistantUUID")
        if isinstance(source, str):
            src = self.by_uuid.get(source)
            if src is not None and _same_writer(result, src):
                self.results_of.setdefault(source, []).append(result)
        for call in _block_ids(result, "tool_result", "tool_use_id"):
            owner = self.call_owner.get(call)
            if owner is not None and _same_writer(result, owner):
                self.results_of.setdefault(owner["uuid"], []).append(result)


def _recover_parallel(by_uuid: dict[str, Entry], chain: list[Entry], seen: set[str]) -> list[Entry]:
    """Put back the calls and results of parallel tool turns the walk skipped."""
    on_chain = [e for e in chain if e.get("type") == "assistant"]
    anchors: dict[str, Entry] = {}
    for entry in on_chain:
        mid = _message_id(entry)
        if mid:
            anchors[mid] = entry
    if not anchors:
        return chain
    index = _Responses(by_uuid)
    answered_on_chain: set[str] | None = None
    file_pos: dict[str, int] | None = None
    done: set[str] = set()
    inserts: dict[str, list[Entry]] = {}
    for assistant in on_chain:
        mid = _message_id(assistant)
        if not mid or mid in done:
            continue
        done.add(mid)
        group = index.members.get(mid, [assistant])
        member_ids = {m["uuid"] for m in group}
        siblings = [m for m in group if m["uuid"] not in seen]
        results: list[Entry] = []
        strays: list[Entry] = []
        collected: set[str] = set()
        for member in group:
            for result in index.results_of.get(member["uuid"], ()):
                uid = result["uuid"]
                if uid in seen or uid in collected:
                    continue
                collected.add(uid)
                (results if result["parentUuid"] in member_ids else strays).append(result)
        if strays:
            if answered_on_chain is None or file_pos is None:
                answered_on_chain = {
                    c for e in chain for c in _block_ids(e, "tool_result", "tool_use_id")
                }
                file_pos = {uid: i for i, uid in enumerate(by_uuid)}
            answered = set(answered_on_chain)
            for result in results:
                answered.update(_block_ids(result, "tool_result", "tool_use_id"))
            pos = file_pos
            strays.sort(key=lambda e: pos[e["uuid"]])
            for result in strays:
                calls = _block_ids(result, "tool_result", "tool_use_id")
                if not any(_opens(c, answered, index, member_ids) for c in calls):
                    continue
                answered.update(calls)
                results.append(result)
        if not siblings and not results:
            continue
        siblings.sort(key=_stamp)
        results.sort(key=_stamp)
        recovered = siblings + results
        seen.update(e["uuid"] for e in recovered)
        inserts[anchors[mid]["uuid"]] = recovered
    if not inserts:
        return chain
    out: list[Entry] = []
    for entry in chain:
        out.append(entry)
        out.extend(inserts.get(entry["uuid"], ()))
    return out


def _opens(call: str, answered: set[str], index: _Responses, members: set[str]) -> bool:
    owner = index.call_owner.get(call)
    return call not in answered and owner is not None and owner["uuid"] in members


def build_subagent_chain(entries: list[Entry]) -> list[Entry]:
    """A subagent's conversation: from its last user or assistant entry to the root.

    Args:
        entries: Parsed entries of one `agent-<id>.jsonl` transcript.

    Returns:
        The chain, oldest first.
    """
    for entry in reversed(entries):
        if entry.get("type") in ("user", "assistant"):
            by_uuid = {e["uuid"]: e for e in entries}
            chain = _walk_back(entry, by_uuid)
            chain.reverse()
            return chain
    return []


def _to_message(
    entry: Entry, parent_tool_use_id: str | None = None, parent_agent_id: str | None = None
) -> SessionMessage:
    kind = entry.get("type")
    return SessionMessage(
        type=kind if kind in ("user", "system") else "assistant",
        uuid=entry.get("uuid", ""),
        session_id=entry.get("sessionId", ""),
        message=entry if kind == "system" else entry.get("message"),
        parent_tool_use_id=parent_tool_use_id,
        parent_agent_id=parent_agent_id,
    )


def page(items: list[SessionMessage], limit: int | None, offset: int) -> list[SessionMessage]:
    """Apply `offset` and `limit` the way the reference SDK does.

    Args:
        items: The full result.
        limit: At most this many (ignored unless positive).
        offset: Skip this many first.

    Returns:
        The requested slice.
    """
    if limit is not None and limit > 0:
        return items[offset : offset + limit]
    if offset > 0:
        return items[offset:]
    return items


def _visible(entry: Entry, system: bool = False) -> bool:
    kinds = ("user", "assistant", "system") if system else ("user", "assistant")
    return (
        entry.get("type") in kinds
        and not entry.get("isMeta")
        and not entry.get("isSidechain")
        and not entry.get("teamName")
    )


def session_messages(
    entries: list[Entry],
    limit: int | None = None,
    offset: int = 0,
    include_system_messages: bool = False,
) -> list[SessionMessage]:
    """The visible user and assistant messages of a main transcript's conversation.

    Meta, sidechain and team entries are hidden; compaction summaries are kept (they
    are all that is left of what they summarise).

    Args:
        entries: Parsed chain entries.
        limit: At most this many messages (ignored unless positive).
        offset: Skip this many first.
        include_system_messages: Also the system entries of the conversation
            (compact boundaries, informational notices, ...).

    Returns:
        The messages, oldest first.
    """
    chain = build_conversation_chain(entries)
    return page(
        [_to_message(e) for e in chain if _visible(e, include_system_messages)], limit, offset
    )


def subagent_messages(
    entries: Iterable[Entry],
    limit: int | None = None,
    offset: int = 0,
    parent_tool_use_id: str | None = None,
    parent_agent_id: str | None = None,
) -> list[SessionMessage]:
    """The user and assistant messages of a subagent transcript.

    Args:
        entries: Parsed entries of the subagent's transcript.
        limit: At most this many messages (ignored unless positive).
        offset: Skip this many first.
        parent_tool_use_id: The `Agent` call that started the subagent.
        parent_agent_id: The subagent that started this one, if nested.

    Returns:
        The messages, oldest first, each carrying the two parent ids.
    """
    chain = build_subagent_chain(list(entries))
    return page(
        [
            _to_message(e, parent_tool_use_id, parent_agent_id)
            for e in chain
            if e.get("type") in ("user", "assistant")
        ],
        limit,
        offset,
    )
