"""The one module that reaches past anyio, for what anyio has no API for.

anyio starts tasks only inside a task group, and a few objects must outlive the task
that made them: a connection opened in one task and closed in another (`TaskHost`), a
server's notification sent from a plain method (`_mcp.broadcast`). For those, a task
detached from any task group is started the backend's own way: an asyncio task, or a
trio system task. Telling a callback's own ``asyncio.CancelledError`` from a
cancellation of its task also needs asyncio itself (`_core.cancel`).

asyncio is looked up in ``sys.modules``, never imported: no asyncio loop can run before
it was imported, and a trio program never loads it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["asyncio_cancelled_error", "asyncio_task_cancelling", "current_loop", "spawn_detached"]

_DETACHED: set[Any] = set()  # strong references to detached asyncio tasks


def _asyncio_loop() -> Any:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _trio_token() -> object | None:
    trio = sys.modules.get("trio")
    if trio is None:
        return None
    with contextlib.suppress(RuntimeError):
        token: object = trio.lowlevel.current_trio_token()
        return token
    return None


def current_loop() -> object | None:
    """An identity for the event loop running in this thread (an asyncio loop or a trio
    token), or ``None`` outside one."""
    loop = _asyncio_loop()
    return loop if loop is not None else _trio_token()


def spawn_detached(fn: Callable[[], Awaitable[None]], name: str) -> bool:
    """Start ``fn()`` on the event loop of this thread, in no task group: an asyncio
    task, or a trio system task; ``False`` when no loop runs here.

    ``fn`` must handle its own exceptions (on trio an escaping one is fatal) and is not
    cancelled by anybody's scope: whoever starts it stops it.
    """
    loop = _asyncio_loop()
    if loop is not None:
        task = loop.create_task(fn(), name=name)
        _DETACHED.add(task)
        task.add_done_callback(_DETACHED.discard)
        return True
    if _trio_token() is not None:
        sys.modules["trio"].lowlevel.spawn_system_task(fn, name=name)
        return True
    return False


def asyncio_cancelled_error() -> type[BaseException] | None:
    """``asyncio.CancelledError``, when asyncio is loaded."""
    asyncio = sys.modules.get("asyncio")
    return None if asyncio is None else asyncio.CancelledError


def asyncio_task_cancelling() -> bool:
    """Whether the running asyncio task was itself cancelled (Python 3.11+)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:  # no asyncio task can be running
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop running: trio
        return False
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if task is not None and cancelling is not None else False


def asyncio_uncancel() -> None:
    """Withdraw one cancellation request of the running asyncio task (Python 3.11+; a
    no-op on trio and before 3.11, where a caught cancellation leaves nothing behind)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop running: trio
        return
    uncancel = getattr(task, "uncancel", None)
    if task is not None and uncancel is not None and task.cancelling():
        uncancel()
