"""Permission decisions for ``ccwire run``: ask at the terminal, or apply the given policy.

`PermissionPrompter` is the run's ``can_use_tool`` callback. The CLI only asks
about tools its own rules (``--allow``, ``--permission-mode``) did not settle. Then:

* a name matching an ``--allow`` pattern (``fnmatch`` style, e.g. ``mcp__calc__*``) is
  allowed;
* a tool the user allowed "always" earlier in this run is allowed again;
* with an ``ask`` function (interactive runs) the user is asked: allow once, allow
  always for this session, or deny, the way the Claude Code terminal asks;
* otherwise the call is denied, with a hint naming the flag that would allow it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._wire.permission_types import (
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
)
from .events import RunTracker
from .render import short_json

__all__ = ["ONCE_ALWAYS_DENY", "Ask", "PermissionPrompter", "parse_answer"]

Ask = Callable[[str], Awaitable[str]]
"""Show a question and return the user's answer (raise ``EOFError`` for no answer)."""

ONCE_ALWAYS_DENY = "[y] yes, once   [a] yes, always for this session   [n] no"

_ANSWERS = {
    "once": ("y", "yes", "1", "o", "once"),
    "always": ("a", "always", "2"),
    "deny": ("n", "no", "3", "d", "deny"),
}
_MAX_TRIES = 3


def parse_answer(answer: str) -> str | None:
    """``"once"``, ``"always"``, ``"deny"``, or None when the answer is not understood."""
    word = answer.strip().lower()
    for choice, words in _ANSWERS.items():
        if word in words:
            return choice
    return None


class PermissionPrompter:
    """The ``can_use_tool`` callback of ``ccwire run`` (see the module docstring).

    Decisions are reported to ``tracker`` as ``permission`` events with ``reason``
    ``allowed`` (an ``--allow`` pattern), ``once``, ``always``, ``remembered``,
    ``denied`` (the user said no), ``no answer`` or ``policy``.
    """

    def __init__(
        self,
        tracker: RunTracker,
        *,
        ask: Ask | None = None,
        allowed: Sequence[str] = (),
    ) -> None:
        self._tracker = tracker
        self._ask = ask
        self._allowed = tuple(allowed)
        self.remembered: set[str] = set()
        """Tool names the user allowed "always" during this run."""

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        """Decide on one tool call."""
        tid = context.tool_use_id
        if any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self._allowed):
            return self._allow(tid, tool_name, "allowed")
        if tool_name in self.remembered:
            return self._allow(tid, tool_name, "remembered")
        if self._ask is None:
            message = (
                f"{tool_name} is not allowed in this run: pass --allow {tool_name} "
                "(or a --permission-mode) to allow it"
            )
            self._tracker.permission_decided(tid, tool_name, "deny", "policy", message)
            return PermissionResultDeny(message=message)
        choice = await self._question(tool_name, tool_input, context)
        if choice == "once":
            return self._allow(tid, tool_name, "once")
        if choice == "always":
            self.remembered.add(tool_name)
            update = PermissionUpdate(
                type="addRules",
                rules=[PermissionRuleValue(tool_name)],
                behavior="allow",
                destination="session",
            )
            self._tracker.permission_decided(tid, tool_name, "allow", "always")
            return PermissionResultAllow(updated_permissions=[update])
        reason = "no answer" if choice is None else "denied"
        message = f"The user denied permission to use {tool_name}."
        self._tracker.permission_decided(tid, tool_name, "deny", reason, message)
        return PermissionResultDeny(message=message)

    def _allow(self, tid: str | None, name: str, reason: str) -> PermissionResultAllow:
        self._tracker.permission_decided(tid, name, "allow", reason)
        return PermissionResultAllow()

    async def _question(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> str | None:
        assert self._ask is not None
        title = context.title or context.description or ""
        question = f"Allow {tool_name} {short_json(tool_input, 300)}?"
        if title:
            question += f"\n  ({title})"
        question += f"\n  {ONCE_ALWAYS_DENY} > "
        for _ in range(_MAX_TRIES):
            try:
                answer = await self._ask(question)
            except EOFError:
                return None
            choice = parse_answer(answer)
            if choice is not None:
                return choice
            question = "  please answer y, a or n > "
        return None
