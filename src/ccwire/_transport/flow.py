"""Flow control for the CLI's output: a gate the output reader waits at while the
consumer is behind.

The control protocol closes the gate when more output is buffered for the user than
the configured budget, and opens it again once half of it was read. While it is
closed, nothing more is read from the CLI's stdout: the pipe fills up and the CLI
waits on its own write, instead of ccwire buffering without bound.
"""

from __future__ import annotations

import anyio

__all__ = ["ReadGate"]


class ReadGate:
    """Open or closed; `wait_open()` returns at once while open (no checkpoint)."""

    __slots__ = ("_event", "_open")

    def __init__(self) -> None:
        self._open = True
        # made when a reader first waits: an Event needs a running backend
        self._event: anyio.Event | None = None

    @property
    def is_open(self) -> bool:
        """Whether the reader may read."""
        return self._open

    def close(self) -> None:
        """Stop the reader before its next read."""
        self._open = False

    def open(self) -> None:
        """Let the reader go on."""
        self._open = True
        event = self._event
        if event is not None:
            self._event = None
            event.set()

    async def wait_open(self) -> None:
        """Wait until the gate is open (return at once if it is)."""
        while not self._open:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
