"""Session metadata from the first and last 64 KiB of a transcript, without a full parse.

Pure functions over text: `info_from_head_tail` is what `list_sessions` and
`get_session_info` compute for each file. Field values are found by scanning for
`"key":"` and reading the JSON string that follows, which also works on a line cut
in half by the 64 KiB window.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime

from .types import SDKSessionInfo

__all__ = [
    "COMMAND_NAME_RE",
    "LITE_READ_BUF_SIZE",
    "SKIP_FIRST_PROMPT_RE",
    "FirstPrompt",
    "first_prompt_from_head",
    "first_string_field",
    "has_spaced_fields",
    "info_from_head_tail",
    "iso_to_epoch_ms",
    "last_string_field",
    "prompt_from_texts",
]

LITE_READ_BUF_SIZE = 65536
"""How much of a transcript's start and end `list_sessions` reads."""

SKIP_FIRST_PROMPT_RE = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>|"
    r"\[Request interrupted by user[^\]]*\]|"
    r"\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$|"
    r"\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
"""User texts that are not a prompt someone typed (hook output, IDE context...)."""

COMMAND_NAME_RE = re.compile(r"<command-name>(.*?)</command-name>")
"""A slash command's name inside the user entry the CLI writes for it."""

_USER_MARKERS = ('"type":"user"', '"type": "user"')


def _unescape(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        value: str = json.loads(f'"{raw}"')  # `raw` holds no unescaped quote: a string
    except ValueError:
        return raw
    return value


def _string_at(text: str, start: int) -> str | None:
    """The JSON string body starting at `start`, or `None` if it is cut off."""
    i = start
    n = len(text)
    while i < n:
        quote = text.find('"', i)
        if quote < 0:
            return None
        # Count the backslashes before the quote: an odd number escapes it.
        back = quote - 1
        while back >= start and text[back] == "\\":
            back -= 1
        if (quote - back - 1) % 2 == 0:
            return _unescape(text[start:quote])
        i = quote + 1
    return None


def _patterns(key: str, spaced: bool) -> tuple[str, ...]:
    compact = f'"{key}":"'
    return (compact, f'"{key}": "') if spaced else (compact,)


def has_spaced_fields(text: str) -> bool:
    """Tell whether `text` may hold `"key": "value"` fields (JSON written with spaces).

    The CLI writes compact JSON, so this one scan usually lets every field lookup skip
    the spaced spelling.

    Args:
        text: Raw JSONL text.

    Returns:
        `False` when no spaced string field can occur in `text`.
    """
    return '": "' in text


def first_string_field(text: str, key: str, spaced: bool | None = None) -> str | None:
    """The value of the first complete `"key":"..."` string field in `text`.

    The compact spelling is looked for first, then the spaced one (`"key": "`).

    Args:
        text: Raw JSONL text, possibly cut at either end.
        key: The field name.
        spaced: `has_spaced_fields(text)`, if already known.

    Returns:
        The unescaped value, or `None` if there is none.
    """
    if spaced is None:
        spaced = has_spaced_fields(text)
    for pattern in _patterns(key, spaced):
        idx = text.find(pattern)
        if idx >= 0:
            value = _string_at(text, idx + len(pattern))
            if value is not None:
                return value
    return None


def last_string_field(text: str, key: str, spaced: bool | None = None) -> str | None:
    """The value of the last complete `"key":"..."` string field in `text`.

    The compact spelling (`"key":"`) is looked at only when no spaced one
    (`"key": "`) has a complete value, matching the reference SDK.

    Args:
        text: Raw JSONL text, possibly cut at either end.
        key: The field name.
        spaced: `has_spaced_fields(text)`, if already known.

    Returns:
        The unescaped value, or `None` if there is none.
    """
    if spaced is None:
        spaced = has_spaced_fields(text)
    for pattern in reversed(_patterns(key, spaced)):
        end = len(text)
        while True:
            idx = text.rfind(pattern, 0, end)
            if idx < 0:
                break
            value = _string_at(text, idx + len(pattern))
            if value is not None:
                return value
            end = idx
    return None


def prompt_from_texts(texts: list[str], command: str = "") -> tuple[str | None, str]:
    """Pick the prompt out of one user entry's text blocks.

    Args:
        texts: The entry's text blocks, in order.
        command: The slash-command name found so far (`""` if none).

    Returns:
        `(prompt, command)`: the first meaningful text (newlines flattened, cut at
        200 characters with an ellipsis) or `None`, and the first slash-command
        name seen so far (a fallback title).
    """
    for raw in texts:
        result = raw.replace("\n", " ").strip()
        if not result:
            continue
        match = COMMAND_NAME_RE.search(result)
        if match:
            if not command:
                command = match.group(1)
            continue
        if SKIP_FIRST_PROMPT_RE.match(result):
            continue
        if len(result) > 200:
            result = result[:200].rstrip() + "\u2026"
        return result, command
    return None, command


@dataclass(frozen=True)
class FirstPrompt:
    """The first prompt found in a transcript's head.

    Attributes:
        text: The prompt, the first slash command's name if there is no prompt, or
            `""`.
        skipped: How many user lines in the head were not valid JSON (truncated or
            corrupt) and were passed over.
    """

    text: str
    skipped: int


def _user_texts(line: str) -> list[str] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return []
    message = entry.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    return []


def first_prompt_from_head(head: str, spaced: bool | None = None) -> FirstPrompt:
    """Find the first meaningful user prompt in a transcript's head.

    Tool results, meta entries, compaction summaries, slash commands and
    machine-written texts are passed over.

    Args:
        head: The first bytes of the transcript, decoded.
        spaced: `has_spaced_fields(head)`, if already known.

    Returns:
        The prompt, and how many candidate lines could not be parsed.
    """
    if spaced is None:
        spaced = has_spaced_fields(head)
    markers = _USER_MARKERS if spaced else _USER_MARKERS[:1]
    command = ""
    skipped = 0
    pos = 0
    n = len(head)
    # The next occurrence of each marker at or after `pos` (-1: none left).
    nexts = [head.find(m) for m in markers]
    while pos < n:
        for i, found in enumerate(nexts):
            if 0 <= found < pos:
                nexts[i] = head.find(markers[i], pos)
        hits = [i for i in nexts if i >= 0]
        if not hits:
            break
        hit = min(hits)
        start = head.rfind("\n", 0, hit) + 1
        end = head.find("\n", hit)
        if end < 0:
            end = n
        line = head[start:end]
        pos = end + 1
        if (
            '"tool_result"' in line
            or '"isMeta":true' in line
            or '"isMeta": true' in line
            or '"isCompactSummary":true' in line
            or '"isCompactSummary": true' in line
        ):
            continue
        texts = _user_texts(line)
        if texts is None:
            skipped += 1
            continue
        prompt, command = prompt_from_texts(texts, command)
        if prompt is not None:
            return FirstPrompt(prompt, skipped)
    return FirstPrompt(command, skipped)


def iso_to_epoch_ms(value: object) -> int | None:
    """Milliseconds since the epoch of an ISO-8601 timestamp.

    Args:
        value: A timestamp such as `2026-01-02T03:04:05.678Z`, or anything else.

    Returns:
        The time in milliseconds, or `None` if `value` is not a parseable string.
    """
    if not isinstance(value, str):
        return None
    try:
        stamp = value[:-1] + "+00:00" if value.endswith("Z") else value
        return int(datetime.fromisoformat(stamp).timestamp() * 1000)
    except ValueError:
        return None


def _tag(tail: str) -> str | None:
    marker = '{"type":"tag"'
    idx = tail.rfind("\n" + marker)
    if idx >= 0:
        start = idx + 1
    elif tail.startswith(marker):
        start = 0
    else:
        return None
    end = tail.find("\n", start)
    line = tail[start:] if end < 0 else tail[start:end]
    return last_string_field(line, "tag") or None


def _title(head: str, tail: str, head_sp: bool, tail_sp: bool) -> str | None:
    """The last custom title, else the last AI title (tail first, then head)."""
    # Both keys end in `Title"`: one scan per text usually rules them all out.
    in_tail = 'Title"' in tail
    in_head = head is not tail and 'Title"' in head
    for key in ("customTitle", "aiTitle"):
        value = (last_string_field(tail, key, tail_sp) if in_tail else None) or (
            last_string_field(head, key, head_sp) if in_head else None
        )
        if value:
            return value
    return None


def info_from_head_tail(
    session_id: str,
    head: str,
    tail: str,
    mtime_ms: int,
    size: int,
    project_path: str | None = None,
) -> tuple[SDKSessionInfo | None, int]:
    """Build a session's metadata from the start and end of its transcript.

    Args:
        session_id: The session's UUID.
        head: The first 64 KiB, decoded.
        tail: The last 64 KiB, decoded (the same text as `head` for small files).
        mtime_ms: The file's modification time, in milliseconds.
        size: The file's size in bytes.
        project_path: The project path the file was found under, the fallback `cwd`.

    Returns:
        `(info, skipped)`: `info` is `None` for a subagent (sidechain) transcript or
        one with nothing to title it by; `skipped` counts unparseable user lines.
    """
    newline = head.find("\n")
    first_line = head if newline < 0 else head[:newline]
    if '"isSidechain":true' in first_line or '"isSidechain": true' in first_line:
        return None, 0
    # One scan each decides whether the spaced spellings need looking for at all.
    head_sp = has_spaced_fields(head)
    tail_sp = head_sp if tail is head else has_spaced_fields(tail)
    custom_title = _title(head, tail, head_sp, tail_sp)
    prompt = first_prompt_from_head(head, head_sp)
    first_prompt = prompt.text or None
    summary = (
        custom_title
        or last_string_field(tail, "lastPrompt", tail_sp)
        or last_string_field(tail, "summary", tail_sp)
        or first_prompt
    )
    if not summary:
        return None, prompt.skipped
    git_branch = (
        last_string_field(tail, "gitBranch", tail_sp)
        or first_string_field(head, "gitBranch", head_sp)
        or None
    )
    cwd = first_string_field(head, "cwd", head_sp) or project_path or None
    first_timestamp = first_string_field(head, "timestamp", head_sp)
    created_at = iso_to_epoch_ms(first_timestamp) if first_timestamp else None
    info = SDKSessionInfo(
        session_id=session_id,
        summary=summary,
        last_modified=mtime_ms,
        file_size=size,
        custom_title=custom_title,
        first_prompt=first_prompt,
        git_branch=git_branch,
        cwd=cwd,
        tag=_tag(tail),
        created_at=created_at,
    )
    return info, prompt.skipped
