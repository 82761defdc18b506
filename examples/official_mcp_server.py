"""A server written with the official ``mcp`` package, hosted in-process by ccwire.

Run it:  python examples/official_mcp_server.py

`McpBridge` gives an ``MCPServer`` (``FastMCP`` in mcp 1.x) or a low-level ``Server``
the interface of a ccwire server: Claude calls its tools in this process, with no
subprocess of its own.  The same object can be served to any MCP client with
``ccwire serve examples.official_mcp_server:weather`` or loaded with
``ccwire run --tools examples.official_mcp_server:weather``.

Offline by default: a local ScriptedModel plays Claude, so no API key is needed and
the real Claude Code CLI still does everything else. With ANTHROPIC_API_KEY set, the
real model answers instead.  Needs ``pip install 'ccwire[mcp]'`` (mcp 1.20 or newer,
1.x or 2.x).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

import anyio

try:
    from mcp.server.mcpserver import MCPServer  # mcp 2.x
except ImportError:  # mcp 1.x calls it FastMCP
    try:
        from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[attr-defined,no-redef]
    except ImportError:  # not installed: say how, not two tracebacks
        raise SystemExit(
            "this example needs the official mcp package: pip install 'ccwire[mcp]'"
        ) from None

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    McpBridge,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ccwire.testing import ScriptedModel, Step, text, tool_use

weather = MCPServer("weather")


@weather.tool()
def forecast(city: str, days: int = 1) -> str:
    """The weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@contextlib.contextmanager
def model_env(*steps: Step) -> Iterator[dict[str, str]]:
    """The real model when ANTHROPIC_API_KEY is set, else a local scripted one."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        yield {}
        return
    with tempfile.TemporaryDirectory() as home, ScriptedModel(*steps) as model:
        print("[offline: scripted model plays Claude; set ANTHROPIC_API_KEY for the real one]")
        yield model.env(home)


async def main() -> None:
    script: list[Step] = [
        tool_use("mcp__weather__forecast", {"city": "Oslo", "days": 2}),
        text("Oslo will be sunny for the next two days."),
    ]
    with model_env(*script) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"weather": McpBridge(weather, timeout=30).config()},
            allowed_tools=["mcp__weather__forecast"],
            max_turns=2,
            env=env,
        )
        async with ClaudeSDKClient(options) as client:
            await client.query("What is the weather in Oslo for two days?")
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
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
                    print(f"result       {message.subtype}, {message.num_turns} turns")


if __name__ == "__main__":
    anyio.run(main)
