"""Sessions with events: watch a session's state, its tool calls and their durations.

Run it:  python examples/sessions_with_events.py

``ClaudeCodeAgent`` starts sessions; a ``Session`` has an explicit state
(``starting``, ``running``, ``waiting_tool_call``, ``waiting_permission``, ``paused``,
``completed``, ``failed``, ``cancelled``) and publishes events. ``session.on(name, cb)``
calls ``cb`` for each event of that name: ``state_change``, ``tool_call``,
``tool_result``, ``permission_request``, ``message``, ``complete``, ``error``.
``send`` continues the conversation. Offline by default; with ANTHROPIC_API_KEY the
real model answers.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import anyio

from ccwire import (
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    SessionCompleted,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import ScriptedModel, Step, text, tool_use


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


@tool("multiply", "Multiply two numbers", {"a": float, "b": float})
async def multiply(args: dict[str, Any]) -> dict[str, Any]:
    await anyio.sleep(0.2)  # a slower tool, to see a duration
    return {"content": [{"type": "text", "text": f"{args['a'] * args['b']:g}"}]}


def on_state(event: StateChanged) -> None:
    print(f"state        {event.from_state} -> {event.to_state}")


def on_tool_call(event: ToolCallStarted) -> None:
    print(f"tool call    {event.tool_name} {dict(event.arguments)}")


def on_tool_result(event: ToolCallFinished) -> None:
    print(f"tool result  {event.tool_name} took {event.duration_s * 1000:.0f} ms")


def on_complete(event: SessionCompleted) -> None:
    text = event.result.result if event.result is not None else None
    print(f"complete     {event.info.state}: {text}")


@contextlib.contextmanager
def model_env(*steps: Step) -> Iterator[dict[str, str]]:
    """The real model when ANTHROPIC_API_KEY is set, else a local scripted one."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        yield {}
        return
    with tempfile.TemporaryDirectory() as home, ScriptedModel(*steps) as model:
        print("[offline: a scripted model plays Claude; set ANTHROPIC_API_KEY for the real one]")
        yield model.env(home)


async def main() -> None:
    calc = create_sdk_mcp_server("calc", tools=[add, multiply])
    script: list[Step] = [
        tool_use("mcp__calc__add", {"a": 15, "b": 27}),
        text("15 + 27 = 42."),
        tool_use("mcp__calc__multiply", {"a": 42, "b": 2}),
        text("42 * 2 = 84."),
    ]
    with model_env(*script) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"calc": calc},
            allowed_tools=["mcp__calc__add", "mcp__calc__multiply"],
            max_turns=4,
            env=env,
        )
        async with ClaudeCodeAgent(options, store=False) as agent:
            session = agent.create_session("Calculate 15 + 27")
            session.on("state_change", on_state)
            session.on("tool_call", on_tool_call)
            session.on("tool_result", on_tool_result)
            session.on("complete", on_complete)
            await session.start()
            await session.wait_for_completion(timeout=60)

            await session.send("Now multiply the result by 2")
            info = await session.wait_for_completion(timeout=60)
            await session.close()

    stats = info.stats
    print(
        f"final        {info.state}, {stats.turn_count} turns, {stats.tool_call_count} tool calls"
    )
    for name, tool_stats in sorted(stats.tools.items()):
        print(f"per tool     {name}: {tool_stats.call_count} call(s)")


if __name__ == "__main__":
    anyio.run(main)
