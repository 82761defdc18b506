"""`create_sdk_mcp_server()`: an in-process MCP server, as an ``mcp_servers`` entry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .config import McpSdkServerConfig
from .server import SdkMcpServer

if TYPE_CHECKING:
    from .prompts import SdkMcpPrompt
    from .resources import SdkMcpResource
    from .tools import SdkMcpTool

__all__ = ["create_sdk_mcp_server"]


def create_sdk_mcp_server(
    name: str,
    version: str = "1.0.0",
    tools: Sequence[SdkMcpTool[Any]] | None = None,
    *,
    resources: Sequence[SdkMcpResource] | None = None,
    prompts: Sequence[SdkMcpPrompt] | None = None,
    instructions: str | None = None,
    default_timeout: float | None = None,
    max_concurrency: int | None = None,
    page_size: int = 100,
) -> McpSdkServerConfig:
    """Make an in-process MCP server config for ``ClaudeAgentOptions.mcp_servers``.

    Returns ``{"type": "sdk", "name": name, "instance": SdkMcpServer(...)}``.  Duplicate
    tool names (resource URIs, prompt names) raise `ToolDefinitionError`.
    ``resources`` and ``prompts`` are made with `resource()` and
    `prompt()`.  ``default_timeout`` (seconds) applies to tools without
    their own ``timeout``; ``max_concurrency`` caps how many tool calls run at once;
    ``page_size`` is how many entries one ``tools/list`` (``resources/list``, ...) page
    holds before the client gets a ``nextCursor``; ``instructions`` is sent to the
    client at ``initialize``.
    """
    server = SdkMcpServer(
        name, version, tools, resources=resources, prompts=prompts, instructions=instructions,
        default_timeout=default_timeout, max_concurrency=max_concurrency, page_size=page_size,
    )  # fmt: skip
    return {"type": "sdk", "name": name, "instance": server}
