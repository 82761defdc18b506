"""One MCP client connection of ``ccwire serve``: JSON-RPC checked to the letter.

`ClientLink` receives every raw message the client sends (one NDJSON line on stdio,
one POST body over HTTP) and makes sure each gets the answer JSON-RPC 2.0 and MCP
prescribe, before the server sees it:

* text that is not JSON: -32700 (id ``null``);
* JSON that is not a request object (``[]``, ``42``, ``"s"``, ``null``, ``{"foo": 1}``,
  a batch array, a ``jsonrpc`` other than ``"2.0"``, a method that is not a string,
  ``params`` that are not an object, an id that is ``null``, an object, an array
  or a boolean): -32600 (with the request's id when it has a usable one, else ``null``);
* ``params`` that are ``null``: taken as absent (as the official SDK does);
* a request whose ``params._meta`` is not an object, or names a ``progressToken``
  that is not a string or a number, or an ``initialize`` without a string
  ``protocolVersion``, a ``capabilities`` object and a ``clientInfo`` naming its
  ``name`` and ``version``: -32602 (as the official SDK answers);
* a method the server does not have: -32601; bad params: -32602 (from the server);
* a request other than ``initialize``, ``ping`` or ``server/discover`` before the
  client sent ``initialize`` (a 2026-07-28 request naming its version in ``_meta``
  needs no handshake): -32600;
* a response (``result``/``error`` and an id) answers one of the server's own requests
  to the client (`Outbound`: elicitation, sampling, ping).

Every request is served in a task of its own (calls overlap, and
``notifications/cancelled`` cancels exactly its call) and is always answered, unless
the client cancelled it: one still running when serving ends (`serve_lines` gives
calls a grace period once the client's input ends) gets a -32603 saying so, and is
counted in `ClientLink.cut_off`.  An answer JSON cannot carry (a tool's result
holding NaN or a lone surrogate, an error echoing such a method name) is replaced by
one saying why: a failed tool result for ``tools/call``, else -32603 (with id
``null`` when the id itself cannot be written); the connection goes on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio
import anyio.abc

from .._core.errors import MessageEncodeError
from .._wire.codec import mcp_unencodable
from .._wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    check_request,
    error,
    invalid_request,
    valid_id,
)
from .outbound import Outbound, Requester
from .versions import request_version

__all__ = ["PARSE_ERROR", "ClientLink", "check_params"]

logger = logging.getLogger("ccwire")

PARSE_ERROR: Final = -32700
_NO_HANDSHAKE: Final = frozenset({"initialize", "ping", "server/discover"})
_CUT_OFF: Final = "Internal error: the server is shutting down (the request did not finish in time)"
_CUT_OFF_WRITE: Final = 1.0

Writer = Callable[..., Awaitable[None]]
"""``write(message, related=None)``: ``related`` is the id of the client's request a
notification or request belongs to (Streamable HTTP sends it on that request's stream).
Raises `MessageEncodeError`, having written nothing, for a message JSON cannot carry."""


def _invalid_params(req_id: Any, why: str) -> dict[str, Any]:
    return error(req_id, INVALID_PARAMS, f"Invalid params: {why}")


def check_params(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The -32602 error for a request (one `check_request` passed) whose params break
    the MCP schema every request shares (``_meta``, its ``progressToken``) or that of
    ``initialize``; ``None`` when they do not."""
    req_id = message.get("id")
    params = message.get("params") or {}
    meta = params.get("_meta")
    if meta is not None:
        if not isinstance(meta, dict):
            return _invalid_params(req_id, "_meta must be an object")
        if "progressToken" in meta and not valid_id(meta["progressToken"]):
            return _invalid_params(req_id, "_meta.progressToken must be a string or a number")
    if message["method"] != "initialize":
        return None
    if not isinstance(params.get("protocolVersion"), str):
        return _invalid_params(req_id, "initialize needs a protocolVersion string")
    if not isinstance(params.get("capabilities"), dict):
        return _invalid_params(req_id, "initialize needs a capabilities object")
    info = params.get("clientInfo")
    if not (
        isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    ):
        return _invalid_params(req_id, "initialize needs a clientInfo object with name and version")
    return None


class ClientLink:
    """Serves one client connection (see the module docstring).

    ``server`` has `SdkMcpServer`'s ``handle``/``attach`` interface; ``write``
    delivers one message to the client; ``key`` keeps this connection's calls apart
    from another's on the same server.
    """

    def __init__(
        self,
        server: Any,
        write: Writer,
        key: Any,
        tg: anyio.abc.TaskGroup,
        *,
        on_unanswered: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self.server = server
        self._on_unanswered = on_unanswered
        self._write = write
        self.key = key
        self._tg = tg
        self.initialized = False
        self.cut_off = 0
        """Requests cut off unanswered by the end of serving (each got a -32603)."""
        self.outbound = Outbound(write, "ccwire-")

    async def send(self, message: dict[str, Any]) -> None:
        """Deliver one of the server's notifications (or a reply) to the client."""
        await self._write(message)

    async def receive_bytes(self, data: bytes | str) -> None:
        """Take one raw message (a line on stdio, a body over HTTP)."""
        try:
            message = json.loads(data)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            await self._write(error(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        await self.receive(message)

    async def receive(self, message: Any) -> None:
        """Take one parsed message: check it, then serve it in a task of its own."""
        problem = check_request(message)
        if problem is not None:
            await self._answer(problem, message)
            return
        if "method" not in message:
            if not self.outbound.answered(message):
                logger.debug("ccwire serve: a response to no request: %r", message.get("id"))
            return
        method = message["method"]
        if "id" in message:
            refusal = self._refusal(method, message)
            if refusal is not None:
                await self._answer(refusal, message)
                return
        if method == "initialize":
            self.initialized = True
        self._tg.start_soon(self._serve, message)

    def _refusal(self, method: str, message: dict[str, Any]) -> dict[str, Any] | None:
        """The error refusing request ``message`` before it is served, or ``None``."""
        req_id = message["id"]
        if self._may_serve(method, message.get("params") or {}):
            return check_params(message)
        if method not in getattr(self.server, "_ROUTES", (method,)):
            return error(req_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        return invalid_request(req_id, f"{method} before initialize: initialize first")

    def _may_serve(self, method: str, params: Mapping[str, Any]) -> bool:
        return self.initialized or method in _NO_HANDSHAKE or request_version(params) is not None

    async def _serve(self, message: dict[str, Any]) -> None:
        send: Writer = self.send
        request: Requester = self.outbound.request
        if message["method"] == "tools/call" and "id" in message:
            send, request = self._for_call(message["id"])
        reply: dict[str, Any] | None = None
        try:
            with anyio.CancelScope() as scope:  # cancelled by notifications/cancelled
                try:
                    reply = await self.server.handle(
                        message, send=send, session_key=self.key, cancel_scope=scope,
                        request=request,
                    )  # fmt: skip
                except Exception as exc:  # the server promises not to raise; be sure
                    logger.exception("ccwire serve: serving %s failed", message.get("method"))
                    reply = error(message.get("id"), -32603, f"Internal error: {exc}")
                if reply is not None:
                    await self._answer(reply, message)
        except anyio.get_cancelled_exc_class():
            if "id" in message:  # cut off by the end of serving, not by the client
                self.cut_off += 1
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CUT_OFF_WRITE):
                    await self._answer(error(message["id"], INTERNAL_ERROR, _CUT_OFF), message)
            raise
        if reply is None and "id" in message and self._on_unanswered is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self._on_unanswered(message["id"])

    async def _answer(self, reply: dict[str, Any], message: Any) -> None:
        """Write the answer to ``message``, or, if JSON cannot carry it, the answer
        saying why (see the module docstring)."""
        try:
            await self._write(reply)
            return
        except MessageEncodeError as exc:
            cause = str(exc)
        method = message.get("method") if isinstance(message, dict) else None
        logger.warning("ccwire serve: the answer to %r cannot be sent: %s", method, cause)
        try:
            await self._write(mcp_unencodable(message, cause)["mcp_response"])
        except MessageEncodeError:  # the id itself cannot be written: a -32603 for id null
            await self._write(mcp_unencodable(None, cause)["mcp_response"])

    def _for_call(self, call_id: Any) -> tuple[Writer, Requester]:
        """The notification sink and client requester of one tools/call: what they send
        belongs to that call."""

        async def send(message: dict[str, Any]) -> None:
            await self._write(message, related=call_id)

        async def request(
            method: str, params: Mapping[str, Any], timeout: float | None
        ) -> Mapping[str, Any]:
            return await self.outbound.request(method, params, timeout, related=call_id)

        return send, request

    def close(self) -> None:
        """Fail every request still waiting for the client (the connection ended)."""
        self.outbound.close()
