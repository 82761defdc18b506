"""Core flows end to end: the real CLI 2.1.330, the scripted model, in-process tools."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ScriptedModel, reply, text, tool_use
from tests.e2e.conftest import old_cli

from .helpers import content_blocks

pytestmark = pytest.mark.anyio

TIMEOUT = 60


@tool("greet", "Greet someone by name", {"name": str})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}! Welcome."}]}


def _tool_result_texts(model: ScriptedModel) -> list[str]:
    return [r.content for req in model.turn_requests for r in req.tool_results()]


async def test_greet_flow(model: ScriptedModel, make_options: Any) -> None:
    model.add(tool_use("mcp__demo_tools__greet", {"name": "Alice"}), text("I greeted Alice."))
    permission_calls: list[tuple[str, dict[str, Any], str | None]] = []

    async def can_use_tool(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        permission_calls.append((name, inp, ctx.tool_use_id))
        return PermissionResultAllow()

    options = make_options(
        mcp_servers={"demo_tools": create_sdk_mcp_server("demo_tools", tools=[greet])},
        can_use_tool=can_use_tool,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("Please greet Alice.")
            messages = [m async for m in client.receive_response()]

    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "mcp__demo_tools__greet" in init.data["tools"]
    uses = content_blocks(messages, ToolUseBlock)
    assert [(u.name, u.input) for u in uses] == [("mcp__demo_tools__greet", {"name": "Alice"})]
    assert permission_calls == [("mcp__demo_tools__greet", {"name": "Alice"}, uses[0].id)]
    results = content_blocks(messages, ToolResultBlock)
    assert len(results) == 1 and results[0].tool_use_id == uses[0].id
    assert results[0].content == [{"type": "text", "text": "Hello, Alice! Welcome."}]
    texts = [b.text for b in content_blocks(messages, TextBlock)]
    assert texts[-1] == "I greeted Alice."
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "success" and not final.is_error
    assert final.result == "I greeted Alice."
    # the model saw the tool under its wire name with the generated schema
    first = model.turn_requests[0]
    spec = next(t for t in first.tools if t["name"] == "mcp__demo_tools__greet")
    assert spec["input_schema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }


async def test_calculator_demo_offline() -> None:
    from ccwire._app.demo import run_demo

    lines: list[str] = []
    with anyio.fail_after(TIMEOUT):
        final = await run_demo(offline=True, echo=lines.append)
    assert final.subtype == "success"
    assert final.result is not None and "125" in final.result
    joined = "\n".join(lines)
    assert "mcp__calc__add {'a': 100, 'b': 50}" in joined
    assert "100 + 50 = 150" in joined and "150 - 25 = 125" in joined
    assert "$" not in lines[-1] and lines[-1].endswith("(turns: 3, success)")  # offline


async def test_permission_deny_never_runs_the_handler(
    model: ScriptedModel, make_options: Any
) -> None:
    ran: list[dict[str, Any]] = []

    @tool("wipe", "Wipe the disk", {"path": str})
    async def wipe(args: dict[str, Any]) -> dict[str, Any]:
        ran.append(args)
        return {"content": [{"type": "text", "text": "wiped"}]}

    async def deny(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultDeny:
        return PermissionResultDeny(message="wiping is not allowed here")

    model.add(tool_use("mcp__ops__wipe", {"path": "/"}), text("Understood, I will not wipe."))
    options = make_options(
        mcp_servers={"ops": create_sdk_mcp_server("ops", tools=[wipe])}, can_use_tool=deny
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="wipe it", options=options)]
    assert ran == []
    results = content_blocks(messages, ToolResultBlock)
    assert results and results[0].is_error
    assert any("wiping is not allowed here" in t for t in _tool_result_texts(model))
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "Understood, I will not wipe."


async def test_raising_handler_gives_error_result_and_session_goes_on(
    model: ScriptedModel, make_options: Any
) -> None:
    @tool("explode", "Always fails", {})
    async def explode(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("kaboom")

    model.add(tool_use("mcp__t__explode", {}), text("It failed, sorry."))
    options = make_options(
        mcp_servers={"t": create_sdk_mcp_server("t", tools=[explode])},
        allowed_tools=["mcp__t__explode"],
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="explode", options=options)]
    results = content_blocks(messages, ToolResultBlock)
    assert len(results) == 1 and results[0].is_error is True
    assert any("kaboom" in t for t in _tool_result_texts(model))
    final = messages[-1]
    assert (
        isinstance(final, ResultMessage)
        and final.subtype == "success"
        and final.result == "It failed, sorry."
    )


async def test_allow_with_rewritten_input(model: ScriptedModel, make_options: Any) -> None:
    got: list[dict[str, Any]] = []

    @tool("greet", "Greet someone by name", {"name": str})
    async def greet_recording(args: dict[str, Any]) -> dict[str, Any]:
        got.append(args)
        return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

    async def rewrite(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={"name": "Bob"})

    model.add(tool_use("mcp__demo__greet", {"name": "Alice"}), text("done"))
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet_recording])},
        can_use_tool=rewrite,
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet Alice", options=options)]
    assert got == [{"name": "Bob"}]
    assert any("Hello, Bob!" in t for t in _tool_result_texts(model))
    assert isinstance(messages[-1], ResultMessage)


async def test_two_turns_on_one_client(model: ScriptedModel, make_options: Any) -> None:
    model.add(
        text("first answer"),
        reply(tool_use("mcp__demo__greet", {"name": "Zed"})),
        text("second answer"),
    )
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        allowed_tools=["mcp__demo__greet"],
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("turn one")
            one = [m async for m in client.receive_response()]
            await client.query("turn two")
            two = [m async for m in client.receive_response()]
    assert isinstance(one[-1], ResultMessage) and one[-1].result == "first answer"
    assert isinstance(two[-1], ResultMessage) and two[-1].result == "second answer"
    assert [b.content for b in content_blocks(two, ToolResultBlock)] == [
        [{"type": "text", "text": "Hello, Zed! Welcome."}]
    ]
    assert model.turn_requests[-1].last_user_text() is not None
    assert any(isinstance(m, UserMessage) for m in two)
    assert isinstance(two[0], (SystemMessage, AssistantMessage))


@pytest.mark.skipif(old_cli(), reason="CLI 2.1.197 sends no session state frames")
async def test_the_session_state_frames_a_caller_asked_for_are_yielded(
    model: ScriptedModel, make_options: Any
) -> None:
    # the CLI sends them unmarked (no sdk_host_only) to a caller who set the variable
    model.add(text("hello"))
    options = make_options(env={"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"})
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="hi", options=options)]
    states = [
        m.data["state"]
        for m in messages
        if isinstance(m, SystemMessage) and m.subtype == "session_state_changed"
    ]
    assert states == ["running", "idle"]
    assert isinstance(messages[-1], SystemMessage)  # the idle, after the result
    assert [type(m).__name__ for m in messages].count("ResultMessage") == 1
