"""A task group that lives in a task of its own, for objects that outlive a scope.

A connection is opened in one place (``await client.connect()``, perhaps inside
``anyio.fail_after(...)``) and closed in another (``await client.disconnect()`` outside
it, or an async generator's finalizer in another task). A task group entered by hand
in ``connect()`` belongs to the cancel scopes of the task and block that entered it:
leaving it anywhere else raises "cancel scope" errors, and cancelling it can cancel a
task that is not ours. `TaskHost` instead runs the task group in a task that belongs
to nobody else (an asyncio task, or a trio system task) and is stopped by
`TaskHost.aclose()`, from any task, any scope, bounded and shielded.

The host's tasks are not cancelled by the caller's scopes: whoever opens a host must
close it (a ``finally`` block, ``async with``, or a finalizer).
"""

from __future__ import annotations

import logging

import anyio
import anyio.abc

from .loops import spawn_detached

__all__ = ["TaskHost"]

logger = logging.getLogger("ccwire")


class TaskHost:
    """Owns one task group, run by a task of its own; see the module docstring."""

    def __init__(self, name: str = "ccwire task host") -> None:
        self._name = name
        self._tg: anyio.abc.TaskGroup | None = None
        self._scope: anyio.CancelScope | None = None
        self._ready: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._task_id: int | None = None  # the host task's
        self.error: BaseException | None = None
        """What escaped the task group (a bug in a background task), if anything."""

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        """The running task group (after `start()`, before `aclose()`)."""
        if self._tg is None:
            raise RuntimeError("the task host is not running")
        return self._tg

    async def start(self) -> anyio.abc.TaskGroup:
        """Start the host task and return its task group once it is open."""
        ready = self._ready = anyio.Event()
        self._done = anyio.Event()
        if not spawn_detached(self._run, self._name):
            raise RuntimeError("a task host needs a running asyncio or trio event loop")
        with anyio.CancelScope(shield=True):
            await ready.wait()  # the next loop iteration: the host opens its group at once
        return self.task_group

    async def _run(self) -> None:
        assert self._ready is not None and self._done is not None
        self._task_id = anyio.get_current_task().id
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    self._ready.set()
                    await anyio.sleep_forever()
        except BaseException as exc:  # nothing may escape a system task
            if not isinstance(exc, anyio.get_cancelled_exc_class()):
                self.error = exc
                logger.exception("ccwire: a background task failed")
        finally:
            self._tg = None
            self._ready.set()
            self._done.set()

    def _runs_current_task(self) -> bool:
        """Whether the current task is the host task or one of its descendants."""
        return self._descends(anyio.get_current_task().id)

    def _descends(self, task_id: int) -> bool:
        """Whether task ``task_id`` is the host task or one of its descendants."""
        if self._task_id is None:
            return False
        parents = {task.id: task.parent_id for task in anyio.get_running_tasks()}
        tid: int | None = task_id
        while tid is not None:
            if tid == self._task_id:
                return True
            tid = parents.get(tid)
        return False

    def cancel(self) -> None:
        """Cancel the host's tasks (synchronous; `aclose()` also waits for them)."""
        if self._scope is not None:
            self._scope.cancel()

    async def aclose(self, timeout: float = 10.0) -> None:
        """Cancel every task of the host and wait (shielded, at most ``timeout`` s).

        Called from one of the host's own tasks (a callback that closes its session),
        it only cancels: that task cannot wait for its own end.
        """
        self.cancel()
        done = self._done
        if done is None or self._runs_current_task():
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout):
            await done.wait()
        if not done.is_set():  # not waited for any longer, but not silently
            stuck = [str(t.name) for t in anyio.get_running_tasks() if self._descends(t.id)]
            logger.warning(
                "ccwire: %s: %d task(s) still running %g s after they were cancelled (a "
                "callback that ignores cancellation?); no longer waited for: %s",
                self._name, len(stuck), timeout, ", ".join(stuck),
            )  # fmt: skip
