"""``ccwire serve --http``: Streamable HTTP, on Starlette and uvicorn (extra ``ccwire[http]``).

The HTTP side of the protocol (POST/GET/DELETE on one endpoint, SSE streams, the
``Mcp-Session-Id`` and ``MCP-Protocol-Version`` headers, the Host/Origin checks) is
the official ``mcp`` package's ``StreamableHTTPServerTransport``, one per session;
each session's JSON-RPC is served by a `ClientLink`, as on stdio.  What one server
accepts is bounded by its `HttpLimits`.

* **Sessions.**  A POST without a session id must be an ``initialize``; it opens a
  session whose id the answer carries (one refused, or answered with an error, opens
  none: its id gets 404).  Unknown ids get 404, ``DELETE`` ends a
  session (its calls, and a request still on its way in, end unanswered), and a
  session with no request in flight for ``idle_timeout`` seconds ends by itself (its
  id then gets 404).  At most ``max_sessions`` are open: while that
  many are, an ``initialize`` gets 503 with a JSON-RPC error and the open sessions
  are left alone (evicting one would cut off a client in the middle of its work;
  the client that is refused can retry).  A 2026-07-28 request
  (``MCP-Protocol-Version: 2026-07-28``, no session id) is served on its own,
  statelessly; such a request is a POST (a GET or DELETE gets 405).
* **Bounded requests.**  A POST body over ``max_body_bytes`` gets 413 as soon as its
  ``Content-Length`` (or what has arrived of it) says so; it is never read whole
  (what the client goes on sending is dropped for at most `LINGER_SECONDS` before the
  connection closes, so that the client gets the 413, not a reset).
  A request's head must arrive within ``request_timeout`` seconds of its first byte
  (or of the connection opening), and is at most `MAX_HEAD_BYTES` (431 beyond,
  however it arrives); its body must arrive within as many seconds again (408).  A slow client
  (slowloris) is disconnected; a connection idle between requests is closed after
  `KEEP_ALIVE_SECONDS`.
* **Every body answered as JSON-RPC 2.0 and the transport spec say**, before the
  transport sees it (every refusal's body is a JSON-RPC error, the router's 405 for
  a method the endpoint has not included): text that is not JSON gets 400 with
  -32700; JSON that is not a message (an id that is an object, an array, a boolean or ``null``; no
  ``jsonrpc: "2.0"``; a method that is not a string...) 400 with -32600, id
  ``null`` unless it has a usable one; a batch (an array) 400 with -32600, except
  in a session of a version that had batches (2025-03-26 and 2024-11-05), where
  each message is served (at most `BATCH_CONCURRENCY` of its requests at once) and
  one JSON array answers the requests; a
  ``Content-Type`` other than ``application/json`` 415; an
  ``MCP-Protocol-Version`` no version of ours 400 with -32022; a request other than
  ``initialize`` without a session id 400; a request with the id of one of its
  session still in flight 400 with -32600 (the transport keeps one stream per id).
* **Resumable streams.**  Every SSE event gets an id and is kept (the last
  `EVENTS_KEPT` per session, at most `EVENT_BYTES_KEPT` bytes of them besides the
  newest); a client reconnecting with ``Last-Event-ID`` gets what it missed.  What
  a tool call sends (progress, log messages, elicitation) goes on that call's
  stream.
* **Connections.**  At most ``max_connections`` are open at once (by default half
  of what the process's file-descriptor limit, ``RLIMIT_NOFILE``, leaves once
  `FD_RESERVE` descriptors are kept for the server's own files and the tools', and
  `BACKLOG` for connections just accepted; the other half is for refusing).  One more
  is answered at once with 503, a ``Retry-After`` and a JSON-RPC error, and closed
  (what it sends meanwhile is dropped, for at most `LINGER_SECONDS`); connections
  are served again once others close.  Should ``accept`` still run out of
  descriptors (EMFILE, ENFILE), the server says so in one warning per
  `WARN_SECONDS` (as for the connections refused), not a traceback per failed
  ``accept``, and accepts again once descriptors are free.  (``ccwire serve``
  raises the soft limit to the hard one first, `raise_fd_limit`.)
* **Stopping.**  Stopped (Ctrl-C, SIGTERM), the server answers every request
  arriving from then on (and one whose body is still arriving) with 503 and a
  JSON-RPC error, and gives the calls still
  running ``drain_timeout`` seconds: each cut off then gets a -32603 on its stream
  (which ends whole), and is counted (``ccwire serve`` then exits with 1).  A
  second signal cuts them off so at once; a third stops the server at once.
* **DNS rebinding.**  The server listens on 127.0.0.1 unless told otherwise; the Host
  header must name the address served (or a loopback name), and a browser's
  ``Origin``, when present, must be a loopback or that address (else 421, 403,
  each with a JSON-RPC error).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import ipaddress
import itertools
import json
import logging
import math
import os
import re
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.streamable_http import (
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamableHTTPServerTransport,
    StreamId,
)
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCRequest, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from .._wire.framing import encode_line
from .._wire.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, check_request, error, invalid_request
from .bridge import from_message, to_session_message
from .link import PARSE_ERROR
from .serve import DRAIN_SECONDS, _cancel_when, _halt_when, raise_stopping_signal, serve_lines
from .versions import MODERN_VERSIONS, negotiate, unsupported

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "BATCH_CONCURRENCY",
    "EVENTS_KEPT",
    "EVENT_BYTES_KEPT",
    "IDLE_SECONDS",
    "LINGER_SECONDS",
    "FD_RESERVE",
    "MAX_BODY_BYTES",
    "MAX_SESSIONS",
    "REQUEST_SECONDS",
    "RESUME_SECONDS",
    "WARN_SECONDS",
    "HttpLimits",
    "McpHttpApp",
    "security_settings",
    "serve_http",
]

logger = logging.getLogger("ccwire")

MAX_BODY_BYTES: Final = 4 << 20
"""The default largest POST body, in bytes (4 MiB, as the official SDK's)."""
MAX_SESSIONS: Final = 1000
"""The default most sessions open at once (each holds about 40 KB, plus its events)."""
IDLE_SECONDS: Final = 30 * 60.0
"""The default time a session may go without a request in flight before it ends."""
REQUEST_SECONDS: Final = 30.0
"""The default time a request's head, then its body, may take to arrive."""
RESUME_SECONDS: Final = 30.0
"""The default time a call whose client is gone (no stream open for it) waits for the
client to resume its stream before it is cancelled."""
MAX_HEAD_BYTES: Final = 16 << 10
"""The largest request head (request line and headers) read, in bytes."""
KEEP_ALIVE_SECONDS: Final = 5
"""How long a connection may stay idle between two requests."""
LINGER_SECONDS: Final = 2.0
"""How long a refused body is still read (and dropped) after its refusal went out, so
that closing the connection does not reset it before the client has the answer."""
FD_RESERVE: Final = 64
"""File descriptors left out of the connections' share, beyond those open when the
server starts: the tools' files, sockets and child processes, logs."""
WARN_SECONDS: Final = 10.0
"""The warnings of refused connections and failed ``accept`` calls come at most once in
so many seconds (each says how many there were since the last)."""
RETRY_AFTER_SECONDS: Final = 1
"""The ``Retry-After`` of a connection refused at the connection limit."""
BACKLOG: Final = 128
"""The connections waiting to be accepted, at most (the kernel's queue).  asyncio also
tries as many accepts in a row, and when they fail for want of descriptors it tries
(and reports) each of them again a second later, until they succeed (CPython
gh-151615): uvicorn's default of 2048 made that cost a fifth of a CPU."""
_FALLBACK_CONNECTIONS: Final = 1000
"""The connection limit where the file-descriptor limit cannot be read (Windows)."""
BATCH_CONCURRENCY: Final = 32
"""The most requests of one batch served at once (its notifications are not held back)."""
_ANSWER_SECONDS: Final = 2.0
"""What answering the calls cut off at shutdown may take, beyond ``drain_timeout``."""
_UNREAD_SECONDS: Final = 2
"""What a response its client no longer reads may take once the server drained (an int:
uvicorn's ``timeout_graceful_shutdown``)."""
RETRY_MS: Final = 1000
"""The reconnection delay suggested to clients in SSE priming events."""
EVENTS_KEPT: Final = 1000
EVENT_BYTES_KEPT: Final = 1 << 20
"""The bytes of older events a session keeps for replays, besides its newest event."""
ENDPOINT: Final = "/mcp"
_LOOPBACK: Final = ("127.0.0.1", "localhost", "[::1]")
_BATCHING_VERSIONS: Final = frozenset({"2025-03-26", "2024-11-05"})
"""Versions whose clients may post a batch: 2025-06-18 removed JSON-RPC batching."""


@dataclasses.dataclass(frozen=True)
class HttpLimits:
    """What one HTTP server accepts (see the module docstring).

    Attributes:
        max_body_bytes: The largest POST body, in bytes; a larger one gets 413.
        max_sessions: The most sessions open at once; one more ``initialize`` gets 503.
        idle_timeout: Seconds a session may go without a request in flight (an open
            GET stream counts as one) before it ends.
        request_timeout: Seconds a request's head may take to arrive from its first
            byte (or from the connection opening), then its body; a slower client is
            disconnected.
        drain_timeout: Seconds the calls still running when the server is stopped
            get to finish; those cut off then are answered with a -32603.
        resume_timeout: Seconds a call whose client disconnected (no stream open
            for its answer) may go on without the client resuming its stream
            (``Last-Event-ID``); it is then cancelled (checked every so many seconds,
            so it ends within twice this).
        max_connections: The most connections open at once; one more is answered
            with 503 and ``Retry-After`` and closed.  ``None``: what the process's
            file-descriptor limit leaves (see `connection_limit`).

    Raises:
        ValueError: A count is not a positive integer, or a time not a positive,
            finite number of seconds.
    """

    max_body_bytes: int = MAX_BODY_BYTES
    max_sessions: int = MAX_SESSIONS
    idle_timeout: float = IDLE_SECONDS
    request_timeout: float = REQUEST_SECONDS
    drain_timeout: float = DRAIN_SECONDS
    resume_timeout: float = RESUME_SECONDS
    max_connections: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_sessions", "max_connections"):
            count = getattr(self, name)
            if name == "max_connections" and count is None:
                continue
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"{name} must be a positive integer, got {count!r}")
        for name in ("idle_timeout", "request_timeout", "drain_timeout", "resume_timeout"):
            seconds = getattr(self, name)
            number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
            if not number or not 0 < seconds < math.inf:
                raise ValueError(f"{name} must be a positive number of seconds, got {seconds!r}")


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


class _SessionEndedUnderRequest(logging.Filter):
    """Drops the mcp package's "SSE response error" record (an ERROR with a traceback)
    for a POST whose session ended (DELETE, idle) while its message was on its way to
    the session: the session's input was closed under it. The client ended the
    session, so the request's stream ends unanswered, as that of a call running then
    does; a client doing this (a request, then DELETE at once) flooded the log, one
    traceback per race. Said at DEBUG on the ``ccwire`` logger instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if record.msg != "SSE response error" or exc is None or not _only_closed(exc):
            return True
        logger.debug("ccwire serve: a request arrived as its HTTP session ended: not served")
        return False


def _only_closed(exc: BaseException) -> bool:
    """Whether ``exc`` is a closed stream's error, or a group of nothing else."""
    inner = getattr(exc, "exceptions", None)  # an exception group (no name for it on 3.10)
    if isinstance(inner, tuple) and inner:
        return all(isinstance(e, BaseException) and _only_closed(e) for e in inner)
    return isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError))


def _quiet_ended_session_races() -> None:
    """Install `_SessionEndedUnderRequest` on the mcp transport's logger, once."""
    transport_logger = logging.getLogger("mcp.server.streamable_http")
    if not any(isinstance(f, _SessionEndedUnderRequest) for f in transport_logger.filters):
        transport_logger.addFilter(_SessionEndedUnderRequest())


def _encode(message: Any) -> bytes:
    """A JSON-RPC message as the transport writes it on its SSE streams."""
    return jsonrpc_message_adapter.dump_json(message, by_alias=True, exclude_unset=True)


class _MemoryEventStore(EventStore):
    """The last `EVENTS_KEPT` events of one session (older ones past `EVENT_BYTES_KEPT`
    bytes dropped), kept encoded, for ``Last-Event-ID`` replays."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._events: deque[tuple[EventId, StreamId, bytes | None]] = deque()
        self._bytes = 0

    @property
    def size(self) -> int:
        """The bytes of the events kept."""
        return self._bytes

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = f"{stream_id}:{next(self._ids)}"
        data = None if message is None else _encode(message)
        self._events.append((event_id, stream_id, data))
        self._bytes += len(data or b"")
        while len(self._events) > 1 and (
            len(self._events) > EVENTS_KEPT or self._bytes - len(data or b"") > EVENT_BYTES_KEPT
        ):
            self._bytes -= len(self._events.popleft()[2] or b"")
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = [i for i, (eid, _, _) in enumerate(self._events) if eid == last_event_id]
        if not found:
            return None
        _, stream_id, _ = self._events[found[0]]
        for event_id, stream, data in list(self._events)[found[0] + 1 :]:
            if stream == stream_id and data is not None:
                message = jsonrpc_message_adapter.validate_json(data, by_name=False)
                await send_callback(EventMessage(message, event_id))
        return stream_id


@dataclasses.dataclass(eq=False)
class _Session:
    transport: StreamableHTTPServerTransport
    version: str
    """The version negotiated by its ``initialize``."""
    running: dict[str, anyio.Event] = dataclasses.field(default_factory=dict)
    """Its requests served and not answered yet, by id (`_serve_transport`)."""
    posting: set[str] = dataclasses.field(default_factory=set)
    """The ids of its requests whose POST is being handled."""

    @contextlib.contextmanager
    def claiming(self, message: dict[str, Any]) -> Iterator[dict[str, Any] | None]:
        """Hold the id of request ``message`` while its POST is handled; yields the
        -32600 error refusing it instead when a request of this session still in
        flight has that id (the transport keeps one stream per id: one of the two
        waited forever for its answer), else ``None``."""
        if "id" not in message or "method" not in message:
            yield None
            return
        key = str(message["id"])  # as the transport keys its streams
        if key in self.posting or key in self.running:
            yield invalid_request(message["id"], "a request of this session with that id "
                                  "is still in flight")  # fmt: skip
            return
        self.posting.add(key)
        try:
            yield None
        finally:
            self.posting.discard(key)


class _AsciiJSONResponse(JSONResponse):
    """A JSON body written in ASCII: a lone surrogate the client sent (in an id its
    error echoes) goes out as the escape it came in as, instead of failing UTF-8."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, allow_nan=False, separators=(",", ":")).encode()


async def _refuse_lingering(refused: Response, receive: Receive, send: Send) -> None:
    """Send the refusal of a body still arriving (413, 408), then read and drop what the
    client goes on sending, for at most `LINGER_SECONDS`, before the answer ends and the
    connection closes.

    A connection closed with data still unread is reset, and a reset can take the answer
    with it: the client that is still sending its body would get "connection reset", not
    the 413. Web servers close such connections lingering for the same reason. The
    answer's bytes (its ``Content-Length`` says how many) go out at once; only the end
    of the exchange waits, for the client to stop sending or to close.
    """
    await send(
        {"type": "http.response.start", "status": refused.status_code,
         "headers": refused.raw_headers}
    )  # fmt: skip
    await send({"type": "http.response.body", "body": refused.body, "more_body": True})
    with anyio.move_on_after(LINGER_SECONDS):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect" or not message.get("more_body", False):
                break
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _refusal(
    status: int,
    message: str,
    code: int = INVALID_REQUEST,
    *,
    req_id: Any = None,
    data: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """An HTTP error whose body is a JSON-RPC error."""
    return _AsciiJSONResponse(
        error(req_id, code, message, data), status_code=status, headers=headers
    )


def _shutting_down() -> Response:
    """The answer to a request arriving once the server is stopped (503)."""
    return _refusal(
        503, "Service Unavailable: the server is shutting down", INTERNAL_ERROR,
        headers={"Connection": "close"},
    )  # fmt: skip


async def _receive_body(receive: Receive, limit: int) -> bytes | Response | None:
    """The body of a request (`McpHttpApp._read_body`), unless it is over ``limit``
    bytes (413) or the client leaves (``None``)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > limit:
            return _refusal(413, f"Payload Too Large: over the limit of {limit} bytes")
        body += chunk
        if not message.get("more_body", False):
            return bytes(body)


async def _routing_refusal(request: Request, exc: Exception) -> Response:
    """The router's refusals (405 for a method the endpoint has not, 404 for another
    path) with a JSON-RPC error body, as every other refusal."""
    assert isinstance(exc, HTTPException)
    why = f"{exc.detail}: the endpoint is {ENDPOINT} (GET, POST, DELETE)"
    return _refusal(exc.status_code, why, headers=exc.headers)


def _problem(message: Any) -> dict[str, Any] | None:
    """The JSON-RPC error for a parsed body that is not one message the transport
    takes (`check_request`, then the ``mcp`` package's envelope: a request with an id
    it cannot carry, such as ``3.5``, would pass for a notification), else ``None``."""
    problem = check_request(message)
    if problem is not None:
        return problem
    try:
        if "method" not in message:
            jsonrpc_message_adapter.validate_python(message, by_name=False)
        elif "id" in message:
            JSONRPCRequest.model_validate(message, by_name=False)
        else:
            JSONRPCNotification.model_validate(message, by_name=False)
    except ValidationError as exc:
        where = [str(part) for part in exc.errors()[0]["loc"]]
        if where[:1] == ["id"]:
            return invalid_request(None, "id must be a string or an integer")
        return invalid_request(None, f"{'.'.join(where)}: {exc.errors()[0]['msg']}")
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` for a request whose body was read already: the body, then what the
    connection says (its end)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def _captured(app: Any, scope: Scope, receive: Receive) -> tuple[int, bytes]:
    """Run ``app`` for one request; its status and body."""
    status = 0
    chunks: list[bytes] = []

    async def capture(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:  # "http.response.body": the transport's answers send no other kind
            chunks.append(message.get("body", b""))

    await app(scope, receive, capture)
    return status, b"".join(chunks)


def _answer_in(status: int, body: bytes, req_id: Any) -> dict[str, Any]:
    """The answer to request ``req_id`` in what the transport sent for it: the
    response on its SSE stream, or the JSON-RPC error it refused it with."""
    found = _found_answer(body, req_id)
    if found is not None:
        return found
    return error(req_id, INTERNAL_ERROR, f"Internal error: no answer (HTTP {status})")


def _found_answer(body: bytes, req_id: Any) -> dict[str, Any] | None:
    """The answer to request ``req_id`` in ``body`` (`_answer_in`), if it holds one (a
    client that left early may have had none sent)."""
    for line in body.decode("utf-8", "replace").splitlines():
        if line.startswith("data:") and line[5:].strip():
            with contextlib.suppress(ValueError):
                message = json.loads(line[5:])
                if isinstance(message, dict) and message.get("id") == req_id:
                    return message
    with contextlib.suppress(ValueError):
        refused = json.loads(body)
        if isinstance(refused, dict) and "error" in refused:
            return {**refused, "id": req_id}
    return None


class McpHttpApp:
    """The ASGI app serving one server over Streamable HTTP (see the module docstring)."""

    def __init__(
        self, server: Any, security: TransportSecuritySettings, limits: HttpLimits | None = None
    ) -> None:
        self.server = server
        self.security = security
        self.limits = limits or HttpLimits()
        _quiet_ended_session_races()
        self.sessions: dict[str, _Session] = {}
        self._checks = TransportSecurityMiddleware(security)
        self._tg: anyio.abc.TaskGroup | None = None
        self._stopping = anyio.Event()
        """Set once the server is stopped: inputs end, new requests get 503."""
        self._halting = anyio.Event()
        """Set once it is stopped again (`halt`): the calls running are cut off at once."""
        self._serving = 0
        """Sessions (and stateless requests) being served now."""
        self._all_served: anyio.Event | None = None
        self._posts = 0
        """POST requests being answered now."""
        self._no_posts = anyio.Event()
        """Set once none are, after the server was stopped."""
        self.cut_off = 0
        """Requests cut off unanswered by the end of serving (each got a -32603)."""

    async def drain(self) -> int:
        """Stop serving: every request arriving from now on gets 503, and the calls
        still running get ``drain_timeout`` seconds to finish; those cut off then are
        answered with a -32603.  Returns their number, once every session's calls are
        answered (bounded)."""
        self._stopping.set()
        self._all_served = anyio.Event()
        if self._serving:
            with anyio.move_on_after(self.limits.drain_timeout + _ANSWER_SECONDS):
                await self._all_served.wait()
        return self.cut_off

    def halt(self) -> None:
        """Cut off at once the calls still running after `drain` began (a second
        signal): each is answered with a -32603 and counted, as at the end of
        ``drain_timeout``; `drain` then returns."""
        self._stopping.set()
        self._halting.set()

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
        return Starlette(
            routes=[route], lifespan=self.lifespan,
            exception_handlers={HTTPException: _routing_refusal},
        )  # fmt: skip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._stopping.is_set():
            await _shutting_down()(scope, receive, send)
            return
        request = Request(scope, receive)
        refused = await self._checks.validate_request(request)  # Host and Origin
        if refused is not None:  # the mcp package's, in plain text
            phrase = HTTPStatus(refused.status_code).phrase
            refused = _refusal(refused.status_code, f"{phrase}: {bytes(refused.body).decode()}")
        version = request.headers.get("mcp-protocol-version")
        if refused is None and version is not None:
            problem = unsupported(None, version)
            if problem is not None:
                refused = _AsciiJSONResponse(problem, status_code=400)
        session_id = request.headers.get("mcp-session-id")
        session = None if session_id is None else self.sessions.get(session_id)
        modern = session_id is None and version in MODERN_VERSIONS
        if refused is None and session_id is not None and session is None:
            refused = _refusal(404, "Session not found")
        if refused is None and request.method != "POST" and session is None:
            refused = (
                _refusal(405, "Method Not Allowed: a 2026-07-28 request is a POST",
                         headers={"Allow": "POST"})
                if modern else _refusal(400, "Bad Request: Missing session ID")
            )  # fmt: skip
        if refused is not None:
            await refused(scope, receive, send)
        elif session is not None and request.method != "POST":
            await self._serve(session, scope, receive, send)
        else:
            self._posts += 1
            try:
                await self._post(request, session, modern, send)
            finally:
                self._posts -= 1
                if not self._posts and self._stopping.is_set():
                    self._no_posts.set()

    async def _post(
        self, request: Request, session: _Session | None, modern: bool, send: Send
    ) -> None:
        scope, receive = request.scope, request.receive
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            refused = _refusal(415, "Unsupported Media Type: Content-Type must be application/json")
            await refused(scope, receive, send)
            return
        body = await self._read_body(scope, receive)
        if body is None:
            return  # the client left
        if isinstance(body, Response):
            await _refuse_lingering(body, receive, send)
            return
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            parse_error = error(None, PARSE_ERROR, f"Parse error: {exc}")
            await _AsciiJSONResponse(parse_error, status_code=400)(scope, receive, send)
            return
        batch = isinstance(message, list) and message != []
        if batch and session is not None and session.version in _BATCHING_VERSIONS:
            await self._batch(session, message, scope, receive, send)
            return
        problem = _problem(message)
        replay = _replay(body, receive)
        if problem is not None:
            await _AsciiJSONResponse(problem, status_code=400)(scope, receive, send)
        elif session is not None:
            with session.claiming(message) as duplicate:
                if duplicate is not None:
                    await _AsciiJSONResponse(duplicate, status_code=400)(scope, receive, send)
                else:
                    await self._serve(session, scope, replay, send)
        elif modern:
            await self._stateless(scope, replay, send)
        elif message.get("method") == "initialize" and "id" in message:
            await self._open(message, scope, replay, send)
        else:
            missing = _refusal(400, "Bad Request: Missing session ID", req_id=message.get("id"))
            await missing(scope, receive, send)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | Response | None:
        """The POST body, or the answer refusing it (too large, too slow), or ``None``
        when the client left.  Never holds more than ``max_body_bytes``."""
        limit = self.limits.max_body_bytes
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            return _refusal(
                413, f"Payload Too Large: {int(declared)} bytes, over the limit of {limit}"
            )
        got: list[bytes | Response | None] = []
        async with anyio.create_task_group() as tg:  # the server stopping ends the wait
            tg.start_soon(_cancel_when, self._stopping, tg.cancel_scope)
            with anyio.move_on_after(self.limits.request_timeout):
                got.append(await _receive_body(receive, limit))
            tg.cancel_scope.cancel()
        if got:
            return got[0]
        if self._stopping.is_set():
            return _shutting_down()
        logger.info("ccwire serve: a request body took over %g s", self.limits.request_timeout)
        return _refusal(
            408,
            f"Request Timeout: the body did not arrive within {self.limits.request_timeout:g} s",
            headers={"Connection": "close"},
        )

    async def _serve(self, session: _Session, scope: Scope, receive: Receive, send: Send) -> None:
        transport = session.transport
        await transport.handle_request(scope, receive, send)
        if transport.is_terminated and transport.mcp_session_id is not None:
            self.sessions.pop(transport.mcp_session_id, None)

    async def _batch(
        self, session: _Session, items: list[Any], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A batch in a session of a version that had them: each message is served as
        if posted alone; the requests' answers make one JSON array (202 if none)."""
        answers: list[dict[str, Any] | None] = [None] * len(items)
        limiter = anyio.CapacityLimiter(BATCH_CONCURRENCY)

        async def serve_one(index: int, item: Any) -> None:
            problem = _problem(item)
            if problem is None and item.get("method") == "initialize":
                problem = invalid_request(item.get("id"), "initialize cannot be part of a batch")
            if problem is not None:
                answers[index] = problem
                return
            body = json.dumps(item).encode()
            handle = session.transport.handle_request
            request = "id" in item and "method" in item
            with session.claiming(item) as duplicate:
                if duplicate is not None:
                    answers[index] = duplicate
                    return
                async with limiter if request else contextlib.nullcontext():
                    status, sent = await _captured(handle, scope, _replay(body, receive))
            if request:
                answers[index] = _answer_in(status, sent, item["id"])

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(items):
                tg.start_soon(serve_one, index, item)
        replies = [answer for answer in answers if answer is not None]
        headers = {"mcp-session-id": session.transport.mcp_session_id or ""}
        if replies:
            await _AsciiJSONResponse(replies, headers=headers)(scope, receive, send)
        else:
            await Response(status_code=202, headers=headers)(scope, receive, send)

    async def _open(
        self, message: dict[str, Any], scope: Scope, receive: Receive, send: Send
    ) -> None:
        if len(self.sessions) >= self.limits.max_sessions:
            logger.warning(
                "ccwire serve: refused a new HTTP session: %d are open (the limit)",
                len(self.sessions),
            )
            refused = _refusal(
                503, f"Too many open sessions ({len(self.sessions)}); try again once one ends",
                INTERNAL_ERROR, req_id=message["id"],
            )  # fmt: skip
            await refused(scope, receive, send)
            return
        params = message.get("params") or {}
        session_id = uuid.uuid4().hex
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id, event_store=_MemoryEventStore(),
            security_settings=self.security, idle_timeout=self.limits.idle_timeout,
            retry_interval=RETRY_MS,
        )  # fmt: skip
        session = _Session(transport, negotiate(params.get("protocolVersion")))
        self.sessions[session_id] = session
        status: list[int] = []
        sent: list[bytes] = []  # the answer (small: the server's capabilities)

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            else:
                sent.append(message.get("body", b""))
            await send(message)

        assert self._tg is not None
        await self._tg.start(self._run, transport, session_id, session.running)
        try:
            await transport.handle_request(scope, receive, watch)
        finally:  # refused, or answered with an error (bad params): no session was opened
            answer = _found_answer(b"".join(sent), message["id"])
            if not status or status[0] >= 400 or (answer is not None and "error" in answer):
                self.sessions.pop(session_id, None)
                with anyio.CancelScope(shield=True):
                    await transport.terminate()

    async def _run(
        self,
        transport: StreamableHTTPServerTransport,
        session_id: str,
        running: dict[str, anyio.Event],
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        self._serving += 1
        try:
            async with transport.connect() as (read, write):
                task_status.started()
                scope = transport.idle_scope or anyio.CancelScope()
                try:
                    with scope:
                        cut_off = await _serve_transport(
                            self.server, read, write, self._stopping, self._halting,
                            self.limits, transport, running,
                        )  # fmt: skip
                        self.cut_off += cut_off  # (read once they ended: sessions overlap)
                        if self._stopping.is_set() and self._posts:  # answers on their way
                            with anyio.move_on_after(_ANSWER_SECONDS):
                                await self._no_posts.wait()
                    if scope.cancelled_caught:
                        logger.info("ccwire serve: HTTP session %s ended, idle", session_id)
                finally:  # terminated before its streams close: the transport expects it
                    await self._end(transport, session_id)
        except Exception:
            logger.exception("ccwire serve: HTTP session %s failed", session_id)
        finally:
            await self._end(transport, session_id)
            self._serving -= 1
            if not self._serving and self._all_served is not None:
                self._all_served.set()

    async def _end(self, transport: StreamableHTTPServerTransport, session_id: str) -> None:
        """Forget a session (its id gets 404 from now on) and terminate its transport."""
        self.sessions.pop(session_id, None)
        if not transport.is_terminated:
            with anyio.CancelScope(shield=True):
                await transport.terminate()

    async def _stateless(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = StreamableHTTPServerTransport(
            mcp_session_id=None, security_settings=self.security
        )
        assert self._tg is not None
        await self._tg.start(self._run, transport, "(stateless)", {})
        try:
            await transport.handle_request(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await transport.terminate()


async def _serve_transport(
    server: Any,
    read: Any,
    write: Any,
    stopping: anyio.Event,
    halting: anyio.Event,
    limits: HttpLimits,
    transport: StreamableHTTPServerTransport,
    running: dict[str, anyio.Event],
) -> int:
    """Serve the messages of one transport's streams with a `ClientLink`, until they
    end or ``stopping`` is set; returns the number of requests the server stopping
    cut off (`serve_lines`: at the end of ``drain_timeout``, or at once when
    ``halting`` is set).  The session ended by its client (DELETE): its calls
    are cancelled at once (their answers have nowhere to go).  A call with no stream
    open for its answer (its client disconnected) for ``resume_timeout`` is
    cancelled, as by ``notifications/cancelled``.  ``running``: the requests served,
    by id, each an event set once it is answered (filled here)."""
    unanswered: dict[str, Callable[[], Awaitable[None]]] = {}
    inbox_in, inbox = anyio.create_memory_object_stream[Any]()
    taking = anyio.CancelScope()
    ended = anyio.Event()  # the client ended the session, or the server halts: cut calls off

    async def take() -> None:
        """Hand what the transport reads on, until it ends or the server stops."""
        with inbox_in, taking, contextlib.suppress(anyio.ClosedResourceError):
            async for item in read:  # taken, it is served: the server stopping waits
                with anyio.CancelScope(shield=True), anyio.move_on_after(_ANSWER_SECONDS):
                    await inbox_in.send(item)
        if not taking.cancel_called:
            ended.set()

    def settle(req_id: Any) -> None:
        running.pop(str(req_id), anyio.Event()).set()  # (a fresh one: not a request)

    async def writer(message: dict[str, Any], related: Any = None) -> None:
        # what JSON cannot carry raises here, as on stdio: the transport would write
        # NaN as null and fail the whole session on a lone surrogate
        encode_line(message)
        if "method" not in message:  # an answer: its request is not unanswered
            unanswered.pop(str(message.get("id")), None)
            settle(message.get("id"))
        metadata = None if related is None else ServerMessageMetadata(related_request_id=related)
        item = to_session_message(message)
        try:
            await write.send(SessionMessage(item.message, metadata=metadata))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("ccwire serve: HTTP session ended; %s not sent", message.get("method"))

    async def on_unanswered(req_id: Any) -> None:
        settle(req_id)
        callback = unanswered.pop(str(req_id), None)
        if callback is not None:
            await callback()

    async def messages() -> AsyncIterator[Any]:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.EndOfStream):
            async for item in _items(inbox):
                yield item

    async def _items(read: Any) -> AsyncIterator[Any]:
        async for item in read:
            if isinstance(item, dict):  # a cancellation of ours (`watch`)
                yield item
                continue
            if isinstance(item, Exception):
                logger.debug("ccwire serve: HTTP transport: %s", item)
                continue
            metadata = item.metadata
            callback = getattr(metadata, "on_request_unanswered", None)
            data = from_message(item, as_parsed=True)  # a NaN is refused, not null
            if callback is not None and "id" in data:
                unanswered[str(data["id"])] = callback
            if "id" in data and "method" in data and transport.mcp_session_id is not None:
                running[str(data["id"])] = answered = anyio.Event()
                tg.start_soon(_cancel_once_left, data["id"], answered, limits.resume_timeout,
                              stopping, transport, inbox_in)  # fmt: skip
            yield data

    with inbox:
        async with anyio.create_task_group() as tg:
            tg.start_soon(take)
            tg.start_soon(_cancel_when, stopping, taking)
            tg.start_soon(_halt_when, halting, stopping, ended)
            cut_off = await serve_lines(
                server, messages(), writer, on_unanswered=on_unanswered,
                drain_seconds=limits.drain_timeout, halt=ended,
            )  # fmt: skip
            tg.cancel_scope.cancel()
    return cut_off if taking.cancel_called else 0  # a session the client ended lost nothing


async def _cancel_once_left(
    req_id: Any,
    answered: anyio.Event,
    seconds: float,
    stopping: anyio.Event,
    transport: StreamableHTTPServerTransport,
    inbox: MemoryObjectSendStream[Any],
) -> None:
    """Cancel the call ``req_id`` (as by ``notifications/cancelled``, put in ``inbox``)
    once no stream was open for its answer for ``seconds``: its client left and did
    not resume the stream.  Returns once it is answered, or the server stops."""
    while True:
        with anyio.move_on_after(seconds):
            await answered.wait()
        if answered.is_set() or stopping.is_set():
            return
        streams = getattr(transport, "_request_streams", None)  # the mcp package's
        if streams is not None and str(req_id) not in streams:  # nowhere to answer
            logger.info("ccwire serve: cancelled call %r: its client left", req_id)
            gone = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": req_id, "reason": "the client left"}}  # fmt: skip
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await inbox.send(gone)
            return


_HEAD_END: Final = re.compile(rb"\n\r?\n")
"""The end of a request head, as h11 finds it."""


class _HeadMeter:
    """The bytes of one request head as they arrive, in reads of any size: h11 bounds
    only a head still incomplete, and takes a longer one that arrives in one read."""

    def __init__(self) -> None:
        self._size = 0
        self._tail = b""  # the last bytes seen: the head's end may straddle two reads
        self._ended = False

    def over_limit(self, data: bytes) -> bool:
        """Whether the head, with ``data``, is over `MAX_HEAD_BYTES` (what follows
        its end is the body's)."""
        if self._ended:
            return False
        window = self._tail + data
        end = _HEAD_END.search(window)
        self._size += end.end() - len(self._tail) if end else len(data)
        self._tail = window[-2:]
        self._ended = end is not None
        return self._size > MAX_HEAD_BYTES


def _head_too_large() -> bytes:
    """The whole answer to a request head over `MAX_HEAD_BYTES` (431, JSON-RPC body)."""
    why = f"Request Header Fields Too Large: over the limit of {MAX_HEAD_BYTES} bytes"
    body = _AsciiJSONResponse(error(None, INVALID_REQUEST, why)).body
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
    )


_HEAD_TOO_LARGE: Final = _head_too_large()


_OUT_OF_DESCRIPTORS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""The errors of an ``accept`` that asyncio retries a second later (its own list)."""


def raise_fd_limit() -> None:
    """Raise the process's soft file-descriptor limit (``RLIMIT_NOFILE``) to its hard
    one, as far as the system lets it (logged at DEBUG); nothing where there is none."""
    try:
        import resource
    except ImportError:  # Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:  # an unlimited hard limit is no soft one (macOS)
        logger.debug("ccwire serve: file-descriptor limit left at %d: %s", soft, exc)
        return
    logger.debug("ccwire serve: raised the file-descriptor limit from %d to %d", soft, hard)


def _open_descriptors() -> int:
    for listing in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return len(os.listdir(listing)) - 1  # less the listing's own
    return 16  # pragma: no cover - no listing: a guess


def descriptor_room() -> int | None:
    """The file descriptors a server may still open for its connections: the soft
    ``RLIMIT_NOFILE`` less those open now, `FD_RESERVE` and `BACKLOG` (asyncio accepts
    up to that many connections in a row before any is answered) (``None`` if
    unknown)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    return soft - _open_descriptors() - FD_RESERVE - BACKLOG


def connection_limit(room: int | None) -> int:
    """The default ``max_connections``: half of ``room`` (`descriptor_room`), the other
    half left for the connections refused, each open while its 503 goes out."""
    return _FALLBACK_CONNECTIONS if room is None else max(1, room // 2)


class _Throttled:
    """A warning logged at most once per `WARN_SECONDS`, with the number of times it
    happened since it was last logged."""

    def __init__(self, template: str) -> None:
        self._template = template  # %(count)d and the names given to `note`
        self._count = 0
        self._last = -math.inf

    def note(self, **values: object) -> None:
        self._count += 1
        now = time.monotonic()
        if now - self._last >= WARN_SECONDS:
            logger.warning(self._template, {**values, "count": self._count, "every": WARN_SECONDS})
            self._count, self._last = 0, now


@dataclasses.dataclass(eq=False)
class _Connections:
    """What the connections of one server share: their limit, the connections being
    refused (each open until its client closes, for at most `LINGER_SECONDS`), oldest
    first, and the room for those (beyond it, the oldest is closed: its client has had
    its answer longest)."""

    limit: int
    lingering_room: int
    refusing: dict[asyncio.Transport, None] = dataclasses.field(default_factory=dict)
    refused: _Throttled = dataclasses.field(
        default_factory=lambda: _Throttled(
            "ccwire serve: refused %(count)d connection(s) with 503: %(limit)d open, the "
            "limit (--max-connections; this warning comes at most once every %(every)g s)"
        )
    )

    def close_refusing(self) -> None:
        for transport in list(self.refusing):
            transport.close()


def _busy_answer(limit: int) -> bytes:
    """The whole answer to a connection over the limit (503, ``Retry-After``, a
    JSON-RPC error) written as soon as it is accepted, before any request."""
    why = (
        f"Service Unavailable: {limit} connections are open, the server's limit; "
        f"retry in {RETRY_AFTER_SECONDS} s"
    )
    body = _AsciiJSONResponse(error(None, INTERNAL_ERROR, why)).body
    return (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        b"retry-after: %d\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
        % (RETRY_AFTER_SECONDS, len(body), body)
    )


class _Refusal:
    """A connection over the limit, in place of its HTTP protocol: answered at once
    with 503 (see `_timed_protocol`), half-closed, then closed when its client closes,
    or after `LINGER_SECONDS`, or when ``connections`` needs its room for a newer one;
    what the client sends meanwhile is dropped."""

    def __init__(self, connections: _Connections, answer: bytes) -> None:
        self._connections = connections
        self._answer = answer
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:
        import asyncio

        self._transport = transport
        self._connections.refused.note(limit=self._connections.limit)
        transport.write(self._answer)
        refusing = self._connections.refusing
        while refusing and len(refusing) >= self._connections.lingering_room:
            oldest = next(iter(refusing))
            del refusing[oldest]
            oldest.close()
        if self._connections.lingering_room < 1:
            transport.close()  # no room to linger: closed once the answer is out
            return
        refusing[transport] = None
        transport.write_eof()
        self._timer = asyncio.get_running_loop().call_later(LINGER_SECONDS, transport.close)

    def data_received(self, data: bytes) -> None:
        """Dropped: the answer is out."""

    def eof_received(self) -> bool | None:
        return None  # closed

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._connections.refusing.pop(self._transport, None)  # type: ignore[arg-type]

    def pause_writing(self) -> None:
        """Nothing more is written."""

    def resume_writing(self) -> None:
        """Nothing more is written."""


class _AcceptFailures:
    """The event loop's exception handler while a server runs: an ``accept`` that
    failed for want of file descriptors (which asyncio reports for each of the
    ``backlog`` accepts it tries in a row, each with its traceback, retrying all a
    second later) is one warning per `WARN_SECONDS`; anything else goes to the
    handler there was."""

    def __init__(self, previous: Callable[[Any, dict[str, Any]], object] | None) -> None:
        self.previous = previous
        self.last: float | None = None
        """When (``time.monotonic()``) an accept last failed."""
        self.closed = False
        self._warning = _Throttled(
            "ccwire serve: out of file descriptors (%(error)s): %(count)d connection "
            "accept(s) failed; they wait to be accepted until connections close (raise "
            "`ulimit -n` or lower --max-connections; this warning comes at most once "
            "every %(every)g s)"
        )

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = str(context.get("message", ""))
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_DESCRIPTORS and "accept" in message:
            self.last = time.monotonic()
            name = errno.errorcode.get(exc.errno or 0, "?")
            self._warning.note(error=f"{name}: {exc.strerror}")
            return
        if self.closed and isinstance(exc, ValueError) and "_start_serving" in message:
            return  # a retry asyncio scheduled, due after the listening socket closed
        if self.previous is None:
            loop.default_exception_handler(context)
        else:
            self.previous(loop, context)


def _close(transport: asyncio.BaseTransport | None, why: str, answer: bytes = b"") -> None:
    """Write ``answer`` on a connection still open and close it (logged at INFO)."""
    if transport is not None and not transport.is_closing():
        logger.info("ccwire serve: %s", why)
        if answer:
            transport.write(answer)  # type: ignore[attr-defined]
        transport.close()


def _timed_protocol(seconds: float, connections: _Connections) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, with a deadline for each request's head and a limit on
    the connections open at once.

    uvicorn closes a connection idle between two requests (``timeout_keep_alive``)
    but lets a request's head take forever: every byte restarts its clock.  Here the
    head must arrive whole within ``seconds`` of its first byte (or of the connection
    opening), else the connection is closed.  (The body's deadline is the app's.)

    A connection accepted while ``connections.limit`` are open is answered at once
    with 503 (`_busy_answer`) and closed.  (uvicorn's own ``limit_concurrency`` does
    not do: it answers only a connection's request, keeping one that sends none open
    until it times out, so idle connections still take every descriptor; its 503 has
    no ``Retry-After`` nor JSON-RPC body, and it logs a warning for each.)  The answer
    goes out whole, the connection half-closed; what the client sends is dropped until
    it closes, for at most `LINGER_SECONDS` (a connection closed with data unread is
    reset, which could take the answer with it); the oldest of those is closed
    first when ``connections.lingering_room`` is full.
    uvicorn takes the class of its connections' protocol as ``Config(http=...)``.
    """
    import asyncio

    from uvicorn.protocols.http.h11_impl import H11Protocol

    busy = _busy_answer(connections.limit)

    class TimedH11Protocol(asyncio.Protocol):
        def __init__(self, config: Any, server_state: Any, app_state: Any, _loop: Any = None):
            self._http: Any = H11Protocol(config, server_state, app_state, _loop)
            self._open: set[Any] = server_state.connections  # uvicorn's, of those served
            self._timer: asyncio.TimerHandle | None = None
            self._transport: asyncio.BaseTransport | None = None
            self._head = _HeadMeter()
            self._refused = False

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._transport = transport
            if len(self._open) >= connections.limit:  # answered by a `_Refusal` instead
                self._refused, self._http = True, _Refusal(connections, busy)
                self._http.connection_made(transport)
                return
            self._http.connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return  # dropped: the answer is out
            cycle = self._http.cycle
            if self._timer is None and (cycle is None or cycle.response_complete):
                self._arm()  # the first byte of a request's head
            if self._timer is not None and self._head.over_limit(data):
                self._refuse_head()
                return
            self._http.data_received(data)
            if self._http.cycle is not cycle:
                self._disarm()  # the head arrived: the request is the app's

        def eof_received(self) -> bool | None:
            return self._http.eof_received()  # type: ignore[no-any-return]

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._http.connection_lost(exc)

        def pause_writing(self) -> None:
            self._http.pause_writing()

        def resume_writing(self) -> None:
            self._http.resume_writing()

        def _arm(self) -> None:
            self._timer = asyncio.get_running_loop().call_later(seconds, self._expire)
            self._head = _HeadMeter()

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _refuse_head(self) -> None:
            self._disarm()
            why = f"refused a request head over {MAX_HEAD_BYTES} bytes"
            _close(self._transport, why, _HEAD_TOO_LARGE)

        def _expire(self) -> None:
            self._timer = None
            _close(self._transport, f"closed a connection: no request head in {seconds:g} s")

    return TimedH11Protocol


def _connections(given: int | None) -> _Connections:
    """The connection limit (``given``, else `connection_limit`) and the room left to
    linger on refused ones; a warning if ``given`` leaves no descriptors for them."""
    room = descriptor_room()
    limit = given or connection_limit(room)
    if room is None:
        return _Connections(limit, limit)
    if given is not None and given > room:
        logger.warning(
            "ccwire serve: --max-connections %d is more than the file-descriptor limit "
            "leaves room for (%d): past that, connections wait to be accepted instead "
            "of getting a 503 (raise `ulimit -n`)", given, max(room, 0)
        )  # fmt: skip
    return _Connections(limit, max(room - limit, 0))


def _graceful(config: Any, app: McpHttpApp, stop: anyio.Event) -> Any:
    """A uvicorn server that, told to stop (Ctrl-C, SIGTERM), first lets ``stop`` be
    set and waits for ``should_exit`` (set once the app drained); a second signal
    cuts the calls still running off at once (`McpHttpApp.halt`: each answered and
    counted), and a third stops it at once, as uvicorn does."""
    import asyncio

    import uvicorn

    loop = asyncio.get_running_loop()

    class GracefulServer(uvicorn.Server):
        draining = False
        halting = False
        stopped_by: int | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.halting:
                super().handle_exit(sig, frame)
                return
            if self.draining:  # a signal handler: the loop sets the events
                self.halting = True
                loop.call_soon_threadsafe(app.halt)
                return
            self.draining = True
            self.stopped_by = sig
            loop.call_soon_threadsafe(stop.set)

    return GracefulServer(config)


def _exposed_warning(host: str, port: int) -> str:
    """The warning line for a server reachable beyond this machine (bound to an address
    that is not a loopback one), which has no authentication; else ``""``."""
    try:
        if ipaddress.ip_address(host).is_loopback:
            return ""
    except ValueError:  # a name: loopback only if it is localhost
        if host.lower() == "localhost":
            return ""
    if host in ("0.0.0.0", "::"):
        names = "a loopback name (bind to one address to have its name accepted)"
    else:
        names = f"{host} or a loopback name"
    return (
        f"ccwire: warning: serving beyond this machine ({host}) without authentication: "
        f"whoever reaches port {port} can call every tool; the Host header of a request "
        f"must name {names}\n"
    )


async def serve_http(
    server: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    announce: Any = None,
    limits: HttpLimits | None = None,
    on_end: Callable[[], object] | None = None,
    on_drain: Callable[[], object] | None = None,
) -> int:
    """Serve ``server`` over Streamable HTTP at ``http://host:port/mcp`` until stopped.

    Once the port is bound (``port`` 0 picks a free one), one line naming the URL is
    written to ``announce`` (a text stream, e.g. stderr), if given, after a warning
    line if ``host`` is not a loopback address (no authentication guards the tools).  ``limits``
    bounds what the server accepts (`HttpLimits`; its defaults if not given).  Runs
    on asyncio (uvicorn).

    Stopped (Ctrl-C, SIGTERM), it answers every request arriving from then on with
    503 and gives the calls still running ``drain_timeout`` seconds; those cut off
    then are answered with a -32603.  Returns their number; when none was cut off,
    the signal that stopped it is raised again once the server is down, as uvicorn
    does (Ctrl-C ends in `KeyboardInterrupt`); ``on_end`` is called before it.  A
    second signal cuts the calls still running off at once (each answered with the
    -32603, and counted); a third stops it at once.  ``on_drain`` is called when the
    calls running start their ``drain_timeout``.
    """
    import asyncio
    import socket
    from asyncio.constants import ACCEPT_RETRY_DELAY

    import uvicorn

    limits = limits or HttpLimits()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:  # closed if it cannot bind too
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
        bound = sock.getsockname()[1]
        connections = _connections(limits.max_connections)
        app = McpHttpApp(server, security_settings(host, bound), limits)
        config = uvicorn.Config(
            app.starlette(), log_level="warning", lifespan="on", ws="none",
            http=_timed_protocol(limits.request_timeout, connections),
            h11_max_incomplete_event_size=MAX_HEAD_BYTES, timeout_keep_alive=KEEP_ALIVE_SECONDS,
            backlog=BACKLOG,
            # once drained: a response a client no longer reads would be waited for ever
            timeout_graceful_shutdown=_UNREAD_SECONDS,
        )  # fmt: skip
        stop = anyio.Event()
        served = _graceful(config, app, stop)

        async def drain_once_stopped() -> None:
            await stop.wait()
            if on_drain is not None:
                on_drain()
            await app.drain()
            served.should_exit = True

        if announce is not None:
            shown = f"[{host}]" if ":" in host else host
            announce.write(_exposed_warning(host, bound))
            announce.write(f"ccwire: serving MCP on http://{shown}:{bound}{ENDPOINT}\n")
            announce.flush()
        loop = asyncio.get_running_loop()
        failures = _AcceptFailures(loop.get_exception_handler())
        loop.set_exception_handler(failures)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain_once_stopped)
                await served.serve(sockets=[sock])
                tg.cancel_scope.cancel()
        finally:
            connections.close_refusing()
            failures.closed = True
            if failures.last is not None:  # retries of a failed accept may still be due
                due = failures.last + ACCEPT_RETRY_DELAY - time.monotonic()
                with anyio.CancelScope(shield=True):
                    await anyio.sleep(min(max(due, 0) + 0.1, 2))
            loop.set_exception_handler(failures.previous)
    # the default handlers are back
    return raise_stopping_signal(served.stopped_by, app.cut_off, on_end)
