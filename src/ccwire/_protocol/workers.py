"""Reusable worker tasks for the CLI's control requests.

Every request from the CLI (a tool call, a permission question, a hook) runs on a task
of its own, so one slow handler never holds up another. Starting a fresh task for each
costs more than the rest of a tool call's bookkeeping, so finished workers wait for the
next job instead of ending. The rule that keeps handlers independent: every job
submitted either wakes an idle worker or starts a new one, so there are always at
least as many free workers as queued jobs, and no job waits behind a busy handler.
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
        self._closed = False
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
        if self._idle:
            self._idle.pop().set()
        else:
            self.workers += 1
            self._tg.start_soon(self._work, name="ccwire control request")

    def close(self) -> None:
        """Take no more jobs; idle workers end now, busy ones after their job."""
        self._closed = True
        while self._idle:
            self._idle.pop().set()

    async def _work(self) -> None:
        jobs = self._jobs
        while True:
            while jobs:
                job, args = jobs.popleft()
                await job(*args)
                del job, args
            if self._closed:
                return
            wake = anyio.Event()
            self._idle.append(wake)
            await wake.wait()
