"""`TaskHost.aclose()` is bounded, and says so when it stops waiting."""

from __future__ import annotations

import logging

import anyio
import anyio.lowlevel
import pytest

from ccwire._core.tasks import TaskHost

pytestmark = pytest.mark.anyio


async def test_a_task_that_ignores_cancellation_is_not_waited_for_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finished = anyio.Event()

    async def stubborn() -> None:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.5)  # a callback that ignores cancellation for a while
        finished.set()

    host = TaskHost("ccwire test host")
    tg = await host.start()
    tg.start_soon(stubborn, name="stubborn callback")
    await anyio.lowlevel.checkpoint()  # it started
    caplog.set_level(logging.WARNING, logger="ccwire")
    with anyio.fail_after(5):
        await host.aclose(timeout=0.05)
    (record,) = [r for r in caplog.records if r.name == "ccwire"]
    assert "ccwire test host" in record.getMessage()
    assert "stubborn callback" in record.getMessage()
    with anyio.fail_after(5):
        await finished.wait()  # (it ends by itself)
