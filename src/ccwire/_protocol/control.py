"""The control protocol: one reader, request correlation, a routing table, cancellation.

`ControlProtocol` sits on a `Transport`. It reads
every line the CLI writes and

* resolves our pending requests from ``control_response`` frames,
* runs the handler registered for each incoming ``control_request`` subtype on its own
  task (so slow tool calls never block anything else) and writes its answer,
* cancels that task on ``control_cancel_request``,
* hands every other frame, decoded, to ``on_message``.

When the stream ends, every waiter fails at once with the same typed error.
Background work never raises into the caller's task group: failures are reported
through ``on_error`` and the message stream.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import itertools
import logging
import os
import re
import select
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

import anyio
import anyio.abc

from .._core.cancel import raised_by_callback
from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    ControlProtocolError,
    ControlTimeoutError,
    MessageDecodeError,
    MessageEncodeError,
    SessionStateError,
)
from .._transport.base import Transport
from .._transport.flow import ReadGate
from .._wire import codec
from .._wire.framing import (
    encode_line,
    fast_line_encoder,
    fast_object_parser,
    parse_object,
)
from .._wire.messages import Message
from .workers import WorkerPool

__all__ = [
    "NO_REPLY",
    "ConnectionState",
    "ControlEvent",
    "ControlObserver",
    "ControlProtocol",
    "IncomingCall",
    "NowHandler",
    "RouteHandler",
    "decode_deferred",
]

logger = logging.getLogger("ccwire")

# answers written together at most this long: a pipe takes such a write whole (POSIX)
_BATCH_BYTES: Final = getattr(select, "PIPE_BUF", 512)

_parse_line: Callable[[str], Any] = parse_object
"""How a line is parsed: `parse_object` until the process is busy (see `_count_lines`)."""
_encode_line: Callable[[object], bytes] = encode_line
"""How a frame is encoded: `encode_line` until the process is busy (see `_count_lines`)."""
_FAST_JSON_AFTER = 1000
"""Lines read and answers written, over every connection of the process, before msgspec,
when installed, parses and encodes every line. Its import (about 6 ms, once a process)
pays for itself within about 1,700 tool calls (about 1.4 us saved on each line read and
2 us on each answer); a first connect, and a process that exchanges a few lines, never
pay it."""
_lines_seen = 0
"""Lines read and answers written so far; counting stops at `_FAST_JSON_AFTER` (msgspec
chosen)."""


def _count_lines(lines: int) -> None:
    global _lines_seen, _parse_line, _encode_line  # one switch, once per process
    _lines_seen += lines
    if _lines_seen >= _FAST_JSON_AFTER:
        _parse_line = fast_object_parser() or parse_object
        _encode_line = fast_line_encoder() or encode_line


_ASSISTANT_HEAD: Final = b'{"type":"assistant",'  # how the CLI writes an assistant message


def decode_deferred(text: str) -> Message | MessageDecodeError:
    """Decode a line a `ControlProtocol.take_assistant_text` handler took undecoded: the
    message, or the decode error the line would have given when read."""
    try:
        obj = _parse_line(text)
    except ValueError as exc:
        return _decode_error("the CLI wrote a line that is not valid JSON", text, exc)
    except RecursionError as exc:
        return _decode_error(
            f"the CLI wrote a frame nested deeper than {sys.getrecursionlimit()} levels", text, exc
        )
    try:
        if obj.get("type") == "assistant":  # decode_message's lookup, skipped
            return codec.decode_assistant(obj)
        return codec.decode_message(obj)
    except MessageDecodeError as exc:
        return exc


def _decode_error(
    message: str, line: bytes | str, cause: BaseException | None
) -> MessageDecodeError:
    preview = line[:200]
    err = MessageDecodeError(
        message,
        line=preview.decode("utf-8", "replace") if isinstance(preview, bytes) else preview,
    )
    err.__cause__ = cause
    return err


@final
class _NoReply:
    """The type of `NO_REPLY` (a plain class: an enum class costs ~0.2 ms to build)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_REPLY"


NO_REPLY: Final = _NoReply()
"""Returned by a route handler that must write nothing (a cancelled MCP call)."""


class ConnectionState(enum.Enum):
    """Lifecycle of one CLI connection."""

    NEW = "new"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"
    FAILED = "failed"


_TRANSITIONS: Final[dict[ConnectionState, frozenset[ConnectionState]]] = {
    ConnectionState.NEW: frozenset(
        {ConnectionState.OPEN, ConnectionState.CLOSED, ConnectionState.FAILED}
    ),
    ConnectionState.OPEN: frozenset(
        {ConnectionState.CLOSING, ConnectionState.CLOSED, ConnectionState.FAILED}
    ),
    ConnectionState.CLOSING: frozenset({ConnectionState.CLOSED, ConnectionState.FAILED}),
    ConnectionState.CLOSED: frozenset(),
    ConnectionState.FAILED: frozenset(),
}


class IncomingCall:
    """One in-flight request from the CLI. ``cancelled`` is set when the CLI withdraws it.

    The event is created on first use: most requests are answered long before anyone
    looks at it, and creating it for each of thousands of tool calls a second costs.
    """

    __slots__ = ("_event", "_withdrawn", "request_id", "scope", "subtype")

    def __init__(
        self, request_id: str, subtype: str, scope: anyio.CancelScope | None = None
    ) -> None:
        self.request_id = request_id
        self.subtype = subtype
        self.scope = anyio.CancelScope() if scope is None else scope
        self._withdrawn = False
        self._event: anyio.Event | None = None

    @property
    def cancelled(self) -> anyio.Event:
        """Set once the CLI withdraws the request (or the connection ends)."""
        if self._event is None:
            self._event = anyio.Event()
            if self._withdrawn:
                self._event.set()
        return self._event

    @property
    def withdrawn(self) -> bool:
        """Whether `withdraw()` was called."""
        return self._withdrawn

    def withdraw(self) -> None:
        """Mark the request withdrawn and cancel its handler."""
        self._withdrawn = True
        if self._event is not None:
            self._event.set()
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

RouteHandler = Callable[
    [codec.ControlRequest, IncomingCall], Awaitable["Mapping[str, Any] | _NoReply | None"]
]
"""``async def handler(request, call) -> response body | None | NO_REPLY``."""

NowHandler = Callable[
    [codec.ControlRequest], "Mapping[str, Any] | Awaitable[Mapping[str, Any]] | None"
]
"""``handler(request) -> response body | awaitable of it | None``: serves a request at
once, in the reading task, when it can (``None``: the route's async handler serves it).
It must not raise."""


class _Later:
    """The route handler finishing an answer that a `NowHandler` began."""

    __slots__ = ("_answer",)

    def __init__(self, answer: Awaitable[Mapping[str, Any]]) -> None:
        self._answer = answer

    def __call__(self, req: codec.ControlRequest, call: IncomingCall) -> Awaitable[Any]:
        return self._answer


UnencodableAnswer = Callable[[codec.ControlRequest, MessageEncodeError], "Mapping[str, Any]"]
"""The answer to send instead of a route's answer that cannot be encoded as JSON."""


class _Pending:
    """One request of ours awaiting its ``control_response``."""

    __slots__ = ("done", "error", "response", "subtype")

    def __init__(self, subtype: str) -> None:
        self.subtype = subtype
        self.done = anyio.Event()
        self.response: codec.ControlResponse | None = None
        self.error: BaseException | None = None


class ControlProtocol:
    """Speaks the control protocol over one transport. See the module docstring."""

    def __init__(
        self,
        transport: Transport,
        *,
        routes: Mapping[str, RouteHandler],
        on_message: Callable[[Message | MessageDecodeError], None],
        on_closed: Callable[[CcwireError | None], None],
        on_error: Callable[[str, BaseException], None] | None = None,
        control_timeout: float = 60.0,
    ) -> None:
        self._transport = transport
        self._routes = dict(routes)
        self._unencodable: dict[str, UnencodableAnswer] = {}
        self._now: dict[str, NowHandler] = {}
        self._held: list[bytes] | None = None  # answers waiting for the end of a batch
        self._on_message = on_message
        self._on_closed = on_closed
        self._on_error = on_error
        self._control_timeout = control_timeout
        self._state = ConnectionState.NEW
        self._closed_error: CcwireError | None = None
        self._pending: dict[str, _Pending] = {}
        self._inflight: dict[str, IncomingCall] = {}
        self._ids = itertools.count(1)
        self._tg: anyio.abc.TaskGroup | None = None
        self._workers: WorkerPool | None = None
        self._new_scope: Callable[[], anyio.CancelScope] = anyio.CancelScope
        self._frame_handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            codec.CONTROL_RESPONSE: self._on_control_response,
            codec.CONTROL_REQUEST: self._on_control_request,
            codec.CONTROL_CANCEL_REQUEST: self._on_cancel_request,
            codec.KEEP_ALIVE: _ignore,
        }
        self._observers: list[ControlObserver] = []
        self.take_assistant_text: Callable[[str], bool] | None = None
        """If set, offered each assistant message's line undecoded (it starts with
        ``{"type":"assistant",``); returning True takes it, to be decoded with
        `decode_deferred` when read. A queued message then holds no objects the garbage
        collector tracks: many queued messages cost it nothing."""
        self.reply_gate: ReplyGate | None = None
        """If set, awaited before each answer to a CLI request is written."""
        self.noise_lines = 0
        """How many stdout lines were not JSON objects (logged, then skipped)."""
        self.line_size = 0
        """The length of the line being handed to ``on_message`` (its JSON text)."""
        self._write_now = _write_now(transport)
        gate = getattr(transport, "read_gate", None)
        # the transport's own gate stops its reader task; any other transport is paused
        # here, between two receive_line() calls
        self._gate: ReadGate = gate if isinstance(gate, ReadGate) else ReadGate()

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> ConnectionState:
        """The connection's lifecycle state."""
        return self._state

    @property
    def closed_error(self) -> CcwireError | None:
        """Why the connection ended, if it ended badly."""
        return self._closed_error

    def _transition(self, new: ConnectionState) -> None:
        if new not in _TRANSITIONS[self._state]:
            raise SessionStateError(f"connection cannot go from {self._state.value} to {new.value}")
        self._state = new

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
        self,
        subtype: str,
        handler: RouteHandler,
        *,
        unencodable: UnencodableAnswer | None = None,
        now: NowHandler | None = None,
    ) -> None:
        """Register (or replace) the handler of an incoming request subtype.

        ``unencodable(request, cause)`` gives the answer to send instead of one that
        cannot be encoded as JSON; without it (or if its answer cannot be encoded either)
        the CLI gets an error answer naming the cause. ``now(request)`` serves the
        requests it can at once, without a worker (see `NowHandler`).
        """
        self._routes[subtype] = handler
        if unencodable is not None:
            self._unencodable[subtype] = unencodable
        if now is not None:
            self._now[subtype] = now
        else:
            self._now.pop(subtype, None)

    # -------------------------------------------------------------- lifecycle

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the transport and the reader in ``task_group``."""
        self._tg = task_group
        self._workers = WorkerPool(task_group)
        # the backend's own scope class: no backend lookup per incoming request
        self._new_scope = type(anyio.CancelScope())
        await self._transport.start(task_group)
        self._transition(ConnectionState.OPEN)
        task_group.start_soon(self._reader)

    async def end_input(self) -> None:
        """Close the CLI's stdin: it finishes queued work and exits."""
        if self._state is ConnectionState.OPEN:
            self._transition(ConnectionState.CLOSING)
        await self._transport.end_input()

    async def aclose(self) -> None:
        """Shut the transport down (bounded, shielded) and release every waiter."""
        with anyio.CancelScope(shield=True):
            if self._state is ConnectionState.OPEN:
                self._transition(ConnectionState.CLOSING)
            await self._transport.aclose()
            self._finish(None)
            for call in list(self._inflight.values()):
                call.withdraw()

    # ------------------------------------------------------------------ write

    async def send_frame(self, frame: Mapping[str, Any]) -> None:
        """Encode and write one frame (never a non-JSON line)."""
        if self._state not in (ConnectionState.OPEN, ConnectionState.NEW):
            raise self._closed_error or CLIConnectionError("the CLI connection is closed")
        await self._transport.send_line(_encode_line(frame))

    async def request(
        self, subtype: str, fields: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Mapping[str, Any]:
        """Send a control request and wait (bounded) for its answer.

        Raises `ControlProtocolError` when the CLI answers with an error,
        `ControlTimeoutError` after ``timeout`` (default: the control timeout),
        and the connection's error if it ends first.
        """
        if self._state is not ConnectionState.OPEN:
            raise self._closed_error or CLIConnectionError(
                f"cannot send {subtype!r}: the CLI connection is {self._state.value}"
            )
        limit = self._control_timeout if timeout is None else timeout
        rid = f"req_{next(self._ids)}_{os.urandom(4).hex()}"
        pending = _Pending(subtype)
        self._pending[rid] = pending
        try:
            await self.send_frame(codec.encode_control_request(rid, subtype, fields or {}))
            with anyio.move_on_after(limit) as scope:
                await pending.done.wait()
            if scope.cancelled_caught:
                await self._withdraw(rid)
                raise ControlTimeoutError(subtype, limit)
        finally:
            self._pending.pop(rid, None)
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
        with anyio.move_on_after(1.0, shield=True):
            # if the connection is gone, its error reaches every waiter anyway
            with contextlib.suppress(CcwireError):
                await self.send_frame({"type": codec.CONTROL_CANCEL_REQUEST, "request_id": rid})

    # ------------------------------------------------------------------- read

    def pause_reading(self) -> None:
        """Stop reading the CLI's output until `resume_reading()` (backpressure: the
        CLI's pipe fills up and the CLI waits). Answers to control requests sent
        meanwhile wait too."""
        self._gate.close()

    def resume_reading(self) -> None:
        """Read the CLI's output again."""
        self._gate.open()

    @property
    def reading_paused(self) -> bool:
        """Whether `pause_reading()` is in effect."""
        return not self._gate.is_open

    async def _reader(self) -> None:
        error: CcwireError | None = None
        try:
            held = self._transport.push_lines(self._on_lines)
            if held is not None:  # lines now come to _on_lines; here we wait for the end
                self._on_lines(held)
                del held
            gate = self._gate
            while True:
                if not gate.is_open:
                    await gate.wait_open()
                line = await self._transport.receive_line()
                if line is None:
                    break
                batch = [line]
                del line  # a 100 MB line must not stay alive while its text is parsed
                self._on_lines(batch)
        except CcwireError as exc:
            error = exc
        except Exception as exc:  # a bug below us must still release every waiter
            error = CLIConnectionError(f"reading from the CLI failed: {exc!r}")
            error.__cause__ = exc
        self._finish(error)

    def _on_lines(self, lines: list[bytes]) -> None:
        """Handle ``lines`` in order, emptying the list as it goes; the answers given at
        once meanwhile are written together after the last (one write, not one each)."""
        if _lines_seen < _FAST_JSON_AFTER:
            _count_lines(len(lines))
        if len(lines) == 1:  # the CLI is not busy: nothing to batch
            self._on_last_line(lines)
            return
        held = self._held = []
        try:
            lines.reverse()
            while lines:
                self._on_last_line(lines)
        finally:
            self._held = None
            if held:
                self._write_held(held)

    def _on_last_line(self, lines: list[bytes]) -> None:
        """Take the last of ``lines`` off the list and handle it (popped here, not by the
        caller: no reference to a 100 MB line stays alive while its text is parsed)."""
        line = lines.pop()
        take = self.take_assistant_text
        if take is not None and line.startswith(_ASSISTANT_HEAD):
            # a streamed assistant message, queued undecoded to be decoded by its reader
            # (`decode_deferred`): nothing for the GC meanwhile; _line_text inlined (once
            # per message)
            try:
                queued = line.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                pass  # reported by _line_text
            else:
                del line
                if take(queued):
                    return
                self._dispatch_text(queued)  # someone watches: decoded now
                return
        text = self._line_text(line)
        del line
        if text is not None:
            self._dispatch_text(text)

    def _write_held(self, held: list[bytes]) -> None:
        """Write answers in as few pipe writes as take them at once; the rest by workers."""
        start, size = 0, 0
        for end, line in enumerate(held):
            if size + len(line) > _BATCH_BYTES and end > start:
                self._write_lines(held[start:end])
                start, size = end, 0
            size += len(line)
        self._write_lines(held[start:])

    def _write_lines(self, lines: list[bytes]) -> None:
        if self._written_at_once(lines[0] if len(lines) == 1 else b"".join(lines)):
            return
        assert self._workers is not None
        for line in lines:
            self._workers.submit(self._send_answer, line)

    def _line_text(self, line: bytes) -> str | None:
        """The text of a line that may be JSON; ``None`` (reported) for anything else."""
        if not line.startswith(b"{"):
            self.noise_lines += 1
            logger.warning("ignoring non-JSON line from the CLI: %r", line[:200])
            return None
        try:
            return line.decode("utf-8", "surrogatepass")  # what json.loads(bytes) does
        except UnicodeDecodeError as exc:
            self._bad_line("the CLI wrote a line that is not valid UTF-8", line, exc)
            return None

    def _bad_line(self, message: str, line: bytes | str, cause: BaseException | None) -> None:
        self._on_message(_decode_error(message, line, cause))

    def _dispatch_text(self, text: str) -> None:
        self.line_size = len(text)
        try:
            obj = _parse_line(text)
        except ValueError as exc:
            self._bad_line("the CLI wrote a line that is not valid JSON", text, exc)
            return
        except RecursionError as exc:
            self._too_deep(text, exc)
            return
        if not isinstance(obj, dict):
            self._bad_line("the CLI wrote JSON that is not an object", text, None)
            return
        handler = self._frame_handlers.get(obj.get("type"))  # type: ignore[arg-type]
        if handler is not None:
            handler(obj)
            return
        try:
            message = codec.decode_message(obj)
        except MessageDecodeError as exc:
            self._on_message(exc)
            return
        self._on_message(message)

    def _too_deep(self, text: str, exc: RecursionError) -> None:
        """A frame nested deeper than JSON decoding allows: a typed decode error, and if
        it is a control request whose id can be read, an error answer (never silence)."""
        self._bad_line(
            f"the CLI wrote a frame nested deeper than {sys.getrecursionlimit()} levels", text, exc
        )
        head = text[:_ID_SCAN]
        request_id, control_request = _id_patterns()
        rid = request_id.search(head)
        if rid is not None and control_request.search(head) is not None and self._tg is not None:
            self._tg.start_soon(
                self._reply,
                rid.group(1),
                None,
                "ccwire: the request is nested too deeply to decode",
            )

    def _finish(self, error: CcwireError | None) -> None:
        if self._state in (ConnectionState.CLOSED, ConnectionState.FAILED):
            return
        self._closed_error = error
        self._transition(ConnectionState.FAILED if error is not None else ConnectionState.CLOSED)
        waiter_error = error or CLIConnectionError(
            "the CLI closed its output before answering this request"
        )
        for pending in self._pending.values():
            pending.error = waiter_error
            pending.done.set()
        for call in self._inflight.values():
            call.withdraw()
        if self._workers is not None:
            self._workers.close()  # idle workers end; busy ones after their (withdrawn) job
        self._on_closed(error)

    # ------------------------------------------------------- control frames

    def _on_control_response(self, obj: dict[str, Any]) -> None:
        try:
            resp = codec.decode_control_response(obj)
        except MessageDecodeError as exc:
            self._report("control_response", exc)
            return
        pending = self._pending.get(resp.request_id)
        if pending is None:
            logger.debug("ignoring control_response for unknown request %s", resp.request_id)
            return
        pending.response = resp
        pending.done.set()

    def _on_cancel_request(self, obj: dict[str, Any]) -> None:
        rid = codec.decode_cancel_request_id(obj)
        call = self._inflight.get(rid) if rid is not None else None
        if call is not None:
            call.withdraw()

    def _on_control_request(self, obj: dict[str, Any]) -> None:
        try:
            req = codec.decode_control_request(obj)
        except MessageDecodeError as exc:
            self._report("control_request", exc)
            rid = obj.get("request_id")
            if isinstance(rid, str) and self._tg is not None:
                self._tg.start_soon(self._reply, rid, None, str(exc))
            return
        handler = self._routes.get(req.subtype)
        assert self._tg is not None
        if handler is None:
            self._tg.start_soon(
                self._reply,
                req.request_id,
                None,
                f"Unsupported control request subtype: {req.subtype}",
            )
            return
        now = self._now.get(req.subtype)
        if now is not None and self.reply_gate is None:
            answer = now(req)  # served here: no worker, no cancel scope, no loop turn
            if answer is not None:
                if self._observers:
                    self._notify(ControlEvent(req.request_id, req.subtype, req.request))
                if type(answer) is dict or isinstance(answer, Mapping):
                    self._answer_now(req, answer)
                    return
                handler = _Later(answer)  # finishing it needs to wait: a worker does
        call = IncomingCall(req.request_id, req.subtype, self._new_scope())
        self._inflight[req.request_id] = call
        if self._observers and not isinstance(handler, _Later):
            self._notify(ControlEvent(req.request_id, req.subtype, req.request))
        assert self._workers is not None
        self._workers.submit(self._run_handler, req, handler, call)

    def _answer_now(self, req: codec.ControlRequest, body: Mapping[str, Any]) -> None:
        """Write the answer a `NowHandler` gave, at once if the pipe takes it."""
        if self._observers:
            self._notify(ControlEvent(req.request_id, req.subtype, req.request, "ok", body))
        line = self._answer_line(req.request_id, body, None, req)
        if self._held is not None:
            self._held.append(line)  # written with the others of this batch of lines
        elif not self._written_at_once(line):
            assert self._workers is not None
            self._workers.submit(self._send_answer, line)

    async def _run_handler(
        self, req: codec.ControlRequest, handler: RouteHandler, call: IncomingCall
    ) -> None:
        result: Mapping[str, Any] | _NoReply | None = NO_REPLY
        error: str | None = None
        try:
            with call.scope:
                try:
                    result = await handler(req, call)
                except Exception as exc:
                    self._report(req.subtype, exc)
                    error = str(exc) or type(exc).__name__
                except BaseException as exc:  # a cancellation raised below, not ours
                    if not raised_by_callback(exc):
                        raise
                    self._report(req.subtype, exc)
                    error = f"the handler raised {type(exc).__name__}"
        finally:
            self._inflight.pop(req.request_id, None)
        if call.scope.cancelled_caught or call.withdrawn or (result is NO_REPLY and error is None):
            # withdrawn by the CLI (or we are closing): it ignores late answers
            if self._observers:
                self._notify(ControlEvent(req.request_id, req.subtype, req.request, "cancelled"))
            return
        if self.reply_gate is not None:
            await self.reply_gate()
        if self._observers:
            body = result if isinstance(result, Mapping) else None
            outcome = "error" if error is not None else "ok"
            self._notify(
                ControlEvent(req.request_id, req.subtype, req.request, outcome, body, error)
            )
        if error is not None:
            await self._reply(req.request_id, None, error, req)
        elif not isinstance(result, _NoReply):
            await self._reply(req.request_id, result, None, req)

    async def _reply(
        self,
        rid: str,
        body: Mapping[str, Any] | None,
        error: str | None,
        req: codec.ControlRequest | None = None,
    ) -> None:
        """The one way an answer reaches the CLI: every request gets exactly one answer.

        An answer that cannot be encoded (a lone surrogate, NaN, a ``set``, ...) becomes
        an error answer naming the cause, and the `MessageEncodeError` is reported (the
        connection hands it to ``on_callback_error`` and the session's events).
        """
        line = self._answer_line(rid, body, error, req)
        if not self._written_at_once(line):
            await self._send_answer(line)

    def _written_at_once(self, line: bytes) -> bool:
        """Hand ``line`` to the pipe without yielding, if it takes it now (the common
        case: one event-loop turn less per answer)."""
        write_now = self._write_now
        return self._state is ConnectionState.OPEN and write_now is not None and write_now(line)

    def _answer_line(
        self,
        rid: str,
        body: Mapping[str, Any] | None,
        error: str | None,
        req: codec.ControlRequest | None,
    ) -> bytes:
        """The encoded answer; one naming the cause if it cannot be encoded."""
        frame = (
            codec.encode_error(rid, error) if error is not None else codec.encode_success(rid, body)
        )
        if _lines_seen < _FAST_JSON_AFTER:
            _count_lines(1)
        try:
            return _encode_line(frame)
        except MessageEncodeError as exc:
            subtype = req.subtype if req is not None else "request"
            self._report(subtype, exc)
            return self._substitute(rid, req, exc)

    async def _send_answer(self, line: bytes) -> None:
        """Write an answer, waiting for the pipe; a closed connection is reported."""
        try:
            if self._state not in (ConnectionState.OPEN, ConnectionState.NEW):
                raise self._closed_error or CLIConnectionError("the CLI connection is closed")
            await self._transport.send_line(line)
        except CcwireError as exc:
            if self._state is ConnectionState.OPEN:
                self._report("reply", exc)

    def _substitute(
        self, rid: str, req: codec.ControlRequest | None, exc: MessageEncodeError
    ) -> bytes:
        """The line to send instead of an answer that cannot be encoded."""
        fallback = self._unencodable.get(req.subtype) if req is not None else None
        if fallback is not None and req is not None:
            try:
                return encode_line(codec.encode_success(rid, fallback(req, exc)))
            except Exception as again:  # the plain error answer below
                logger.debug("ccwire: the substitute answer failed too: %r", again)
        subtype = req.subtype if req is not None else "request"
        return encode_line(
            codec.encode_error(rid, f"ccwire could not encode the answer to {subtype}: {exc}")
        )

    def _report(self, where: str, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(where, exc)
        else:
            logger.error("ccwire: error in %s: %s", where, exc, exc_info=exc)


_ID_SCAN: Final = 4096  # how far into an undecodable frame its request id is looked for


@functools.cache
def _id_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The request id and the control-request type in raw text (compiled on first use:
    only an undecodable frame needs them, and the first connect imports this module)."""
    return (
        re.compile(r'"request_id"\s*:\s*"([^"\\]{1,200})"'),
        re.compile(r'"type"\s*:\s*"control_request"'),
    )


def _write_now(transport: Transport) -> Callable[[bytes], bool] | None:
    """The transport's non-yielding ``write_now(line) -> bool``, if it has one and its
    ``send_line`` is the one written beside it (a subclass that wraps ``send_line``
    sees every line)."""
    for klass in type(transport).__mro__:
        if "send_line" in vars(klass):
            write_now = vars(klass).get("write_now")
            return getattr(transport, "write_now", None) if callable(write_now) else None
    return None


def _ignore(obj: dict[str, Any]) -> None:
    return None
