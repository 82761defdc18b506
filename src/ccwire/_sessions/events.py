"""Typed session events, and the append-only log that streams and callbacks read.

Every event a session produces is appended to one `EventLog`, in order.
``Session.events()`` iterates the log (from its start by default) and every callback
registered with ``Session.on`` is fed by its own reader task, so a slow callback only
delays itself and never the session or the other subscribers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Final, Literal, Union

import anyio

from .._core.public import publish
from .._wire.messages import Message, ResultMessage
from .state import SessionState, SessionStateInfo

__all__ = [
    "EVENT_NAMES",
    "ErrorOccurred",
    "EventLog",
    "MessageReceived",
    "PermissionRequested",
    "SessionCompleted",
    "SessionEvent",
    "SessionEventName",
    "StateChanged",
    "ToolCallFinished",
    "ToolCallStarted",
]

SessionEventName = Literal[
    "message", "tool_call", "tool_result", "permission_request", "state_change", "complete", "error"
]
"""The names ``Session.on`` accepts."""


@dataclass(frozen=True)
class MessageReceived:
    """A conversation message arrived (the same types the client yields)."""

    name: ClassVar[SessionEventName] = "message"
    message: Message


@dataclass(frozen=True)
class StateChanged:
    """The session moved from ``from_state`` to ``to_state``; ``info`` is the new snapshot."""

    name: ClassVar[SessionEventName] = "state_change"
    from_state: SessionState
    to_state: SessionState
    info: SessionStateInfo


@dataclass(frozen=True)
class ToolCallStarted:
    """A tool call began: an in-process tool's ``tools/call`` arrived, or (other tools)
    the model's ``tool_use`` block did. ``server_name`` is ``None`` for built-in tools."""

    name: ClassVar[SessionEventName] = "tool_call"
    tool_use_id: str
    tool_name: str
    server_name: str | None
    arguments: Mapping[str, Any]
    started_at: datetime


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call ended: its answer was written to the CLI (in-process tools) or its
    ``tool_result`` arrived (other tools). ``duration_s`` is measured on a monotonic
    clock; ``result`` is the MCP result or the tool_result content, when known."""

    name: ClassVar[SessionEventName] = "tool_result"
    tool_use_id: str
    tool_name: str
    server_name: str | None
    arguments: Mapping[str, Any]
    started_at: datetime
    finished_at: datetime
    duration_s: float
    is_error: bool
    result: Any = None


@dataclass(frozen=True)
class PermissionRequested:
    """The CLI asked ``can_use_tool`` for a decision."""

    name: ClassVar[SessionEventName] = "permission_request"
    request_id: str
    tool_name: str
    tool_input: Mapping[str, Any]
    tool_use_id: str | None


@dataclass(frozen=True)
class SessionCompleted:
    """The session came to rest: ``info.state`` is ``completed``, ``failed`` or
    ``cancelled``. ``result`` is the last result message, if there was one."""

    name: ClassVar[SessionEventName] = "complete"
    info: SessionStateInfo
    result: ResultMessage | None = None


@dataclass(frozen=True)
class ErrorOccurred:
    """Something went wrong. ``source`` says where: ``"cli"`` (the CLI failed or ended),
    ``"result"`` (an error result), ``"decode"`` (an unreadable line), ``"callback"`` (an
    event callback raised), ``"store"`` (a snapshot could not be saved)."""

    name: ClassVar[SessionEventName] = "error"
    error: BaseException
    source: str


SessionEvent = Union[
    MessageReceived,
    StateChanged,
    ToolCallStarted,
    ToolCallFinished,
    PermissionRequested,
    SessionCompleted,
    ErrorOccurred,
]
"""Every event a session produces."""

EVENT_NAMES: Final[frozenset[str]] = frozenset(
    {
        "message",
        "tool_call",
        "tool_result",
        "permission_request",
        "state_change",
        "complete",
        "error",
    }
)


class EventLog:
    """An append-only list of events with a wake-up, closed once the session ends.

    Readers keep their own position, so every reader sees every event in order.
    """

    def __init__(self) -> None:
        self._events: list[SessionEvent] = []
        self._wakeup = anyio.Event()
        self._closed = False

    def append(self, event: SessionEvent) -> None:
        """Add an event and wake every reader (ignored once closed)."""
        if self._closed:
            return
        self._events.append(event)
        self._wake()

    def close(self) -> None:
        """No more events: readers finish once they have read everything."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        self._wakeup.set()
        self._wakeup = anyio.Event()

    @property
    def closed(self) -> bool:
        """True once `close()` was called."""
        return self._closed

    def __len__(self) -> int:
        return len(self._events)

    def snapshot(self) -> list[SessionEvent]:
        """Every event so far (a copy)."""
        return list(self._events)

    def read(self, start: int = 0) -> AsyncIterator[SessionEvent]:
        """Iterate over the events from position ``start`` on, until the log is closed.

        A plain iterator, not an async generator: leaving the loop early (``break``)
        needs no ``aclosing()`` and leaves nothing behind.
        """
        return _LogReader(self, start)


class _LogReader:
    """An `EventLog` reader at its own position."""

    def __init__(self, log: EventLog, position: int) -> None:
        self._log = log
        self._position = position

    def __aiter__(self) -> _LogReader:
        return self

    async def __anext__(self) -> SessionEvent:
        log = self._log
        while self._position >= len(log._events):
            if log._closed:
                raise StopAsyncIteration
            await log._wakeup.wait()
        event = log._events[self._position]
        self._position += 1
        return event


publish(
    ErrorOccurred,
    MessageReceived,
    PermissionRequested,
    SessionCompleted,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
)
