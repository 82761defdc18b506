"""`read_fd`: stdin read by the event loop, so a cancelled read leaves no thread behind
(Python waits for such a thread at exit: Ctrl-C at a prompt would hang until Enter)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import pytest

from ccwire._core.fdread import read_fd

pytestmark = pytest.mark.anyio


async def test_a_pipe_is_read_as_data_arrives_and_to_its_end() -> None:
    r, w = os.pipe()
    try:
        os.write(w, b"one\n")
        assert await read_fd(r, 100) == b"one\n"
        os.write(w, b"two")
        os.close(w)
        w = -1
        assert await read_fd(r, 100) == b"two"
        assert await read_fd(r, 100) == b""
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


async def test_a_cancelled_read_leaves_no_thread() -> None:
    threads = threading.active_count()
    r, w = os.pipe()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_fd, r, 100)
            await anyio.wait_all_tasks_blocked()
            assert threading.active_count() == threads  # nobody blocked in os.read
            tg.cancel_scope.cancel()
        os.write(w, b"late")  # still there for the next reader: nothing consumed it
        assert await read_fd(r, 100) == b"late"
    finally:
        os.close(r)
        os.close(w)


async def test_files_the_os_cannot_poll_are_read_at_once(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"from a file")
    for name, expected in ((str(path), b"from a file"), (os.devnull, b"")):
        fd = os.open(name, os.O_RDONLY)
        try:
            assert await read_fd(fd, 100) == expected
        finally:
            os.close(fd)
