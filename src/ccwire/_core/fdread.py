"""Reading a file descriptor (stdin) in a way that a cancellation can abandon.

A blocking ``os.read`` in a worker thread cannot be interrupted: cancelling the wait
leaves the thread blocked until the next byte arrives, and Python waits for that
thread when the program exits, so Ctrl-C at a prompt (or in ``ccwire serve`` on
stdio) would hang until Enter is pressed. On POSIX the event loop waits for the
descriptor instead (``anyio.wait_readable``) and the read that follows never blocks:
no thread is left behind. Descriptors the OS cannot poll (a regular file, ``/dev/null``:
``EPERM`` from epoll) are always ready and are read at once. Elsewhere (Windows, whose
loops poll only sockets) the read runs in a worker thread, as before.
"""

from __future__ import annotations

import os

import anyio
import anyio.lowlevel
import anyio.to_thread

__all__ = ["read_fd"]


async def read_fd(fd: int, size: int) -> bytes:
    """One ``os.read(fd, size)`` that waits without blocking the event loop.

    Args:
        fd: The file descriptor (a pipe, a terminal, a socket or a file).
        size: The most bytes to return.

    Returns:
        The bytes read; ``b""`` at end of input.
    """
    if os.name != "posix":  # pragma: no cover - the loops there poll only sockets
        return await anyio.to_thread.run_sync(os.read, fd, size, abandon_on_cancel=True)
    while True:
        try:
            await anyio.wait_readable(fd)
        except PermissionError:  # epoll refuses what is always ready (files, /dev/null)
            await anyio.lowlevel.checkpoint()
        try:
            return os.read(fd, size)
        except BlockingIOError:  # a non-blocking descriptor another reader emptied first
            continue
