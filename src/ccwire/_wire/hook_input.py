"""Typed hook inputs: one frozen dataclass per hook event, each also a dict.

**Design choice.** A hook callback receives the input of its event as an instance of
the matching class below (``PreToolUseHookInput`` for ``PreToolUse``, ...). Every class
is a frozen dataclass *and* a dict of the input exactly as the CLI sent it (the
reference SDK's hook input is that plain dict), so both styles work on the same
object, and so do ``json.dumps(input)`` and ``isinstance(input, dict)``::

    async def guard(input, tool_use_id, context):
        input.tool_name             # typed attribute (str)
        input["tool_name"]          # the reference SDK's dict style, unchanged
        input.get("tool_input", {}) # every dict method
        input.raw                   # the wire dict, with fields ccwire does not model

Code written for Anthropic's ``claude-agent-sdk`` (which passes plain dicts) keeps
working, ``isinstance(input, PreToolUseHookInput)`` narrows the type for mypy, and
nothing the CLI sends is lost: unknown fields stay in the mapping, and an event
ccwire does not know arrives as a plain `BaseHookInput`.
`parse_hook_input()` builds one from a dict, in tests for example.

Field names are the wire's own (the CLI spells hook inputs in snake_case); missing
fields take their defaults, so decoding never fails. ``tool_input`` and similar
nested values are the CLI's JSON, unchanged.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .permission_types import PermissionUpdate

__all__ = [
    "HOOK_INPUT_TYPES",
    "BaseHookInput",
    "ConfigChangeHookInput",
    "CwdChangedHookInput",
    "DirectoryAddedHookInput",
    "ElicitationHookInput",
    "ElicitationResultHookInput",
    "FileChangedHookInput",
    "HookInput",
    "InstructionsLoadedHookInput",
    "InterruptHookInput",
    "MessageDisplayHookInput",
    "NotificationHookInput",
    "PermissionDeniedHookInput",
    "PermissionRequestHookInput",
    "PostCompactHookInput",
    "PostModelSwitchHookInput",
    "PostToolBatchHookInput",
    "PostToolUseFailureHookInput",
    "PostToolUseHookInput",
    "PreCompactHookInput",
    "PreModelSwitchHookInput",
    "PreSkillShellCommandHookInput",
    "PreToolUseHookInput",
    "SessionEndHookInput",
    "SessionStartHookInput",
    "SetupHookInput",
    "StopFailureHookInput",
    "StopHookInput",
    "SubagentStartHookInput",
    "SubagentStopHookInput",
    "TaskCompletedHookInput",
    "TaskCreatedHookInput",
    "TeammateIdleHookInput",
    "ToolHookInput",
    "UserPromptExpansionHookInput",
    "UserPromptSubmitHookInput",
    "WorktreeCreateHookInput",
    "WorktreeRemoveHookInput",
]


def _dict() -> Any:
    return field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, eq=False)
class BaseHookInput(dict[str, Any]):
    """Fields every hook input carries; also the type of inputs of unknown events.

    As a dict it holds the wire input (``raw``), as the reference SDK's plain dict does:
    ``json.dumps(input)`` and ``isinstance(input, dict)`` work, and equality is dict
    equality, so ``input == {...}`` compares with a plain dict. Changing its items
    changes neither the typed attributes nor ``raw``.
    """

    EVENT: ClassVar[str] = ""
    MATCH_FIELD: ClassVar[str | None] = None

    hook_event_name: str = ""
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str | None = None
    prompt_id: str | None = None
    agent_id: str | None = None
    """Present only inside a subagent."""
    agent_type: str | None = None
    effort: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The input exactly as the CLI sent it."""

    def __post_init__(self) -> None:
        dict.update(self, self.raw)

    @property
    def matcher_value(self) -> str | None:
        """What the CLI tests a `HookMatcher` pattern against for this
        event (the tool name for tool events, ``source`` for SessionStart, ...); None
        for events whose matchers are ignored."""
        if self.MATCH_FIELD is None:
            return None
        value = getattr(self, self.MATCH_FIELD, None)
        return value if isinstance(value, str) else None


HookInput = BaseHookInput
"""What a hook callback receives: a `BaseHookInput` subclass chosen by event."""


@dataclass(frozen=True, kw_only=True, eq=False)
class ToolHookInput(BaseHookInput):
    """Fields shared by the tool events. ``mcp_server`` (``{name, source}``) is set for
    MCP tools."""

    MATCH_FIELD: ClassVar[str | None] = "tool_name"

    tool_name: str = ""
    tool_input: Mapping[str, Any] = _dict()
    tool_use_id: str | None = None
    mcp_server: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class PreToolUseHookInput(ToolHookInput):
    """Before a tool runs (and before the permission callback)."""

    EVENT: ClassVar[str] = "PreToolUse"


@dataclass(frozen=True, kw_only=True, eq=False)
class PostToolUseHookInput(ToolHookInput):
    """After a tool succeeded. ``tool_response`` is the tool's raw output."""

    EVENT: ClassVar[str] = "PostToolUse"
    tool_response: Any = None
    duration_ms: int | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class PostToolUseFailureHookInput(ToolHookInput):
    """After a tool failed."""

    EVENT: ClassVar[str] = "PostToolUseFailure"
    error: str = ""
    is_interrupt: bool | None = None
    duration_ms: int | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class PostToolBatchHookInput(BaseHookInput):
    """After a batch of tool calls resolved: ``tool_calls`` lists
    ``{tool_name, tool_input, tool_use_id, tool_response?}``."""

    EVENT: ClassVar[str] = "PostToolBatch"
    tool_calls: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True, kw_only=True, eq=False)
class PermissionRequestHookInput(ToolHookInput):
    """A permission prompt is about to be shown; ``permission_suggestions`` are typed."""

    EVENT: ClassVar[str] = "PermissionRequest"
    permission_suggestions: tuple[PermissionUpdate, ...] = ()


@dataclass(frozen=True, kw_only=True, eq=False)
class PermissionDeniedHookInput(ToolHookInput):
    """A tool call was denied (by auto mode); ``reason`` says why."""

    EVENT: ClassVar[str] = "PermissionDenied"
    reason: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class NotificationHookInput(BaseHookInput):
    """The CLI sends a notification."""

    EVENT: ClassVar[str] = "Notification"
    MATCH_FIELD: ClassVar[str | None] = "notification_type"
    message: str = ""
    title: str | None = None
    notification_type: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class UserPromptSubmitHookInput(BaseHookInput):
    """A prompt is submitted. ``source``: user, sdk, system, loop_wakeup, ..."""

    EVENT: ClassVar[str] = "UserPromptSubmit"
    prompt: str = ""
    source: str | None = None
    session_title: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class UserPromptExpansionHookInput(BaseHookInput):
    """A slash command or MCP prompt expands into a prompt."""

    EVENT: ClassVar[str] = "UserPromptExpansion"
    MATCH_FIELD: ClassVar[str | None] = "command_name"
    expansion_type: str = ""
    command_name: str = ""
    command_args: str = ""
    command_source: str | None = None
    prompt: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class SessionStartHookInput(BaseHookInput):
    """A session starts. ``source``: startup, resume, clear, compact or fork."""

    EVENT: ClassVar[str] = "SessionStart"
    MATCH_FIELD: ClassVar[str | None] = "source"
    source: str = ""
    model: str | None = None
    session_title: str | None = None
    seconds_since_last_response: float | None = None
    context_tokens: int | None = None
    prompt_cache_likely_expired: bool | None = None
    estimated_cache_write_usd: float | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class SessionEndHookInput(BaseHookInput):
    """A session ends. ``reason``: clear, resume, logout, prompt_input_exit or other."""

    EVENT: ClassVar[str] = "SessionEnd"
    MATCH_FIELD: ClassVar[str | None] = "reason"
    reason: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class StopHookInput(BaseHookInput):
    """The main agent is about to end its turn."""

    EVENT: ClassVar[str] = "Stop"
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    background_tasks: Sequence[Mapping[str, Any]] | None = None
    session_crons: Sequence[Mapping[str, Any]] | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class StopFailureHookInput(BaseHookInput):
    """The turn ended because of an API error (``error`` is its code)."""

    EVENT: ClassVar[str] = "StopFailure"
    MATCH_FIELD: ClassVar[str | None] = "error"
    error: str = ""
    error_details: Any = None
    last_assistant_message: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class InterruptHookInput(BaseHookInput):
    """An interrupt ended the main conversation's turn; the hook's output is ignored.

    The TypeScript SDK 0.3.337's event, fired once per interrupted turn.
    ``source`` says who stopped it: ``user`` (a person, or a request that does not say,
    such as an SDK program's ``interrupt()``), ``session`` (another session's Claude) or
    ``system`` (a hook, a plugin, a permission check, a service). ``reason`` says what:
    ``stop``, ``permission_denied``, ``rewind`` or ``other``. ``via``, where known, how
    the stop arrived: ``terminal`` or ``client``.
    """

    EVENT: ClassVar[str] = "Interrupt"
    source: str = "user"
    reason: str = "other"
    via: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class SubagentStartHookInput(BaseHookInput):
    """A subagent starts (``agent_id`` and ``agent_type`` are set)."""

    EVENT: ClassVar[str] = "SubagentStart"
    MATCH_FIELD: ClassVar[str | None] = "agent_type"


@dataclass(frozen=True, kw_only=True, eq=False)
class SubagentStopHookInput(BaseHookInput):
    """A subagent is about to finish."""

    EVENT: ClassVar[str] = "SubagentStop"
    MATCH_FIELD: ClassVar[str | None] = "agent_type"
    stop_hook_active: bool = False
    agent_transcript_path: str = ""
    last_assistant_message: str | None = None
    background_tasks: Sequence[Mapping[str, Any]] | None = None
    session_crons: Sequence[Mapping[str, Any]] | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class PreCompactHookInput(BaseHookInput):
    """Before compaction. ``trigger``: manual or auto."""

    EVENT: ClassVar[str] = "PreCompact"
    MATCH_FIELD: ClassVar[str | None] = "trigger"
    trigger: str = ""
    custom_instructions: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class PostCompactHookInput(BaseHookInput):
    """After compaction."""

    EVENT: ClassVar[str] = "PostCompact"
    MATCH_FIELD: ClassVar[str | None] = "trigger"
    trigger: str = ""
    compact_summary: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class _ModelSwitchHookInput(BaseHookInput):
    MATCH_FIELD: ClassVar[str | None] = "to_model"
    from_model: str | None = None
    to_model: str | None = None
    requested_model: str | None = None
    source: str | None = None
    context_tokens: int | None = None
    prompt_cache_warm: bool | None = None
    cache_ttl: str | None = None
    estimated_cache_write_usd: float | None = None
    pricing: Any = None


@dataclass(frozen=True, kw_only=True, eq=False)
class PreModelSwitchHookInput(_ModelSwitchHookInput):
    """Before a requested model switch (``set_model``, /model)."""

    EVENT: ClassVar[str] = "PreModelSwitch"


@dataclass(frozen=True, kw_only=True, eq=False)
class PostModelSwitchHookInput(_ModelSwitchHookInput):
    """After the session's model changed."""

    EVENT: ClassVar[str] = "PostModelSwitch"


@dataclass(frozen=True, kw_only=True, eq=False)
class SetupHookInput(BaseHookInput):
    """Repository setup. ``trigger``: init or maintenance."""

    EVENT: ClassVar[str] = "Setup"
    MATCH_FIELD: ClassVar[str | None] = "trigger"
    trigger: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class TeammateIdleHookInput(BaseHookInput):
    """A teammate is about to go idle."""

    EVENT: ClassVar[str] = "TeammateIdle"
    teammate_name: str = ""
    team_name: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class _TaskHookInput(BaseHookInput):
    """The fields the task events share."""

    task_id: str = ""
    task_subject: str = ""
    task_description: str | None = None
    teammate_name: str | None = None
    team_name: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class TaskCreatedHookInput(_TaskHookInput):
    """A task is being created."""

    EVENT: ClassVar[str] = "TaskCreated"


@dataclass(frozen=True, kw_only=True, eq=False)
class TaskCompletedHookInput(_TaskHookInput):
    """A task is being marked as completed."""

    EVENT: ClassVar[str] = "TaskCompleted"


@dataclass(frozen=True, kw_only=True, eq=False)
class ElicitationHookInput(BaseHookInput):
    """An MCP server asks the user for input."""

    EVENT: ClassVar[str] = "Elicitation"
    MATCH_FIELD: ClassVar[str | None] = "mcp_server_name"
    mcp_server_name: str = ""
    message: str = ""
    mode: str | None = None
    url: str | None = None
    elicitation_id: str | None = None
    requested_schema: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class ElicitationResultHookInput(BaseHookInput):
    """The user answered an MCP elicitation."""

    EVENT: ClassVar[str] = "ElicitationResult"
    MATCH_FIELD: ClassVar[str | None] = "mcp_server_name"
    mcp_server_name: str = ""
    elicitation_id: str | None = None
    mode: str | None = None
    action: str = ""
    content: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class ConfigChangeHookInput(BaseHookInput):
    """A configuration file changed (``source``: user_settings, project_settings, ...)."""

    EVENT: ClassVar[str] = "ConfigChange"
    MATCH_FIELD: ClassVar[str | None] = "source"
    source: str = ""
    file_path: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class WorktreeCreateHookInput(BaseHookInput):
    """Create an isolated worktree called ``name``."""

    EVENT: ClassVar[str] = "WorktreeCreate"
    name: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class WorktreeRemoveHookInput(BaseHookInput):
    """Remove a worktree created earlier."""

    EVENT: ClassVar[str] = "WorktreeRemove"
    worktree_path: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class InstructionsLoadedHookInput(BaseHookInput):
    """An instruction file (CLAUDE.md or a rule) was loaded."""

    EVENT: ClassVar[str] = "InstructionsLoaded"
    MATCH_FIELD: ClassVar[str | None] = "load_reason"
    file_path: str = ""
    memory_type: str = ""
    load_reason: str = ""
    globs: Sequence[str] | None = None
    trigger_file_path: str | None = None
    parent_file_path: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class CwdChangedHookInput(BaseHookInput):
    """The working directory changed."""

    EVENT: ClassVar[str] = "CwdChanged"
    old_cwd: str = ""
    new_cwd: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class FileChangedHookInput(BaseHookInput):
    """A watched file changed (``event``: change, add or unlink); matchers see its
    base name."""

    EVENT: ClassVar[str] = "FileChanged"
    file_path: str = ""
    event: str = ""

    @property
    def matcher_value(self) -> str | None:
        """The file's base name (what the CLI matches FileChanged matchers against)."""
        path = self.file_path
        return posixpath.basename(path) if isinstance(path, str) and path else None


@dataclass(frozen=True, kw_only=True, eq=False)
class DirectoryAddedHookInput(BaseHookInput):
    """A working directory was added mid-session."""

    EVENT: ClassVar[str] = "DirectoryAdded"
    MATCH_FIELD: ClassVar[str | None] = "source"
    directory: str = ""
    source: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class MessageDisplayHookInput(BaseHookInput):
    """Assistant text is being displayed (``delta`` is the new text)."""

    EVENT: ClassVar[str] = "MessageDisplay"
    turn_id: str = ""
    message_id: str = ""
    index: int = 0
    final: bool = False
    delta: str = ""


@dataclass(frozen=True, kw_only=True, eq=False)
class PreSkillShellCommandHookInput(BaseHookInput):
    """A shell command in a skill's or command's text is about to run (CLI 2.1.332 and
    later).

    ``tool_name`` is the shell tool (``Bash`` or ``PowerShell``); ``tool_input``
    holds the ``command`` as it would run; ``tool_use_id`` names no tool call of the
    transcript; ``command_name`` is the skill or command whose text holds it;
    ``invoked_by`` is ``user``, ``claude`` or ``other``.
    """

    EVENT: ClassVar[str] = "PreSkillShellCommand"
    MATCH_FIELD: ClassVar[str | None] = "tool_name"
    tool_name: str = ""
    tool_input: Mapping[str, Any] = _dict()
    tool_use_id: str = ""
    command_name: str = ""
    command_source: str | None = None
    invoked_by: str = "other"


HOOK_INPUT_TYPES: Mapping[str, type[BaseHookInput]] = {
    cls.EVENT: cls
    for cls in (
        PreToolUseHookInput,
        PostToolUseHookInput,
        PostToolUseFailureHookInput,
        PostToolBatchHookInput,
        NotificationHookInput,
        UserPromptSubmitHookInput,
        UserPromptExpansionHookInput,
        SessionStartHookInput,
        SessionEndHookInput,
        StopHookInput,
        StopFailureHookInput,
        InterruptHookInput,
        SubagentStartHookInput,
        SubagentStopHookInput,
        PreCompactHookInput,
        PostCompactHookInput,
        PreModelSwitchHookInput,
        PostModelSwitchHookInput,
        PermissionRequestHookInput,
        PermissionDeniedHookInput,
        SetupHookInput,
        TeammateIdleHookInput,
        TaskCreatedHookInput,
        TaskCompletedHookInput,
        ElicitationHookInput,
        ElicitationResultHookInput,
        ConfigChangeHookInput,
        WorktreeCreateHookInput,
        WorktreeRemoveHookInput,
        InstructionsLoadedHookInput,
        CwdChangedHookInput,
        FileChangedHookInput,
        DirectoryAddedHookInput,
        MessageDisplayHookInput,
        PreSkillShellCommandHookInput,
    )
}
"""The input class of every hook event, by event name."""


def _declare_keys(cls: type[BaseHookInput]) -> None:
    # the key sets a TypedDict of the same input has (claude-agent-sdk's hook inputs are
    # TypedDicts): a field that defaults to None is a key the CLI may leave out
    keys = [f for f in dataclasses.fields(cls) if f.name != "raw"]
    optional = frozenset(f.name for f in keys if f.default is None)
    cls.__optional_keys__ = optional  # type: ignore[attr-defined]
    cls.__required_keys__ = frozenset(f.name for f in keys) - optional  # type: ignore[attr-defined]


_ALL_INPUTS: list[type[BaseHookInput]] = [BaseHookInput, *HOOK_INPUT_TYPES.values()]
for _cls in _ALL_INPUTS:
    _declare_keys(_cls)
