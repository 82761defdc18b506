"""Start a child process with asyncio's own API and present it as an ``anyio.abc.Process``.

On asyncio, :func:`open_asyncio_process` replaces ``anyio.open_process``: the streams
and the process behave the same (same exceptions, same checkpoints), but spawning
does not need anyio's event-loop backend. anyio imports that backend on first use,
which costs several milliseconds; spawning first lets the CLI boot while that import
and the rest of the session set-up run (see ``bench/README.md``, handshake).

Like anyio, process exit is tracked by the protocol's ``process_exited`` callback, not
by the pipes closing: a grandchild holding a pipe open does not delay :meth:`wait`.
"""

from __future__ import annotations

import asyncio
import asyncio.subprocess
import os
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

__all__ = ["AsyncioProcess", "open_asyncio_process", "running_asyncio"]


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's stream protocol, plus an event set when the process exits."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit, loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


class _PipeReader(anyio.abc.ByteReceiveStream):
    """A child's stdout or stderr: ``receive`` raises ``EndOfStream`` at the end and
    ``ClosedResourceError`` once :meth:`aclose` ran (waking a pending ``receive``)."""

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
    """The child's stdin: ``send`` raises ``ClosedResourceError`` after :meth:`aclose`
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

    async def aclose(self) -> None:
        self._closed = True
        self._writer.close()
        await anyio.lowlevel.checkpoint()


class AsyncioProcess(anyio.abc.Process):
    """A child process started by :func:`open_asyncio_process`."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        protocol: _Protocol,
        process: asyncio.subprocess.Process,
    ) -> None:
        self._transport = transport
        self._exited = protocol.exited
        self._process = process
        self._stdin = _PipeWriter(process.stdin) if process.stdin is not None else None
        self._stdout = _PipeReader(process.stdout) if process.stdout is not None else None
        self._stderr = _PipeReader(process.stderr) if process.stderr is not None else None

    async def aclose(self) -> None:
        """Close the pipes (a child blocked on a full pipe then gets ``SIGPIPE``) and wait
        for the exit; if that wait is cancelled, kill the child and reap it."""
        with anyio.CancelScope(shield=True) as scope:
            for fd, stream in ((0, self._stdin), (1, self._stdout), (2, self._stderr)):
                if stream is not None:
                    await stream.aclose()
                    pipe = self._transport.get_pipe_transport(fd)
                    if pipe is not None:
                        pipe.close()
            scope.shield = False
            try:
                await self.wait()
            except BaseException:
                scope.shield = True
                self._transport.close()  # kills a child still running
                await self.wait()
                raise
            self._transport.close()  # exited: this only releases the transport

    async def wait(self) -> int:
        """Wait for the child to exit; returns its exit status."""
        await self._exited.wait()
        rc = self._process.returncode
        assert rc is not None
        return rc

    def terminate(self) -> None:
        """Send ``SIGTERM``."""
        self._process.terminate()

    def kill(self) -> None:
        """Send ``SIGKILL``."""
        self._process.kill()

    def send_signal(self, signal: int) -> None:
        """Send ``signal``."""
        self._process.send_signal(signal)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status, ``None`` while the child runs."""
        return self._process.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        """The child's standard input."""
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        """The child's standard output."""
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        """The child's standard error."""
        return self._stderr


async def open_asyncio_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    user: str | None,
) -> AsyncioProcess:
    """Spawn ``argv`` with three pipes on the running asyncio loop.

    Raises what ``subprocess.Popen`` raises (``FileNotFoundError``, ...).
    """
    loop = asyncio.get_running_loop()
    extra: dict[str, Any] = {} if user is None else {"user": user}  # uvloop knows no user=
    transport, protocol = await loop.subprocess_exec(
        lambda: _Protocol(2**16, loop),
        *argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        **extra,
    )
    process = asyncio.subprocess.Process(transport, protocol, loop)
    return AsyncioProcess(transport, protocol, process)


def running_asyncio() -> bool:
    """True when the calling task runs on asyncio (not trio, not outside a loop)."""
    try:
        import sniffio
    except ImportError:  # pragma: no cover - anyio >= 4.12 no longer needs sniffio
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True
    try:
        return sniffio.current_async_library() == "asyncio"
    except sniffio.AsyncLibraryNotFoundError:
        return False
