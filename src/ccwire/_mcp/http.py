"""``ccwire serve --http``: Streamable HTTP, on Starlette and uvicorn (extra ``ccwire[http]``).

The HTTP side of the protocol (POST/GET/DELETE on one endpoint, SSE streams, the
``Mcp-Session-Id`` and ``MCP-Protocol-Version`` headers, the Host/Origin checks) is
the official ``mcp`` package's ``StreamableHTTPServerTransport``, one per session;
each session's JSON-RPC is served by a `ClientLink`, as on stdio.

* **Sessions.**  A POST without a session id must be an ``initialize``; it opens a
  session whose id the answer carries.  Unknown ids get 404, ``DELETE`` ends a
  session, and a session idle for `IDLE_SECONDS` ends by itself.  A 2026-07-28
  request (``MCP-Protocol-Version: 2026-07-28``, no session id) is served on its own,
  statelessly.
* **Resumable streams.**  Every SSE event gets an id and is kept (the last
  `EVENTS_KEPT` per session); a client reconnecting with ``Last-Event-ID`` gets what
  it missed.  What a tool call sends (progress, log messages, elicitation) goes on
  that call's stream.
* **DNS rebinding.**  The server listens on 127.0.0.1 unless told otherwise; the Host
  header must name the address served (or a loopback name), and a browser's
  ``Origin``, when present, must be a loopback or that address.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import anyio
import anyio.abc
from mcp.server.streamable_http import (
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamableHTTPServerTransport,
    StreamId,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .bridge import from_message, to_session_message
from .serve import serve_lines
from .versions import MODERN_VERSIONS

__all__ = ["EVENTS_KEPT", "IDLE_SECONDS", "McpHttpApp", "security_settings", "serve_http"]

logger = logging.getLogger("ccwire")

IDLE_SECONDS: Final = 30 * 60.0
RETRY_MS: Final = 1000
"""The reconnection delay suggested to clients in SSE priming events."""
EVENTS_KEPT: Final = 1000
ENDPOINT: Final = "/mcp"
_LOOPBACK: Final = ("127.0.0.1", "localhost", "[::1]")


def security_settings(host: str, port: int) -> TransportSecuritySettings:
    """Host and Origin checks against DNS rebinding for a server bound to ``host``."""
    names = list(_LOOPBACK)
    shown = f"[{host}]" if ":" in host else host
    if shown not in names and host not in ("0.0.0.0", "::"):
        names.append(shown)
    hosts = [f"{n}:{port}" for n in names] + [f"{n}:*" for n in names] + names
    origins = [f"{scheme}://{n}:*" for n in names for scheme in ("http", "https")]
    origins += [f"{scheme}://{n}" for n in names for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class _MemoryEventStore(EventStore):
    """The last `EVENTS_KEPT` events of one session, for ``Last-Event-ID`` replays."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._events: deque[tuple[EventId, StreamId, Any]] = deque(maxlen=EVENTS_KEPT)

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = f"{stream_id}:{next(self._ids)}"
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = [i for i, (eid, _, _) in enumerate(self._events) if eid == last_event_id]
        if not found:
            return None
        _, stream_id, _ = self._events[found[0]]
        for event_id, stream, message in list(self._events)[found[0] + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


def _error(status: int, message: str) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return JSONResponse(body, status_code=status)


class McpHttpApp:
    """The ASGI app serving one server over Streamable HTTP (see the module docstring)."""

    def __init__(self, server: Any, security: TransportSecuritySettings) -> None:
        self.server = server
        self.security = security
        self.sessions: dict[str, StreamableHTTPServerTransport] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        """Starlette's lifespan: the task group the sessions run in."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                self._tg = None

    def starlette(self) -> Starlette:
        """The Starlette application, endpoint `ENDPOINT`."""
        route = Route(ENDPOINT, endpoint=self, methods=["GET", "POST", "DELETE"])
        return Starlette(routes=[route], lifespan=self.lifespan)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        session_id = headers.get("mcp-session-id")
        if session_id is None and headers.get("mcp-protocol-version") in MODERN_VERSIONS:
            await self._stateless(scope, receive, send)
            return
        if session_id is not None:
            transport = self.sessions.get(session_id)
            if transport is None:
                await _error(404, "Session not found")(scope, receive, send)
                return
            await transport.handle_request(scope, receive, send)
            if transport.is_terminated:
                self.sessions.pop(session_id, None)
            return
        await self._open(scope, receive, send)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = uuid.uuid4().hex
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id, event_store=_MemoryEventStore(),
            security_settings=self.security, idle_timeout=IDLE_SECONDS, retry_interval=RETRY_MS,
        )  # fmt: skip
        self.sessions[session_id] = transport
        status: list[int] = []

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        assert self._tg is not None
        await self._tg.start(self._run, transport, session_id)
        try:
            await transport.handle_request(scope, receive, watch)
        finally:
            if not status or status[0] >= 400:  # no session was opened
                self.sessions.pop(session_id, None)
                with anyio.CancelScope(shield=True):
                    await transport.terminate()

    async def _run(
        self,
        transport: StreamableHTTPServerTransport,
        session_id: str,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            async with transport.connect() as (read, write):
                task_status.started()
                scope = transport.idle_scope or anyio.CancelScope()
                with scope:
                    await _serve_transport(self.server, read, write)
        except Exception:
            logger.exception("ccwire serve: HTTP session %s failed", session_id)
        finally:
            self.sessions.pop(session_id, None)
            if not transport.is_terminated:
                with anyio.CancelScope(shield=True):
                    await transport.terminate()

    async def _stateless(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = StreamableHTTPServerTransport(
            mcp_session_id=None, security_settings=self.security
        )
        assert self._tg is not None
        await self._tg.start(self._run, transport, "(stateless)")
        try:
            await transport.handle_request(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await transport.terminate()


async def _serve_transport(server: Any, read: Any, write: Any) -> None:
    """Serve the messages of one transport's streams with a `ClientLink`."""
    unanswered: dict[str, Callable[[], Awaitable[None]]] = {}

    async def writer(message: dict[str, Any], related: Any = None) -> None:
        metadata = None if related is None else ServerMessageMetadata(related_request_id=related)
        item = to_session_message(message)
        try:
            await write.send(SessionMessage(item.message, metadata=metadata))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("ccwire serve: HTTP session ended; %s not sent", message.get("method"))

    async def on_unanswered(req_id: Any) -> None:
        callback = unanswered.pop(str(req_id), None)
        if callback is not None:
            await callback()

    async def messages() -> AsyncIterator[Any]:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.EndOfStream):
            async for item in _items(read):
                yield item

    async def _items(read: Any) -> AsyncIterator[Any]:
        async for item in read:
            if isinstance(item, Exception):
                logger.debug("ccwire serve: HTTP transport: %s", item)
                continue
            metadata = item.metadata
            callback = getattr(metadata, "on_request_unanswered", None)
            data = from_message(item)
            if callback is not None and "id" in data:
                unanswered[str(data["id"])] = callback
            yield data

    await serve_lines(server, messages(), writer, on_unanswered=on_unanswered)


async def serve_http(
    server: Any, host: str = "127.0.0.1", port: int = 8000, *, announce: Any = None
) -> None:
    """Serve ``server`` over Streamable HTTP at ``http://host:port/mcp`` until stopped.

    Once the port is bound (``port`` 0 picks a free one), one line naming the URL is
    written to ``announce`` (a text stream, e.g. stderr), if given.
    """
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    app = McpHttpApp(server, security_settings(host, bound))
    config = uvicorn.Config(app.starlette(), log_level="warning", lifespan="on")
    if announce is not None:
        shown = f"[{host}]" if ":" in host else host
        announce.write(f"ccwire: serving MCP on http://{shown}:{bound}{ENDPOINT}\n")
        announce.flush()
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()
