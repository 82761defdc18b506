"""Requests from a server to its client (elicitation, sampling, ping), and their answers.

`Outbound` numbers the requests, writes them with the connection's own writer, and
wakes the waiting tool when the client's response arrives (`answered()`).  A wait is
bounded (``timeout``, default `DEFAULT_TIMEOUT`); a wait that ends without an answer
(timed out or cancelled) tells the client with ``notifications/cancelled``.  Used by
``ccwire serve`` (to the MCP client) and by the in-process router (to the Claude Code
CLI, inside ``mcp_message`` control requests).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio

from .._core.errors import McpError

__all__ = ["DEFAULT_TIMEOUT", "REQUEST_TIMED_OUT", "Outbound", "Requester"]

DEFAULT_TIMEOUT: Final = 300.0
REQUEST_TIMED_OUT: Final = -32001

Requester = Callable[[str, Mapping[str, Any], "float | None"], Awaitable[Mapping[str, Any]]]
"""Sends ``(method, params, timeout)`` to the client; returns the result."""


class _Pending:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.reply: Mapping[str, Any] | None = None


class Outbound:
    """The requests one connection's server sent its client, waiting for answers."""

    def __init__(self, write: Callable[..., Awaitable[Any]], prefix: str) -> None:
        self._write = write
        self._prefix = prefix
        self._ids = itertools.count(1)
        self._pending: dict[str, _Pending] = {}

    def answered(self, message: Mapping[str, Any]) -> bool:
        """Take a JSON-RPC response; True if it answered one of our requests."""
        req_id = message.get("id")
        pending = self._pending.pop(req_id, None) if isinstance(req_id, str) else None
        if pending is None:
            return False
        pending.reply = message
        pending.done.set()
        return True

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        timeout: float | None = None,
        *,
        related: Any = None,
    ) -> Mapping[str, Any]:
        """Send the request and return the client's result.

        ``related`` (the id of the client request this one belongs to) is passed on to
        the writer as its ``related`` keyword when given.

        Raises `McpError`: the client's error as it sent it, or -32001 when no answer
        came within ``timeout`` seconds (or the connection closed first).
        """
        limit = DEFAULT_TIMEOUT if timeout is None else timeout
        req_id = f"{self._prefix}{next(self._ids)}"
        pending = self._pending[req_id] = _Pending()
        message = {"jsonrpc": "2.0", "id": req_id, "method": method, "params": dict(params)}
        tag = {} if related is None else {"related": related}
        try:
            with anyio.move_on_after(limit):
                await self._write(message, **tag)
                await pending.done.wait()
        finally:
            self._pending.pop(req_id, None)
            if pending.reply is None:
                notice = {"requestId": req_id, "reason": "no longer waited for"}
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    await self._write(
                        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice},
                        **tag,
                    )
        reply = pending.reply
        if reply is None:
            raise McpError(
                f"the client did not answer {method} within {limit:g} s", code=REQUEST_TIMED_OUT
            )
        err = reply.get("error")
        if err is not None:
            err = err if isinstance(err, Mapping) else {}
            code = err.get("code")
            raise McpError(
                str(err.get("message") or "error"),
                code=code if isinstance(code, int) else -32603,
                data=err.get("data"),
            )
        result = reply.get("result")
        return result if isinstance(result, Mapping) else {}

    def close(self) -> None:
        """Wake every waiting request: the connection ended (they time out at once)."""
        for pending in self._pending.values():
            pending.reply = {"error": {"code": REQUEST_TIMED_OUT, "message": "connection closed"}}
            pending.done.set()
        self._pending.clear()
