"""Run the Claude Code CLI as a child process and exchange NDJSON lines over its pipes.

`SubprocessTransport.launch()` spawns the process and nothing else: it needs no
event, task or cancel scope, so on asyncio it runs before anyio loads its event-loop
backend (see `asyncio_process`), and the CLI boots while the caller sets
up the rest. `start()` then starts four background tasks in
the task group it is given:

- the **stdout reader** reads chunks and frames them with `LineDecoder`. Once
  a consumer called `push_lines()` (the control protocol
  does), it hands each read's lines to that handler right here; otherwise it passes
  them, one batch per read, to `receive_line()` through a
  small bounded buffer (so a slow consumer slows the CLI down instead of growing
  memory);
- the **stdin writer** performs the writes that cannot be done inline, and never
  tears a line (`line_writer`);
- the **stderr drainer** always reads stderr (a full stderr pipe would stall the CLI),
  forwarding lines to the callback and keeping a tail for error messages;
- the **exit watcher** reaps the process and, should a grandchild keep a pipe open after
  the CLI exited, stops waiting for that pipe's end after a grace period.
"""

from __future__ import annotations

import enum
import os
import subprocess
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from .._core.errors import CcwireError, CLIConnectionError, CLINotFoundError, ProcessError
from .._core.loops import running_asyncio
from .._wire.framing import LineDecoder
from .base import (
    CLI_EXITED,
    ProcessExit,
    StderrCollector,
    Transport,
    check_line,
    logger,
    pin_async_library,
)
from .flow import ReadGate
from .line_buffer import LineBuffer
from .line_writer import STREAM_ERRORS, LineWriter, WriteInterrupted, close_quietly
from .spawn import abandon_popen

if TYPE_CHECKING:
    import asyncio

__all__ = ["SubprocessTransport"]

_LINE_BUFFER = 16  # batches (the lines of one read) read ahead of the consumer
_STDERR_CHUNK = 64 * 1024
_EOF_GRACE = 2.0  # after exit, how long a pipe may stay open before we stop waiting for it
_ABANDONED_READ_TIMEOUT = 0.1  # read timeout once a pipe has been given up on
_STDERR_WAIT = 1.0  # after stdout EOF, how long to wait for stderr EOF (complete tail)
_BROKEN_PIPE_EXIT_WAIT = 1.0  # after a failed write, how long to wait for the exit status
_KILL_WAIT = 5.0


class _Phase(enum.Enum):
    NEW = "new"
    LAUNCHING = "launching"  # spawning
    LAUNCHED = "launched"  # the process runs, no background task yet
    RUNNING = "running"  # the background tasks run
    CLOSED = "closed"  # aclose() began, or launching failed


class _Signals:
    """The transport's events and cancel scopes."""

    def __init__(self) -> None:
        self.reader_scope = anyio.CancelScope()
        self.stderr_scope = anyio.CancelScope()
        self.stdout_eof = anyio.Event()
        self.stderr_done = anyio.Event()
        self.close_done = anyio.Event()


class SubprocessTransport(Transport):
    """A `Transport` over a child process's stdin/stdout/stderr.

    ``stderr_callback`` gets every stderr line; ``stderr_tail_bytes`` bounds the tail
    quoted in `ProcessError`. ``max_line_bytes`` caps one stdout line
    (default unlimited). `aclose()` waits ``close_grace`` s after closing stdin, then
    sends SIGTERM and waits ``terminate_grace`` s, then SIGKILL. At the end of stdout the
    exit status is awaited for at most ``exit_wait`` s. ``started``: the process was
    already started, with ``argv``, ``env``, ``cwd`` and ``user``, by
    ``spawn.start_popen()`` with ``spawn.spawn_kwargs()`` (on asyncio); the
    transport takes it over (and kills it if closed before `launch()`).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        user: str | None = None,
        stderr_callback: Callable[[str], None] | None = None,
        stderr_tail_bytes: int = 64 * 1024,
        max_line_bytes: int | None = None,
        read_chunk_size: int = 256 * 1024,
        close_grace: float = 5.0,
        terminate_grace: float = 5.0,
        exit_wait: float = 10.0,
        started: asyncio.Future[subprocess.Popen[bytes]] | None = None,
    ) -> None:
        if isinstance(argv, str) or not argv:
            raise ValueError("argv must be a non-empty sequence of strings")
        self._argv = list(argv)
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._user = user
        self._stderr = StderrCollector(stderr_callback, tail_bytes=stderr_tail_bytes)
        self._decoder = LineDecoder(max_line_bytes)
        self._chunk_size = read_chunk_size
        self._close_grace = close_grace
        self._terminate_grace = terminate_grace
        self._exit_wait = exit_wait
        self._started_popen = started

        self._phase = _Phase.NEW
        self._process: anyio.abc.Process | None = None
        self._lines = LineBuffer(_LINE_BUFFER)
        self._push: Callable[[list[bytes]], None] | None = None
        self.read_gate = ReadGate()
        """Closed by the consumer while it is behind: stdout is not read (backpressure)."""
        # lines of the batch being consumed, and batches still buffered when aclose() ran
        self._leftover: deque[bytes] = deque()
        self._read_scope: anyio.CancelScope | None = None
        self._read_error: CcwireError | None = None
        self._input_closed = False
        self._signalled = False

    @cached_property
    def _writer(self) -> LineWriter:
        return LineWriter()  # made on first use, after the spawn, like _sig

    @cached_property
    def _sig(self) -> _Signals:
        # made on first use, after the spawn: making an event loads anyio's backend
        return _Signals()

    def __repr__(self) -> str:
        proc = self._process
        if proc is None:
            state = "not started"
        else:
            rc = proc.returncode
            state = f"pid={proc.pid} " + ("running" if rc is None else f"exited {rc}")
        return f"<SubprocessTransport {self._argv[0]!r} {state}>"

    @property
    def pid(self) -> int | None:
        """The child's process id, or ``None`` before `start()`."""
        return None if self._process is None else self._process.pid

    @property
    def exit_info(self) -> ProcessExit | None:
        """How the process ended, or ``None`` while it runs (or before `start()`)."""
        rc = None if self._process is None else self._process.returncode
        return None if rc is None else ProcessExit(rc, self._stderr.tail)

    # ------------------------------------------------------------------ start

    async def launch(self) -> None:
        """Spawn the process; see `Transport.launch()`."""
        if self._phase is not _Phase.NEW:
            raise CLIConnectionError("this transport was already started (or closed)")
        self._phase = _Phase.LAUNCHING
        try:
            proc = await self._spawn()
        except BaseException:
            self._phase = _Phase.CLOSED
            self._close_streams()
            self._sig.close_done.set()  # nothing to close: aclose() must not wait for it
            raise
        self._process = proc
        if self._phase is not _Phase.LAUNCHING:  # aclose() ran while we were spawning
            with anyio.CancelScope(shield=True):
                await self._kill_unstarted(proc)
            raise CLIConnectionError("the transport was closed while the CLI was starting")
        self._phase = _Phase.LAUNCHED

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Spawn the process (unless `launch()` did) and start the background tasks
        in ``task_group``."""
        if self._phase is _Phase.NEW:
            await self.launch()
        if self._phase is not _Phase.LAUNCHED:
            raise CLIConnectionError("this transport was already started (or closed)")
        self._phase = _Phase.RUNNING
        proc = self._started()
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            task_group.start_soon(self._drain_stderr, proc.stderr, name="ccwire stderr")
            task_group.start_soon(self._read_stdout, proc.stdout, name="ccwire stdout")
            task_group.start_soon(self._writer.run, proc.stdin, name="ccwire stdin")
            task_group.start_soon(self._watch_exit, proc, name="ccwire exit watcher")
        except BaseException:  # e.g. the task group is already closed: leave no orphan
            self._phase = _Phase.CLOSED
            with anyio.CancelScope(shield=True):
                self._signal(proc, kill=True)
                await _wait_exit(proc, _KILL_WAIT)
                await proc.aclose()
            self._close_streams()
            self._sig.close_done.set()
            raise

    async def _spawn(self) -> anyio.abc.Process:
        exe = self._argv[0]
        try:
            started, self._started_popen = self._started_popen, None
            if started is not None or (os.name == "posix" and running_asyncio()):
                from .asyncio_process import open_asyncio_process

                return await open_asyncio_process(
                    self._argv, cwd=self._cwd, env=self._env, user=self._user, started=started
                )
            return await anyio.open_process(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
                user=self._user,
            )
        except FileNotFoundError as exc:
            if self._cwd is not None and not await anyio.Path(self._cwd).is_dir():
                raise CLIConnectionError(
                    "cannot start the Claude Code CLI: working directory "
                    f"{os.fspath(self._cwd)!r} does not exist"
                ) from exc
            raise CLINotFoundError(
                f"Claude Code CLI not found at {exe!r}", searched=(exe,)
            ) from exc
        except PermissionError as exc:
            raise CLIConnectionError(
                f"cannot start the Claude Code CLI at {exe!r}: permission denied ({exc})"
            ) from exc
        except (OSError, ValueError, KeyError, subprocess.SubprocessError) as exc:
            raise CLIConnectionError(f"cannot start the Claude Code CLI at {exe!r}: {exc}") from exc

    def _started(self) -> anyio.abc.Process:
        if self._process is None or self._phase is _Phase.LAUNCHED:
            raise CLIConnectionError("the transport is not started")
        return self._process

    # ------------------------------------------------------------------ input

    async def send_line(self, line: bytes) -> None:
        """Write one encoded line; see `Transport.send_line()`."""
        check_line(line)
        proc = self._started()
        await self._check_input()
        assert proc.stdin is not None
        try:
            await self._writer.write(proc.stdin, line)
        except WriteInterrupted:
            raise CLIConnectionError(
                "the CLI's input was closed while this line was being written"
            ) from None
        except STREAM_ERRORS as exc:
            raise await self._input_failure(exc) from exc

    def write_now(self, line: bytes) -> bool:
        """Write one encoded line now, without yielding, if that can be done at once (see
        `LineWriter.write_now`); ``False`` (nothing written) otherwise, and then
        `send_line()` is the way. For lines made by ``encode_line`` (not checked again).
        """
        proc = self._process
        if (
            proc is None
            or self._phase is not _Phase.RUNNING
            or self._input_closed
            or proc.returncode is not None
            or proc.stdin is None
        ):
            return False
        return self._writer.write_now(proc.stdin, line)

    async def _check_input(self) -> None:
        proc = self._started()
        error = self._writer.error
        if self._input_closed or error is not None or proc.returncode is not None:
            raise await self._input_failure(error) from error

    async def _input_failure(self, exc: BaseException | None) -> CcwireError:
        proc = self._started()
        if self._input_closed or self._phase is _Phase.CLOSED:
            return CLIConnectionError("the CLI's input is closed")
        if exc is not None and proc.returncode is None:
            with anyio.move_on_after(_BROKEN_PIPE_EXIT_WAIT):
                await proc.wait()
        if proc.returncode is not None:
            with anyio.move_on_after(_STDERR_WAIT):  # let the quoted tail be complete
                await self._sig.stderr_done.wait()
            return ProcessError(
                "cannot write to the Claude Code CLI: it has exited",
                exit_code=proc.returncode,
                stderr=self._stderr.tail,
            )
        return CLIConnectionError(f"writing to the CLI's stdin failed: {exc!r}")

    async def end_input(self) -> None:
        """Close stdin once the line being written (if any) is out (waits at most
        ``close_grace`` s for it); idempotent, never raises for a closed or broken pipe.
        """
        with anyio.CancelScope(shield=True):
            first = not self._input_closed
            self._input_closed = True
            proc = self._process
            if proc is None:
                return
            writer = self._writer
            if first:
                with anyio.move_on_after(self._close_grace):
                    writer.stop()  # the writer writes what is queued, then closes stdin
                    await writer.stdin_closed.wait()
                writer.close()
                writer.scope.cancel()
            with anyio.move_on_after(1.0):
                await writer.stdin_closed.wait()
            if not writer.stdin_closed.is_set() and proc.stdin is not None:
                await close_quietly(proc.stdin)  # the writer task never ran

    # ----------------------------------------------------------------- output

    def push_lines(self, handler: Callable[[list[bytes]], None]) -> list[bytes] | None:
        """Deliver further lines by calling ``handler`` from the stdout reader task; see
        `Transport.push_lines()`. Returns the lines read before."""
        held = list(self._leftover)
        self._leftover.clear()
        held.extend(self._lines.take_all())
        self._push = handler
        return held

    async def receive_line(self) -> bytes | None:
        """Return the next line; see `Transport.receive_line()`."""
        self._started()
        if self._leftover:
            return self._leftover.popleft()
        batch = await self._lines.get()
        if batch is not None:
            if len(batch) == 1:
                return batch[0]
            self._leftover.extend(batch)
            return self._leftover.popleft()
        if self._read_error is not None:
            raise self._read_error
        await self._verdict()
        return None

    async def _verdict(self) -> None:
        proc = self._started()
        with anyio.move_on_after(self._exit_wait):
            await proc.wait()
        if proc.returncode is not None:
            with anyio.move_on_after(_STDERR_WAIT):  # let the tail be complete
                await self._sig.stderr_done.wait()
        rc = proc.returncode
        if rc is None:
            raise ProcessError(
                f"the Claude Code CLI closed its output but did not exit within "
                f"{self._exit_wait:g} s",
                exit_code=None,
                stderr=self._stderr.tail,
            )
        if rc == 0 or self._signalled:
            return None  # a clean exit, or the end we forced in aclose()
        raise ProcessError(CLI_EXITED, exit_code=rc, stderr=self._stderr.tail)

    async def _read_stdout(self, stdout: anyio.abc.ByteReceiveStream) -> None:
        pin_async_library()  # the protocol's handlers are started from this task
        try:
            with self._sig.reader_scope:
                # one scope for every read (not one per read): `_watch_exit` cancels it
                # to give up on a pipe that a grandchild holds open
                with anyio.CancelScope() as scope:
                    self._read_scope = scope
                    await self._pump(stdout, abandoned=False)
                self._read_scope = None
                if scope.cancelled_caught:  # read what is left, while it keeps coming
                    await self._pump(stdout, abandoned=True)
                self._sig.stdout_eof.set()
                rest = self._decoder.flush()
                if rest is not None:
                    batch = [rest]
                    del rest
                    if self._push is not None:
                        self._push(batch)
                    else:
                        await self._lines.put(batch)
        except CcwireError as exc:  # an oversized line
            self._read_error = exc
        except (anyio.BrokenResourceError, OSError) as exc:
            self._read_error = CLIConnectionError(f"reading the CLI's output failed: {exc!r}")
            self._read_error.__cause__ = exc
        except anyio.ClosedResourceError:
            pass  # closed by aclose()
        except Exception as exc:
            logger.exception("ccwire: the stdout reader failed")
            self._read_error = CLIConnectionError(f"reading the CLI's output failed: {exc!r}")
            self._read_error.__cause__ = exc
        finally:
            self._sig.stdout_eof.set()
            self._lines.close()
            await close_quietly(stdout)

    async def _pump(self, stdout: anyio.abc.ByteReceiveStream, *, abandoned: bool) -> None:
        """Read, frame and deliver stdout until its end; ``abandoned``: until nothing
        arrives for ``_ABANDONED_READ_TIMEOUT`` s."""
        gate = self.read_gate
        size = self._chunk_size
        while True:
            if not gate.is_open:  # the consumer is behind: let the pipe fill up
                await gate.wait_open()
            try:
                if abandoned:
                    chunk = b""
                    with anyio.move_on_after(_ABANDONED_READ_TIMEOUT):
                        chunk = await stdout.receive(size)
                    if not chunk:
                        return
                else:
                    chunk = await stdout.receive(size)
            except anyio.EndOfStream:
                return
            lines = self._decoder.feed(chunk)
            del chunk
            if lines:
                push = self._push
                if push is None:
                    await self._lines.put(lines)
                else:  # handled right here: no hand-over to another task
                    push(lines)
            del lines  # hold no reference to a (possibly huge) line while waiting
            _raise_if_broken(self._decoder)

    # ----------------------------------------------------------------- stderr

    async def _drain_stderr(self, stderr: anyio.abc.ByteReceiveStream) -> None:
        try:
            with self._sig.stderr_scope:
                while True:
                    try:
                        chunk = await stderr.receive(_STDERR_CHUNK)
                    except (anyio.EndOfStream, *STREAM_ERRORS):
                        break
                    self._stderr.feed(chunk)
        except Exception:
            logger.exception("ccwire: the stderr drainer failed")
        finally:
            self._stderr.flush()
            self._sig.stderr_done.set()
            await close_quietly(stderr)

    # --------------------------------------------------------------- shutdown

    async def _watch_exit(self, proc: anyio.abc.Process) -> None:
        await proc.wait()  # also reaps the child on trio
        self._writer.stop()  # nothing more can be written; lets the writer task end
        with anyio.move_on_after(_EOF_GRACE):
            await self._sig.stdout_eof.wait()
            await self._sig.stderr_done.wait()
        if not self._sig.stdout_eof.is_set() and self._read_scope is not None:
            self._read_scope.cancel()  # a grandchild holds stdout open
        if not self._sig.stderr_done.is_set():
            self._sig.stderr_scope.cancel()

    async def aclose(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL, reap; bounded, shielded, idempotent."""
        with anyio.CancelScope(shield=True):
            phase = self._phase
            if phase is _Phase.CLOSED:
                with anyio.move_on_after(
                    2 * self._close_grace + self._terminate_grace + _KILL_WAIT + 5
                ):
                    await self._sig.close_done.wait()
                return
            self._phase = _Phase.CLOSED
            if self._started_popen is not None:  # started for us, never launched
                abandon_popen(self._started_popen)
                self._started_popen = None
            try:
                if phase is _Phase.RUNNING:
                    await self._shutdown()
                elif phase is _Phase.LAUNCHED:
                    await self._kill_unstarted(self._process)
            finally:
                self._close_streams()
                self._sig.close_done.set()

    def _close_streams(self) -> None:
        self._lines.close()
        self._writer.close()
        self._leftover.extend(self._lines.take_all())  # keep what was read, not yet received

    async def _shutdown(self) -> None:
        proc = self._process
        if proc is None:
            return
        await self.end_input()
        if not await _wait_exit(proc, self._close_grace):
            self._signal(proc, kill=False)
            if not await _wait_exit(proc, self._terminate_grace):
                self._signal(proc, kill=True)
                if not await _wait_exit(proc, _KILL_WAIT):
                    logger.error("ccwire: the CLI (pid %s) survived SIGKILL", proc.pid)
                    return
        with anyio.move_on_after(_STDERR_WAIT):
            await self._sig.stdout_eof.wait()
            await self._sig.stderr_done.wait()
        self._sig.reader_scope.cancel()
        self._sig.stderr_scope.cancel()
        self._writer.scope.cancel()
        with anyio.move_on_after(1.0):
            await proc.aclose()

    async def _kill_unstarted(self, proc: anyio.abc.Process | None) -> None:
        """Stop a process that was launched but never started: it was sent nothing,
        and nothing reads its pipes, so there is nothing to wait for."""
        if proc is None:
            return
        self._signal(proc, kill=True)
        if not await _wait_exit(proc, _KILL_WAIT):
            logger.error("ccwire: the CLI (pid %s) survived SIGKILL", proc.pid)
            return
        with anyio.move_on_after(1.0):
            await proc.aclose()

    def _signal(self, proc: anyio.abc.Process, *, kill: bool) -> None:
        self._signalled = True
        try:
            if kill:
                proc.kill()
            else:
                proc.terminate()
        except ProcessLookupError:
            pass  # exited in the meantime


def _raise_if_broken(decoder: LineDecoder) -> None:
    if decoder.error is not None:
        raise decoder.error


async def _wait_exit(proc: anyio.abc.Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await proc.wait()
    return proc.returncode is not None
