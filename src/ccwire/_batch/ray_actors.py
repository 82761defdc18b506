"""The worker side of the Ray executor: an async actor that runs sessions of one batch.

`SessionHost` does not import Ray: the driver wraps it with ``ray.remote`` (in
``ray_executor``), and Ray runs it as an *async actor*, its coroutines on the actor's
own asyncio event loop, up to ``max_concurrency`` at once. Each call of `run` is one
batch task (the same retry loop as the local executor, its own CLI subprocess), a
streaming generator: it yields the task's progress (the attempt, its session id,
whether the session may have acted) as it changes, then the result as JSON. Ray
sends each small item to the driver as it is yielded, so the driver knows where a
task was even when the actor's node is lost before the result. The tools and hooks
travel by reference and are imported once per actor, on its first task.

Nothing acts before the driver knows: every session's tool call passes a
``PreToolUse`` hook of the actor's (`ActGate`, before the user's own ``PreToolUse``
hooks), and a task function's start waits the same way. The first one of an attempt
reports that the session acted and holds the action until the driver has
acknowledged that report (it calls `SessionHost.ack` once it has recorded it), at
most `ACK_SECONDS`; without the acknowledgement the action is denied and the attempt
fails as ``lost``, not retried. So an actor lost at any moment is never the reason a
tool runs twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import random
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio

from .._callbacks.hooks import as_matcher
from .._conversation.options import ClaudeAgentOptions
from .._conversation.spare_pool import SparePool
from .._core.errors import OptionsError
from .budget import capped_options
from .errors import BatchConfigError
from .refs import resolve_hooks, resolve_spawner, resolve_tools
from .results import BatchResult, RetryPolicy
from .session import Attempt
from .tasks import BatchTask
from .telemetry import run_traced, take_export
from .watchdog import LoopWatchdog

__all__ = ["ACK_SECONDS", "ActGate", "SessionHost", "worker_options"]

WHERE = "on the Ray worker"
# after a cancelled task, how long its session gets to end its CLI (a session's close
# waits up to 5 s for the CLI to exit once its input ends, then 5 s after SIGTERM)
_SETTLE_SECONDS = 12.0
ACK_SECONDS = 60.0
"""How long a session's first action (a tool call, or its task function) waits for the
driver to acknowledge that the session acted; without it, the action is denied and
the task fails as ``lost``."""
_HOOK_GRACE = 10.0  # the gate's hook timeout, past ACK_SECONDS (the CLI would withdraw it)


class ActGate:
    """Holds each session's first action until the driver has heard that it acted.

    Attributes:
        sessions: The attempt of each session running here, by session id.
        heard: Set once the driver acknowledged a report, by its key.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, Attempt] = {}
        self.heard: dict[str, asyncio.Event] = {}

    async def hook(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        """The ``PreToolUse`` hook: the tool runs once the driver heard the session acted.

        Returns:
            Nothing (the tool may run), or a deny that also stops the session.
        """
        from .._wire.hook_output import HookOutput, PreToolUseOutput

        sid = data.get("session_id") if isinstance(data, Mapping) else None
        attempt = self.sessions.get(sid) if isinstance(sid, str) else None
        if attempt is not None and await attempt.report_acted():
            return None
        reason = attempt.error if attempt is not None else None
        reason = reason or f"ccwire: session {sid} is not a batch task of this Ray worker"
        deny = PreToolUseOutput(permission_decision="deny", permission_decision_reason=reason)
        return HookOutput(continue_=False, stop_reason=reason, hook_specific_output=deny)

    def hooks(self, user: Mapping[Any, Any] | None) -> dict[Any, Any]:
        """The sessions' hooks: this gate first, then `user`'s, whose ``PreToolUse``
        callbacks run only once the gate let the tool through (the CLI may call the
        callbacks of one event concurrently)."""
        from .._wire.hook_types import HookMatcher

        hooks = dict(user or {})
        theirs = [as_matcher("PreToolUse", entry) for entry in hooks.get("PreToolUse") or ()]
        hooks["PreToolUse"] = [
            HookMatcher(hooks=[self.hook], timeout=ACK_SECONDS + _HOOK_GRACE),
            *(dataclasses.replace(m, hooks=[self._behind(cb) for cb in m.hooks]) for m in theirs),
        ]
        return hooks

    def _behind(self, callback: Any) -> Any:
        """`callback`, run once the gate let the tool through (else it says nothing:
        the gate's own answer denies the tool)."""

        @functools.wraps(callback)
        async def behind(data: Any, tool_use_id: str | None, context: Any) -> Any:
            if await self.hook(data, tool_use_id, context) is not None:
                return None
            return await callback(data, tool_use_id, context)

        return behind


class _Reports:
    """One task's progress reports for the driver, and its acknowledgements (`ActGate`)."""

    def __init__(self, gate: ActGate, changes: list[dict[str, Any]], changed: asyncio.Event):
        self._gate, self._changes, self._changed = gate, changes, changed
        self._key = uuid.uuid4().hex
        self._sessions: list[str] = []  # this task's, in the gate

    def progress(self, number: int, attempt: Attempt) -> None:
        """Queue a report (`Progress`); once it acted, with the key to acknowledge."""
        change = {"attempt": number, "session_id": attempt.session_id,
                  "acted": attempt.acted}  # fmt: skip
        sid = attempt.session_id
        if sid is not None and sid not in self._gate.sessions:
            self._gate.sessions[sid] = attempt
            self._sessions.append(sid)
        if attempt.acted:
            change["ack"] = key = f"{self._key}:{number}"
            self._gate.heard.setdefault(key, asyncio.Event())
        self._changes.append(change)
        self._changed.set()

    async def confirm(self, number: int, attempt: Attempt) -> bool:
        """Wait (at most `ACK_SECONDS`) for the driver's acknowledgement (`Confirm`)."""
        heard = self._gate.heard.get(f"{self._key}:{number}")
        if heard is None:  # never reported (`progress` runs first)
            return False
        with anyio.move_on_after(ACK_SECONDS):
            await heard.wait()
        return heard.is_set()

    def close(self) -> None:
        """The task is over: forget its sessions and keys."""
        for sid in self._sessions:
            self._gate.sessions.pop(sid, None)
        for key in [k for k in self._gate.heard if k.startswith(self._key)]:
            del self._gate.heard[key]


def worker_options(shared: dict[str, Any], gate: ActGate | None = None) -> ClaudeAgentOptions:
    """The batch options with the referenced tools and hooks imported here.

    Args:
        shared: ``options`` (portable), ``tools`` and ``hooks`` (references).
        gate: The actor's gate, whose hook comes before the referenced hooks.

    Returns:
        The options every session of this worker starts from.

    Raises:
        BatchConfigError: A reference cannot be imported on this worker, or there
            are tools to add to `mcp_servers` that is not a dict (a config file).
    """
    options: ClaudeAgentOptions = shared["options"]
    servers = resolve_tools(shared["tools"], where=WHERE)
    hooks = resolve_hooks(shared["hooks"], where=WHERE)
    spawner = resolve_spawner(shared.get("spawn"), where=WHERE)
    if servers:
        base = options.mcp_servers
        if not isinstance(base, dict):  # as the local executor: never drop the user's servers
            raise BatchConfigError("tools= needs options.mcp_servers to be a dict")
        options = dataclasses.replace(options, mcp_servers={**base, **servers})
    if gate is not None:
        try:
            hooks = gate.hooks(hooks)
        except OptionsError as exc:  # as a session would have refused them
            raise BatchConfigError(f"hooks: {exc}") from exc
    if hooks is not None:
        options = dataclasses.replace(options, hooks=hooks)
    if spawner is not None:
        options = dataclasses.replace(options, spawn_claude_code_process=spawner)
    return options


class SessionHost:
    """The body of one Ray actor: sessions of one batch, several at once.

    Args:
        shared: What every task of the batch shares: ``options`` (without
            in-process objects), ``policy`` (the `RetryPolicy`), ``tools`` and
            ``hooks`` (references, imported on the first task).
    """

    def __init__(self, shared: dict[str, Any]) -> None:
        self._shared = shared
        self._policy: RetryPolicy = shared["policy"]
        self._options: ClaudeAgentOptions | BatchConfigError | None = None
        self._jobs: set[asyncio.Future[BatchResult]] = set()
        self._spares: int = shared.get("spares", 0)
        self._pool: SparePool | None = None  # this actor's spare CLIs (with spares=)
        # what blocks this actor's loop (started by the first task; its thread and its
        # beat end with the actor's process, which the driver kills)
        self._watchdog: LoopWatchdog | None = None
        self._beating: asyncio.Future[None] | None = None
        self._gate = ActGate()

    async def ready(self) -> int:
        """Answer once the actor is up (the driver submits tasks only then).

        Returns:
            The actor's process id.
        """
        return os.getpid()

    async def run(
        self,
        task: BatchTask,
        seed: int,
        attempts_before: int = 0,
        trace: dict[str, str] | None = None,
        cap: float | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Run one task with retries on this actor's event loop.

        Ray calls it as a streaming generator. `stop` (or ``ray.cancel``) cancels
        the session, which ends its CLI.

        Args:
            task: The task.
            seed: Seed of this task's backoff jitter.
            attempts_before: Attempts the task already had on actors that were lost.
            trace: The batch span's context (W3C headers), with telemetry.
            cap: The session's ``max_budget_usd`` under the batch's budget
                (`CostBudget.task_cap`; the options' own when smaller).

        Yields:
            ``{"progress": {"attempt": n, "session_id": ..., "acted": ...}}`` whenever
            one of these changes (once it acted, with ``"ack"``: the key the driver
            passes to `ack` once it has recorded it), then
            ``{"result": BatchResult.to_json()}`` (failures included), with
            ``"export"`` (`take_export`) when the batch has telemetry.
        """
        if self._options is None:
            try:
                self._options = worker_options(self._shared, self._gate)
            except BatchConfigError as exc:  # every task of this actor fails the same way
                self._options = exc
        if isinstance(self._options, BatchConfigError):
            failed = BatchResult(id=task.id, ok=False, is_error=True, error=str(self._options),
                                 error_kind="config", metadata=dict(task.metadata))  # fmt: skip
            yield {"result": failed.to_json()}
            return
        if self._watchdog is None:
            self._watchdog = LoopWatchdog()
            self._beating = asyncio.ensure_future(self._watchdog.beat_forever())
        if self._spares and self._pool is None:  # started by its first take()
            self._pool = SparePool(self._options, size=self._spares)
        # Ray runs async actors on asyncio: the task runs beside this generator, which
        # forwards its progress; it never outlives the generator (cancelled, bounded)
        changes: list[dict[str, Any]] = []
        changed = asyncio.Event()
        reports = _Reports(self._gate, changes, changed)
        job = asyncio.ensure_future(
            run_traced(
                task,
                capped_options(self._options, cap),
                self._policy,
                rng=random.Random(seed),
                attempts_before=attempts_before,
                progress=reports.progress,
                confirm=reports.confirm,
                parent=trace,
                worker=True,
                pool=self._pool,
                watchdog=self._watchdog,
            )
        )
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)
        waiter: asyncio.Future[Any] | None = None
        try:
            while True:
                while changes:
                    yield {"progress": changes.pop(0)}
                if job.done():
                    break
                changed.clear()
                waiter = asyncio.ensure_future(changed.wait())
                await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
            done: dict[str, Any] = {"result": job.result().to_json()}
            export = take_export(task.id)  # how its spans' export went, with telemetry
            if export is not None:
                done["export"] = export
            yield done
        finally:
            if waiter is not None:
                waiter.cancel()
            if not job.done():
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait({job}, timeout=_SETTLE_SECONDS)
            reports.close()

    async def ack(self, key: str) -> None:
        """The driver has recorded that a session acted: its action may go on.

        Args:
            key: The ``"ack"`` of that progress.
        """
        heard = self._gate.heard.get(key)
        if heard is not None:
            heard.set()

    async def stop(self, timeout: float) -> int:
        """Cancel every task of this actor and wait for their sessions to end their CLIs.

        The driver calls it when the batch ends early, before it kills the actor: the
        actor has two call slots more than it runs sessions, for this and for `ack`.

        Args:
            timeout: The most seconds to wait.

        Returns:
            How many tasks were still running at the timeout.
        """
        jobs = set(self._jobs)
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.wait(jobs, timeout=timeout)
        if self._pool is not None:  # its parked spares end too
            await self._pool.aclose()
        beating, self._beating, self._watchdog = self._beating, None, None
        if beating is not None:  # the watchdog's beat, and its thread
            beating.cancel()
            await asyncio.wait({beating}, timeout=timeout)
        return sum(not job.done() for job in jobs)
