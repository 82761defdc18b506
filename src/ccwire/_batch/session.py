"""One task end to end: its session(s), retries with backoff, and its `BatchResult`."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._conversation.client import ClaudeSDKClient
from .._conversation.options import ClaudeAgentOptions
from .._conversation.spare_pool import SparePool
from .._core.cancel import is_cancellation, no_scope_cancelled, raised_by_callback
from .._core.errors import CLIConnectionError, CLINotFoundError, ProcessError
from .._core.groups import leaves
from .._core.loops import asyncio_task_cancelling, asyncio_uncancel
from .._core.redact import redact_text
from .._wire.cost import CostMeter
from .._wire.messages import AssistantMessage, ResultMessage, SystemMessage, ToolUseBlock
from .results import (
    STDERR_TAIL_CHARS,
    STDERR_TAIL_LINES,
    BatchResult,
    ErrorKind,
    RetryPolicy,
    api_error_retryable,
)
from .tasks import BatchTask
from .watchdog import LoopWatchdog, blocking_text

__all__ = [
    "Attempt",
    "BatchEvent",
    "Confirm",
    "EventSink",
    "Progress",
    "TaskAborted",
    "run_task",
    "stderr_tail",
]

logger = logging.getLogger("ccwire.batch")

# how long a turn cut short by its task's time limit gets to stop when interrupted,
# before its CLI is ended all the same
_STOP_TURN_SECONDS = 3.0


@dataclass(frozen=True)
class BatchEvent:
    """Progress of a batch, for displays: a task started, was retried, or finished.

    Attributes:
        kind: ``started``, ``retry`` or ``finished``.
        task_id: The task.
        attempt: The attempt number (1-based).
        delay: Seconds until the retry (``retry`` only).
        reason: Why the attempt failed (``retry`` only).
        result: The result (``finished`` only).
    """

    kind: str
    task_id: str
    attempt: int = 1
    delay: float = 0.0
    reason: str | None = None
    result: BatchResult | None = None


EventSink = Callable[[BatchEvent], None]
"""Receives `BatchEvent`s; an exception it raises is logged and ignored."""


def emit(sink: EventSink | None, event: BatchEvent) -> None:
    """Deliver `event` to `sink`; its failure never reaches the batch.

    A cancellation exception it raises is its failure too: a synchronous call cannot
    be cancelled. (Raised on, it ended the batch's task group quietly: every task
    unrun, and the batch said it had completed.) `KeyboardInterrupt` and `SystemExit`
    go on.
    """
    if sink is None:
        return
    try:
        sink(event)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        logger.exception("batch event callback failed on %s", event.kind)


def stderr_tail(text: str | None) -> str | None:
    """The end of a CLI's stderr as a result keeps it: bounded, secrets masked.

    Args:
        text: What the CLI wrote to stderr (the transport keeps its last 64 KiB).

    Returns:
        At most the last `STDERR_TAIL_LINES` non-blank lines and `STDERR_TAIL_CHARS`
        characters, masked; `None` when there is nothing.
    """
    if not text or not text.strip():
        return None
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    tail = "\n".join(lines[-STDERR_TAIL_LINES:])[-STDERR_TAIL_CHARS:]
    return redact_text(tail)


@dataclass
class Attempt:
    """What one session of a task produced (mutable while it runs).

    Attributes:
        session_id: From the CLI's first message.
        acted: The session may have acted outside itself: the model called a tool,
            or a task function started (its own code may do anything).
        on_change: Called with the attempt when `session_id` or `acted` changes.
        confirm: Waits (bounded) until whoever `on_change` reports to has heard that
            the session acted, and says whether it has (the Ray driver's
            acknowledgement); `report_acted` calls it before anything acts.
        confirmed: What `confirm` said (`None` before it was asked).
        started: The CLI answered the handshake.
        result: The last `ResultMessage`.
        assistant_error: The ``error`` field of the last assistant message with one.
        tool_calls: Tool calls made by the model.
        output: What a task function returned.
        error: What went wrong, if anything.
        error_kind: Its category.
        retryable: Whether another attempt may succeed.
        returned: The task function returned (without raising).
        exit_code: The CLI's exit status, when it ended the session with an error.
        stderr: The end of the CLI's stderr then (see `stderr_tail`).
        settled: The session did its work (the task function returned or raised, or
            the prompt's turn ended); only the end of its CLI was left.
        mid_turn: When the session's work ended, a prompt was unanswered or a turn
            unfinished, and no result came after (what that turn spent is unknown).
        cut: The task's time limit stopped this attempt's session.
        abort: The `KeyboardInterrupt` or `SystemExit` the task function raised
            (alone or in an exception group): `run_task` raises `TaskAborted` with it.
        meter: What its CLI process spent (not what it restored on ``--resume``).
    """

    session_id: str | None = None
    acted: bool = False
    on_change: Callable[[Attempt], None] | None = field(default=None, repr=False)
    confirm: Callable[[Attempt], Awaitable[bool]] | None = field(default=None, repr=False)
    confirmed: bool | None = None
    started: bool = False
    result: ResultMessage | None = None
    assistant_error: str | None = None
    tool_calls: int = 0
    output: Any = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    retryable: bool = False
    returned: bool = False
    exit_code: int | None = None
    stderr: str | None = None
    settled: bool = False
    mid_turn: bool = False
    cut: bool = False
    abort: BaseException | None = field(default=None, repr=False)
    meter: CostMeter = field(default_factory=CostMeter, repr=False)

    @property
    def cost_known(self) -> bool:
        """Whether what this attempt spent is known: its CLI did not crash, nor was it
        stopped by the time limit in the middle of a turn."""
        return self.error_kind != "crash" and not (self.cut and self.mid_turn)

    def time_out(self, limit: float, *, cut: bool) -> None:
        """Record that the task's time limit passed during this attempt (or after it).

        Args:
            limit: The limit, in seconds.
            cut: The limit stopped this attempt's session (not the backoff after it).
        """
        self.error = f"the task did not finish within its time limit of {limit:g} s"
        self.error_kind, self.retryable, self.cut = "timeout", False, cut
        self.exit_code = self.stderr = None

    def observe(self, message: object) -> None:
        """Count what the session says (a connection observer)."""
        before = (self.session_id, self.acted)
        if isinstance(message, AssistantMessage):
            calls = sum(isinstance(b, ToolUseBlock) for b in message.content)
            if message.parent_tool_use_id is None:
                self.tool_calls += calls
            self.acted = self.acted or calls > 0
            if message.error:
                self.assistant_error = message.error
            self.session_id = self.session_id or message.session_id
        elif isinstance(message, ResultMessage):
            self.result = message
            self.meter.add(message)
            self.mid_turn = False  # the turn a time limit cut ended while its CLI closed
            self.session_id = message.session_id or self.session_id
        elif isinstance(message, SystemMessage) and self.session_id is None:
            sid = message.data.get("session_id")
            self.session_id = sid if isinstance(sid, str) else None
        if (self.session_id, self.acted) != before:
            self.changed()

    async def report_acted(self) -> bool:
        """Mark that the session is about to act, and wait until that is heard.

        Called before a tool runs (the Ray worker's gate) and before a task function
        starts: `acted` is set and reported (`on_change`), then `confirm` is awaited,
        once per attempt. When it says no (no acknowledgement in time), the attempt
        fails for good (``lost``, not retried): what was about to act must not, nor
        anything after it.

        Returns:
            Whether it may act: `confirm` said yes, or there is none.
        """
        if not self.acted:
            self.acted = True
            self.changed()
        if self.confirm is None:
            return True
        if self.confirmed is None:
            self.confirmed = await self.confirm(self)
        if not self.confirmed and self.error is None:
            self.error = (
                "the Ray driver did not acknowledge that the session was about to act "
                "(a tool call, or the task function): it was stopped before acting, and "
                "is not run again"
            )
            self.error_kind, self.retryable = "lost", False
        return bool(self.confirmed)

    def changed(self) -> None:
        """Tell `on_change` (its failure is logged, never raised)."""
        if self.on_change is None:
            return
        try:
            self.on_change(self)
        except Exception:
            logger.exception("batch progress callback failed")

    def judge(self) -> None:
        """Set `error`, `error_kind` and `retryable` from the result (if no error yet)."""
        if self.error is not None:
            return
        res = self.result
        if res is None:
            if not self.returned:  # a task function that returned needs no result message
                self.error, self.error_kind = "the session ended without a result", "crash"
            return
        if not res.is_error:
            return
        raw = res.raw
        status, etype = raw.get("api_error_status"), raw.get("api_error_type")
        is_api = status is not None or raw.get("terminal_reason") == "api_error"
        text = res.result or (res.errors[0] if res.errors else None) or res.subtype
        self.error = text
        self.error_kind = "api" if is_api or self.assistant_error else "model"
        if self.error_kind == "api":
            self.retryable = api_error_retryable(status, etype, self.assistant_error, res.result)


async def run_attempt(
    task: BatchTask,
    options: ClaudeAgentOptions,
    attempt: Attempt | None = None,
    pool: SparePool | None = None,
    clock: anyio.CancelScope | None = None,
    watchdog: LoopWatchdog | None = None,
) -> Attempt:
    """Run one session of `task`; never raises except cancellation.

    Args:
        task: The task.
        options: The session's options (task overrides already applied).
        attempt: The record to fill (a fresh one by default).
        pool: Spare CLIs to start the session on (a cold start without).
        clock: The scope of the task's time limit: when it cancels the session in the
            middle of a turn, the turn is interrupted first (bounded), so that the
            CLI reports what it spent and then exits as soon as its input ends.
        watchdog: The watchdog of the loop it runs on: what blocks the loop inside a
            task function is recorded against the task.

    Returns:
        What the session produced, judged.
    """
    attempt = attempt or Attempt()
    try:
        session = ClaudeSDKClient(options) if pool is None else pool.client(options)
        async with session as client:
            attempt.started = True
            conn = client._connection()
            conn.add_observer(attempt.observe)
            try:
                await _drive(task, client, attempt, watchdog)
                attempt.settled = True  # what follows is the end of its CLI
            except anyio.get_cancelled_exc_class():
                attempt.mid_turn = conn.owes_answer  # a turn cut short: its cost unknown...
                if attempt.mid_turn and clock is not None and clock.cancel_called:
                    attempt.mid_turn = not await _stop_turn(client)  # ...unless it says
                raise
    except anyio.get_cancelled_exc_class():
        raise
    except CLINotFoundError as exc:
        attempt.error, attempt.error_kind = str(exc).splitlines()[0], "config"
    except (CLIConnectionError, ProcessError) as exc:  # could not start, or ended
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, ProcessError):  # the evidence: how it ended, what it said
            attempt.exit_code, attempt.stderr = exc.exit_code, stderr_tail(exc.stderr)
        if attempt.error is None:
            attempt.error = first
            attempt.error_kind = "crash" if attempt.result or attempt.session_id else "start"
            attempt.retryable = attempt.error_kind == "start"
    except Exception as exc:
        if attempt.error is None:
            attempt.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            attempt.error_kind = "crash" if attempt.started else "start"
            attempt.retryable = not attempt.started
    attempt.judge()
    return attempt


async def _stop_turn(client: ClaudeSDKClient) -> bool:
    """Interrupt the turn a time limit cut short and wait for its result (shielded, at
    most `_STOP_TURN_SECONDS`): the CLI then reports what the turn spent, and exits at
    once when the session ends (else it may finish the turn first).

    Returns:
        Whether the turn's result came.
    """
    ended = anyio.Event()

    def watch(message: object) -> None:
        if isinstance(message, ResultMessage):
            ended.set()

    conn = client._connection()
    forget = conn.add_observer(watch)
    try:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_TURN_SECONDS):
            await client.interrupt()
            await ended.wait()
    except Exception as exc:  # the CLI is gone or refused: closing it is what is left
        logger.debug("interrupting a timed-out turn failed: %r", exc)
    finally:
        forget()
    return ended.is_set()


async def _drive(
    task: BatchTask, client: ClaudeSDKClient, attempt: Attempt, watchdog: LoopWatchdog | None
) -> None:
    """The body of a session: the task function, or the prompt and its answer."""
    if task.run is not None:
        if not await attempt.report_acted():  # the function's own code may act from here on
            return
        try:
            running = task.run(client)
            watched = watchdog.watching(running, task.id) if watchdog else contextlib.nullcontext()
            with watched:
                attempt.output = await running
            attempt.returned = True
        except BaseException as exc:
            if _ours_to_propagate(exc):
                raise  # a cancellation of ours (the batch's, or the time limit's)
            attempt.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            attempt.error_kind = "exception"
            if any(isinstance(leaf, (KeyboardInterrupt, SystemExit)) for leaf in leaves(exc)):
                attempt.abort = exc  # the batch stops and raises it (`TaskAborted`)
    else:
        assert task.prompt is not None
        await client.query(task.prompt)
        async for _ in client.receive_response():
            pass


def _ours_to_propagate(exc: BaseException) -> bool:
    """Whether `exc`, raised out of a task function, is a cancellation of ours (the
    batch's scopes, the budget's interrupt, the task's time limit; alone or in an
    exception group) that must propagate, rather than the function's own outcome.

    The batch cancels through its scopes only (a cancelled host's too reaches the
    function so); a cancellation while none of them is cancelled, the asyncio task
    itself cancelled, is the function's own doing (``asyncio.current_task().cancel()``):
    its failure, the request withdrawn. (Propagated, it ended the batch's task group
    quietly: every other task unrun, and the batch said it had completed.)"""
    found = [leaf for leaf in leaves(exc) if is_cancellation(leaf)]
    if not found or raised_by_callback(found[0]):
        return False
    if no_scope_cancelled():
        while asyncio_task_cancelling():
            asyncio_uncancel()
        return False
    return True


class TaskAborted(Exception):
    """A task function raised `KeyboardInterrupt` or `SystemExit` (alone or in an
    exception group): its session was closed, and the batch stops and raises
    `exception` as it is (`BatchRun`). An `Exception`, so that it crosses the batch's
    tasks as a value (asyncio lets these two escape its event loop from any task).

    Attributes:
        exception: What the task function raised.
    """

    def __init__(self, exception: BaseException) -> None:
        super().__init__(f"a task function raised {type(exception).__name__}")
        self.exception = exception


Progress = Callable[[int, Attempt], None]
"""Told ``(attempt number, attempt)`` when an attempt starts and when its session id is
known or it may have acted (the Ray executor reports these to the driver)."""

Confirm = Callable[[int, Attempt], Awaitable[bool]]
"""Awaited with ``(attempt number, attempt)`` once an attempt is about to act (after
`Progress` was told): whether its report was heard (`Attempt.report_acted`)."""


async def run_task(
    task: BatchTask,
    options: ClaudeAgentOptions,
    policy: RetryPolicy,
    *,
    events: EventSink | None = None,
    rng: random.Random | None = None,
    attempts_before: int = 0,
    progress: Progress | None = None,
    confirm: Confirm | None = None,
    pool: SparePool | None = None,
    watchdog: LoopWatchdog | None = None,
) -> BatchResult:
    """Run `task` until it succeeds, fails for good, or runs out of attempts.

    Args:
        task: The task.
        options: The batch options (the task's overrides are applied here).
        policy: The retry policy.
        events: Receives ``started`` and ``retry`` events.
        rng: The random source of the backoff jitter.
        attempts_before: Attempts the task already had elsewhere (a Ray node that was
            lost): they count against `policy` and in the result.
        progress: Told of each attempt's start, session id and first tool call.
        confirm: Awaited before an attempt acts, once `progress` was told (the Ray
            worker waits for the driver's acknowledgement): when it says no, the
            attempt does not act and fails for good (`Attempt.report_acted`).
        pool: Spare CLIs the sessions start on, when the task's options allow it.
        watchdog: The watchdog of the loop it runs on (`LoopWatchdog`).

    Returns:
        The task's result (failures included); only cancellation propagates.

        With a time limit (`BatchTask.timeout`) over all attempts and their backoff:
        once it passes, the running session is cancelled (which ends its CLI, bounded)
        and the result is a ``timeout`` failure, never retried. A cancellation from
        outside (the batch stopped) still propagates as it is. A task function that
        blocks the event loop (synchronous code) cannot be stopped until it yields: a
        ``timeout`` failure then if it held the loop past its limit, even if it
        returned, its error saying how long and where (`BatchResult.blocked_s`).
    """
    began = time.monotonic()
    opts = task.apply(options)
    number = attempts_before
    tried: list[Attempt] = []
    running = False  # an attempt's session runs (not the backoff after it)
    limit = task.timeout
    aborted: BaseException | None = None
    with anyio.CancelScope() as clock:  # only the time limit (`_keep_time`) cancels it
        async with anyio.create_task_group() as keeper:
            if limit is not None:
                keeper.start_soon(_keep_time, clock, limit, task.id, began, watchdog)
            while True:
                number += 1
                emit(events, BatchEvent("started", task.id, attempt=number))
                attempt = Attempt()
                tried.append(attempt)
                if progress is not None:
                    attempt.on_change = functools.partial(progress, number)
                    attempt.changed()
                if confirm is not None:
                    attempt.confirm = functools.partial(confirm, number)
                running = True
                await run_attempt(task, _left_for(opts, tried) or opts, attempt, pool, clock,
                                  watchdog)  # fmt: skip
                running = False
                if attempt.abort is not None:  # its session is closed: the batch stops
                    aborted = attempt.abort
                    break
                if attempt.error is None or not attempt.retryable:
                    break
                if number >= policy.max_attempts or _left_for(opts, tried) is None:
                    break  # no attempt left, or its cap is spent (the next would stop at once)
                delay = policy.delay(number, rng)
                emit(events, BatchEvent("retry", task.id, number, delay=delay,
                                        reason=attempt.error))  # fmt: skip
                await anyio.sleep(delay)
            keeper.cancel_scope.cancel()
    if aborted is not None:  # (raised here: out of the task group, it came in a group)
        raise TaskAborted(aborted)
    if clock.cancel_called and limit is not None:  # the limit passed...
        if running and attempt.settled:  # ...while its CLI was ending: the work was done
            attempt.judge()
        elif running or clock.cancelled_caught:  # ...mid-session, or in a backoff
            attempt.time_out(limit, cut=running)
    blocked = _judge_blocking(task, attempt, began, watchdog)
    res = attempt.result
    cost = sum(a.meter.spent for a in tried)
    cost_known = all(a.cost_known for a in tried)
    return BatchResult(
        id=task.id,
        ok=attempt.error is None,
        session_id=attempt.session_id,
        result=res.result if res is not None else None,
        is_error=attempt.error is not None,
        subtype=res.subtype if res is not None else None,
        num_turns=res.num_turns if res is not None else 0,
        tool_calls=attempt.tool_calls,
        cost_usd=round(cost, 10),
        cost_known=cost_known,
        usage=_token_counts(res.usage if res is not None else None),
        duration_s=round(time.monotonic() - began, 4),
        blocked_s=round(blocked, 4),
        attempts=number,
        error=attempt.error,
        error_kind=attempt.error_kind,
        retryable=attempt.retryable,
        output=attempt.output,
        metadata=dict(task.metadata),
        exit_code=attempt.exit_code if attempt.error is not None else None,
        stderr=attempt.stderr if attempt.error is not None else None,
    )


async def _keep_time(
    clock: anyio.CancelScope,
    limit: float,
    task_id: str,
    began: float,
    watchdog: LoopWatchdog | None,
) -> None:
    """Cancel `clock` once the task's time limit has passed, not counting the time
    other code blocked the event loop (`LoopWatchdog.credit`): a task is not timed out
    because another one held the loop."""
    while True:
        credit = watchdog.credit(task_id, began) if watchdog is not None else 0.0
        left = began + limit + credit - time.monotonic()
        if left <= 0:
            clock.cancel()
            return
        await anyio.sleep(left)


def _left_for(options: ClaudeAgentOptions, tried: list[Attempt]) -> ClaudeAgentOptions | None:
    """The options of a task's next attempt: its ``max_budget_usd`` (a batch budget's
    cap, or the options' own) covers all its attempts, so what the attempts before
    spent is taken off it; `None` when nothing is left of it."""
    cap = options.max_budget_usd
    spent = sum(a.meter.spent for a in tried)
    if cap is None or spent <= 0:
        return options
    if spent >= cap:
        return None
    return dataclasses.replace(options, max_budget_usd=cap - spent)


def _judge_blocking(
    task: BatchTask, attempt: Attempt, began: float, watchdog: LoopWatchdog | None
) -> float:
    """How long `task`'s own code blocked the loop; a task that blocked it past its time
    limit is a ``timeout`` (it could be stopped only where it yielded, or not at all if
    it returned), and a task whose limit passed while others blocked it says so."""
    if watchdog is None:
        return 0.0
    blocked, where = watchdog.blocked(task.id, began)
    limit = task.timeout
    if limit is None:
        return blocked
    if blocked and time.monotonic() - began > limit:
        if attempt.error_kind != "timeout":  # it returned, or failed, once it yielded
            attempt.time_out(limit, cut=False)
        attempt.error = f"{attempt.error}: its function {blocking_text(blocked, where)}"
    elif attempt.error_kind == "timeout":
        others, names = watchdog.others_blocked(task.id, began)
        if others:
            who = f" by task{'s' if len(names) > 1 else ''} {', '.join(map(repr, names))}"
            attempt.error = (
                f"{attempt.error}; meanwhile the event loop was blocked for {others:.1f} s"
                f"{who if names else ''} (not this task's doing: run it again)"
            )
    return blocked


def _token_counts(usage: Mapping[str, Any] | None) -> dict[str, int]:
    """The flat token counts of a usage object (nested details dropped)."""
    if not usage:
        return {}
    return {
        k: int(v)
        for k, v in usage.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
