"""What several end-to-end tests use: a greeting tool, one turn of a client, blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from ccwire import ClaudeAgentOptions, ClaudeSDKClient, Message, tool

TIMEOUT = 60

EXT_SERVER = Path(__file__).resolve().parent.parent / "fixtures" / "ext_mcp_server.py"
"""An external (stdio) MCP server."""


@tool("greet", "Greet someone by name", {"name": str})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}


async def one_turn(client: ClaudeSDKClient, prompt: str) -> list[Message]:
    """Send ``prompt``; the messages up to its result."""
    await client.query(prompt)
    return [m async for m in client.receive_response()]


async def run_turn(options: ClaudeAgentOptions, prompt: str) -> list[Message]:
    """Connect a client with ``options`` and send ``prompt``; the messages up to its
    result (within `TIMEOUT` seconds)."""
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            return await one_turn(client, prompt)


def content_blocks(messages: list[Message], kind: type) -> list[Any]:
    """The content blocks of type ``kind`` in ``messages``, in order."""
    out: list[Any] = []
    for m in messages:
        content = getattr(m, "content", None)
        if isinstance(content, list):
            out.extend(b for b in content if isinstance(b, kind))
    return out
