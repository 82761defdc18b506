"""Live tool sets: add (or remove) tools while the conversation runs.

Run it:  python examples/live_tool_sets.py

``SdkMcpServer.add_tool`` / ``remove_tool`` may be called at any time, even from
inside a tool handler. ccwire tells the CLI (``notifications/tools/list_changed``),
the CLI lists the tools again, and the model can call the new tool in the same turn
(Claude Code 2.1.330; older CLIs ignore the notification). Here a ``unlock`` tool adds
a ``report`` tool. Offline by default; with ANTHROPIC_API_KEY the real model answers.
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
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ModelRequest, ScriptedModel, Step, StepResult, text, tool_use


@tool("report", "Produce the sales report (available once unlocked)", {})
async def report(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "Q3 sales: 1,204 units"}]}


shop = create_sdk_mcp_server("shop", tools=[])


@tool("unlock", "Unlock the reporting tools", {})
async def unlock(args: dict[str, Any]) -> dict[str, Any]:
    """Add the report tool and tell the CLI at once (it then lists the tools again)."""
    server = shop["instance"]
    if "report" in server.tools:
        return {"content": [{"type": "text", "text": "reporting is already unlocked"}]}
    server.add_tool(report)  # announced to the CLI in the background...
    await server.notify_tools_changed()  # ...or at once, before this call returns
    return {"content": [{"type": "text", "text": "reporting unlocked: the report tool is ready"}]}


shop["instance"].add_tool(unlock)


def scripted_brain(request: ModelRequest) -> StepResult:
    """What the scripted model does each turn: unlock, then use the new tool once the CLI
    offers it (its re-listing runs alongside the turn, so it may take one more step)."""
    offered = [name for name in request.tool_names if name.startswith("mcp__shop__")]
    print(f"model sees   {offered}")
    results = [r.content for r in request.tool_results()]
    if any(r.startswith("Q3 sales") for r in results):
        return text(f"Unlocked reporting and fetched the report: {results[-1]}.")
    if "mcp__shop__report" in offered:
        return tool_use("mcp__shop__report", {})
    return tool_use("mcp__shop__unlock", {})


@contextlib.contextmanager
def model_env(brain: Step) -> Iterator[dict[str, str]]:
    """The real model when ANTHROPIC_API_KEY is set, else a local scripted one."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        yield {}
        return
    with tempfile.TemporaryDirectory() as home, ScriptedModel(default=brain) as model:
        print("[offline: a scripted model plays Claude; set ANTHROPIC_API_KEY for the real one]")
        yield model.env(home)


async def main() -> None:
    print(f"tools before {sorted(shop['instance'].tools)}")
    with model_env(scripted_brain) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"shop": shop},
            allowed_tools=["mcp__shop__unlock", "mcp__shop__report"],
            max_turns=8,
            env=env,
        )
        prompt = "Unlock reporting, then get me the sales report."
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                for block in message.content:
                    if isinstance(block, ToolResultBlock) and isinstance(block.content, list):
                        print(f"tool result  {block.content[0].get('text')}")
            elif isinstance(message, ResultMessage):
                print(f"assistant    {message.result}")
    print(f"tools after  {sorted(shop['instance'].tools)}")


if __name__ == "__main__":
    anyio.run(main)
