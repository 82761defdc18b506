"""An unbounded, single-consumer message buffer that never blocks the producer.

The reader task must never wait on a slow consumer: it also answers tool calls and
permission requests, and blocking it would deadlock the CLI. So messages are buffered
without a bound (nothing is dropped); the consumer waits on a wake-up event.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

import anyio

__all__ = ["Inbox"]

T = TypeVar("T")


class Inbox(Generic[T]):
    """FIFO of items plus an end marker (clean, or with an error)."""

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        # Created by the waiting consumer, not per item: an Event costs microseconds,
        # and a busy stream puts tens of thousands of items a second.
        self._wakeup: anyio.Event | None = None
        self._closed = False
        self._error: BaseException | None = None

    def put(self, item: T) -> None:
        """Append an item and wake the consumer."""
        self._items.append(item)
        event = self._wakeup
        if event is not None:
            self._wakeup = None
            event.set()

    def close(self, error: BaseException | None = None) -> None:
        """Mark the end of the stream; ``error`` is raised once the buffer is drained."""
        if not self._closed:
            self._closed = True
            self._error = error
        self.wake()

    def wake(self) -> None:
        """Wake the consumer (also used when something it watches changed)."""
        event = self._wakeup
        if event is not None:
            self._wakeup = None
            event.set()

    @property
    def closed(self) -> bool:
        """True once `close()` was called."""
        return self._closed

    @property
    def error(self) -> BaseException | None:
        """The error the stream ended with, if any."""
        return self._error

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> deque[T]:
        """The buffered items, oldest first; the consumer takes them with ``popleft()``."""
        return self._items

    async def wait(self) -> None:
        """Wait until the next `put()`, `close()` or `wake()`."""
        event = self._wakeup
        if event is None:
            event = self._wakeup = anyio.Event()
        await event.wait()
