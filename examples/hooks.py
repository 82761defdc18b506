"""Hooks: run Python at points of the agent loop (before and after tools, on prompts).

Run it:  python examples/hooks.py

* ``UserPromptSubmit`` adds context the model sees with the prompt;
* ``PreToolUse`` (matched to one tool) blocks a dangerous command before it runs,
  and before any permission check;
* ``PostToolUse`` logs what each tool returned.

The "shell" tool here only pretends to run commands. Offline by default; with
ANTHROPIC_API_KEY the real model answers.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import anyio

from ccwire import (
    ClaudeAgentOptions,
    HookContext,
    HookMatcher,
    ResultMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ScriptedModel, Step, text, tool_use

RAN: list[str] = []


@tool("run", "Run a shell command (pretend)", {"command": str})
async def run(args: dict[str, Any]) -> dict[str, Any]:
    RAN.append(args["command"])
    return {"content": [{"type": "text", "text": f"(pretend) ran: {args['command']}"}]}


async def add_context(
    hook_input: Mapping[str, Any], tool_use_id: str | None, context: HookContext
) -> dict[str, Any]:
    print(f"hook         UserPromptSubmit: {hook_input['prompt']!r}")
    return {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "The current project is ccwire.",
        }
    }


async def block_dangerous(
    hook_input: Mapping[str, Any], tool_use_id: str | None, context: HookContext
) -> dict[str, Any]:
    command = hook_input["tool_input"].get("command", "")
    if "rm -rf" in command:
        print(f"hook         PreToolUse: blocked {command!r}")
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Destructive command blocked",
            }
        }
    print(f"hook         PreToolUse: {command!r} looks fine")
    return {}


async def log_result(
    hook_input: Mapping[str, Any], tool_use_id: str | None, context: HookContext
) -> dict[str, Any]:
    print(f"hook         PostToolUse: {hook_input['tool_name']} -> {hook_input['tool_response']}")
    return {}


@contextlib.contextmanager
def model_env(*steps: Step) -> Iterator[dict[str, str]]:
    """The real model when ANTHROPIC_API_KEY is set, else a local scripted one."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        yield {}
        return
    with tempfile.TemporaryDirectory() as home, ScriptedModel(*steps) as model:
        print("[offline: a scripted model plays Claude; set ANTHROPIC_API_KEY for the real one]")
        yield model.env(home)


async def main() -> None:
    shell = create_sdk_mcp_server("shell", tools=[run])
    script: list[Step] = [
        tool_use("mcp__shell__run", {"command": "ls"}),
        tool_use("mcp__shell__run", {"command": "rm -rf /"}),
        text("I listed the files; the cleanup command was blocked by a hook."),
    ]
    with model_env(*script) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"shell": shell},
            allowed_tools=["mcp__shell__run"],
            hooks={
                "UserPromptSubmit": [HookMatcher(hooks=[add_context])],
                "PreToolUse": [HookMatcher(matcher="mcp__shell__run", hooks=[block_dangerous])],
                "PostToolUse": [HookMatcher(hooks=[log_result])],
            },
            max_turns=5,
            env=env,
        )
        prompt = "List the files, then clean everything up."
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                print(f"assistant    {message.result}")
                denied = [d.get("tool_name") for d in message.permission_denials or []]
                print(f"denied       {denied}")
    print(f"commands run {RAN}")


if __name__ == "__main__":
    anyio.run(main)
