"""Running ``tools/call`` requests: timeouts, the concurrency limit, cancellation by id.

Every running call is registered under ``(session key, JSON-RPC id)`` with the cancel
scope that encloses it, so that ``notifications/cancelled`` (sent by the CLI on
interrupt) cancels exactly that handler.  A cancellation that overtakes its call (the
notification is served first) is remembered, for a bounded number of ids.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

import anyio

from .._wire.content import error_result
from .tools import SdkMcpTool, ToolContext

__all__ = ["CallRunner"]

_INF: Final = float("inf")
_PRECANCEL_LIMIT: Final = 64

CallKey = tuple[Hashable, Any]
"""``(session key, JSON-RPC id)``."""


class CallRunner:
    """The in-flight tool calls of one server."""

    def __init__(self) -> None:
        self._limiter: anyio.CapacityLimiter | None = None
        self._inflight: dict[CallKey, anyio.CancelScope] = {}
        self._precancelled: dict[CallKey, None] = {}

    def forget_session(self, key: Hashable) -> None:
        """Drop remembered cancellations of a session (its ids restart at ``initialize``)."""
        for pending in [k for k in self._precancelled if k[0] == key]:
            del self._precancelled[pending]

    def cancel(self, call_key: CallKey) -> None:
        """Cancel the call registered under ``call_key``, or the one that will be."""
        scope = self._inflight.pop(call_key, None)
        if scope is not None:
            scope.cancel()
            return
        self._precancelled[call_key] = None  # it may not have started yet
        while len(self._precancelled) > _PRECANCEL_LIMIT:
            del self._precancelled[next(iter(self._precancelled))]

    def withdrawn_early(self, call_key: CallKey) -> bool:
        """Whether a cancellation is waiting for the call ``call_key`` (it came first)."""
        return bool(self._precancelled) and call_key in self._precancelled

    async def run(
        self,
        tool: SdkMcpTool[Any],
        arguments: Any,
        ctx: ToolContext | None,
        call_key: CallKey,
        outer: anyio.CancelScope | None,
        timeout: float | None,
        max_concurrency: int | None,
    ) -> dict[str, Any] | None:
        """The ``CallToolResult``, or ``None`` if the call was cancelled by id.

        ``outer`` is a scope enclosing only this call (the control layer's); when given
        and there is no timeout, cancelling it is how the call is cancelled, so the
        cancellation propagates to its owner.  Otherwise the call gets a scope of its
        own, with the timeout as deadline.
        """
        if self._precancelled and self._precancelled.pop(call_key, 0) is None:
            return None  # its notifications/cancelled overtook it
        own = outer is None or timeout is not None
        scope = (
            outer
            if not own
            else anyio.CancelScope(
                deadline=_INF if timeout is None else anyio.current_time() + timeout
            )
        )
        assert scope is not None
        inflight = self._inflight
        registered = call_key not in inflight  # a duplicate id keeps the first registration
        if registered:
            inflight[call_key] = scope
        result: dict[str, Any] | None = None
        try:
            if not own:  # the caller's scope encloses us: its cancellation propagates
                result = (
                    await tool.call(arguments, ctx)
                    if max_concurrency is None
                    else await self._limited(tool, arguments, ctx, max_concurrency)
                )
            else:
                with scope:
                    result = (
                        await tool.call(arguments, ctx)
                        if max_concurrency is None
                        else await self._limited(tool, arguments, ctx, max_concurrency)
                    )
        finally:
            cancelled = registered and inflight.pop(call_key, None) is not scope
        if cancelled:
            return None
        if result is None:
            result = error_result(f"Tool {tool.name!r} timed out after {timeout:g} s")
        return result

    async def _limited(
        self, tool: SdkMcpTool[Any], arguments: Any, ctx: ToolContext | None, limit: int
    ) -> dict[str, Any]:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(limit)
        async with self._limiter:
            return await tool.call(arguments, ctx)
