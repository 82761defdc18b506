"""``claude-agent-sdk``'s ``Query``, as code reaches it through ``client._query``.

The reference's ``ClaudeSDKClient`` keeps its connection's control protocol in a private
``_query`` attribute (an instance of ``claude_agent_sdk._internal.query.Query`` while
connected, None otherwise), and code sends the CLI's control requests that have no
method through ``client._query._send_control_request({"subtype": ...})``. `Query` is
that object on ccwire (the drop-in serves it under that name): its one method sends
through the client's control requests, as `ClaudeSDKClient.send_control_request()`
does, and answers what the reference answers. Every request of the CLI (a hook, a
permission, an in-process tool's call) is served through its ``_handle_control_request``,
looked up on the class each time, as the reference's is: a patch there runs around each
callback, in its task (respan's instrumentation sets its context variables there).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._core.errors import CLIConnectionError, ControlProtocolError
from .._wire.codec import ControlRequest

if TYPE_CHECKING:  # in private annotations only
    from .connection import Connection
    from .runtime_control import RuntimeControl

__all__ = ["Query"]

REFERENCE_CONTROL_TIMEOUT = 60.0
"""The reference's bound on one ``_send_control_request()`` (its default ``timeout``)."""


class Query:
    """One connection's control requests, shaped as the reference's private ``Query``.

    ``client._query`` is one for as long as the client stays connected (the same object
    each time), None before `ClaudeSDKClient.connect()` and after
    `ClaudeSDKClient.disconnect()`.
    """

    def __init__(self, client: RuntimeControl, connection: Connection) -> None:
        self._client = client
        self._connection = connection
        self._serving: dict[str, Callable[[], Any]] = {}  # by request id, till served

    @property
    def connection(self) -> Connection:
        """The connection it sends on."""
        return self._connection

    async def _serve(self, request: ControlRequest, serve: Callable[[], Any]) -> Any:
        """Serve a request of the CLI through `_handle_control_request` (the connection's
        ``serve_through``): ``serve()`` is the route's call; returns its answer."""
        self._serving[request.request_id] = serve
        frame = {
            "type": "control_request",
            "request_id": request.request_id,
            "request": dict(request.request),
        }
        try:
            return await self._handle_control_request(frame)
        finally:
            self._serving.pop(request.request_id, None)

    async def _handle_control_request(self, request: dict[str, Any]) -> Any:
        """Serve one request of the CLI, the frame as it sent it (``{"type":
        "control_request", "request_id": ..., "request": {"subtype": ..., ...}}``): run
        its callback, and return the answer ccwire sends.

        Code patches it on the class to run around every callback, as on the reference.

        Args:
            request: The ``control_request`` frame.

        Returns:
            The answer to send (the reference's returns None and sends it itself).
        """
        given = self._serving.pop(request["request_id"])()
        return await given if inspect.isawaitable(given) else given

    async def _send_control_request(
        self, request: dict[str, Any], timeout: float = REFERENCE_CONTROL_TIMEOUT
    ) -> dict[str, Any]:
        """Send a control request (``{"subtype": ..., fields...}``) and return the CLI's
        answer (its ``response`` object), as the reference's method does.

        Args:
            request: The request: its ``subtype`` and its fields.
            timeout: How long to wait for the answer, in seconds.

        Returns:
            The CLI's answer, a dict (empty when it gives none).

        Raises:
            CLIConnectionError: The client was disconnected since this object was
                taken from ``client._query``.
            UnsupportedFeatureError: The CLI does not know the request.
            ControlProtocolError: The CLI refused it (the reference raises an
                ``Exception`` with the CLI's text; ccwire's text holds it).
            ControlTimeoutError: No answer within ``timeout`` (the reference raises an
                ``Exception``).
        """
        try:
            current = self._client._connection(any_loop=True)
        except CLIConnectionError:
            current = None
        if current is not self._connection:
            raise CLIConnectionError("not connected: this client's connection was closed")
        fields = dict(request)
        subtype = fields.pop("subtype", None)
        if not isinstance(subtype, str):
            raise ControlProtocolError(f"a control request names its 'subtype': {request!r}")
        answer: Mapping[str, Any] = await self._client._request(subtype, fields, timeout=timeout)
        return dict(answer)
