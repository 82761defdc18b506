"""Types of hook callbacks as users register them (``ClaudeAgentOptions.hooks``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

__all__ = ["HookCallback", "HookContext", "HookEvent", "HookMatcher"]

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
]
"""Every hook event CLI 2.1.330 supports."""


@dataclass(frozen=True)
class HookContext:
    """Passed to every hook callback. ``signal`` is set if the CLI withdraws the call."""

    signal: anyio.Event = field(default_factory=anyio.Event, compare=False, repr=False)


HookCallback = Callable[
    [Mapping[str, Any], "str | None", HookContext], Awaitable[Mapping[str, Any]]
]
"""``async def hook(input, tool_use_id, context) -> output``.

The output uses the wire's camelCase keys; write ``continue_``/``async_`` for the two
Python keywords, they are renamed on the way out.
"""


@dataclass(frozen=True)
class HookMatcher:
    """Which callbacks run for an event: ``matcher`` is a tool-name pattern such as
    ``"Bash"`` or ``"Write|Edit"`` (``None`` matches everything); ``timeout`` is in seconds.
    """

    matcher: str | None = None
    hooks: Sequence[HookCallback] = ()
    timeout: float | None = None
