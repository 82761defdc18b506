"""`run_batch`: many tasks, bounded concurrency, results as they finish, resumable."""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Sequence
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._conversation.options import ClaudeAgentOptions
from .._sessions.stores.protocol import SessionStore
from .budget import BudgetAction, CostBudget
from .errors import BatchConfigError, BatchError, BatchInputError, DuplicateTaskIdError
from .output import ResultsFile, read_results
from .refs import check_reference, resolve_hooks, resolve_tools
from .results import BatchResult, RetryPolicy
from .session import BatchEvent, EventSink, emit
from .tasks import BatchTask, TaskLike, coerce_task
from .telemetry import BatchTracing, run_traced

__all__ = ["DEFAULT_RETRIES", "BatchRun", "Executor", "finished_ids", "run_batch"]

DEFAULT_RETRIES = RetryPolicy()
"""Up to 4 attempts, backoff from 1 s (half of each delay random), at most 60 s."""

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
            ``metadata``), dataclasses with those fields, or async functions taking a
            connected `ClaudeSDKClient`. Consumed lazily: at most `concurrency` tasks
            are held at a time, so the iterable may be huge.
        options: The options every session starts from (task fields override them).
        concurrency: Sessions running at once.
        store: Accepted for the session store of the drop-in API and type-checked;
            this version records results only in `output`.
        executor: ``local`` or ``ray`` (needs ``pip install 'ccwire[ray]'``).
        retries: A `RetryPolicy`, or the number of retries after the first attempt.
            Only rate limits (429), overloads (529) and a CLI that fails to start are
            retried; a model's error result is final.
        output: A results file (JSONL; ``.parquet`` with pyarrow). Each result is
            written before it is yielded, and ids already in it are skipped.
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
            `output` count, so a re-run does not spend it again. Once the recorded
            cost reaches it no task is started; tasks not run stay out of `output`, so
            running again (with a larger budget or none) runs exactly them.
        on_budget: What happens to the tasks running when the budget is spent: they
            ``finish`` (the cost may pass the budget by theirs), or they are cancelled
            (``interrupt``; not recorded, so they run again next time).

    Returns:
        A `BatchRun`: use it with ``async with`` and iterate it.

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
    if isinstance(retries, int):
        if retries < 0:
            raise BatchConfigError("retries must be >= 0")
        retries = RetryPolicy(max_attempts=retries + 1)
    for ref in tools:
        check_reference(ref, "tools")
    if hooks is not None:
        check_reference(hooks, "hooks")
    skip = finished_ids(output, rerun_failed=rerun_failed) if output is not None else set()
    budget = None
    if max_cost_usd is not None:
        prior = sum(r.cost_usd for r in read_results(output)) if output is not None else 0.0
        budget = CostBudget(max_cost_usd, on_budget, spent=prior)
    writer = ResultsFile(output) if output is not None else None
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
        events=events,
        ray_options={
            "address": ray_address,
            "num_cpus": num_cpus,
            "memory": memory,
            "per_actor": sessions_per_actor,
        },
        rng=random.Random(seed),
        budget=budget,
    )


class BatchRun:
    """A running batch (made by `run_batch`): an async context manager to iterate.

    Leaving the ``async with`` block early cancels the running sessions (their CLIs
    are ended) and closes the results file; results already written stay, so the same
    call continues where this one stopped.

    Attributes:
        skipped: Ids skipped because the results file already had them.
        submitted: Tasks started so far.
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
        self._tracing = BatchTracing(options, executor=executor, concurrency=concurrency)
        self._events = self._tracing.watch(events)
        self.budget = budget
        self.interrupted = False  # by the budget: the running tasks were cancelled
        self._running: set[anyio.CancelScope] = set()  # of the local tasks running
        self._ray_options = ray_options
        self._rng = rng
        self._seen: set[str] = set()
        self._stopping = False
        self._failure: BaseException | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._receive: MemoryObjectReceiveStream[BatchResult] | None = None
        self.skipped: list[str] = []
        self.submitted = 0

    async def __aenter__(self) -> BatchRun:
        """Start feeding tasks to the executor."""
        send, receive = anyio.create_memory_object_stream[BatchResult](self._concurrency)
        self._receive = receive
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        with self._tracing.started():  # the batch's span: every task's parent
            if self._executor == "ray":
                from .ray_executor import feed_ray

                tg.start_soon(feed_ray, self, send)
            else:
                tg.start_soon(self._feed_local, send)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Cancel what still runs, close the results file, raise a feeding failure."""
        tg, self._tg = self._tg, None
        assert tg is not None
        tg.cancel_scope.cancel()
        try:
            # the body's own exception (or cancellation) propagates as it is, unwrapped
            await tg.__aexit__(None, None, None)
        finally:
            if self._receive is not None:
                self._receive.close()
            if self._writer is not None:
                self._writer.close()
            self._tracing.end(submitted=self.submitted, skipped=len(self.skipped),
                              failure=exc or self._failure)  # fmt: skip
        if exc is None and self._failure is not None:
            raise self._failure
        return None

    def stop(self) -> None:
        """Stop the batch: start no more tasks, cancel the running ones.

        A task that fails after this (its CLI got the same Ctrl-C, say) is not
        recorded: it was interrupted, not failed, and a re-run runs it again.
        """
        self._stopping = True
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    def __aiter__(self) -> AsyncIterator[BatchResult]:
        """Results in the order tasks finish."""
        if self._receive is None:
            raise BatchError("iterate a batch inside `async with run_batch(...) as results:`")
        return self._results()

    async def _results(self) -> AsyncIterator[BatchResult]:
        assert self._receive is not None
        async for result in self._receive:
            yield result
        if self._failure is not None:
            raise self._failure

    async def collect(self) -> list[BatchResult]:
        """Every result (after all tasks finished), in finishing order."""
        return [r async for r in self]

    # ----------------------------------------------------------------- feeding

    async def next_tasks(self) -> AsyncIterator[BatchTask]:
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
            self._failure = exc
        except Exception as exc:
            self._failure = BatchInputError(f"the task iterable raised {exc!r}")

    def _admit(self, raw: TaskLike) -> BatchTask:
        task = coerce_task(raw)
        if task.id in self._seen:
            raise DuplicateTaskIdError(task.id)
        self._seen.add(task.id)
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
        return opts

    async def finish(self, send: MemoryObjectSendStream[BatchResult], result: BatchResult) -> None:
        """Record `result` (results file first), report it, and hand it to the reader."""
        if self._stopping and not result.ok:
            return
        if self._writer is not None:
            try:
                self._writer.write(result)
            except OSError as exc:  # disk full...: stop; unwritten tasks run again next time
                if self._failure is None:
                    self._failure = BatchError(f"cannot write the results file: {exc}")
                self.stop()
                return
        interrupt = self.budget is not None and self.budget.charge(result)
        emit(self._events, BatchEvent("finished", result.id, result.attempts, result=result))
        if interrupt:  # an `interrupt` budget is spent: cancel the running tasks
            self.interrupted = True
            for scope in self._running:
                scope.cancel()
        await send.send(result)

    def over_budget(self) -> bool:
        """True once the batch's budget is spent: no task may start."""
        return self.budget is not None and self.budget.exhausted

    async def _feed_local(self, send: MemoryObjectSendStream[BatchResult]) -> None:
        async with send:
            try:
                options = self.local_options()
            except BatchError as exc:
                self._failure = exc
                return
            slots = anyio.Semaphore(self._concurrency)
            assert self._tg is not None
            tg = self._tg
            async for task in self.next_tasks():
                await slots.acquire()
                if self.over_budget():  # spent while this task waited for a slot
                    slots.release()
                    continue
                self.submitted += 1
                tg.start_soon(self._work, task, options, slots, send.clone())

    async def _work(
        self,
        task: BatchTask,
        options: ClaudeAgentOptions,
        slots: anyio.Semaphore,
        send: MemoryObjectSendStream[BatchResult],
    ) -> None:
        async with send:
            try:
                with anyio.CancelScope() as scope:  # cancelled when the budget interrupts
                    self._running.add(scope)
                    result = await run_traced(task, options, self._policy, events=self._events,
                                              rng=self._rng)  # fmt: skip
                self._running.discard(scope)
                if not scope.cancelled_caught:  # else not recorded: it runs again next time
                    await self.finish(send, result)
            finally:
                slots.release()


async def _aiter(tasks: Iterable[TaskLike] | AsyncIterable[TaskLike]) -> AsyncIterator[TaskLike]:
    if isinstance(tasks, AsyncIterable):
        async for item in tasks:
            yield item
    else:
        for item in tasks:
            yield item
