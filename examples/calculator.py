"""The simple calculator, as a watched session.

    python examples/calculator.py          # offline: a scripted model answers
    python examples/calculator.py --live   # the real model (ANTHROPIC_API_KEY)

Offline, a `ccwire.testing.ScriptedModel` plays the model, so the real Claude
Code CLI runs without network or key; the tools run in this process either way.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import tempfile
from collections.abc import Iterator
from typing import Any

import anyio

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

PROMPT = "Calculate 100 + 50, then subtract 25 from the result"


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    """a + b"""
    a, b = args["a"], args["b"]
    return {"content": [{"type": "text", "text": f"{a:g} + {b:g} = {a + b:g}"}]}


@tool("subtract", "Subtract two numbers", {"a": float, "b": float})
async def subtract(args: dict[str, Any]) -> dict[str, Any]:
    """a - b"""
    a, b = args["a"], args["b"]
    return {"content": [{"type": "text", "text": f"{a:g} - {b:g} = {a - b:g}"}]}


def script() -> list[Any]:
    """What the scripted model answers, turn by turn (it reads the tool results)."""
    from ccwire.testing import ModelRequest, StepResult, text, tool_use

    def last_number(request: ModelRequest) -> float:
        found = re.findall(r"=\s*(-?[\d.]+)", request.tool_results()[-1].content)
        return float(found[-1])

    def then_subtract(request: ModelRequest) -> StepResult:
        return tool_use("mcp__calc__subtract", {"a": last_number(request), "b": 25})

    def answer(request: ModelRequest) -> StepResult:
        return text(f"100 + 50 = 150, and 150 - 25 = {last_number(request):g}.")

    return [tool_use("mcp__calc__add", {"a": 100, "b": 50}), then_subtract, answer]


@contextlib.contextmanager
def model_env(live: bool) -> Iterator[dict[str, str]]:
    """The CLI's environment: the scripted model offline, nothing special when live."""
    if live:
        yield {}
        return
    from ccwire.testing import ScriptedModel

    with (
        tempfile.TemporaryDirectory(prefix="ccwire-example-") as home,
        ScriptedModel(*script()) as model,
    ):
        print(f"[offline: scripted model at {model.url}; --live for the real model]")
        yield model.env(home)


async def main(live: bool) -> None:
    with model_env(live) as env:
        calculator = create_sdk_mcp_server("calculator", "1.0.0", tools=[add, subtract])
        options = ClaudeAgentOptions(
            mcp_servers={"calc": calculator},
            allowed_tools=["mcp__calc__add", "mcp__calc__subtract"],
            env=env,
            max_turns=6,
        )
        async with ClaudeCodeAgent(options, store=False) as agent:
            session = await agent.start_session(PROMPT)
            print(f"> {PROMPT}")
            async for message in session.messages():
                if isinstance(message, AssistantMessage):
                    for block in message.content:
                        if isinstance(block, ToolUseBlock):
                            print(f"  tool call    {block.name} {block.input}")
                        elif isinstance(block, TextBlock):
                            print(f"  assistant    {block.text}")
                elif isinstance(message, UserMessage) and isinstance(message.content, list):
                    for item in message.content:
                        if isinstance(item, ToolResultBlock) and isinstance(item.content, list):
                            print(f"  tool result  {item.content[0].get('text')}")
                elif isinstance(message, ResultMessage):
                    print(f"  result       {message.result!r} ({message.subtype})")
            info = session.get_state()
            print(
                f"session {info.state.value}: {info.stats.tool_call_count} tool calls, "
                f"{info.stats.message_count} messages"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="use the real model")
    anyio.run(main, parser.parse_args().live)
