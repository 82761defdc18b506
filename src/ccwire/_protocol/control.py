"""The control protocol's driver: the one async part around the I/O-free `core`.

`ControlProtocol.run()` owns a task group for the life of the connection: it starts the
transport in it, reports readiness, then reads the CLI's output line by line, hands
each line to `ProtocolCore` and acts on what it returns:

* a conversation frame goes to ``on_message``;
* a ``control_request`` is served by the route registered for its subtype, in a task of
  its own (so a slow tool call never holds up anything else); whatever the route gives
  (a value, or an awaitable of one) is answered the same way, through the core, which
  guarantees one answer per request;
* a ``control_cancel_request`` cancels the serving task (the CLI wants no answer);
* a ``control_response`` wakes the `ControlProtocol.request()` waiting for it.

When the output ends, every waiter fails with the same typed error and every request
still being served is cancelled. Nothing of this raises into the caller: failures go
to ``on_error`` and the message stream.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Union, final

import anyio
import anyio.abc

from .._core.cancel import is_cancellation, no_scope_cancelled, raised_by_callback
from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    ControlProtocolError,
    ControlTimeoutError,
    MessageDecodeError,
)
from .._core.loops import asyncio_uncancel
from .._transport.base import LineTransport
from .._wire import codec
from .._wire.dialog_types import ANSWER_LATER, AnswerLater
from .._wire.messages import Message
from .core import (
    ConnectionState,
    LineSkipped,
    MessageReceived,
    ProtocolCore,
    ProtocolViolation,
    RequestReceived,
    RequestWithdrawn,
    ResponseReceived,
    UndecodableRequest,
    UnencodableAnswer,
)
from .workers import Workers

__all__ = [
    "ANSWERED_BY_ROUTE",
    "NO_REPLY",
    "Answerer",
    "ConnectionState",
    "ControlEvent",
    "ControlObserver",
    "ControlProtocol",
    "IncomingCall",
    "RouteHandler",
]

logger = logging.getLogger("ccwire")


@final
class _NoReply:
    """The type of `NO_REPLY`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_REPLY"


NO_REPLY: Final = _NoReply()
"""Returned by a route handler that must write nothing (a cancelled MCP call)."""


class Answerer(enum.Enum):
    """Who gives a request of the CLI its one answer (`IncomingCall.claim_answer`)."""

    ROUTE = "route"
    """The route: what its handler returns is the answer."""
    LATER = "later"
    """`ControlProtocol.answer_later`."""


ANSWERED_BY_ROUTE: Final = Answerer.ROUTE
"""`IncomingCall.claim_answer` by the route: what its handler returns is the answer."""
ANSWERED_LATER: Final = Answerer.LATER
"""`IncomingCall.claim_answer` by `ControlProtocol.answer_later`."""


class IncomingCall:
    """One request of the CLI being served. ``cancelled`` is set when the CLI withdraws it
    (or the connection ends); the route runs inside ``scope``, which is cancelled then."""

    def __init__(self, request_id: str, subtype: str) -> None:
        self.request_id = request_id
        self.subtype = subtype
        self.scope: anyio.CancelScope | None = None
        """The cancel scope enclosing the route alone while it runs (its worker's: see
        `Workers`); ``None`` before and after."""
        self.withdrawn = False
        """Whether `withdraw()` was called."""
        self.cli_withdrew = False
        """Whether the CLI withdrew it (``control_cancel_request``), not the connection's
        end."""
        self.answered_by: Answerer | None = None
        """Who claimed the one answer (`claim_answer`), if anyone has."""
        self.on_answered: Callable[[], object] | None = None
        """Set by a handler: called once what it returned is given to the CLI as the
        answer (not if the CLI withdrew the request first, or the connection ended)."""
        self._event: anyio.Event | None = None

    def claim_answer(self, by: Answerer) -> bool:
        """Claim the request's one answer for ``by`` (`Answerer.ROUTE`: what its handler
        returns; `Answerer.LATER`: `ControlProtocol.answer_later`). True if it is ``by``'s
        (claimed now, or by ``by`` before); False if the other answerer has it. A handler
        claims before it commits to an answer of its own (a timeout's deny); the answer
        not claimed is not written."""
        if self.answered_by is None:
            self.answered_by = by
        return self.answered_by == by

    @property
    def cancelled(self) -> anyio.Event:
        """Set once the CLI withdraws the request (or the connection ends); made on first
        use (most requests are answered before anyone looks)."""
        if self._event is None:
            self._event = anyio.Event()
            if self.withdrawn:
                self._event.set()
        return self._event

    def withdraw(self, *, by_cli: bool = True) -> None:
        """Mark the request withdrawn (by the CLI, else by the connection's end) and
        cancel its handler (at once if it runs, else when it starts)."""
        self.withdrawn = True
        self.cli_withdrew = self.cli_withdrew or by_cli
        if self._event is not None:
            self._event.set()
        if self.scope is not None:
            self.scope.cancel()


@dataclass(frozen=True)
class ControlEvent:
    """An incoming control request started (``outcome`` None) or finished.

    ``outcome`` is ``"ok"``, ``"error"`` (``detail`` holds the message) or
    ``"cancelled"`` (withdrawn by the CLI or the connection ended); ``response`` is the
    answer body we sent, if any.
    """

    request_id: str
    subtype: str
    request: Mapping[str, Any]
    outcome: str | None = None
    response: Mapping[str, Any] | None = None
    detail: str | None = None


ControlObserver = Callable[[ControlEvent], None]
"""Called synchronously when an incoming control request starts and when it finishes."""

ReplyGate = Callable[[], Awaitable[None]]
"""Awaited before every answer to the CLI is written (used to pause a session)."""

Answer = Union[Mapping[str, Any], _NoReply, AnswerLater, None]
"""What a route gives: the response body, ``None`` (an empty success), `NO_REPLY`, or
`ANSWER_LATER` (the request stays owed until `ControlProtocol.answer_later()`)."""

RouteHandler = Callable[[codec.ControlRequest, IncomingCall], Union[Answer, Awaitable[Answer]]]
"""``handler(request, call) -> answer | awaitable of an answer``."""


@dataclass
class _Route:
    handler: RouteHandler
    fallback: UnencodableAnswer | None


class _Pending:
    """One request of ours awaiting its ``control_response``."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: codec.ControlResponse | None = None
        self.error: BaseException | None = None


class _ReadGate:
    """Open or closed; the reader waits while it is closed (flow control)."""

    def __init__(self) -> None:
        self.open = anyio.Event()
        self.open.set()

    def close(self) -> None:
        if self.open.is_set():
            self.open = anyio.Event()

    def reopen(self) -> None:
        self.open.set()


class ControlProtocol:
    """Speaks the control protocol over one transport. See the module docstring."""

    def __init__(
        self,
        transport: LineTransport,
        *,
        routes: Mapping[str, RouteHandler] | None = None,
        on_message: Callable[[Message | MessageDecodeError, int], None],
        on_closed: Callable[[CcwireError | None], None],
        on_error: Callable[[str, BaseException], None] | None = None,
        control_timeout: float = 60.0,
    ) -> None:
        self._core = ProtocolCore()
        self._transport = transport
        self._routes = {subtype: _Route(h, None) for subtype, h in (routes or {}).items()}
        self._on_message = on_message
        self._on_closed = on_closed
        self._on_error = on_error
        self._control_timeout = control_timeout
        self._closed_error: CcwireError | None = None
        self._pending: dict[str, _Pending] = {}
        self._calls: dict[str, IncomingCall] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._workers: Workers | None = None
        self._gate = _ReadGate()
        self._observers: list[ControlObserver] = []
        self._initialize_ids: set[str] = set()  # our initialize requests awaiting answers
        self._closed_by_us = False  # aclose() ran: a waiter's answer is lost to it, not the CLI
        self.reply_gate: ReplyGate | None = None
        """If set, awaited before each answer to a CLI request is written."""
        self.clock: Callable[[], float] | None = None
        """If set (``anyio.current_time``), `last_heard` is kept (a clock read a line)."""
        self.last_heard = 0.0
        """When, by `clock`, the CLI last wrote a line or a request of its was last
        answered (it may wait on nothing before then)."""

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> ConnectionState:
        """The connection's lifecycle state."""
        return self._core.state

    @property
    def closed_error(self) -> CcwireError | None:
        """Why the connection ended, if it ended badly."""
        return self._closed_error

    @property
    def serving(self) -> int:
        """How many requests of the CLI are being served or left to answer later (it
        waits on us meanwhile)."""
        return len(self._core.owed)

    @property
    def skipped_lines(self) -> int:
        """How many lines of the CLI's output were not JSON frames (logged, skipped)."""
        return self._core.skipped_lines

    def add_observer(self, observer: ControlObserver) -> Callable[[], None]:
        """Watch incoming control requests; returns a function that stops watching."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def _notify(self, event: ControlEvent) -> None:
        for observer in tuple(self._observers):
            try:
                observer(event)
            except Exception:
                logger.exception("ccwire: a control observer raised")

    def add_route(
        self, subtype: str, handler: RouteHandler, *, unencodable: UnencodableAnswer | None = None
    ) -> None:
        """Register (or replace) the handler of an incoming request subtype.

        ``unencodable(request, cause)`` gives the answer to send instead of one that
        cannot be encoded as JSON; without it (or if its answer cannot be encoded either)
        the CLI gets an error answer naming the cause.
        """
        self._routes[subtype] = _Route(handler, unencodable)

    # -------------------------------------------------------------- lifecycle

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Start the transport, report readiness, and serve the connection until the
        CLI's output ends (then every request still being served is cancelled).

        Start it with ``await task_group.start(protocol.run)``; it raises only if the
        transport cannot be started (before readiness).
        """
        failed: Exception | None = None
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self._workers = Workers(tg, "ccwire control request")
                try:
                    await self._transport.start(tg)
                except Exception as exc:
                    # raised as it is once the task group is left (raised in it, it would
                    # reach the caller wrapped in an ExceptionGroup); whatever the
                    # transport started there is cancelled
                    failed = exc
                    tg.cancel_scope.cancel()
                else:
                    self._core.transition(ConnectionState.OPEN)
                    self._heard()
                    task_status.started()
                    await self._read()  # then the group waits for the requests being served
        except BaseException as exc:
            # a task of the connection failed (a callback that raised KeyboardInterrupt or
            # SystemExit, a bug below us) and took the reader down, or the connection was
            # cancelled from outside: every waiter and reader still gets an end
            self._finish(_ended_by(exc))
            raise
        if failed is not None:
            raise failed

    async def end_input(self) -> None:
        """Close the CLI's stdin: it finishes queued work and exits."""
        if self._core.state is ConnectionState.OPEN:
            self._core.transition(ConnectionState.CLOSING)
        await self._transport.end_input()

    async def abort(self, error: CcwireError) -> None:
        """End the connection with ``error`` (every waiter and the message stream get it)
        and stop the CLI (bounded, shielded)."""
        self._finish(error)
        await self.aclose()

    async def aclose(self) -> None:
        """Shut the transport down (bounded, shielded) and release every waiter."""
        with anyio.CancelScope(shield=True):
            self._closed_by_us = True
            if self._core.state is ConnectionState.OPEN:
                self._core.transition(ConnectionState.CLOSING)
            await self._transport.aclose()
            self._finish(None)

    # ------------------------------------------------------------------ write

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        """Encode and write one frame (never a non-JSON line)."""
        self._check_writable()
        await self._transport.send_line(self._core.encode(frame))

    def _check_writable(self) -> None:
        if self._core.state not in (ConnectionState.OPEN, ConnectionState.NEW):
            raise self._closed_error or CLIConnectionError("the CLI connection is closed")

    async def request(
        self,
        subtype: str,
        fields: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_written: Callable[[], None] | None = None,
    ) -> Mapping[str, Any]:
        """Send a control request and wait (bounded) for its answer.

        ``on_written`` is called once the request is written, before its answer: what
        is sent after that reaches the CLI behind it (several requests and a prompt
        written in order, their answers awaited together).

        Raises `ControlProtocolError` when the CLI answers with an error,
        `ControlTimeoutError` after ``timeout`` (default: the control timeout),
        and the connection's error if it ends first.
        """
        if self._core.state is not ConnectionState.OPEN:
            raise self._closed_error or CLIConnectionError(
                f"cannot send {subtype!r}: the CLI connection is {self._core.state.value}"
            )
        limit = self._control_timeout if timeout is None else timeout
        rid, line = self._core.send_request(subtype, fields or {})
        pending = self._pending[rid] = _Pending()
        if subtype == codec.INITIALIZE:
            self._initialize_ids.add(rid)
        try:
            await self._transport.send_line(line)
            if on_written is not None:
                on_written()
            with anyio.move_on_after(limit) as scope:
                await pending.done.wait()
            if scope.cancelled_caught:
                await self._withdraw(rid)
                raise ControlTimeoutError(subtype, limit)
        finally:
            self._pending.pop(rid, None)
            self._initialize_ids.discard(rid)
            self._core.withdraw_request(rid)  # a no-op once answered
        if pending.error is not None:
            raise pending.error
        resp = pending.response
        assert resp is not None
        if not resp.ok:
            raise ControlProtocolError(
                f"the CLI refused {subtype!r}: {resp.error}",
                subtype=subtype,
                error_code=resp.error_code,
            )
        return resp.response

    async def _withdraw(self, rid: str) -> None:
        line = self._core.withdraw_request(rid)
        if not line:
            return
        with anyio.move_on_after(1.0, shield=True):
            # if the connection is gone, its error reaches every waiter anyway
            with contextlib.suppress(CcwireError):
                self._check_writable()
                await self._transport.send_line(line)

    # ------------------------------------------------------------------- read

    def pause_reading(self) -> None:
        """Stop reading the CLI's output until `resume_reading()` (backpressure: the
        CLI's pipe fills up and the CLI waits). Answers to control requests sent
        meanwhile wait too."""
        self._gate.close()

    def resume_reading(self) -> None:
        """Read the CLI's output again."""
        self._gate.reopen()

    @property
    def reading_paused(self) -> bool:
        """Whether `pause_reading()` is in effect."""
        return not self._gate.open.is_set()

    async def _read(self) -> None:
        """Read and handle lines until the output ends (then end the connection)."""
        try:
            while True:
                if not self._gate.open.is_set():
                    await self._gate.open.wait()
                line = await self._transport.receive_line()
                if line is None:
                    break
                if self.clock is not None:
                    self.last_heard = self.clock()
                self._handle(line)
                del line  # a 100 MB line is not kept while the next one is awaited
        except CcwireError as exc:
            self._finish(exc)
            return
        except Exception as exc:  # a bug below us must still release every waiter
            error = CLIConnectionError(f"reading from the CLI failed: {exc!r}")
            error.__cause__ = exc
            self._finish(error)
            return
        self._finish(None)

    def _heard(self) -> None:
        if self.clock is not None:
            self.last_heard = self.clock()

    def _handle(self, line: bytes) -> None:
        event = self._core.receive_line(line)
        if isinstance(event, MessageReceived):
            self._on_message(event.message, event.size)
        elif isinstance(event, RequestReceived):
            self._serve(event.request)
        elif isinstance(event, ResponseReceived):
            pending = self._pending.get(event.response.request_id)
            if pending is not None:
                pending.response = event.response
                pending.done.set()
            if event.response.request_id in self._initialize_ids:
                self._redeliver(event.response.pending)
        elif isinstance(event, RequestWithdrawn):
            call = self._calls.get(event.request_id)
            if call is not None:
                call.withdraw()
        elif isinstance(event, LineSkipped):
            logger.warning("ignoring non-JSON line from the CLI: %r", event.preview)
        elif isinstance(event, ProtocolViolation):
            self._report(event.frame_type, event.error)
            self._write_soon(event.answer)
        elif isinstance(event, UndecodableRequest):
            self._on_message(event.error, 0)
            self._write_soon(event.answer)

    def _finish(self, error: CcwireError | None) -> None:
        if self._core.state in (ConnectionState.CLOSED, ConnectionState.FAILED):
            return
        self._closed_error = error
        self._core.close(failed=error is not None)
        waiter_error = error or CLIConnectionError(
            "the connection was closed before the CLI answered this request"
            if self._closed_by_us
            else "the CLI closed its output before answering this request"
        )
        for pending in self._pending.values():
            if pending.done.is_set():
                continue  # answered just before the end: its requester takes the answer
            pending.error = waiter_error
            pending.done.set()
        for call in list(self._calls.values()):
            call.withdraw(by_cli=False)
        if self._workers is not None:
            self._workers.close()
        self._on_closed(error)

    # ------------------------------------------------------- serving requests

    def _redeliver(self, frames: tuple[Mapping[str, Any], ...]) -> None:
        """Serve the requests an ``initialize`` answer lists as still unanswered (after a
        transport gap their first answer may be lost); those being served or left to
        answer later are not served twice."""
        for frame in frames:
            event = self._core.redelivered(frame)
            if event is not None:
                self._serve(event.request)

    def owed_request(self, request_id: str) -> codec.ControlRequest | None:
        """The CLI's request ``request_id`` while it is still owed an answer."""
        return self._core.owed_request(request_id)

    async def answer_later(
        self, request_id: str, body: Mapping[str, Any] | None = None, *, error: str | None = None
    ) -> bool:
        """Answer a request out of band: one its route left open (`ANSWER_LATER`), or
        one whose route is still running (which then returns `ANSWER_LATER`; anything
        else it returns is not written: one answer per request). A success carrying
        ``body``, or with ``error`` an error answer. False when the request is owed no
        answer (answered already, withdrawn, unknown, or the connection ended)."""
        req = self._core.owed_request(request_id)
        if req is None:
            return False
        self._check_writable()
        if self.reply_gate is not None:
            await self.reply_gate()
        call = self._calls.get(request_id)  # its route is running (or finishing)
        if call is not None and not call.claim_answer(ANSWERED_LATER):
            return False  # the route's answer won: it is (being) written
        line, unencodable = self._core.answer(request_id, body, error=error)
        self._heard()  # no longer owed: the CLI's silence is counted from now
        if unencodable is not None:
            self._report(req.subtype, unencodable)
        if not line:
            return False
        if self._observers:
            outcome = "error" if error is not None else "ok"
            self._notify(ControlEvent(request_id, req.subtype, req.request, outcome, body, error))
        await self._write(line)
        return True

    def _serve(self, req: codec.ControlRequest) -> None:
        route = self._routes.get(req.subtype)
        if route is None:
            line, unencodable = self._core.answer(
                req.request_id, error=f"Unsupported control request subtype: {req.subtype}"
            )
            if unencodable is not None:  # an id no answer can carry
                self._report(req.subtype, unencodable)
            self._write_soon(line)
            return
        call = self._calls[req.request_id] = IncomingCall(req.request_id, req.subtype)
        if self._observers:
            self._notify(ControlEvent(req.request_id, req.subtype, req.request))
        assert self._workers is not None
        self._workers.submit(self._run_route, req, route, call)

    async def _run_route(
        self, scope: anyio.CancelScope, req: codec.ControlRequest, route: _Route, call: IncomingCall
    ) -> None:
        """Serve ``req`` inside ``scope`` (its worker's, enclosing this call alone: see
        `Workers`), then answer it, unless it was withdrawn or answered out of band."""
        try:
            await self._serve_call(scope, req, route, call)
        finally:
            if self._calls.get(req.request_id) is call:  # (a later request may reuse the id)
                del self._calls[req.request_id]

    async def _serve_call(
        self, scope: anyio.CancelScope, req: codec.ControlRequest, route: _Route, call: IncomingCall
    ) -> None:
        result: Answer = NO_REPLY
        error: str | None = None
        call.scope = scope
        if call.withdrawn:  # before it started: the handler stops at its first checkpoint
            scope.cancel()
        try:
            given = route.handler(req, call)
            result = await given if inspect.isawaitable(given) else given
        except Exception as exc:
            self._report(req.subtype, exc)
            error = str(exc) or type(exc).__name__
        except BaseException as exc:  # a cancellation raised below, not ours
            if raised_by_callback(exc):
                self._report(req.subtype, exc)
                error = f"the handler raised {type(exc).__name__}"
            elif self._cancelled_by_itself(exc, call):
                # no scope of ours cancelled it: the handler (a user callback) cancelled the
                # asyncio task it runs in. That is its call's failure, not the connection's
                # (the task group would take an escaped cancellation for a crash).
                asyncio_uncancel()
                self._report(req.subtype, exc)
                error = "the handler cancelled the task it runs in"
            else:
                if scope.cancel_called:  # withdrawn (or we are closing): no answer
                    self._cancelled(req)
                raise  # (a cancellation through ``scope`` ends there)
        finally:
            call.scope = None
            self._heard()
        if result is ANSWER_LATER and error is None and not call.withdrawn:
            return  # still owed: answer_later() answers it, or the CLI withdraws it
        if call.withdrawn or scope.cancel_called or (result is NO_REPLY and error is None):
            # withdrawn by the CLI, cancelled, or we are closing: it ignores late answers
            self._cancelled(req)
            return
        if self.reply_gate is not None:
            await self.reply_gate()
        if not call.claim_answer(ANSWERED_BY_ROUTE):
            return  # answered out of band (answer_later) meanwhile: that is its answer
        body = result if type(result) is dict or isinstance(result, Mapping) else None
        line, unencodable = self._core.answer(
            req.request_id, body, error=error, fallback=route.fallback
        )
        if unencodable is not None:
            self._report(req.subtype, unencodable)
        if line and call.on_answered is not None:
            call.on_answered()
        if self._observers:
            if line:
                outcome = "error" if error is not None else "ok"
                self._notify(
                    ControlEvent(req.request_id, req.subtype, req.request, outcome, body, error)
                )
            else:  # withdrawn while its answer waited for the gate, or the end came
                self._notify(ControlEvent(req.request_id, req.subtype, req.request, "cancelled"))
        await self._write(line)

    def _cancelled_by_itself(self, exc: BaseException, call: IncomingCall) -> bool:
        """Whether ``exc``, out of a handler's call, is a cancellation that no scope of
        ours (the call's, the connection's) made: its asyncio task was cancelled from
        within."""
        return (
            is_cancellation(exc)
            and not call.withdrawn
            and self._core.state is ConnectionState.OPEN
            and no_scope_cancelled()
        )

    def _cancelled(self, req: codec.ControlRequest) -> None:
        """``req`` gets no answer (withdrawn, cancelled, or we are closing)."""
        self._core.drop(req.request_id)
        if self._observers:
            self._notify(ControlEvent(req.request_id, req.subtype, req.request, "cancelled"))

    def _write_soon(self, line: bytes) -> None:
        """Write ``line`` from a task of its own (the reader never waits for the pipe)."""
        if line and self._workers is not None:
            self._workers.submit(self._write_job, line)

    async def _write_job(self, _scope: anyio.CancelScope, line: bytes) -> None:
        await self._write(line)

    async def _write(self, line: bytes) -> None:
        """Write an answer; a closed connection is reported, not raised."""
        if not line:
            return
        try:
            self._check_writable()
            await self._transport.send_line(line)
        except CcwireError as exc:
            if self._core.state is ConnectionState.OPEN:
                self._report("reply", exc)

    def _report(self, where: str, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(where, exc)
        else:
            logger.error("ccwire: error in %s: %s", where, exc, exc_info=exc)


def _ended_by(exc: BaseException) -> CLIConnectionError:
    """The error that ends a connection whose tasks ended with ``exc``."""
    inner = exc
    group: Any = getattr(inner, "exceptions", None)  # an exception group of one: its member
    while isinstance(group, tuple) and len(group) == 1:
        inner = group[0]
        group = getattr(inner, "exceptions", None)
    if isinstance(inner, anyio.get_cancelled_exc_class()):
        error = CLIConnectionError("the CLI connection's tasks were cancelled")
    else:
        error = CLIConnectionError(f"a task of the CLI connection failed: {inner!r}")
    error.__cause__ = exc
    return error
