"""Telling a user callback's own failure from a cancellation (or a stop) of ours.

A callback that raises ``asyncio.CancelledError`` (or the backend's cancellation
exception) while nothing cancelled it has failed: that is its call's error, and it must
not tear down the task, the connection or the session around it. So has a callback that
raises any other ``BaseException`` of its own (a library's ``BaseException`` subclass, a
test framework's failure, an exception group of these). A cancellation that *is* ours
(an enclosing scope was cancelled or its deadline passed, or the asyncio task was
cancelled) always propagates, and so do the program's own stop requests:
``KeyboardInterrupt``, ``SystemExit`` and ``GeneratorExit`` (a coroutine being closed).
"""

from __future__ import annotations

import anyio

from .groups import leaves
from .loops import asyncio_cancelled_error, asyncio_task_cancelling

__all__ = ["is_cancellation", "no_scope_cancelled", "raised_by_callback", "stop_request"]

_STOPS = (KeyboardInterrupt, SystemExit, GeneratorExit)
"""Raised out of a callback, these stop the program (or close the coroutine): never
contained in the call."""


def raised_by_callback(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of a user callback, is that callback's own failure
    (to be answered in its call, the connection going on).

    True for a cancellation exception (``asyncio.CancelledError`` or the running
    backend's) raised while no cancellation of ours is pending, for every other
    ``BaseException`` subclass but ``KeyboardInterrupt``, ``SystemExit`` and
    ``GeneratorExit``, and for an exception group made only of such failures. False for
    those three, for a real cancellation, and for a group holding either: the caller
    must re-raise them. (An ``Exception`` is the callback's failure too; callers catch
    it first.)
    """
    inner = getattr(exc, "exceptions", None)  # an exception group (no name for it on 3.10)
    if isinstance(exc, BaseException) and isinstance(inner, tuple) and inner:
        return all(isinstance(e, BaseException) and raised_by_callback(e) for e in inner)
    if isinstance(exc, Exception):
        return True
    if isinstance(exc, _STOPS):
        return False
    if not is_cancellation(exc):
        return True  # a BaseException of the callback's own
    if not no_scope_cancelled():
        return False
    return not asyncio_task_cancelling()  # the asyncio task itself was cancelled


def no_scope_cancelled() -> bool:
    """Whether no enclosing cancel scope is cancelled (its effective deadline -inf) nor
    past its deadline: a cancellation raised now is not one of ours, but the task's own
    (``asyncio.current_task().cancel()``) or a callback's."""
    return anyio.current_effective_deadline() > anyio.current_time()


def is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation exception: ``asyncio.CancelledError`` or the
    running backend's."""
    ours = anyio.get_cancelled_exc_class()
    native = asyncio_cancelled_error()
    return isinstance(exc, ours if native is None else (native, ours))


def stop_request(exc: BaseException) -> BaseException | None:
    """The ``KeyboardInterrupt`` or ``SystemExit`` that ``exc`` is (or that an exception
    group ``exc`` holds, at any depth), if any: raised out of a callback, it stops the
    connection, and is reported first."""
    return next((e for e in leaves(exc) if isinstance(e, (KeyboardInterrupt, SystemExit))), None)
