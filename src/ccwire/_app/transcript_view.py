"""One past session, shaped for reading: turns, tool calls with their results, costs.

`load_session_view` reads a transcript once (plus its subagents') and builds a
`SessionView`, which both the terminal renderer (`sessions`) and the HTML page
(`html`) draw. The shaping itself (`build_turns`, `cost_from_text`) is pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from .._sessions.transcripts.chain import parse_transcript, session_messages
from .._sessions.transcripts.listing import get_session_info
from .._sessions.transcripts.paths import valid_uuid
from .._sessions.transcripts.reading import (
    find_session_file,
    get_subagent_messages,
    subagent_files,
)
from .._sessions.transcripts.types import SDKSessionInfo, SessionMessage

__all__ = [
    "Cost",
    "SessionView",
    "TextItem",
    "ToolCall",
    "Turn",
    "build_turns",
    "cost_from_text",
    "load_session_view",
]


@dataclass(frozen=True)
class TextItem:
    """Assistant text or thinking.

    Attributes:
        kind: `"text"` or `"thinking"`.
        text: The words.
    """

    kind: Literal["text", "thinking"]
    text: str


@dataclass
class ToolCall:
    """One tool call and what it returned.

    Attributes:
        id: The `tool_use` id.
        name: The tool's name.
        input: The arguments the model passed.
        result: The result text, or `None` if no result was recorded.
        is_error: Whether the result was an error.
        subagent: For an `Agent`/`Task` call, the subagent's own conversation.
    """

    id: str
    name: str
    input: Any
    result: str | None = None
    is_error: bool = False
    subagent: list[Turn] = field(default_factory=list)


@dataclass
class Turn:
    """A user prompt and everything the assistant did in answer.

    Attributes:
        prompt: The prompt (`""` for what came before the first one).
        items: Texts and tool calls, in order.
    """

    prompt: str
    items: list[TextItem | ToolCall] = field(default_factory=list)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The turn's tool calls."""
        return [i for i in self.items if isinstance(i, ToolCall)]


@dataclass(frozen=True)
class Cost:
    """What a session cost, from the CLI's last `cost-state` record.

    Attributes:
        usd: Total cost in US dollars; None for an offline session (a scripted model:
            nothing was billed).
        input_tokens: Input tokens over all models.
        output_tokens: Output tokens over all models.
        models: The models used.
    """

    usd: float | None
    input_tokens: int
    output_tokens: int
    models: tuple[str, ...]


@dataclass(frozen=True)
class SessionView:
    """A session ready to render.

    Attributes:
        session_id: The session's UUID.
        info: Its listing metadata (title, times, cwd, tag), if it has any.
        turns: The conversation, turn by turn.
        cost: The cost record, if the CLI wrote one.
        skipped_lines: Transcript lines that could not be read.
    """

    session_id: str
    info: SDKSessionInfo | None
    turns: list[Turn]
    cost: Cost | None
    skipped_lines: int

    @property
    def title(self) -> str:
        """The session's title, or its id."""
        return self.info.summary if self.info else self.session_id


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "image":
                    parts.append("[image]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


def build_turns(messages: list[SessionMessage]) -> list[Turn]:
    """Group a conversation into turns and pair each tool call with its result.

    Args:
        messages: The session's messages, oldest first.

    Returns:
        The turns; a tool call with no recorded result keeps `result=None`.
    """
    turns: list[Turn] = []
    calls: dict[str, ToolCall] = {}
    for m in messages:
        message = m.message if isinstance(m.message, dict) else {}
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if m.type == "user":
            prompt_parts = []
            for b in blocks:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_result":
                    call = calls.get(str(b.get("tool_use_id")))
                    if call is not None:
                        call.result = _text_of(b.get("content"))
                        call.is_error = bool(b.get("is_error"))
                elif b.get("type") == "text" and isinstance(b.get("text"), str):
                    prompt_parts.append(b["text"])
            if prompt_parts:
                turns.append(Turn("\n".join(prompt_parts)))
            continue
        if not turns:
            turns.append(Turn(""))
        for b in blocks:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "text" and b.get("text"):
                turns[-1].items.append(TextItem("text", str(b["text"])))
            elif kind == "thinking" and b.get("thinking"):
                turns[-1].items.append(TextItem("thinking", str(b["thinking"])))
            elif kind in ("tool_use", "server_tool_use"):
                call = ToolCall(str(b.get("id")), str(b.get("name")), b.get("input"))
                calls[call.id] = call
                turns[-1].items.append(call)
    return turns


def cost_from_text(text: str) -> Cost | None:
    """The session's cost from its last `cost-state` line (it is cumulative).

    Args:
        text: The transcript.

    Returns:
        The cost, or `None` if the CLI recorded none.
    """
    idx = text.rfind('{"type":"cost-state"')
    if idx < 0:
        return None
    end = text.find("\n", idx)
    try:
        record = json.loads(text[idx:] if end < 0 else text[idx:end])
    except ValueError:
        return None
    usage = record.get("modelUsage") if isinstance(record.get("modelUsage"), dict) else {}
    total = record.get("totalCostUSD")
    return Cost(
        usd=float(total) if isinstance(total, (int, float)) else 0.0,
        input_tokens=sum(int(u.get("inputTokens", 0)) for u in usage.values()),
        output_tokens=sum(int(u.get("outputTokens", 0)) for u in usage.values()),
        models=tuple(usage),
    )


def load_session_view(session_id: str, directory: str | None = None) -> SessionView | None:
    """Read one session (and its subagents) from the CLI's transcripts.

    Args:
        session_id: The session's UUID.
        directory: Its project directory; `None` searches every project.

    Returns:
        The view, or `None` if there is no such session.
    """
    if not valid_uuid(session_id):
        return None
    found = find_session_file(session_id, directory)
    if found is None:
        return None
    try:
        text = found[0].read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    parsed = parse_transcript(text)
    turns = build_turns(session_messages(parsed.entries))
    agents: dict[str, list[Turn]] = {}
    for agent_id, _ in subagent_files(session_id, directory):
        sub = get_subagent_messages(session_id, agent_id, directory)
        if sub and sub[0].parent_tool_use_id:
            agents[sub[0].parent_tool_use_id] = build_turns(sub)
    for turn in turns:
        for call in turn.tool_calls:
            call.subagent = agents.get(call.id, [])
    return SessionView(
        session_id=session_id,
        info=get_session_info(session_id, directory),
        turns=turns,
        cost=cost_from_text(text),
        skipped_lines=parsed.skipped,
    )


def format_when(ms: int | None) -> str:
    """A timestamp in milliseconds as local `YYYY-MM-DD HH:MM`.

    Args:
        ms: Milliseconds since the epoch, or `None`.

    Returns:
        The formatted time, or `"-"`.
    """
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def turn_count(turns: list[Turn]) -> str:
    """`"1 turn"` or `"N turns"`: how many prompts the conversation has.

    Args:
        turns: The conversation.

    Returns:
        The count, with the noun.
    """
    n = sum(1 for t in turns if t.prompt)
    return f"{n} turn" if n == 1 else f"{n} turns"
