"""Calling a user callback and reporting its failure: one readable name, one handler
call.

Shared by the hook, permission and dialog callbacks, so all are called, and report
failures, the same way.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from .._core.cancel import raised_by_callback
from .._core.errors import CallbackError, OptionsError, exception_text

__all__ = [
    "Bounded",
    "CallbackErrorHandler",
    "callback_name",
    "call_callback",
    "check_arity",
    "call_within",
    "failure_text",
    "report_callback_error",
]

logger = logging.getLogger("ccwire")

CallbackErrorHandler = Callable[[CallbackError], object]
"""Told about every failed user callback (``ClaudeAgentOptions.on_callback_error``)."""


def callback_name(callback: object) -> str:
    """A readable name for a callback: its qualified name, else its repr."""
    name = getattr(callback, "__qualname__", None) or getattr(callback, "__name__", None)
    return str(name) if name else repr(callback)


def report_callback_error(handler: CallbackErrorHandler | None, error: CallbackError) -> None:
    """Hand ``error`` to the user's handler; a handler that raises is logged, not fatal."""
    if handler is None:
        return
    try:
        handler(error)
    except BaseException as exc:
        if not isinstance(exc, Exception) and not raised_by_callback(exc):
            raise
        logger.exception("ccwire: on_callback_error raised while reporting %s", error)


def check_arity(callback: Callable[..., Any], called_as: str, where: str = "") -> None:
    """Refuse a ``callback`` that cannot be called as ``called_as`` says
    (``"can_use_tool(tool_name, input, context)"``): it would fail only when the CLI first
    calls it, as that call's error. A callable whose signature cannot be read passes.

    Raises:
        OptionsError: naming the option (``where``, else the name ``called_as`` starts
            with), the call and the callback's signature.
    """
    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):
        return  # builtins and the like
    count = called_as.count(",") + 1
    try:
        sig.bind(*range(count))
    except TypeError:
        option = where or called_as.split("(", 1)[0]
        bare = sig.replace(  # the parameters, without the annotations
            parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
            return_annotation=sig.empty,
        )
        raise OptionsError(
            f"{option} is called as {called_as}: {callback_name(callback)}{bare} cannot take "
            f"these {count} argument{'s' if count > 1 else ''}"
        ) from None


async def call_callback(kind: str, callback: Callable[..., Any], *args: Any) -> Any:
    """``callback(*args)``, awaited if it gave an awaitable: a sync function is called as
    an async one is.

    Raises:
        TypeError: the callback gave a coroutine object as its result (``return
            other()`` in an async function, a missing ``await``); it is closed, never
            run, so no "was never awaited" warning comes later.
    """
    produced = callback(*args)
    if inspect.isawaitable(produced):
        produced = await produced
    if inspect.iscoroutine(produced):
        produced.close()
        raise TypeError(
            f"{kind} returned a coroutine object instead of its result "
            "(a missing 'await' in the callback?)"
        )
    return produced


def failure_text(exc: BaseException) -> str:
    """How a callback's exception is named in its error answer and `CallbackError`:
    ``raised <Type>: <message>`` (``raised <Type>`` when it has no message)."""
    text = exception_text(exc)
    return f"raised {type(exc).__name__}: {text}" if text else f"raised {type(exc).__name__}"


@dataclass
class Bounded:
    """What a callback run by `call_within` gave, or that its time ran out first."""

    value: Any = None
    expired: bool = False
    """The time ran out and the callback was cancelled before it gave a value."""
    cause: BaseException | None = None
    """What the callback raised once its time ran out and it was cancelled, if anything."""


async def call_within(
    kind: str, timeout: float, signal: anyio.Event, callback: Callable[..., Any], *args: Any
) -> Bounded:
    """`call_callback`, bounded: after ``timeout`` s ``signal`` is set (the callback's
    ``context.signal``: it sees it as it is cancelled) and the callback is cancelled.

    A callback that still gives a value once cancelled (it caught the cancellation) has
    answered: its value stands. Its own failures are raised as they are (never in an
    exception group); a cancellation of ours, or a stop request, propagates.
    """
    bounded = Bounded()
    raised: BaseException | None = None
    answered = False
    async with anyio.create_task_group() as tg:

        async def expire() -> None:
            await anyio.sleep(timeout)
            bounded.expired = True
            signal.set()
            tg.cancel_scope.cancel()

        tg.start_soon(expire)
        try:
            bounded.value = await call_callback(kind, callback, *args)
            answered = True
        except BaseException as exc:
            if not raised_by_callback(exc):
                raise  # our cancellation (the time limit's included), or a stop request
            raised = exc
        tg.cancel_scope.cancel()  # the timer
    if answered:
        bounded.expired = False
    elif raised is not None:
        if not bounded.expired:
            raise raised
        bounded.cause = raised  # raised as it was cancelled: running out of time is the failure
    return bounded
