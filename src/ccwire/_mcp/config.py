"""Typed configurations of MCP servers, as accepted in ``ClaudeAgentOptions.mcp_servers``.

No ``from __future__ import annotations`` here on purpose: `TypedDict` needs to see
``NotRequired`` at class creation to tell optional keys from required ones.
"""

import sys
from typing import Literal, Union

if sys.version_info >= (3, 11):  # typing's own: importing typing_extensions costs 2 ms
    from typing import NotRequired, TypedDict
else:  # 3.10's TypedDict does not see NotRequired
    from typing_extensions import NotRequired, TypedDict

from .. import _mcp  # its server module: loaded by the first get_type_hints()

__all__ = [
    "McpHttpServerConfig",
    "McpSSEServerConfig",
    "McpSdkServerConfig",
    "McpServerConfig",
    "McpServerToolPolicy",
    "McpStdioServerConfig",
    "ToolPermissionPolicy",
]

ToolPermissionPolicy = Literal["always_allow", "always_ask", "always_deny"]
"""A host's permission policy for one MCP tool (on in-process servers only
``always_ask`` and ``always_deny`` take effect)."""


class McpServerToolPolicy(TypedDict):
    """The permission policy of one tool of an MCP server (a config's ``tools``).

    ``always_ask``: the CLI asks (``can_use_tool``) before each call, even where
    ``allowed_tools`` or a rule allows the tool; ``always_deny``: calls are denied.
    ``org_max_permission`` is an organization's ceiling (``allow``, ``ask``, ``blocked``).
    """

    name: str
    permission_policy: NotRequired[ToolPermissionPolicy]
    org_max_permission: NotRequired[Literal["allow", "ask", "blocked"]]


class McpStdioServerConfig(TypedDict):
    """An external MCP server the CLI starts as a subprocess and talks to over stdio."""

    type: NotRequired[Literal["stdio"]]
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]
    timeout: NotRequired[int]
    alwaysLoad: NotRequired[bool]


class McpSSEServerConfig(TypedDict):
    """An external MCP server the CLI reaches over Server-Sent Events."""

    type: Literal["sse"]
    url: str
    headers: NotRequired[dict[str, str]]
    timeout: NotRequired[int]
    tools: NotRequired[list[McpServerToolPolicy]]
    alwaysLoad: NotRequired[bool]


class McpHttpServerConfig(TypedDict):
    """An external MCP server the CLI reaches over streamable HTTP."""

    type: Literal["http"]
    url: str
    headers: NotRequired[dict[str, str]]
    timeout: NotRequired[int]
    tools: NotRequired[list[McpServerToolPolicy]]
    alwaysLoad: NotRequired[bool]


class McpSdkServerConfig(TypedDict):
    """An in-process server: ``instance`` serves its MCP traffic inside this Python process.

    Made by `create_sdk_mcp_server()`; the instance is never sent to the CLI.
    ``timeout`` (milliseconds, at least 1000) bounds each call on the CLI's side;
    ``tools`` holds per-tool permission policies (`McpServerToolPolicy`).
    """

    type: Literal["sdk"]
    name: str
    instance: "_mcp.server.SdkMcpServer"
    timeout: NotRequired[int]
    tools: NotRequired[list[McpServerToolPolicy]]


McpServerConfig = Union[
    McpStdioServerConfig, McpSSEServerConfig, McpHttpServerConfig, McpSdkServerConfig
]
"""Any of the server configurations ccwire understands."""
