"""Hooks that guard an action fail closed: a failing callback denies, unless told otherwise."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from ccwire import CallbackError, ClaudeAgentOptions, HookMatcher
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


async def crashes(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
    raise RuntimeError("policy store offline")


async def hangs(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
    await anyio.sleep_forever()


async def garbage(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
    return ["not", "a", "hook", "output"]


def sync_crash(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
    raise KeyError("missing rule")


async def ask(options: ClaudeAgentOptions, event: str, **fields: Any) -> dict[str, Any]:
    async with connected(options) as (_, fake):
        answer = await fake.request(
            "hook_callback",
            callback_id="hook_0",
            input={"hook_event_name": event, **fields},
            tool_use_id="toolu_1",
        )
    return answer


def options_for(event: str, hook: Any, reported: list[CallbackError], **matcher: Any) -> Any:
    return ClaudeAgentOptions(
        hooks={event: [HookMatcher(hooks=[hook], **matcher)]},  # type: ignore[dict-item]
        on_callback_error=reported.append,
    )


PRE_TOOL = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}


@pytest.mark.parametrize(
    ("hook", "matcher", "why"),
    [
        (crashes, {}, "raised RuntimeError: policy store offline"),
        (sync_crash, {}, "raised KeyError"),
        (hangs, {"timeout": 0.05}, "timed out after 0.05 s"),
        (garbage, {}, "returned an unusable output"),
    ],
)
async def test_a_failing_pre_tool_use_hook_denies_the_call(
    hook: Any, matcher: dict[str, Any], why: str, anyio_backend: str
) -> None:
    reported: list[CallbackError] = []
    options = options_for("PreToolUse", hook, reported, **matcher)
    answer = await ask(options, "PreToolUse", **PRE_TOOL)
    assert answer["subtype"] == "success", answer
    out = answer["response"]["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    assert why in out["permissionDecisionReason"]
    (error,) = reported  # the failure is still reported
    assert error.event == "PreToolUse" and why in str(error)
    assert error.timed_out == (hook is hangs)


# dict outputs the CLI drops whole, letting the call through (seen with CLI 2.1.330):
# a known key of the wrong type, a hookSpecificOutput without its event, a decision
# at the top
@pytest.mark.parametrize(
    ("output", "why"),
    [
        ({"hookSpecificOutput": {"permissionDecision": "deny"}}, "'hookEventName': 'PreToolUse'"),
        ({"hookSpecificOutput": 5}, "'hookSpecificOutput' must be a dict"),
        (
            {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "no"}},
            "'permissionDecision' must be one of",
        ),
        ({"decision": "deny"}, "'decision' must be 'approve' or 'block'"),
        ({"continue_": "no"}, "'continue' must be a bool"),
        ({"reason": 5, "decision": "block"}, "'reason' must be a str"),
        ({"permissionDecision": "deny"}, "goes in 'hookSpecificOutput'"),
    ],
)
async def test_a_guard_dict_the_cli_would_drop_denies_the_call(
    output: dict[str, Any], why: str, anyio_backend: str
) -> None:
    async def hook(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
        return output

    reported: list[CallbackError] = []
    answer = await ask(options_for("PreToolUse", hook, reported), "PreToolUse", **PRE_TOOL)
    out = answer["response"]["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and why in out["permissionDecisionReason"]
    (error,) = reported
    assert "returned an unusable output" in str(error) and why in str(error)


async def test_a_known_key_left_none_is_left_out(anyio_backend: str) -> None:
    # {"permissionDecisionReason": None}, {"reason": None}: the CLI dropped the deny whole
    async def deny(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
        out = {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
        return {"reason": None, "hookSpecificOutput": {**out, "permissionDecisionReason": None}}

    reported: list[CallbackError] = []
    answer = await ask(options_for("PreToolUse", deny, reported), "PreToolUse", **PRE_TOOL)
    assert answer["response"] == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
    }
    assert reported == []


async def test_a_failing_permission_request_hook_denies(anyio_backend: str) -> None:
    reported: list[CallbackError] = []
    answer = await ask(
        options_for("PermissionRequest", crashes, reported), "PermissionRequest", **PRE_TOOL
    )
    decision = answer["response"]["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny" and "policy store offline" in decision["message"]
    assert answer["response"]["hookSpecificOutput"]["hookEventName"] == "PermissionRequest"
    assert isinstance(reported[0].__cause__, RuntimeError)


async def test_a_failing_user_prompt_submit_hook_blocks_the_prompt(anyio_backend: str) -> None:
    reported: list[CallbackError] = []
    answer = await ask(
        options_for("UserPromptSubmit", crashes, reported), "UserPromptSubmit", prompt="hi"
    )
    assert answer["response"]["decision"] == "block"
    assert "policy store offline" in answer["response"]["reason"]
    assert len(reported) == 1


async def test_on_failure_continue_fails_open(anyio_backend: str) -> None:
    reported: list[CallbackError] = []
    options = options_for("PreToolUse", crashes, reported, on_failure="continue")
    answer = await ask(options, "PreToolUse", **PRE_TOOL)
    assert answer["subtype"] == "error" and "policy store offline" in answer["error"]
    assert len(reported) == 1


async def test_other_events_still_fail_open(anyio_backend: str) -> None:
    reported: list[CallbackError] = []
    answer = await ask(options_for("PostToolUse", crashes, reported), "PostToolUse", **PRE_TOOL)
    assert answer["subtype"] == "error" and "policy store offline" in answer["error"]
    assert len(reported) == 1


async def test_a_working_guard_is_unchanged(anyio_backend: str) -> None:
    async def allow(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
        out = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        return {"hookSpecificOutput": out}

    answer = await ask(options_for("PreToolUse", allow, []), "PreToolUse", **PRE_TOOL)
    assert answer["response"]["hookSpecificOutput"]["permissionDecision"] == "allow"


async def test_the_deny_reason_does_not_leak_a_secret_from_the_exception(
    anyio_backend: str,
) -> None:
    secret = "sk-ant-api03-leakedKey_0123456789"

    async def leaky(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
        raise PermissionError(f"vault refused key {secret}")

    reported: list[CallbackError] = []
    answer = await ask(options_for("PreToolUse", leaky, reported), "PreToolUse", **PRE_TOOL)
    reason = answer["response"]["hookSpecificOutput"]["permissionDecisionReason"]
    assert "vault refused key ***" in reason and secret not in str(answer)
    assert secret not in str(reported[0])
