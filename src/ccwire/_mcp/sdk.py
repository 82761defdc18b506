"""`create_sdk_mcp_server()`: an in-process MCP server, as an ``mcp_servers`` entry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._core.errors import ToolDefinitionError
from .config import McpSdkServerConfig, ToolPermissionPolicy
from .prompts import SdkMcpPrompt
from .resources import SdkMcpResource
from .server import SdkMcpServer
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
    always_load: bool = False,
    timeout_ms: int | None = None,
    tool_policies: Mapping[str, ToolPermissionPolicy] | None = None,
) -> McpSdkServerConfig:
    """Make an in-process MCP server config for ``ClaudeAgentOptions.mcp_servers``.

    Returns ``{"type": "sdk", "name": name, "instance": SdkMcpServer(...)}``.  A tool
    whose name an earlier one in ``tools`` has replaces it, as in ``claude-agent-sdk``
    (whose calls run the last of them); duplicate resource URIs and prompt names raise
    `ToolDefinitionError`, and so does `SdkMcpServer.add_tool()` for a name in use.
    ``resources`` and ``prompts`` are made with `resource()` and
    `prompt()`.  ``default_timeout`` (seconds) applies to tools without
    their own ``timeout``; ``max_concurrency`` caps how many tool calls run at once;
    ``page_size`` is how many entries one ``tools/list`` (``resources/list``, ...) page
    holds before the client gets a ``nextCursor``; ``instructions`` is sent to the
    client at ``initialize``.

    What the TypeScript SDK's ``createSdkMcpServer`` also takes: ``always_load=True``
    lists every tool as never deferred behind tool search (a tool's own ``_meta``
    wins); ``timeout_ms`` is the CLI's own limit on each call of the server's tools
    (milliseconds; below 1000 it is ignored), the config's ``timeout``; and
    ``tool_policies`` maps tool names to a permission policy (``"always_ask"``: the CLI
    asks ``can_use_tool`` before each call, even where ``allowed_tools`` allows it;
    ``"always_deny"``: calls are denied), the config's ``tools``. Those two reach the CLI
    in ``initialize`` (``sdkMcpServerConfigs``) and with each ``mcp_set_servers``.

    Example:
        ```python
        server = create_sdk_mcp_server(
            "ops",
            tools=[restart, status],
            timeout_ms=30_000,
            tool_policies={"restart": "always_ask"},
        )
        ```
    """
    _check_tools_list(tools)
    by_name = {t.name if isinstance(t, SdkMcpTool) else id(t): t for t in tools or ()}
    server = SdkMcpServer(
        name, version, by_name.values(), resources=resources, prompts=prompts,
        instructions=instructions, default_timeout=default_timeout,
        max_concurrency=max_concurrency, page_size=page_size, always_load=always_load,
    )  # fmt: skip
    config: McpSdkServerConfig = {"type": "sdk", "name": name, "instance": server}
    if timeout_ms is not None:
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
            raise ToolDefinitionError(f"timeout_ms must be a positive integer, got {timeout_ms!r}")
        config["timeout"] = timeout_ms
    if tool_policies:
        unknown = sorted(set(tool_policies) - set(server.tools))
        if unknown:
            raise ToolDefinitionError(f"tool_policies names tools {name!r} lacks: {unknown}")
        config["tools"] = [
            {"name": tool, "permission_policy": policy} for tool, policy in tool_policies.items()
        ]
    return config


def _check_tools_list(tools: object) -> None:
    """Refuse one tool, a dict or a str where the list of tools goes, naming the fix (one
    tool failed with "'SdkMcpTool' object is not iterable", a dict named its first key)."""
    if isinstance(tools, SdkMcpTool):
        raise ToolDefinitionError(f"tools must be a list of tools: write tools=[{_name(tools)}]")
    if isinstance(tools, (Mapping, str, bytes)) or not (
        tools is None or isinstance(tools, Iterable)
    ):
        values = tools.values() if isinstance(tools, Mapping) else ()
        listed = ", ".join(_name(t) for t in values) or "..."
        raise ToolDefinitionError(
            f"tools must be a list of tools made with @tool, not a {type(tools).__name__}: "
            f"write tools=[{listed}]"
        )


def _name(tool: object) -> str:
    """How the caller's code most likely spells ``tool``: its handler's name."""
    handler = getattr(tool, "handler", tool)
    name = getattr(handler, "__name__", None)
    return name if isinstance(name, str) else "..."
