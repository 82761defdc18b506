"""Permissions: decide on every tool call in Python, before it runs.

Run it:  python examples/permissions.py

``can_use_tool`` sees each call the CLI wants to make and answers with
``PermissionResultAllow`` (optionally rewriting the input) or ``PermissionResultDeny``
(the model reads the message). Here reads are allowed, writes are redirected into a
sandbox folder, and deletes outside the sandbox are refused, so the handler of a
refused call never runs. Offline by default; with ANTHROPIC_API_KEY the real model
answers.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import anyio

from ccwire import (
    ClaudeAgentOptions,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ScriptedModel, Step, text, tool_use

FILES: dict[str, str] = {"notes.txt": "buy milk"}
SANDBOX = "sandbox/"


@tool("read_file", "Read a file", {"path": str})
async def read_file(args: dict[str, Any]) -> dict[str, Any]:
    body = FILES.get(args["path"], "(no such file)")
    return {"content": [{"type": "text", "text": body}]}


@tool("write_file", "Write a file", {"path": str, "text": str})
async def write_file(args: dict[str, Any]) -> dict[str, Any]:
    FILES[args["path"]] = args["text"]
    return {"content": [{"type": "text", "text": f"wrote {args['path']}"}]}


@tool("delete_file", "Delete a file", {"path": str})
async def delete_file(args: dict[str, Any]) -> dict[str, Any]:
    FILES.pop(args["path"], None)
    return {"content": [{"type": "text", "text": f"deleted {args['path']}"}]}


async def policy(
    name: str, tool_input: dict[str, Any], context: ToolPermissionContext
) -> PermissionResult:
    """Allow reads, sandbox writes, refuse deletes outside the sandbox."""
    if name == "mcp__files__read_file":
        print(f"policy       allow  {name} {tool_input}")
        return PermissionResultAllow()
    if name == "mcp__files__write_file" and not tool_input["path"].startswith(SANDBOX):
        moved = {**tool_input, "path": SANDBOX + tool_input["path"]}
        print(f"policy       allow  {name}, path rewritten to {moved['path']!r}")
        return PermissionResultAllow(updated_input=moved)
    if name == "mcp__files__delete_file" and not tool_input["path"].startswith(SANDBOX):
        print(f"policy       deny   {name} {tool_input}")
        return PermissionResultDeny(message="Deleting files outside sandbox/ is not allowed.")
    print(f"policy       allow  {name} {tool_input}")
    return PermissionResultAllow()


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
    server = create_sdk_mcp_server("files", tools=[read_file, write_file, delete_file])
    script: list[Step] = [
        tool_use("mcp__files__read_file", {"path": "notes.txt"}),
        tool_use("mcp__files__write_file", {"path": "notes.txt", "text": "buy oat milk"}),
        tool_use("mcp__files__delete_file", {"path": "notes.txt"}),
        text("I read the notes, saved a new version, and was not allowed to delete the old one."),
    ]
    prompt = "Read notes.txt, write an updated version, then delete the old file."
    with model_env(*script) as env:
        options = ClaudeAgentOptions(
            mcp_servers={"files": server}, can_use_tool=policy, max_turns=6, env=env
        )
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                for block in message.content:
                    if isinstance(block, ToolResultBlock):
                        mark = "refused" if block.is_error else "result "
                        print(f"tool {mark} {_text(block)}")
            elif isinstance(message, ResultMessage):
                print(f"assistant    {message.result}")
    print(f"files now    {FILES}")


def _text(block: ToolResultBlock) -> str:
    if isinstance(block.content, list):
        return " ".join(str(c.get("text", "")) for c in block.content)
    return str(block.content)


if __name__ == "__main__":
    anyio.run(main)
