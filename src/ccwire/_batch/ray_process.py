"""The Ray driver of a batch in a child process of its own, so that the caller survives Ray.

Ray ends its driver's process at once, from its C++ core (exit code 1, no Python code
runs: no ``finally``, no ``atexit``), when a Ray node it needs dies: the head node, or
the node of the machine it runs on. So `run_batch(executor="ray")` never joins Ray in
the caller's process: `feed_ray_process` starts a child Python running `main` (a
fresh interpreter importing this very ccwire: forking a process that has threads, as
Ray's and often the caller's do, is unsafe), which runs `feed_ray` on a stand-in of
the batch, and talks to it over the child's stdin and stdout, one pickled message per
frame (a 4-byte length, then the pickle; ``ray.cloudpickle``, as Ray ships task
functions; the child's own stdout goes to its stderr, so that nothing printed there
can break the frames).

Everything of the batch but Ray stays in the caller: the task source (read only when
the child asks for a task, one at a time, so the read-ahead is `feed_ray`'s own), the
results file (each result is written, charged to the budget and reported, then the
child is told the budget's state, which it starts tasks by and caps their sessions by,
the same `CostBudget` rules as the local executor's: it waits for that answer),
the `events` callback, the tracing. The child's stderr is passed on to the caller's,
and its last lines kept.

A child that ends without saying it finished (Ray ended it) is `BatchProcessLostError`
in the caller, after every result that arrived: the tasks without a result were not
recorded, so the same call runs them. Stopping the batch (``stop()``, leaving the
block, a cancellation, Ctrl-C) tells the child to stop; it shuts the actors down
(bounded) and exits; a child that does not is killed. A child that did not end
cleanly has what it left in its process group killed (a Ray instance it started
itself: its clean-up did not run). The child runs in a session of
its own (a terminal's Ctrl-C reaches the caller, which stops it) and stops by itself
when its stdin ends (the caller is gone).

A caller that joined Ray itself (``ray.init``) has the child join the same cluster in
the same namespace and runtime environment; the options are pickled in the caller
(what cannot be is a `BatchConfigError`, before the child starts), the tools, hooks and
spawner go by reference as to the Ray workers.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import pickle
import random
import signal
import struct
import sys
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from . import ray_executor
from .budget import CostBudget
from .errors import BatchConfigError, BatchError, BatchProcessLostError
from .results import BatchResult
from .session import BatchEvent, emit
from .tasks import BatchTask

__all__ = ["STOP_SECONDS", "feed_ray_process"]

STOP_SECONDS = 32.0
"""How long a stopped child gets to shut its actors down (bounded at 20 s) and exit."""
_LAST_WORDS_SECONDS = 3.0  # how long a lost child's stderr is read after it ended
_TAIL_LINES = 20  # stderr lines kept for the error
_HEADER = struct.Struct(">I")
# the executor's settings the child takes from the caller's process
_SETTINGS = ("CONNECT_SECONDS", "PLACE_SECONDS", "OVERDUE_SECONDS", "UNRESPONSIVE_SECONDS")
# the child's program: this very ccwire (wherever the caller imported it from; its
# folder is put first only when it is not on the path already, so that an installed
# ccwire's site-packages does not come before the standard library), then `main`
_HOME = str(Path(__file__).resolve().parents[2])
_CHILD = (
    f"import sys; sys.path.insert(0, {_HOME!r}) if {_HOME!r} not in sys.path else None; "
    "from ccwire._batch.ray_process import main; main()"
)


def _pickle(value: Any) -> bytes:
    from ray import cloudpickle  # the caller asked for Ray: it is installed

    dumps: Any = cloudpickle.dumps  # (untyped)
    data: bytes = dumps(value)
    return _HEADER.pack(len(data)) + data


# ---------------------------------------------------------------------- the caller


class _Channel:
    """The caller's end: frames to the child (one writer at a time) and from it."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._lock = anyio.Lock()

    async def send(self, frame: bytes) -> None:
        """Send one frame; to a child that is gone, nothing (`receive` sees its end)."""
        async with self._lock:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._stdin.send(frame)

    async def receive(self) -> tuple[Any, ...] | None:
        """The next message, or `None` once the child's stdout ended."""
        try:
            (size,) = _HEADER.unpack(await self._stdout.receive_exactly(_HEADER.size))
            message: tuple[Any, ...] = pickle.loads(await self._stdout.receive_exactly(size))
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return None
        return message

    async def close(self) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stdin.aclose()


class _Tally:
    """What the caller knows of the child's work: tasks handed over, results back."""

    def __init__(self) -> None:
        self.handed: dict[str, None] = {}  # ids, in order
        self.finished: set[str] = set()
        self.started = False  # the child said it runs (it read the batch)
        self.stderr: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self.stderr_ended = anyio.Event()

    def not_run(self) -> tuple[str, ...]:
        return tuple(i for i in self.handed if i not in self.finished)


class _Handoff:
    """Results recorded here, on their way to the reader.

    The child is answered as soon as a result is recorded, never after the reader took
    it: a reader that does not read would hold the child, and with it the
    acknowledgements its sessions' tool calls wait for (they would be denied). The
    reader paces the batch all the same: the child is handed a task only while fewer
    than ``limit`` results wait here.
    """

    def __init__(self, send: MemoryObjectSendStream[BatchResult], limit: int) -> None:
        self._send = send
        self._limit = limit
        self._waiting: collections.deque[BatchResult] = collections.deque()
        self._changed = anyio.Event()

    def put(self, result: BatchResult) -> None:
        """Queue `result` for the reader."""
        self._waiting.append(result)
        self._wake()

    async def forward(self) -> None:
        """Hand the queued results to the reader, in order (runs until cancelled)."""
        while True:
            while not self._waiting:
                await self._changed.wait()
            await self._send.send(self._waiting[0])
            self._waiting.popleft()
            self._wake()

    async def room(self) -> None:
        """Wait until fewer than ``limit`` results wait for the reader."""
        while len(self._waiting) >= self._limit:
            await self._changed.wait()

    async def drained(self) -> None:
        """Wait until the reader has every result (at the reader's pace)."""
        while self._waiting:
            await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


async def feed_ray_process(run: Any, send: MemoryObjectSendStream[BatchResult]) -> None:
    """Run `run`'s tasks on Ray, driven from a child process (see the module's notes);
    results are recorded here as they arrive. A failure is raised (the driver records
    it): the child's (`BatchError`), or `BatchProcessLostError` when it was lost.

    Raises:
        BatchConfigError: Ray is not installed, or the options cannot be sent.
        BatchProcessLostError: The child ended without finishing.
    """
    ray = ray_executor._import_ray()
    options = ray_executor.portable_options(run._options)  # refused here, before the child
    ropts = dict(run._ray_options)
    if ray.is_initialized():  # the caller's own connection: the child joins the same
        context = ray.get_runtime_context()
        ropts["address"] = context.gcs_address
        ropts["join"] = {"namespace": context.namespace, "runtime_env": context.runtime_env}
    config = {"options": options, "policy": run._policy, "tools": run._tools,
              "hooks": run._hooks, "spawn": run._spawn, "spares": run._spares,
              "ray_options": ropts, "concurrency": run._concurrency,
              "seed": run._rng.getrandbits(64), "carrier": run._tracing.carrier(),
              "budget": run.budget,
              "settings": {name: getattr(ray_executor, name) for name in _SETTINGS}}  # fmt: skip
    try:
        frames = _pickle(list(sys.path)) + _pickle(config)
    except Exception as exc:
        raise BatchConfigError(
            "the batch options cannot be sent to the Ray workers: "
            f"{ray_executor._why_unpicklable(exc)}"
        ) from exc
    tally = _Tally()
    process = await anyio.open_process([sys.executable, "-c", _CHILD], start_new_session=True)
    channel = _Channel(process)
    try:
        await channel.send(frames)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pass_stderr, process, tally)
            needs, asked = anyio.create_memory_object_stream[None](1)
            handoff = _Handoff(send, run._concurrency)
            tg.start_soon(handoff.forward)
            tg.start_soon(_hand_tasks, run, channel, asked, handoff, tally)
            async with needs:
                ending = await _serve(run, channel, needs, handoff, tally)
            await handoff.drained()  # every result that arrived, lost or not
            if ending is None:  # lost: its exit code, and what it said last
                with anyio.move_on_after(_LAST_WORDS_SECONDS):
                    await process.wait()
                    await tally.stderr_ended.wait()
            tg.cancel_scope.cancel()
        if ending is None:
            raise _lost(run, process.returncode, tally)
        if ending[0] == "error":
            raise ending[1]
    finally:
        with anyio.CancelScope(shield=True):
            await _end_child(process, channel, tally)


async def _serve(
    run: Any,
    channel: _Channel,
    needs: MemoryObjectSendStream[None],
    handoff: _Handoff,
    tally: _Tally,
) -> tuple[Any, ...] | None:
    """Handle the child's messages until it says it ended (that message), or its
    stdout ends without it (`None`)."""
    while True:
        message = await channel.receive()
        if message is None or message[0] in ("done", "error"):
            return message
        kind = message[0]
        if kind == "started":
            tally.started = True
        elif kind == "need":
            await needs.send(None)
        elif kind == "event":
            emit(run._events, message[1])
        elif kind == "submitted":
            run.submitted += message[1]
        elif kind == "export":
            run.note_export(message[1])
        elif kind == "result":
            result: BatchResult = message[1]
            tally.finished.add(result.id)
            if run.record(result):  # written, charged, reported
                handoff.put(result)  # yielded when the reader takes it (not waited for)
            await channel.send(_pickle(("ack", run.over_budget(), run.interrupted, run.budget)))


async def _hand_tasks(
    run: Any,
    channel: _Channel,
    asked: MemoryObjectReceiveStream[None],
    handoff: _Handoff,
    tally: _Tally,
) -> None:
    """Give the child the next task each time it asks (``end`` once there is none), once
    the reader keeps up (`_Handoff.room`); a task that cannot be pickled fails alone,
    here (``config``)."""
    async with asked, contextlib.aclosing(run.next_tasks()) as tasks:
        async for _ in asked:
            await handoff.room()
            while True:
                try:
                    task: BatchTask = await tasks.__anext__()
                except StopAsyncIteration:
                    await channel.send(_pickle(("end",)))
                    return
                try:
                    frame = _pickle(("task", task))
                except Exception as exc:  # it cannot run on Ray
                    run.submitted += 1
                    emit(run._events, BatchEvent("started", task.id))
                    failed = ray_executor._unsendable(task, exc)
                    if run.record(failed):
                        handoff.put(failed)
                    continue
                tally.handed[task.id] = None
                await channel.send(frame)
                break


async def _pass_stderr(process: anyio.abc.Process, tally: _Tally) -> None:
    """Pass the child's stderr on to this process's, keeping its last lines."""
    assert process.stderr is not None
    pending = b""
    try:
        async for chunk in process.stderr:
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                text = line.decode(errors="replace")
                tally.stderr.append(text)
                with contextlib.suppress(Exception):
                    sys.stderr.write(text + "\n")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
    if pending:
        tally.stderr.append(pending.decode(errors="replace"))
    tally.stderr_ended.set()


def _lost(run: Any, code: int | None, tally: _Tally) -> BatchProcessLostError:
    """The error of a child that ended without finishing."""
    if code is None:
        how = "it did not exit"
    elif code < 0:
        how = f"killed by {signal.Signals(-code).name}"
    else:
        how = f"exit code {code}"
    tail = tuple(line for line in tally.stderr if line.strip())
    not_run = tally.not_run()
    where = f" in {run._writer.path}" if run._writer is not None else ""
    said = f"; its last words: {' | '.join(tail[-3:])}" if tail else ""
    if not tally.started:  # it never ran the batch: nothing of Ray's doing
        return BatchProcessLostError(
            f"the batch's Ray driver process ended before it started ({how}){said}",
            exit_code=code,
            stderr_tail=tail,
        )
    return BatchProcessLostError(
        f"the batch's Ray driver process ended abruptly ({how}): Ray ends it when a Ray "
        f"node it needs dies (the head node, or this machine's node); "
        f"{len(tally.finished)} results of this run are saved{where}, {len(not_run)} tasks "
        f"have none (not recorded: run the batch again, with the cluster up, to run "
        f"them){said}",
        exit_code=code,
        stderr_tail=tail,
        not_run=not_run,
    )


async def _end_child(process: anyio.abc.Process, channel: _Channel, tally: _Tally) -> None:
    """Have the child stop (if it still runs) and wait for it, bounded: it shuts its
    actors down first; one that does not exit in `STOP_SECONDS` is killed. Its
    messages meanwhile are read and dropped (a stopped batch records nothing more),
    its stderr passed on."""
    if process.returncode is None:
        with anyio.move_on_after(2.0):
            await channel.send(_pickle(("stop",)))
        await channel.close()
        with anyio.move_on_after(STOP_SECONDS):
            async with anyio.create_task_group() as tg:
                if not tally.stderr_ended.is_set():
                    tg.start_soon(_pass_stderr, process, tally)
                while await channel.receive() is not None:
                    pass
                await process.wait()
                tg.cancel_scope.cancel()  # (what it started may hold its stderr)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with anyio.move_on_after(5.0):
                await process.wait()
    await channel.close()
    with anyio.move_on_after(5.0), contextlib.suppress(Exception):
        await process.aclose()
    if process.returncode != 0:  # lost or killed: its clean-up (Ray's) did not run
        _kill_left(process.pid)


def _kill_left(pid: int) -> None:
    """Kill what the child `pid` left in the process group it leads: the processes of a
    Ray instance it started itself (its agents outlive it by a minute or more,
    reparented), when it did not end cleanly. Nothing on Windows (no process groups)."""
    killpg = getattr(os, "killpg", None)
    if killpg is None:  # pragma: no cover - Windows
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        killpg(pid, signal.SIGKILL)


# ---------------------------------------------------------------------- the child


class _Writer:
    """The child's end toward the caller: whole frames, written at once (the caller
    reads all the time; the event loop waits while it does not)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def __call__(self, *message: Any) -> None:
        view = memoryview(_pickle(message))
        while view:
            view = view[os.write(self._fd, view) :]


def _read_frame(fd: int) -> Any:
    """The next message from the caller (in a worker thread); `None` at the end."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    data = _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class _Tracing:
    def __init__(self, carrier: dict[str, str] | None) -> None:
        self._carrier = carrier

    def carrier(self) -> dict[str, str] | None:
        return self._carrier


class _ChildRun:
    """The batch as `feed_ray` sees it, in the child: its tasks, results and events go
    to the caller, which holds the batch."""

    def __init__(
        self,
        config: dict[str, Any],
        write: Callable[..., None],
        tasks: MemoryObjectReceiveStream[tuple[Any, ...]],
        acks: MemoryObjectReceiveStream[tuple[Any, ...]],
    ) -> None:
        self._options = config["options"]
        self._policy = config["policy"]
        self._tools = config["tools"]
        self._hooks = config["hooks"]
        self._spawn = config["spawn"]
        self._spares = config["spares"]
        self._ray_options = config["ray_options"]
        self._concurrency = config["concurrency"]
        self._rng = random.Random(config["seed"])
        self._tracing = _Tracing(config["carrier"])
        self._write = write
        self._tasks = tasks
        self._acks = acks
        self._submitted = 0
        self._budget: CostBudget | None = config["budget"]  # the caller's, as last told
        self._exhausted = False
        self.interrupted = False

    def _events(self, event: BatchEvent) -> None:
        self._write("event", event)

    @property
    def submitted(self) -> int:
        return self._submitted

    @submitted.setter
    def submitted(self, value: int) -> None:
        self._write("submitted", value - self._submitted)
        self._submitted = value

    def over_budget(self) -> bool:
        return self._exhausted

    def note_export(self, export: dict[str, Any]) -> None:
        self._write("export", export)

    def budget_room(self, running: int) -> bool:
        return self._budget is None or self._budget.room(running)

    def budget_cap(self, task_id: str, running: int) -> float | None:
        if self._budget is None or self._spares:  # a spare cannot take a cap (`BatchRun`)
            return None
        slots = max(1, self._concurrency - running)
        return self._budget.cap_for(task_id, running, slots, self._options.max_budget_usd)

    async def next_tasks(self) -> AsyncGenerator[BatchTask, None]:
        while True:
            self._write("need")
            message = await self._tasks.receive()
            if message[0] == "end":
                return
            yield message[1]

    async def finish(self, send: object, result: BatchResult) -> None:
        self._write("result", result)
        _, self._exhausted, self.interrupted, budget = await self._acks.receive()
        if budget is not None and self._budget is not None:  # the caller's count; the
            budget.reserved = dict(self._budget.reserved)  # caps set aside are this side's
            budget.release(result.id)
        self._budget = budget


async def _child(config: dict[str, Any], source: int, write: _Writer) -> None:
    tasks, tasks_out = anyio.create_memory_object_stream[tuple[Any, ...]](1)
    acks, acks_out = anyio.create_memory_object_stream[tuple[Any, ...]](1)
    run = _ChildRun(config, write, tasks_out, acks_out)
    unused, _ = anyio.create_memory_object_stream[BatchResult]()
    async with anyio.create_task_group() as tg:
        try:
            with anyio.CancelScope() as feeding:
                tg.start_soon(_listen, source, tasks, acks, feeding)
                await ray_executor.feed_ray(run, unused)
            write("done")  # every task has its result, or it was stopped
        except BatchError as exc:
            write("error", exc)
        except Exception as exc:
            write("error", BatchError(f"the Ray driver stopped on an unexpected error: {exc!r}"))
        finally:
            tg.cancel_scope.cancel()  # the listener


async def _listen(
    source: int,
    tasks: MemoryObjectSendStream[tuple[Any, ...]],
    acks: MemoryObjectSendStream[tuple[Any, ...]],
    feeding: anyio.CancelScope,
) -> None:
    """The caller's messages: tasks and acks to `_ChildRun`; ``stop``, or the end of
    stdin (the caller is gone), stops the batch."""
    while True:
        message = await anyio.to_thread.run_sync(_read_frame, source, abandon_on_cancel=True)
        if message is None or message[0] == "stop":
            feeding.cancel()
            return
        await (tasks if message[0] in ("task", "end") else acks).send(message)


def main() -> None:  # pragma: no cover - the child (its coverage is not collected)
    """The child: read the caller's ``sys.path`` and the batch, run its Ray driver."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller stops it
    source, target = os.dup(0), os.dup(1)  # the frames (not inherited by subprocesses)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # what is printed goes to stderr, never into the frames
    os.close(null)
    path = _read_frame(source)
    if path is None:
        return
    sys.path[:] = path
    config = _read_frame(source)  # unpickled with the caller's modules importable
    if config is None:
        return
    for name, value in config["settings"].items():
        setattr(ray_executor, name, value)
    writer = _Writer(target)
    writer("started")
    anyio.run(_child, config, source, writer)
    # Ray's own clean-up (``ray.shutdown``: the actors are gone, a local instance is
    # stopped) runs here; the interpreter's teardown after it takes Ray more than a
    # second, which the caller would wait for at the end of every batch
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
