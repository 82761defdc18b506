"""Routing ``mcp_message`` requests to in-process SDK servers, and their notifications back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _codec as codec
from ._control import NO_REPLY, IncomingCall, RouteHandler, _NoReply

if TYPE_CHECKING:
    from ._mcp_server import SdkMcpServer

__all__ = ["McpRouter"]

Requester = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]


class McpRouter:
    """Serves the SDK servers of one connection.

    ``request`` sends a control request to the CLI (used to deliver a server's own
    notifications: progress, logging, ``tools/list_changed``).
    """

    def __init__(
        self,
        servers: Mapping[str, SdkMcpServer],
        request: Requester,
        session_id: Callable[[], str | None],
    ) -> None:
        self._servers = dict(servers)
        self._request = request
        self._session_id = session_id
        self._senders: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {
            name: self._sender(name) for name in self._servers
        }
        self._detach: list[Callable[[], None]] = []

    @property
    def names(self) -> list[str]:
        """The names of the served servers."""
        return list(self._servers)

    def _sender(self, name: str) -> Callable[[dict[str, Any]], Awaitable[None]]:
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
