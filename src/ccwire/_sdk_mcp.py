"""Routing ``mcp_message`` requests to in-process SDK servers, and their notifications back.

Any object with the :class:`ServedServer` interface can be served: a
:class:`~ccwire.SdkMcpServer`, or a bridged server of the official ``mcp`` package
(:mod:`ccwire._mcp_bridge`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from . import _codec as codec
from ._control import NO_REPLY, IncomingCall, RouteHandler, _NoReply

if TYPE_CHECKING:
    import anyio

__all__ = ["McpRouter", "ServedServer"]

Requester = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
Sink = Callable[[dict[str, Any]], Awaitable[None]]


class ServedServer(Protocol):
    """What the router needs from an in-process MCP server."""

    async def handle(
        self,
        message: Mapping[str, Any],
        *,
        session_id: str | None = None,
        send: Sink | None = None,
        session_key: Hashable | None = None,
        cancel_scope: anyio.CancelScope | None = None,
    ) -> dict[str, Any] | None:
        """Serve one JSON-RPC message; the response to write back, or ``None``."""
        ...

    def attach(self, sink: Sink) -> Callable[[], None]:
        """Register a session's sink for the server's own notifications."""
        ...


class McpRouter:
    """Serves the SDK servers of one connection.

    ``request`` sends a control request to the CLI (used to deliver a server's own
    notifications: progress, logging, ``tools/list_changed``).
    """

    def __init__(
        self,
        servers: Mapping[str, ServedServer],
        request: Requester,
        session_id: Callable[[], str | None],
    ) -> None:
        self._servers = dict(servers)
        self._request = request
        self._session_id = session_id
        self._senders: dict[str, Sink] = {name: self._sender(name) for name in self._servers}
        self._detach: list[Callable[[], None]] = []

    @property
    def names(self) -> list[str]:
        """The names of the served servers."""
        return list(self._servers)

    def _sender(self, name: str) -> Sink:
        async def send(message: dict[str, Any]) -> None:
            await self._request(codec.MCP_MESSAGE, codec.mcp_outgoing(name, message))

        return send

    def attach(self) -> None:
        """Subscribe to every server's own notifications (``tools/list_changed``)."""
        for name, server in self._servers.items():
            self._detach.append(server.attach(self._senders[name]))

    def detach(self) -> None:
        """Undo :meth:`attach`."""
        while self._detach:
            self._detach.pop()()

    def route(self) -> RouteHandler:
        """The route handler for ``mcp_message`` requests."""

        async def handle(
            req: codec.ControlRequest, call: IncomingCall
        ) -> Mapping[str, Any] | _NoReply:
            decoded = codec.decode_mcp_message(req.request)
            message = decoded.message
            server = self._servers.get(decoded.server_name)
            if server is None:
                return codec.mcp_server_not_found(decoded.server_name, message.get("id"))
            reply = await server.handle(
                message,
                session_id=self._session_id(),
                send=self._senders[decoded.server_name],
                cancel_scope=call.scope,
            )
            if reply is not None:
                return codec.mcp_response(reply)
            if "method" in message and "id" in message:
                return NO_REPLY  # a request whose answer was withdrawn (cancelled call)
            return codec.mcp_notification_ack()

        return handle
