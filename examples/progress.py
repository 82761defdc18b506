"""Progress: a long-running tool reports how far it got, while it runs.

Run it:  python examples/progress.py

A handler that takes a ``ToolContext`` (any parameter annotated ``ToolContext``, or
named ``ctx``) can call ``ctx.report_progress(done, total, message)`` and ``ctx.log``;
each call is delivered to the CLI as an MCP notification (``notifications/progress``
with the call's ``progressToken``) and returns once the CLI has acknowledged it.
Offline by default; with ANTHROPIC_API_KEY the real model answers.
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
    ToolContext,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ScriptedModel, Step, text, tool_use

DOCUMENTS = ["intro.md", "install.md", "usage.md", "faq.md"]


@tool("index_docs", "Index the documentation files", {})
async def index_docs(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    total = len(DOCUMENTS)
    for done, name in enumerate(DOCUMENTS, start=1):
        await anyio.sleep(0.05)  # the real work would happen here
        delivered = await ctx.report_progress(done, total, f"indexed {name}")
        seen = "acknowledged by the CLI" if delivered else "dropped"
        print(f"progress     {done}/{total} indexed {name} (token {ctx.progress_token}, {seen})")
    await ctx.log("info", f"indexed {total} documents")
    return {"content": [{"type": "text", "text": f"indexed {total} documents"}]}


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
    server = create_sdk_mcp_server("docs", tools=[index_docs])
    script: list[Step] = [
        tool_use("mcp__docs__index_docs", {}),
        text("All 4 documents are indexed."),
    ]
    with model_env(*script) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"docs": server},
            allowed_tools=["mcp__docs__index_docs"],
            max_turns=3,
            env=env,
        )
        async for message in query(prompt="Index the docs.", options=options):
            if isinstance(message, ResultMessage):
                print(f"assistant    {message.result}")


if __name__ == "__main__":
    anyio.run(main)
