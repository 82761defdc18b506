"""The dict shapes ``claude-agent-sdk`` gives the answers of `get_mcp_status()` and
`get_context_usage()`.

`get_mcp_status()` returns the CLI's answer as a `McpStatusResponse` dict, with the
wire's own (camelCase) keys, exactly as ``claude-agent-sdk`` does. ccwire's typed
forms of the same answers are `mcp_status()` (a list of `McpServerState`) and
`get_context_usage()` (a `ContextUsage`, which also reads like a
`ContextUsageResponse` dict).
"""

# No `from __future__ import annotations`: TypedDict must see NotRequired at class
# creation to tell optional keys from required ones.
from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

from .._mcp.config import McpHttpServerConfig, McpSSEServerConfig, McpStdioServerConfig

__all__ = [
    "ContextUsageCategory",
    "ContextUsageResponse",
    "McpClaudeAIProxyServerConfig",
    "McpSdkServerConfigStatus",
    "McpServerConnectionStatus",
    "McpServerInfo",
    "McpServerStatus",
    "McpServerStatusConfig",
    "McpStatusResponse",
    "McpToolAnnotations",
    "McpToolInfo",
]


class McpSdkServerConfigStatus(TypedDict):
    """An in-process server's configuration as a status answer shows it."""

    type: Literal["sdk"]
    name: str


class McpClaudeAIProxyServerConfig(TypedDict):
    """A server proxied through claude.ai, as a status answer shows it."""

    type: Literal["claudeai-proxy"]
    url: str
    id: str
    timeout: NotRequired[int]
    """The limit on each tool call, in milliseconds."""


McpServerStatusConfig = (
    McpStdioServerConfig
    | McpSSEServerConfig
    | McpHttpServerConfig
    | McpSdkServerConfigStatus
    | McpClaudeAIProxyServerConfig
)
"""The ``config`` of a `McpServerStatus`."""


class McpToolAnnotations(TypedDict, total=False):
    """A tool's annotations in a status answer (camelCase)."""

    readOnly: bool
    destructive: bool
    openWorld: bool


class McpToolInfo(TypedDict):
    """A tool of an MCP server in a status answer."""

    name: str
    description: NotRequired[str]
    annotations: NotRequired[McpToolAnnotations]
    _meta: NotRequired[dict[str, Any]]
    """The MCP Apps members of the tool's ``_meta`` (``ui``...), from CLIs that pass them."""


class McpServerInfo(TypedDict):
    """What a connected server said about itself in the MCP handshake."""

    name: str
    version: str


McpServerConnectionStatus = Literal["connected", "failed", "needs-auth", "pending", "disabled"]
"""The connection state of an MCP server."""


class McpServerStatus(TypedDict):
    """One MCP server in `McpStatusResponse` (the CLI's keys, unchanged).

    Attributes:
        name: The server's name.
        status: Its connection state (`McpServerConnectionStatus`).
        serverInfo: Its handshake answer, when connected.
        error: What failed, when ``status`` is ``failed``.
        config: Its configuration.
        scope: Where it was configured (``project``, ``user``, ``dynamic``, ...).
        source: Where its definition came from (``sdk``, ``plugin``, or a scope).
        tools: Its tools, when connected.
    """

    name: str
    status: McpServerConnectionStatus
    serverInfo: NotRequired[McpServerInfo]
    error: NotRequired[str]
    config: NotRequired[McpServerStatusConfig]
    scope: NotRequired[str]
    source: NotRequired[str]
    tools: NotRequired[list[McpToolInfo]]


class McpStatusResponse(TypedDict):
    """The answer of `get_mcp_status()`: ``{"mcpServers": [...]}``."""

    mcpServers: list[McpServerStatus]


class ContextUsageCategory(TypedDict):
    """One category of `ContextUsageResponse` (system prompt, tools, messages...)."""

    name: str
    tokens: int
    color: str
    isDeferred: NotRequired[bool]


class ContextUsageResponse(TypedDict):
    """The CLI's ``get_context_usage`` answer, as a dict (the ``/context`` view)."""

    categories: list[ContextUsageCategory]
    totalTokens: int
    maxTokens: int
    rawMaxTokens: int
    percentage: float
    model: str
    isAutoCompactEnabled: bool
    memoryFiles: list[dict[str, Any]]
    mcpTools: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    gridRows: list[list[dict[str, Any]]]
    autoCompactThreshold: NotRequired[int]
    deferredBuiltinTools: NotRequired[list[dict[str, Any]]]
    systemTools: NotRequired[list[dict[str, Any]]]
    systemPromptSections: NotRequired[list[dict[str, Any]]]
    slashCommands: NotRequired[dict[str, Any]]
    skills: NotRequired[dict[str, Any]]
    messageBreakdown: NotRequired[dict[str, Any]]
    apiUsage: NotRequired[dict[str, Any] | None]
