"""Telling a user callback's own cancellation exception from a cancellation of ours.

A callback that raises ``asyncio.CancelledError`` (or the backend's cancellation
exception) while nothing cancelled it has failed: that is its call's error, and it must
not tear down the task, the connection or the session around it. A cancellation that
*is* ours (an enclosing scope was cancelled or its deadline passed, or the asyncio task
was cancelled) always propagates.
"""

from __future__ import annotations

import sys

import anyio

__all__ = ["raised_by_callback"]


def raised_by_callback(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of a user callback, is that callback's own failure.

    True only for a cancellation exception (``asyncio.CancelledError`` or the running
    backend's) raised while no cancellation of ours is pending; False for every other
    ``BaseException`` (``KeyboardInterrupt``, ``SystemExit``, ...) and for a real
    cancellation, which the caller must re-raise.
    """
    # asyncio is looked up, not imported: `import ccwire` must not load it (a trio
    # program never does), and without it no asyncio.CancelledError can exist
    asyncio = sys.modules.get("asyncio")
    ours = anyio.get_cancelled_exc_class()
    if not isinstance(exc, ours if asyncio is None else (asyncio.CancelledError, ours)):
        return False
    if anyio.current_effective_deadline() <= anyio.current_time():
        return False  # an enclosing scope was cancelled (-inf) or its deadline has passed
    return not _asyncio_task_cancelling()  # the asyncio task itself was cancelled


def _asyncio_task_cancelling() -> bool:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:  # no asyncio task can be running
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop running: trio
        return False
    cancelling = getattr(task, "cancelling", None)  # Python 3.11+
    return bool(cancelling()) if task is not None and cancelling is not None else False
