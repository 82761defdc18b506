"""Tools whose handler never awaits are served at once, in the task reading the CLI's
output, with the same answers as a handler that awaits (served by a worker)."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ccwire import (
    AuditLog,
    ClaudeAgentOptions,
    ToolContext,
    ToolError,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import FakeCLI
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio

WORKER = "ccwire control request"  # the name of the tasks serving requests that wait


def twins(body: Callable[[dict[str, Any]], Any]) -> tuple[Any, Any]:
    """The same tool twice: ``now`` never awaits, ``later`` awaits a checkpoint first."""

    @tool("now", "d", {"n": int})
    async def now(args: dict[str, Any]) -> Any:
        return body(args)

    @tool("later", "d", {"n": int})
    async def later(args: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()
        return body(args)

    return now, later


async def call(fake: FakeCLI, name: str, arguments: Any, mid: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}
    response = await fake.request("mcp_message", server_name="s", message=message)
    assert response["subtype"] == "success", response
    return dict(response["response"]["mcp_response"])


def plain(args: dict[str, Any]) -> Any:
    return f"n={args['n']}"


def tool_error(args: dict[str, Any]) -> Any:
    raise ToolError(f"no {args['n']}")


def crash(args: dict[str, Any]) -> Any:
    raise KeyError("sk-ant-api03-" + "x" * 40)  # the text reaches the model: masked


def cancels_itself(args: dict[str, Any]) -> Any:
    raise anyio.get_cancelled_exc_class()


def structured(args: dict[str, Any]) -> Any:
    return {"content": [{"type": "text", "text": "t"}], "structuredContent": {"n": args["n"]}}


@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        (plain, {"n": 1}),
        (plain, {"n": "not a number"}),  # refused by the schema
        (plain, None),
        (tool_error, {"n": 2}),
        (crash, {"n": 3}),
        (cancels_itself, {"n": 4}),
        (structured, {"n": 5}),
    ],
)
async def test_the_same_answer_at_once_and_from_a_worker(
    body: Callable[[dict[str, Any]], Any], arguments: Any
) -> None:
    now, later = twins(body)
    assert now.runs_now and not later.runs_now
    server = create_sdk_mcp_server("s", tools=[now, later])
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        first = await call(fake, "now", arguments)
        second = await call(fake, "later", arguments)
        after = await call(fake, "now", {"n": 9}, mid=2)  # the session goes on
    assert json.dumps(first).replace("'now'", "'later'") == json.dumps(second)
    assert after["id"] == 2 and "result" in after
    if body is crash:
        assert "sk-ant-api03" not in json.dumps(first)


async def test_served_in_the_reading_task_or_by_a_worker() -> None:
    seen: dict[str, str] = {}

    @tool("now", "d", {})
    async def now(args: dict[str, Any]) -> str:
        seen["now"] = str(anyio.get_current_task().name)
        return "ok"

    @tool("later", "d", {})
    async def later(args: dict[str, Any]) -> str:
        seen["later"] = str(anyio.get_current_task().name)
        await anyio.lowlevel.checkpoint()
        return "ok"

    server = create_sdk_mcp_server("s", tools=[now, later])
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        await call(fake, "now", {})
        await call(fake, "later", {})
    assert seen["later"] == WORKER
    assert seen["now"] != WORKER


async def test_a_call_cancelled_before_it_ran_gets_no_answer_either_way() -> None:
    now, later = twins(plain)
    server = create_sdk_mcp_server("s", tools=[now, later])
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        for mid, name in ((1, "now"), (2, "later")):
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
            cancel["params"] = {"requestId": mid}  # type: ignore[assignment]
            await fake.request("mcp_message", server_name="s", message=cancel)
            params = {"name": name, "arguments": {"n": mid}}
            message = {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}
            rid = await fake.start_request("mcp_message", server_name="s", message=message)
            await fake.request("no_such_subtype")  # a round trip: the call was handled
            assert not any(
                f.get("type") == "control_response" and f["response"]["request_id"] == rid
                for f in fake.received
            ), name


async def test_a_tool_with_a_context_and_the_audit_log() -> None:
    @tool("where", "d", {})
    async def where(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"{ctx.tool_name} {ctx.tool_use_id}"

    assert where.runs_now
    buf = io.StringIO()
    server = create_sdk_mcp_server("s", tools=[where])
    opts = ClaudeAgentOptions(mcp_servers={"s": server}, audit_log=AuditLog(buf))
    async with connected(opts) as (_, fake):
        params = {"name": "where", "arguments": {}, "_meta": {"claudecode/toolUseId": "tu_1"}}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        response = await fake.request("mcp_message", server_name="s", message=message)
    result = response["response"]["mcp_response"]["result"]
    assert result == {"content": [{"type": "text", "text": "where tu_1"}]}
    (record,) = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert record["what"] == "where" and record["outcome"] == "ok"


async def test_limits_and_versions_take_the_worker_path() -> None:
    """A server with a concurrency limit (a slot may have to be waited for), and a
    request naming its protocol version (its answer may need fields), go to workers."""
    seen: list[str] = []

    @tool("now", "d", {})
    async def now(args: dict[str, Any]) -> str:
        seen.append(str(anyio.get_current_task().name))
        return "ok"

    limited = create_sdk_mcp_server("s", tools=[now], max_concurrency=1)
    async with connected(ClaudeAgentOptions(mcp_servers={"s": limited})) as (_, fake):
        await call(fake, "now", {})
    server = create_sdk_mcp_server("s", tools=[now])
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        meta = {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}
        params = {"name": "now", "arguments": {}, "_meta": meta}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        response = await fake.request("mcp_message", server_name="s", message=message)
        await call(fake, "now", {}, mid=2)
    assert response["response"]["mcp_response"]["result"]["content"][0]["text"] == "ok"
    assert seen[:2] == [WORKER, WORKER] and seen[2] != WORKER


def test_which_handlers_run_at_once() -> None:
    async def awaits(args: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()

    async def async_with(args: dict[str, Any]) -> Any:
        async with anyio.Lock():
            return "x"

    async def async_for(args: dict[str, Any]) -> Any:
        async for _ in args["it"]:
            pass

    async def comprehension(args: dict[str, Any]) -> Any:
        return [x async for x in args["it"]]

    async def nested(args: dict[str, Any]) -> Any:
        async def inner() -> None:
            await anyio.lowlevel.checkpoint()

        return "inner is never awaited here"

    def sync(args: dict[str, Any]) -> Any:
        return "runs in a thread"

    async def plain_async(args: dict[str, Any]) -> Any:
        return "x"

    class Box:
        async def method(self, args: dict[str, Any]) -> Any:
            return "x"

    def runs_now(handler: Any) -> bool:
        return bool(tool("t", "d", {})(handler).runs_now)

    assert runs_now(plain_async) and runs_now(nested) and runs_now(Box().method)
    for handler in (awaits, async_with, async_for, comprehension, sync):
        assert not runs_now(handler), handler.__name__
    assert not runs_now(functools.partial(plain_async))  # conservatively not
