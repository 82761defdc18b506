"""A bounded thread budget per sync handler, so one stuck handler can't starve the rest.

A plain ``def`` tool, resource or prompt handler runs in a worker thread. A thread
cannot be interrupted: a handler that ignores its timeout (or is cancelled) keeps its
thread until it returns, however long that takes. With the event loop's shared pool
(40 threads by default, counted differently by asyncio and trio) a few such handlers
would leave every other sync handler of every tool and server waiting for a thread.

So every sync handler gets its own `ThreadBudget`: at most `limit` of its calls run at
once, and a thread counts against the budget until the handler really returns, even
after its call was abandoned (same rule on asyncio and trio). Calls beyond the budget
wait (their tool timeout and cancellation still apply); other handlers are not
affected. A call abandoned before its thread started never runs.

Python waits for every such thread when the program exits; `abandoned_threads()`
names the ones still running, so that a command line can exit without them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import anyio

__all__ = ["DEFAULT_THREAD_BUDGET", "ThreadBudget", "abandoned_threads"]

T = TypeVar("T")

DEFAULT_THREAD_BUDGET: Final = 8
"""Threads one sync handler may occupy at once (calls beyond it wait for one)."""

_ABANDONED: dict[threading.Thread, str] = {}
"""Threads still running a handler whose call was abandoned -> the handler's name."""
_ABANDONED_LOCK: Final = threading.Lock()


def abandoned_threads() -> dict[threading.Thread, str]:
    """The threads still running a handler whose call was abandoned (cancelled or timed
    out), each with the handler's name."""
    with _ABANDONED_LOCK:
        return {thread: what for thread, what in _ABANDONED.items() if thread.is_alive()}


def _waker() -> Callable[[Callable[[], object]], object]:
    """A thread-safe, non-blocking way to run a callback on the current event loop."""
    import anyio.lowlevel  # on first use: importing the tools stays cheap

    native: Any = anyio.lowlevel.current_token().native_token
    run_soon = getattr(native, "run_sync_soon", None)  # trio
    if run_soon is None:
        run_soon = native.call_soon_threadsafe  # asyncio (and uvloop)
    return run_soon  # type: ignore[no-any-return]


@dataclass(eq=False)
class _Waiter:
    """A call waiting for a thread of the budget."""

    wake: Callable[[Callable[[], object]], object]
    # a lambda: touching anyio.Event at import would load anyio's synchronization module
    event: anyio.Event = field(default_factory=lambda: anyio.Event())
    granted: bool = False


@dataclass(eq=False)
class _Call:
    """Where one call's thread is (what `ThreadBudget.run()` and its thread share)."""

    started: bool = False
    done: bool = False
    thread: threading.Thread | None = None
    skip: bool = False  # abandoned before its thread started: don't run it
    abandoned: bool = False  # abandoned while running: the thread gives the slot back


class ThreadBudget:
    """At most ``limit`` threads busy with one handler; thread-safe, loop-independent.

    Args:
        limit: the number of threads (at least 1).
        what: names the handler in messages.

    Attributes:
        limit: the number of threads.
        what: the handler's name.
    """

    def __init__(self, limit: int = DEFAULT_THREAD_BUDGET, what: str = "handler") -> None:
        if limit < 1:
            raise ValueError(f"a thread budget needs at least 1 thread, got {limit}")
        self.limit = limit
        self.what = what
        self._lock = threading.Lock()
        self._busy = 0
        self._waiters: deque[_Waiter] = deque()

    @property
    def busy(self) -> int:
        """Threads running this handler now (including abandoned calls still running)."""
        return self._busy

    @property
    def waiting(self) -> int:
        """Calls waiting for a thread of this budget."""
        return len(self._waiters)

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` in a worker thread of this budget.

        A cancelled call returns at once (the thread, if it started, finishes in the
        background and keeps its place in the budget until then).
        """
        await self._acquire()
        call = _Call()

        def work() -> T:
            with self._lock:
                if call.skip:
                    return None  # type: ignore[return-value]  # nobody waits for it
                call.started = True
                call.thread = threading.current_thread()
            try:
                return func(*args)
            finally:
                with self._lock:
                    call.done = True
                    release = call.abandoned
                if release:
                    with _ABANDONED_LOCK:
                        _ABANDONED.pop(threading.current_thread(), None)
                    self._release()

        import anyio.to_thread  # on first use: importing the tools stays cheap

        try:
            # a limiter of its own: the shared default pool is never used
            return await anyio.to_thread.run_sync(
                work, abandon_on_cancel=True, limiter=anyio.CapacityLimiter(1)
            )
        finally:
            with self._lock:
                if not call.started:
                    call.skip = True
                    release = True
                elif not call.done:
                    call.abandoned = True
                    release = False
                    if call.thread is not None:
                        with _ABANDONED_LOCK:
                            _ABANDONED[call.thread] = self.what
                else:
                    release = True
            if release:
                self._release()

    async def _acquire(self) -> None:
        with self._lock:
            if self._busy < self.limit and not self._waiters:
                self._busy += 1
                return
            waiter = _Waiter(_waker())
            self._waiters.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._waiters.remove(waiter)
            if granted:
                self._release()  # pass the slot on
            raise

    def _release(self) -> None:
        """Give a slot back: to the first waiter, else to the pool (from any thread)."""
        while True:
            with self._lock:
                if not self._waiters:
                    self._busy -= 1
                    return
                waiter = self._waiters.popleft()
                waiter.granted = True
            try:
                waiter.wake(waiter.event.set)
                return
            except Exception:  # its event loop is gone: try the next waiter
                continue
