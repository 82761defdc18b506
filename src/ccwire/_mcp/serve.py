"""``ccwire serve``: a server for any MCP client, over stdio (NDJSON) or Streamable HTTP.

ccwire frames stdio itself (one JSON-RPC message per line, `LineDecoder`), so
every message the client sends, malformed or not, reaches `ClientLink`, which
answers it as JSON-RPC prescribes.  Every request is served in a task of its own, so
calls overlap and ``notifications/cancelled`` cancels exactly its call; the server's
notifications (progress, log messages, list changes) are written to stdout.  When
stdin ends, calls still running get `DRAIN_SECONDS` to finish; those cut off then
are answered with a -32603 (and counted: ``ccwire serve`` then exits with 1).

The served object is anything with `SdkMcpServer`'s ``handle``/``attach``
interface: an `SdkMcpServer`, or an `McpBridge` hosting a server of the official
``mcp`` package.  The command line itself (loading the target, ``--http``) is
``ccwire._app.serve``; HTTP is `serve_http`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel

from .._core.errors import MessageDecodeError
from .._core.fdread import read_fd
from .._wire.framing import LineDecoder, encode_line
from .._wire.jsonrpc import INVALID_REQUEST, error
from .link import ClientLink, Writer

__all__ = ["DRAIN_SECONDS", "serve_lines", "serve_stdio"]

logger = logging.getLogger("ccwire")

DRAIN_SECONDS: Final = 5.0
_READ_BYTES: Final = 1 << 16
_MAX_LINE_BYTES: Final = 64 << 20
_PIPE_BUF: Final = 4096
"""A write this small to a pipe with room (POSIX ``PIPE_BUF``) never blocks."""


async def serve_lines(
    server: Any,
    lines: AsyncIterator[bytes | str | Any],
    write: Writer,
    *,
    on_unanswered: Callable[[Any], Awaitable[None]] | None = None,
    drain_seconds: float = DRAIN_SECONDS,
) -> int:
    """Serve one client connection: every item of ``lines`` is one raw message (bytes or
    text to parse; any other value is taken as already parsed), every answer and
    notification goes to ``write``.  Returns once ``lines`` ended and the calls still
    running finished, or ``drain_seconds`` passed: those cut off then get a -32603, and
    their number is returned.  ``on_unanswered`` is told the id of a request that gets
    no answer (the client cancelled it)."""
    async with anyio.create_task_group() as tg:
        link = ClientLink(server, write, object(), tg, on_unanswered=on_unanswered)
        detach = server.attach(link.send)
        try:
            async for line in lines:
                if isinstance(line, (bytes, str)):
                    await link.receive_bytes(line)
                else:
                    await link.receive(line)
            tg.cancel_scope.deadline = anyio.current_time() + drain_seconds
        finally:
            link.close()
            detach()
            forget = getattr(server, "_forget_session", None)
            if forget is not None:  # what the server keeps for this client goes with it
                forget(link.key)
    return link.cut_off


async def _read_lines(fd: int, refuse: Callable[[], Awaitable[None]]) -> AsyncIterator[bytes]:
    """The lines of ``fd``; a line over `_MAX_LINE_BYTES` is ``refuse()``d and skipped
    (never held whole), and the lines after it are served."""
    decoder = LineDecoder(_MAX_LINE_BYTES)
    skipping = False  # the rest of a line over the limit, up to its newline
    while chunk := await read_fd(fd, _READ_BYTES):  # no thread left blocked on stdin
        if skipping:
            end = chunk.find(b"\n")
            if end < 0:
                continue
            chunk, skipping = chunk[end + 1 :], False
        try:
            lines = decoder.feed(chunk)
        except MessageDecodeError:
            decoder = LineDecoder(_MAX_LINE_BYTES)
            await refuse()
            # a chunk is far shorter than the limit: the line that outgrew it began
            # before this chunk, and ends at its first newline (if it has one)
            end = chunk.find(b"\n")
            skipping = end < 0
            lines = [] if skipping else decoder.feed(chunk[end + 1 :])
        for line in lines:
            yield line
    if not skipping and (rest := decoder.flush()) is not None:
        yield rest


async def _writable(fd: int) -> None:
    """Wait until ``fd`` takes a write of `_PIPE_BUF` bytes without blocking."""
    if os.name != "posix":  # pragma: no cover - the loops there poll only sockets
        return
    try:
        await anyio.wait_writable(fd)
    except PermissionError:  # epoll refuses what is always ready (files, /dev/null)
        await anyio.lowlevel.checkpoint()


def _fd_writer(fd: int) -> Writer:
    lock = anyio.Lock()

    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    async def write(message: dict[str, Any], related: Any = None) -> None:
        data = encode_line(message)
        async with lock:
            try:
                if len(data) <= _PIPE_BUF:  # written at once once the pipe has room
                    await _writable(fd)  # a client not reading must not stall the loop
                    write_all(data)
                else:
                    await anyio.to_thread.run_sync(write_all, data)
            except (BrokenPipeError, ConnectionResetError):
                logger.debug("ccwire serve: the client closed stdout; %s dropped", message)

    return write


async def serve_stdio(
    server: Any, *, stdin: int = 0, stdout: int = 1, drain_seconds: float = DRAIN_SECONDS
) -> int:
    """Serve ``server`` to the MCP client on the ``stdin``/``stdout`` file descriptors
    until stdin ends (what cannot be written once the client closed stdout is dropped).
    A line over 64 MiB gets a -32600 error (id ``null``) and is skipped.  Returns the
    number of requests still running ``drain_seconds`` after stdin ended, which were
    cut off (each answered with a -32603)."""
    write = _fd_writer(stdout)

    async def refuse() -> None:
        why = f"Invalid Request: a message over the limit of {_MAX_LINE_BYTES} bytes (skipped)"
        await write(error(None, INVALID_REQUEST, why))

    return await serve_lines(server, _read_lines(stdin, refuse), write, drain_seconds=drain_seconds)
