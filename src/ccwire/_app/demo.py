"""``ccwire demo``: the calculator through the real Claude Code CLI.

Offline by default: a `ScriptedModel` plays the model, so no
API key is needed. With ``ANTHROPIC_API_KEY`` set (and ``--offline`` not given) the
real model is used instead.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._conversation.client import ClaudeSDKClient
from .._conversation.options import ClaudeAgentOptions
from .._mcp.sdk import create_sdk_mcp_server
from .._mcp.tools import tool
from .._transport.discovery import find_cli
from .._wire.messages import (
    AssistantMessage,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ..testing import ScriptedModel, reply, text, tool_use
from .offline import offline_dir
from .run import RunSpec, execute, tracker_and_renderer

if TYPE_CHECKING:
    from .io import CliIO

__all__ = ["PROMPT", "calculator_server", "demo_command", "run_demo"]

PROMPT = "Calculate 100 + 50, then subtract 25 from the result"


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    """a + b"""
    return {
        "content": [
            {"type": "text", "text": f"{args['a']:g} + {args['b']:g} = {args['a'] + args['b']:g}"}
        ]
    }


@tool("subtract", "Subtract b from a", {"a": float, "b": float})
async def subtract(args: dict[str, Any]) -> dict[str, Any]:
    """a - b"""
    return {
        "content": [
            {"type": "text", "text": f"{args['a']:g} - {args['b']:g} = {args['a'] - args['b']:g}"}
        ]
    }


def calculator_server() -> Any:
    """The demo's in-process server ``calc`` with ``add`` and ``subtract``."""
    return create_sdk_mcp_server("calc", tools=[add, subtract])


def _last_number(request: Any) -> float:
    texts = [result.content for result in request.tool_results()]
    numbers = re.findall(r"=\s*(-?\d+(?:\.\d+)?)", " ".join(texts))
    if not numbers:
        raise ValueError(f"the scripted model found no tool result in {texts!r}")
    return float(numbers[-1])


def _script() -> list[Any]:
    def subtract_step(request: Any) -> Any:
        return reply(tool_use("mcp__calc__subtract", {"a": _last_number(request), "b": 25}))

    def answer_step(request: Any) -> Any:
        return text(
            f"100 + 50 = 150, and 150 - 25 = {_last_number(request):g}. "
            f"The result is {_last_number(request):g}."
        )

    return [reply(tool_use("mcp__calc__add", {"a": 100, "b": 50})), subtract_step, answer_step]


async def run_demo(
    *, offline: bool | None = None, echo: Callable[[str], None] = print
) -> ResultMessage:
    """Run the calculator once and print what happens; returns the final result."""
    if offline is None:
        offline = not os.environ.get("ANTHROPIC_API_KEY")
    env: dict[str, str] = {}
    model_ctx: Any = None
    home = tempfile.TemporaryDirectory(prefix="ccwire-demo-")
    try:
        if offline:
            model_ctx = ScriptedModel(*_script())
            model_ctx.start()
            env = model_ctx.env(home.name)
            echo(
                f"[offline: scripted model at {model_ctx.url}; "
                "set ANTHROPIC_API_KEY for the real model]"
            )
        options = ClaudeAgentOptions(
            mcp_servers={"calc": calculator_server()},
            allowed_tools=["mcp__calc__add", "mcp__calc__subtract"],
            env=env,
            cwd=home.name,
            max_turns=6,
        )
        echo(f"> {PROMPT}")
        final: ResultMessage | None = None
        async with ClaudeSDKClient(options) as client:
            await client.query(PROMPT)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    for block in message.content:
                        if isinstance(block, ToolUseBlock):
                            echo(f"  tool call   {block.name} {block.input}")
                        elif isinstance(block, TextBlock):
                            echo(f"  assistant   {block.text}")
                elif isinstance(message, UserMessage) and isinstance(message.content, list):
                    for block in message.content:
                        if isinstance(block, ToolResultBlock):
                            echo(f"  tool result {_result_text(block)}")
                elif isinstance(message, ResultMessage):
                    final = message
        if final is None:
            raise RuntimeError("the conversation ended without a result")
        cost = f"${final.total_cost_usd:.6f}" if final.total_cost_usd is not None else "n/a"
        billed = "" if offline else f", cost: {cost}"  # a scripted model costs nothing
        echo(f"result: {final.result!r}  (turns: {final.num_turns}{billed}, {final.subtype})")
        return final
    finally:
        if model_ctx is not None:
            model_ctx.stop()
        home.cleanup()


def _result_text(block: ToolResultBlock) -> str:
    if isinstance(block.content, list):
        return " ".join(str(c.get("text", "")) for c in block.content)
    return str(block.content)


def demo_command(args: argparse.Namespace, io: CliIO) -> int:
    """``ccwire demo``: the calculator through the ``ccwire run`` display."""
    offline = bool(args.offline or not io.environ.get("ANTHROPIC_API_KEY"))
    cli = find_cli(None, environ=io.environ)
    tracker, renderer = tracker_and_renderer(args, io)
    with tempfile.TemporaryDirectory(prefix="ccwire-demo-") as cwd:
        spec = RunSpec(
            prompt=PROMPT,
            servers={"calc": calculator_server()},
            allowed=["mcp__calc__add", "mcp__calc__subtract"],
            max_turns=6,
            cwd=cwd,
            cli_path=cli,
            offline=offline,
            script=_script() if offline else None,
            verbose=args.verbose,
            offline_dir=str(offline_dir(io.environ)) if offline else None,
        )
        return execute(spec, tracker, renderer, io)
