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

from .control_types import SlashCommand
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
    "ActiveGoalMessage",
    "ApiRetryMessage",
    "AssistantMessage",
    "AssistantMessageError",
    "AuthStatusMessage",
    "AutocompactStateMessage",
    "BackgroundTasksChangedMessage",
    "CommandsChangedMessage",
    "CompactBoundaryMessage",
    "ContentBlock",
    "ControlRequestProgressMessage",
    "ConversationResetMessage",
    "DeferredToolUse",
    "ElicitationCompleteMessage",
    "FilesPersistedMessage",
    "HookEventMessage",
    "InformationalMessage",
    "LocalCommandOutputMessage",
    "MemoryRecallMessage",
    "Message",
    "MessageOrigin",
    "MessageOriginKind",
    "MirrorErrorMessage",
    "ModelRefusalFallbackMessage",
    "ModelRefusalNoFallbackMessage",
    "NotificationMessage",
    "PermissionDeniedMessage",
    "PluginInstallMessage",
    "PostTurnSummaryMessage",
    "PromptSuggestionMessage",
    "RateLimitEvent",
    "RateLimitInfo",
    "RateLimitStatus",
    "RateLimitType",
    "RawMessage",
    "ResultMessage",
    "ServerToolName",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "SessionMetadataMessage",
    "SessionStateChangedMessage",
    "SessionTitleChangedMessage",
    "SessionWritesLostMessage",
    "StatusMessage",
    "StreamEvent",
    "SystemMessage",
    "TERMINAL_TASK_STATUSES",
    "TaskNotificationMessage",
    "TaskNotificationOriginSubkind",
    "TaskNotificationStatus",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskSummaryMessage",
    "TaskUpdatedMessage",
    "TaskUpdatedStatus",
    "TaskUsage",
    "TextBlock",
    "ThinkingBlock",
    "ThinkingTokensMessage",
    "ToolProgressMessage",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseSummaryMessage",
    "TranscriptMirrorMessage",
    "UnknownBlock",
    "UserMessage",
    "WorkerShuttingDownMessage",
]


def _raw() -> Any:
    return field(default_factory=dict, compare=False, repr=False)


def _ts_field(default: Any = None) -> Any:
    """A field the TypeScript SDK declares that claude-agent-sdk's class lacks: left out
    of ``repr()`` and ``==``, so a message prints and compares as the reference's does."""
    return field(default=default, compare=False, repr=False)


@dataclass
class TextBlock:
    """Text written by the model (or the user).

    Attributes:
        text: The text.
        raw: The frame or block as received, for fields ccwire does not model.
    """

    text: str
    raw: Mapping[str, Any] = _raw()


@dataclass
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


@dataclass
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


@dataclass
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


@dataclass
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


@dataclass
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


@dataclass
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


@dataclass
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
    session_id: str | None = _ts_field()
    raw: Mapping[str, Any] = _raw()
    is_synthetic: bool | None = _ts_field()
    """True for a message the CLI made, not the user (``isSynthetic``)."""
    is_replay: bool | None = _ts_field()
    """True for a prompt echoed back (``isReplay``)."""
    priority: str | None = _ts_field()
    """When a queued prompt runs: ``now``, ``next`` or ``later``."""
    should_query: bool | None = _ts_field()
    """False: added to the transcript without starting a turn (``shouldQuery``)."""
    client_composed: bool | None = _ts_field()
    """True for a prompt the client composed: delivered as written."""
    pasted_content: list[Any] | None = field(default=None, compare=False, repr=False)
    """What the user pasted, appended after the typed text."""
    inline_pastes: list[str] | None = field(default=None, compare=False, repr=False)
    """Text the user pasted that stays where it was put."""
    file_attachments: list[Any] | None = field(default=None, compare=False, repr=False)
    """The files attached to an echoed prompt."""
    agent_id: str | None = _ts_field()
    """The subagent that produced it (its task's ``task_id``); ``None`` on the main
    thread."""
    subagent_type: str | None = _ts_field()
    """That subagent's type."""
    task_description: str | None = _ts_field()
    """That subagent's task."""
    timestamp: str | None = _ts_field()
    """When it was made, as ISO 8601 text (the sending process's clock)."""


@dataclass
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
    request_id: str | None = _ts_field()
    """The API request's id."""
    aborted: bool | None = _ts_field()
    """True when an interrupt cut the message short (it may end mid-word)."""
    supersedes: list[str] | None = field(default=None, compare=False, repr=False)
    """The uuids of earlier messages this one replaces (after a refusal fallback or an
    unparsable tool call): drop those from what you show."""
    resume_reason: str | None = _ts_field()
    """Why this turn continues one a restart interrupted."""
    resumed_from_incomplete_thinking: bool | None = _ts_field()
    """True when the turn continued a truncated one inside its thinking block."""
    agent_id: str | None = _ts_field()
    """The subagent that produced it (its task's ``task_id``); ``None`` on the main
    thread."""
    subagent_type: str | None = _ts_field()
    """That subagent's type."""
    task_description: str | None = _ts_field()
    """That subagent's task."""
    timestamp: str | None = _ts_field()
    """When it was made, as ISO 8601 text (the sending process's clock)."""
    context_usage: Mapping[str, Any] | None = _ts_field()
    """The ``/context`` report as data, on the message that shows it."""
    usage_report: Mapping[str, Any] | None = _ts_field()
    """The ``/usage`` report as data, on the message that shows it."""


@dataclass
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


@dataclass(repr=False)
class _PlainRepr(SystemMessage):
    """A typed system message that prints as the reference SDK prints it (it has no class
    for it): ``SystemMessage(subtype=..., data=...)``, so code written for it prints the
    same. Its fields are typed attributes all the same.

    For the same reason its class's ``__name__`` is ``"SystemMessage"``: code that
    dispatches on ``type(message).__name__`` (agentd-sdk's tracker, for one) treats it as
    the plain system message the reference yields. ``__qualname__`` keeps the class's own
    name (``ApiRetryMessage``, ...), so the class prints, pickles and imports under it."""

    def __init_subclass__(cls) -> None:
        # No super() call: SystemMessage and object take no arguments here.
        cls.__name__ = "SystemMessage"

    def __repr__(self) -> str:
        return f"SystemMessage(subtype={self.subtype!r}, data={self.data!r})"


TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"completed", "failed", "stopped", "killed"})
"""Task statuses that mean the task has finished, from either a
`TaskNotificationMessage` (``stopped``) or a `TaskUpdatedMessage` (``killed``)."""


@dataclass
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
        run_id: The id of this run of the task (a resumed task keeps its ``task_id``
            and gets a new one).
        subagent_type: The subagent's type, for a ``Task``/``Agent`` subagent.
        is_backgrounded: Whether it was started in the background.
        spawn_depth: How deeply nested a subagent is (1: started by the main thread).
        parent_task_id: The subagent task that started this one, if any.
        workflow_name: The workflow's name, for a ``local_workflow`` task.
        prompt: What this run was asked.
        skip_transcript: A housekeeping task, to keep out of the transcript.
        ambient: Not activity: to keep out of activity indicators.
    """

    task_id: str
    description: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    task_type: str | None = None
    run_id: str | None = _ts_field()
    subagent_type: str | None = _ts_field()
    is_backgrounded: bool | None = _ts_field()
    spawn_depth: int | None = _ts_field()
    parent_task_id: str | None = _ts_field()
    workflow_name: str | None = _ts_field()
    prompt: str | None = _ts_field()
    skip_transcript: bool | None = _ts_field()
    ambient: bool | None = _ts_field()


@dataclass
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
        run_id: The id of this run of the task (a resumed task keeps its ``task_id``
            and gets a new one).
        subagent_type: The subagent's type, for a ``Task``/``Agent`` subagent.
        summary: A one-line status (a subagent's, with ``agent_progress_summaries``).
    """

    task_id: str
    description: str
    usage: TaskUsage
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    last_tool_name: str | None = None
    run_id: str | None = _ts_field()
    subagent_type: str | None = _ts_field()
    summary: str | None = _ts_field()


@dataclass
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
        run_id: The id of this run of the task (a resumed task keeps its ``task_id``
            and gets a new one).
        reason: Why it ended, when not by an ordinary end (``worker_restart``).
        resource_links: The ``resource_link`` blocks a backgrounded MCP task returned.
        skip_transcript: A housekeeping task, to keep out of the transcript.
        ambient: Not activity: to keep out of activity indicators.
    """

    task_id: str
    status: TaskNotificationStatus
    output_file: str
    summary: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    usage: TaskUsage | None = None
    run_id: str | None = _ts_field()
    reason: str | None = _ts_field()
    resource_links: tuple[Mapping[str, Any], ...] = _ts_field(())
    skip_transcript: bool | None = _ts_field()
    ambient: bool | None = _ts_field()


@dataclass
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
        run_id: The id of this run of the task (a resumed task keeps its ``task_id``
            and gets a new one).
    """

    task_id: str
    patch: dict[str, Any]
    status: TaskUpdatedStatus | None = None
    session_id: str | None = None
    uuid: str | None = None
    run_id: str | None = _ts_field()


@dataclass
class MirrorErrorMessage(SystemMessage):
    """Copying transcript lines to a session store failed (``subtype`` ``mirror_error``).

    Not fatal: the CLI's own transcript is intact; the store may miss the batch.

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        key: The store key of the batch (a `SessionKey` dict), when known.
        error: What went wrong.
        uuid: The frame's id.
        session_id: The session whose lines were not copied.
    """

    key: Mapping[str, Any] | None = None
    error: str = ""
    uuid: str | None = _ts_field()
    session_id: str | None = _ts_field()


@dataclass
class HookEventMessage(SystemMessage):
    """A hook ran (``hook_started``, ``hook_progress``, ``hook_response``; with
    ``include_hook_events``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        hook_event_name: The hook event (``PreToolUse``, ``Stop``, ...).
        session_id: The session, when the frame names it.
        uuid: The frame's id, when present.
        hook_id: The hook run's id (the same in its three frames).
        hook_name: The hook's name.
        stdout: What the hook printed so far (progress) or in all (response).
        stderr: What it printed on stderr.
        output: Its output.
        exit_code: Its exit code (response).
        outcome: ``success``, ``error`` or ``cancelled`` (response).
    """

    hook_event_name: str = ""
    session_id: str | None = None
    uuid: str | None = None
    hook_id: str | None = _ts_field()
    hook_name: str | None = _ts_field()
    stdout: str | None = _ts_field()
    stderr: str | None = _ts_field()
    output: str | None = _ts_field()
    exit_code: int | None = _ts_field()
    outcome: str | None = _ts_field()


@dataclass(repr=False)
class CompactBoundaryMessage(_PlainRepr):
    """The conversation was compacted (``system``/``compact_boundary``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        compact_metadata: How: ``trigger`` (``manual``/``auto``), ``pre_tokens``, ``post_tokens``,
            ...
        uuid: The frame's id.
        session_id: The session.
    """

    compact_metadata: Mapping[str, Any] | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class StatusMessage(_PlainRepr):
    """What the CLI is busy with (``system``/``status``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        status: ``compacting``, ``requesting``, or None when idle.
        permission_mode: The permission mode, when it changed.
        compact_result: ``success`` or ``failed`` after a compaction.
        compact_error: Why a compaction failed.
        uuid: The frame's id.
        session_id: The session.
    """

    status: str | None = None
    permission_mode: str | None = None
    compact_result: str | None = None
    compact_error: str | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class ApiRetryMessage(_PlainRepr):
    """An API request failed and will be retried after a delay (``system``/``api_retry``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        attempt: This attempt's number.
        max_retries: How many attempts there will be at most.
        retry_delay_ms: The wait before the next attempt, in milliseconds.
        error_status: The HTTP status (None for a connection error).
        error: The kind of error (``rate_limit``, ``overloaded``, ...).
        no_response: When no response came at all: ``waited_ms``, ``retry_wait_ms``.
        uuid: The frame's id.
        session_id: The session.
    """

    attempt: int = 0
    max_retries: int = 0
    retry_delay_ms: float = 0.0
    error_status: int | None = None
    error: str | None = None
    no_response: Mapping[str, Any] | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class ControlRequestProgressMessage(_PlainRepr):
    """Progress of a long control request of yours (``system``/``control_request_progress``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        request_id: The control request it is about.
        status: ``started`` or ``api_retry``.
        attempt: With ``api_retry``: the attempt.
        max_retries: With ``api_retry``: the attempts at most.
        retry_delay_ms: With ``api_retry``: the wait, in milliseconds.
        error_status: With ``api_retry``: the HTTP status.
        uuid: The frame's id.
        session_id: The session.
    """

    request_id: str = ""
    status: str = ""
    attempt: int | None = None
    max_retries: int | None = None
    retry_delay_ms: float | None = None
    error_status: int | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class ModelRefusalFallbackMessage(_PlainRepr):
    """The model refused, and the turn is retried on a fallback model
    (``system``/``model_refusal_fallback``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        trigger: Why: ``refusal``.
        direction: ``retry``, ``revert`` or ``sticky``.
        scope: ``session`` or ``local``.
        original_model: The model that refused.
        fallback_model: The model that takes over.
        request_id: The API request that was refused.
        api_refusal_category: The API's category of refusal.
        api_refusal_explanation: The API's explanation.
        retracted_message_uuids: Messages withdrawn from the transcript.
        refused_user_message_uuid: The prompt that was refused.
        content: A text to show.
        uuid: The frame's id.
        session_id: The session.
    """

    trigger: str = ""
    direction: str = ""
    scope: str | None = None
    original_model: str = ""
    fallback_model: str = ""
    request_id: str | None = None
    api_refusal_category: str | None = None
    api_refusal_explanation: str | None = None
    retracted_message_uuids: tuple[str, ...] = ()
    refused_user_message_uuid: str | None = None
    content: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class ModelRefusalNoFallbackMessage(_PlainRepr):
    """The model refused, with no fallback to retry on (``system``/``model_refusal_no_fallback``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        original_model: The model that refused.
        request_id: The API request that was refused.
        api_refusal_category: The API's category of refusal.
        api_refusal_explanation: The API's explanation.
        refused_user_message_uuid: The prompt that was refused.
        content: A text to show.
        uuid: The frame's id.
        session_id: The session.
    """

    original_model: str = ""
    request_id: str | None = None
    api_refusal_category: str | None = None
    api_refusal_explanation: str | None = None
    refused_user_message_uuid: str | None = None
    content: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class LocalCommandOutputMessage(_PlainRepr):
    """What a local slash command printed (``system``/``local_command_output``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        content: The output.
        uuid: The frame's id.
        session_id: The session.
    """

    content: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class PluginInstallMessage(_PlainRepr):
    """Progress of installing plugins headless (``system``/``plugin_install``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        status: ``started``, ``installed``, ``failed`` or ``completed``.
        name: The plugin or marketplace.
        error: Why it failed.
        uuid: The frame's id.
        session_id: The session.
    """

    status: str = ""
    name: str | None = None
    error: str | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class BackgroundTasksChangedMessage(_PlainRepr):
    """The set of live background tasks changed (``system``/``background_tasks_changed``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        tasks: Every live background task (``task_id``, ``task_type``, ``description``, ...).
        uuid: The frame's id.
        session_id: The session.
    """

    tasks: tuple[Mapping[str, Any], ...] = ()
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class ThinkingTokensMessage(_PlainRepr):
    """An estimate of the thinking tokens so far (``system``/``thinking_tokens``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        estimated_tokens: The estimate.
        estimated_tokens_delta: Its growth since the last one.
        user_message_uuid: The prompt being answered.
        uuid: The frame's id.
        session_id: The session.
    """

    estimated_tokens: int = 0
    estimated_tokens_delta: int = 0
    user_message_uuid: str | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class SessionStateChangedMessage(_PlainRepr):
    """The CLI's session state changed (``system``/``session_state_changed``; ccwire tracks it and
    yields it only to a caller who set ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`` in
    ``options.env``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        state: ``idle``, ``running`` or ``requires_action``.
        uuid: The frame's id.
        session_id: The session.
    """

    state: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class WorkerShuttingDownMessage(_PlainRepr):
    """A remote worker is shutting down (``system``/``worker_shutting_down``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        reason: Why.
        uuid: The frame's id.
        session_id: The session.
    """

    reason: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class CommandsChangedMessage(_PlainRepr):
    """The slash commands changed mid-session (``system``/``commands_changed``;
    ``supported_commands()`` follows it).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        commands: The full new list.
        uuid: The frame's id.
        session_id: The session.
    """

    commands: tuple[SlashCommand, ...] = ()
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class NotificationMessage(_PlainRepr):
    """A notification to show (``system``/``notification``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        key: Its key (a later one with the same key replaces it).
        text: What to show.
        priority: ``low``, ``medium``, ``high`` or ``immediate``.
        color: A color to show it in.
        timeout_ms: How long to show it, in milliseconds.
        uuid: The frame's id.
        session_id: The session.
    """

    key: str = ""
    text: str = ""
    priority: str = ""
    color: str | None = None
    timeout_ms: int | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class FilesPersistedMessage(_PlainRepr):
    """Files were uploaded (``system``/``files_persisted``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        files: Those uploaded (``filename``, ``file_id``).
        failed: Those that failed (``filename``, ``error``).
        processed_at: When.
        uuid: The frame's id.
        session_id: The session.
    """

    files: tuple[Mapping[str, Any], ...] = ()
    failed: tuple[Mapping[str, Any], ...] = ()
    processed_at: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class MemoryRecallMessage(_PlainRepr):
    """Memories were recalled into the turn (``system``/``memory_recall``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        mode: ``select`` or ``synthesize``.
        memories: The memories (``path``, ``scope``, ...).
        uuid: The frame's id.
        session_id: The session.
    """

    mode: str = ""
    memories: tuple[Mapping[str, Any], ...] = ()
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class ElicitationCompleteMessage(_PlainRepr):
    """An MCP server confirmed a URL elicitation is complete (``system``/``elicitation_complete``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        mcp_server_name: The server.
        elicitation_id: The elicitation (`ElicitationRequest.elicitation_id`).
        uuid: The frame's id.
        session_id: The session.
    """

    mcp_server_name: str = ""
    elicitation_id: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class PermissionDeniedMessage(_PlainRepr):
    """A tool call was denied without a prompt (``system``/``permission_denied``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        tool_name: The tool.
        tool_use_id: The call.
        agent_id: The subagent that made it, if one did.
        decision_reason_type: What denied it (``mode``, ``classifier``, ``rule``, ...).
        decision_reason: Why.
        message: What the model was told.
        uuid: The frame's id.
        session_id: The session.
    """

    tool_name: str = ""
    tool_use_id: str = ""
    agent_id: str | None = None
    decision_reason_type: str | None = None
    decision_reason: str | None = None
    message: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class InformationalMessage(_PlainRepr):
    """A text banner: a status line, a hook's feedback, a command's output
    (``system``/``informational``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        content: The text.
        level: ``info``, ``notice``, ``suggestion`` or ``warning``.
        tool_use_id: The tool call it is about, if any.
        prevent_continuation: Whether it stopped the turn.
        tag: A tag for its kind.
        uuid: The frame's id.
        session_id: The session.
    """

    content: str = ""
    level: str = ""
    tool_use_id: str | None = None
    prevent_continuation: bool | None = None
    tag: str | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class SessionWritesLostMessage(_PlainRepr):
    """The CLI could not save transcript lines or its config: the disk is full
    (``system``/``session_writes_lost``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        error_code: ``ENOSPC`` or ``EDQUOT``.
        lost: What was not saved: ``transcript``, ``global_config``.
        transcript_session_ids: The sessions whose transcript lost lines.
        uuid: The frame's id.
        session_id: The session.
    """

    error_code: str = ""
    lost: tuple[str, ...] = ()
    transcript_session_ids: tuple[str, ...] = ()
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class PostTurnSummaryMessage(_PlainRepr):
    """A summary of where the session stands after a turn (``system``/``post_turn_summary``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        summarizes_uuid: The last message it summarizes.
        status_category: ``blocked``, ``need_input``, ``done``, ...
        status_detail: In words.
        needs_action: Whether a person needs to act.
        uuid: The frame's id.
        session_id: The session.
    """

    summarizes_uuid: str = ""
    status_category: str | None = None
    status_detail: str | None = None
    needs_action: bool | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class TaskSummaryMessage(_PlainRepr):
    """A summary of the session's task changed (``system``/``task_summary``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        detail: The summary (None when cleared).
        uuid: The frame's id.
        session_id: The session.
    """

    detail: Any = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class SessionMetadataMessage(_PlainRepr):
    """The session's metadata changed (``system``/``session_metadata``).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        metadata: What changed (``artifacts``, ...).
        uuid: The frame's id.
        session_id: The session.
    """

    metadata: Mapping[str, Any] | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass(repr=False)
class SessionTitleChangedMessage(_PlainRepr):
    """The session got a title (``system``/``session_title_changed``; from ``title``,
    ``rename_session()`` or made up).

    Attributes:
        subtype: The frame's `subtype`.
        data: The whole frame.
        raw: The frame as received, for fields ccwire does not model.
        title: The title.
        uuid: The frame's id.
        session_id: The session.
    """

    title: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass
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


@dataclass
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
    queued_turn_count: int | None = _ts_field()
    """Prompts still queued when this result was written (more than 0: more results
    follow)."""
    result_index: int | None = _ts_field()
    """How many results the run wrote before this one (from 0)."""
    startup_failure_reason: str | None = _ts_field()
    """Why the CLI could not start (``config_file_invalid``, ``cwd_unavailable``, ...), on
    the error result it writes before exiting; ``errors`` has the message."""
    invalid_config_file: Mapping[str, Any] | None = _ts_field()
    """With ``config_file_invalid``: the file (``path``, ``is_global``,
    ``backup_searched``, ``backup_path``)."""
    resume_reason: str | None = _ts_field()
    """Why this turn continues one a restart interrupted."""
    local_command: str | None = _ts_field()
    """The local slash command this turn ran, when it ran one."""
    ttft_ms: float | None = _ts_field()
    """Milliseconds from the request to the first token of the turn."""
    warm_spare_claimed: bool | None = _ts_field()
    """Whether the turn ran in a claimed spare (`prewarm()`)."""
    credential_expires_at: str | None = _ts_field()
    """When the claude.ai credential in use ends for good (ISO 8601)."""
    fast_mode_state: str | None = _ts_field()
    """Fast mode when the result was written (``off``, ``cooldown``, ``on``)."""
    fast_mode_disabled_reason: str | None = _ts_field()
    """Why fast mode is off, when it is."""


@dataclass
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
    ttft_ms: float | None = _ts_field()
    """Milliseconds from the request to its first token (on the stream's first event)."""
    resume_reason: str | None = _ts_field()
    """Why the CLI resumed a stream (a retried or continued request), when it did."""


@dataclass
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


@dataclass
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


@dataclass
class ConversationResetMessage:
    """The conversation was replaced without ending the connection (``/clear``, ...).

    Running totals on later results (``total_cost_usd``) start again from zero, and
    later messages carry a new ``session_id``.

    Attributes:
        new_conversation_id: An id for the fresh conversation (not its session id).
        uuid: The frame's id.
        session_id: The session that was reset.
        raw: The frame as received.
        trigger: What reset it (``clear``, ``plan_mode_exit``, ``fresh_session``,
            ``onboarding``), when the CLI says.
        user_message_uuid: With ``clear``: the prompt whose ``/clear`` ran.
        timestamp: When, as ISO 8601 text in UTC (for display).
    """

    new_conversation_id: str
    uuid: str
    session_id: str
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)
    trigger: str | None = _ts_field()
    user_message_uuid: str | None = _ts_field()
    timestamp: str | None = _ts_field()


@dataclass
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


@dataclass
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


@dataclass
class ToolProgressMessage(RawMessage):
    """A tool call is still running (a ``tool_progress`` frame).

    Attributes:
        type: Always ``"tool_progress"``.
        data: The whole frame, as received.
        tool_use_id: The call.
        tool_name: The tool.
        parent_tool_use_id: The subagent's call, when a subagent made it.
        elapsed_time_seconds: How long it has run.
        task_id: Its background task, if any.
        heartbeat: True for a keep-alive with nothing new.
        subagent_type: The subagent's type, for an ``Agent`` call.
        uuid: The frame's id.
        session_id: The session.
        subagent_retry: The subagent's API retry under way (``attempt``,
            ``max_retries``, ``retry_delay_ms``, ``error_status``, ...), if any.
    """

    tool_use_id: str = ""
    tool_name: str = ""
    parent_tool_use_id: str | None = None
    elapsed_time_seconds: float = 0.0
    task_id: str | None = None
    heartbeat: bool | None = None
    subagent_type: str | None = None
    uuid: str | None = None
    session_id: str | None = None
    subagent_retry: Mapping[str, Any] | None = _ts_field()


@dataclass
class AuthStatusMessage(RawMessage):
    """Progress of signing in (an ``auth_status`` frame).

    Attributes:
        type: Always ``"auth_status"``.
        data: The whole frame, as received.
        is_authenticating: Whether sign-in is under way.
        output: Its output lines.
        error: Why it failed.
        uuid: The frame's id.
        session_id: The session.
    """

    is_authenticating: bool = False
    output: tuple[str, ...] = ()
    error: str | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass
class ToolUseSummaryMessage(RawMessage):
    """A summary of tool calls (a ``tool_use_summary`` frame).

    Attributes:
        type: Always ``"tool_use_summary"``.
        data: The whole frame, as received.
        summary: The summary.
        preceding_tool_use_ids: The calls it summarizes.
        uuid: The frame's id.
        session_id: The session.
    """

    summary: str = ""
    preceding_tool_use_ids: tuple[str, ...] = ()
    uuid: str | None = None
    session_id: str | None = None


@dataclass
class PromptSuggestionMessage(RawMessage):
    """A predicted next prompt, after a turn's result (a ``prompt_suggestion`` frame; with
    ``prompt_suggestions=True``).

    Attributes:
        type: Always ``"prompt_suggestion"``.
        data: The whole frame, as received.
        suggestion: The suggested prompt.
        uuid: The frame's id.
        session_id: The session.
    """

    suggestion: str = ""
    uuid: str | None = None
    session_id: str | None = None


@dataclass
class ActiveGoalMessage(RawMessage):
    """The session's ``/goal`` changed: met, or one more iteration (an ``active_goal`` frame).

    Attributes:
        type: Always ``"active_goal"``.
        data: The whole frame, as received.
        value: The goal (``condition``, ``iterations``, ``set_at``, ...).
        uuid: The frame's id.
        session_id: The session.
    """

    value: Mapping[str, Any] | None = None
    uuid: str | None = None
    session_id: str | None = None


@dataclass
class AutocompactStateMessage(RawMessage):
    """When the conversation will be compacted (an ``autocompact_state`` frame).

    Attributes:
        type: Always ``"autocompact_state"``.
        data: The whole frame, as received.
        value: ``enabled``, ``effective_window``, ``threshold``, ``enforced``, ``source``.
        uuid: The frame's id.
        session_id: The session.
    """

    value: Mapping[str, Any] | None = None
    uuid: str | None = None
    session_id: str | None = None


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
