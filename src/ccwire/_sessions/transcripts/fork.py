"""The pure part of forking and tagging: new transcript lines from old ones."""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from .errors import TranscriptArgumentError

__all__ = [
    "dumps",
    "fork_lines",
    "iso_now",
    "parse_fork_source",
    "sanitize_unicode",
    "split_fork_source",
]

Entry = dict[str, Any]

_FORK_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})
_LEAKY_FIELDS = ("teamName", "agentName", "slug", "sourceToolAssistantUUID")
_STRIP = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ue000-\uf8ff]")
_INVISIBLE = frozenset({"Cf", "Co", "Cn"})


def dumps(obj: Any) -> str:
    """Compact JSON, as the CLI writes transcript lines.

    Args:
        obj: A JSON-serialisable value.

    Returns:
        One line of JSON without spaces after separators.
    """
    return json.dumps(obj, separators=(",", ":"))


def iso_now() -> str:
    """The current UTC time as the CLI stamps entries, e.g. `2026-01-02T03:04:05.678901Z`.

    Returns:
        The ISO-8601 timestamp with a `Z` suffix.
    """
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def sanitize_unicode(value: str) -> str:
    """Drop invisible and private-use characters (NFKC until stable), as the CLI does for tags.

    Args:
        value: The raw text.

    Returns:
        The text without format, private-use and unassigned characters.
    """
    current = value
    for _ in range(10):
        previous = current
        current = unicodedata.normalize("NFKC", current)
        current = "".join(c for c in current if unicodedata.category(c) not in _INVISIBLE)
        current = _STRIP.sub("", current)
        if current == previous:
            break
    return current


def parse_fork_source(content: str, session_id: str) -> tuple[list[Entry], list[Any], int]:
    """Split a transcript into its chain entries and its content replacements.

    Args:
        content: The source transcript, decoded.
        session_id: The source session's id (replacements of other sessions are
            dropped).

    Returns:
        `(entries, replacements, skipped)`: chain entries with a `uuid` in file
        order, the `content-replacement` records to carry over, and the number of
        unreadable lines.
    """
    decoded: list[Any] = []
    unreadable = 0
    for raw in content.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            decoded.append(json.loads(line))
        except ValueError:
            unreadable += 1
    entries, replacements, skipped = split_fork_source(decoded, session_id)
    return entries, replacements, unreadable + skipped


def split_fork_source(
    objects: Iterable[Any], session_id: str
) -> tuple[list[Entry], list[Any], int]:
    """Split decoded transcript entries into chain entries and content replacements.

    Args:
        objects: The source transcript's entries, decoded, in file order.
        session_id: The source session's id (replacements of other sessions are
            dropped).

    Returns:
        `(entries, replacements, skipped)`: chain entries with a `uuid` in order,
        the `content-replacement` records to carry over, and the number of entries
        that are not JSON objects.
    """
    entries: list[Entry] = []
    replacements: list[Any] = []
    skipped = 0
    for entry in objects:
        if not isinstance(entry, dict):
            skipped += 1
            continue
        kind = entry.get("type")
        if kind in _FORK_TYPES and isinstance(entry.get("uuid"), str):
            entries.append(entry)
        elif (
            kind == "content-replacement"
            and entry.get("sessionId") == session_id
            and isinstance(entry.get("replacements"), list)
        ):
            replacements.extend(entry["replacements"])
    return entries, replacements, skipped


def fork_lines(
    entries: list[Entry],
    replacements: list[Any],
    session_id: str,
    up_to_message_id: str | None,
    title: str | None,
    derive_title: Callable[[], str | None],
    now: str | None = None,
) -> tuple[str, list[str]]:
    """Copy a transcript under a new session id with fresh entry ids.

    Sidechain entries are dropped; `progress` entries are dropped too, their
    children re-parented to the nearest kept ancestor. Every copy records where it
    came from in `forkedFrom`. A `custom-title` line ends the new transcript.

    Args:
        entries: The source's chain entries, in file order.
        replacements: The source's content replacements, carried over.
        session_id: The source session's id.
        up_to_message_id: Keep entries up to and including this one.
        title: The fork's title; by default the source's title plus " (fork)".
        derive_title: Computes the source's title when `title` is not given.
        now: The timestamp for the new lines (default: the current time).

    Returns:
        `(new session id, lines)`, lines without their newline.

    Raises:
        TranscriptArgumentError: Nothing to fork, or `up_to_message_id` not found.
    """
    kept = [e for e in entries if not e.get("isSidechain")]
    if not kept:
        raise TranscriptArgumentError(f"Session {session_id} has no messages to fork")
    if up_to_message_id:
        cut = next((i for i, e in enumerate(kept) if e.get("uuid") == up_to_message_id), -1)
        if cut < 0:
            raise TranscriptArgumentError(
                f"Message {up_to_message_id} not found in session {session_id}"
            )
        kept = kept[: cut + 1]
    new_ids = {e["uuid"]: str(uuid.uuid4()) for e in kept}
    writable = [e for e in kept if e.get("type") != "progress"]
    if not writable:
        raise TranscriptArgumentError(f"Session {session_id} has no messages to fork")
    by_uuid = {e["uuid"]: e for e in kept}
    fork_id = str(uuid.uuid4())
    stamp = now or iso_now()
    lines: list[str] = []
    for i, original in enumerate(writable):
        parent_new: str | None = None
        parent_id = original.get("parentUuid")
        while parent_id:
            parent = by_uuid.get(parent_id)
            if not parent:
                break
            if parent.get("type") != "progress":
                parent_new = new_ids.get(parent_id)
                break
            parent_id = parent.get("parentUuid")
        logical = original.get("logicalParentUuid")
        copy = {
            **original,
            "uuid": new_ids[original["uuid"]],
            "parentUuid": parent_new,
            "logicalParentUuid": new_ids.get(logical) if logical else logical,
            "sessionId": fork_id,
            # Only the last entry gets a new time: the CLI resumes from the newest leaf.
            "timestamp": stamp if i == len(writable) - 1 else original.get("timestamp", stamp),
            "isSidechain": False,
            "forkedFrom": {"sessionId": session_id, "messageUuid": original["uuid"]},
        }
        for key in _LEAKY_FIELDS:
            copy.pop(key, None)
        lines.append(dumps(copy))
    if replacements:
        lines.append(
            dumps(
                {
                    "type": "content-replacement",
                    "sessionId": fork_id,
                    "replacements": replacements,
                    "uuid": str(uuid.uuid4()),
                    "timestamp": stamp,
                }
            )
        )
    fork_title = title.strip() if title else None
    if not fork_title:
        fork_title = f"{derive_title() or 'Forked session'} (fork)"
    lines.append(
        dumps(
            {
                "type": "custom-title",
                "sessionId": fork_id,
                "customTitle": fork_title,
                "uuid": str(uuid.uuid4()),
                "timestamp": stamp,
            }
        )
    )
    return fork_id, lines
