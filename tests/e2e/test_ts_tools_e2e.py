"""Always-loaded tools, end-turn tools, a CLI-side call timeout and per-tool permission
policies of in-process servers, on the real CLI (offline)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeSDKClient,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import ScriptedModel, text, tool_use

pytestmark = pytest.mark.anyio

TIMEOUT = 60


@tool("plain", "A plain tool", {})
async def plain(args: dict[str, Any]) -> str:
    return "plain"


@tool("weather", "The forecast", {}, always_load=True, search_hint="forecast rain")
async def weather(args: dict[str, Any]) -> str:
    return "sunny"


@tool("restart", "Restart the service", {})
async def restart(args: dict[str, Any]) -> str:
    return "restarted"


@tool("slow", "Takes its time", {})
async def slow(args: dict[str, Any]) -> str:
    await anyio.sleep(30)  # the CLI's own 1.5 s limit ends the call first
    return "late"


@tool("submit", "Submit the answer", {"answer": str}, end_turn=True)
async def submit(args: dict[str, Any]) -> str:
    return f"submitted {args['answer']}"


# can_use_tool is there to show always_ask reaches it: allowed_tools would skip it
@pytest.mark.filterwarnings("ignore::ccwire.CanUseToolShadowedWarning")
async def test_tools_and_servers_as_the_typescript_sdk_sets_them(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(
        tool_use("mcp__ops__restart", {}),
        tool_use("mcp__ops__slow", {}),
        tool_use("mcp__ops__submit", {"answer": "42"}),
        text("never asked: the submit ended the turn"),
    )
    asked: list[str] = []

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.append(name)
        return PermissionResultDeny("not now")

    ops = create_sdk_mcp_server(
        "ops",
        tools=[plain, weather, restart, slow, submit],
        timeout_ms=1500,
        tool_policies={"restart": "always_ask"},
    )
    options = make_options(
        mcp_servers={"ops": ops},
        allowed_tools=["mcp__ops__restart", "mcp__ops__slow", "mcp__ops__submit"],
        can_use_tool=can_use_tool,
        env={"ENABLE_TOOL_SEARCH": "true"},
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("restart, wait, then submit")
            messages = [m async for m in client.receive_response()]
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    first, after_restart, after_slow = model.turn_requests  # no request after submit
    # tool search defers MCP tools: the always-loaded one is in the prompt
    assert "mcp__ops__weather" in first.tool_names and "mcp__ops__plain" not in first.tool_names
    # always_ask: asked although allowed_tools allows it
    assert asked == ["mcp__ops__restart"]
    assert [r.content for r in after_restart.tool_results()] == ["not now"]
    # the server's timeout, on the CLI's side
    (timed_out,) = after_slow.tool_results()
    assert timed_out.is_error and "timed out" in timed_out.content
    assert model.remaining == 1
