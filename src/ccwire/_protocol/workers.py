"""Reused tasks for the CLI's requests.

Each request of the CLI (a tool call, a permission question, a hook) runs on a task of
its own, so one slow handler never holds up another. Starting an anyio task costs
about ten times what the rest of a request's bookkeeping does, so a task that finished
its job waits, idle, for the next one instead of ending. A job is only ever given to
an idle task, or to a new one: never queued behind a busy one.

A job runs inside a cancel scope of its task, which it gets as its first argument and
which encloses that job alone while it runs: cancelling the scope cancels the job. The
task's jobs share that one scope (making, entering and leaving a scope per job cost as
much as the rest of a tool call's bookkeeping), so a job cancelled through it ends the
task too, and the next job goes to another task.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc

__all__ = ["Workers"]

Job = Callable[..., Coroutine[Any, Any, None]]
"""``job(scope, *args)``: ``scope`` encloses the job alone while it runs."""


class _Idle:
    """A worker waiting for its next job."""

    __slots__ = ("job", "wake")

    def __init__(self) -> None:
        self.wake = anyio.Event()
        self.job: tuple[Job, tuple[Any, ...]] | None = None


class Workers:
    """Runs ``job(scope, *args)`` on an idle task of ``task_group``, or on a new one."""

    def __init__(self, task_group: anyio.abc.TaskGroup, name: str) -> None:
        self._tg = task_group
        self._name = name
        self._idle: list[_Idle] = []
        self._closed = False

    def submit(self, job: Job, *args: Any) -> None:
        """Run ``job(scope, *args)`` now, concurrently with every other job (``job`` must
        not raise, but for a cancellation through ``scope``, and must leave no reference
        to ``scope`` behind: once it returns, the scope encloses the task's next job)."""
        if self._idle and not self._closed:
            idle = self._idle.pop()
            idle.job = (job, args)
            idle.wake.set()
        else:
            self._tg.start_soon(self._work, job, args, name=self._name)

    def close(self) -> None:
        """Let the idle tasks end; busy ones end after their job."""
        self._closed = True
        while self._idle:
            self._idle.pop().wake.set()

    async def _work(self, job: Job, args: tuple[Any, ...]) -> None:
        with anyio.CancelScope() as scope:
            while True:
                await job(scope, *args)  # cancelled through the scope: the task ends
                del job, args  # no reference to a finished job's values while idle
                if self._closed or scope.cancel_called:  # (cancelled, yet it finished)
                    return
                idle = _Idle()
                self._idle.append(idle)
                await idle.wake.wait()
                if idle.job is None:  # closed
                    return
                job, args = idle.job
