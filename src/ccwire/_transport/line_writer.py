"""Write whole lines to a child's stdin from many tasks, never tearing one.

Senders queue their line and wait; the writer task (`LineWriter.run()`) takes
everything queued and writes it in one go (so the answers given while one batch of the
CLI's output was handled reach it in one write). A sender that is cancelled only stops
waiting: a line the writer has taken is still written whole, because a torn line
followed by the next one is a non-JSON line, and a single non-JSON line kills the CLI;
a line the writer has not taken yet is withdrawn instead.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections import deque
from dataclasses import dataclass, field

import anyio
import anyio.abc

__all__ = ["STREAM_ERRORS", "LineWriter", "WriteInterrupted", "close_quietly"]

logger = logging.getLogger("ccwire")

STREAM_ERRORS = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
"""What writing to (or reading from) a pipe raises when the other end is gone."""


class WriteInterrupted(Exception):
    """The writer task was stopped while it wrote this line (it may be partly out)."""


@dataclass(eq=False)
class _Write:
    """One line waiting to be written, and how its writing ended."""

    data: bytes
    done: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None
    interrupted: bool = False
    taken: bool = False  # the writer has it: it will be written whole


class LineWriter:
    """The writing side of one stdin. `run()` is its writer task."""

    def __init__(self) -> None:
        self._queue: deque[_Write] = deque()
        self._wake = anyio.Event()
        self.closed = False
        """No more lines are accepted."""
        self.error: BaseException | None = None
        """The stream error that ended writing, if one did."""
        self.scope = anyio.CancelScope()
        """Cancels the writer task."""
        self.stdin_closed = anyio.Event()
        """Set once the writer task has closed stdin."""

    async def write(self, line: bytes) -> None:
        """Write ``line`` whole. Raises one of `STREAM_ERRORS` (``ClosedResourceError``
        once closed), or `WriteInterrupted`."""
        if self.closed:
            raise anyio.ClosedResourceError
        item = _Write(line)
        self._queue.append(item)
        self._wake.set()
        try:
            await item.done.wait()
        except BaseException:
            if not item.taken:  # not written at all: withdraw it
                with contextlib.suppress(ValueError):
                    self._queue.remove(item)
            raise
        if item.interrupted:
            raise WriteInterrupted
        if item.error is not None:
            raise item.error

    async def run(self, stdin: anyio.abc.ByteSendStream) -> None:
        """The writer task: write what is queued until closed, then close ``stdin``."""
        queue = self._queue
        try:
            with self.scope:
                while queue or not self.closed:
                    if not queue:
                        self._wake = anyio.Event()
                        await self._wake.wait()
                        continue
                    items = list(queue)
                    queue.clear()
                    for item in items:
                        item.taken = True
                    try:
                        await stdin.send(b"".join([item.data for item in items]))
                    except STREAM_ERRORS as exc:
                        self.error = exc
                        for item in items:
                            item.error = exc
                        break
                    except BaseException:
                        for item in items:
                            item.interrupted = True
                        raise
                    finally:
                        for item in items:
                            item.done.set()
        except Exception:  # never let a bug here crash the caller's task group
            logger.exception("ccwire: the stdin writer failed")
        finally:
            self.close()
            await close_quietly(stdin)
            self.stdin_closed.set()

    def stop(self) -> None:
        """Accept no more lines; the writer task writes what is queued, then ends."""
        self.closed = True
        self._wake.set()

    def close(self) -> None:
        """Accept no more lines; fail the ones queued but never taken by the writer."""
        self.stop()
        while self._queue:
            item = self._queue.popleft()
            item.error = self.error or anyio.BrokenResourceError()
            item.done.set()


async def close_quietly(stream: anyio.abc.AsyncResource) -> None:
    """Close ``stream`` (shielded, at most 1 s), ignoring a closed or broken pipe."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
        try:
            await stream.aclose()
        except (*STREAM_ERRORS, RuntimeError):
            pass
        if sys.version_info < (3, 11):
            await _collect_pipe_error(stream)


async def _collect_pipe_error(stream: anyio.abc.AsyncResource) -> None:
    """Collect the error a child's stdin closed with, on CPython 3.10.

    There a subprocess's stdin that broke (the child exited before reading it) keeps
    its error in a future nobody awaits, and asyncio logs "Future exception was never
    retrieved" once that future is collected (3.11 marks it retrieved). Awaiting
    ``asyncio.StreamWriter.wait_closed()`` collects it; the asyncio writer is the one
    inside anyio's stream (no such writer on trio: nothing to do).
    """
    wait_closed = getattr(getattr(stream, "_stream", None), "wait_closed", None)
    if wait_closed is not None:
        with contextlib.suppress(Exception):
            await wait_closed()
