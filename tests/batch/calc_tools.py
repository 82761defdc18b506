"""An in-process MCP server named by reference (``tests.batch.calc_tools:server``) in the
batch tests, locally and on Ray workers."""

from __future__ import annotations

import time
from typing import Any

from ccwire import HookMatcher, create_sdk_mcp_server, tool


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    """Return the sum as text."""
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


@tool("nap", "Wait a moment (the wrong way: a blocking call in an async handler)", {})
async def nap(args: dict[str, Any]) -> dict[str, Any]:
    """Block the event loop for 1.5 s."""
    time.sleep(1.5)  # noqa: ASYNC251 - the point of it
    return {"content": [{"type": "text", "text": "rested"}]}


server = create_sdk_mcp_server("calc", tools=[add, nap])

not_a_server = 42


async def _note(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return {}


HOOKS = {"PreToolUse": [HookMatcher(matcher="mcp__calc__add", hooks=[_note])]}


SEEN: list[str] = []  # the tools `_seen` was asked about (in this process)


async def _seen(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    SEEN.append(input_data["tool_name"])
    return {}


SEEING = {"PreToolUse": [HookMatcher(hooks=[_seen])]}
