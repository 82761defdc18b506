"""Start a child process on asyncio without anyio's backend; present it as an
``anyio.abc.Process``.

On asyncio (POSIX), `open_asyncio_process()` replaces ``anyio.open_process``: the
streams and the process behave the same (same exceptions, same checkpoints). Two
things make the CLI's start faster (see ``bench/README.md``, handshake):

* spawning needs no anyio backend; anyio imports it on first use (several
  milliseconds), and the CLI boots while that import and the session set-up run;
* ``Popen`` runs in a short-lived thread. The kernel puts a new thread on an idle CPU
  and the child starts there, instead of sharing the CPU this loop keeps busy.

Like anyio, process exit is tracked apart from the pipes (a pidfd on the loop on
Linux, else a thread waiting for the child): a grandchild holding a pipe open does not
delay `AsyncioProcess.wait()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from .spawn import kill_quietly, spawn_kwargs, start_popen

__all__ = ["AsyncioProcess", "open_asyncio_process"]

_LIMIT = 2**16  # what asyncio's subprocess streams use
_CLEANUP_WAIT = 10.0  # seconds: a spawn ends with exec, a killed child exits at once


class _PipeReader(anyio.abc.ByteReceiveStream):
    """A child's stdout or stderr: ``receive`` raises ``EndOfStream`` at the end and
    ``ClosedResourceError`` once `aclose()` ran (waking a pending ``receive``)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if max_bytes < 1:
            raise ValueError("max_bytes must be a positive integer")
        data = await self._reader.read(max_bytes)
        if data:
            return data
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self._reader.set_exception(anyio.ClosedResourceError())
        await anyio.lowlevel.checkpoint()


class _PipeWriter(anyio.abc.ByteSendStream):
    """The child's stdin: ``send`` raises ``ClosedResourceError`` after `aclose()`
    and ``BrokenResourceError`` once the child closed its end."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._closed = False

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._closed:
            raise anyio.ClosedResourceError
        writer = self._writer
        try:
            writer.write(item)
            await writer.drain()
        except (ConnectionResetError, BrokenPipeError, RuntimeError) as exc:
            # drain() raises the first two once the pipe is gone; uvloop's write()
            # raises RuntimeError on a closed transport
            if self._closed:
                raise anyio.ClosedResourceError from exc
            if writer.is_closing():
                raise anyio.BrokenResourceError from exc
            raise
        # every send is a checkpoint, even when the pipe took the data at once
        await anyio.lowlevel.cancel_shielded_checkpoint()

    def write_now(self, item: bytes) -> bool:
        """Hand ``item`` to the pipe now, without waiting or yielding; ``False`` (nothing
        written) unless the pipe's buffer was empty and stays under its limit, so that
        no drain is due. Writing never tears ``item``: the transport keeps what the pipe
        did not take, in order."""
        writer = self._writer
        transport = writer.transport
        if self._closed or transport.is_closing() or transport.get_write_buffer_size():
            return False
        try:
            transport.write(item)
        except (OSError, RuntimeError):  # uvloop, on a closed pipe: `send` reports it
            return False
        return True

    async def aclose(self) -> None:
        self._closed = True
        self._writer.close()
        await anyio.lowlevel.checkpoint()


class AsyncioProcess(anyio.abc.Process):
    """A child process started by `open_asyncio_process()`."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        pipes: Sequence[asyncio.BaseTransport],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        exited: asyncio.Event,
    ) -> None:
        self._popen = popen
        self._pipes = pipes
        self._exited = exited
        self._stdin = _PipeWriter(stdin)
        self._stdout = _PipeReader(stdout)
        self._stderr = _PipeReader(stderr)

    async def aclose(self) -> None:
        """Close the pipes (a child blocked on a full pipe then gets ``SIGPIPE``) and wait
        for the exit; if that wait is cancelled, kill the child and reap it."""
        with anyio.CancelScope(shield=True) as scope:
            for stream in (self._stdin, self._stdout, self._stderr):
                await stream.aclose()
            for pipe in self._pipes:
                pipe.close()
            scope.shield = False
            try:
                await self.wait()
            except BaseException:
                scope.shield = True
                kill_quietly(self._popen)
                await self.wait()
                raise

    async def wait(self) -> int:
        """Wait for the child to exit; returns its exit status."""
        await self._exited.wait()
        rc = self._popen.returncode
        assert rc is not None
        return rc

    def terminate(self) -> None:
        """Send ``SIGTERM`` (nothing once the child was reaped)."""
        self._popen.terminate()

    def kill(self) -> None:
        """Send ``SIGKILL`` (nothing once the child was reaped)."""
        self._popen.kill()

    def send_signal(self, signal: int) -> None:
        """Send ``signal`` (nothing once the child was reaped)."""
        self._popen.send_signal(signal)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """The exit status, ``None`` while the child runs."""
        return self._popen.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        """The child's standard input."""
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        """The child's standard output."""
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream:
        """The child's standard error."""
        return self._stderr


def _watch_exit(loop: asyncio.AbstractEventLoop, popen: subprocess.Popen[bytes]) -> asyncio.Event:
    """An event set once ``popen`` has exited and been reaped.

    A pidfd on the loop where Linux has one (no thread, exact); otherwise a thread
    that waits for the child, as asyncio's own child watcher does.
    """
    exited = asyncio.Event()
    try:
        pidfd = os.pidfd_open(popen.pid)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            loop.add_reader(pidfd, _reap, loop, popen, pidfd, exited)
        except (NotImplementedError, OSError, ValueError):
            os.close(pidfd)
        else:
            return exited
    _wait_in_thread(loop, popen, exited)
    return exited


def _reap(
    loop: asyncio.AbstractEventLoop,
    popen: subprocess.Popen[bytes],
    pidfd: int,
    exited: asyncio.Event,
) -> None:
    loop.remove_reader(pidfd)
    os.close(pidfd)
    if popen.poll() is None:  # not expected: a pidfd turns readable when the child exits
        _wait_in_thread(loop, popen, exited)
    else:
        exited.set()


def _wait_in_thread(
    loop: asyncio.AbstractEventLoop, popen: subprocess.Popen[bytes], exited: asyncio.Event
) -> None:
    def wait() -> None:
        popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(exited.set)

    threading.Thread(target=wait, name=f"ccwire wait {popen.pid}", daemon=True).start()


async def _await_popen(
    loop: asyncio.AbstractEventLoop, done: asyncio.Future[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    """The child of a `start_popen()` future.

    Cancelled meanwhile, it waits for the spawn to end (bounded), then kills and reaps
    the child before it re-raises: nothing is left running.
    """
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLEANUP_WAIT):
            try:
                popen = await done
            except Exception:  # the spawn failed: nothing to clean up
                pass
            else:
                await _kill_and_reap(popen, _watch_exit(loop, popen))
        done.cancel()  # still spawning after all: the spawn kills the child
        raise


async def _kill_and_reap(popen: subprocess.Popen[bytes], exited: asyncio.Event) -> None:
    """Kill the child; return once ``exited`` (its exit watcher's event) is set."""
    kill_quietly(popen)
    await exited.wait()


async def open_asyncio_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    user: str | None,
    started: asyncio.Future[subprocess.Popen[bytes]] | None = None,
) -> AsyncioProcess:
    """Spawn ``argv`` with three pipes on the running asyncio loop (POSIX).

    ``started``: the child was already started by `start_popen()` with
    `spawn_kwargs()` (``argv``, ``cwd``, ``env`` and ``user`` then only describe it).
    Raises what ``subprocess.Popen`` raises (``FileNotFoundError``, ...). Cancelled, or
    failing after the spawn, it kills and reaps the child before it raises.
    """
    loop = asyncio.get_running_loop()
    if started is None:
        started = start_popen(loop, argv, spawn_kwargs(cwd=cwd, env=env, user=user))
    popen = await _await_popen(loop, started)
    exited = _watch_exit(loop, popen)
    try:
        return await _connect_pipes(loop, popen, exited)
    except BaseException:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLEANUP_WAIT):
            await _kill_and_reap(popen, exited)
        raise


def _closes_fds_itself(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop``'s pipe transports close the descriptor themselves (uvloop:
    libuv closes it, then the loop closes the file object too)."""
    return type(loop).__module__.partition(".")[0] == "uvloop"


def _hand_over(pipe: Any, loop_closes: bool) -> Any:
    """The file object to give ``connect_*_pipe`` for one of the child's pipes.

    On uvloop, closing a pipe transport closes its descriptor twice: libuv closes it,
    then uvloop closes the file object, expecting ``EBADF``. When another thread opened
    a descriptor in between (a concurrent spawn: its pipes, its ``errpipe``), it got
    the same number, and the second close closes that one: spawns failed with ``EBADF``
    or ``EEXIST`` and exits went unseen, several sessions at once in one process (a Ray
    actor). So uvloop gets a duplicate that only libuv closes; the original is closed
    here, at once.
    """
    if not loop_closes:
        return pipe
    fd = os.dup(pipe.fileno())
    pipe.close()
    return open(fd, pipe.mode, buffering=0, closefd=False)  # only libuv closes fd


async def _connect_pipes(
    loop: asyncio.AbstractEventLoop, popen: subprocess.Popen[bytes], exited: asyncio.Event
) -> AsyncioProcess:
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    pipes: list[asyncio.BaseTransport] = []
    own = _closes_fds_itself(loop)
    try:
        stdin_t, stdin_p = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, _hand_over(popen.stdin, own)
        )
        pipes.append(stdin_t)
        stdout = await _connect_reader(loop, _hand_over(popen.stdout, own), pipes)
        stderr = await _connect_reader(loop, _hand_over(popen.stderr, own), pipes)
    except BaseException:
        for pipe in pipes:
            pipe.close()
        raise
    stdin = asyncio.StreamWriter(stdin_t, stdin_p, None, loop)
    return AsyncioProcess(popen, pipes, stdin, stdout, stderr, exited)


async def _connect_reader(
    loop: asyncio.AbstractEventLoop, pipe: Any, pipes: list[asyncio.BaseTransport]
) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(_LIMIT)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    pipes.append(transport)
    return reader
