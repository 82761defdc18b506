"""The CLI's process on asyncio: spawned in a helper thread, its exit watched apart from
its pipes. What must hold whichever way it is spawned: a cancelled spawn leaves no
process behind, exit tracking works without a pidfd (macOS, old kernels), and many
children started and ended at once in one process keep their own descriptors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import anyio
import anyio.lowlevel
import psutil
import pytest

from ccwire._transport.subprocess import SubprocessTransport

pytestmark = pytest.mark.anyio

LIMIT = 15  # seconds; every test is bounded by this
SLEEPER = [sys.executable, "-c", "import time\ntime.sleep(60)"]


def children() -> set[int]:
    return {p.pid for p in psutil.Process().children()}


async def test_cancelled_launch_leaves_no_process(anyio_backend: object) -> None:
    before = children()
    for _ in range(5):  # the cancel lands at different points of the spawn
        transport = SubprocessTransport(SLEEPER)
        with anyio.fail_after(LIMIT):
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(transport.launch)
                    await anyio.lowlevel.checkpoint()  # the launch is spawning now
                    scope.cancel()
            if anyio_backend != "trio":  # trio starts the task later: may not be hit
                assert scope.cancelled_caught
            await transport.aclose()
        # cancelled, launch() killed and reaped the child before it returned
        assert children() == before
        assert transport.exit_info is None or transport.exit_info.returncode == -9


async def test_cancelled_connect_leaves_no_process(anyio_backend: object) -> None:
    """The same through the public client: cancelled while the CLI starts."""
    from ccwire import ClaudeAgentOptions, ClaudeSDKClient

    before = children()
    for _ in range(3):
        client = ClaudeSDKClient(ClaudeAgentOptions(cli_path=sys.executable))
        with anyio.fail_after(LIMIT), anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.connect)
                await anyio.lowlevel.checkpoint()
                scope.cancel()
        if anyio_backend != "trio":
            assert scope.cancelled_caught
        with anyio.fail_after(LIMIT):
            await client.disconnect()
        assert children() == before


async def test_children_started_while_others_end_keep_their_pipes(anyio_backend: object) -> None:
    """Four children at a time, 400 in all, in one process, while a thread opens and
    closes descriptors: every spawn works, every child answers and its exit is seen.

    On uvloop, closing a pipe transport closed its descriptor twice (libuv, then the
    file object); the second close hit whatever another thread had opened with that
    number in between: spawns failed with EBADF or EEXIST, exits went unseen.
    """
    cat = shutil.which("cat")
    if cat is None:
        pytest.skip("needs cat")
    stop = threading.Event()
    broken: list[str] = []

    def churn() -> None:  # opens descriptors while the loop closes others
        while not stop.is_set():
            r, w = os.pipe()
            try:
                os.write(w, b"x")
                if os.read(r, 1) != b"x":
                    broken.append("a pipe lost its content")
            except OSError as exc:
                broken.append(repr(exc))
            for fd in (r, w):
                try:
                    os.close(fd)
                except OSError as exc:
                    broken.append(repr(exc))

    async def run_children(count: int) -> None:
        for i in range(count):
            async with anyio.create_task_group() as tg:
                transport = SubprocessTransport([cat])
                await transport.start(tg)
                await transport.send_line(b"ping %d\n" % i)
                line = await transport.receive_line()
                assert line is not None and line.strip() == b"ping %d" % i
                await transport.aclose()
            assert transport.exit_info is not None and transport.exit_info.returncode == 0

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        with anyio.fail_after(4 * LIMIT):
            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(run_children, 100)
    finally:
        stop.set()
        thread.join()
    assert broken == []


WITHOUT_PIDFD = """
import asyncio, os, sys
del os.pidfd_open  # as on macOS or a kernel older than 5.3
from ccwire._core.errors import ProcessError
from ccwire._transport.subprocess import SubprocessTransport
import anyio

async def main():
    async with anyio.create_task_group() as tg:
        t = SubprocessTransport(
            [sys.executable, "-c", "import sys; print('hi', flush=True); sys.stdin.read()"]
        )
        await t.start(tg)
        line = await t.receive_line()
        await t.aclose()  # closes stdin: the child reads EOF and exits 0
    print(line.decode().strip(), t.exit_info.returncode)
    # exit seen without the pipes closing: a child that closed its stdout first
    async with anyio.create_task_group() as tg:
        t = SubprocessTransport(
            [sys.executable, "-c", "import os, sys; os.close(1); sys.exit(3)"]
        )
        await t.start(tg)
        try:
            await t.receive_line()
        except ProcessError as exc:
            print("error", exc.exit_code)
        await t.aclose()
    print("exit", t.exit_info.returncode)

asyncio.run(main())
"""


def test_exit_is_seen_without_a_pidfd() -> None:
    if not hasattr(os, "pidfd_open"):
        pytest.skip("this Python has no os.pidfd_open: the thread path is the only one")
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PIDFD], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "hi 0"
    assert lines[1:3] == ["error 3", "exit 3"]
