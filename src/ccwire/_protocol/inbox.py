"""A single-consumer message buffer with a budget, for flow control.

The reader never waits on a slow consumer inside its handlers: it also answers tool
calls and permission requests. Instead, the buffer counts the size of what it holds
(the length of each message's JSON text) against a budget. Once over budget it calls
``on_full`` (the connection stops reading the CLI's output, whose pipe then fills up
so the CLI waits); once the consumer has taken it down to half the budget it calls
``on_drained``. Nothing is ever dropped; the consumer waits on a wake-up event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio

__all__ = ["Inbox"]

T = TypeVar("T")


def _nothing() -> None:
    return None


class Inbox(Generic[T]):
    """FIFO of items plus an end marker (clean, or with an error)."""

    def __init__(
        self,
        budget: int | None = None,
        *,
        on_full: Callable[[], None] = _nothing,
        on_drained: Callable[[], None] = _nothing,
    ) -> None:
        self._items: deque[T] = deque()
        self._sizes: deque[int] = deque()
        self._budget = budget
        self._low = budget // 2 if budget is not None else 0
        self._on_full = on_full
        self._on_drained = on_drained
        self.buffered = 0
        """The total size of the items held."""
        self.full = False
        """Whether ``on_full`` was called and ``on_drained`` not yet."""
        # Created by the waiting consumer, not per item: an Event costs microseconds,
        # and a busy stream puts tens of thousands of items a second.
        self._wakeup: anyio.Event | None = None
        self._closed = False
        self._error: BaseException | None = None

    def put(self, item: T, size: int = 0) -> None:
        """Append an item of ``size`` and wake the consumer."""
        self._items.append(item)
        self._sizes.append(size)
        self.buffered += size
        if self._budget is not None and not self.full and self.buffered > self._budget:
            self.full = True
            self._on_full()
        event = self._wakeup
        if event is not None:
            self._wakeup = None
            event.set()

    def take(self) -> T:
        """Remove and return the oldest item (there must be one)."""
        self.buffered -= self._sizes.popleft()
        if self.full and self.buffered <= self._low:
            self.full = False
            self._on_drained()
        return self._items.popleft()

    def peek(self) -> T:
        """The oldest item, left in place (there must be one)."""
        return self._items[0]

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

    async def wait(self) -> None:
        """Wait until the next `put()`, `close()` or `wake()`."""
        event = self._wakeup
        if event is None:
            event = self._wakeup = anyio.Event()
        await event.wait()
