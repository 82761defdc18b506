"""`CanUseToolShadowedWarning`: ``can_use_tool`` is set, but some calls never reach it.

The CLI approves a tool call before asking the SDK when ``allowed_tools`` allows the
whole tool (``"Read"``, ``"Read()"``, ``"Read(*)"``) or when the permission mode is
``bypassPermissions``; ``can_use_tool`` is then never called for it. Connecting warns
about that once per distinct message, as ``claude-agent-sdk`` does.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from .._core.errors import CcwireError
from .options import ClaudeAgentOptions

__all__ = ["CanUseToolShadowedWarning", "shadowed_message", "warn_if_can_use_tool_shadowed"]


class CanUseToolShadowedWarning(CcwireError, UserWarning):
    """``can_use_tool`` is set, but some tool calls are approved before it runs.

    A `UserWarning` (and, like every ccwire exception class, a `CcwireError`).

    Silence it with
    ``warnings.filterwarnings("ignore", category=CanUseToolShadowedWarning)``.
    """


def _whole_tool(entry: str) -> str | None:
    """The tool an ``allowed_tools`` entry allows outright, else None."""
    if not entry.strip():
        return None
    start = entry.find("(")
    if start == -1:
        return entry
    if start == 0 or not entry.endswith(")"):
        return None
    return entry[:start] if entry[start + 1 : -1] in ("", "*") else None


def shadowed_message(permission_mode: str | None, allowed_tools: Iterable[str]) -> str | None:
    """The warning for these settings, or None when ``can_use_tool`` sees every call.

    Args:
        permission_mode: The session's permission mode.
        allowed_tools: The ``allowed_tools`` entries in force.

    Returns:
        The message, or ``None``.
    """
    if permission_mode == "bypassPermissions":
        return (
            "can_use_tool will not be invoked: permission_mode 'bypassPermissions' "
            "approves every tool call (except explicit deny rules) before the callback "
            "is asked. To gate every tool call, use a PreToolUse hook instead."
        )
    shadowed = list(dict.fromkeys(t for e in allowed_tools if (t := _whole_tool(e)) is not None))
    if not shadowed:
        return None
    return (
        f"can_use_tool will not be invoked for: {', '.join(shadowed)}. An allowed_tools "
        "entry that allows a whole tool approves it before the callback is asked. To "
        "gate every tool call, use a PreToolUse hook, or narrow the entry."
    )


def warn_if_can_use_tool_shadowed(options: ClaudeAgentOptions) -> None:
    """Warn (`CanUseToolShadowedWarning`) when ``options.can_use_tool`` is shadowed.

    Args:
        options: The session's options.
    """
    if options.can_use_tool is None:
        return
    allowed = list(options.allowed_tools)
    if options.skills == "all" and "Skill" not in allowed:
        allowed.append("Skill")
    message = shadowed_message(options.permission_mode, allowed)
    if message is not None:
        warnings.warn(message, CanUseToolShadowedWarning, stacklevel=3)
