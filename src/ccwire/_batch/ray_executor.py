"""The Ray executor: each task is a Ray task running one session in a worker process.

Ray is imported only here, and only when a batch asks for it. A worker gets the task,
the batch options (without in-process objects) and the references of the tools and
hooks, which it imports itself; it runs the same retry loop as the local executor and
returns the result as JSON. Results stream back as they finish (``ray.wait``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream

from .._conversation.options import ClaudeAgentOptions
from .errors import BatchConfigError
from .refs import resolve_hooks, resolve_tools
from .results import BatchResult, RetryPolicy
from .session import BatchEvent, emit, run_task
from .tasks import BatchTask

__all__ = ["feed_ray", "portable_options", "run_on_worker"]

_WAIT_SECONDS = 0.25  # one ray.wait() call in a thread; cancellation is seen between calls


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
    return dataclasses.replace(options, debug_stderr=None)


def run_on_worker(payload: dict[str, Any], shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """The body of one Ray task: run a task with retries, return its result as JSON.

    Args:
        payload: ``task`` and ``seed``, and any of the shared entries.
        shared: What every task of the batch shares (``options``, ``policy``,
            ``tools``, ``hooks``), put in Ray's object store once per batch.

    Returns:
        `BatchResult.to_json` of the task's result (failures included).
    """
    payload = {**(shared or {}), **payload}
    task: BatchTask = payload["task"]
    options: ClaudeAgentOptions = payload["options"]
    try:
        servers = resolve_tools(payload["tools"], where="on the Ray worker")
        hooks = resolve_hooks(payload["hooks"], where="on the Ray worker")
    except BatchConfigError as exc:
        failed = BatchResult(id=task.id, ok=False, is_error=True, error=str(exc),
                             error_kind="config", metadata=dict(task.metadata))  # fmt: skip
        return failed.to_json()
    if servers:
        base = options.mcp_servers if isinstance(options.mcp_servers, dict) else {}
        options = dataclasses.replace(options, mcp_servers={**base, **servers})
    if hooks is not None:
        options = dataclasses.replace(options, hooks=hooks)
    policy: RetryPolicy = payload["policy"]
    rng = random.Random(payload["seed"])
    result = anyio.run(lambda: run_task(task, options, policy, rng=rng))
    return result.to_json()


def _init_ray(ray: Any, address: str | None) -> None:
    if ray.is_initialized():
        return
    target = address or os.environ.get("RAY_ADDRESS") or None
    try:
        ray.init(address=target, include_dashboard=False, log_to_driver=False,
                 ignore_reinit_error=True)  # fmt: skip
    except Exception as exc:
        where = target or "a local instance"
        raise BatchConfigError(f"cannot start or join Ray ({where}): {exc}") from exc


async def feed_ray(run: Any, send: MemoryObjectSendStream[BatchResult]) -> None:
    """Submit `run`'s tasks as Ray tasks (at most its concurrency in flight) and stream
    their results back as they finish; cancelling this cancels the Ray tasks."""
    async with send:
        try:
            ray = _import_ray()
            options = portable_options(run._options)
            await anyio.to_thread.run_sync(_init_ray, ray, run._ray_options["address"])
        except BatchConfigError as exc:
            run._failure = exc
            return
        hints: dict[str, Any] = {"num_cpus": run._ray_options["num_cpus"], "max_retries": 0}
        if run._ray_options["memory"]:
            hints["memory"] = run._ray_options["memory"]
        remote = ray.remote(run_on_worker).options(**hints)
        # the parts every task shares are serialised once, not once per task
        shared = await anyio.to_thread.run_sync(ray.put, {
            "options": options, "policy": run._policy, "tools": run._tools,
            "hooks": run._hooks,
        })  # fmt: skip
        pending: dict[Any, str] = {}
        try:
            async for task in run.next_tasks():
                while len(pending) >= run._concurrency:
                    await _collect(ray, run, pending, send)
                payload = {"task": task, "seed": run._rng.getrandbits(32)}
                pending[remote.remote(payload, shared)] = task.id
                run.submitted += 1
                emit(run._events, BatchEvent("started", task.id))
            while pending:
                await _collect(ray, run, pending, send)
        finally:
            if pending:
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    await anyio.to_thread.run_sync(_cancel_all, ray, list(pending))


def _cancel_all(ray: Any, refs: list[Any]) -> None:
    for ref in refs:
        # KeyboardInterrupt in the worker, whose CLI is then ended cleanly; an error
        # means the task already finished or the cluster is gone
        with contextlib.suppress(Exception):
            ray.cancel(ref)


async def _collect(
    ray: Any, run: Any, pending: dict[Any, str], send: MemoryObjectSendStream[BatchResult]
) -> None:
    refs = list(pending)
    # one thread hop per wake-up: wait for the first result, then take every result that
    # is ready by then, fetched in the same call
    for ref, data in await anyio.to_thread.run_sync(_wait_and_get, ray, refs):
        task_id = pending.pop(ref)
        if isinstance(data, BaseException):
            first = (str(data).splitlines() or [type(data).__name__])[0]
            result = BatchResult(id=task_id, ok=False, is_error=True, error_kind="crash",
                                 error=f"the Ray task failed: {first}")  # fmt: skip
        else:
            result = BatchResult.from_json(data)
        await run.finish(send, result)


def _wait_and_get(ray: Any, refs: list[Any]) -> list[tuple[Any, Any]]:
    """The finished tasks among ``refs`` and their results (or the error ``ray.get``
    raised), waiting at most ``_WAIT_SECONDS`` for the first."""
    ready, rest = ray.wait(refs, num_returns=1, timeout=_WAIT_SECONDS)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    out: list[tuple[Any, Any]] = []
    for ref in ready:
        try:
            out.append((ref, ray.get(ref)))
        except Exception as exc:  # the worker died or the task raised: that task's failure
            out.append((ref, exc))
    return out
