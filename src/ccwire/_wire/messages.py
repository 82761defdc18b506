"""Typed messages and content blocks, as the CLI reports the conversation.

These are plain dataclasses (mutable, as in claude-agent-sdk); `codec` builds them
from the wire.
Every message and block keeps the decoded wire object in ``raw`` (excluded from
equality and ``repr``), so nothing the CLI sent is ever lost, and anything ccwire does
not model arrives as `RawMessage` / `UnknownBlock` instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from .message_types import (
    AssistantMessageError,
    MessageOrigin,
    MessageOriginKind,
    RateLimitStatus,
    RateLimitType,
    ServerToolName,
    TaskNotificationOriginSubkind,
    TaskNotificationStatus,
    TaskUpdatedStatus,
    TaskUsage,
)

__all__ = [
    "TERMINAL_TASK_STATUSES",
    "AssistantMessage",
    "AssistantMessageError",
    "ContentBlock",
    "ConversationResetMessage",
    "DeferredToolUse",
    "HookEventMessage",
    "Message",
    "MessageOrigin",
    "MessageOriginKind",
    "MirrorErrorMessage",
    "RateLimitEvent",
    "RateLimitInfo",
    "RateLimitStatus",
    "RateLimitType",
    "RawMessage",
    "ResultMessage",
    "ServerToolName",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "StreamEvent",
    "SystemMessage",
    "TaskNotificationMessage",
    "TaskNotificationOriginSubkind",
    "TaskNotificationStatus",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUpdatedMessage",
    "TaskUpdatedStatus",
    "TaskUsage",
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


@dataclass(slots=True)
class TextBlock:
    """Text written by the model (or the user).

    Attributes:
        text: The text.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    text: str
    raw: Mapping[str, Any] = _raw()


@dataclass(slots=True)
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


@dataclass(slots=True)
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


@dataclass(slots=True)
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


@dataclass(slots=True)
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


@dataclass(slots=True)
class ServerToolResultBlock:
    """The result of a tool the API ran itself (an ``advisor_tool_result`` block, ...).

    Attributes:
        tool_use_id: The id of the `ServerToolUseBlock` this answers.
        content: The API's dict, unchanged; look at `content["type"]`.
        raw: The block as received.
    """

    tool_use_id: str
    content: dict[str, Any]
    raw: Mapping[str, Any] = _raw()


@dataclass(slots=True)
class UnknownBlock:
    """A content block of a type ccwire does not model; `raw` holds all of it.

    Attributes:
        type: The block's `type`.
        raw: The whole block, as received.
    """

    type: str
    raw: Mapping[str, Any] = _raw()


ContentBlock = Union[
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    ToolResultBlock,
    ServerToolUseBlock,
    ServerToolResultBlock,
    UnknownBlock,
]
"""One block of a message's ``content``: text, thinking, a tool call or its result, a
server-side tool call or its result, or an `UnknownBlock` for block types ccwire does
not model."""


@dataclass(slots=True)
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
    origin: MessageOrigin | None = None
    """What started this message (see `MessageOrigin`); ``None`` when the CLI did not
    attribute it. Tool results never carry one."""
    session_id: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(slots=True)
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
    stop_reason: str | None = None
    """Why the API message ended (``end_turn``, ``tool_use``, ...), when the CLI says."""
    session_id: str | None = None
    uuid: str | None = None
    user_message_uuid: str | None = None
    """The ``uuid`` of the user message this turn answers; set on the first top-level
    assistant message after it changes, ``None`` on the others."""
    user_message_uuids: list[str] | None = None
    """The ``uuid`` of every user message the turn has taken in so far (set on the same
    messages as ``user_message_uuid``)."""
    raw: Mapping[str, Any] = _raw()


@dataclass(slots=True)
class SystemMessage:
    """A `system` frame (`init`, `status`, ...).

    Task events, hook events and mirror errors arrive as the typed subclasses below;
    `isinstance(msg, SystemMessage)` still matches them. For `subtype == "init"`,
    `data` has the shape of `SystemInitData`.

    Attributes:
        subtype: The frame's `subtype` (`"init"`, `"status"`, `"session_state_changed"`, ...).
        data: The whole frame.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    subtype: str
    data: Mapping[str, Any]
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)


TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})
"""Task statuses that mean the task has finished, from either a
`TaskNotificationMessage` (``stopped``) or a `TaskUpdatedMessage` (``killed``)."""


@dataclass(slots=True)
class TaskStartedMessage(SystemMessage):
    """A subagent or background task started (``system``/``task_started``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        task_id: The task's id.
        description: What the task was asked to do.
        uuid: The frame's id.
        session_id: The session it runs in.
        tool_use_id: The tool call (``Task``/``Agent``) that started it.
        task_type: The kind of task (``local_agent``, ``local_bash``, ...).
    """

    task_id: str
    description: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    task_type: str | None = None


@dataclass(slots=True)
class TaskProgressMessage(SystemMessage):
    """A running task reports progress (``system``/``task_progress``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        task_id: The task's id.
        description: What the task is doing now.
        usage: What it has used so far (`TaskUsage`).
        uuid: The frame's id.
        session_id: The session it runs in.
        tool_use_id: The tool call that started it.
        last_tool_name: The tool the task used last.
    """

    task_id: str
    description: str
    usage: TaskUsage
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    last_tool_name: str | None = None


@dataclass(slots=True)
class TaskNotificationMessage(SystemMessage):
    """A task completed, failed or was stopped (``system``/``task_notification``).

    Not every finished task sends one: clear a task on a terminal status from this or
    from a `TaskUpdatedMessage` (see `TERMINAL_TASK_STATUSES`).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        task_id: The task's id.
        status: ``completed``, ``failed`` or ``stopped``.
        output_file: The file holding the task's output.
        summary: A summary of the outcome.
        uuid: The frame's id.
        session_id: The session it ran in.
        tool_use_id: The tool call that started it.
        usage: What it used (`TaskUsage`), when reported.
    """

    task_id: str
    status: TaskNotificationStatus
    output_file: str
    summary: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    usage: TaskUsage | None = None


@dataclass(slots=True)
class TaskUpdatedMessage(SystemMessage):
    """A background task's state changed (``system``/``task_updated``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        task_id: The task's id.
        patch: The changed fields (``status``, ``end_time``, ...).
        status: ``patch["status"]`` when present (`TaskUpdatedStatus`).
        session_id: The session it runs in.
        uuid: The frame's id.
    """

    task_id: str
    patch: dict[str, Any]
    status: TaskUpdatedStatus | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass(slots=True)
class MirrorErrorMessage(SystemMessage):
    """Copying transcript lines to a session store failed (``subtype`` ``mirror_error``).

    Not fatal: the CLI's own transcript is intact; the store may miss the batch.

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        key: The store key of the batch (a `SessionKey` dict), when known.
        error: What went wrong.
    """

    key: Mapping[str, Any] | None = None
    error: str = ""


@dataclass(slots=True)
class HookEventMessage(SystemMessage):
    """A hook ran (``hook_started``/``hook_response``; with ``include_hook_events``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        hook_event_name: The hook event (``PreToolUse``, ``Stop``, ...).
        session_id: The session, when the frame names it.
        uuid: The frame's id, when present.
    """

    hook_event_name: str = ""
    session_id: str | None = None
    uuid: str | None = None


@dataclass(slots=True)
class DeferredToolUse:
    """A tool call a ``PreToolUse`` hook deferred (``permissionDecision: "defer"``).

    Attributes:
        id: The tool call's id.
        name: The tool's name.
        input: The tool's arguments.
    """

    id: str
    name: str
    input: dict[str, Any]


@dataclass(slots=True)
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
    model_usage: Mapping[str, Any] | None = None
    permission_denials: list[Any] | None = None
    deferred_tool_use: DeferredToolUse | None = None
    """The tool call a ``PreToolUse`` hook deferred, which stopped the run."""
    errors: list[str] | None = None
    api_error_status: int | None = None
    """The HTTP status (429, 500, 529, ...) of the failed API call behind an error
    result; ``None`` otherwise."""
    uuid: str | None = None
    terminal_reason: str | None = None
    """Why the query loop ended (``completed``, ``max_turns``, ``aborted_streaming``...)."""
    origin: MessageOrigin | None = None
    """What started this turn (see `MessageOrigin`)."""
    user_message_uuid: str | None = None
    """The ``uuid`` of the user message that started this turn."""
    user_message_uuids: list[str] | None = None
    """The ``uuid`` of every user message this turn took in, in order (at most 64)."""
    raw: Mapping[str, Any] = _raw()


@dataclass(slots=True)
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
    user_message_uuid: str | None = None
    """As `AssistantMessage.user_message_uuid`."""
    user_message_uuids: list[str] | None = None
    """As `AssistantMessage.user_message_uuids`."""
    raw: Mapping[str, Any] = _raw()


@dataclass(slots=True)
class RateLimitInfo:
    """Where the account stands against a rate limit.

    Attributes:
        status: ``allowed``, ``allowed_warning`` (close to the limit) or ``rejected``.
        resets_at: When the window resets (Unix time).
        rate_limit_type: Which window (`RateLimitType`).
        utilization: The fraction of the limit used (0.0 to 1.0).
        overage_status: The status of pay-as-you-go overage, if any.
        overage_resets_at: When the overage window resets (Unix time).
        overage_disabled_reason: Why overage is unavailable.
        raw: The CLI's ``rate_limit_info`` object, unchanged.
    """

    status: RateLimitStatus
    resets_at: int | None = None
    rate_limit_type: RateLimitType | None = None
    utilization: float | None = None
    overage_status: RateLimitStatus | None = None
    overage_resets_at: int | None = None
    overage_disabled_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RateLimitEvent:
    """The account's rate limit status changed (a ``rate_limit_event`` frame).

    Attributes:
        rate_limit_info: The new status.
        uuid: The frame's id.
        session_id: The session.
        raw: The frame as received.
    """

    rate_limit_info: RateLimitInfo
    uuid: str
    session_id: str
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)


@dataclass(slots=True)
class ConversationResetMessage:
    """The conversation was replaced without ending the connection (``/clear``, ...).

    Running totals on later results (``total_cost_usd``) start again from zero, and
    later messages carry a new ``session_id``.

    Attributes:
        new_conversation_id: An id for the fresh conversation (not its session id).
        uuid: The frame's id.
        session_id: The session that was reset.
        raw: The frame as received.
    """

    new_conversation_id: str
    uuid: str
    session_id: str
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)


@dataclass(slots=True)
class RawMessage:
    """A frame of a type ccwire does not model (``tool_progress``,
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


@dataclass(slots=True)
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
    UserMessage,
    AssistantMessage,
    SystemMessage,
    ResultMessage,
    StreamEvent,
    RateLimitEvent,
    ConversationResetMessage,
    RawMessage,
]
"""Anything ``query()`` and ``ClaudeSDKClient`` yield: a user, assistant, system or result
message, a partial-message `StreamEvent`, a `RateLimitEvent`, a
`ConversationResetMessage`, or a `RawMessage` for frame types ccwire does not model
(`TranscriptMirrorMessage` is a typed one)."""
