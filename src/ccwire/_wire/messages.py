"""Typed messages and content blocks, as the CLI reports the conversation.

These are plain frozen dataclasses; `codec` builds them from the wire.
Every message and block keeps the decoded wire object in ``raw`` (excluded from
equality and ``repr``), so nothing the CLI sent is ever lost, and anything ccwire does
not model arrives as `RawMessage` / `UnknownBlock` instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from .._core.public import publish

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "Message",
    "RawMessage",
    "ResultMessage",
    "ServerToolUseBlock",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "TranscriptMirrorMessage",
    "UnknownBlock",
    "UserMessage",
]


def _raw() -> Any:
    return field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Text written by the model (or the user).

    Attributes:
        text: The text.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    text: str
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """The model's visible reasoning, with the signature the API requires back.

    Attributes:
        thinking: The reasoning text.
        signature: The API's signature of it. Default `""`.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    thinking: str
    signature: str = ""
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """The model asks to run a tool. `id` links it to the matching `ToolResultBlock`.

    Attributes:
        id: The tool use id (`toolu_...`).
        name: The tool's name; in-process tools are `mcp__<server>__<tool>`.
        input: The arguments the model chose.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    id: str
    name: str
    input: dict[str, Any]
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """What a tool returned.

    Attributes:
        tool_use_id: The id of the `ToolUseBlock` this answers.
        content: A string, a list of content dicts (`{"type": "text", ...}`), or `None`.
            Default `None`.
        is_error: True when the tool failed. Default `None`: not said.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class ServerToolUseBlock:
    """A tool the API runs itself (web search, code execution, ...).

    Attributes:
        id: The server tool use id.
        name: The server tool's name (`web_search`, ...).
        input: Its arguments.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    id: str
    name: str
    input: dict[str, Any]
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class UnknownBlock:
    """A content block of a type ccwire does not model; `raw` holds all of it.

    Attributes:
        type: The block's `type`.
        raw: The whole block, as received.
    """

    type: str
    raw: Mapping[str, Any] = _raw()


ContentBlock = Union[
    TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock, ServerToolUseBlock, UnknownBlock
]
"""One block of a message's ``content``: text, thinking, a tool call or its result, a
server-side tool call, or an `UnknownBlock` for block types ccwire does not model."""


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user-role message: tool results the CLI produced, or echoed prompts.

    Attributes:
        content: A string, or content blocks (mostly `ToolResultBlock`s).
        uuid: The message's id in the transcript. Default `None`.
        parent_tool_use_id: Set when a subagent (the `Task` tool with this id) sent it.
            Default `None`.
        tool_use_result: The CLI's structured result of a built-in tool. Default `None`.
        session_id: The session it belongs to. Default `None`.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: Any = None
    session_id: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """One assistant frame. While streaming, the CLI sends one content block per frame;
    frames of one API message share `message_id`.

    Attributes:
        content: The content blocks: `TextBlock`, `ThinkingBlock`, `ToolUseBlock`, ...
        model: The model that wrote it.
        parent_tool_use_id: Set when a subagent (the `Task` tool with this id) sent it.
            Default `None`.
        error: An API error kind (`"rate_limit"`, `"authentication_failed"`, ...) when
            the frame reports a failure. Default `None`.
        usage: The API's token usage of this message. Default `None`.
        message_id: The API message id (`msg_...`). Default `None`.
        uuid: The frame's id in the transcript. Default `None`.
        session_id: The session it belongs to. Default `None`.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: str | None = None
    usage: Mapping[str, Any] | None = None
    message_id: str | None = None
    uuid: str | None = None
    session_id: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """A `system` frame (`init`, `status`, task events, ...).

    Attributes:
        subtype: The frame's `subtype` (`"init"`, `"status"`, `"session_state_changed"`, ...).
        data: The whole frame.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    subtype: str
    data: Mapping[str, Any]
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class ResultMessage:
    """The end of a turn: outcome, timing, cost and usage.

    `total_cost_usd` is cumulative over the CLI process; `usage` covers this turn.

    Attributes:
        subtype: `"success"`, or why it stopped (`"error_max_turns"`,
            `"error_during_execution"`, `"error_max_budget_usd"`, ...).
        duration_ms: Wall time of the turn, in milliseconds.
        duration_api_ms: Time spent waiting for the API, in milliseconds.
        is_error: True when the turn failed.
        num_turns: Model turns taken.
        session_id: The session's id.
        stop_reason: The API's last stop reason (`"end_turn"`, ...). Default `None`.
        total_cost_usd: Cost so far, in dollars. Default `None`.
        usage: Token usage of this turn. Default `None`.
        result: The final text (or the error). Default `None`.
        structured_output: The parsed value, with `output_format`. Default `None`.
        errors: Error messages of a failed turn. Default `()`.
        permission_denials: The tool calls denied during the turn. Default `()`.
        terminal_reason: Why the CLI ended the turn, when it says. Default `None`.
        model_usage: Usage and cost per model. Default `None`.
        user_message_uuids: The ids of the prompts this result settles. Default `()`.
        uuid: The frame's id. Default `None`.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: Mapping[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    errors: tuple[str, ...] = ()
    permission_denials: tuple[Mapping[str, Any], ...] = ()
    terminal_reason: str | None = None
    model_usage: Mapping[str, Any] | None = None
    user_message_uuids: tuple[str, ...] = ()
    uuid: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A raw Messages API stream event (only with `include_partial_messages`).

    Attributes:
        uuid: The frame's id.
        session_id: The session it belongs to.
        event: The API's stream event (`content_block_delta`, ...).
        parent_tool_use_id: Set when a subagent sent it. Default `None`.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    uuid: str
    session_id: str
    event: Mapping[str, Any]
    parent_tool_use_id: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True, slots=True)
class RawMessage:
    """A frame of a type ccwire does not model (``rate_limit_event``, ``tool_progress``,
    ``command_lifecycle``, future types...). Nothing is dropped: ``data`` is the frame.

    Attributes:
        type: The frame's `type`.
        data: The whole frame, as received.
    """

    type: str
    data: Mapping[str, Any]

    @property
    def raw(self) -> Mapping[str, Any]:
        """The frame as received (same object as ``data``)."""
        return self.data


@dataclass(frozen=True, slots=True)
class TranscriptMirrorMessage(RawMessage):
    """A ``transcript_mirror`` frame: lines the CLI just wrote to its session file.

    Sent only with ``session_mirror=True`` (``--session-mirror``). ``file_path`` is the
    session's JSONL file, ``entries`` the new lines (one JSON object each), in order;
    append them to your own store to keep a copy of the transcript. A
    `RawMessage`, so code that passes unknown frames through keeps working.

    Attributes:
        type: Always `"transcript_mirror"`.
        data: The whole frame, as received (`filePath`, `entries`).
    """

    @property
    def file_path(self) -> str:
        """The session file the entries were written to."""
        value = self.data.get("filePath")
        return value if isinstance(value, str) else ""

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        """The transcript lines, as written (JSON objects)."""
        value = self.data.get("entries")
        if not isinstance(value, list):
            return []
        return [e for e in value if isinstance(e, Mapping)]


Message = Union[
    UserMessage, AssistantMessage, SystemMessage, ResultMessage, StreamEvent, RawMessage
]
"""Anything ``query()`` and ``ClaudeSDKClient`` yield: a user, assistant, system or result
message, a partial-message `StreamEvent`, or a `RawMessage` for frame types
ccwire does not model (`TranscriptMirrorMessage` is a typed one)."""

publish(
    AssistantMessage,
    RawMessage,
    ResultMessage,
    ServerToolUseBlock,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMirrorMessage,
    UnknownBlock,
    UserMessage,
)
