"""`raised_by_callback`: which exceptions out of a user callback are its own failure."""

from __future__ import annotations

import asyncio
import sys

import anyio
import anyio.lowlevel
import pytest

from ccwire._core.cancel import raised_by_callback, stop_request

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

pytestmark = pytest.mark.anyio


class PolicyAbort(BaseException):
    """A library's BaseException subclass."""


async def test_a_callbacks_own_exceptions_are_its_failure_and_stop_requests_are_not() -> None:
    own = [ValueError("x"), PolicyAbort("x"), asyncio.CancelledError("raised by it")]
    own.append(BaseExceptionGroup("g", [PolicyAbort("a"), ValueError("b")]))
    for exc in own:
        assert raised_by_callback(exc), exc
    stops = [KeyboardInterrupt(), SystemExit(1), GeneratorExit()]
    stops.append(BaseExceptionGroup("g", [PolicyAbort("a"), KeyboardInterrupt()]))
    for exc in stops:
        assert not raised_by_callback(exc), exc
    # the stop request a group holds is found (and reported before it stops the connection)
    interrupt = KeyboardInterrupt()
    assert stop_request(BaseExceptionGroup("g", [PolicyAbort("a"), interrupt])) is interrupt
    assert stop_request(PolicyAbort("a")) is None and stop_request(GeneratorExit()) is None


async def test_a_cancellation_of_ours_is_never_the_callbacks_failure() -> None:
    with anyio.CancelScope() as scope:
        scope.cancel()
        assert not raised_by_callback(asyncio.CancelledError())
        # a task group of the callback's, cancelled by us: the group propagates too
        group = BaseExceptionGroup("g", [PolicyAbort("a"), asyncio.CancelledError()])
        assert not raised_by_callback(group)
        assert raised_by_callback(PolicyAbort("its own, even now"))
        await anyio.lowlevel.checkpoint()  # our cancellation: caught by its scope
    assert scope.cancelled_caught
