"""Reusable worker tasks for the CLI's control requests.

Every request from the CLI (a tool call, a permission question, a hook) runs on a
worker task, so one slow handler never holds up another. Starting a fresh task for each
costs more than the rest of a tool call's bookkeeping, so finished workers wait for the
next job instead of ending.

The rule that keeps handlers independent: while a job is queued, some worker is on its
way to the queue (woken, or started, and not yet in a job). A worker about to run a job
while others are still queued first sends one more worker on its way, in case this
job's handler waits. Sixteen requests read at once thus cost two wake-ups, not sixteen,
when their handlers never wait (the first worker runs them one after the other and the
second finds the queue empty); when one waits, the next job is taken by the worker
already on its way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc

__all__ = ["WorkerPool"]

_Job = Callable[..., Coroutine[Any, Any, None]]


class WorkerPool:
    """Run ``job(*args)`` submissions concurrently on reused tasks of ``task_group``."""

    def __init__(self, task_group: anyio.abc.TaskGroup) -> None:
        self._tg = task_group
        self._jobs: deque[tuple[_Job, tuple[Any, ...]]] = deque()
        self._idle: list[anyio.Event] = []
        self._coming = 0  # workers woken or started, not yet at the queue
        self._closed = False
        self._new_event: Callable[[], anyio.Event] | None = None
        self.workers = 0
        """How many worker tasks were started (for tests and diagnostics)."""

    def submit(self, job: _Job, *args: Any) -> None:
        """Run ``job(*args)`` on a free worker (never waits; ``job`` must not raise).

        After `close()` the job still runs, on a task of its own.
        """
        if self._closed:
            self._tg.start_soon(job, *args)
            return
        self._jobs.append((job, args))
        if not self._coming:
            self._send_one()

    def _send_one(self) -> None:
        """Wake an idle worker, or start one, for the queue."""
        self._coming += 1
        if self._idle:
            self._idle.pop().set()
        else:
            self.workers += 1
            self._tg.start_soon(self._work, name="ccwire control request")

    def close(self) -> None:
        """Take no more jobs; idle workers end now, busy ones after their job."""
        self._closed = True
        while self._idle:
            self._coming += 1
            self._idle.pop().set()

    async def _work(self) -> None:
        jobs = self._jobs
        while True:
            self._coming -= 1  # at the queue now
            while jobs:
                job, args = jobs.popleft()
                if jobs and not self._coming and not self._closed:
                    self._send_one()  # for the rest, in case this job waits
                await job(*args)
                del job, args
            if self._closed:
                return
            new_event = self._new_event
            if new_event is None:  # the backend's own class: no backend lookup per wait
                new_event = self._new_event = type(anyio.Event())
            wake = new_event()
            self._idle.append(wake)
            await wake.wait()
            if self._closed and not jobs:
                return
