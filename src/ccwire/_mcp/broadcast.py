"""Delivering a server's own notifications (``notifications/*/list_changed``) to sessions.

A session registers an async *sink* with `Broadcaster.attach()`.  Changes to a
server's tools, resources or prompts happen in plain sync methods, so
`Broadcaster.announce()` only *schedules* one background delivery on the running
event loop: an ``asyncio`` task on asyncio, a ``trio.lowlevel.spawn_system_task`` on
trio (both legal from sync code running in the loop thread).  Called from a worker
thread it hops onto the loop through the anyio token captured by `attach()`;
called with no loop anywhere it leaves the change pending, and the next
`flush()` (the server calls it on every message) schedules it.  Announcements
made before the delivery runs are coalesced (one notification per method), sinks are
sent to concurrently, and a failing sink is logged and never affects the others.

A sink refuses a notification its session cannot act on by raising
`UnsupportedFeatureError` (a CLI that never re-lists tools). An awaited
`Broadcaster.send_now()` with ``strict=True`` raises it once every sink had its
turn; a background delivery logs it as a warning, once per sink.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .._core.errors import UnsupportedFeatureError
from .._core.loops import current_loop, spawn_detached

__all__ = ["Broadcaster", "Sink"]

logger = logging.getLogger("ccwire")

Sink = Callable[[dict[str, Any]], Awaitable[None]]
"""Delivers one JSON-RPC notification to the client (the CLI) of one session."""


class Broadcaster:
    """The sinks of one server and the coalesced, background delivery of its changes."""

    def __init__(self, source: str) -> None:
        self._source = source  # for log messages
        self._sinks: dict[object, Sink] = {}
        self._loop_token: Any = None
        self._scheduled: object = None  # the loop a delivery is scheduled on
        self._queued: dict[str, None] = {}  # methods waiting for delivery, in order
        self._outstanding = 0  # deliveries scheduled or running
        self._busy: tuple[object, anyio.Event] | None = None  # (loop, set when all are done)
        self._refusing: dict[object, None] = {}  # keys of sinks that refused a notification
        self.pending = False
        """True when a change waits for an event loop (see `flush()`)."""

    @property
    def sinks(self) -> list[Sink]:
        """The attached sinks."""
        return list(self._sinks.values())

    def attach(self, sink: Sink) -> Callable[[], None]:
        """Register ``sink``; returns a function that detaches it again (idempotent)."""
        key = object()
        self._sinks[key] = sink
        with contextlib.suppress(Exception):  # outside an event loop: keep any token we had
            from anyio import lowlevel

            self._loop_token = lowlevel.current_token()

        def detach() -> None:
            self._sinks.pop(key, None)
            self._refusing.pop(key, None)

        return detach

    def announce(self, method: str) -> None:
        """Schedule ``{"method": method}`` for every attached sink (see module doc)."""
        if not self._sinks:
            return
        self._queued[method] = None
        self._schedule()

    def flush(self) -> None:
        """Schedule a delivery that had to wait for an event loop."""
        if self.pending:
            self._schedule()

    def _schedule(self) -> None:
        self.pending = False
        loop = current_loop()
        if loop is not None:
            if self._scheduled is not loop:  # else: coalesced into the scheduled delivery
                self._scheduled = loop
                if self._busy is None or self._busy[0] is not loop:
                    self._busy, self._outstanding = (loop, anyio.Event()), 0
                self._outstanding += 1
                spawn_detached(self._deliver, f"ccwire {self._source} notifications")
            return
        if self._loop_token is not None:  # a worker or foreign thread: hop onto the loop
            try:
                from anyio import from_thread

                from_thread.run_sync(self._schedule, token=self._loop_token)
                return
            except Exception:
                pass
        self.pending = True

    async def _deliver(self) -> None:
        self._scheduled = None  # changes made from here on schedule a new delivery
        methods, self._queued = list(self._queued), {}
        try:
            for method in methods:
                await self.send_now(method)
        finally:
            self._outstanding -= 1
            busy = self._busy
            if self._outstanding <= 0 and busy is not None:
                self._busy = None
                busy[1].set()

    @property
    def busy(self) -> bool:
        """True while a delivery is scheduled or running on some event loop."""
        return self._busy is not None

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until the deliveries scheduled on this event
        loop have been acknowledged by every sink."""
        busy = self._busy
        if busy is not None and busy[0] is current_loop():
            with anyio.move_on_after(timeout):
                await busy[1].wait()

    async def send_now(self, method: str, *, strict: bool = False) -> None:
        """Send ``{"method": method}`` to every attached sink, now.

        With ``strict``, a sink's `UnsupportedFeatureError` is raised
        (the first one, after every sink had its turn) instead of logged.
        """
        self._queued.pop(method, None)
        sinks = list(self._sinks.items())
        refusals: list[UnsupportedFeatureError] | None = [] if strict else None
        if len(sinks) == 1:
            await self._send_safely(*sinks[0], method, refusals)
        elif sinks:
            async with anyio.create_task_group() as tg:
                for key, sink in sinks:
                    tg.start_soon(self._send_safely, key, sink, method, refusals)
        if refusals:
            raise refusals[0]

    async def _send_safely(
        self,
        key: object,
        sink: Sink,
        method: str,
        refusals: list[UnsupportedFeatureError] | None,
    ) -> None:
        try:
            await sink({"jsonrpc": "2.0", "method": method})
        except UnsupportedFeatureError as exc:
            first = key not in self._refusing
            if key in self._sinks:
                self._refusing[key] = None
            if refusals is not None:
                refusals.append(exc)
            elif first:  # once per session: every later change would say the same
                logger.warning("ccwire: %s: %s", self._source, exc)
        except Exception as exc:
            logger.warning("ccwire: %s could not deliver %s: %s", self._source, method, exc)
