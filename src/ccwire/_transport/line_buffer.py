"""A bounded hand-over of line batches from a reader task to one consumer.

It does what a memory object stream of capacity ``max_batches`` would do for the
subprocess transport, without its per-item cost: a busy CLI hands over tens of
thousands of batches a second, and creating an event (and passing a checkpoint) for
every one of them was a measurable part of each tool call's round trip. Events are
created only when a side really has to wait: the consumer on an empty buffer, the
reader on a full one.
"""

from __future__ import annotations

from collections import deque

import anyio

__all__ = ["LineBuffer"]


class LineBuffer:
    """FIFO of line batches: one producer (`put()`), one consumer (`get()`)."""

    def __init__(self, max_batches: int) -> None:
        self._batches: deque[list[bytes]] = deque()
        self._max = max_batches
        self._closed = False
        self._has_data: anyio.Event | None = None
        self._has_space: anyio.Event | None = None

    async def put(self, batch: list[bytes]) -> None:
        """Append ``batch``, waiting while ``max_batches`` are buffered.

        Raises `anyio.ClosedResourceError` once the buffer is closed.
        """
        while len(self._batches) >= self._max and not self._closed:
            space = self._has_space = anyio.Event()
            await space.wait()
        if self._closed:
            raise anyio.ClosedResourceError
        self._batches.append(batch)
        event = self._has_data
        if event is not None:
            self._has_data = None
            event.set()

    async def get(self) -> list[bytes] | None:
        """The oldest batch; ``None`` once the buffer is closed and empty."""
        while not self._batches:
            if self._closed:
                return None
            data = self._has_data = anyio.Event()
            await data.wait()
        batch = self._batches.popleft()
        event = self._has_space
        if event is not None:
            self._has_space = None
            event.set()
        return batch

    def close(self) -> None:
        """No more batches will come; wake both sides."""
        self._closed = True
        for event in (self._has_data, self._has_space):
            if event is not None:
                event.set()
        self._has_data = self._has_space = None

    def take_all(self) -> list[bytes]:
        """Remove and return every buffered line, in order."""
        lines = [line for batch in self._batches for line in batch]
        self._batches.clear()
        return lines
