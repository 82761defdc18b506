"""Elicitation and answering a permission later, on the real CLI (offline)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ANSWER_LATER,
    ClaudeSDKClient,
    ElicitationRequest,
    ElicitationResult,
    McpServerProvenance,
    PermissionResultAllow,
    RequestContext,
    ResultMessage,
    ToolPermissionContext,
    create_sdk_mcp_server,
)
from ccwire.testing import ScriptedModel, text, tool_use

from .helpers import greet

pytestmark = pytest.mark.anyio

TIMEOUT = 60
ASKER = Path(__file__).resolve().parent.parent / "fixtures" / "elicit_mcp_server.py"


async def test_an_mcp_servers_question_and_a_permission_answered_later(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(tool_use("mcp__asker__ask", {}), tool_use("mcp__demo__greet", {"name": "Ann"}))
    model.add(text("done"))
    questions: list[ElicitationRequest] = []
    asked: list[ToolPermissionContext] = []
    pending = anyio.Event()

    async def on_elicitation(request: ElicitationRequest, context: RequestContext) -> Any:
        questions.append(request)
        return ElicitationResult("accept", {"name": "Ann"})

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        if name == "mcp__asker__ask":
            return PermissionResultAllow()
        asked.append(ctx)
        pending.set()
        return ANSWER_LATER  # a person decides, elsewhere

    options = make_options(
        mcp_servers={
            "asker": {"command": sys.executable, "args": [str(ASKER)]},
            "demo": create_sdk_mcp_server("demo", tools=[greet]),
        },
        on_elicitation=on_elicitation,
        can_use_tool=can_use_tool,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("ask, then greet")

            async def decide() -> None:
                await pending.wait()
                allow = PermissionResultAllow(decision_classification="user_temporary")
                assert await client.answer_control_request(asked[0].request_id, allow)

            async with anyio.create_task_group() as tg:
                tg.start_soon(decide)
                messages = [m async for m in client.receive_response()]
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    (question,) = questions
    assert (question.server_name, question.message, question.mode) == (
        "asker",
        "What is your name?",
        "form",
    )
    assert question.property_order == ("name",)
    _, after_ask, after_greet = model.turn_requests
    (answer,) = after_ask.tool_results()
    assert json.loads(answer.content) == {"action": "accept", "content": {"name": "Ann"}}
    (ctx,) = asked
    assert ctx.mcp_server == McpServerProvenance(name="demo", source="sdk") and ctx.request_id
    assert [r.content for r in after_greet.tool_results()] == ["Hello, Ann!"]


async def test_an_mcp_servers_question_nobody_handles_is_declined(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(tool_use("mcp__asker__ask", {}), text("done"))
    options = make_options(
        mcp_servers={"asker": {"command": sys.executable, "args": [str(ASKER)]}},
        allowed_tools=["mcp__asker__ask"],
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("ask")
            [m async for m in client.receive_response()]
    (answer,) = model.turn_requests[1].tool_results()
    assert json.loads(answer.content) == {"action": "decline"}
