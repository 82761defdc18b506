"""Port of the reference SDK's ``e2e-tests/test_hooks.py``.

Hook callbacks answering in the reference SDK's dict style: a PreToolUse
``permissionDecision`` with reasons, a PostToolUse ``continue_=False`` with a
``stopReason``, and ``hookSpecificOutput.additionalContext``. The scripted model calls
Bash, so each hook really runs; beyond the reference's "the hook was called", each test
checks the effect the CLI gave the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccwire import (
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    ResultMessage,
)
from ccwire.testing import ScriptedModel, text, tool_use

from ..helpers import run_turn

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_hook_with_permission_decision_and_reason(
    model: ScriptedModel, make_options: Any
) -> None:
    invocations: list[str] = []

    async def guard(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        tool_name = input_data.get("tool_name", "")
        invocations.append(tool_name)
        if tool_name == "Bash":
            return {
                "reason": "Bash commands are blocked in this test for safety",
                "systemMessage": "Command blocked by hook",
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Security policy: Bash blocked",
                },
            }
        return {
            "reason": "Tool approved by security review",
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "Tool passed security checks",
            },
        }

    options = make_options(
        allowed_tools=["Bash", "Write"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
    )
    call = tool_use("Bash", {"command": "echo 'hello' > hello.txt"})
    model.add(call, text("It was blocked."))
    messages = await run_turn(options, "Run this bash command: echo 'hello'")

    assert "Bash" in invocations
    (seen,) = model.turn_requests[1].tool_results()
    assert seen.tool_use_id == call.id and seen.is_error
    assert "Security policy: Bash blocked" in seen.content
    assert not (Path(options.cwd) / "hello.txt").exists()  # the command never ran
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "It was blocked."


async def test_hook_with_continue_and_stop_reason(model: ScriptedModel, make_options: Any) -> None:
    invocations: list[str] = []

    async def stopper(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        invocations.append(input_data.get("tool_name", ""))
        return {
            "continue_": False,
            "stopReason": "Execution halted by test hook for validation",
            "reason": "Testing continue and stopReason fields",
            "systemMessage": "Test hook stopped execution",
        }

    options = make_options(
        allowed_tools=["Bash"],
        hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[stopper])]},
    )
    model.add(tool_use("Bash", {"command": "echo 'test message'"}), text("never reached"))
    messages = await run_turn(options, "Run: echo 'test message'")

    assert "Bash" in invocations
    # the CLI stopped after the tool: the model was not asked again
    assert len(model.turn_requests) == 1 and model.remaining == 1
    assert isinstance(messages[-1], ResultMessage)


async def test_hook_with_additional_context(model: ScriptedModel, make_options: Any) -> None:
    invocations: list[str] = []

    async def add_context(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        invocations.append("context_added")
        return {
            "systemMessage": "Additional context provided by hook",
            "reason": "Hook providing monitoring feedback",
            "suppressOutput": False,
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "The command executed successfully with hook monitoring",
            },
        }

    options = make_options(
        allowed_tools=["Bash"],
        hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[add_context])]},
    )
    model.add(tool_use("Bash", {"command": "echo 'testing hooks'"}), text("done"))
    messages = await run_turn(options, "Run: echo 'testing hooks'")

    assert "context_added" in invocations
    (seen,) = model.turn_requests[1].tool_results()
    assert seen.content.startswith("testing hooks") and not seen.is_error
    assert "The command executed successfully with hook monitoring" in str(
        model.turn_requests[1].messages
    )
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
