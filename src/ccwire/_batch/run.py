"""`run_batch`: many tasks, bounded concurrency, results as they finish, resumable."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import logging
import os
import random
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterable, Sequence
from types import TracebackType
from typing import Any, Final, Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._conversation.options import ClaudeAgentOptions
from .._conversation.spare_pool import SparePool
from .._conversation.transcript_store.protocol import SessionStore
from .._core.groups import leaves
from .._core.tasks import TaskHost
from .budget import BudgetAction, CostBudget, capped_options, check_action
from .errors import (
    BatchConfigError,
    BatchError,
    BatchInputError,
    DuplicateTaskIdError,
    ResultsWriteError,
)
from .output import ResultsFile, read_results
from .refs import check_reference, resolve_hooks, resolve_spawner, resolve_tools
from .results import BatchResult, RetryPolicy
from .session import BatchEvent, EventSink, TaskAborted, emit
from .tasks import BatchTask, TaskLike, check_timeout, coerce_task
from .telemetry import BatchTracing, run_traced
from .watchdog import LoopWatchdog

__all__ = ["DEFAULT_RETRIES", "BatchRun", "BatchState", "Executor", "finished_ids", "run_batch"]

DEFAULT_RETRIES = RetryPolicy()
"""Up to 4 attempts, backoff from 1 s (half of each delay random), at most 60 s."""

logger = logging.getLogger("ccwire")

Executor = Literal["local", "ray"]
"""Where sessions run: ``local`` (subprocesses of this process) or ``ray`` (Ray actors)."""


def finished_ids(path: str | os.PathLike[str], *, rerun_failed: bool = False) -> set[str]:
    """The ids a results file already has a final result for.

    Args:
        path: The results file (a missing file has none).
        rerun_failed: Count only successful results, so that failed tasks run again.

    Returns:
        The ids to skip.
    """
    done: set[str] = set()
    for result in read_results(path):
        if result.ok or not rerun_failed:
            done.add(result.id)
        else:
            done.discard(result.id)
    return done


def run_batch(
    tasks: Iterable[TaskLike] | AsyncIterable[TaskLike],
    *,
    options: ClaudeAgentOptions | None = None,
    concurrency: int = 4,
    store: SessionStore | None = None,
    executor: Executor = "local",
    retries: RetryPolicy | int = DEFAULT_RETRIES,
    output: str | os.PathLike[str] | None = None,
    rerun_failed: bool = False,
    tools: Sequence[str] = (),
    hooks: str | None = None,
    events: EventSink | None = None,
    ray_address: str | None = None,
    num_cpus: float = 1.0,
    memory: int | None = None,
    seed: int | None = None,
    sessions_per_actor: int | None = None,
    max_cost_usd: float | None = None,
    on_budget: BudgetAction = "finish",
    spawn: str | None = None,
    spares: int = 0,
    task_timeout: float | None = None,
) -> BatchRun:
    """Run every task in its own session; results arrive as tasks finish.

    ```python
    async with run_batch(tasks, options=opts, concurrency=8, output="out.jsonl") as results:
        async for result in results:
            print(result.id, result.ok, result.result)
    ```

    Args:
        tasks: `BatchTask`s, mappings with task fields (``id``, ``prompt``, ``cwd``,
            ``model``, ``max_turns``, ``system_prompt``, ``allowed_tools``,
            ``metadata``, ``timeout``), dataclasses with those fields, or async functions taking a
            connected `ClaudeSDKClient`. Consumed lazily: at most `concurrency` tasks
            are held at a time (Ray: twice that, the next ones read ahead), so the
            iterable may be huge, or wait for results before giving more.
        options: The options every session starts from (task fields override them).
        concurrency: Sessions running at once.
        store: Accepted for the session store of the drop-in API and type-checked;
            this version records results only in `output`.
        executor: ``local`` or ``ray`` (needs ``pip install 'ccwire[ray]'``; the Ray
            driver runs in a child process, which joins the cluster of this process's
            own Ray connection if it has one).
        retries: A `RetryPolicy`, or the number of retries after the first attempt.
            Only rate limits (429), overloads (529), a CLI that fails to start, and
            (Ray) a session lost with its node or actor before it acted are retried;
            a model's error result, a CLI that dies mid-session and a task that runs
            out of time (``task_timeout``) are final.
        output: A results file (JSONL; ``.parquet`` with pyarrow). Each result is
            written before it is yielded, and ids already in it are skipped. A write
            that fails stops the batch with `ResultsWriteError`.
        rerun_failed: With `output`, run again the tasks whose recorded result failed.
        tools: In-process MCP servers by reference (``package.module:attribute``),
            added to every session; required instead of in-process objects with Ray.
        hooks: A hooks mapping by reference (``package.module:attribute``).
        events: Called with a `BatchEvent` when a task starts, is retried or finishes.
        ray_address: The Ray cluster to join (default: ``RAY_ADDRESS``, else a local
            instance); ignored by the local executor.
        num_cpus: Ray resource hint: CPUs per task (an actor running k sessions
            reserves k times this).
        memory: Ray resource hint: bytes of memory per task (likewise).
        seed: Seed of the backoff jitter (for reproducible runs).
        sessions_per_actor: Ray: sessions one actor (a Ray worker process) runs at
            once; the batch starts ``ceil(concurrency / sessions_per_actor)`` actors.
            Default: as many as the smallest node that can hold a session has room
            for by `num_cpus` and `memory`, at most `concurrency` and 16. Ignored by
            the local executor.
        max_cost_usd: A budget in US dollars for the whole batch: the results in
            `output` count, so a re-run does not spend it again. While no cost is
            known yet, one task runs at a time (the first says what a task costs);
            then a task starts only while the recorded cost plus the mean cost of a
            result for each running task and this one stays within it (else it waits
            for one to end); once the recorded cost reaches it no task is started.
            Each task's session is capped (``max_budget_usd``, the smaller of the
            options' own and its share of what is left of the budget once the cost so
            far and the caps of the running tasks are set aside; see
            ``ccwire._batch.budget``): the CLI ends it once it costs that much, an
            ``error_max_budget_usd`` failure recorded with its cost. So a budget worth
            one task runs one task whatever `concurrency`, and the batch passes its
            budget by at most the model call that crossed the cap of each task
            running then, however costly they are (`CostBudget.overshoot` says by
            how much). Sessions a task function
            opens itself are neither capped nor counted. Tasks not run stay out of
            `output`, so running again (with a larger budget or none) runs exactly
            them. With `spares`, the sessions are not capped (a spare, booted
            before, cannot take a cap of its own): only the other rules hold.
        on_budget: What happens to the tasks running when the budget is spent: they
            ``finish`` (within their caps), or they are cancelled
            (``interrupt``; not recorded, so they run again next time).
        spawn: A spawner by reference (``package.module:attribute``: a function, or
            a spawner class needing no arguments such as ``ccwire:BubblewrapSpawner``),
            which starts every session's CLI (`ClaudeAgentOptions.spawn_claude_code_process`).
        spares: Spare CLIs to keep booted (`SparePool`; on Ray, per actor), so that a
            task starts on a CLI that is already up, when its options differ from
            `options` only in what a claim can set (``cwd``, ``model``); others start
            cold. Default 0: every task starts its CLI. With `max_cost_usd`, the
            sessions are not capped (see there).
        task_timeout: The wall-clock limit in seconds of each task that sets no
            ``timeout`` of its own (`BatchTask.timeout`), its attempts and their
            backoff included; default: no limit. Once it passes, the task's session is
            stopped (its CLI ended; on Ray, by the actor running it) and the task fails
            with ``error_kind="timeout"``: recorded with the cost its session reported
            (`BatchResult.cost_known` is False when a turn was cut short and the CLI
            did not answer the interrupt), never retried; the batch goes on with the
            next tasks. On Ray, a task run again after its actor was lost gets its
            whole limit again on the new actor. A task function running synchronous
            code (``time.sleep``, a CPU-bound loop) blocks the event loop, and nothing
            can stop it where it does not yield: a watchdog thread logs which task and
            where, its result says for how long (`BatchResult.blocked_s`), and it fails
            with ``timeout`` if that took it past its limit, even if it returned (the
            time it held the loop does not count against the other tasks' limits); on
            Ray, its actor is killed once the loop has not answered for
            ``UNRESPONSIVE_SECONDS`` (10 s) past the limit (the actor's other tasks
            are handled as on a lost actor).

    Returns:
        A `BatchRun`: use it with ``async with`` and iterate it. Its iteration (or
        the end of the block) raises the batch's failure: `ResultsWriteError`, a
        `BatchInputError` for a bad task, a `BatchConfigError` for a Ray cluster
        that cannot be joined, `BatchProcessLostError` when Ray ended the batch's Ray
        driver (it runs in a child process, so that a Ray node's death, which ends
        its driver's process, cannot end the caller's); never a cancellation of its
        own. A task function that raises `KeyboardInterrupt` or `SystemExit` (alone or
        in an exception group) stops the batch like `BatchRun.stop()` (the running
        sessions are cancelled and not recorded, every finished result stays written),
        and then that exception is raised as it is, as from any call; anything else
        a task function raises (`GeneratorExit` and other `BaseException` subclasses
        included, but not a cancellation of the batch's own) is that task's failure
        (``error_kind="exception"``) and the batch goes on.

    Raises:
        BatchConfigError: A bad argument, or an output file that cannot be written
            (raised here, before any task starts).
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise BatchConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    if sessions_per_actor is not None and (
        isinstance(sessions_per_actor, bool)
        or not isinstance(sessions_per_actor, int)
        or sessions_per_actor < 1
    ):
        raise BatchConfigError(
            f"sessions_per_actor must be a positive integer, got {sessions_per_actor!r}"
        )
    if executor not in ("local", "ray"):
        raise BatchConfigError(f"executor must be 'local' or 'ray', got {executor!r}")
    if store is not None and not all(
        callable(getattr(store, method, None)) for method in ("append", "load")
    ):
        raise BatchConfigError("store must implement SessionStore (append and load)")
    _check_types(options, retries, output, tools, events)
    if isinstance(retries, int):
        if retries < 0:
            raise BatchConfigError("retries must be >= 0")
        retries = RetryPolicy(max_attempts=retries + 1)
    for ref in tools:
        check_reference(ref, "tools")
    if hooks is not None:
        check_reference(hooks, "hooks")
    if spawn is not None:
        check_reference(spawn, "spawn")
    if isinstance(spares, bool) or not isinstance(spares, int) or spares < 0:
        raise BatchConfigError(f"spares must be an integer >= 0, got {spares!r}")
    if task_timeout is not None:
        try:
            task_timeout = check_timeout(task_timeout, "task_timeout")
        except BatchInputError as exc:
            raise BatchConfigError(str(exc)) from None
    check_action(on_budget)
    budget = CostBudget(max_cost_usd, on_budget) if max_cost_usd is not None else None
    writer = ResultsFile(output) if output is not None else None  # ours from here on
    skip = finished_ids(output, rerun_failed=rerun_failed) if output is not None else set()
    if budget is not None and output is not None:  # what the results file spent counts
        budget.count_prior(read_results(output))
    return BatchRun(
        tasks,
        options=options or ClaudeAgentOptions(),
        concurrency=concurrency,
        executor=executor,
        policy=retries,
        writer=writer,
        skip=skip,
        tools=tuple(tools),
        hooks=hooks,
        spawn=spawn,
        spares=spares,
        events=events,
        ray_options={
            "address": ray_address,
            "num_cpus": num_cpus,
            "memory": memory,
            "per_actor": sessions_per_actor,
        },
        rng=random.Random(seed),
        budget=budget,
        task_timeout=task_timeout,
    )


def _check_types(
    options: object, retries: object, output: object, tools: object, events: object
) -> None:
    """Refuse arguments of the wrong type by name, before anything starts (they failed
    later with a foreign error, or, for `retries`, only once a task needed a retry)."""
    if options is not None and not isinstance(options, ClaudeAgentOptions):
        raise BatchConfigError(
            f"options must be a ClaudeAgentOptions, not {type(options).__name__}"
        )
    if isinstance(retries, bool) or not isinstance(retries, (int, RetryPolicy)):
        raise BatchConfigError(f"retries must be a RetryPolicy or an int, got {retries!r}")
    if output is not None and not isinstance(output, (str, os.PathLike)):
        raise BatchConfigError(f"output must be a path, not {type(output).__name__}")
    if isinstance(tools, str):
        raise BatchConfigError(f"tools must be a list of references, not one string: [{tools!r}]")
    if events is not None and not callable(events):
        raise BatchConfigError(f"events must be callable, got {events!r}")


class BatchState(enum.Enum):
    """Where a batch is, and how it ended.

    ``new`` until ``async with``; ``running``; ``stopping`` once it was told to stop
    (`BatchRun.stop()`, the ``async with`` block left early, or a result that could
    not be written); then one outcome: ``completed`` (every task has its result),
    ``stopped`` (the unfinished tasks run on the next call: it was stopped, or its
    budget, ``max_cost_usd``, was spent before every task had its result) or
    ``failed`` (`BatchRun.error` says why, and is raised).
    """

    NEW = "new"
    RUNNING = "running"
    STOPPING = "stopping"
    COMPLETED = "completed"
    STOPPED = "stopped"
    FAILED = "failed"


_TRANSITIONS: Final[dict[BatchState, frozenset[BatchState]]] = {
    BatchState.NEW: frozenset({BatchState.RUNNING, BatchState.STOPPING}),
    BatchState.RUNNING: frozenset({BatchState.STOPPING, BatchState.COMPLETED, BatchState.FAILED}),
    BatchState.STOPPING: frozenset({BatchState.STOPPED, BatchState.FAILED}),
    BatchState.COMPLETED: frozenset(),
    BatchState.STOPPED: frozenset(),
    BatchState.FAILED: frozenset(),
}

# how long leaving the block waits for the sessions to end (their CLIs get about 10 s
# each to exit; the Ray executor's own shutdown is bounded at 20 s, and its child
# process gets `ray_process.STOP_SECONDS` to end, then is killed)
_CLOSE_SECONDS = 45.0


class BatchRun:
    """A running batch (made by `run_batch`): an async context manager to iterate.

    The sessions run in a task of their own, never in the caller's scopes: nothing the
    batch does can cancel the code inside the ``async with`` block. Leaving the block
    early (``break``, an exception, a cancellation) cancels the running sessions
    (their CLIs are ended); results already written stay, so the same call continues
    where this one stopped. After the block, `state` says how the batch ended; a
    failure (`error`) is raised as a `BatchError` (`ResultsWriteError` for a results
    file that cannot be written) at the end of iteration, or when the block ends.

    Attributes:
        skipped: Ids skipped because the results file already had them.
        submitted: Tasks started so far.
        spans_unexported: With telemetry on Ray: spans the workers recorded that were
            not exported in time after their task (an OTLP endpoint that is down or
            unreachable from them; they are dropped unless it comes back). A worker
            waits at most a second for it, then no more while it stays down.
        budget: The batch's `CostBudget` (`max_cost_usd`), if it has one.
    """

    def __init__(
        self,
        tasks: Iterable[TaskLike] | AsyncIterable[TaskLike],
        *,
        options: ClaudeAgentOptions,
        concurrency: int,
        executor: Executor,
        policy: RetryPolicy,
        writer: ResultsFile | None,
        skip: set[str],
        tools: tuple[str, ...],
        hooks: str | None,
        events: EventSink | None,
        ray_options: dict[str, Any],
        rng: random.Random,
        budget: CostBudget | None = None,
        spawn: str | None = None,
        spares: int = 0,
        task_timeout: float | None = None,
    ) -> None:
        self._tasks = tasks
        self._options = options
        self._concurrency = concurrency
        self._executor = executor
        self._policy = policy
        self._writer = writer
        self._skip = skip
        self._tools = tools
        self._hooks = hooks
        self._spawn = spawn
        self._spares = spares
        self._task_timeout = task_timeout
        self._tracing = BatchTracing(options, executor=executor, concurrency=concurrency)
        self._events = self._tracing.watch(events)
        self.budget = budget
        self.interrupted = False  # by the budget: the running tasks were cancelled
        self._running: set[anyio.CancelScope] = set()  # of the local tasks running
        self._in_flight = 0  # local tasks started and not yet ended
        self._ended: anyio.Event  # set (and replaced) when a local task ends (`_feed_local`)
        self._watchdog: LoopWatchdog | None = None  # the local executor's
        self._ray_options = ray_options
        self._rng = rng
        self._seen: set[str] = set()
        self._recorded = 0  # results recorded (`finish`)
        self._state = BatchState.NEW
        self._error: BaseException | None = None
        self._all_done = False  # every task has its result (set before the stream ends)
        self._scope: anyio.CancelScope | None = None  # the driver's: stop() cancels it
        # the wait for the next result: stop() bounds it (a task that ignores cancellation)
        self._waiting: anyio.CancelScope | None = None
        self._stop_deadline = float("inf")
        self._abandoned = False  # tasks still ran when iteration stopped waiting for them
        self._host: TaskHost | None = None
        self._receive: MemoryObjectReceiveStream[BatchResult] | None = None
        self.skipped: list[str] = []
        self.submitted = 0
        self.spans_unexported = 0
        self._export_failed: set[int] = set()  # the Ray workers that said so

    # ----------------------------------------------------------------- state

    @property
    def state(self) -> BatchState:
        """Where the batch is (see `BatchState`)."""
        return self._state

    @property
    def error(self) -> BaseException | None:
        """Why the batch failed (a `BatchError`, or the `KeyboardInterrupt` or
        `SystemExit` that stopped it), else `None`."""
        return self._error

    @property
    def loop_stalls(self) -> list[tuple[str | None, float, str | None]]:
        """Each time synchronous code blocked the batch's event loop for a second or
        more (the local executor; a Ray actor's are in its tasks' results), as
        ``(task id, seconds, where)``: the task whose function it was (`None`: code of
        no task function, such as an in-process tool or a hook), how long, and the
        innermost code running then (``file:line in function``). A task's own are
        also its `BatchResult.blocked_s`."""
        if self._watchdog is None:
            return []
        return [(s.task_id, s.seconds, s.where) for s in self._watchdog.stalls]

    @property
    def stopping(self) -> bool:
        """The batch was told to stop: no new task starts; results of failures that
        come after are not recorded (the CLIs may have got the same Ctrl-C)."""
        return self._state is BatchState.STOPPING

    def _advance(self, new: BatchState) -> None:
        """The one transition function of `BatchState`."""
        if new not in _TRANSITIONS[self._state]:
            raise BatchError(f"a batch cannot go from {self._state.value} to {new.value}")
        self._state = new

    def _fail(self, error: BaseException, *, stop: bool = True) -> None:
        """Record why the batch fails (the first reason wins) and, with `stop`, stop it.

        Args:
            error: A `BatchError` (or a `KeyboardInterrupt` or `SystemExit`).
            stop: Cancel the running sessions too (a bad task only stops the feeding:
                the running ones finish).
        """
        if self._error is None:
            self._error = error
        if stop:
            self.stop()

    def stop(self) -> None:
        """Stop the batch: start no more tasks, cancel the running ones.

        Iteration then ends once the sessions have ended (without an error), and the
        batch ends `BatchState.STOPPED`. A task that fails after this (its CLI got the
        same Ctrl-C, say) is not recorded: it was interrupted, not failed, and a
        re-run runs it again. Safe to call from anywhere, any number of times.
        """
        if self._state in (BatchState.NEW, BatchState.RUNNING):
            self._advance(BatchState.STOPPING)
        if self._scope is not None:
            self._scope.cancel()
        if self._stop_deadline == float("inf") and self._host is not None:
            self._stop_deadline = anyio.current_time() + _CLOSE_SECONDS
            if self._waiting is not None:
                self._waiting.deadline = self._stop_deadline

    # ----------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> BatchRun:
        """Start the driver task, which feeds the tasks to the executor."""
        if self._host is not None or self._state not in (BatchState.NEW, BatchState.STOPPING):
            raise BatchError("a batch runs once: call run_batch() again to continue it")
        if self._state is BatchState.NEW:
            self._advance(BatchState.RUNNING)
        send, receive = anyio.create_memory_object_stream[BatchResult](self._concurrency)
        self._receive = receive
        self._host = TaskHost("ccwire batch")
        tg = await self._host.start()
        with self._tracing.started():  # the batch's span: every task's parent
            tg.start_soon(self._drive, send)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Stop what still runs (if anything), wait for it (bounded, shielded), close the
        results file, settle the outcome, and raise a failure the block did not see."""
        if not self._all_done:
            self.stop()  # left early: break, an exception, a cancellation
        host, self._host = self._host, None
        if host is not None:  # (waited for already, if iteration gave up on the tasks)
            await host.aclose(1.0 if self._abandoned else _CLOSE_SECONDS)
        if self._receive is not None:
            self._receive.close()
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError as error:  # Parquet: the journal keeps every result
                self._fail(ResultsWriteError(str(self._writer.path), error), stop=False)
        self._tracing.end(submitted=self.submitted, skipped=len(self.skipped),
                          failure=exc or self._error, budget=self.budget,
                          stopped=self._state is BatchState.STOPPING)  # fmt: skip
        if self._state is BatchState.RUNNING and self.left_by_budget():
            self._advance(BatchState.STOPPING)  # ...then stopped: the rest run next time
        if self._error is not None:
            self._advance(BatchState.FAILED)
        elif self._state is BatchState.RUNNING:
            self._advance(BatchState.COMPLETED)
        else:
            self._advance(BatchState.STOPPED)
        if exc is None and self._error is not None:
            raise self._error
        return None

    async def _drive(self, send: MemoryObjectSendStream[BatchResult]) -> None:
        """The driver: feeds the executor in its own scope, which `stop()` cancels; any
        failure becomes `error`, nothing escapes into the host."""
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._state is BatchState.STOPPING:
                    scope.cancel()  # stopped before it started
                async with send:
                    if self._executor == "ray":
                        from .ray_process import feed_ray_process

                        await feed_ray_process(self, send)
                    else:
                        await self._feed_local(send)
                    self._all_done = not scope.cancel_called
        except anyio.get_cancelled_exc_class():
            raise  # the host closes: leaving the block early
        except BaseException as exc:
            self._fail(_as_batch_error(exc))

    def __aiter__(self) -> AsyncIterator[BatchResult]:
        """Results in the order tasks finish."""
        if self._receive is None:
            raise BatchError("iterate a batch inside `async with run_batch(...) as results:`")
        return self._results()

    async def _results(self) -> AsyncIterator[BatchResult]:
        """The results; once the batch is stopped, waited for at most `_CLOSE_SECONDS`
        (a task function that ignores its cancellation must not hold the caller)."""
        receive = self._receive
        assert receive is not None
        while True:
            with anyio.CancelScope(deadline=self._stop_deadline) as waiting:
                self._waiting = waiting
                try:
                    result = await receive.receive()
                except anyio.EndOfStream:
                    break
                finally:
                    self._waiting = None
            if waiting.cancelled_caught:
                self._give_up()
                break
            yield result
        if self._error is not None:
            raise self._error

    def _give_up(self) -> None:
        """The stopped batch's tasks outlived their `_CLOSE_SECONDS`: their results are
        no longer waited for, and the batch fails, saying so."""
        self._abandoned = True
        self._fail(
            BatchError(
                f"the batch was stopped, but its tasks had not ended {_CLOSE_SECONDS:g} s "
                "later (a task function that ignores cancellation?): no longer waited for"
            ),
            stop=False,
        )

    async def collect(self) -> list[BatchResult]:
        """Every result (after all tasks finished), in finishing order."""
        return [r async for r in self]

    # ----------------------------------------------------------------- feeding

    async def next_tasks(self) -> AsyncGenerator[BatchTask, None]:
        """The tasks still to run: validated, deduplicated, finished ones skipped.

        A malformed task or a duplicate id stops the feeding; tasks already running
        finish, then iterating the results raises the error.
        """
        try:
            async for raw in _aiter(self._tasks):
                task = self._admit(raw)
                if task.id in self._skip:
                    self.skipped.append(task.id)
                    continue
                if self.over_budget():
                    return
                yield task
        except BatchInputError as exc:
            self._fail(exc, stop=False)
        except Exception as exc:
            self._fail(BatchInputError(f"the task iterable raised {exc!r}"), stop=False)

    def _admit(self, raw: TaskLike) -> BatchTask:
        task = coerce_task(raw)
        if task.id in self._seen:
            raise DuplicateTaskIdError(task.id)
        self._seen.add(task.id)
        if task.timeout is None and self._task_timeout is not None:  # the batch's limit
            task = dataclasses.replace(task, timeout=self._task_timeout)
        return task

    def local_options(self) -> ClaudeAgentOptions:
        """The batch options with the referenced tools and hooks resolved here."""
        opts = self._options
        if self._tools:
            servers = opts.mcp_servers
            if not isinstance(servers, dict):
                raise BatchConfigError("tools= needs options.mcp_servers to be a dict")
            opts = dataclasses.replace(opts, mcp_servers={**servers, **resolve_tools(self._tools)})
        if self._hooks is not None:
            opts = dataclasses.replace(opts, hooks=resolve_hooks(self._hooks))
        if self._spawn is not None:
            spawner = resolve_spawner(self._spawn)
            opts = dataclasses.replace(opts, spawn_claude_code_process=spawner)
        return opts

    async def finish(self, send: MemoryObjectSendStream[BatchResult], result: BatchResult) -> None:
        """Record `result` (`record`), then hand it to the reader."""
        if self.record(result):
            await send.send(result)

    def record(self, result: BatchResult) -> bool:
        """Record `result` (results file first) and report it; True when it is to be
        handed to the reader.

        A result that cannot be written fails the batch with `ResultsWriteError` and
        stops it: it is neither reported nor yielded, and the task runs again next time.
        """
        if self.stopping and not result.ok:
            return False
        if self._writer is not None:
            try:
                self._writer.write(result)
            except OSError as exc:
                self._fail(ResultsWriteError(str(self._writer.lines_path), exc))
                return False
        self._recorded += 1
        interrupt = self.budget is not None and self.budget.charge(result)
        emit(self._events, BatchEvent("finished", result.id, result.attempts, result=result))
        if interrupt:  # an `interrupt` budget is spent: cancel the running tasks
            self.interrupted = True
            for scope in self._running:
                scope.cancel()
        return True

    def note_export(self, export: dict[str, Any]) -> None:
        """A Ray worker's report of the export after a task (`telemetry.take_export`):
        count its spans that were not exported; warn once per worker."""
        if export.get("exported"):
            return
        self.spans_unexported += int(export.get("spans") or 0)
        worker = int(export.get("worker") or 0)
        if export.get("first_failure") and worker not in self._export_failed:
            self._export_failed.add(worker)
            logger.warning(
                "ccwire: Ray worker %d could not export its spans within %g s (is the OTLP "
                "endpoint up, and reachable from the workers?): it no longer waits for it, "
                "and its spans are dropped unless it comes back",
                worker, float(export.get("waited_s") or 0),
            )  # fmt: skip

    def over_budget(self) -> bool:
        """True once the batch's budget is spent: no task may start."""
        return self.budget is not None and self.budget.exhausted

    def left_by_budget(self) -> bool:
        """True when the budget is spent and a task it let start, or read and then
        held back, has no result (not run, or cancelled by an ``interrupt`` budget)."""
        return self.over_budget() and len(self._seen) - len(self.skipped) > self._recorded

    def budget_room(self, running: int) -> bool:
        """Whether the budget lets a task start while ``running`` run (`CostBudget.room`:
        else wait for one to end)."""
        return self.budget is None or self.budget.room(running)

    def budget_cap(self, task_id: str, running: int) -> float | None:
        """The ``max_budget_usd`` cap of task `task_id` starting while ``running`` run
        (`CostBudget.task_cap`, or the options' own when smaller), set aside for it
        (`CostBudget.reserve`); `None` without a budget, or with spares (a spare,
        booted before, cannot take a cap: a capped session would start cold)."""
        if self.budget is None or self._spares:
            return None
        slots = max(1, self._concurrency - running)
        return self.budget.cap_for(task_id, running, slots, self._options.max_budget_usd)

    async def _feed_local(self, send: MemoryObjectSendStream[BatchResult]) -> None:
        options = self.local_options()
        slots = anyio.Semaphore(self._concurrency)
        self._ended = anyio.Event()
        spares = SparePool(options, size=self._spares) if self._spares else None
        async with (  # the pool's spares end after every session has
            LoopWatchdog().running() as self._watchdog,
            spares or contextlib.nullcontext() as pool,
            anyio.create_task_group() as tg,
            contextlib.aclosing(self.next_tasks()) as tasks,
        ):
            async for task in tasks:
                await slots.acquire()
                while not self.over_budget() and not self.budget_room(self._in_flight):
                    await self._ended.wait()  # what the running tasks cost: wait for one
                if self.over_budget():  # spent while this task waited
                    slots.release()
                    continue
                opts = capped_options(options, self.budget_cap(task.id, self._in_flight))
                self.submitted += 1
                self._in_flight += 1
                tg.start_soon(self._work, task, opts, slots, send.clone(), pool, self._watchdog)
        if tg.cancel_scope.cancel_called:  # by a task that ended cancelled, by no scope of ours
            raise BatchError(
                "a task ended cancelled though nothing cancelled the batch (a callback or a "
                "task function cancelled the asyncio task it ran in), which stopped the "
                "batch; the tasks without a result run when it is run again"
            )

    async def _work(
        self,
        task: BatchTask,
        options: ClaudeAgentOptions,
        slots: anyio.Semaphore,
        send: MemoryObjectSendStream[BatchResult],
        pool: SparePool | None = None,
        watchdog: LoopWatchdog | None = None,
    ) -> None:
        async with send:
            scope = anyio.CancelScope()  # cancelled when the budget interrupts
            try:
                with scope:
                    self._running.add(scope)
                    result = await run_traced(task, options, self._policy, events=self._events,
                                              rng=self._rng, pool=pool,
                                              watchdog=watchdog)  # fmt: skip
                self._running.discard(scope)
                if not scope.cancelled_caught:  # else not recorded: it runs again next time
                    await self.finish(send, result)
            except TaskAborted as abort:  # its KeyboardInterrupt or SystemExit: not recorded
                self._fail(abort.exception)  # the batch stops, then raises it as it is
            finally:
                self._running.discard(scope)
                if self.budget is not None:  # cancelled: what it may spend is free again
                    self.budget.release(task.id)
                self._in_flight -= 1
                self._ended.set()  # a feeder waiting for the budget looks again
                self._ended = anyio.Event()
                slots.release()


def _as_batch_error(exc: BaseException) -> BaseException:
    """What the driver's failure is to the caller: a `KeyboardInterrupt` as it is, a
    `BatchError` as it is (the first in an exception group), anything else wrapped."""
    found = leaves(exc)
    for wanted in (KeyboardInterrupt, BatchError):
        for leaf in found:
            if isinstance(leaf, wanted):
                return leaf
    error = BatchError(f"the batch stopped on an unexpected error: {found[0]!r}")
    error.__cause__ = exc
    return error


async def _aiter(tasks: Iterable[TaskLike] | AsyncIterable[TaskLike]) -> AsyncIterator[TaskLike]:
    if isinstance(tasks, AsyncIterable):
        async for item in tasks:
            yield item
    else:
        for item in tasks:
            yield item
