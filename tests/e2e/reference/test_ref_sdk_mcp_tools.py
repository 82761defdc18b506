"""Port of the reference SDK's ``e2e-tests/test_sdk_mcp_tools.py``.

In-process (SDK) MCP tools run when the model calls them and ``allowed_tools`` lets
them; ``disallowed_tools`` keeps one from running while its sibling runs; several tools
run in one session; without any permission a tool does not run.
"""

from __future__ import annotations

from typing import Any

import pytest

from ccwire import (
    ResultMessage,
    SdkMcpTool,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import ScriptedModel, reply, text, tool_use

from ..helpers import run_turn

pytestmark = pytest.mark.anyio

TIMEOUT = 60


def _tools(executions: list[str]) -> tuple[SdkMcpTool[Any], SdkMcpTool[Any]]:
    @tool("echo", "Echo back the input text", {"text": str})
    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        executions.append("echo")
        return {"content": [{"type": "text", "text": f"Echo: {args['text']}"}]}

    @tool("greet", "Greet a person by name", {"name": str})
    async def greet(args: dict[str, Any]) -> dict[str, Any]:
        executions.append("greet")
        return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

    return echo, greet


def _results_seen(model: ScriptedModel) -> list[str]:
    return [r.content for req in model.turn_requests for r in req.tool_results()]


async def test_sdk_mcp_tool_execution(model: ScriptedModel, make_options: Any) -> None:
    executions: list[str] = []
    echo, _ = _tools(executions)
    server = create_sdk_mcp_server(name="test", version="1.0.0", tools=[echo])
    model.add(tool_use("mcp__test__echo", {"text": "ping"}), text("echoed"))
    options = make_options(mcp_servers={"test": server}, allowed_tools=["mcp__test__echo"])
    messages = await run_turn(options, "Call the mcp__test__echo tool with any text")

    assert "echo" in executions
    assert _results_seen(model) == ["Echo: ping"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "echoed"


async def test_sdk_mcp_permission_enforcement(model: ScriptedModel, make_options: Any) -> None:
    executions: list[str] = []
    echo, greet = _tools(executions)
    server = create_sdk_mcp_server(name="test", version="1.0.0", tools=[echo, greet])
    # the model greets, then tries the blocked echo anyway
    model.add(
        tool_use("mcp__test__greet", {"name": "Alice"}),
        tool_use("mcp__test__echo", {"text": "test"}),
        text("done"),
    )
    options = make_options(
        model="claude-opus-4-5",
        mcp_servers={"test": server},
        disallowed_tools=["mcp__test__echo"],
        allowed_tools=["mcp__test__greet"],
    )
    await run_turn(
        options,
        "First use the greet tool to greet 'Alice'. After that completes, use the echo tool "
        "to echo 'test'. Do these one at a time, not in parallel.",
    )

    assert "echo" not in executions
    assert "greet" in executions
    offered = model.turn_requests[0].tool_names
    assert "mcp__test__greet" in offered and "mcp__test__echo" not in offered
    refused = model.turn_requests[2].tool_results()[0]
    assert refused.is_error


async def test_sdk_mcp_multiple_tools(model: ScriptedModel, make_options: Any) -> None:
    executions: list[str] = []
    echo, greet = _tools(executions)
    server = create_sdk_mcp_server(name="multi", version="1.0.0", tools=[echo, greet])
    model.add(
        reply(
            tool_use("mcp__multi__echo", {"text": "test"}),
            tool_use("mcp__multi__greet", {"name": "Bob"}),
        ),
        text("both done"),
    )
    options = make_options(
        mcp_servers={"multi": server},
        allowed_tools=["mcp__multi__echo", "mcp__multi__greet"],
    )
    await run_turn(
        options, "Call mcp__multi__echo with text='test' and mcp__multi__greet with name='Bob'"
    )

    assert "echo" in executions
    assert "greet" in executions
    assert sorted(_results_seen(model)) == ["Echo: test", "Hello, Bob!"]


async def test_sdk_mcp_without_permissions(model: ScriptedModel, make_options: Any) -> None:
    executions: list[str] = []
    echo, _ = _tools(executions)
    server = create_sdk_mcp_server(name="noperm", version="1.0.0", tools=[echo])
    model.add(tool_use("mcp__noperm__echo", {"text": "hi"}), text("could not"))
    options = make_options(mcp_servers={"noperm": server})  # no allowed_tools
    messages = await run_turn(options, "Call the mcp__noperm__echo tool")

    assert "echo" not in executions
    (refused,) = model.turn_requests[1].tool_results()
    assert refused.is_error
    final = messages[-1]
    assert isinstance(final, ResultMessage)
    assert [d.get("tool_name") for d in final.permission_denials or []] == ["mcp__noperm__echo"]
