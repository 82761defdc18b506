"""Running ``tools/call`` requests: timeouts, the concurrency limit, cancellation by id.

Every running call (and ``resources/read`` and ``prompts/get``, which may wait as
long) is registered under ``(session key, JSON-RPC id)`` with the cancel
scope that encloses it, so that ``notifications/cancelled`` (sent by the CLI on
interrupt) cancels exactly that handler.  A cancellation that overtakes its call (the
notification is served first) is remembered, for a bounded number of ids; the call it
names is then not run, but answered all the same, saying why (`not_run`): a
``tools/call`` with an error result, a ``resources/read`` or ``prompts/get`` with a
JSON-RPC error (a client that cancelled it ignores the answer; one that reused the id of
a request it had cancelled, against the spec, is not left without one, nor is the
control request that carried it).  A cancellation naming a call that has
finished (it raced the answer) is not remembered: a later call reusing the id runs.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Final, TypeVar

import anyio

from .._core.errors import McpError
from .._wire.content import error_result
from .._wire.jsonrpc import INVALID_REQUEST
from .tools import SdkMcpTool, ToolContext, tool_failed

__all__ = ["CallRunner"]

logger = logging.getLogger("ccwire")

_INF: Final = float("inf")
_PRECANCEL_LIMIT: Final = 64

T = TypeVar("T")

CallKey = tuple[Hashable, Any]
"""``(session key, JSON-RPC id)``."""


class CallRunner:
    """The in-flight tool calls of one server."""

    def __init__(self) -> None:
        # one limiter per event loop: a limiter made on one (an earlier anyio.run, or
        # asyncio before trio) cannot be waited on from another
        self._limiters: weakref.WeakKeyDictionary[Any, anyio.CapacityLimiter] = (
            weakref.WeakKeyDictionary()
        )
        self._inflight: dict[CallKey, anyio.CancelScope] = {}
        self._precancelled: dict[CallKey, None] = {}
        self._finished: dict[CallKey, None] = {}  # the last calls that ended, oldest first

    def forget_session(self, key: Hashable) -> None:
        """Drop remembered cancellations of a session (its ids restart at ``initialize``)."""
        for table in (self._precancelled, self._finished):
            for pending in [k for k in table if k[0] == key]:
                del table[pending]

    def cancel(self, call_key: CallKey) -> None:
        """Cancel the call registered under ``call_key``, or the one that will be."""
        scope = self._inflight.pop(call_key, None)
        if scope is not None:
            scope.cancel()
            return
        if self._finished.pop(call_key, 0) is None:
            return  # it raced the answer: nothing left to cancel
        _remember(self._precancelled, call_key)  # it may not have started yet

    def not_run(self, call_key: CallKey, what: str) -> str | None:
        """If a ``notifications/cancelled`` naming ``call_key`` came before its call (it
        is used up now), why ``what`` (the call, as its answer names it) is not run;
        else ``None`` (run it)."""
        if not self._precancelled or self._precancelled.pop(call_key, 0) is not None:
            return None
        logger.warning("ccwire: %s (id %r) not run: cancelled before it arrived", what, call_key[1])
        return (
            f"{what} was not run: a notifications/cancelled naming its "
            f"request id {call_key[1]!r} came first (a request id is not to be reused)"
        )

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
        """The ``CallToolResult``, or ``None`` if the call was cancelled by id (see
        `cancellable`; a call that times out gets an error result)."""

        async def call() -> dict[str, Any]:
            if max_concurrency is None:
                return await tool.call(arguments, ctx)
            return await self._limited(tool, arguments, ctx, max_concurrency)

        why = self.not_run(call_key, f"Tool {tool.name!r}")
        if why is not None:
            return error_result(why)
        finished, result = await self.cancellable(
            call_key, outer, call, timeout, what=f"Tool {tool.name!r}"
        )
        if not finished:
            return None
        if result is None:
            text = f"Tool {tool.name!r} timed out after {timeout:g} s"
            tool_failed(TimeoutError(text))
            result = error_result(text)
        return result

    async def cancellable(
        self,
        call_key: CallKey,
        outer: anyio.CancelScope | None,
        work: Callable[[], Awaitable[T]],
        timeout: float | None = None,
        *,
        what: str,
    ) -> tuple[bool, T | None]:
        """Run ``work()`` so that ``notifications/cancelled`` naming ``call_key``
        cancels it: ``(False, None)`` if it was, else ``(True, its value)`` (``None``
        when ``timeout`` passed first).

        Raises:
            McpError: the cancellation came first: ``work()`` is not run, and the
                request is answered with this error, saying why (`not_run`; ``what``
                names the request in it).

        ``outer`` is a scope enclosing only this request (the control layer's); when
        given and there is no timeout, cancelling it is how the request is cancelled,
        so the cancellation propagates to its owner.  Otherwise the request gets a
        scope of its own, with the timeout as deadline.
        """
        why = self.not_run(call_key, what)
        if why is not None:
            raise McpError(why, code=INVALID_REQUEST)
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
        value: T | None = None
        try:
            if not own:  # the caller's scope encloses us: its cancellation propagates
                value = await work()
            else:
                with scope:
                    value = await work()
        finally:
            cancelled = registered and inflight.pop(call_key, None) is not scope
            if registered and not cancelled:
                _remember(self._finished, call_key)
        return not cancelled, value

    async def _limited(
        self, tool: SdkMcpTool[Any], arguments: Any, ctx: ToolContext | None, limit: int
    ) -> dict[str, Any]:
        import anyio.lowlevel

        loop = anyio.lowlevel.current_token().native_token
        limiter = self._limiters.get(loop)
        if limiter is None:
            limiter = self._limiters[loop] = anyio.CapacityLimiter(limit)
        elif limiter.total_tokens != limit:  # max_concurrency was changed
            limiter.total_tokens = limit
        async with limiter:
            return await tool.call(arguments, ctx)


def _remember(table: dict[CallKey, None], call_key: CallKey) -> None:
    """Add ``call_key`` to ``table``, dropping the oldest beyond `_PRECANCEL_LIMIT`."""
    table[call_key] = None
    while len(table) > _PRECANCEL_LIMIT:
        del table[next(iter(table))]
