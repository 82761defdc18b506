"""The CLI starts first, while the connection machinery loads: a connect that fails or
is cancelled before the connection took the started CLI over leaves nothing running,
and errors come out as they did before."""

from __future__ import annotations

import dataclasses

import anyio
import pytest

from ccwire import ClaudeSDKClient, CLIConnectionError, query

from .conftest import FaultOptions, no_leaks

pytestmark = pytest.mark.anyio
LIMIT = 20


async def test_options_rejected_after_the_cli_started_leave_no_process(
    fault_options: FaultOptions,
) -> None:
    # the hooks are checked once the connection machinery is loaded, after the CLI
    # was started: that CLI is killed and reaped before the error reaches the caller
    bad_hooks = {"PreToolUse": ["not a matcher"]}
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(TypeError, match="HookMatcher"):
            await ClaudeSDKClient(fault_options("never_initialize", hooks=bad_hooks)).connect()
        with anyio.fail_after(LIMIT), pytest.raises(TypeError, match="HookMatcher"):
            async for _ in query(
                prompt="hi", options=fault_options("never_initialize", hooks=bad_hooks)
            ):
                pytest.fail("a message from a connection that never opened")


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
async def test_connect_cancelled_early_leaves_no_process(
    fault_options: FaultOptions, delay: float
) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            with anyio.move_on_after(delay) as scope:
                await ClaudeSDKClient(fault_options("never_initialize")).connect()
            assert scope.cancelled_caught


async def test_a_cli_that_cannot_start_raises_as_before(fault_options: FaultOptions) -> None:
    missing = dataclasses.replace(fault_options("never_initialize"), cwd="/no/such/dir/ccwire")
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(CLIConnectionError, match="does not exist"):
            await ClaudeSDKClient(missing).connect()
