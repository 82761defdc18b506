"""A watchdog outside the event loop: which task's synchronous code blocks the loop, and how long.

A task function runs on the batch's event loop (the caller's, or a Ray actor's). One
that calls blocking code (``time.sleep``, a CPU-bound loop, a blocking socket) holds
the whole loop: no other session reads its CLI, and no time limit can fire, since a
cancellation is delivered only where a task yields. Nothing in the process can safely
stop such code (an exception raised into the loop's thread from another thread can
land in the loop's own machinery instead, and never interrupts a call in C such as
``time.sleep``); what can be done is done:

* `LoopWatchdog` beats in the loop every `TICK` seconds; a thread of its own (a
  daemon, stopped and joined when the watchdog ends) sees the beats stop. Once the
  loop has not turned for `STALL_SECONDS`, the thread reads the loop thread's stack,
  finds the task function running there (`LoopWatchdog.watching` registers each
  one's frame) and where it is (``file:line in function``), and logs a warning.
* When the loop turns again, the stall is recorded against that task (`blocked`):
  its result says how long it blocked the loop (`BatchResult.blocked_s`), and a task
  that blocked past its time limit fails with ``error_kind="timeout"`` even when it
  returned (`run_task`); the time *other* code blocked the loop does not count against
  a task's limit (`credit`): it is not timed out for another's block (and if its limit
  passes all the same, its error says who blocked the loop meanwhile).
* On Ray, the driver pings the actor of a task overdue past its limit: an actor whose
  loop does not answer is killed, the overdue task fails with ``timeout``, and the
  others of that actor are handled as on any lost actor (``ray_executor``).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

import anyio

__all__ = ["STALL_SECONDS", "TICK", "LoopWatchdog", "Stall", "blocking_text"]

logger = logging.getLogger("ccwire.batch")

STALL_SECONDS = 1.0
"""A loop that did not turn for this long is blocked (synchronous code is running)."""

TICK = 0.1
"""How often the loop beats, and the thread looks."""

_JOIN_SECONDS = 2.0  # the thread sleeps at most TICK between looks: it ends at once
_KEPT = 10_000  # stalls kept (the last ones: a task asks only about its own time)


@dataclass
class Stall:
    """One time the event loop was blocked for `STALL_SECONDS` or more.

    Attributes:
        task_id: The task whose function was running (`None`: code of no task
            function, an in-process tool or a hook, say).
        where: The innermost Python code running then (``file:line in function``).
        began: When the loop last turned before it (``time.monotonic()``).
        seconds: How long the loop was blocked (complete once it turned again).
        ended: The loop turned again.
    """

    task_id: str | None
    where: str | None
    began: float
    seconds: float = 0.0
    ended: bool = False


def blocking_text(seconds: float, where: str | None) -> str:
    """How a result's error names the block: ``blocked the event loop for 3.0 s (...)``."""
    at = f" at {where}" if where else ""
    return (
        f"blocked the event loop for {seconds:.1f} s (synchronous code{at}: use "
        "`await anyio.sleep`, or `await anyio.to_thread.run_sync` for blocking calls)"
    )


class LoopWatchdog:
    """Watches one event loop from a thread of its own (see the module's notes).

    Args:
        stall_seconds: How long the loop must not turn to count as blocked.
    """

    def __init__(self, stall_seconds: float = STALL_SECONDS) -> None:
        self.stall_seconds = stall_seconds
        self._lock = threading.Lock()
        self._frames: dict[int, tuple[FrameType, str]] = {}  # id(frame): (frame, task id)
        self._beat = time.monotonic()
        self._current: Stall | None = None
        self.stalls: collections.deque[Stall] = collections.deque(maxlen=_KEPT)  # ended ones
        self._loop_thread = 0
        self._stop = threading.Event()

    # ----------------------------------------------------------------- lifecycle

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[LoopWatchdog]:
        """Beat in the current loop, and watch it from a thread, inside the block; the
        thread is stopped and joined when it ends."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.beat_forever)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()

    async def beat_forever(self) -> None:
        """Start the thread and beat until cancelled; then stop and join the thread."""
        self._loop_thread = threading.get_ident()
        self._beat = time.monotonic()
        self._stop.clear()
        thread = threading.Thread(target=self._watch, name="ccwire loop watchdog", daemon=True)
        thread.start()
        try:
            while True:
                self._turned()
                await anyio.sleep(TICK)
        finally:
            self._stop.set()
            thread.join(_JOIN_SECONDS)
            self._turned()

    def _turned(self) -> None:
        """The loop turns: close the stall the thread saw, if any."""
        now = time.monotonic()
        with self._lock:
            stall, self._current = self._current, None
            if stall is not None:
                stall.seconds, stall.ended = now - stall.began, True
                self.stalls.append(stall)
            self._beat = now

    def _watch(self) -> None:
        """The thread: look every `TICK`; note the stall once the loop stopped turning."""
        while not self._stop.wait(TICK):
            with self._lock:
                if self._current is not None:
                    continue
                began = self._beat
                if time.monotonic() - began < self.stall_seconds:
                    continue
                task_id, where = self._culprit()
                self._current = Stall(task_id, where, began)
            who = f"task {task_id!r}" if task_id is not None else "code of no task function"
            logger.warning(
                "ccwire: %s has blocked the batch's event loop for %.1f s (synchronous code%s): "
                "no other session runs, and no time limit can stop it until it yields",
                who, time.monotonic() - began, f" at {where}" if where else "",
            )  # fmt: skip

    def _culprit(self) -> tuple[str | None, str | None]:
        """The task function on the loop thread's stack, and the innermost code there."""
        frame: FrameType | None = sys._current_frames().get(self._loop_thread)
        where = None
        task_id = None
        while frame is not None:
            if where is None:
                code = frame.f_code
                where = f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
            entry = self._frames.get(id(frame))
            if entry is not None and entry[0] is frame:
                task_id = entry[1]
                break
            frame = frame.f_back
        return task_id, where

    # ----------------------------------------------------------------- tasks

    @contextlib.contextmanager
    def watching(self, coroutine: Any, task_id: str) -> Iterator[None]:
        """Attribute what blocks the loop inside `coroutine` (a task function's) to `task_id`."""
        frame = getattr(coroutine, "cr_frame", None)
        if frame is None:  # not a native coroutine: nothing to find on a stack
            yield
            return
        with self._lock:
            self._frames[id(frame)] = (frame, task_id)
        try:
            yield
        finally:
            with self._lock:
                self._frames.pop(id(frame), None)

    def blocked(self, task_id: str, since: float) -> tuple[float, str | None]:
        """How long `task_id` blocked the loop since `since` (``time.monotonic()``), in
        stalls that ended, and where it was in the longest one."""
        with self._lock:
            # (a stall begins at the loop's last beat, which may come before the task)
            mine = [s for s in self.stalls if s.task_id == task_id and s.began + s.seconds > since]
        if not mine:
            return 0.0, None
        worst = max(mine, key=lambda s: s.seconds)
        return sum(s.seconds for s in mine), worst.where

    def credit(self, task_id: str, since: float) -> float:
        """How long code other than `task_id`'s blocked the loop since `since` (a stall
        still going on included, as far as it went): time a time limit does not count."""
        now = time.monotonic()
        with self._lock:
            total = sum(
                max(0.0, s.began + s.seconds - max(s.began, since))
                for s in self.stalls
                if s.task_id != task_id
            )
            current = self._current
            if current is not None and current.task_id != task_id:
                total += max(0.0, now - max(current.began, since))
        return total

    def others_blocked(self, task_id: str, since: float) -> tuple[float, list[str]]:
        """How long other code blocked the loop since `since`, and the tasks it was."""
        with self._lock:
            theirs = [s for s in self.stalls
                      if s.task_id != task_id and s.began + s.seconds > since]  # fmt: skip
        names = sorted({s.task_id for s in theirs if s.task_id is not None})
        return sum(s.seconds for s in theirs), names
