"""A tool that raises reaches the model as the reference reports it: the exception's
text (`kaput`), not `RuntimeError: kaput`. The reference runs in its own venv, its
server called through the official MCP client it ships with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from ccwire import create_sdk_mcp_server, tool
from tests.compat.conftest import on_reference


def on_the_reference(reference_python: Path, tool_source: str, name: str) -> dict[str, Any]:
    """What the reference's server answers to a call of tool `name` (defined by
    `tool_source`) with no arguments, through the official MCP client it ships with:
    the text of the result and its error flag."""
    script = f"""
import json, anyio
from claude_agent_sdk import create_sdk_mcp_server, tool

{tool_source}

async def main():
    server = create_sdk_mcp_server("t", tools=[{name}])["instance"]
    try:
        from mcp.client.client import Client  # mcp 2
        connected = Client(server)
    except ImportError:  # mcp 1
        from mcp.shared.memory import create_connected_server_and_client_session
        connected = create_connected_server_and_client_session(server)
    async with connected as client:
        result = await client.call_tool("{name}", {{}})
    is_error = getattr(result, "is_error", getattr(result, "isError", None))
    print(json.dumps({{"text": result.content[0].text, "is_error": is_error}}))

anyio.run(main)
"""
    answer: dict[str, Any] = on_reference(reference_python, script, timeout=120)
    return answer


def test_a_raising_tool_reads_as_the_references(reference_python: Path) -> None:
    kaput_source = """
@tool("kaput", "Always fails", {})
async def kaput(args):
    raise RuntimeError("kaput")
"""
    reference = on_the_reference(reference_python, kaput_source, "kaput")

    @tool("kaput", "Always fails", {})
    async def kaput(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("kaput")

    server = create_sdk_mcp_server("t", tools=[kaput])["instance"]
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "kaput", "arguments": {}}}  # fmt: skip
    reply = anyio.run(server.handle, call)
    assert reply is not None
    ours = {"text": reply["result"]["content"][0]["text"], "is_error": reply["result"]["isError"]}
    assert ours == reference == {"text": "kaput", "is_error": True}


def test_arguments_that_fail_the_schema_read_as_the_references(reference_python: Path) -> None:
    # Code written for the reference checks `"Input validation error" in text` (hindsight's
    # consumer tests, and others that call the server's handler); ccwire's text keeps
    # that prefix and goes on with every failure and the tool's name.
    recall_source = """
@tool("recall", "Recall", {"query": str})
async def recall(args):
    return {"content": [{"type": "text", "text": "never"}]}
"""
    reference = on_the_reference(reference_python, recall_source, "recall")
    prefix = "Input validation error: "
    assert reference["text"].startswith(prefix), reference

    @tool("recall", "Recall", {"query": str})
    async def recall(args: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("not called with invalid arguments")

    server = create_sdk_mcp_server("t", tools=[recall])["instance"]
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "recall", "arguments": {}}}  # fmt: skip
    reply = anyio.run(server.handle, call)
    assert reply is not None
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"] == (
        f"{prefix}invalid arguments for tool 'recall': 'query' is required (rule: required)"
    )
