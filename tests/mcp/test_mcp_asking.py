"""ToolContext.elicit() / sample() under ``ccwire serve`` (in memory): the request reaches
the client, its answer (or error, or silence) reaches the tool; a bridged official
server's own requests are relayed the same way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

from ccwire import (
    McpBridge,
    McpError,
    ToolContext,
    UnsupportedFeatureError,
    create_sdk_mcp_server,
    tool,
)
from ccwire._mcp.serve import serve_lines

pytestmark = pytest.mark.anyio

CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}}
outcomes: list[Any] = []


@tool("ask", "Asks", {"timeout": float})
async def ask(args: dict[str, Any], ctx: ToolContext) -> str:
    try:
        answer = await ctx.elicit("Name?", {"name": str}, timeout=args["timeout"])
    except (McpError, UnsupportedFeatureError) as exc:
        outcomes.append(exc)
        return f"failed: {exc}"
    outcomes.append(answer)
    return "asked"


@tool("sample", "Samples", {})
async def sample(args: dict[str, Any], ctx: ToolContext) -> str:
    answer = await ctx.sample("hi", max_tokens=7, system_prompt="be brief")
    return str(answer["content"]["text"])


Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


async def converse(server: Any, caps: dict[str, Any], answer: Answer, *calls: dict[str, Any]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """Initialize, make ``calls``, answer the server's requests with ``answer``; returns
    (the call results, every server request and notification seen)."""
    to_server, server_in = anyio.create_memory_object_stream[Any](100)
    seen: list[dict[str, Any]] = []
    results: dict[Any, dict[str, Any]] = {}
    done = anyio.Event()

    async def write(message: dict[str, Any], related: Any = None) -> None:
        if "method" in message:
            seen.append(message)
            if "id" in message:
                reply = await answer(message)
                if reply is not None:
                    await to_server.send({"jsonrpc": "2.0", "id": message["id"], **reply})
        elif message["id"] != 0:
            results[message["id"]] = message
            if len(results) == len(calls):
                done.set()

    init = {"protocolVersion": "2025-11-25", "capabilities": caps,
            "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_lines, server, _items(server_in), write)
            await to_server.send(
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
            )
            for i, params in enumerate(calls, 1):
                await to_server.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                      "params": params})  # fmt: skip
            await done.wait()
            to_server.close()
    return [results[i] for i in range(1, len(calls) + 1)], seen


async def _items(stream: Any) -> AsyncIterator[Any]:
    async for item in stream:
        yield item


def make() -> Any:
    outcomes.clear()
    return create_sdk_mcp_server("asking", tools=[ask, sample])["instance"]


async def test_elicit_and_sample_reach_the_client() -> None:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["method"] == "elicitation/create":
            return {"result": {"action": "accept", "content": {"name": "Ada"}}}
        return {"result": {"role": "assistant", "model": "m",
                           "content": {"type": "text", "text": "hello"}}}  # fmt: skip

    results, seen = await converse(
        make(), CAPS, answer,
        {"name": "ask", "arguments": {"timeout": 5}}, {"name": "sample", "arguments": {}},
    )  # fmt: skip
    assert outcomes == [{"action": "accept", "content": {"name": "Ada"}}]
    assert results[1]["result"]["content"][0]["text"] == "hello"
    elicit, sampled = (m for m in seen if m["method"] != "notifications/cancelled")
    assert elicit["params"]["message"] == "Name?"
    schema = elicit["params"]["requestedSchema"]
    assert schema["properties"] == {"name": {"type": "string"}} and schema["required"] == ["name"]
    assert sampled["params"] == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 7, "systemPrompt": "be brief",
    }  # fmt: skip


async def test_a_client_that_never_answers_times_out_and_is_told() -> None:
    async def silent(request: dict[str, Any]) -> None:
        return None

    results, seen = await converse(
        make(), CAPS, silent, {"name": "ask", "arguments": {"timeout": 0.2}}
    )
    (error,) = outcomes
    assert isinstance(error, McpError) and error.code == -32001
    assert (
        "did not answer elicitation/create within 0.2 s"
        in results[0]["result"]["content"][0]["text"]
    )
    cancelled = [m for m in seen if m["method"] == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == seen[0]["id"]


async def test_client_errors_and_refusals_reach_the_tool_typed() -> None:
    async def refuse(request: dict[str, Any]) -> dict[str, Any]:
        return {"error": {"code": -32601, "message": "Method not found"}}

    await converse(make(), CAPS, refuse, {"name": "ask", "arguments": {"timeout": 5}})
    assert isinstance(outcomes[0], UnsupportedFeatureError)

    async def fail(request: dict[str, Any]) -> dict[str, Any]:
        return {"error": {"code": -1, "message": "user closed the dialog", "data": {"x": 1}}}

    await converse(make(), CAPS, fail, {"name": "ask", "arguments": {"timeout": 5}})
    (error,) = outcomes
    assert isinstance(error, McpError) and not isinstance(error, UnsupportedFeatureError)
    assert (error.code, error.message, error.data) == (-1, "user closed the dialog", {"x": 1})


async def test_without_the_capability_nothing_is_sent() -> None:
    async def unexpected(request: dict[str, Any]) -> None:
        raise AssertionError(f"sent {request}")

    _, seen = await converse(make(), {}, unexpected, {"name": "ask", "arguments": {"timeout": 5}})
    assert seen == []
    (error,) = outcomes
    assert isinstance(error, UnsupportedFeatureError)
    assert "did not declare the 'elicitation' capability" in str(error)


async def test_a_bridged_official_server_asks_through_serve() -> None:
    official = MCPServer("official")

    @official.tool()
    async def confirm(ctx: Context) -> str:
        result = await ctx.session.elicit_form("Sure?", {"type": "object", "properties": {}})
        return f"user said {result.action}"

    async def accept(request: dict[str, Any]) -> dict[str, Any]:
        assert request["method"] == "elicitation/create"
        return {"result": {"action": "accept", "content": {}}}

    results, _ = await converse(
        McpBridge(official), CAPS, accept, {"name": "confirm", "arguments": {}}
    )
    assert results[0]["result"]["content"][0]["text"] == "user said accept"
