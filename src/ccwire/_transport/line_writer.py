"""Write whole lines to a child's stdin from many tasks, never tearing one.

A line of at most ``PIPE_BUF`` bytes sent while nothing else is being written goes out
from the sender's own task (a pipe takes it whole or not at all). Other senders queue
their line and wait; the writer task (`LineWriter.run()`) takes everything queued
and writes it in one go. A sender that is cancelled mid-write only stops waiting: the
line is still written whole, because a torn line followed by the next one is a non-JSON
line, and a single non-JSON line kills the CLI (a line the writer has not taken yet is
withdrawn instead).
"""

from __future__ import annotations

import contextlib
import logging
import select
from collections import deque
from dataclasses import dataclass, field

import anyio
import anyio.abc

__all__ = ["STREAM_ERRORS", "LineWriter", "WriteInterrupted", "close_quietly"]

logger = logging.getLogger("ccwire")

STREAM_ERRORS = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
"""What writing to (or reading from) a pipe raises when the other end is gone."""

# A pipe takes a write of at most PIPE_BUF bytes whole or not at all (POSIX).
_ATOMIC_WRITE = getattr(select, "PIPE_BUF", 512)


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
        self._busy = False  # a line is being written (by the writer task or inline)
        self._wake = anyio.Event()
        self.closed = False
        """No more lines are accepted."""
        self.error: BaseException | None = None
        """The stream error that ended writing, if one did."""
        self.scope = anyio.CancelScope()
        """Cancels the writer task."""
        self.stdin_closed = anyio.Event()
        """Set once the writer task has closed stdin."""

    async def write(self, stdin: anyio.abc.ByteSendStream, line: bytes) -> None:
        """Write ``line`` whole. Raises one of `STREAM_ERRORS` (``ClosedResourceError``
        once closed), or `WriteInterrupted`."""
        if self.closed:
            raise anyio.ClosedResourceError
        if not self._queue and not self._busy and len(line) <= _ATOMIC_WRITE:
            await self._write_inline(stdin, line)
            return
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

    def write_now(self, stdin: anyio.abc.ByteSendStream, line: bytes) -> bool:
        """Write ``line`` now, from the caller's task, without yielding; ``False`` (nothing
        written) unless nothing else is being written, the line is at most ``PIPE_BUF``
        bytes and ``stdin`` can take it at once (the asyncio pipe's `write_now`)."""
        write = getattr(stdin, "write_now", None)
        if write is None or self.closed or self._queue or self._busy or len(line) > _ATOMIC_WRITE:
            return False
        return bool(write(line))  # a pipe that is gone takes nothing: `write()` then reports it

    async def _write_inline(self, stdin: anyio.abc.ByteSendStream, line: bytes) -> None:
        """Write ``line`` from the caller's task: the fast path when nothing else is being
        written (a tool call's answer then costs no hand-over to the writer task).

        Only for lines of at most ``PIPE_BUF`` bytes, which a pipe takes whole or not at
        all: a cancelled caller either wrote the whole line or none of it (on asyncio the
        transport buffers the whole line at once), so no torn line can reach the CLI.
        """
        self._busy = True
        try:
            await stdin.send(line)
        except STREAM_ERRORS as exc:
            self.error = exc
            self.closed = True  # the writer task ends and closes stdin
            raise
        finally:
            self._busy = False
            if self._queue or self.closed:
                self._wake.set()

    async def run(self, stdin: anyio.abc.ByteSendStream) -> None:
        """The writer task: write what is queued until closed, then close ``stdin``."""
        queue = self._queue
        try:
            with self.scope:
                while True:
                    if not queue or self._busy:  # busy: a caller writes inline
                        if not queue and self.closed and not self._busy:
                            break
                        self._wake = anyio.Event()
                        await self._wake.wait()
                        continue
                    items = list(queue)
                    queue.clear()
                    for item in items:
                        item.taken = True
                    data = items[0].data if len(items) == 1 else b"".join([i.data for i in items])
                    self._busy = True
                    try:
                        await stdin.send(data)
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
                        self._busy = False
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
