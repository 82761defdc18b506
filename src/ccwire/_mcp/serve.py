"""``ccwire serve``: a server for any MCP client, over stdio (NDJSON) or Streamable HTTP.

ccwire frames stdio itself (one JSON-RPC message per line, `LineDecoder`), so
every message the client sends, malformed or not, reaches `ClientLink`, which
answers it as JSON-RPC prescribes.  Every request is served in a task of its own, so
calls overlap and ``notifications/cancelled`` cancels exactly its call; the server's
notifications (progress, log messages, list changes) are written to stdout.  When
stdin ends, or the server is stopped (SIGTERM, Ctrl-C: no new request is read from
then on), calls still running get `DRAIN_SECONDS` to finish; those cut off then are
answered with a -32603 (and counted: ``ccwire serve`` then exits with 1).  A second
signal cuts them off at once.  Stopped cleanly, the signal is raised again once
serving ended (`raise_stopping_signal`), over stdio as over HTTP.  A client that
closed stdout can be answered no more: serving stops, the calls are cut off at once
(``ccwire serve`` exits with 141).

The served object is anything with `SdkMcpServer`'s ``handle``/``attach``
interface: an `SdkMcpServer`, or an `McpBridge` hosting a server of the official
``mcp`` package.  The command line itself (loading the target, ``--http``) is
``ccwire._app.serve``; HTTP is `serve_http`.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import select
import signal
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel

from .._core.errors import MessageDecodeError
from .._core.fdread import read_fd
from .._wire.framing import LineDecoder, encode_line
from .._wire.jsonrpc import INVALID_REQUEST, error
from .link import ClientLink, Writer

__all__ = ["DRAIN_SECONDS", "raise_stopping_signal", "serve_lines", "serve_stdio"]

logger = logging.getLogger("ccwire")

DRAIN_SECONDS: Final = 5.0
_READ_BYTES: Final = 1 << 16
_MAX_LINE_BYTES: Final = 64 << 20
_PIPE_BUF: Final = 4096
"""A write this small to a pipe with room (POSIX ``PIPE_BUF``) never blocks."""
_FINISH_SECONDS: Final = 1.0
"""How long a client may read nothing while a line cancelled part-way is finished."""


async def serve_lines(
    server: Any,
    lines: AsyncIterator[bytes | str | Any],
    write: Writer,
    *,
    on_unanswered: Callable[[Any], Awaitable[None]] | None = None,
    drain_seconds: float = DRAIN_SECONDS,
    stop: anyio.Event | None = None,
    halt: anyio.Event | None = None,
    on_drain: Callable[[], object] | None = None,
) -> int:
    """Serve one client connection: every item of ``lines`` is one raw message (bytes or
    text to parse; any other value is taken as already parsed), every answer and
    notification goes to ``write``.  Returns once ``lines`` ended (or ``stop`` was set:
    no item is taken from then on) and the calls still running finished, or
    ``drain_seconds`` passed, or ``halt`` was set: those cut off then get a -32603,
    and their number is returned.  ``on_unanswered`` is told the id of a request that
    gets no answer (the client cancelled it); ``on_drain`` is called when the calls
    running start their ``drain_seconds``."""
    async with anyio.create_task_group() as watchers:
        async with anyio.create_task_group() as tg:
            if halt is not None:
                watchers.start_soon(_cancel_when, halt, tg.cancel_scope)
            link = ClientLink(server, write, object(), tg, on_unanswered=on_unanswered)
            detach = server.attach(link.send)
            try:
                async for line in _until(lines, stop, watchers):
                    if isinstance(line, (bytes, str)):
                        await link.receive_bytes(line)
                    else:
                        await link.receive(line)
                tg.cancel_scope.deadline = anyio.current_time() + drain_seconds
                if on_drain is not None:
                    on_drain()
            finally:
                link.close()
                detach()
                forget = getattr(server, "_forget_session", None)
                if forget is not None:  # what the server keeps for this client goes with it
                    forget(link.key)
        watchers.cancel_scope.cancel()
    return link.cut_off


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def _until(
    items: AsyncIterator[Any], stop: anyio.Event | None, tg: anyio.abc.TaskGroup
) -> AsyncIterator[Any]:
    """The items of ``items`` until ``stop`` is set: the wait for the next one is
    abandoned then (what was taken is served; nothing is taken after it)."""
    waiting: list[anyio.CancelScope] = []
    if stop is not None:

        async def stop_waiting() -> None:
            await stop.wait()
            for scope in waiting:
                scope.cancel()

        tg.start_soon(stop_waiting)
    try:
        while stop is None or not stop.is_set():
            with anyio.CancelScope() as scope:
                waiting.append(scope)
                try:
                    item = await anext(items)
                except StopAsyncIteration:
                    return
                finally:
                    waiting.remove(scope)
            if scope.cancelled_caught:
                return
            yield item
    finally:
        if isinstance(items, AsyncGenerator):  # left at a yield when stopped
            with anyio.CancelScope(shield=True):
                await items.aclose()


def raise_stopping_signal(
    signum: int | None, cut_off: int, on_end: Callable[[], object] | None = None
) -> int:
    """End a server that ``signum`` stopped (if one did) as that signal would: when no
    call was cut off, it is raised again, the default handlers being back (Ctrl-C
    ends in `KeyboardInterrupt`, exit code 130; SIGTERM ends the process, which a
    shell reports as 143).  ``on_end`` is called first (what must be done before the
    process may end).  Returns ``cut_off`` (``ccwire serve`` exits with 1 for it)."""
    if on_end is not None:
        on_end()
    if signum is not None and not cut_off:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        signal.raise_signal(signum)
    return cut_off


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
    """Wait until ``fd`` takes a write of `_PIPE_BUF` bytes without blocking (a
    cancellation point even when it does at once)."""
    if os.name != "posix":  # pragma: no cover - the loops there poll only sockets
        await anyio.lowlevel.checkpoint()
        return
    ready = select.poll()  # (select.select() refuses descriptors past 1023)
    ready.register(fd, select.POLLOUT)
    if ready.poll(0):  # room already (or the client is gone): no trip through the loop
        await anyio.lowlevel.checkpoint_if_cancelled()
        return
    try:
        await anyio.wait_writable(fd)
    except PermissionError:  # epoll refuses what is always ready (files, /dev/null)
        await anyio.lowlevel.checkpoint()


def _fd_writer(fd: int, closed: anyio.Event) -> Writer:
    """Writes each message as one line to ``fd``; once the client closed it, what is
    written is dropped and ``closed`` is set.

    A line goes out in pieces of `_PIPE_BUF` bytes, each once the pipe has room, so a
    client that stops reading stalls neither the event loop nor the end of serving:
    the write is cancelled like any wait.  A line cancelled part-way is finished first
    (shielded) while the client reads on; if it reads nothing for `_FINISH_SECONDS`,
    the line stays cut, and the client is treated as gone (``closed`` is set): after
    half a line, nothing written could be read right."""
    lock = anyio.Lock()

    async def write(message: dict[str, Any], related: Any = None) -> None:
        line = memoryview(encode_line(message))
        async with lock:
            try:
                if not closed.is_set():
                    sent = 0
                    try:
                        while sent < len(line):
                            await _writable(fd)  # a client not reading must not stall the loop
                            sent += os.write(fd, line[sent : sent + _PIPE_BUF])
                    except anyio.get_cancelled_exc_class():
                        if sent and not await _finish(fd, line[sent:]):
                            closed.set()
                        raise
                    return
            except (BrokenPipeError, ConnectionResetError):
                closed.set()
            logger.debug("ccwire serve: the client closed stdout; %s dropped", message)

    return write


async def _finish(fd: int, rest: memoryview) -> bool:
    """Write ``rest`` of a line whose writing was cancelled (shielded); whether it was
    written before the client read nothing for `_FINISH_SECONDS`."""
    with anyio.CancelScope(shield=True):
        while rest:
            with anyio.move_on_after(_FINISH_SECONDS):
                await _writable(fd)
                rest = rest[os.write(fd, rest[:_PIPE_BUF]) :]
                continue
            logger.debug("ccwire serve: the client stopped reading mid-line; it was cut off")
            return False
    return True


async def serve_stdio(
    server: Any,
    *,
    stdin: int = 0,
    stdout: int = 1,
    drain_seconds: float = DRAIN_SECONDS,
    handle_signals: bool = False,
    announce: Any = None,
    on_end: Callable[[], object] | None = None,
    on_drain: Callable[[], object] | None = None,
) -> int:
    """Serve ``server`` to the MCP client on the ``stdin``/``stdout`` file descriptors
    until stdin ends.  A line over 64 MiB gets a -32600 error (id ``null``) and is
    skipped.  Returns the number of requests still running ``drain_seconds`` after
    stdin ended, which were cut off (each answered with a -32603).

    Once the client closed stdout, nothing it sends can be answered: no request is
    read from then on, the calls running are cut off at once (what they write is
    dropped), and `BrokenPipeError` is raised once serving ended.

    With ``handle_signals`` (the main thread of a process serving on its own stdio),
    SIGTERM and SIGINT (Ctrl-C) stop it as the end of stdin does: no request is read
    from then on, and the calls running get ``drain_seconds``; a second signal cuts
    them off at once; the first is told in one line on ``announce`` (a text stream,
    e.g. stderr), if given.  When none was cut off, the signal is raised again once
    serving ended (`raise_stopping_signal`); ``on_end`` is called before it, once
    serving ended without an exception.  ``on_drain`` is called when the calls running
    start their ``drain_seconds`` (stdin ended, or a signal came)."""
    closed = anyio.Event()  # the client closed stdout
    write = _fd_writer(stdout, closed)

    async def refuse() -> None:
        why = f"Invalid Request: a message over the limit of {_MAX_LINE_BYTES} bytes (skipped)"
        await write(error(None, INVALID_REQUEST, why))

    stop, halt = anyio.Event(), anyio.Event()
    stopped_by: list[int] = []
    async with anyio.create_task_group() as tg:
        if handle_signals:
            told = functools.partial(_told, announce, drain_seconds)
            await tg.start(_watch_signals, stop, halt, stopped_by, told)
        tg.start_soon(_halt_when, closed, stop, halt)
        cut_off = await serve_lines(
            server, _read_lines(stdin, refuse), write, drain_seconds=drain_seconds,
            stop=stop, halt=halt, on_drain=on_drain,
        )  # fmt: skip
        tg.cancel_scope.cancel()
    if closed.is_set():
        raise BrokenPipeError(
            errno.EPIPE,
            "the client closed stdout (or stopped reading it mid-answer): answers were lost",
        )
    return raise_stopping_signal(stopped_by[0] if stopped_by else None, cut_off, on_end)


async def _halt_when(event: anyio.Event, stop: anyio.Event, halt: anyio.Event) -> None:
    await event.wait()
    stop.set()
    halt.set()


async def _watch_signals(
    stop: anyio.Event,
    halt: anyio.Event,
    stopped_by: list[int],
    told: Callable[[int], None],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """The first SIGTERM or SIGINT sets ``stop`` (and is kept in ``stopped_by``), the
    second ``halt``; ``told`` is given the first.  The default handlers are back once
    this ends."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            if stopped_by:
                halt.set()
            else:
                stopped_by.append(signum)
                stop.set()
                told(signum)


def _told(announce: Any, drain_seconds: float, signum: int) -> None:
    if announce is not None:
        name = signal.Signals(signum).name
        announce.write(
            f"ccwire: stopping ({name}): no new request is read; the calls running get "
            f"{drain_seconds:g} s to finish (a second signal stops at once)\n"
        )
        announce.flush()
