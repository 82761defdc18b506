"""Elicitation, dialogs, the newer permission context and answering later, over the fake
CLI: the frames the CLI sends are decoded as the TypeScript SDK decodes them, and the
answers are what it writes (read from ``@anthropic-ai/claude-agent-sdk`` 0.3.330)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import (
    ANSWER_LATER,
    CallbackError,
    ClaudeAgentOptions,
    ElicitationRequest,
    ElicitationResult,
    MatchedAskRule,
    McpServerProvenance,
    PermissionResultAllow,
    PermissionResultDeny,
    RequestContext,
    ToolPermissionContext,
    UserDialogRequest,
    UserDialogResult,
)
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio

ELICITATION: dict[str, Any] = {
    "mcp_server_name": "github",
    "message": "Pick a repository",
    "mode": "form",
    "requested_schema": {"type": "object", "properties": {"repo": {"type": "string"}}},
    "property_order": ["repo"],
    "title": "GitHub wants to know",
    "display_name": "GitHub",
    "description": "Choose where to open the issue",
}


def _ok(response: dict[str, Any]) -> dict[str, Any]:
    assert response["subtype"] == "success", response
    body: dict[str, Any] = response.get("response", {})
    return body


async def test_elicitation_reaches_the_callback_typed_and_its_answer_goes_back() -> None:
    seen: list[tuple[ElicitationRequest, RequestContext]] = []

    async def on_elicitation(request: ElicitationRequest, context: RequestContext) -> Any:
        seen.append((request, context))
        return ElicitationResult("accept", {"repo": "ccwire"})

    async with connected(ClaudeAgentOptions(on_elicitation=on_elicitation)) as (_, fake):
        rid = await fake.start_request("elicitation", **ELICITATION)
        answer = _ok(await fake.response_to(rid))
    assert answer == {"action": "accept", "content": {"repo": "ccwire"}}
    ((request, context),) = seen
    assert request == ElicitationRequest(
        server_name="github",
        message="Pick a repository",
        mode="form",
        requested_schema=ELICITATION["requested_schema"],
        property_order=("repo",),
        title="GitHub wants to know",
        display_name="GitHub",
        description="Choose where to open the issue",
    )
    assert context.request_id == rid and not context.signal.is_set()


async def test_an_elicitation_nobody_handles_is_declined() -> None:
    # the TypeScript SDK's answer; ccwire used to answer "unsupported"
    async with connected() as (_, fake):
        answer = _ok(await fake.request("elicitation", **ELICITATION))
    assert answer == {"action": "decline"}


async def test_a_dict_answer_is_sent_as_given_and_a_bad_one_is_an_error() -> None:
    answers: list[Any] = [{"action": "cancel"}, "yes"]
    errors: list[CallbackError] = []

    async def on_elicitation(request: ElicitationRequest, context: RequestContext) -> Any:
        return answers.pop(0)

    options = ClaudeAgentOptions(on_elicitation=on_elicitation, on_callback_error=errors.append)
    async with connected(options) as (_, fake):
        assert _ok(await fake.request("elicitation", **ELICITATION)) == {"action": "cancel"}
        bad = await fake.request("elicitation", **ELICITATION)
    assert bad["subtype"] == "error" and "expected an ElicitationResult" in bad["error"]
    assert [e.kind for e in errors] == ["on_elicitation"]


async def test_a_dialog_reaches_the_callback_and_its_result_goes_back() -> None:
    seen: list[UserDialogRequest] = []

    async def on_user_dialog(request: UserDialogRequest, context: RequestContext) -> Any:
        seen.append(request)
        if request.dialog_kind == "refusal_fallback_prompt":
            return UserDialogResult("completed", {"choice": "retry"})
        return UserDialogResult("cancelled")

    options = ClaudeAgentOptions(
        on_user_dialog=on_user_dialog, supported_dialog_kinds=["refusal_fallback_prompt"]
    )
    async with connected(options) as (_, fake):
        done = _ok(
            await fake.request(
                "request_user_dialog",
                dialog_kind="refusal_fallback_prompt",
                payload={"model": "m"},
                tool_use_id="toolu_1",
            )
        )
        other = _ok(await fake.request("request_user_dialog", dialog_kind="new_kind", payload={}))
    init = next(f for f in fake.received if f.get("type") == "control_request")
    assert init["request"]["supportedDialogKinds"] == ["refusal_fallback_prompt"]
    assert done == {"behavior": "completed", "result": {"choice": "retry"}}
    assert other == {"behavior": "cancelled"}
    assert seen[0] == UserDialogRequest("refusal_fallback_prompt", {"model": "m"}, "toolu_1")


async def test_a_dialog_without_a_callback_gets_no_answer() -> None:
    # another attached client may be the one that renders it (the TypeScript SDK's rule)
    finished = anyio.Event()
    outcomes: list[tuple[str, str | None, Any]] = []

    def observe(event: Any) -> None:
        if event.outcome is not None:
            outcomes.append((event.subtype, event.outcome, event.response))
            finished.set()

    async with connected() as (client, fake):
        client._connection().add_control_observer(observe)
        rid = await fake.start_request("request_user_dialog", dialog_kind="k", payload={})
        await finished.wait()
        assert outcomes == [("request_user_dialog", "cancelled", None)]  # nothing written
        assert client._connection().protocol.owed_request(rid) is None


async def test_the_permission_context_has_the_newer_fields() -> None:
    contexts: list[ToolPermissionContext] = []

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        contexts.append(ctx)
        return PermissionResultDeny("no", decision_classification="user_reject")

    async with connected(ClaudeAgentOptions(can_use_tool=can_use_tool)) as (_, fake):
        rid = await fake.start_request(
            "can_use_tool",
            tool_name="mcp__github__create_issue",
            input={"title": "x"},
            tool_use_id="toolu_9",
            mcp_server={"name": "github", "source": "plugin"},
            matched_ask_rule={"source": "userSettings", "tool_name": "mcp__github__create_issue"},
            default_to_no=True,
            suppress_always_allow_rule=True,
        )
        answer = _ok(await fake.response_to(rid))
    assert answer == {"behavior": "deny", "message": "no", "decisionClassification": "user_reject"}
    (ctx,) = contexts
    assert ctx.request_id == rid
    assert ctx.mcp_server == McpServerProvenance(name="github", source="plugin")
    assert ctx.matched_ask_rule == MatchedAskRule("userSettings", "mcp__github__create_issue")
    assert ctx.default_to_no is True and ctx.suppress_always_allow_rule is True


async def test_decision_classification_of_an_allow() -> None:
    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return PermissionResultAllow(decision_classification="user_permanent")

    async with connected(ClaudeAgentOptions(can_use_tool=can_use_tool)) as (_, fake):
        answer = _ok(await fake.request("can_use_tool", tool_name="Read", input={"f": 1}))
    assert answer == {
        "behavior": "allow",
        "updatedInput": {"f": 1},
        "decisionClassification": "user_permanent",
    }


async def test_a_permission_answered_later_out_of_band() -> None:
    waiting: list[str] = []
    asked = anyio.Event()

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        waiting.append(ctx.request_id)
        asked.set()
        return ANSWER_LATER

    async with connected(ClaudeAgentOptions(can_use_tool=can_use_tool)) as (client, fake):
        rid = await fake.start_request("can_use_tool", tool_name="Bash", input={"command": "ls"})
        await asked.wait()
        assert waiting == [rid]
        assert await client.answer_control_request(rid, PermissionResultAllow()) is True
        answer = _ok(await fake.response_to(rid))  # the first answer written is this one
        # one answer per request: a second one, or one for an unknown id, is refused
        assert await client.answer_control_request(rid, PermissionResultAllow()) is False
        assert await client.answer_control_request("nope", PermissionResultAllow()) is False
    assert answer == {"behavior": "allow", "updatedInput": {"command": "ls"}}


async def test_a_request_the_cli_withdrew_is_not_answered_later() -> None:
    async def on_elicitation(request: ElicitationRequest, context: RequestContext) -> Any:
        return ANSWER_LATER

    async with connected(ClaudeAgentOptions(on_elicitation=on_elicitation)) as (client, fake):
        rid = await fake.start_request("elicitation", **ELICITATION)
        await fake.cancel(rid)
        # the CLI's frames are read in order: once a later request is answered, the
        # withdrawal was read
        assert (await fake.request("no_such_subtype"))["subtype"] == "error"
        assert await client.answer_control_request(rid, ElicitationResult("decline")) is False


async def test_elicitation_and_dialog_answered_before_the_callback_returns() -> None:
    # the TypeScript SDK's contract: answer out of band first, then return null
    answered: list[bool] = []
    client_box: list[Any] = []

    async def answer_first(request: Any, context: RequestContext) -> Any:
        client = client_box[0]
        if isinstance(request, ElicitationRequest):
            answer: Any = {"action": "decline"}
        else:
            answer = UserDialogResult("cancelled")
        answered.append(await client.answer_control_request(context.request_id, answer))
        return ANSWER_LATER

    options = ClaudeAgentOptions(
        on_elicitation=answer_first, on_user_dialog=answer_first, supported_dialog_kinds=["k"]
    )
    async with connected(options) as (client, fake):
        client_box.append(client)
        assert _ok(await fake.request("elicitation", **ELICITATION)) == {"action": "decline"}
        dialog = await fake.request("request_user_dialog", dialog_kind="k", payload={})
        assert _ok(dialog) == {"behavior": "cancelled"}
    assert answered == [True, True]
