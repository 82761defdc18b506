"""Run the Claude Code CLI as a child process and exchange NDJSON lines over its pipes.

`SubprocessTransport.launch()` starts the process (with the spawner it was given:
``ClaudeAgentOptions.spawn_claude_code_process``, by default ``anyio.open_process``; see
`spawn`) and nothing else, so a caller can let the CLI boot while it sets up the rest; `start()`
then starts three background tasks in the task group it is given:

- the **stdin writer** writes the lines senders queue, whole (`line_writer`);
- the **stderr drainer** always reads stderr (a full stderr pipe would stall the CLI),
  forwarding lines to the callback and keeping a tail for error messages;
- the **exit watcher** reaps the process and, should a grandchild keep stdout open
  after the CLI exited, stops waiting for that pipe's end after a grace period.

stdout is read by `receive_line()` itself, in the consumer's task: a consumer that
stops reading lets the pipe fill up, and the CLI waits (backpressure, no buffer here
beyond the lines of the last read).
"""

from __future__ import annotations

import enum
import os
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence

import anyio
import anyio.abc
import anyio.lowlevel

from .._core.errors import CcwireError, CLIConnectionError, ProcessError
from .._wire.framing import LineDecoder
from .base import CLI_EXITED, LineTransport, ProcessExit, StderrCollector, check_line, logger
from .line_writer import STREAM_ERRORS, LineWriter, WriteInterrupted, close_quietly
from .spawn import ProcessSpawner, RunningProcess, SpawnOptions, start_process

__all__ = ["SubprocessTransport"]

_STDERR_CHUNK = 64 * 1024
_EOF_GRACE = 2.0  # after exit, how long a pipe may stay open before we stop waiting for it
_ABANDONED_READ_TIMEOUT = 0.1  # read timeout once a pipe has been given up on
_STDERR_WAIT = 1.0  # after stdout EOF, how long to wait for stderr EOF (complete tail)
_BROKEN_PIPE_EXIT_WAIT = 1.0  # after a failed write, how long to wait for the exit status
_KILL_WAIT = 5.0
_GROUP_POLL = 0.05  # how often to look whether the CLI's process group has ended


class _Phase(enum.Enum):
    NEW = "new"
    LAUNCHING = "launching"  # spawning
    LAUNCHED = "launched"  # the process runs, no background task yet
    RUNNING = "running"  # the background tasks run
    CLOSED = "closed"  # aclose() began, or launching failed


class SubprocessTransport(LineTransport):
    """A `LineTransport` over a child process's stdin/stdout/stderr.

    ``stderr_callback`` gets every stderr line; ``stderr_tail_bytes`` bounds the tail
    quoted in `ProcessError`. ``max_line_bytes`` caps one stdout line
    (default unlimited). `aclose()` waits ``close_grace`` s after closing stdin, then
    sends SIGTERM and waits ``terminate_grace`` s, then SIGKILL. At the end of stdout the
    exit status is awaited for at most ``exit_wait`` s.

    The default spawner's process leads its own process group (POSIX): SIGTERM and
    SIGKILL go to the whole group, and once the CLI has exited, what is left of the
    group (MCP servers, hooks, tools it started, or the real CLI behind a wrapper
    script) gets SIGTERM (unless it had it), ``terminate_grace`` s, then SIGKILL, so
    nothing the CLI started outlives it; when the CLI did not exit cleanly (killed,
    crashed), so do the processes it started outside its group (its tools run in
    sessions of their own), found by the variable they inherit (``SESSION_TAG``). A
    group already gone is not an error, and the CLI's exit status is reported as before.
    Another spawner's process is signalled alone (it decides what its process takes
    with it).

    ``spawner`` starts the process (default: `spawn_local`, ``anyio.open_process``);
    it gets a `SpawnOptions` with ``argv``, ``env``, ``cwd``, ``user`` and
    ``private_files`` (see `spawn`), and ``explicit_env`` (the names of ``env`` the
    caller set itself), and may take ``spawn_timeout`` s (default no limit).
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
        spawner: ProcessSpawner | None = None,
        spawn_timeout: float | None = None,
        private_files: Sequence[str] = (),
        explicit_env: Collection[str] = (),
    ) -> None:
        if isinstance(argv, str) or not argv:
            raise ValueError("argv must be a non-empty sequence of strings")
        self._argv = list(argv)
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._user = user
        self._spawner = spawner
        self._spawn_timeout = spawn_timeout
        self._private_files = tuple(private_files)
        self._explicit_env = frozenset(explicit_env)
        self._stderr = StderrCollector(stderr_callback, tail_bytes=stderr_tail_bytes)
        self._decoder = LineDecoder(max_line_bytes)
        self._chunk_size = read_chunk_size
        self._close_grace = close_grace
        self._terminate_grace = terminate_grace
        self._exit_wait = exit_wait

        self._phase = _Phase.NEW
        self._process: RunningProcess | None = None
        self._writer = LineWriter()
        self._lines: deque[bytes] = deque()  # read, not yet received
        self._stdout_eof = False
        self._reading = False  # a read of stdout is waiting for data
        self._abandoned = False  # the CLI exited and a grandchild holds stdout open
        self._stdout_done = anyio.Event()  # stdout reached its end (or was given up)
        self._stderr_done = anyio.Event()
        self._stderr_scope = anyio.CancelScope()
        self._watch_scope = anyio.CancelScope()  # cancelled if the process cannot be stopped
        self._close_done = anyio.Event()
        # the exit watcher's wait for the pipes' ends: aclose() gives them up itself
        self._pipes_wait = anyio.CancelScope()
        self._input_closed = False
        self._signalled = False

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
    def executable(self) -> str:
        """The program this transport runs (the CLI's path, as found)."""
        return self._argv[0]

    @property
    def exit_info(self) -> ProcessExit | None:
        """How the process ended, or ``None`` while it runs (or before `start()`)."""
        rc = None if self._process is None else self._process.returncode
        return None if rc is None else ProcessExit(rc, self._stderr.tail)

    # ------------------------------------------------------------------ start

    async def launch(self) -> None:
        """Spawn the process; see `LineTransport.launch()`."""
        if self._phase is not _Phase.NEW:
            raise CLIConnectionError("this transport was already started (or closed)")
        self._phase = _Phase.LAUNCHING
        try:
            # the local spawn is never interrupted: a child is never left half made (a
            # cancellation takes effect just after, and aclose() stops the child)
            proc = await self._spawn()
        except BaseException:
            self._phase = _Phase.CLOSED
            self._writer.close()
            self._close_done.set()  # nothing to close: aclose() must not wait for it
            raise
        self._process = proc
        if self._phase is not _Phase.LAUNCHING:  # aclose() ran while we were spawning
            with anyio.CancelScope(shield=True):
                await self._kill_unstarted(proc)
            raise CLIConnectionError("the transport was closed while the CLI was starting")
        self._phase = _Phase.LAUNCHED
        await anyio.lowlevel.checkpoint_if_cancelled()

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Spawn the process (unless `launch()` did) and start the background tasks
        in ``task_group``."""
        if self._phase is _Phase.NEW:
            await self.launch()
        if self._phase is not _Phase.LAUNCHED:
            raise CLIConnectionError("this transport was already started (or closed)")
        self._phase = _Phase.RUNNING
        proc = self._started()
        try:
            if proc.stderr is None:  # a spawner's process without one: nothing to drain
                self._stderr_done.set()
            else:
                task_group.start_soon(self._drain_stderr, proc.stderr, name="ccwire stderr")
            task_group.start_soon(self._writer.run, proc.stdin, name="ccwire stdin")
            task_group.start_soon(self._watch_exit, proc, name="ccwire exit watcher")
        except BaseException:  # e.g. the task group is already closed: leave no orphan
            self._phase = _Phase.CLOSED
            with anyio.CancelScope(shield=True):
                self._signal(proc, kill=True)
                await _wait_exit(proc, _KILL_WAIT)
                await proc.aclose()
            self._writer.close()
            self._close_done.set()
            raise

    async def _spawn(self) -> RunningProcess:
        options = SpawnOptions(
            command=self._argv[0],
            args=tuple(self._argv[1:]),
            cwd=None if self._cwd is None else os.fspath(self._cwd),
            env=dict(os.environ) if self._env is None else self._env,
            user=self._user,
            private_files=self._private_files,
            explicit_env=self._explicit_env,
        )
        return await start_process(self._spawner, options, timeout=self._spawn_timeout)

    def _started(self) -> RunningProcess:
        if self._process is None or self._phase is _Phase.LAUNCHED:
            raise CLIConnectionError("the transport is not started")
        return self._process

    # ------------------------------------------------------------------ input

    async def send_line(self, line: bytes) -> None:
        """Write one encoded line; see `LineTransport.send_line()`."""
        check_line(line)
        proc = self._started()
        error = self._writer.error
        if self._input_closed or error is not None or proc.returncode is not None:
            raise await self._input_failure(error) from error
        try:
            await self._writer.write(line)
        except WriteInterrupted:
            raise CLIConnectionError(
                "the CLI's input was closed while this line was being written"
            ) from None
        except STREAM_ERRORS as exc:
            raise await self._input_failure(exc) from exc

    async def _input_failure(self, exc: BaseException | None) -> CcwireError:
        proc = self._started()
        if self._input_closed or self._phase is _Phase.CLOSED:
            return CLIConnectionError("the CLI's input is closed")
        if exc is not None and proc.returncode is None:
            with anyio.move_on_after(_BROKEN_PIPE_EXIT_WAIT):
                await proc.wait()
        if proc.returncode is not None:
            with anyio.move_on_after(_STDERR_WAIT):  # let the quoted tail be complete
                await self._stderr_done.wait()
            return ProcessError(
                "cannot write to the Claude Code CLI: it has exited",
                exit_code=proc.returncode,
                stderr=self._stderr.tail,
            )
        return CLIConnectionError(f"writing to the CLI's stdin failed: {exc!r}")

    async def end_input(self) -> None:
        """Close stdin once the lines queued are out (waits at most ``close_grace`` s for
        them); idempotent, never raises for a closed or broken pipe.
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

    async def receive_line(self) -> bytes | None:
        """Return the next line; see `LineTransport.receive_line()`."""
        proc = self._started()
        while not self._lines:
            if self._decoder.error is not None:  # a line over max_line_bytes
                raise self._decoder.error
            if self._stdout_eof:
                await self._verdict()
                return None
            chunk = await self._read_chunk(proc)
            if chunk:
                self._lines.extend(self._decoder.feed(chunk))
                continue
            self._stdout_eof = True
            self._stdout_done.set()
            rest = self._decoder.flush()
            if rest is not None:
                return rest
        return self._lines.popleft()

    async def _read_chunk(self, proc: RunningProcess) -> bytes:
        """The next chunk of stdout; ``b""`` at its end (or once given up on)."""
        stdout = proc.stdout
        try:
            if self._abandoned:  # the CLI exited and a grandchild holds stdout open:
                # read what is left, as long as it keeps coming
                with anyio.move_on_after(_ABANDONED_READ_TIMEOUT):
                    return await stdout.receive(self._chunk_size)
                return b""
            self._reading = True
            try:
                return await stdout.receive(self._chunk_size)
            finally:
                self._reading = False
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""  # the end, given up (`_give_up_pipes`), or closed by aclose()
        except (anyio.BrokenResourceError, OSError) as exc:
            raise CLIConnectionError(f"reading the CLI's output failed: {exc!r}") from exc

    async def _verdict(self) -> None:
        proc = self._started()
        with anyio.move_on_after(self._exit_wait):
            await proc.wait()
        if proc.returncode is not None:
            with anyio.move_on_after(_STDERR_WAIT):  # let the tail be complete
                await self._stderr_done.wait()
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

    # ----------------------------------------------------------------- stderr

    async def _drain_stderr(self, stderr: anyio.abc.ByteReceiveStream) -> None:
        try:
            with self._stderr_scope:
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
            self._stderr_done.set()
            await close_quietly(stderr)

    # --------------------------------------------------------------- shutdown

    async def _watch_exit(self, proc: RunningProcess) -> None:
        with self._watch_scope:
            try:
                await proc.wait()  # also reaps the child on trio
            except CcwireError as exc:  # a spawner's process whose wait() fails
                logger.error("ccwire: %s", exc)
                await self._give_up_pipes(proc)
                return
        if self._watch_scope.cancel_called:
            return  # aclose() gave up on a process that survived SIGKILL
        self._writer.stop()  # nothing more can be written; lets the writer task end
        with self._pipes_wait, anyio.move_on_after(_EOF_GRACE):
            await self._stdout_done.wait()
            await self._stderr_done.wait()
        await self._give_up_pipes(proc)

    async def _give_up_pipes(self, proc: RunningProcess) -> None:
        """Stop waiting for the ends of pipes a grandchild may hold open. A read of
        stdout that waits now has read all the CLI wrote: it ends, as at the end of the
        output; otherwise the reads to come take only what is already there."""
        if not self._stdout_done.is_set():
            self._abandoned = True
            if self._reading:
                await close_quietly(proc.stdout)
        if not self._stderr_done.is_set():
            self._stderr_scope.cancel()

    async def aclose(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL, reap, then stop what is left of the
        CLI's process group; bounded, shielded, idempotent."""
        with anyio.CancelScope(shield=True):
            phase = self._phase
            if phase is _Phase.CLOSED:
                with anyio.move_on_after(
                    2 * (self._close_grace + self._terminate_grace + _KILL_WAIT) + 5
                ):
                    await self._close_done.wait()
                return
            self._phase = _Phase.CLOSED
            try:
                proc = self._process  # set in both phases
                if phase is _Phase.RUNNING:
                    assert proc is not None
                    await self._shutdown(proc)
                elif phase is _Phase.LAUNCHED:
                    assert proc is not None
                    await self._kill_unstarted(proc)
            finally:
                self._writer.close()
                self._pipes_wait.cancel()  # given up above: nothing is left to wait for
                self._close_done.set()

    async def _shutdown(self, proc: RunningProcess) -> None:
        await self.end_input()
        with anyio.move_on_after(self._close_grace):
            if self._decoder.error is not None:  # nobody can read the output any more:
                await self._discard_output(proc)  # a CLI blocked writing it can go on
            await proc.wait()
        if not await self._stop(proc):
            self._abandon(proc)
            await self._give_up_pipes(proc)
            return
        await self._stop_group(proc)
        with anyio.move_on_after(_STDERR_WAIT):
            await self._stderr_done.wait()
        await self._give_up_pipes(proc)
        self._writer.scope.cancel()
        with anyio.move_on_after(1.0):
            await proc.aclose()

    async def terminate(self) -> None:
        """SIGTERM the CLI, wait ``terminate_grace`` s, then SIGKILL it (bounded,
        shielded); its output is still read to its end. See `LineTransport.terminate()`."""
        with anyio.CancelScope(shield=True):
            proc = self._process
            if proc is None or self._phase is not _Phase.RUNNING:
                return  # not started (nothing to read), or aclose() stops it
            if not await self._stop(proc):
                self._abandon(proc)
                await self._give_up_pipes(proc)

    async def _stop(self, proc: RunningProcess) -> bool:
        """SIGTERM, ``terminate_grace`` s, SIGKILL, `_KILL_WAIT` s, unless the CLI has
        exited; ``False`` if it survived SIGKILL (logged)."""
        if proc.returncode is None:
            self._signal(proc, kill=False)
            if not await _wait_exit(proc, self._terminate_grace):
                self._signal(proc, kill=True)
                if not await _wait_exit(proc, _KILL_WAIT):
                    logger.error("ccwire: the CLI (pid %s) survived SIGKILL", proc.pid)
                    return False
        return True

    async def _discard_output(self, proc: RunningProcess) -> None:
        """Read to its end and drop the CLI's output past a line over
        ``max_line_bytes`` (no line can be read after it), so that a CLI blocked writing
        it can see its input end and exit within ``close_grace``."""
        try:
            while await proc.stdout.receive(self._chunk_size):
                pass
        except (anyio.EndOfStream, *STREAM_ERRORS):
            self._stdout_done.set()

    async def _stop_group(self, proc: RunningProcess) -> None:
        """Stop what the exited CLI left running in its process group (when it leads
        one) and, when it did not exit cleanly (killed, crashed), what it started outside
        it (its tools, in sessions of their own, which it stops itself when it can):
        SIGTERM (unless the group had it), ``terminate_grace`` s, SIGKILL. The CLI's
        exit status and how it is reported do not change."""
        strays = proc.returncode != 0
        if not _left(proc, strays):
            return
        if not self._signalled:  # (not `_signal()`: the CLI's own exit is reported as is)
            _send_signal(proc, kill=False)
        if strays:
            proc.stop_left_behind(kill=False)
        if await _wait_group(proc, self._terminate_grace, strays):
            return
        _send_signal(proc, kill=True)
        if strays:
            proc.stop_left_behind(kill=True)
        if not await _wait_group(proc, _KILL_WAIT, strays):
            logger.error(
                "ccwire: the CLI's process group (%s) survived SIGKILL", proc.process_group
            )

    async def _kill_unstarted(self, proc: RunningProcess) -> None:
        """Stop a process that was launched but never started: it was sent nothing,
        and nothing reads its pipes, so there is nothing to wait for."""
        self._signal(proc, kill=True)
        if not await _wait_exit(proc, _KILL_WAIT):
            logger.error("ccwire: the CLI (pid %s) survived SIGKILL", proc.pid)
            return
        with anyio.move_on_after(1.0):
            await proc.aclose()

    def kill(self) -> None:
        """SIGKILL the CLI now (its process group, when it leads one; the spawner's
        equivalent for another process), if it runs; `aclose()` then reaps it at once."""
        proc = self._process
        if proc is not None and proc.returncode is None:
            self._signal(proc, kill=True)

    def _abandon(self, proc: RunningProcess) -> None:
        """Give up on a process that survived SIGKILL: end the background tasks that
        would wait for it, so the task group they run in can end."""
        self._watch_scope.cancel()
        self._writer.scope.cancel()

    def _signal(self, proc: RunningProcess, *, kill: bool) -> None:
        self._signalled = True
        _send_signal(proc, kill=kill)


def _send_signal(proc: RunningProcess, *, kill: bool) -> None:
    """SIGKILL or SIGTERM to ``proc`` (to its group when it leads one); a process or
    group already gone is not an error, a failure is logged."""
    try:
        if kill:
            proc.kill()
        else:
            proc.terminate()
    except ProcessLookupError:
        pass  # exited in the meantime
    except Exception:  # a spawner's process whose kill() fails: it is logged
        logger.exception("ccwire: stopping the CLI's process (pid %s) failed", proc.pid)


def _left(proc: RunningProcess, strays: bool) -> bool:
    """Whether a process of ``proc``'s group runs, or (``strays``) one it left behind."""
    return proc.group_alive() or (strays and bool(proc.left_behind()))


async def _wait_group(proc: RunningProcess, seconds: float, strays: bool) -> bool:
    """Wait until no process of ``proc``'s group runs, nor (``strays``) one it left
    behind; ``False`` if some still do."""
    with anyio.move_on_after(seconds):
        # not our children: nothing tells when they end, they are looked at
        while _left(proc, strays):  # noqa: ASYNC110
            await anyio.sleep(_GROUP_POLL)
    return not _left(proc, strays)


async def _wait_exit(proc: RunningProcess, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await proc.wait()
    return proc.returncode is not None
