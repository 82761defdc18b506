"""Telling a user callback's own cancellation exception from a cancellation of ours.

A callback that raises ``asyncio.CancelledError`` (or the backend's cancellation
exception) while nothing cancelled it has failed: that is its call's error, and it must
not tear down the task, the connection or the session around it. A cancellation that
*is* ours (an enclosing scope was cancelled or its deadline passed, or the asyncio task
was cancelled) always propagates.
"""

from __future__ import annotations

import anyio

from .loops import asyncio_cancelled_error, asyncio_task_cancelling

__all__ = ["raised_by_callback"]


def raised_by_callback(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of a user callback, is that callback's own failure.

    True only for a cancellation exception (``asyncio.CancelledError`` or the running
    backend's) raised while no cancellation of ours is pending; False for every other
    ``BaseException`` (``KeyboardInterrupt``, ``SystemExit``, ...) and for a real
    cancellation, which the caller must re-raise.
    """
    ours = anyio.get_cancelled_exc_class()
    native = asyncio_cancelled_error()
    if not isinstance(exc, ours if native is None else (native, ours)):
        return False
    if anyio.current_effective_deadline() <= anyio.current_time():
        return False  # an enclosing scope was cancelled (-inf) or its deadline has passed
    return not asyncio_task_cancelling()  # the asyncio task itself was cancelled
