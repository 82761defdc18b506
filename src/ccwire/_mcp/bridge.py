"""Serving a server of the official ``mcp`` package in-process (extra ``ccwire[mcp]``).

Pass a low-level ``mcp.server.lowlevel.Server``, an ``mcp.server.mcpserver.MCPServer``
(mcp 2.x) or an ``mcp.server.fastmcp.FastMCP`` (mcp 1.x) as a value of
``ClaudeAgentOptions.mcp_servers``; `McpBridge` gives it the interface of
`SdkMcpServer` (``handle`` / ``attach``) so the CLI reaches it over the
control protocol like any SDK server.

Each session (one CLI connection) runs the official server's own loop
(``Server.run``) over in-memory streams, with its lifespan, in a background task
started by the session's first message; a later ``initialize`` (the CLI re-connects
after ``mcp_toggle``) starts a fresh loop.  Requests are forwarded under ids of the
bridge's own and answered when the server answers; the server's notifications
(progress, log messages, list changes) go to the session's sink; the CLI's
``notifications/cancelled`` cancels the server's handler and withdraws the answer.
Requests the server sends to the client (sampling, elicitation, roots) are relayed
to the client when the host can reach it (``ccwire serve``), else refused with
-32601; ``ping`` is answered.  Detaching the session (the connection closing)
ends the stream, so the loop finishes (bounded by ``shutdown_grace``).

Nothing here imports ``mcp`` until a bridge is made.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc

from .._core.errors import McpError, MissingExtraError
from .._core.loops import spawn_detached
from .._wire.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    check_request,
    error,
    invalid_request,
    result,
)
from .broadcast import Sink
from .config import McpSdkServerConfig
from .outbound import Requester
from .routes import key_of

if TYPE_CHECKING:
    from .server import SdkMcpServer

__all__ = ["McpBridge", "as_served_server", "is_official_server", "is_server_object"]

logger = logging.getLogger("ccwire")

_TIMED_OUT = -32001


def _lowlevel(obj: Any) -> Any | None:
    """The low-level ``Server`` of an official server object (or the object itself)."""
    for attr in ("_lowlevel_server", "_mcp_server"):  # MCPServer (2.x), FastMCP (1.x)
        inner = getattr(obj, attr, None)
        if inner is not None and _is_lowlevel(inner):
            return inner
    return obj if _is_lowlevel(obj) else None


def _is_lowlevel(obj: Any) -> bool:
    return callable(getattr(obj, "run", None)) and callable(
        getattr(obj, "create_initialization_options", None)
    )


def is_official_server(obj: Any) -> bool:
    """True for a server object of the official ``mcp`` package (never imports it)."""
    from_mcp = any(
        (c.__module__ or "").split(".")[0] == "mcp" for c in type(obj).__mro__ if c is not object
    )
    return from_mcp and _lowlevel(obj) is not None


def _has_served_interface(obj: Any) -> bool:
    return callable(getattr(obj, "handle", None)) and callable(getattr(obj, "attach", None))


def is_server_object(obj: Any) -> bool:
    """True for a server given directly as an ``mcp_servers`` value: an
    `SdkMcpServer` (or anything with its interface) or an official one."""
    return not isinstance(obj, Mapping) and (_has_served_interface(obj) or is_official_server(obj))


def as_served_server(obj: Any) -> Any | None:
    """``obj`` if it can be served as is, a `McpBridge` for an official server,
    else ``None``."""
    if _has_served_interface(obj):
        return obj
    if is_official_server(obj):
        return McpBridge(obj)
    return None


@functools.cache
def _wire() -> tuple[Callable[[dict[str, Any]], Any], type]:
    """``(dict -> JSON-RPC message object, SessionMessage)`` for the installed ``mcp``."""
    try:
        from mcp.shared.message import SessionMessage
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise MissingExtraError(
            "bridging an official MCP server", "the mcp package", "mcp"
        ) from exc
    try:
        from mcp_types import jsonrpc_message_adapter  # mcp 2.x

        return jsonrpc_message_adapter.validate_python, SessionMessage
    except ImportError:  # pragma: no cover - mcp 1.x
        from mcp.types import JSONRPCMessage

        return JSONRPCMessage.model_validate, SessionMessage  # type: ignore[attr-defined]


def to_session_message(data: Mapping[str, Any]) -> Any:
    """A JSON-RPC dict as the ``SessionMessage`` the official server reads."""
    load, session_message = _wire()
    return session_message(load(dict(data)))


def from_message(message: Any, *, as_parsed: bool = False) -> dict[str, Any]:
    """An official JSON-RPC message object (or ``SessionMessage``) as a plain dict:
    as JSON writes it (``NaN`` as ``null``, as the official package sends it), or,
    ``as_parsed``, with its values as they were read (a message a client sent: a
    ``NaN`` in it is left for the checks that refuse it, not taken for ``null``)."""
    message = getattr(message, "message", message)
    message = getattr(message, "root", message)  # mcp 1.x wraps it in a RootModel
    mode = "python" if as_parsed else "json"
    dumped: dict[str, Any] = message.model_dump(by_alias=True, mode=mode, exclude_unset=True)
    return dumped


@dataclass(eq=False)
class _Waiter:
    outer_id: Any
    internal_id: int
    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None
    withdrawn: bool = False


class _Session:
    """One connection to the official server: its loop, and the requests in flight."""

    def __init__(self, lowlevel: Any, sink: Sink | None, name: str) -> None:
        self._lowlevel = lowlevel
        self.sink = sink
        self._name = name
        self._in_send, self._in_recv = anyio.create_memory_object_stream[Any](math.inf)
        self._out_send, self._out_recv = anyio.create_memory_object_stream[Any](math.inf)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Waiter] = {}
        self._by_outer: dict[Any, _Waiter] = {}  # the latest request under each client id
        self._scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.closed = False
        self.requester: Requester | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    def start(self) -> None:
        # on the loop `handle` runs on: an asyncio or trio one (anyio made our objects)
        spawn_detached(self._run, "ccwire bridged MCP server")

    def stop(self, grace: float) -> None:
        """End the client->server stream; the loop then finishes (cancelled after grace)."""
        self.closed = True
        self._in_send.close()
        with contextlib.suppress(Exception):  # no event loop here: the EOF alone ends it
            self._scope.deadline = min(self._scope.deadline, anyio.current_time() + grace)

    async def _run(self) -> None:
        try:
            with self._scope:
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    tg.start_soon(self._pump)
                    try:
                        options = self._lowlevel.create_initialization_options()
                        await self._lowlevel.run(self._in_recv, self._out_send, options)
                    finally:
                        self._out_send.close()
        except Exception:
            logger.exception("ccwire: the bridged MCP server %r failed", self._name)
        finally:
            self.closed = True
            for stream in (self._in_send, self._in_recv, self._out_recv):
                stream.close()
            for waiter in self._pending.values():
                waiter.response = error(
                    waiter.outer_id, INTERNAL_ERROR, f"MCP server {self._name!r} stopped"
                )
                waiter.done.set()
            self.done.set()

    async def _pump(self) -> None:
        async for item in self._out_recv:  # the server writes only SessionMessages
            data = from_message(item)
            if "method" not in data:
                waiter = self._pending.pop(data.get("id"), None)  # type: ignore[arg-type]
                if waiter is not None:
                    waiter.response = {**data, "id": waiter.outer_id}
                    waiter.done.set()
            elif "id" in data:  # a request to the client: relayed when it can be
                method = data["method"]
                if method == "ping":
                    self._forward(result(data["id"], {}))
                elif self.requester is not None and self._tg is not None:
                    self._tg.start_soon(self._relay, self.requester, data)
                else:
                    self._forward(
                        error(data["id"], METHOD_NOT_FOUND, f"Method not found: {method}")
                    )
            elif self.sink is not None:
                try:
                    await self.sink(data)
                except Exception as exc:
                    logger.warning("ccwire: %r lost a %s: %s", self._name, data["method"], exc)

    async def _relay(self, requester: Requester, data: dict[str, Any]) -> None:
        """Ask the client what the server asked (sampling, elicitation, roots)."""
        params = data.get("params")
        try:
            answer = await requester(
                data["method"], params if isinstance(params, Mapping) else {}, None
            )
        except McpError as exc:
            self._forward(error(data["id"], exc.code, exc.message, exc.data))
        else:
            self._forward(result(data["id"], dict(answer)))

    def _forward(self, data: Mapping[str, Any]) -> None:
        """Send ``data`` to the server; dropped once its loop has ended (a late answer)."""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._in_send.send_nowait(to_session_message(data))

    async def handle(
        self, message: Mapping[str, Any], timeout: float | None
    ) -> dict[str, Any] | None:
        """One request or notification with a string ``method`` (`McpBridge.handle`
        answered the rest), sent while the loop runs (a stopped session is replaced)."""
        if "id" not in message:
            if message["method"] == "notifications/cancelled":
                params = message.get("params")
                params = params if isinstance(params, Mapping) else {}
                cancelled = self._by_outer.get(params.get("requestId"))
                if cancelled is None:
                    return None  # answered already, or never asked
                cancelled.withdrawn = True
                cancelled.done.set()
                message = {**message, "params": {**params, "requestId": cancelled.internal_id}}
            self._forward(message)
            return None
        outer, internal = message["id"], next(self._ids)
        waiter = _Waiter(outer, internal)
        self._pending[internal] = waiter
        self._by_outer[outer] = waiter
        try:
            self._forward({**message, "id": internal})
            with anyio.move_on_after(math.inf if timeout is None else timeout):
                await waiter.done.wait()
        finally:
            self._pending.pop(internal, None)
            if self._by_outer.get(outer) is waiter:
                del self._by_outer[outer]
            if not waiter.done.is_set():  # cancelled by our caller, or timed out
                self._forward(_cancel_notice(internal, "cancelled by the client"))
        if waiter.withdrawn:
            return None
        if waiter.response is None:
            return error(outer, _TIMED_OUT, f"Request timed out after {timeout:g} s")
        return waiter.response


def _cancel_notice(request_id: int, reason: str) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": reason}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


class McpBridge:
    """A server written with the official ``mcp`` package, hosted by ccwire.

    Wraps a ``FastMCP`` (mcp 1.x), an ``MCPServer`` (mcp 2.x) or a low-level
    ``mcp.server.lowlevel.Server`` and gives it `SdkMcpServer`'s
    ``handle``/``attach`` interface, so that it can be a value of
    ``ClaudeAgentOptions.mcp_servers`` (the Claude Code CLI then reaches it in-process,
    over the control protocol, like a ccwire server), be served by ``ccwire serve``,
    or be loaded by ``ccwire run --tools``.  A server object given directly to
    ``mcp_servers``, ``serve`` or ``--tools`` is wrapped in a bridge automatically;
    make one yourself to set ``timeout`` or ``name``.

    Each session (one CLI or client connection) runs the server's own loop, with its
    lifespan, over in-memory streams; requests are forwarded and answered when the
    server answers, its notifications (progress, log messages, list changes) reach
    the client, and ``notifications/cancelled`` cancels its handler.  Requests the
    server sends to the client (sampling, elicitation, roots) are relayed to the
    client under ``ccwire serve``; the Claude Code CLI refuses them (-32601), as it
    does for ccwire tools.  ``ping`` is answered.  Needs the ``mcp`` package (``ccwire[mcp]``).

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer  # FastMCP in mcp 1.x
        from ccwire import ClaudeAgentOptions, McpBridge

        weather = MCPServer("weather")

        @weather.tool()
        def forecast(city: str) -> str:
            return f"Sunny in {city}"

        options = ClaudeAgentOptions(mcp_servers={"weather": McpBridge(weather).config()})
        ```

    Args:
        server: The official server object.
        name: The name the server goes by (default: the server's own name).
        timeout: Seconds each forwarded request may take (default: no limit); the
            server's handler is then cancelled and the client gets error -32001.
        shutdown_grace: Seconds a session's server loop may take to finish once the
            connection closed.

    Raises:
        TypeError: ``server`` is not a server of the ``mcp`` package.
        MissingExtraError: The ``mcp`` package is not installed.
    """

    def __init__(
        self,
        server: Any,
        *,
        name: str | None = None,
        timeout: float | None = None,
        shutdown_grace: float = 5.0,
    ) -> None:
        lowlevel = _lowlevel(server)
        if lowlevel is None:
            raise TypeError(f"not a server of the mcp package: {server!r}")
        self.server = server
        self.name = name or str(getattr(lowlevel, "name", "") or "mcp")
        self.timeout = timeout
        self.shutdown_grace = shutdown_grace
        self._lowlevel = lowlevel
        self._sessions: dict[Hashable, _Session] = {}
        self._live: list[_Session] = []  # every session whose loop may still run
        self._sinks: dict[object, Sink] = {}
        _wire()  # fail now, with the install hint, if mcp is missing

    def __repr__(self) -> str:
        return f"McpBridge({self.server!r})"

    def config(self) -> McpSdkServerConfig:
        """This bridge as an ``mcp_servers`` entry: ``{"type": "sdk", "name": ...,
        "instance": self}`` (typed as the config of an in-process server).

        Returns:
            The config, named after the server.
        """
        return {"type": "sdk", "name": self.name, "instance": cast("SdkMcpServer", self)}

    def attach(self, sink: Sink) -> Callable[[], None]:
        """Register a session's sink; the returned function detaches it and ends the
        session's server loop (idempotent)."""
        key = object()
        self._sinks[key] = sink

        def detach() -> None:
            self._sinks.pop(key, None)
            for k, session in list(self._sessions.items()):
                if session.sink is sink:
                    del self._sessions[k]
                    session.stop(self.shutdown_grace)

        return detach

    async def aclose(self) -> None:
        """End every session's server loop and wait for them (bounded by shutdown_grace)."""
        self._sessions.clear()
        sessions, self._live = self._live, []
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.shutdown_grace):
            for session in sessions:
                session.stop(self.shutdown_grace)
            for session in sessions:
                await session.done.wait()

    async def handle(
        self,
        message: Mapping[str, Any],
        *,
        session_id: str | None = None,
        send: Sink | None = None,
        session_key: Hashable | None = None,
        cancel_scope: anyio.CancelScope | None = None,
        request: Requester | None = None,
    ) -> dict[str, Any] | None:
        """Forward one JSON-RPC message to the official server; its answer, or ``None``.

        Same contract as `SdkMcpServer.handle()` (``cancel_scope`` is not
        needed: cancelling the caller cancels the forwarded request).  With ``request``,
        the server's own requests to the client (sampling, elicitation, roots) are
        relayed to the client instead of refused.
        """
        if (refused := check_request(message)) is not None:
            return refused
        if "method" not in message:
            return None  # a response from the CLI: the bridge sends it no requests
        key = key_of(session_key, send, session_id)
        session = self._sessions.get(key)
        if session is not None and (session.closed or message.get("method") == "initialize"):
            del self._sessions[key]  # a new connection (ids restart): a fresh server loop
            session.stop(self.shutdown_grace)
            session = None
        if session is None:
            sinks = list(self._sinks.values())
            sink = send if send is not None else sinks[0] if len(sinks) == 1 else None
            session = _Session(self._lowlevel, sink, self.name)
            session.start()
            self._sessions[key] = session
            self._live = [s for s in self._live if not s.done.is_set()] + [session]
        if request is not None:
            session.requester = request
        try:
            return await session.handle(message, self.timeout)
        except Exception as exc:  # e.g. a message the mcp package refuses to parse
            if "id" not in message:
                return None
            return invalid_request(message.get("id"), str(exc))
