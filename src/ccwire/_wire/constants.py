"""The public constants of the CLI's protocol, as Anthropic's TypeScript SDK exports them.

Each is the value the TypeScript SDK for CLI 2.1.330 ships (``@anthropic-ai/claude-agent-sdk``
0.3.330): tuples where it has a read-only array, a read-only mapping where it has a
record.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, get_args

from .hook_types import LEGACY_TOOL_NAMES, HookEvent

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "EXIT_REASONS",
    "HOOK_EVENTS",
    "LEGACY_TOOL_NAME_ALIASES",
    "ORG_POLICY_LIMIT_PREFIXES",
    "SYSTEM_PROMPT_DYNAMIC_BOUNDARY",
    "USAGE_LIMIT_ERROR_PREFIXES",
    "USAGE_TRANSITION_PREFIXES",
    "USAGE_WARNING_PREFIXES",
    "ExitReason",
]

HOOK_EVENTS: Final[tuple[HookEvent, ...]] = get_args(HookEvent)
"""Every hook event, in the CLI's order (the values of `HookEvent`)."""

ExitReason = Literal["clear", "resume", "logout", "prompt_input_exit", "other"]
"""Why a session ended: the ``reason`` of a `SessionEndHookInput`."""

EXIT_REASONS: Final[tuple[ExitReason, ...]] = get_args(ExitReason)
"""Every `ExitReason`."""

BUILTIN_TOOL_NAMES: Final[tuple[str, ...]] = (
    "Agent",
    "Artifact",
    "AskUserQuestion",
    "Bash",
    "ClaudeDesign",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EndConversation",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "ListAgents",
    "ListMcpResourcesTool",
    "LSP",
    "Monitor",
    "NotebookEdit",
    "OfferChromeSetup",
    "PowerShell",
    "Projects",
    "propose_skills",
    "PushNotification",
    "Read",
    "ReadMcpResourceDirTool",
    "ReadMcpResourceTool",
    "ReadNotifications",
    "RemoteTrigger",
    "ReportFindings",
    "ScheduleWakeup",
    "SendFeedback",
    "SendMessage",
    "SendUserFile",
    "SendUserMessage",
    "SetGoal",
    "ShareOnboardingGuide",
    "ShowOnboardingRolePicker",
    "Skill",
    "SubagentHandback",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskStop",
    "TaskUpdate",
    "TodoWrite",
    "ToolSearch",
    "WaitForMcpServers",
    "WebFetch",
    "WebSearch",
    "Workflow",
    "Write",
)
"""Names of built-in tools, as permission rules, hook matchers, ``tools`` and
``disallowed_tools`` spell them. Not every tool: what a session has is the ``tools``
of its ``system/init`` message."""

LEGACY_TOOL_NAME_ALIASES: Final[Mapping[str, str]] = MappingProxyType(dict(LEGACY_TOOL_NAMES))
"""Former tool names that rules, matchers, ``tools`` and ``disallowed_tools`` still
accept, each mapped to the tool's current name."""

SYSTEM_PROMPT_DYNAMIC_BOUNDARY: Final = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
"""A block of its own in a list ``system_prompt``: the blocks before it are the static,
cacheable prefix shared across sessions, those after it the session's dynamic part."""

ORG_POLICY_LIMIT_PREFIXES: Final[tuple[str, ...]] = ("This service is disabled for your org",)
"""How error texts start when an organization's policy, not a usage limit, refused."""

USAGE_LIMIT_ERROR_PREFIXES: Final[tuple[str, ...]] = (
    "You've hit your",
    "You've reached your",
    "You're out of usage credits",
    "Your org is out of usage · add funds to continue",
    "Your org is out of usage · contact your admin",
    "Your seat type doesn't include usage credits",
    "Your seat type doesn't include usage",
    "Your usage allocation has been disabled by your admin",
    "Your group's usage limit is set to $0",
    "Fable 5 requires usage credits",
    "You're out of extra usage",
    "Your seat type doesn't include extra usage",
)
"""How error texts start when a usage limit is exhausted."""

USAGE_TRANSITION_PREFIXES: Final[tuple[str, ...]] = (
    "You're now using usage credits",
    "You're now using your usage allocation",
    "Now using your usage allocation",
    "Now using usage credits",
    "Now using credits",
    "You're now using extra usage",
    "Now using extra usage",
)
"""How notices start when the account moves on to another kind of usage."""

USAGE_WARNING_PREFIXES: Final[tuple[str, ...]] = ("You've used", "You're close to")
"""How warnings start when the account nears a usage limit."""
