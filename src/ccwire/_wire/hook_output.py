"""Typed hook outputs: what a hook callback may return, in snake_case.

A callback returns one of:

* `HookOutput`: the synchronous answer (``continue_``, ``decision``,
  ``system_message``, ... and an optional event-specific ``hook_specific_output``);
* `AsyncHookOutput`: "I run in the background" (``{"async": true}`` on the wire);
* an event-specific output alone (``PreToolUseOutput(permission_decision="deny")``),
  which is shorthand for ``HookOutput(hook_specific_output=...)``;
* the reference SDK's dict form with the wire's camelCase keys, where the two Python
  keywords are written ``continue_`` and ``async_``; it is sent as given (only those
  two top-level keys are renamed);
* ``None``, meaning "no opinion" (``{}``).

The wire names are applied by `codec` only. An event-specific output must
belong to the event the hook is registered for, or the CLI gets an error answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Union

from .permission_types import PermissionResultAllow, PermissionResultDeny

__all__ = [
    "AsyncHookOutput",
    "CwdChangedOutput",
    "ElicitationOutput",
    "ElicitationResultOutput",
    "FileChangedOutput",
    "HookCallbackResult",
    "HookOutput",
    "HookSpecificOutput",
    "MessageDisplayOutput",
    "NotificationOutput",
    "PermissionDeniedOutput",
    "PermissionRequestOutput",
    "PostModelSwitchOutput",
    "PostToolBatchOutput",
    "PostToolUseFailureOutput",
    "PostToolUseOutput",
    "PreModelSwitchOutput",
    "PreSkillShellCommandOutput",
    "PreToolUseOutput",
    "SessionStartOutput",
    "SetupOutput",
    "StopOutput",
    "SubagentStartOutput",
    "SubagentStopOutput",
    "UserPromptExpansionOutput",
    "UserPromptSubmitOutput",
    "WorktreeCreateOutput",
]


@dataclass(frozen=True, kw_only=True)
class HookSpecificOutput:
    """Base of the event-specific outputs; ``EVENT`` is the event each one belongs to."""

    EVENT: ClassVar[str] = ""


@dataclass(frozen=True, kw_only=True)
class PreToolUseOutput(HookSpecificOutput):
    """Decide on a tool call before it runs. ``"allow"`` skips the permission callback,
    ``"deny"`` blocks the call (the model sees the reason), ``"ask"`` forces a
    permission prompt; ``updated_input`` rewrites the tool's input."""

    EVENT: ClassVar[str] = "PreToolUse"
    permission_decision: Literal["allow", "deny", "ask", "defer"] | None = None
    permission_decision_reason: str | None = None
    updated_input: Mapping[str, Any] | None = None
    additional_context: str | None = None


@dataclass(frozen=True, kw_only=True)
class PostToolUseOutput(HookSpecificOutput):
    """Add context after a tool ran, or replace its output (``updated_tool_output`` must
    match the tool's output schema; ``updated_mcp_tool_output`` for MCP tools)."""

    EVENT: ClassVar[str] = "PostToolUse"
    additional_context: str | None = None
    updated_tool_output: Any = None
    updated_mcp_tool_output: Any = None
    classifier_context: str | None = None


@dataclass(frozen=True, kw_only=True)
class _ContextOutput(HookSpecificOutput):
    """An output that may add context for the model."""

    additional_context: str | None = None


@dataclass(frozen=True, kw_only=True)
class PostToolUseFailureOutput(_ContextOutput):
    """Add context after a tool failed."""

    EVENT: ClassVar[str] = "PostToolUseFailure"


@dataclass(frozen=True, kw_only=True)
class PostToolBatchOutput(_ContextOutput):
    """Add context after a batch of tool calls."""

    EVENT: ClassVar[str] = "PostToolBatch"


@dataclass(frozen=True, kw_only=True)
class NotificationOutput(_ContextOutput):
    """Add context to a notification."""

    EVENT: ClassVar[str] = "Notification"


@dataclass(frozen=True, kw_only=True)
class SubagentStartOutput(_ContextOutput):
    """Add context for a starting subagent."""

    EVENT: ClassVar[str] = "SubagentStart"


@dataclass(frozen=True, kw_only=True)
class SetupOutput(_ContextOutput):
    """Add context after repository setup."""

    EVENT: ClassVar[str] = "Setup"


@dataclass(frozen=True, kw_only=True)
class PostModelSwitchOutput(_ContextOutput):
    """Add context after a model switch."""

    EVENT: ClassVar[str] = "PostModelSwitch"


@dataclass(frozen=True, kw_only=True)
class StopOutput(_ContextOutput):
    """Non-error feedback at the end of a turn; the agent continues."""

    EVENT: ClassVar[str] = "Stop"


@dataclass(frozen=True, kw_only=True)
class SubagentStopOutput(_ContextOutput):
    """Non-error feedback when a subagent stops; it continues."""

    EVENT: ClassVar[str] = "SubagentStop"


@dataclass(frozen=True, kw_only=True)
class UserPromptSubmitOutput(_ContextOutput):
    """Add context to a prompt, title the session, or hide the original prompt."""

    EVENT: ClassVar[str] = "UserPromptSubmit"
    session_title: str | None = None
    suppress_original_prompt: bool | None = None


@dataclass(frozen=True, kw_only=True)
class UserPromptExpansionOutput(_ContextOutput):
    """Add context to an expanded command, or hide the original prompt."""

    EVENT: ClassVar[str] = "UserPromptExpansion"
    suppress_original_prompt: bool | None = None


@dataclass(frozen=True, kw_only=True)
class SessionStartOutput(_ContextOutput):
    """Context, a first user message, a title, paths to watch, or a skills reload."""

    EVENT: ClassVar[str] = "SessionStart"
    initial_user_message: str | None = None
    session_title: str | None = None
    watch_paths: Sequence[str] | None = None
    reload_skills: bool | None = None


@dataclass(frozen=True, kw_only=True)
class PermissionRequestOutput(HookSpecificOutput):
    """Answer a permission prompt from a hook: allow (optionally with rewritten input and
    rule updates) or deny (optionally interrupting the turn)."""

    EVENT: ClassVar[str] = "PermissionRequest"
    decision: PermissionResultAllow | PermissionResultDeny | None = None


@dataclass(frozen=True, kw_only=True)
class PermissionDeniedOutput(HookSpecificOutput):
    """``retry=True`` lets the model retry a call auto mode denied."""

    EVENT: ClassVar[str] = "PermissionDenied"
    retry: bool | None = None


@dataclass(frozen=True, kw_only=True)
class PreModelSwitchOutput(HookSpecificOutput):
    """Allow, deny or ask about a requested model switch."""

    EVENT: ClassVar[str] = "PreModelSwitch"
    permission_decision: Literal["allow", "deny", "ask"] | None = None
    permission_decision_reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class _ElicitationAnswer(HookSpecificOutput):
    """An answer to an elicitation: the action and the content."""

    action: Literal["accept", "decline", "cancel"] | None = None
    content: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ElicitationOutput(_ElicitationAnswer):
    """Answer an MCP elicitation without asking the user."""

    EVENT: ClassVar[str] = "Elicitation"


@dataclass(frozen=True, kw_only=True)
class ElicitationResultOutput(_ElicitationAnswer):
    """Override the user's answer to an MCP elicitation."""

    EVENT: ClassVar[str] = "ElicitationResult"


@dataclass(frozen=True, kw_only=True)
class CwdChangedOutput(HookSpecificOutput):
    """Paths to watch (FileChanged) after the working directory changed."""

    EVENT: ClassVar[str] = "CwdChanged"
    watch_paths: Sequence[str] | None = None


@dataclass(frozen=True, kw_only=True)
class FileChangedOutput(HookSpecificOutput):
    """Paths to watch from now on."""

    EVENT: ClassVar[str] = "FileChanged"
    watch_paths: Sequence[str] | None = None


@dataclass(frozen=True, kw_only=True)
class WorktreeCreateOutput(HookSpecificOutput):
    """Where the created worktree is (required by the CLI)."""

    EVENT: ClassVar[str] = "WorktreeCreate"
    worktree_path: str


@dataclass(frozen=True, kw_only=True)
class MessageDisplayOutput(HookSpecificOutput):
    """Replace the text shown for an assistant message."""

    EVENT: ClassVar[str] = "MessageDisplay"
    display_content: str | None = None


@dataclass(frozen=True, kw_only=True)
class PreSkillShellCommandOutput(HookSpecificOutput):
    """Decide on a skill's shell command before it runs (CLI 2.1.332 and later).
    ``"allow"`` adds nothing (the command runs unless a hook refuses it); ``"deny"``,
    ``"ask"`` and ``"defer"`` keep it from running. ``updated_input`` is never applied:
    any value keeps the command from running."""

    EVENT: ClassVar[str] = "PreSkillShellCommand"
    permission_decision: Literal["allow", "deny", "ask", "defer"] | None = None
    permission_decision_reason: str | None = None
    updated_input: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class HookOutput:
    """The synchronous answer of a hook; every field is optional (``HookOutput()`` means
    "no opinion").

    ``continue_=False`` stops the agent (``stop_reason`` is shown); ``decision="block"``
    with ``reason`` blocks and gives Claude feedback; ``system_message`` is a warning
    shown to the user; ``suppress_output`` hides the hook's output;
    ``terminal_sequence`` is an escape sequence for the terminal.
    """

    continue_: bool | None = None
    suppress_output: bool | None = None
    stop_reason: str | None = None
    decision: Literal["approve", "block"] | None = None
    system_message: str | None = None
    reason: str | None = None
    terminal_sequence: str | None = None
    hook_specific_output: HookSpecificOutput | None = None


@dataclass(frozen=True, kw_only=True)
class AsyncHookOutput:
    """The hook goes on in the background; ``async_timeout`` is in milliseconds."""

    async_timeout: int | None = None


HookCallbackResult = Union[HookOutput, AsyncHookOutput, HookSpecificOutput, Mapping[str, Any], None]
"""Anything a hook callback may return (see the module docstring)."""
