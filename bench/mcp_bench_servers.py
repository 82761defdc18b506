"""The same two tools on a ccwire server and on the official SDK's own server (MCPServer),
for ``bench/mcp_bench.py``: ``python bench/mcp_bench_servers.py official`` runs the
official one over stdio; ``ccwire serve mcp_bench_servers:ccwire_server`` the other."""

from __future__ import annotations

import sys
from typing import Any

from ccwire import create_sdk_mcp_server, tool


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> str:
    return str(args["a"] + args["b"])


@tool("echo", "Echo a text", {"text": str})
async def echo(args: dict[str, Any]) -> str:
    return args["text"]


ccwire_server = create_sdk_mcp_server("bench", tools=[add, echo])


def official_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool(description="Add two numbers")
    async def add(a: float, b: float) -> str:
        return str(a + b)

    @server.tool(description="Echo a text")
    async def echo(text: str) -> str:
        return text

    return server


if __name__ == "__main__" and sys.argv[1:] == ["official"]:
    official_server().run()
