"""Cancellation never crosses a callback boundary.

A tool handler (async or sync), a ``can_use_tool`` callback, a hook, a session event
callback, ``on_callback_error`` or the ``stderr`` callback that *raises* the
cancellation exception while nothing cancelled it has failed: that call gets an error
answer (a ``stderr`` callback's failure is logged), and the client, the session and the
caller's task go on. ccwire's own cancellations (an interrupt, a timeout, a closed
session) still reach their scopes: see ``test_faults.py`` and ``test_scopes.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ccwire import (
    CallbackError,
    ClaudeCodeAgent,
    ClaudeSDKClient,
    ErrorOccurred,
    HookMatcher,
    ResultMessage,
    ToolPermissionContext,
    create_sdk_mcp_server,
    query,
    tool,
)

from .conftest import FaultOptions, no_leaks

pytestmark = pytest.mark.anyio
LIMIT = 30


def _cancelled() -> BaseException:
    """The cancellation exception a callback would raise on the running backend: on
    asyncio ``CancelledError``; trio's ``Cancelled`` has no public constructor, so a trio
    callback can only raise asyncio's (a ``BaseException`` all the same)."""
    return asyncio.CancelledError("raised by the callback itself")


@tool("cancels", "Raises the cancellation exception", {})
async def cancels(args: dict[str, Any]) -> dict[str, Any]:
    raise _cancelled()


@tool("cancels_sync", "A sync handler raising the cancellation exception", {})
def cancels_sync(args: dict[str, Any]) -> dict[str, Any]:
    raise asyncio.CancelledError("from a worker thread")


@tool("fine", "An ordinary tool", {})
async def fine(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "still serving"}]}


async def can_use_tool(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
    raise _cancelled()


async def hook(inp: Any, tid: Any, ctx: Any) -> Any:
    raise _cancelled()


def _options(fault_options: FaultOptions, reported: list[CallbackError]) -> Any:
    def on_callback_error(error: CallbackError) -> None:
        reported.append(error)
        raise _cancelled()  # the error handler too

    return fault_options(
        "each_callback",
        "cancels,cancels_sync,fine",
        mcp_servers={"s": create_sdk_mcp_server("s", tools=[cancels, cancels_sync, fine])},
        can_use_tool=can_use_tool,
        hooks={"Stop": [HookMatcher(hooks=[hook])]},
        on_callback_error=on_callback_error,
    )


def _check(final: Any) -> None:
    assert isinstance(final, ResultMessage) and final.result == "each callback done"
    got = final.structured_output
    assert isinstance(got, dict)
    for name in ("cancels", "cancels_sync"):
        result = got[name]["response"]["mcp_response"]["result"]
        assert result["isError"] is True, name
        assert "CancelledError" in result["content"][0]["text"], result
    for key in ("perm", "hook"):
        assert got[key]["subtype"] == "error", got[key]
        assert "CancelledError" in got[key]["error"], got[key]
    again = got["again"]["response"]["mcp_response"]["result"]
    assert again["content"] == [{"type": "text", "text": "still serving"}]


async def test_a_client_survives_callbacks_that_raise_cancellation(
    fault_options: FaultOptions,
) -> None:
    reported: list[CallbackError] = []
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(_options(fault_options, reported)) as client:
                await client.query("hi")
                items = [m async for m in client.receive_response()]
                assert await client.get_server_info() is not None  # still connected
    _check(items[-1])
    assert sorted(e.kind for e in reported) == ["can_use_tool", "hook"]
    await anyio.lowlevel.checkpoint()  # the caller was never cancelled: this passes


async def test_a_session_survives_event_callbacks_that_raise_cancellation(
    fault_options: FaultOptions,
) -> None:
    reported: list[CallbackError] = []
    errors: list[ErrorOccurred] = []
    seen: list[str] = []

    async def raising(event: Any) -> None:
        seen.append(event.name)
        raise _cancelled()

    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeCodeAgent(_options(fault_options, reported)) as agent:
                session = agent.create_session("hi")
                session.on("state_change", raising)
                session.on("error", errors.append)
                await session.start()
                info = await session.wait_for_completion()
                final = session.last_result
    _check(final)
    assert info.state == "completed"
    assert seen.count("state_change") >= 2  # it kept being called after raising
    sources = {e.source for e in errors}
    assert sources == {"callback"}
    raised = [e.error for e in errors if isinstance(e.error, asyncio.CancelledError)]
    assert raised and len(raised) == seen.count("state_change")


async def test_a_stderr_callback_that_raises_cancellation_stops_nothing(
    fault_options: FaultOptions,
) -> None:
    lines: list[str] = []

    def stderr(line: str) -> None:
        lines.append(line)
        raise _cancelled()

    options = fault_options("stderr_flood_ok", 3000, stderr=stderr)
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            kinds = [type(m).__name__ async for m in query(prompt="hi", options=options)]
    assert kinds == ["AssistantMessage", "ResultMessage"]
    assert lines[-1] == "LAST STDERR LINE"  # it kept being called after raising
