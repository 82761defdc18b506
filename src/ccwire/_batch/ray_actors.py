"""The worker side of the Ray executor: an async actor that runs sessions of one batch.

`SessionHost` does not import Ray: the driver wraps it with ``ray.remote`` (in
``ray_executor``), and Ray runs it as an *async actor*, its coroutines on the actor's
own asyncio event loop, up to ``max_concurrency`` at once. Each call of `run` is one
batch task (the same retry loop as the local executor, its own CLI subprocess) and
returns its result as JSON. The tools and hooks travel by reference and are imported
once per actor, on its first task.
"""

from __future__ import annotations

import dataclasses
import os
import random
from typing import Any

from .._conversation.options import ClaudeAgentOptions
from .errors import BatchConfigError
from .refs import resolve_hooks, resolve_tools
from .results import BatchResult, RetryPolicy
from .tasks import BatchTask
from .telemetry import run_traced

__all__ = ["SessionHost", "worker_options"]

WHERE = "on the Ray worker"


def worker_options(shared: dict[str, Any]) -> ClaudeAgentOptions:
    """The batch options with the referenced tools and hooks imported here.

    Args:
        shared: ``options`` (portable), ``tools`` and ``hooks`` (references).

    Returns:
        The options every session of this worker starts from.

    Raises:
        BatchConfigError: A reference cannot be imported on this worker.
    """
    options: ClaudeAgentOptions = shared["options"]
    servers = resolve_tools(shared["tools"], where=WHERE)
    hooks = resolve_hooks(shared["hooks"], where=WHERE)
    if servers:
        base = options.mcp_servers if isinstance(options.mcp_servers, dict) else {}
        options = dataclasses.replace(options, mcp_servers={**base, **servers})
    if hooks is not None:
        options = dataclasses.replace(options, hooks=hooks)
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

    async def ready(self) -> int:
        """Answer once the actor is up (the driver submits tasks only then).

        Returns:
            The actor's process id.
        """
        return os.getpid()

    async def run(
        self, task: BatchTask, seed: int, trace: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Run one task with retries on this actor's event loop.

        Cancelling the call (``ray.cancel``) cancels the session, which ends its CLI.

        Args:
            task: The task.
            seed: Seed of this task's backoff jitter.
            trace: The batch span's context (W3C headers), with telemetry.

        Returns:
            `BatchResult.to_json` of the task's result (failures included).
        """
        if self._options is None:
            try:
                self._options = worker_options(self._shared)
            except BatchConfigError as exc:  # every task of this actor fails the same way
                self._options = exc
        if isinstance(self._options, BatchConfigError):
            failed = BatchResult(id=task.id, ok=False, is_error=True, error=str(self._options),
                                 error_kind="config", metadata=dict(task.metadata))  # fmt: skip
            return failed.to_json()
        result = await run_traced(task, self._options, self._policy, rng=random.Random(seed),
                                  parent=trace, worker=True)  # fmt: skip
        return result.to_json()
