"""Hooks end to end: typed inputs and outputs, PreToolUse decisions, matchers, failures."""

from __future__ import annotations

import logging
from typing import Any, get_args

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    BaseHookInput,
    CallbackError,
    ClaudeSDKClient,
    HookContext,
    HookEvent,
    HookMatcher,
    HookOutput,
    Message,
    PermissionResultAllow,
    PostToolUseHookInput,
    PostToolUseOutput,
    PreToolUseHookInput,
    PreToolUseOutput,
    ResultMessage,
    StopHookInput,
    SystemMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UnsupportedFeatureError,
    UserPromptSubmitHookInput,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire._protocol.features import LEGACY_HOOK_EVENTS
from ccwire.testing import ScriptedModel, text, tool_use

from .conftest import cli_version

pytestmark = pytest.mark.anyio

TIMEOUT = 60


class Greeter:
    """An in-process server whose tool records the inputs it ran with."""

    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

        @tool("greet", "Greet someone by name", {"name": str})
        async def greet(args: dict[str, Any]) -> dict[str, Any]:
            self.ran.append(args)
            return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

        self.server = create_sdk_mcp_server("demo", tools=[greet])


def _results_seen_by_model(model: ScriptedModel) -> list[str]:
    return [r.content for req in model.turn_requests for r in req.tool_results()]


async def test_every_event_of_a_tool_turn_arrives_typed_and_as_a_mapping(
    model: ScriptedModel, make_options: Any
) -> None:
    seen: list[BaseHookInput] = []

    async def record(inp: BaseHookInput, tool_use_id: str | None, ctx: HookContext) -> None:
        seen.append(inp)

    greeter = Greeter()
    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}), text("greeted"))
    # an older CLI lacks the newest events, and ccwire refuses hooks for them
    # (test_compat_e2e.py); register the ones it knows
    known = get_args(HookEvent) if cli_version() >= (2, 1, 330) else LEGACY_HOOK_EVENTS
    options = make_options(
        mcp_servers={"demo": greeter.server},
        allowed_tools=["mcp__demo__greet"],
        hooks={event: [HookMatcher(hooks=[record])] for event in known},
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet Ann", options=options)]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "greeted"
    by_event = {inp.hook_event_name: inp for inp in seen}
    assert {"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"} <= set(by_event)
    for inp in seen:  # the class matches the event; the mapping view is the wire input
        assert inp.hook_event_name == type(inp).EVENT
        assert dict(inp) == dict(inp.raw) and inp["hook_event_name"] == inp.hook_event_name
        assert inp.session_id and inp.cwd
    prompt = by_event["UserPromptSubmit"]
    assert isinstance(prompt, UserPromptSubmitHookInput) and prompt.prompt == "greet Ann"
    pre = by_event["PreToolUse"]
    assert isinstance(pre, PreToolUseHookInput)
    assert (pre.tool_name, dict(pre.tool_input)) == ("mcp__demo__greet", {"name": "Ann"})
    assert pre["tool_input"] == {"name": "Ann"} and pre.matcher_value == "mcp__demo__greet"
    post = by_event["PostToolUse"]
    assert isinstance(post, PostToolUseHookInput) and post.tool_use_id == pre.tool_use_id
    assert post.tool_response == [{"type": "text", "text": "Hello, Ann!"}]
    stop = by_event["Stop"]
    assert isinstance(stop, StopHookInput) and stop.stop_hook_active is False
    assert stop.last_assistant_message == "greeted"


async def test_pre_tool_use_allow_deny_ask_and_updated_input(
    model: ScriptedModel, make_options: Any
) -> None:
    greeter = Greeter()
    asked: list[dict[str, Any]] = []

    async def decide(inp: PreToolUseHookInput, tid: str | None, ctx: HookContext) -> Any:
        name = inp.tool_input["name"]
        if name == "deny-me":
            return PreToolUseOutput(
                permission_decision="deny", permission_decision_reason="no strangers"
            )
        if name == "ask-me":
            return PreToolUseOutput(permission_decision="ask")
        if name == "rewrite-me":
            return PreToolUseOutput(permission_decision="allow", updated_input={"name": "Bob"})
        # the reference SDK's dict form still works
        return {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        }

    async def can_use_tool(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(inp)
        return PermissionResultAllow()

    model.add(
        tool_use("mcp__demo__greet", {"name": "deny-me"}),
        tool_use("mcp__demo__greet", {"name": "ask-me"}),
        tool_use("mcp__demo__greet", {"name": "rewrite-me"}),
        tool_use("mcp__demo__greet", {"name": "allow-me"}),
        text("all done"),
    )
    options = make_options(
        mcp_servers={"demo": greeter.server},
        can_use_tool=can_use_tool,
        hooks={"PreToolUse": [HookMatcher(matcher="mcp__demo__greet", hooks=[decide])]},
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet everyone", options=options)]
    # deny: never ran, the model saw the reason; ask: the permission callback decided;
    # allow: no permission callback; updated input: the tool ran with it
    assert greeter.ran == [{"name": "ask-me"}, {"name": "Bob"}, {"name": "allow-me"}]
    assert asked == [{"name": "ask-me"}]
    seen = _results_seen_by_model(model)
    assert "no strangers" in seen[0] and seen[1:] == [
        "Hello, ask-me!",
        "Hello, Bob!",
        "Hello, allow-me!",
    ]
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "all done"
    assert [d.get("tool_input") for d in final.permission_denials or []] == [{"name": "deny-me"}]


async def test_outputs_reach_the_model_and_continue_false_stops(
    model: ScriptedModel, make_options: Any
) -> None:
    greeter = Greeter()

    async def add_context(inp: PostToolUseHookInput, tid: str | None, ctx: HookContext) -> Any:
        if inp.tool_input["name"] == "stop":
            return {"continue_": False, "stopReason": "enough greeting"}  # seed 002 dict form
        return HookOutput(
            hook_specific_output=PostToolUseOutput(additional_context="CONTEXT-FROM-HOOK")
        )

    model.add(
        tool_use("mcp__demo__greet", {"name": "Ann"}),
        tool_use("mcp__demo__greet", {"name": "stop"}),
        text("never reached"),
    )
    options = make_options(
        mcp_servers={"demo": greeter.server},
        allowed_tools=["mcp__demo__greet"],
        hooks={"PostToolUse": [HookMatcher(hooks=[add_context])]},
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet", options=options)]
    assert greeter.ran == [{"name": "Ann"}, {"name": "stop"}]
    assert "CONTEXT-FROM-HOOK" in str(model.turn_requests[1].messages)
    assert len(model.turn_requests) == 2 and model.remaining == 1  # stopped after the tool
    assert isinstance(messages[-1], ResultMessage)


async def test_matchers_follow_the_cli_rules(model: ScriptedModel, make_options: Any) -> None:
    greeter = Greeter()

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calls: list[tuple[str, str]] = []

    def recorder(label: str) -> Any:
        async def hook(inp: PreToolUseHookInput, tid: str | None, ctx: HookContext) -> None:
            calls.append((label, inp.tool_name))

        return hook

    matchers = [
        HookMatcher(matcher="mcp__calc__add", hooks=[recorder("exact")]),
        HookMatcher(matcher="Write|mcp__demo__greet", hooks=[recorder("list")]),
        HookMatcher(matcher="mcp__.*__(add|greet)", hooks=[recorder("regex")]),
        HookMatcher(matcher="*", hooks=[recorder("star")]),
        HookMatcher(matcher="Bash", hooks=[recorder("never")]),
    ]
    model.add(
        tool_use("mcp__demo__greet", {"name": "Ann"}),
        tool_use("mcp__calc__add", {"a": 1, "b": 2}),
        text("ok"),
    )
    options = make_options(
        mcp_servers={"demo": greeter.server, "calc": create_sdk_mcp_server("calc", tools=[add])},
        allowed_tools=["mcp__demo__greet", "mcp__calc__add"],
        hooks={"PreToolUse": matchers},
    )
    with anyio.fail_after(TIMEOUT):
        [m async for m in query(prompt="go", options=options)]
    assert sorted(calls) == sorted(
        [
            ("list", "mcp__demo__greet"),
            ("regex", "mcp__demo__greet"),
            ("star", "mcp__demo__greet"),
            ("exact", "mcp__calc__add"),
            ("regex", "mcp__calc__add"),
            ("star", "mcp__calc__add"),
        ]
    )
    # HookMatcher.matches() mirrors what the CLI did
    for tool_name in ("mcp__demo__greet", "mcp__calc__add"):
        wire = {"hook_event_name": "PreToolUse", "tool_name": tool_name}
        expected = {label for label, name in calls if name == tool_name}
        labels = ["exact", "list", "regex", "star", "never"]
        assert {lab for lab, m in zip(labels, matchers, strict=True) if m.matches(wire)} == expected


async def test_failing_and_slow_hooks_answer_with_errors_and_are_reported(
    model: ScriptedModel, make_options: Any, caplog: pytest.LogCaptureFixture
) -> None:
    greeter = Greeter()
    reported: list[CallbackError] = []
    release = anyio.Event()

    async def troublesome(inp: PreToolUseHookInput, tid: str | None, ctx: HookContext) -> Any:
        if inp.tool_input["name"] == "raise":
            raise RuntimeError("policy store offline")
        await release.wait()  # never set: runs into the matcher's timeout
        return None

    model.add(
        tool_use("mcp__demo__greet", {"name": "raise"}),
        tool_use("mcp__demo__greet", {"name": "slow"}),
        text("finished anyway"),
    )
    options = make_options(
        mcp_servers={"demo": greeter.server},
        allowed_tools=["mcp__demo__greet"],
        on_callback_error=reported.append,
        # fail open, to see the CLI's own handling of error answers (the default for
        # PreToolUse fails closed: see the next test)
        hooks={"PreToolUse": [HookMatcher(hooks=[troublesome], timeout=1, on_failure="continue")]},
    )
    caplog.set_level(logging.ERROR, logger="ccwire")
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="go", options=options)]
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "finished anyway"
    assert [(e.kind, e.event, e.callback_name, e.timed_out) for e in reported] == [
        (
            "hook",
            "PreToolUse",
            "test_failing_and_slow_hooks_answer_with_errors_and_are_reported.<locals>.troublesome",
            False,
        ),
        (
            "hook",
            "PreToolUse",
            "test_failing_and_slow_hooks_answer_with_errors_and_are_reported.<locals>.troublesome",
            True,
        ),
    ]
    assert isinstance(reported[0].__cause__, RuntimeError)
    assert "policy store offline" in str(reported[0]) and "timed out" in str(reported[1])
    logged = [r.getMessage() for r in caplog.records if r.name == "ccwire"]
    assert any("troublesome" in line and "policy store offline" in line for line in logged)
    # the CLI treated the failed answer as empty: the tool ran (newer CLIs also say so)
    assert greeter.ran[0] == {"name": "raise"}
    if cli_version() >= (2, 1, 330):
        assert any(
            isinstance(m, SystemMessage) and m.data.get("tag") == "hook_callback_failed"
            for m in messages
        )
    # the timed-out call was not executed
    assert {"name": "slow"} not in greeter.ran
    (refused,) = model.turn_requests[2].tool_results()
    assert refused.is_error and refused.content != "Hello, slow!"


async def test_a_crashing_pre_tool_use_hook_fails_closed_by_default(
    model: ScriptedModel, make_options: Any
) -> None:
    greeter = Greeter()
    reported: list[CallbackError] = []

    async def broken(inp: PreToolUseHookInput, tid: str | None, ctx: HookContext) -> Any:
        raise RuntimeError("guard crashed")

    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}), text("denied"))
    options = make_options(
        mcp_servers={"demo": greeter.server},
        allowed_tools=["mcp__demo__greet"],
        on_callback_error=reported.append,
        hooks={"PreToolUse": [HookMatcher(hooks=[broken])]},
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet Ann", options=options)]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "denied"
    assert greeter.ran == []  # the crashed guard denied the call, on every CLI version
    (error,) = reported
    assert "guard crashed" in str(error)
    (refused,) = model.turn_requests[1].tool_results()
    assert refused.is_error and "guard crashed" in str(refused.content)


async def test_a_deny_the_cli_would_drop_still_denies(
    model: ScriptedModel, make_options: Any
) -> None:
    # the CLI drops an output whole for one known key of the wrong type (None too) and
    # runs the call: the None is left out, the bad value fails the guard closed
    greeter = Greeter()
    reported: list[CallbackError] = []
    outputs: list[dict[str, Any]] = [
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                "permissionDecisionReason": None}},
        {"hookSpecificOutput": {"permissionDecision": "deny"}},
    ]  # fmt: skip

    async def guard(inp: PreToolUseHookInput, tid: str | None, ctx: HookContext) -> Any:
        return outputs.pop(0)

    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}))
    model.add(tool_use("mcp__demo__greet", {"name": "Bo"}), text("denied"))
    options = make_options(
        mcp_servers={"demo": greeter.server},
        allowed_tools=["mcp__demo__greet"],
        on_callback_error=reported.append,
        hooks={"PreToolUse": [HookMatcher(hooks=[guard])]},
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet Ann and Bo", options=options)]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "denied"
    assert greeter.ran == []
    (error,) = reported
    assert "'hookEventName': 'PreToolUse'" in str(error)


async def test_a_crashing_user_prompt_submit_hook_blocks_the_prompt(
    model: ScriptedModel, make_options: Any
) -> None:
    async def broken(inp: UserPromptSubmitHookInput, tid: str | None, ctx: HookContext) -> Any:
        raise RuntimeError("prompt guard crashed")

    model.add(text("never asked"))
    options = make_options(
        on_callback_error=lambda e: None,
        hooks={"UserPromptSubmit": [HookMatcher(hooks=[broken])]},
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="hello", options=options)]
    assert model.turn_requests == []  # the prompt never reached the model
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.num_turns == 0
    if cli_version() >= (2, 1, 330):
        (blocked,) = [
            m for m in messages if isinstance(m, SystemMessage) and "blocked" in str(m.data)
        ]
        assert "prompt guard crashed" in str(blocked.data)


async def test_on_failure_block_blocks_or_is_refused_by_old_clis(
    model: ScriptedModel, make_options: Any
) -> None:
    greeter = Greeter()

    async def broken(inp: PreToolUseHookInput, tid: str | None, ctx: HookContext) -> Any:
        raise RuntimeError("guard crashed")

    options = make_options(
        mcp_servers={"demo": greeter.server},
        allowed_tools=["mcp__demo__greet"],
        on_callback_error=lambda e: None,
        hooks={"PreToolUse": [HookMatcher(hooks=[broken], on_failure="block")]},
    )
    if cli_version() < (2, 1, 300):
        with anyio.fail_after(TIMEOUT), pytest.raises(UnsupportedFeatureError, match="on_failure"):
            async with ClaudeSDKClient(options):
                pass
        return
    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}), text("blocked"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("greet Ann")
            messages: list[Message] = [m async for m in client.receive_response()]
    assert greeter.ran == []  # the crashed guard blocked the call
    assert any(isinstance(m, AssistantMessage) for m in messages)
    blocked = [
        b
        for m in messages
        for b in getattr(m, "content", [])
        if isinstance(b, ToolResultBlock) and b.is_error
    ]
    assert blocked
