"""Typed configurations of MCP servers, as accepted in ``ClaudeAgentOptions.mcp_servers``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Literal, TypedDict, Union

if sys.version_info >= (3, 11):  # typing's own: importing typing_extensions costs 2 ms
    from typing import NotRequired
else:
    from typing_extensions import NotRequired

if TYPE_CHECKING:
    from .server import SdkMcpServer


__all__ = [
    "McpHttpServerConfig",
    "McpSSEServerConfig",
    "McpSdkServerConfig",
    "McpServerConfig",
    "McpStdioServerConfig",
]


class McpStdioServerConfig(TypedDict):
    """An external MCP server the CLI starts as a subprocess and talks to over stdio."""

    type: NotRequired[Literal["stdio"]]
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]
    timeout: NotRequired[int]


class McpSSEServerConfig(TypedDict):
    """An external MCP server the CLI reaches over Server-Sent Events."""

    type: Literal["sse"]
    url: str
    headers: NotRequired[dict[str, str]]
    timeout: NotRequired[int]


class McpHttpServerConfig(TypedDict):
    """An external MCP server the CLI reaches over streamable HTTP."""

    type: Literal["http"]
    url: str
    headers: NotRequired[dict[str, str]]
    timeout: NotRequired[int]


class McpSdkServerConfig(TypedDict):
    """An in-process server: ``instance`` serves its MCP traffic inside this Python process.

    Made by `create_sdk_mcp_server()`; the instance is never sent to the CLI.
    """

    type: Literal["sdk"]
    name: str
    instance: SdkMcpServer


McpServerConfig = Union[
    McpStdioServerConfig, McpSSEServerConfig, McpHttpServerConfig, McpSdkServerConfig
]
"""Any of the server configurations ccwire understands."""
