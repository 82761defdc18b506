"""The Ray executor: a pool of async Ray actors, each running several sessions at once.

Ray is imported only here, and only when a batch asks for it. The batch starts
``ceil(concurrency / per_actor)`` actors (`SessionHost`, in ``ray_actors``), each
reserving ``per_actor`` times the per-task resource hints and running up to
``per_actor`` sessions concurrently on its own event loop. An actor gets the batch
options (without in-process objects) and the references of the tools and hooks once,
at creation; each task is one actor method call, sent to the least-loaded actor that
is up, and returns its result as JSON. Results stream back as they finish
(``ray.wait``). An actor that dies turns its tasks in flight into ``crash`` results
and is replaced. The actors are killed when the batch ends, however it ends.

Actor method calls go straight from this process to the actor's worker, without the
raylet's scheduling of each task that a Ray task pays (see ``bench/BATCH_NOTES.md``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import uuid
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream

from .._conversation.options import ClaudeAgentOptions
from .errors import BatchConfigError
from .ray_actors import SessionHost
from .results import BatchResult
from .session import BatchEvent, emit
from .telemetry import portable_telemetry

__all__ = ["default_per_actor", "feed_ray", "portable_options"]

_WAIT_SECONDS = 0.25  # one ray.wait() call in a thread; cancellation is seen between calls
# after cancelling, how long the sessions get to end their CLIs: a session's close waits
# up to 5 s for the CLI to exit once its input ends, then 5 s after SIGTERM (SIGKILL then)
_SETTLE_SECONDS = 12.0
_CLEANUP_SECONDS = 15.0  # the whole shutdown (cancel, settle, kill), shielded
MAX_PER_ACTOR = 16
"""The most sessions one actor runs by default (an actor crash loses them all)."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BatchConfigError("executor='ray' needs Ray: pip install 'ccwire[ray]'") from None
    return ray


def portable_options(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    """The options as a Ray worker can receive them: no in-process objects.

    Args:
        options: The batch options.

    Returns:
        The options without `debug_stderr` (this process's stream).

    Raises:
        BatchConfigError: They hold an SDK MCP server, hooks, a permission callback or
            another callable; these must be passed by reference (`tools=`, `hooks=`).
    """
    servers = options.mcp_servers
    if isinstance(servers, dict):
        for name, config in servers.items():
            if isinstance(config, dict) and config.get("type") == "sdk":
                raise BatchConfigError(
                    f"options.mcp_servers[{name!r}] is an in-process server: with the Ray "
                    "executor pass it by reference, tools=['package.module:server']"
                )
    if options.hooks:
        raise BatchConfigError(
            "options.hooks holds functions: with the Ray executor pass them by reference, "
            "hooks='package.module:HOOKS'"
        )
    for name in ("can_use_tool", "stderr", "on_callback_error", "audit_log"):
        if getattr(options, name) is not None:
            raise BatchConfigError(
                f"options.{name} is an in-process object, which the Ray executor cannot ship"
            )
    # `debug_stderr` defaults to this process's stderr, which the CLI never writes to
    # here (it is the reference's field, accepted and ignored): a worker gets its own.
    return dataclasses.replace(
        options, debug_stderr=None, telemetry=portable_telemetry(options.telemetry)
    )


def default_per_actor(
    nodes: list[dict[str, Any]], concurrency: int, num_cpus: float, memory: int | None
) -> int:
    """How many sessions one actor runs when the caller does not say.

    As many as the smallest node that can hold a session has room for (so that every
    such node can host an actor), at most `concurrency` and `MAX_PER_ACTOR`.

    Args:
        nodes: ``ray.nodes()``.
        concurrency: The batch's concurrency.
        num_cpus: CPUs per session.
        memory: Bytes of memory per session.

    Returns:
        Sessions per actor, at least 1.
    """
    fits = []
    for node in nodes:
        if not node.get("Alive", True):
            continue
        res = node.get("Resources") or {}
        fit = concurrency
        if num_cpus > 0:
            fit = min(fit, math.floor(res.get("CPU", 0) / num_cpus + 1e-9))
        if memory:
            fit = min(fit, math.floor(res.get("memory", 0) / memory))
        if fit >= 1:
            fits.append(fit)
    return max(1, min(min(fits, default=1), concurrency, MAX_PER_ACTOR))


def _init_ray(ray: Any, address: str | None) -> list[dict[str, Any]]:
    if not ray.is_initialized():
        target = address or os.environ.get("RAY_ADDRESS") or None
        try:
            ray.init(address=target, include_dashboard=False, log_to_driver=False,
                     ignore_reinit_error=True)  # fmt: skip
        except Exception as exc:
            where = target or "a local instance"
            raise BatchConfigError(f"cannot start or join Ray ({where}): {exc}") from exc
    return list(ray.nodes())


@dataclass(eq=False)
class _Host:
    """One actor of the pool, as the driver tracks it."""

    handle: Any
    up: bool = False  # answered `ready`: tasks go only to actors that are up
    dead: bool = False
    load: int = 0  # its tasks in flight


@dataclass(eq=False)
class _Pool:
    """The batch's actors, and every reference the driver waits on."""

    ray: Any
    actor: Any  # ray.remote(SessionHost)
    hints: dict[str, Any]  # its options: resources, max_concurrency...
    shared: dict[str, Any]
    per_actor: int
    size: int
    prefix: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])
    hosts: list[_Host] = dataclasses.field(default_factory=list)
    # what each reference waited on is: (None, host) its `ready`, (task id, host) a task
    waiting: dict[Any, tuple[str | None, _Host]] = dataclasses.field(default_factory=dict)
    in_flight: int = 0
    broken: BatchConfigError | None = None
    _names: itertools.count[int] = dataclasses.field(default_factory=itertools.count)

    def spawn(self) -> None:
        """Start one actor (it is used once its `ready` answers)."""
        name = f"ccwire-batch-{self.prefix}-{next(self._names)}"
        host = _Host(self.actor.options(name=name, **self.hints).remote(self.shared))
        self.hosts.append(host)
        self.waiting[host.handle.ready.remote()] = (None, host)

    def pick(self) -> _Host | None:
        """The least-loaded actor that is up and has room, if any."""
        free = [h for h in self.hosts if h.up and not h.dead and h.load < self.per_actor]
        return min(free, key=lambda h: h.load) if free else None

    def submit(self, host: _Host, task_id: str, *args: Any) -> None:
        self.waiting[host.handle.run.remote(*args)] = (task_id, host)
        host.load += 1
        self.in_flight += 1

    def task_refs(self) -> list[Any]:
        return [ref for ref, (task_id, _) in self.waiting.items() if task_id is not None]


async def feed_ray(run: Any, send: MemoryObjectSendStream[BatchResult]) -> None:
    """Run `run`'s tasks on a pool of Ray actors (at most its concurrency in flight) and
    stream their results back as they finish; cancelling this cancels the sessions, and
    the actors never outlive it."""
    async with send:
        ropts = run._ray_options
        try:
            ray = _import_ray()
            options = portable_options(run._options)
            nodes = await anyio.to_thread.run_sync(_init_ray, ray, ropts["address"])
        except BatchConfigError as exc:
            run._failure = exc
            return
        concurrency: int = run._concurrency
        per_actor = ropts.get("per_actor") or default_per_actor(
            nodes, concurrency, ropts["num_cpus"], ropts["memory"]
        )
        per_actor = min(per_actor, concurrency)
        hints: dict[str, Any] = {"num_cpus": ropts["num_cpus"] * per_actor,
                                 "max_concurrency": per_actor, "max_restarts": 0,
                                 "max_task_retries": 0}  # fmt: skip
        if ropts["memory"]:
            hints["memory"] = ropts["memory"] * per_actor
        shared = {"options": options, "policy": run._policy, "tools": run._tools,
                  "hooks": run._hooks}  # fmt: skip
        pool = _Pool(ray, ray.remote(SessionHost), hints, shared, per_actor,
                     size=math.ceil(concurrency / per_actor))  # fmt: skip
        try:
            for _ in range(pool.size):
                pool.spawn()
            async with contextlib.aclosing(run.next_tasks()) as tasks:
                async for task in tasks:
                    host = None
                    while pool.broken is None:
                        host = pool.pick() if pool.in_flight < concurrency else None
                        if host is not None:
                            break
                        await _collect(pool, run, send)
                    if host is None:
                        break
                    if run.over_budget():  # spent while this task waited for an actor
                        continue
                    pool.submit(host, task.id, task, run._rng.getrandbits(32),
                                run._tracing.carrier())  # fmt: skip
                    run.submitted += 1
                    emit(run._events, BatchEvent("started", task.id))
            while pool.in_flight and not run.interrupted:  # interrupted: cancelled below
                await _collect(pool, run, send)
            if pool.broken is not None and run._failure is None:
                run._failure = pool.broken
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLEANUP_SECONDS):
                await anyio.to_thread.run_sync(_shut_down, pool, abandon_on_cancel=True)


def _shut_down(pool: _Pool) -> None:
    """Cancel the sessions still running, give them a bounded time to end their CLIs,
    then kill every actor of the pool (in a worker thread)."""
    refs = pool.task_refs()
    for ref in refs:
        # CancelledError in the actor's coroutine: the session ends its CLI; an error
        # means the call already finished or the cluster is gone
        with contextlib.suppress(Exception):
            pool.ray.cancel(ref)
    if refs:
        with contextlib.suppress(Exception):
            pool.ray.wait(refs, num_returns=len(refs), timeout=_SETTLE_SECONDS)
    for host in pool.hosts:
        with contextlib.suppress(Exception):
            pool.ray.kill(host.handle, no_restart=True)


async def _collect(pool: _Pool, run: Any, send: MemoryObjectSendStream[BatchResult]) -> None:
    """Wait (at most `_WAIT_SECONDS`) for what the pool waits on, and handle every
    reference ready by then: actors coming up, results, actors that died."""
    # one thread hop per wake-up: wait for the first, then take every reference that
    # is ready by then, fetched in the same call
    assert pool.waiting, "nothing to wait for"
    ready = await anyio.to_thread.run_sync(_wait_and_get, pool.ray, list(pool.waiting))
    for ref, data in ready:
        task_id, host = pool.waiting.pop(ref)
        if task_id is None:  # an actor's `ready`
            if isinstance(data, BaseException):
                host.dead = True
                first = (str(data).splitlines() or [type(data).__name__])[0]
                pool.broken = BatchConfigError(f"cannot start a Ray actor for the batch: {first}")
            else:
                host.up = True
            continue
        host.load -= 1
        pool.in_flight -= 1
        if isinstance(data, BaseException):
            result = _crash(pool, host, task_id, data)
        else:
            result = BatchResult.from_json(data)
        await run.finish(send, result)


def _crash(pool: _Pool, host: _Host, task_id: str, exc: BaseException) -> BatchResult:
    """The failed result of a task whose call raised; a dead actor is replaced."""
    first = (str(exc).splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, pool.ray.exceptions.RayActorError):
        error = f"the Ray actor running it died: {first}"
        if not host.dead:  # its first failed task: replace it (it is killed at the end)
            host.dead = True
            if pool.broken is None:
                pool.spawn()
    else:
        error = f"the Ray task failed: {first}"
    return BatchResult(id=task_id, ok=False, is_error=True, error_kind="crash", error=error)


def _wait_and_get(ray: Any, refs: list[Any]) -> list[tuple[Any, Any]]:
    """The ready references among ``refs`` and their values (or the error ``ray.get``
    raised), waiting at most ``_WAIT_SECONDS`` for the first."""
    ready, rest = ray.wait(refs, num_returns=1, timeout=_WAIT_SECONDS)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    out: list[tuple[Any, Any]] = []
    for ref in ready:
        try:
            out.append((ref, ray.get(ref)))
        except Exception as exc:  # the actor died or the call raised: that task's failure
            out.append((ref, exc))
    return out
