"""Routing ``mcp_message`` requests to in-process SDK servers, and their notifications back.

Any object with the `ServedServer` interface can be served: a
`SdkMcpServer`, or a bridged server of the official ``mcp`` package
(`bridge`).  A server's own requests to the CLI (`ToolContext.elicit()`, ...)
travel in ``mcp_message`` control requests too; the CLI's JSON-RPC answer comes back
as an ``mcp_message`` of its own, which wakes the waiting request (`Outbound`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .._core.errors import MessageDecodeError, UnsupportedFeatureError
from .._protocol.control import NO_REPLY, IncomingCall, RouteHandler, _NoReply
from .._protocol.features import CAP_SDK_MCP_TOOLS_LIST_CHANGED, CliFeatures
from .._wire import codec
from .outbound import Outbound, Requester as OutboundRequester

if TYPE_CHECKING:
    import anyio

__all__ = ["McpRouter", "ServedServer"]

Requester = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
Sink = Callable[[dict[str, Any]], Awaitable[None]]

TOOLS_LIST_CHANGED = "notifications/tools/list_changed"


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
        request: OutboundRequester | None = None,
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

    The CLI introduces itself in each server's MCP ``initialize`` (``clientInfo``);
    `features` is what that tells. A CLI known to lack
    ``sdk_mcp_tools_list_changed`` (one older than 2.1.205, like 2.1.197) acknowledges
    ``tools/list_changed`` but never re-lists the tools, so delivering it raises
    `UnsupportedFeatureError` instead of sending it to no effect.
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
        self._outbound = {name: Outbound(self._senders[name], "ccwire-") for name in self._servers}
        self._detach: list[Callable[[], None]] = []
        self.features: CliFeatures | None = None
        """What the CLI is known to support (None until it introduced itself)."""

    @property
    def names(self) -> list[str]:
        """The names of the served servers."""
        return list(self._servers)

    def _sender(self, name: str) -> Sink:
        async def send(message: dict[str, Any]) -> None:
            if message.get("method") == TOOLS_LIST_CHANGED:
                self._check_relisting(name)
            await self._request(codec.MCP_MESSAGE, codec.mcp_outgoing(name, message))

        return send

    def _check_relisting(self, name: str) -> None:
        features = self.features
        if features is None or features.supports(CAP_SDK_MCP_TOOLS_LIST_CHANGED) is not False:
            return
        raise UnsupportedFeatureError(
            f"the tools of the in-process MCP server {name!r} changed, but the connected "
            f"Claude Code CLI{features.describe()} lacks the "
            f"{CAP_SDK_MCP_TOOLS_LIST_CHANGED!r} capability: it never re-lists the tools, "
            "so the model keeps the tool list it got when the server connected (upgrade "
            "the CLI, or register every tool before connecting)",
            subtype=codec.MCP_MESSAGE,
        )

    def _learn(self, message: Mapping[str, Any]) -> None:
        """Take note of the CLI's ``clientInfo`` in an MCP ``initialize`` request."""
        params = message.get("params")
        if message.get("method") == "initialize" and isinstance(params, Mapping):
            features = CliFeatures.from_mcp_client(params.get("clientInfo"))
            if features is not None:
                self.features = features

    def attach(self) -> None:
        """Subscribe to every server's own notifications (``tools/list_changed``)."""
        for name, server in self._servers.items():
            self._detach.append(server.attach(self._senders[name]))

    def detach(self) -> None:
        """Undo `attach()` (requests still waiting for the CLI fail at once)."""
        for outbound in self._outbound.values():
            outbound.close()
        while self._detach:
            self._detach.pop()()

    def route(self) -> RouteHandler:
        """The route handler for ``mcp_message`` requests."""

        async def handle(
            req: codec.ControlRequest, call: IncomingCall
        ) -> Mapping[str, Any] | _NoReply:
            try:
                decoded = codec.decode_mcp_message(req.request)
            except MessageDecodeError:
                return codec.mcp_malformed(req.request)  # a JSON-RPC error, not a control one
            message = decoded.message
            server = self._servers.get(decoded.server_name)
            if server is None:
                return codec.mcp_server_not_found(decoded.server_name, message.get("id"))
            if "method" not in message and self._outbound[decoded.server_name].answered(message):
                return codec.mcp_notification_ack()  # the CLI answered a request of ours
            self._learn(message)
            reply = await server.handle(
                message,
                session_id=self._session_id(),
                send=self._senders[decoded.server_name],
                cancel_scope=call.scope,
                request=self._outbound[decoded.server_name].request,
            )
            if reply is not None:
                return codec.mcp_response(reply)
            if "method" in message and "id" in message:
                return NO_REPLY  # a request whose answer was withdrawn (cancelled call)
            return codec.mcp_notification_ack()

        return handle
