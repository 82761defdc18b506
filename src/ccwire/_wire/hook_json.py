"""The dict form of hook outputs, as ``claude-agent-sdk`` types them.

A hook callback may return these dicts (the wire's camelCase keys, ``continue_`` and
``async_`` for the two Python keywords); ccwire sends them as given. They are the
reference's names for what ccwire also offers as typed dataclasses (`HookOutput`,
`PreToolUseOutput`, ...). Also here: the small dict shapes hook inputs carry
(`HookEffort`, `BackgroundTaskSummary`, `SessionCronSummary`).
"""

# No `from __future__ import annotations`: TypedDict must see NotRequired at class
# creation to tell optional keys from required ones.
from typing import Any, Literal, Union

from typing_extensions import NotRequired, TypedDict

__all__ = [
    "AsyncHookJSONOutput",
    "BackgroundTaskSummary",
    "CwdChangedHookSpecificOutput",
    "ElicitationHookSpecificOutput",
    "ElicitationResultHookSpecificOutput",
    "FileChangedHookSpecificOutput",
    "HookEffort",
    "HookJSONOutput",
    "MessageDisplayHookSpecificOutput",
    "NotificationHookSpecificOutput",
    "PermissionDeniedHookSpecificOutput",
    "PermissionRequestHookSpecificOutput",
    "PostModelSwitchHookSpecificOutput",
    "PostToolBatchHookSpecificOutput",
    "PostToolUseFailureHookSpecificOutput",
    "PostToolUseHookSpecificOutput",
    "PreModelSwitchHookSpecificOutput",
    "PreSkillShellCommandHookSpecificOutput",
    "PreToolUseHookSpecificOutput",
    "SessionCronSummary",
    "SessionStartHookSpecificOutput",
    "SetupHookSpecificOutput",
    "StopHookSpecificOutput",
    "SubagentStartHookSpecificOutput",
    "SubagentStopHookSpecificOutput",
    "SyncHookJSONOutput",
    "UserPromptExpansionHookSpecificOutput",
    "UserPromptSubmitHookSpecificOutput",
    "WorktreeCreateHookSpecificOutput",
]


class HookEffort(TypedDict):
    """The reasoning effort in force when a hook fires (``level``: ``low``...``max``)."""

    level: str


class BackgroundTaskSummary(TypedDict):
    """A background task still running when a ``Stop`` hook fires."""

    id: str
    type: str
    status: str
    description: str
    command: NotRequired[str]
    agent_type: NotRequired[str]
    server: NotRequired[str]
    tool: NotRequired[str]
    name: NotRequired[str]


class SessionCronSummary(TypedDict):
    """A scheduled prompt of the session, as a ``Stop`` hook sees it."""

    id: str
    schedule: str
    recurring: bool
    prompt: str


class PreToolUseHookSpecificOutput(TypedDict):
    """``PreToolUse``: allow, deny, ask or defer the call; change its input."""

    hookEventName: Literal["PreToolUse"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]
    additionalContext: NotRequired[str]


class PostToolUseHookSpecificOutput(TypedDict):
    """``PostToolUse``: add context; replace the tool's output."""

    hookEventName: Literal["PostToolUse"]
    additionalContext: NotRequired[str]
    updatedToolOutput: NotRequired[Any]
    updatedMCPToolOutput: NotRequired[Any]
    classifierContext: NotRequired[str]
    """What the host asserts to the auto-mode permission classifier about this call's
    result (at most 2000 UTF-16 code units; synchronous hooks only)."""


class PostToolUseFailureHookSpecificOutput(TypedDict):
    """``PostToolUseFailure``: add context."""

    hookEventName: Literal["PostToolUseFailure"]
    additionalContext: NotRequired[str]


class UserPromptSubmitHookSpecificOutput(TypedDict):
    """``UserPromptSubmit``: add context, title the session, drop the prompt."""

    hookEventName: Literal["UserPromptSubmit"]
    additionalContext: NotRequired[str]
    sessionTitle: NotRequired[str]
    suppressOriginalPrompt: NotRequired[bool]


class UserPromptExpansionHookSpecificOutput(TypedDict):
    """``UserPromptExpansion``: add context, drop the original prompt."""

    hookEventName: Literal["UserPromptExpansion"]
    additionalContext: NotRequired[str]
    suppressOriginalPrompt: NotRequired[bool]


class SessionStartHookSpecificOutput(TypedDict):
    """``SessionStart``: add context, a first message, a title, paths to watch."""

    hookEventName: Literal["SessionStart"]
    additionalContext: NotRequired[str]
    initialUserMessage: NotRequired[str]
    sessionTitle: NotRequired[str]
    watchPaths: NotRequired[list[str]]
    reloadSkills: NotRequired[bool]


class SetupHookSpecificOutput(TypedDict):
    """``Setup``: add context."""

    hookEventName: Literal["Setup"]
    additionalContext: NotRequired[str]


class NotificationHookSpecificOutput(TypedDict):
    """``Notification``: add context."""

    hookEventName: Literal["Notification"]
    additionalContext: NotRequired[str]


class SubagentStartHookSpecificOutput(TypedDict):
    """``SubagentStart``: add context."""

    hookEventName: Literal["SubagentStart"]
    additionalContext: NotRequired[str]


class PermissionRequestHookSpecificOutput(TypedDict):
    """``PermissionRequest``: the decision (``{"behavior": "allow" | "deny", ...}``)."""

    hookEventName: Literal["PermissionRequest"]
    decision: dict[str, Any]


class PostToolBatchHookSpecificOutput(TypedDict):
    """``PostToolBatch``: add context."""

    hookEventName: Literal["PostToolBatch"]
    additionalContext: NotRequired[str]


class StopHookSpecificOutput(TypedDict):
    """``Stop``: add context."""

    hookEventName: Literal["Stop"]
    additionalContext: NotRequired[str]


class SubagentStopHookSpecificOutput(TypedDict):
    """``SubagentStop``: add context."""

    hookEventName: Literal["SubagentStop"]
    additionalContext: NotRequired[str]


class PermissionDeniedHookSpecificOutput(TypedDict):
    """``PermissionDenied``: let the model retry."""

    hookEventName: Literal["PermissionDenied"]
    retry: NotRequired[bool]


class PreModelSwitchHookSpecificOutput(TypedDict):
    """``PreModelSwitch``: allow, deny or ask."""

    hookEventName: Literal["PreModelSwitch"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask"]]
    permissionDecisionReason: NotRequired[str]


class PostModelSwitchHookSpecificOutput(TypedDict):
    """``PostModelSwitch``: add context."""

    hookEventName: Literal["PostModelSwitch"]
    additionalContext: NotRequired[str]


class ElicitationHookSpecificOutput(TypedDict):
    """``Elicitation``: answer an MCP elicitation."""

    hookEventName: Literal["Elicitation"]
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]


class ElicitationResultHookSpecificOutput(TypedDict):
    """``ElicitationResult``: change an elicitation's answer."""

    hookEventName: Literal["ElicitationResult"]
    action: NotRequired[Literal["accept", "decline", "cancel"]]
    content: NotRequired[dict[str, Any]]


class CwdChangedHookSpecificOutput(TypedDict):
    """``CwdChanged``: paths to watch."""

    hookEventName: Literal["CwdChanged"]
    watchPaths: NotRequired[list[str]]


class FileChangedHookSpecificOutput(TypedDict):
    """``FileChanged``: paths to watch."""

    hookEventName: Literal["FileChanged"]
    watchPaths: NotRequired[list[str]]


class WorktreeCreateHookSpecificOutput(TypedDict):
    """``WorktreeCreate``: the path of the worktree made."""

    hookEventName: Literal["WorktreeCreate"]
    worktreePath: str


class MessageDisplayHookSpecificOutput(TypedDict):
    """``MessageDisplay``: what to show instead."""

    hookEventName: Literal["MessageDisplay"]
    displayContent: NotRequired[str]


class PreSkillShellCommandHookSpecificOutput(TypedDict):
    """``PreSkillShellCommand``: allow, deny, ask or defer a skill's shell command."""

    hookEventName: Literal["PreSkillShellCommand"]
    permissionDecision: NotRequired[Literal["allow", "deny", "ask", "defer"]]
    permissionDecisionReason: NotRequired[str]
    updatedInput: NotRequired[dict[str, Any]]


class AsyncHookJSONOutput(TypedDict):
    """ "I run in the background": ``{"async_": True}`` (sent as ``"async"``)."""

    async_: Literal[True]
    asyncTimeout: NotRequired[int]


class SyncHookJSONOutput(TypedDict):
    """The synchronous answer (``continue_`` is sent as ``"continue"``)."""

    continue_: NotRequired[bool]
    suppressOutput: NotRequired[bool]
    stopReason: NotRequired[str]
    decision: NotRequired[Literal["approve", "block"]]
    systemMessage: NotRequired[str]
    terminalSequence: NotRequired[str]
    """An escape sequence for the CLI to write to the terminal (notification and title
    sequences only)."""
    reason: NotRequired[str]
    hookSpecificOutput: NotRequired[dict[str, Any]]


HookJSONOutput = Union[AsyncHookJSONOutput, SyncHookJSONOutput]
"""What a hook callback returns in ``claude-agent-sdk``'s dict form."""
