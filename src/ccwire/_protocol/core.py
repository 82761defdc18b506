"""The control protocol's core, free of I/O: lines in, events out; answers in, lines out.

`ProtocolCore` knows the rules of the conversation with the CLI and nothing of pipes,
tasks or clocks (the pattern of h11 and h2). The driver (`control.ControlProtocol`)
feeds it each line the CLI writes (`ProtocolCore.receive_line`) and acts on the event it
returns; it asks the core for the bytes of every frame it sends (`ProtocolCore.answer`,
`ProtocolCore.send_request`, `ProtocolCore.encode`). The core keeps the bookkeeping
that makes the protocol hold:

* every request of the CLI gets exactly one answer, unless the CLI withdraws it first
  (an answer to a request that is not owed is no bytes at all);
* a ``control_response`` resolves only a request of ours that is still waiting;
* an answer that cannot be encoded as JSON becomes an error answer naming the cause;
* the connection's lifecycle moves only along `ConnectionState`'s table.

Lines are parsed and encoded by the codec's one JSON library (`framing`); what each
input becomes is documented on `ProtocolCore.receive_line`.
"""

from __future__ import annotations

import codecs
import enum
import itertools
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Union

from .._core.errors import MessageDecodeError, MessageEncodeError, SessionStateError
from .._wire import codec
from .._wire.framing import encode_line, parse_object
from .._wire.messages import Message

__all__ = [
    "ConnectionState",
    "Event",
    "LineSkipped",
    "MessageReceived",
    "ProtocolCore",
    "ProtocolViolation",
    "RequestReceived",
    "RequestWithdrawn",
    "ResponseReceived",
    "UndecodableRequest",
]


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


# ------------------------------------------------------------------------ events


@dataclass(slots=True)
class MessageReceived:
    """A conversation frame, decoded; or the `MessageDecodeError` its line gave.

    ``size`` is the length of the line, for flow control.
    """

    message: Message | MessageDecodeError
    size: int


@dataclass(slots=True)
class RequestReceived:
    """A ``control_request`` of the CLI, now owed an answer."""

    request: codec.ControlRequest


@dataclass(slots=True)
class RequestWithdrawn:
    """The CLI withdrew one of its requests (``control_cancel_request``): it is owed
    nothing any more."""

    request_id: str


@dataclass(slots=True)
class ResponseReceived:
    """The answer to a request of ours that was waiting for it."""

    response: codec.ControlResponse


@dataclass(slots=True)
class LineSkipped:
    """A line that is not a JSON object frame and was skipped (``preview``: its start)."""

    preview: bytes


@dataclass(slots=True)
class ProtocolViolation:
    """A control frame of type ``frame_type`` that breaks the protocol (``error``);
    ``answer`` is the error answer owed for it when its request id could be read (else
    ``b""``)."""

    frame_type: str
    error: MessageDecodeError
    answer: bytes


@dataclass(slots=True)
class UndecodableRequest:
    """A line that holds a control request but cannot be decoded (not UTF-8, not JSON,
    nested too deeply): the reader of the messages sees ``error`` where it was, and the
    CLI is owed ``answer``."""

    error: MessageDecodeError
    answer: bytes


Event = Union[
    MessageReceived,
    RequestReceived,
    RequestWithdrawn,
    ResponseReceived,
    LineSkipped,
    ProtocolViolation,
    UndecodableRequest,
]
"""What one line of the CLI's output is; ``None`` for a line that changes nothing
(``keep_alive``, a response to a request nobody waits for)."""

UnencodableAnswer = Callable[[codec.ControlRequest, MessageEncodeError], Mapping[str, Any]]
"""The answer to send instead of one that cannot be encoded as JSON."""

_PREVIEW: Final = 200
_ID_SCAN: Final = 4096  # how far into an undecodable frame its request id is looked for
_REQUEST_ID = re.compile(r'"request_id"\s*:\s*"([^"\\]{1,200})"')
_CONTROL_REQUEST = re.compile(r'"type"\s*:\s*"control_request"')
_BOM_OBJECT: Final = codecs.BOM_UTF8 + b"{"


class ProtocolCore:
    """The state of one conversation with the CLI; see the module docstring.

    Not thread-safe, no I/O: every method returns at once.
    """

    def __init__(self) -> None:
        self._state = ConnectionState.NEW
        self._owed: dict[str, codec.ControlRequest] = {}  # the CLI's requests we must answer
        self._waiting: set[str] = set()  # our requests awaiting a control_response
        self._ids = itertools.count(1)
        self._tag = os.urandom(4).hex()
        self.skipped_lines = 0
        """How many lines were not JSON object frames (skipped)."""

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> ConnectionState:
        """The connection's lifecycle state."""
        return self._state

    def transition(self, new: ConnectionState) -> None:
        """Move to ``new``; raises `SessionStateError` for a move the table forbids."""
        if new not in _TRANSITIONS[self._state]:
            raise SessionStateError(f"connection cannot go from {self._state.value} to {new.value}")
        self._state = new

    @property
    def owed(self) -> list[str]:
        """The ids of the CLI's requests still owed an answer."""
        return list(self._owed)

    @property
    def waiting(self) -> list[str]:
        """The ids of our requests still waiting for their answer."""
        return list(self._waiting)

    def close(self, *, failed: bool) -> None:
        """The connection ended: nothing is owed or awaited any more (idempotent)."""
        if self._state in (ConnectionState.CLOSED, ConnectionState.FAILED):
            return
        self.transition(ConnectionState.FAILED if failed else ConnectionState.CLOSED)
        self._owed.clear()
        self._waiting.clear()

    # ------------------------------------------------------------------ input

    def receive_line(self, line: bytes) -> Event | None:
        """What one line of the CLI's output is (its newline already removed).

        * a line that does not start with ``{`` (after a UTF-8 byte order mark, which
          is read as nothing) is noise a CLI may print: `LineSkipped`;
        * a line that is not UTF-8, not JSON or too deeply nested, and a conversation
          frame its decoder refuses: `MessageReceived` carrying the
          `MessageDecodeError` (the reader of the messages sees it where it was); such a
          line that holds a ``control_request`` whose id can be read:
          `UndecodableRequest` (the error, and the error answer owed for it);
        * ``control_request``: `RequestReceived` (now owed an answer), or, malformed,
          `ProtocolViolation` with the error answer owed for it; under the id of a
          request still owed an answer, `ProtocolViolation` without an answer (the
          first one is answered, once);
        * ``control_cancel_request`` of a request still owed: `RequestWithdrawn`;
        * ``control_response`` to a request of ours still waiting: `ResponseReceived`;
          malformed: `ProtocolViolation`; to anything else: ``None``;
        * ``keep_alive``: ``None``; every other frame: `MessageReceived`, unknown types
          as `RawMessage` (never dropped).
        """
        size = len(line)
        if not line.startswith(b"{"):
            if not line.startswith(_BOM_OBJECT):
                self.skipped_lines += 1
                return LineSkipped(line[:_PREVIEW])
            line = line[len(codecs.BOM_UTF8) :]  # json.loads(bytes) reads it as nothing
        try:
            text = line.decode("utf-8", "surrogatepass")  # what json.loads(bytes) does
        except UnicodeDecodeError as exc:
            return self._undecodable("a line that is not valid UTF-8", line, exc, size)
        del line  # a 100 MB line is not kept twice while its text is parsed
        try:
            obj = parse_object(text)
        except ValueError as exc:
            return self._undecodable("a line that is not valid JSON", text, exc, size)
        except RecursionError as exc:
            limit = sys.getrecursionlimit()
            return self._undecodable(f"a frame nested deeper than {limit} levels", text, exc, size)
        kind = obj.get("type")  # a JSON text that starts with "{" is an object
        if kind == codec.CONTROL_REQUEST:
            return self._request(obj)
        if kind == codec.CONTROL_RESPONSE:
            return self._response(obj)
        if kind == codec.CONTROL_CANCEL_REQUEST:
            rid = codec.decode_cancel_request_id(obj)
            if rid is None or self._owed.pop(rid, None) is None:
                return None  # withdrawn already, answered already, or never asked
            return RequestWithdrawn(rid)
        if kind == codec.KEEP_ALIVE:
            return None
        try:
            return MessageReceived(codec.decode_message(obj), size)
        except MessageDecodeError as exc:
            return MessageReceived(exc, size)

    def _request(self, obj: dict[str, Any]) -> Event:
        try:
            req = codec.decode_control_request(obj)
        except MessageDecodeError as exc:
            rid = obj.get("request_id")
            answer = _error_line(rid, str(exc)) if isinstance(rid, str) else b""
            return ProtocolViolation("control_request", exc, answer)
        if req.request_id in self._owed:
            # the one still owed keeps its (one) answer; this one is not served twice
            error = MessageDecodeError(
                f"the CLI sent a second {req.subtype} request with the id "
                f"{req.request_id!r} while the first is still owed an answer: ignored"
            )
            return ProtocolViolation("control_request", error, b"")
        self._owed[req.request_id] = req
        return RequestReceived(req)

    def redelivered(self, frame: Mapping[str, Any]) -> RequestReceived | None:
        """A ``control_request`` an ``initialize`` answer lists as still pending: now
        owed an answer, unless it already is (being served, or left to answer later)
        or is malformed (None then)."""
        try:
            req = codec.decode_control_request(frame)
        except MessageDecodeError:
            return None
        if req.request_id in self._owed:
            return None
        self._owed[req.request_id] = req
        return RequestReceived(req)

    def owed_request(self, request_id: str) -> codec.ControlRequest | None:
        """The CLI's request ``request_id`` if it is still owed an answer."""
        return self._owed.get(request_id)

    def _response(self, obj: dict[str, Any]) -> Event | None:
        try:
            resp = codec.decode_control_response(obj)
        except MessageDecodeError as exc:
            return ProtocolViolation("control_response", exc, b"")
        if resp.request_id not in self._waiting:
            return None  # withdrawn on a timeout, or not ours
        self._waiting.discard(resp.request_id)
        return ResponseReceived(resp)

    def _undecodable(self, what: str, line: bytes | str, cause: BaseException, size: int) -> Event:
        """A line that cannot be decoded (``what`` it is): a decode error, and if it
        holds a control request whose id can be read, the error answer owed for it (the
        CLI would wait for one forever)."""
        error = _decode_error(f"the CLI wrote {what}", line, cause)
        head = line[:_ID_SCAN]
        if isinstance(head, bytes):
            head = head.decode("utf-8", "replace")
        rid = _REQUEST_ID.search(head)
        if rid is None or _CONTROL_REQUEST.search(head) is None or rid.group(1) in self._owed:
            return MessageReceived(error, size)  # (an id still owed keeps its one answer)
        answer = _error_line(rid.group(1), f"ccwire could not decode the request: {what}")
        return UndecodableRequest(error, answer)

    # ----------------------------------------------------------------- output

    def encode(self, frame: Mapping[str, Any]) -> bytes:
        """The line for ``frame``; raises `MessageEncodeError` if JSON cannot carry it."""
        return encode_line(frame)

    def send_request(self, subtype: str, fields: Mapping[str, Any]) -> tuple[str, bytes]:
        """A new request of ours: its id (now waiting for an answer) and its line.

        Raises `MessageEncodeError` (nothing is waiting then) if JSON cannot carry it.
        """
        rid = f"req_{next(self._ids)}_{self._tag}"
        line = encode_line(codec.encode_control_request(rid, subtype, fields))
        self._waiting.add(rid)
        return rid, line

    def withdraw_request(self, request_id: str) -> bytes:
        """Stop waiting for the answer to a request of ours: the line that tells the
        CLI (``b""`` if the request was not waiting)."""
        if request_id not in self._waiting:
            return b""
        self._waiting.discard(request_id)
        return encode_line({"type": codec.CONTROL_CANCEL_REQUEST, "request_id": request_id})

    def drop(self, request_id: str) -> None:
        """Owe the CLI's request ``request_id`` no answer (it was withdrawn another way:
        an MCP cancellation). Idempotent."""
        self._owed.pop(request_id, None)

    def answer(
        self,
        request_id: str,
        body: Mapping[str, Any] | None = None,
        *,
        error: str | None = None,
        fallback: UnencodableAnswer | None = None,
    ) -> tuple[bytes, MessageEncodeError | None]:
        """The one answer to the CLI's request ``request_id``: a success carrying
        ``body``, or, with ``error``, an error answer.

        Returns the line (``b""`` when the request is not owed an answer: withdrawn,
        answered already or unknown) and, when the answer could not be encoded, the
        `MessageEncodeError` why: the line is then ``fallback(request, cause)``'s answer
        if it encodes, else an error answer naming the cause (``b""`` for an id holding
        a lone surrogate, which no line can carry). A lone surrogate in ``error`` is
        written as its escape.
        """
        req = self._owed.pop(request_id, None)
        if req is None:
            return b"", None
        frame = (
            codec.encode_error(request_id, _utf8_safe(error))
            if error is not None
            else codec.encode_success(request_id, body)
        )
        try:
            return encode_line(frame), None
        except MessageEncodeError as exc:
            return self._substitute(req, fallback, exc), exc

    def _substitute(
        self, req: codec.ControlRequest, fallback: UnencodableAnswer | None, exc: MessageEncodeError
    ) -> bytes:
        if fallback is not None:
            try:
                return encode_line(codec.encode_success(req.request_id, fallback(req, exc)))
            except Exception:  # the plain error answer below says why
                pass
        return _error_line(
            req.request_id, f"ccwire could not encode the answer to {req.subtype}: {exc}"
        )


def _error_line(request_id: str, error: str) -> bytes:
    """The line of an error answer to the CLI's request ``request_id``. JSON's escapes
    let the CLI write a lone surrogate, which UTF-8 cannot carry back: one in ``error``
    (an unknown subtype named in it) is written as its escape, and an id holding one
    gets no answer at all (``b""``: no line can name it)."""
    try:
        return encode_line(codec.encode_error(request_id, _utf8_safe(error)))
    except MessageEncodeError:
        return b""


def _utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _decode_error(
    message: str, line: bytes | str, cause: BaseException | None
) -> MessageDecodeError:
    preview = line[:_PREVIEW]
    err = MessageDecodeError(
        message,
        line=preview.decode("utf-8", "replace") if isinstance(preview, bytes) else preview,
    )
    err.__cause__ = cause
    return err
