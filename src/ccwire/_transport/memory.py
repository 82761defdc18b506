"""An in-memory transport and a scriptable fake CLI, for tests.

`memory_transport_pair()` returns a `MemoryTransport` to hand to the SDK and
a `CLIPeer` that plays the CLI. Output from the peer goes through the same
`LineDecoder` as the real transport, so framing problems show up
in tests; input written by the SDK is checked to be JSON, because the real CLI exits on
the first line that is not.
"""

from __future__ import annotations

import json
import math
import signal
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from .._core.errors import CLIConnectionError, MessageDecodeError, ProcessError
from .._wire.framing import LineDecoder, encode_line
from .base import CLI_EXITED, LineTransport, ProcessExit, StderrCollector, check_line

__all__ = ["CLIPeer", "MemoryTransport", "memory_transport_pair"]


class MemoryTransport(LineTransport):
    """The SDK's end of an in-memory connection; behaves like the subprocess transport.

    Create it with `memory_transport_pair()`. `aclose()` waits up to
    ``close_grace`` s for the peer to `CLIPeer.exit()` after input ends; if it does
    not, the fake process counts as terminated by SIGTERM and `receive_line()`
    returns ``None`` once the buffered lines are read.
    """

    def __init__(
        self,
        *,
        max_line_bytes: int | None = None,
        stderr_callback: Callable[[str], None] | None = None,
        stderr_tail_bytes: int = 64 * 1024,
        close_grace: float = 0.0,
    ) -> None:
        self._decoder = LineDecoder(max_line_bytes)
        self._lines: deque[bytes] = deque()
        self._out_tx, self._out_rx = anyio.create_memory_object_stream[bytes](math.inf)
        self._in_tx, self._in_rx = anyio.create_memory_object_stream[bytes](math.inf)
        self._stderr = StderrCollector(stderr_callback, tail_bytes=stderr_tail_bytes)
        self._close_grace = close_grace
        self._send_lock = anyio.Lock()
        self._exited = anyio.Event()
        self._started = False
        self._input_closed = False
        self._closed = False
        self._killed = False
        self._output_done = False
        self._returncode: int | None = None

    def __repr__(self) -> str:
        state = "running" if self._returncode is None else f"exited {self._returncode}"
        return f"<MemoryTransport {state}>"

    @property
    def exit_info(self) -> ProcessExit | None:
        """How the fake process ended, or ``None`` while it runs."""
        rc = self._returncode
        return None if rc is None else ProcessExit(rc, self._stderr.tail)

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mark the transport started (there is no process and no background task)."""
        if self._started or self._closed:
            raise CLIConnectionError("this transport was already started")
        self._started = True

    async def send_line(self, line: bytes) -> None:
        """Deliver one encoded line to the peer; see `LineTransport.send_line()`."""
        check_line(line)
        if not self._started:
            raise CLIConnectionError("the transport is not started")
        async with self._send_lock:
            if self._input_closed:
                raise CLIConnectionError("the CLI's input is closed")
            if self._returncode is not None:
                raise ProcessError(
                    "cannot write to the Claude Code CLI: it has exited",
                    exit_code=self._returncode,
                    stderr=self._stderr.tail,
                )
            try:
                await self._in_tx.send(line)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise CLIConnectionError("the CLI's input is closed") from exc

    async def receive_line(self) -> bytes | None:
        """Return the next line from the peer; see `LineTransport.receive_line()`."""
        if not self._started:
            raise CLIConnectionError("the transport is not started")
        while not self._lines:
            if self._decoder.error is not None:
                raise self._decoder.error
            if self._output_done:
                self._verdict()
                return None
            try:
                chunk = await self._out_rx.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                self._out_rx.close()
                self._output_done = True
                rest = self._decoder.flush()
                if rest is not None:
                    return rest
                continue
            self._lines.extend(self._decoder.feed(chunk))
        return self._lines.popleft()

    def _verdict(self) -> None:
        rc = self._returncode
        if rc is None or rc == 0 or self._killed:
            return None
        raise ProcessError(CLI_EXITED, exit_code=rc, stderr=self._stderr.tail)

    async def end_input(self) -> None:
        """Close the input: the peer's `CLIPeer.receive()` returns ``None`` at its end."""
        self._input_closed = True
        self._in_tx.close()

    async def aclose(self) -> None:
        """End input, give the peer ``close_grace`` s to exit, else count it as killed."""
        with anyio.CancelScope(shield=True):
            if self._closed:
                return
            self._closed = True
            await self.end_input()
            if self._returncode is None and self._close_grace > 0:
                with anyio.move_on_after(self._close_grace):
                    await self._exited.wait()
            if self._returncode is None:
                self._killed = True
                self._finish(-signal.SIGTERM)
            self._keep_unread_output()

    async def terminate(self) -> None:
        """Count the fake process, if it runs, as terminated by SIGTERM: the output it
        wrote is still read, then ends."""
        if self._returncode is None:
            self._killed = True
            self._finish(-signal.SIGTERM)

    def _keep_unread_output(self) -> None:
        """Move output the SDK has not read yet into the decoder, and close the stream."""
        while True:
            try:
                chunk = self._out_rx.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            try:
                self._lines.extend(self._decoder.feed(chunk))
            except MessageDecodeError:
                break  # kept in self._decoder.error; receive_line() raises it
        self._out_rx.close()

    def _finish(self, code: int) -> None:
        self._returncode = code
        self._out_tx.close()
        self._in_rx.close()
        self._exited.set()


class CLIPeer:
    """The fake CLI's end of a `memory_transport_pair()`.

    Send objects (or raw bytes) as the CLI's stdout, read what the SDK wrote, write
    stderr and end the fake process with an exit code.
    """

    def __init__(self, transport: MemoryTransport) -> None:
        self._t = transport
        self._decoder = LineDecoder()
        self._lines: deque[bytes] = deque()
        self._eof = False

    @property
    def stdin_closed(self) -> bool:
        """True once the SDK has ended the CLI's input (``end_input`` or ``aclose``)."""
        return self._t._input_closed

    @property
    def exited(self) -> bool:
        """True once the fake process has ended (by `exit()`, or killed by ``aclose``)."""
        return self._t._returncode is not None

    async def send(self, obj: Mapping[str, Any]) -> None:
        """Write ``obj`` as one JSON line to the SDK."""
        await self.send_raw(encode_line(obj))

    async def send_raw(self, data: bytes) -> None:
        """Write arbitrary bytes (part of a line, several lines, noise) to the SDK.

        A no-op once the SDK has killed the fake process with ``aclose``.
        """
        t = self._t
        if t._killed:
            return
        if t._returncode is not None:
            raise CLIConnectionError("the fake CLI has already exited")
        await t._out_tx.send(bytes(data))

    async def receive(self) -> dict[str, Any] | None:
        """Return the next JSON object the SDK wrote; ``None`` after it ended the input.

        Raises `MessageDecodeError` if the SDK wrote a line that is not a
        JSON object: the real CLI would exit on it.
        """
        while not self._lines:
            if self._eof:
                return None
            try:
                chunk = await self._t._in_rx.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                self._eof = True
                rest = self._decoder.flush()
                if rest is not None:
                    self._lines.append(rest)
                continue
            self._lines.extend(self._decoder.feed(chunk))
        return _decode_sdk_line(self._lines.popleft())

    async def write_stderr(self, text: str) -> None:
        """Write ``text`` to the fake process's stderr (callback and tail)."""
        self._t._stderr.write_text(text)

    async def exit(self, code: int = 0, stderr: str = "") -> None:
        """End the fake process: write ``stderr``, close its output, record ``code``.

        The SDK's ``receive_line`` then returns the buffered lines and ``None`` (code 0) or
        raises `ProcessError` with ``code`` and the stderr tail. A no-op
        if the process has already ended.
        """
        t = self._t
        if t._returncode is not None:
            return
        if stderr:
            t._stderr.write_text(stderr)
        t._finish(code)


def _decode_sdk_line(line: bytes) -> dict[str, Any]:
    preview = line[:200].decode("utf-8", "replace")
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise MessageDecodeError(
            "the SDK wrote a line that is not JSON; the real Claude Code CLI would exit",
            line=preview,
        ) from exc
    if not isinstance(obj, dict):
        raise MessageDecodeError(
            "the SDK wrote JSON that is not an object; the real Claude Code CLI would reject it",
            line=preview,
        )
    return obj


def memory_transport_pair(
    *,
    max_line_bytes: int | None = None,
    stderr_callback: Callable[[str], None] | None = None,
    close_grace: float = 0.0,
) -> tuple[MemoryTransport, CLIPeer]:
    """Create a connected `MemoryTransport` (for the SDK) and `CLIPeer`."""
    transport = MemoryTransport(
        max_line_bytes=max_line_bytes, stderr_callback=stderr_callback, close_grace=close_grace
    )
    return transport, CLIPeer(transport)
