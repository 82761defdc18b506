"""Typed session events, and the append-only log that streams and callbacks read.

Every event a session produces is appended to one `EventLog`, in order.
``Session.events()`` iterates the log (from its start by default) and every callback
registered with ``Session.on`` is fed by its own reader task, so a slow callback only
delays itself and never the session or the other subscribers.

Those reader tasks follow the log with a `Cursor` whose progress can be awaited:
`EventLog.drained()` waits until every callback has handled the events up to a
position, and `drain()` does so within `EVENT_DRAIN_TIMEOUT`. This is how
``Session.wait_for_completion()`` makes sure the final ``state_change`` reached the
callbacks before it returns.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Final, Literal, Union

import anyio

from .._wire.messages import Message, ResultMessage
from .state import SessionState, SessionStateInfo

__all__ = [
    "EVENT_DRAIN_TIMEOUT",
    "EVENT_NAMES",
    "Cursor",
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
    "drain",
]

logger = logging.getLogger("ccwire")

EVENT_DRAIN_TIMEOUT = 5.0
"""Seconds `drain()` waits for callbacks to catch up before giving up (with a warning)."""

_FOLLOWING: ContextVar[Cursor | None] = ContextVar("ccwire_following", default=None)

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
    """Something went wrong. ``source`` says where: ``"cli"`` (the CLI failed or ended, or
    the session ended before a prompt ``send()`` queued while paused was written),
    ``"result"`` (an error result), ``"decode"`` (an unreadable line), ``"callback"`` (a
    user callback failed: an event callback raised, or a hook, ``can_use_tool`` or tool
    answer failed or could not be encoded, a `CallbackError`), ``"store"`` (a snapshot
    could not be saved)."""

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


class Cursor:
    """A follower's position in an `EventLog`, which `EventLog.drained()` waits on.

    Made by `EventLog.cursor()` (registered at once, before its reader runs); the
    position counts the events the follower has finished handling. `close()` it when
    the follower stops.

    Attributes:
        position: the index of the next event to handle.
    """

    def __init__(self, log: EventLog, position: int) -> None:
        self._log = log
        self.position = position

    def close(self) -> None:
        """Stop counting this follower (idempotent)."""
        self._log._cursors.discard(self)
        self._log._progressed()


class EventLog:
    """An append-only list of events with a wake-up, closed once the session ends.

    Readers keep their own position, so every reader sees every event in order.
    """

    def __init__(self) -> None:
        self._events: list[SessionEvent] = []
        self._wakeup = anyio.Event()
        self._closed = False
        self._cursors: set[Cursor] = set()
        self._progress = anyio.Event()

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

    def _progressed(self) -> None:
        self._progress.set()
        self._progress = anyio.Event()

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

    def cursor(self, start: int) -> Cursor:
        """A `Cursor` at ``start``, counted by `drained()` from now on."""
        cursor = Cursor(self, start)
        self._cursors.add(cursor)
        return cursor

    async def follow(self, cursor: Cursor) -> AsyncIterator[SessionEvent]:
        """Yield the events from ``cursor`` on, until the log is closed.

        An event counts as handled (the cursor moves past it) when the next one is
        asked for; the cursor is closed when this generator ends.
        """
        _FOLLOWING.set(cursor)  # this task's own context: its callbacks see it
        try:
            while True:
                while cursor.position < len(self._events):
                    yield self._events[cursor.position]
                    cursor.position += 1
                    self._progressed()
                if self._closed:
                    return
                await self._wakeup.wait()
        finally:
            cursor.close()

    def following(self) -> bool:
        """Whether the calling task is one of this log's followers (a callback of its
        session, or something that callback awaits)."""
        own = _FOLLOWING.get()
        return own is not None and own._log is self

    async def drained(self, position: int) -> None:
        """Wait until every open cursor has handled the events before ``position``.

        The cursor of the calling task (a callback waiting for its own session) is
        not waited for. Unbounded: see `drain()`.
        """
        own = _FOLLOWING.get()
        while any(c.position < position for c in self._cursors if c is not own):
            await self._progress.wait()


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


async def drain(log: EventLog, timeout: float | None = None) -> bool:
    """Wait, at most ``timeout`` seconds, until the callbacks handled every event
    appended so far. Returns False (and logs a warning) when they did not.

    Args:
        log: the session's event log.
        timeout: the bound in seconds (default `EVENT_DRAIN_TIMEOUT`).

    Returns:
        True when every callback caught up in time.
    """
    if timeout is None:
        timeout = EVENT_DRAIN_TIMEOUT
    position = len(log)
    with anyio.move_on_after(timeout):
        await log.drained(position)
        return True
    logger.warning(
        "ccwire: session event callbacks still busy after %g s; not waiting for them", timeout
    )
    return False
