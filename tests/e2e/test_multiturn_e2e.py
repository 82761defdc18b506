"""Multi-turn semantics end to end: merged prompts, prompts folded into a running turn,
interrupts, streaming input, and ``receive_response()`` ending with each turn's own result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeSDKClient,
    Message,
    PermissionResultAllow,
    ResultMessage,
    SystemMessage,
    ToolPermissionContext,
    ToolResultBlock,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ScriptedModel, text, tool_use

from .conftest import NEW_CLI, cli_version

pytestmark = pytest.mark.anyio

TIMEOUT = 60


class Gate:
    """An in-process tool that blocks until the test opens the gate."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()

        @tool("wait", "Wait for the gate", {})
        async def wait(args: dict[str, Any]) -> dict[str, Any]:
            self.entered.set()
            await self.release.wait()
            return {"content": [{"type": "text", "text": "gate opened"}]}

        self.server = create_sdk_mcp_server("gate", tools=[wait])


async def _drain(client: ClaudeSDKClient) -> list[Message]:
    return [m async for m in client.receive_response()]


async def _turn(client: ClaudeSDKClient, prompt: str) -> list[Message]:
    await client.query(prompt)
    return await _drain(client)


async def test_sequential_turns_each_get_their_result(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("first"), text("second"), text("third"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options()) as client:
            results = []
            for prompt in ("one", "two", "three"):
                await client.query(prompt)
                messages = await _drain(client)
                assert isinstance(messages[-1], ResultMessage)
                results.append(messages[-1].result)
    assert results == ["first", "second", "third"]
    assert [r.last_user_text() for r in model.turn_requests] == ["one", "two", "three"]


async def test_back_to_back_prompts_are_merged_into_one_turn(
    model: ScriptedModel, make_options: Any
) -> None:
    # Prompts queued while the CLI cannot start a turn yet (here: it is still connecting
    # the in-process server, right after initialize) are merged into one user message.
    model.add(text("answered both"), text("the next one"))
    options = make_options(mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[])})
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            first = await client.query("first question")
            second = await client.query("second question")
            messages = await _drain(client)
            # the merged prompt is owed nothing more: the next response is the next turn's
            again = await _turn(client, "third question")
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["answered both"]
    assert [r.result for r in again if isinstance(r, ResultMessage)] == ["the next one"]
    # the CLI names both prompts in the result (which is how the merged turn is settled);
    # ccwire's own stamps are not shown, as the reference, which stamps none, shows none
    assert first is not None and second is not None
    assert results[0].user_message_uuids is None
    turn, _ = model.turn_requests
    assert "first question" in turn.last_user_text()
    assert "second question" in turn.last_user_text()


async def test_prompt_sent_mid_turn_is_folded_into_it(
    model: ScriptedModel, make_options: Any
) -> None:
    gate = Gate()
    model.add(tool_use("mcp__gate__wait", {}), text("done, and noted"), text("next"))
    options = make_options(mcp_servers={"gate": gate.server}, allowed_tools=["mcp__gate__wait"])
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("start the job")
            await gate.entered.wait()
            await client.query("also: use metric units")  # while the tool call is pending
            gate.release.set()
            messages = await _drain(client)
            again = await _turn(client, "and now?")  # the next response: the next turn
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["done, and noted"]
    assert [r.result for r in again if isinstance(r, ResultMessage)] == ["next"]
    assert len(model.turn_requests) == 3  # no separate turn for the second prompt
    assert "also: use metric units" in str(model.turn_requests[1].messages)
    assert model.turn_requests[2].last_user_text() == "and now?"


async def test_interrupt_during_a_tool_call_then_continue(
    model: ScriptedModel, make_options: Any
) -> None:
    gate = Gate()
    model.add(tool_use("mcp__gate__wait", {}), text("fresh start"))
    options = make_options(mcp_servers={"gate": gate.server}, allowed_tools=["mcp__gate__wait"])
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("wait at the gate")
            await gate.entered.wait()
            await client.interrupt()
            interrupted = await _drain(client)
            await client.query("let's start over")
            resumed = await _drain(client)
    final = interrupted[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "error_during_execution"
    assert any(
        isinstance(b, ToolResultBlock) and b.is_error
        for m in interrupted
        for b in (getattr(m, "content", None) or [])
        if not isinstance(getattr(m, "content", None), str)
    )
    assert isinstance(resumed[-1], ResultMessage) and resumed[-1].result == "fresh start"
    assert "let's start over" in model.turn_requests[-1].last_user_text()


async def test_streaming_input_to_query(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("hello back"), text("bye back"))
    first_answered = anyio.Event()

    async def prompts() -> AsyncIterator[str]:
        yield "hello"
        await first_answered.wait()  # a real conversation: answer before asking more
        yield "goodbye"

    results = []
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=prompts(), options=make_options()):
            if isinstance(message, ResultMessage):
                results.append(message.result)
                first_answered.set()
    assert results == ["hello back", "bye back"]
    assert [r.last_user_text() for r in model.turn_requests] == ["hello", "goodbye"]


async def test_streaming_input_to_the_client(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("got it"))

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "as a frame"}]},
            "parent_tool_use_id": None,
            "session_id": "default",
        }

    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options()) as client:
            await client.query(prompts())
            messages = await _drain(client)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "got it"
    assert model.turn_requests[0].last_user_text() == "as a frame"


async def test_session_state_is_tracked_and_not_surfaced(
    model: ScriptedModel, make_options: Any
) -> None:
    states: list[str | None] = []

    async def record_state(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        states.append(client.session_state)
        return PermissionResultAllow()

    gate = Gate()
    gate.release.set()
    model.add(tool_use("mcp__gate__wait", {}), text("ok"))
    options = make_options(mcp_servers={"gate": gate.server}, can_use_tool=record_state)
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            before = client.session_state
            messages = await _turn(client, "go")
    if cli_version() >= NEW_CLI:
        assert before == "idle" and states == ["requires_action"]
    else:  # no session_state_changed frames from older CLIs: the state is unknown
        assert before is None and states == [None]
    assert not any(
        isinstance(m, SystemMessage) and m.subtype == "session_state_changed" for m in messages
    )
