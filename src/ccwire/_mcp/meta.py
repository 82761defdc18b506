"""The ``_meta`` keys Claude Code reads on tools: on a tool's definition, as the
TypeScript SDK sets them (``tool(..., {searchHint, alwaysLoad})``,
``createSdkMcpServer({alwaysLoad})``); on a call's result, ``claude/endTurn`` (the
turn ends with the result, no model request after it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["ALWAYS_LOAD", "ends_turn", "tool_meta"]

SEARCH_HINT: Final = "anthropic/searchHint"
"""Words tool search should match the tool by."""

ALWAYS_LOAD: Final = "anthropic/alwaysLoad"
"""Always in the prompt, never deferred behind tool search."""

END_TURN: Final = "claude/endTurn"
"""On a result: it ends the turn (no model request follows). On a definition (ccwire's
``tool(end_turn=True)``): every successful result of the tool gets it."""

END_TURN_HONORS_STOP_HOOKS: Final = "claude/endTurnHonorsStopHooks"
"""With `END_TURN`: the Stop hooks still run, and may keep the turn going."""


def tool_meta(
    meta: Mapping[str, Any] | None,
    *,
    search_hint: str | None = None,
    always_load: bool = False,
    end_turn: bool = False,
    end_turn_honors_stop_hooks: bool = False,
) -> Mapping[str, Any] | None:
    """``meta`` with the keys the options ask for (set first: ``meta``'s own win)."""
    keys: dict[str, Any] = {}
    if search_hint:
        keys[SEARCH_HINT] = search_hint
    if always_load:
        keys[ALWAYS_LOAD] = True
    if end_turn:
        keys[END_TURN] = True
        if end_turn_honors_stop_hooks:
            keys[END_TURN_HONORS_STOP_HOOKS] = True
    if not keys:
        return meta
    return {**keys, **(meta or {})}


def ends_turn(meta: Mapping[str, Any] | None, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the end-turn keys of its tool's definition ``meta`` in its own
    ``_meta``, when the call succeeded (an error result never ends the turn)."""
    if not meta or meta.get(END_TURN) is not True or result.get("isError"):
        return result
    keys = {k: meta[k] for k in (END_TURN, END_TURN_HONORS_STOP_HOOKS) if k in meta}
    own = result.get("_meta")
    return {**result, "_meta": {**keys, **(own if isinstance(own, Mapping) else {})}}
