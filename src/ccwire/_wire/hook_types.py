"""Types of hook callbacks as users register them (``ClaudeAgentOptions.hooks``)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio

# the hook inputs and outputs load with the first hook (or get_type_hints()): fast import
from .. import _wire

__all__ = [
    "FAIL_CLOSED_EVENTS",
    "LEGACY_TOOL_NAMES",
    "HookCallback",
    "HookContext",
    "HookEvent",
    "HookMatcher",
    "matcher_matches",
    "parse_hook_input",
]

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
    "Interrupt",
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
    "PreSkillShellCommand",
]
"""Every hook event, in the TypeScript SDK's order: those CLI 2.1.330 supports, and
``Interrupt`` (the TypeScript SDK 0.3.337's) and ``PreSkillShellCommand`` (CLI 2.1.332 and
later), which 2.1.330 accepts the registration of and never fires."""


@dataclass(frozen=True, eq=False)
class HookContext(dict[str, Any]):
    """Passed to every hook callback. ``signal`` is set if the CLI withdraws the call.

    Also a dict holding ``"signal"``, as the reference SDK's `HookContext` (a
    `TypedDict`) is, so ``context["signal"]`` and ``context.get("signal")`` work in
    hooks written for it.
    """

    # a lambda: touching anyio.Event at import would load anyio's synchronization module
    signal: anyio.Event = field(default_factory=lambda: anyio.Event(), repr=False)

    def __post_init__(self) -> None:
        dict.__setitem__(self, "signal", self.signal)


HookCallback = Callable[
    [Any, "str | None", HookContext], Awaitable["_wire.hook_output.HookCallbackResult"]
]
"""``async def hook(input, tool_use_id, context) -> output``.

``input`` is the typed input of the event (a `BaseHookInput` subclass
such as `PreToolUseHookInput`), which is also a dict of the wire input,
so callbacks written for plain dicts keep working. The output is a
`HookOutput`, an `AsyncHookOutput`, an event-specific
output such as `PreToolUseOutput`, ``None``, or the reference SDK's dict
form (camelCase keys; ``continue_``/``async_`` for the two Python keywords).
"""

# Events whose matchers the CLI also splits on commas (and allows spaces and hyphens in).
_WIDE_LIST_EVENTS = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "PermissionDenied",
        "UserPromptExpansion",
        "SessionStart",
        "SessionEnd",
        "Setup",
        "PreCompact",
        "PostCompact",
        "PreModelSwitch",
        "PostModelSwitch",
        "Notification",
        "SubagentStart",
        "SubagentStop",
        "Elicitation",
        "ElicitationResult",
        "ConfigChange",
        "InstructionsLoaded",
        "DirectoryAdded",
    }
)
# compiled on first use (re's cache), not when ccwire is imported
_NAME_LIST = r"[a-zA-Z0-9_|]+"
_WIDE_NAME_LIST = r"[a-zA-Z0-9_|, -]+"

LEGACY_TOOL_NAMES: Mapping[str, str] = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
    "ListPeers": "ListAgents",
    "Brief": "SendUserMessage",
    "ListMcpResources": "ListMcpResourcesTool",
    "ReadMcpResource": "ReadMcpResourceTool",
    "ReadMcpResourceDir": "ReadMcpResourceDirTool",
    "ProposeGoal": "SetGoal",
}
"""Old tool names the CLI (2.1.330) still accepts in matchers, and the tool each now names."""


def _canonical(name: str) -> str:
    return LEGACY_TOOL_NAMES.get(name, name)


def _legacy_names(name: str) -> list[str]:
    return [old for old, new in LEGACY_TOOL_NAMES.items() if new == name]


def matcher_matches(pattern: str | None, value: str | None, *, event: str | None = None) -> bool:
    """Whether the CLI runs a matcher ``pattern`` for an event whose matcher value is
    ``value`` (see `BaseHookInput.matcher_value`). The CLI does this
    filtering itself; this mirrors its rule (CLI 2.1.330) for tests and tooling:

    * ``None``, ``""`` and ``"*"`` match everything, as does any pattern on events
      without a matcher value (Stop, UserPromptSubmit, ...);
    * a pattern made only of letters, digits, ``_`` and ``|`` (for most events also
      ``,``, space and ``-``) is a list of exact names: ``"Write|Edit"``; a legacy tool
      name in it names the renamed tool (``"Task"`` matches ``Agent``, ``"KillShell"``
      ``TaskStop``: `LEGACY_TOOL_NAMES`);
    * anything else is a regular expression searched in the value: ``"mcp__calc__.*"``
      (an invalid one matches nothing); it also matches a tool whose legacy name it
      matches (``"^Task$"`` matches ``Agent``).
    """
    if not pattern or pattern == "*" or value is None:
        return True
    wide = event in _WIDE_LIST_EVENTS
    if re.fullmatch(_WIDE_NAME_LIST if wide else _NAME_LIST, pattern):
        names = (n.strip() for n in re.split(r"[|,]" if wide else r"\|", pattern))
        return value in {_canonical(n) for n in names if n}
    try:
        compiled = re.compile(pattern)
    except re.error:
        return False
    return any(compiled.search(v) is not None for v in (value, *_legacy_names(value)))


FAIL_CLOSED_EVENTS: Final[frozenset[str]] = frozenset(
    {"PreToolUse", "PermissionRequest", "UserPromptSubmit", "PreSkillShellCommand"}
)
"""Hook events whose failing callbacks deny or block by default (see `HookMatcher`)."""


@dataclass
class HookMatcher:
    """Which callbacks run for an event.

    ``matcher`` selects by the event's matcher value, which is the tool name for tool
    events (``"Bash"``, ``"Write|Edit"``, ``"mcp__calc__.*"``); ``None`` matches
    everything. The CLI applies it (rule: `matcher_matches()`). ``timeout`` is in
    seconds, a positive number (default 60): the CLI withdraws a call still running
    then, which cancels the callback (its ``signal`` set) and counts as its failure.
    ``on_failure`` says what a callback that fails (raises, times out, or returns
    something that is not a hook output) does to the guarded action:

    * ``None`` (default): fail closed for the events that guard an action,
      `FAIL_CLOSED_EVENTS` (``PreToolUse``, ``PermissionRequest``,
      ``UserPromptSubmit``): ccwire answers the CLI with a deny (``PreToolUse``,
      ``PermissionRequest``) or a block (``UserPromptSubmit``) whose reason names the
      failure, on every CLI version. Other events fail open (the CLI goes on).
    * ``"continue"``: fail open: the CLI gets an error answer and goes on as if the
      callback had said nothing (the tool runs).
    * ``"block"``: the CLI gets an error answer and blocks the action itself; ccwire
      refuses to connect to a CLI that cannot honour it.

    The failure is reported to ``on_callback_error`` and logged in every case.
    """

    matcher: str | None = None
    hooks: Sequence[HookCallback] = ()
    timeout: float | None = None
    on_failure: Literal["continue", "block"] | None = None

    def matches(self, hook_input: Mapping[str, Any]) -> bool:
        """Whether the CLI would run this matcher's hooks for ``hook_input`` (a typed
        input or the wire dict)."""
        # here, not at the top: the hook input classes load with the first use of a hook
        from .hook_input import BaseHookInput

        typed = hook_input if isinstance(hook_input, BaseHookInput) else None
        if typed is None:
            typed = parse_hook_input(hook_input)
        return matcher_matches(self.matcher, typed.matcher_value, event=typed.hook_event_name)


def parse_hook_input(data: Mapping[str, Any]) -> _wire.hook_input.BaseHookInput:
    """Build the typed input of a hook from its wire dict.

    The class is chosen by ``hook_event_name``; an unknown event gives a
    `BaseHookInput`. Useful in tests, to build the input a hook would receive.

    Args:
        data: The ``input`` of a ``hook_callback`` request, as the CLI sends it.

    Returns:
        The typed input. Missing or unexpected fields never raise.
    """
    from .codec_callbacks import decode_hook_input  # here: the hook input classes load now

    return decode_hook_input(data)
