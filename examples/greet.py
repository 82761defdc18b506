"""A Python tool served in-process, called by Claude, with a permission callback.

Run it:  python examples/greet.py

Offline by default: a local ScriptedModel plays Claude, so no API key is needed and
the real Claude Code CLI still does everything else. With ANTHROPIC_API_KEY set, the
real model answers instead.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import anyio

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import ScriptedModel, Step, text, tool_use


@tool("greet", "Greet someone by name", {"name": str})
async def greet_tool(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}! Welcome."}]}


async def can_use_tool(
    name: str, tool_input: dict[str, Any], context: ToolPermissionContext
) -> PermissionResultAllow:
    print(f"permission   allow {name} {tool_input}")
    return PermissionResultAllow()


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
    demo_server = create_sdk_mcp_server("demo_tools", tools=[greet_tool])
    script: list[Step] = [
        tool_use("mcp__demo_tools__greet", {"name": "Alice"}),
        text("I greeted Alice. The tool said: Hello, Alice! Welcome."),
    ]
    with model_env(*script) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"demo_tools": demo_server},
            can_use_tool=can_use_tool,
            max_turns=2,
            env=env,
        )
        async with ClaudeSDKClient(options) as client:
            await client.query("Please greet Alice.")
            async for message in client.receive_response():
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    mine = [t for t in message.data["tools"] if t.startswith("mcp__")]
                    print(f"init         tools from our server: {mine}")
                elif isinstance(message, AssistantMessage):
                    for block in message.content:
                        if isinstance(block, ToolUseBlock):
                            print(f"tool call    {block.name} {block.input}")
                        elif isinstance(block, TextBlock):
                            print(f"assistant    {block.text}")
                elif isinstance(message, UserMessage) and isinstance(message.content, list):
                    for block in message.content:
                        if isinstance(block, ToolResultBlock):
                            print(f"tool result  {block.content}")
                elif isinstance(message, ResultMessage):
                    print(f"result       {message.subtype}, {message.num_turns} turns, "
                          f"${message.total_cost_usd or 0:.4f}")  # fmt: skip


if __name__ == "__main__":
    anyio.run(main)
