"""An `SdkMcpServer` seen as a server of the official ``mcp`` package.

claude-agent-sdk's ``create_sdk_mcp_server()`` gives, as the config's ``instance``, a
low-level ``mcp.server.Server``; code written for it serves that object itself:
``server.run(read, write, server.create_initialization_options())`` on memory streams
in its tests, ``StreamableHTTPSessionManager(instance)`` to put the tools behind HTTP
(ag-ui-claude-sdk's loopback endpoint). `official_server()` builds such a ``Server``
for an `SdkMcpServer`: the official package speaks the protocol (initialize, ping, its
transports) and every ``tools/list`` and ``tools/call`` it receives is served by the
`SdkMcpServer`'s own `handle()`, so a tool answers there exactly as it answers the
CLI. Needs the ``mcp`` package (extra ``ccwire[mcp]``), imported on first use.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Hashable, Mapping
from typing import Any, Final, Protocol

from .._core.errors import MissingExtraError

__all__ = ["official_server"]

_IDS: Final = itertools.count(1)


class SdkMcpServer(Protocol):
    """What is used of the `SdkMcpServer` served (its module imports this one)."""

    name: str
    version: str
    instructions: str | None

    async def handle(
        self, message: Mapping[str, Any], *, session_key: Hashable | None = None
    ) -> dict[str, Any] | None:
        """Serve one JSON-RPC message."""


class _Caller:
    """The official server's requests, sent to one `SdkMcpServer` as JSON-RPC."""

    def __init__(self, server: SdkMcpServer) -> None:
        self.server = server
        self.key = object()  # the calls of this view are one session of the server

    async def ask(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(_IDS), "method": method, "params": dict(params)}
        answer = await self.server.handle(message, session_key=self.key)
        if answer is None:  # only a cancelled call has no answer
            raise _mcp_error(-32603, f"{method} was cancelled")
        if "error" in answer:
            error = answer["error"]
            raise _mcp_error(error.get("code", -32603), error.get("message", ""), error.get("data"))
        result: dict[str, Any] = answer["result"]
        return result


def _mcp_error(code: int, message: str, data: Any = None) -> Exception:
    from mcp.shared import exceptions

    if hasattr(exceptions, "MCPError"):  # mcp 2.x
        return exceptions.MCPError(code, message, data)
    return _legacy_error(exceptions, code, message, data)  # pragma: no cover - mcp 1.x


def _legacy_error(
    exceptions: Any, code: int, message: str, data: Any
) -> Exception:  # pragma: no cover - mcp 1.x: McpError wraps an ErrorData
    from mcp.types import ErrorData

    error: Exception = exceptions.McpError(ErrorData(code=code, message=message, data=data))
    return error


def official_server(server: SdkMcpServer) -> Any:
    """A low-level ``mcp.server.Server`` serving ``server``'s tools (see the module).

    Raises:
        MissingExtraError: The ``mcp`` package is not installed.
    """
    try:
        from mcp.server.lowlevel import Server
        from mcp.types import CallToolResult, ListToolsResult
    except ImportError as exc:
        raise MissingExtraError(
            f"SdkMcpServer {server.name!r} as an mcp.server.Server", "the mcp package", "mcp"
        ) from exc
    caller = _Caller(server)

    async def list_page(cursor: str | None) -> Any:
        params = {} if cursor is None else {"cursor": cursor}
        return ListToolsResult.model_validate(await caller.ask("tools/list", params))

    async def call(name: str, arguments: Mapping[str, Any] | None) -> Any:
        params = {"name": name, "arguments": dict(arguments or {})}
        return CallToolResult.model_validate(await caller.ask("tools/call", params))

    if "on_list_tools" not in inspect.signature(Server.__init__).parameters:
        return _legacy_server(Server, server, list_page, call)  # pragma: no cover - mcp 1.x

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return await list_page(getattr(params, "cursor", None))

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        return await call(params.name, params.arguments)

    return Server(
        server.name,
        version=server.version,
        instructions=server.instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _legacy_server(
    server_class: Any, server: SdkMcpServer, list_page: Any, call: Any
) -> Any:  # pragma: no cover - mcp 1.x registers handlers with decorators
    legacy = server_class(server.name, version=server.version, instructions=server.instructions)

    async def list_tools() -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            listed = await list_page(cursor)
            tools.extend(listed.tools)
            cursor = listed.nextCursor
            if not cursor:
                return tools

    legacy.list_tools()(list_tools)
    legacy.call_tool(validate_input=False)(call)
    return legacy
