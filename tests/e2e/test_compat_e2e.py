"""Features an older CLI lacks, against the real CLI (``make e2e-matrix``: 2.1.330 and 2.1.197).

On a CLI that has the feature each test checks that it works. On an older one ccwire
must say so (a typed :class:`~ccwire.UnsupportedFeatureError`, or at least a warning)
instead of silently doing nothing or hanging. A newly found gap is marked
``xfail(strict=True)`` for old CLIs only, naming the source behaviour to fix; the
marker goes with the fix.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from ccwire import (
    BaseHookInput,
    ClaudeSDKClient,
    ControlProtocolError,
    HookContext,
    HookMatcher,
    PostModelSwitchHookInput,
    PreModelSwitchHookInput,
    ResultMessage,
    SystemMessage,
    UnsupportedFeatureError,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import ScriptedModel, text

from .conftest import old_cli
from .helpers import greet, one_turn

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_capabilities_session_state_and_interrupt_receipts_per_cli(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("ready"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options()) as client:
            info = await client.get_server_info() or {}
            state = client.session_state  # from initialize; later frames race the result
            messages = await one_turn(client, "hi")
            answer = await client.interrupt()
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "ready"
    if old_cli():  # 2.1.197: no capabilities anywhere, no session state, no receipt
        assert "capabilities" not in info and "capabilities" not in init.data
        assert "hooks_applied" not in info and "session_state" not in info
        assert client.capabilities == frozenset() and state is None
        assert client.supports("interrupt_receipt_v1") is False
        assert answer.raw == {} and answer.still_queued == ()  # an ack, not a receipt
    else:
        assert isinstance(info["capabilities"], list) and init.data["capabilities"]
        assert client.supports("interrupt_receipt_v1") is True and state == "idle"
        assert answer.raw == {"still_queued": []} and answer.still_queued == ()


async def test_hooks_for_events_the_cli_lacks(model: ScriptedModel, make_options: Any) -> None:
    fired: list[BaseHookInput] = []

    async def record(inp: BaseHookInput, tid: str | None, ctx: HookContext) -> None:
        fired.append(inp)

    options = make_options(
        hooks={
            "PreModelSwitch": [HookMatcher(hooks=[record])],
            "PostModelSwitch": [HookMatcher(hooks=[record])],
        }
    )
    if old_cli():
        with anyio.fail_after(TIMEOUT), pytest.raises(UnsupportedFeatureError, match="ModelSwitch"):
            async with ClaudeSDKClient(options):
                pass
        return
    model.add(text("switched"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.set_model("claude-haiku-4-5")
            await one_turn(client, "hi")
    assert [type(i) for i in fired] == [PreModelSwitchHookInput, PostModelSwitchHookInput]
    pre, post = fired
    assert isinstance(pre, PreModelSwitchHookInput) and isinstance(post, PostModelSwitchHookInput)
    assert pre.to_model == post.to_model == "claude-haiku-4-5"
    assert model.turn_requests[0].model == "claude-haiku-4-5"


async def test_toggling_an_in_process_server(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("one"), text("two"))
    options = make_options(mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])})
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await one_turn(client, "hi")
            if old_cli():
                with pytest.raises(UnsupportedFeatureError, match="mcp_toggle"):
                    await client.mcp_toggle("demo", False)
                return
            await client.mcp_toggle("demo", False)
            status = {s.name: s.status for s in await client.mcp_status()}
            await one_turn(client, "again")
    assert status["demo"] == "disabled"
    assert "mcp__demo__greet" in model.turn_requests[0].tool_names
    assert "mcp__demo__greet" not in model.turn_requests[1].tool_names


async def test_tool_list_changes_reach_the_cli_or_are_refused(
    model: ScriptedModel, make_options: Any, caplog: pytest.LogCaptureFixture
) -> None:
    @tool("late", "A tool that appears mid-session", {})
    async def late(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "late"}]}

    config = create_sdk_mcp_server("dyn", tools=[greet])
    server = config["instance"]
    model.add(text("ready"))
    caplog.set_level(logging.WARNING, logger="ccwire")
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options(mcp_servers={"dyn": config})) as client:
            await one_turn(client, "hi")  # capabilities are complete after system/init
            server.add_tool(late)
            try:
                await server.notify_tools_changed()
            except UnsupportedFeatureError:
                refused = True
            else:
                refused = False
            listed: set[str] = set()
            if client.supports("sdk_mcp_tools_list_changed"):
                while "late" not in listed:  # each mcp_status is a round trip
                    (dyn,) = [s for s in await client.mcp_status() if s.name == "dyn"]
                    listed = {t.name for t in dyn.tools}
    if old_cli():
        warned = any(
            "sdk_mcp_tools_list_changed" in r.getMessage()
            for r in caplog.records
            if r.name == "ccwire" and r.levelno >= logging.WARNING
        )
        assert refused or warned
        assert refused  # the CLI introduced itself in the MCP handshake: known at once
    else:
        assert not refused and listed == {"greet", "late"}


async def test_an_unknown_permission_mode_is_refused(
    model: ScriptedModel, make_options: Any
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options()) as client:
            with pytest.raises(ControlProtocolError) as refused:
                await client.set_permission_mode("bogus")  # type: ignore[arg-type]
            mode = await client.set_permission_mode("plan")
    assert refused.value.error_code == "invalid_mode"
    assert mode.mode == "plan"
