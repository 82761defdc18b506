"""Types of the permission callback (``can_use_tool``): context, results and updates."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, Union

import anyio

from .._core.public import publish_module

if TYPE_CHECKING:
    from dataclasses import dataclass
else:  # the same dataclasses, defined without compiling (import time)
    from .._core.records import dataclass

__all__ = [
    "CanUseTool",
    "PermissionBehavior",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "PermissionUpdateDestination",
    "ToolPermissionContext",
]

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
"""How the CLI decides on tool use; see the protocol reference, section 5.3."""

PermissionBehavior = Literal["allow", "deny", "ask"]
"""What a permission rule does with a matching tool call: allow it, deny it, or ask."""

PermissionUpdateDestination = Literal[
    "userSettings", "projectSettings", "localSettings", "session", "cliArg"
]
"""Where a `PermissionUpdate` is saved: one of the settings files (user, project,
local), only the current session, or as if given on the CLI's command line."""


@dataclass(frozen=True)
class PermissionRuleValue:
    """One permission rule: a tool name and optional rule content (``Bash(npm test:*)``)."""

    tool_name: str
    rule_content: str | None = None


@dataclass(frozen=True)
class PermissionUpdate:
    """A change to the permission rules, returned with an allow decision.

    ``type`` selects which other fields matter: ``addRules``/``replaceRules``/``removeRules``
    use ``rules`` and ``behavior``; ``setMode`` uses ``mode``; ``addDirectories`` and
    ``removeDirectories`` use ``directories``. A missing destination is sent as ``session``.
    """

    type: Literal[
        "addRules",
        "replaceRules",
        "removeRules",
        "setMode",
        "addDirectories",
        "removeDirectories",
    ]
    rules: tuple[PermissionRuleValue, ...] | None = None
    behavior: PermissionBehavior | None = None
    mode: PermissionMode | None = None
    directories: tuple[str, ...] | None = None
    destination: PermissionUpdateDestination | None = None


@dataclass(frozen=True)
class ToolPermissionContext:
    """What the CLI told us about a permission request, besides tool name and input.

    ``signal`` is set when the CLI withdraws the request (for example after an
    interrupt); a callback that waits on something slow can watch it. ``suggestions``
    are the CLI's proposed rule updates, ready to return in
    `PermissionResultAllow.updated_permissions`. ``raw`` holds the full request.
    """

    tool_use_id: str | None = None
    suggestions: tuple[PermissionUpdate, ...] = ()
    signal: anyio.Event = field(default_factory=anyio.Event, compare=False, repr=False)
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class PermissionResultAllow:
    """Allow the tool call, optionally with rewritten input and rule updates."""

    updated_input: Mapping[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None
    behavior: Literal["allow"] = "allow"


@dataclass(frozen=True)
class PermissionResultDeny:
    """Deny the tool call; the model sees ``message``. ``interrupt=True`` also ends the turn."""

    message: str = ""
    interrupt: bool = False
    behavior: Literal["deny"] = "deny"


PermissionResult = Union[PermissionResultAllow, PermissionResultDeny]
"""What a ``can_use_tool`` callback returns: `PermissionResultAllow` or
`PermissionResultDeny`."""

CanUseTool = Callable[[str, dict[str, Any], ToolPermissionContext], Awaitable[PermissionResult]]
"""``async def can_use_tool(tool_name, tool_input, context) -> PermissionResult``."""


publish_module(__name__)
