"""SdkMcpServer.handle(): the JSON-RPC methods the CLI sends, cancellation, notifications."""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ccwire import ClaudeAgentOptions, ClaudeSDKClient
from ccwire._core.errors import ToolDefinitionError, ToolError, UnsupportedFeatureError
from ccwire._mcp.sdk import create_sdk_mcp_server
from ccwire._mcp.server import SdkMcpServer
from ccwire._mcp.tools import (
    SdkMcpTool,
    ToolAnnotations,
    ToolContext,
    audio_content,
    image_content,
    resource_link,
    tool,
)
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fixtures.mcp_schema import (
    SchemaCheck,
    active_check,
    conforming,
    schema_checked_module,  # noqa: F401 (autouse: every test here)
)

pytestmark = pytest.mark.anyio


@tool("greet", "Greet someone by name", {"name": str})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}! Welcome."}]}


def make_server(*tools: SdkMcpTool[Any], **kwargs: Any) -> SdkMcpServer:
    config = create_sdk_mcp_server("demo_tools", tools=[greet, *tools], **kwargs)
    assert config["type"] == "sdk"
    assert config["name"] == "demo_tools"
    return config["instance"]


def call(name: str, arguments: Any = None, req_id: Any = 2, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {} if arguments is None else arguments}
    if meta:
        params["_meta"] = meta
    return {"method": "tools/call", "params": params, "jsonrpc": "2.0", "id": req_id}


class Recorder:
    """An async sink that records what it is sent and signals each delivery."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.arrived.set()

    async def next(self) -> dict[str, Any]:
        with anyio.fail_after(5):
            await self.arrived.wait()
        self.arrived = anyio.Event()
        return self.messages[-1]


LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


# --------------------------------------------------------------------------- lifecycle


async def test_initialize_is_repeatable_and_negotiates_the_version() -> None:
    server = make_server()
    init = {
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1.330"},
        },
        "jsonrpc": "2.0",
        "id": 0,
    }
    expected = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": "demo_tools", "version": "1.0.0"},
        },
    }
    assert await server.handle(init) == expected
    assert await server.handle(init) == expected
    old = {**init, "params": {"protocolVersion": "2024-11-05"}}
    assert (await server.handle(old) or {})["result"]["protocolVersion"] == "2024-11-05"
    unknown = {**init, "params": {"protocolVersion": "1999-01-01"}}
    assert (await server.handle(unknown) or {})["result"][
        "protocolVersion"
    ] == "2025-11-25"  # the newest


async def test_initialize_reports_instructions_and_version() -> None:
    server = SdkMcpServer("calc", "2.0.0", [greet], instructions="Use add for sums.")
    reply = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert reply is not None
    assert reply["result"]["instructions"] == "Use add for sums."
    assert reply["result"]["serverInfo"] == {"name": "calc", "version": "2.0.0"}


async def test_notifications_get_no_response() -> None:
    server = make_server()
    assert await server.handle({"method": "notifications/initialized", "jsonrpc": "2.0"}) is None
    assert await server.handle({"method": "notifications/whatever", "jsonrpc": "2.0"}) is None
    assert await server.handle({"method": "ping", "jsonrpc": "2.0"}) is None  # no id: no answer


async def test_ping() -> None:
    reply = await make_server().handle({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
    assert reply == {"jsonrpc": "2.0", "id": "p1", "result": {}}


async def test_a_jsonrpc_response_from_the_cli_is_accepted_silently() -> None:
    server = make_server()
    assert await server.handle({"jsonrpc": "2.0", "id": "srv-1", "result": {}}) is None
    assert (
        await server.handle({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}})
        is None
    )


# --------------------------------------------------------------------------- conformance


async def test_the_schema_check_of_every_test_fails_on_invalid_messages(
    mcp_schema_check: SchemaCheck,
) -> None:
    """The autouse check of tests/conftest.py (``conforming()``) is not a silent pass."""
    assert active_check() is mcp_schema_check  # this test, like every other, runs under it

    @tool("bad", "d", {})
    async def bad(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        assert ctx.send is not None
        await ctx.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
        return {"content": [], "_meta": "not an object"}  # _meta must be an object

    server, sink = make_server(bad), Recorder()
    with pytest.raises(AssertionError) as failed, conforming() as check:
        reply = await server.handle(call("bad", req_id=3), send=sink)
        ok = await server.handle(call("greet", {"name": "A"}, req_id=4), send=sink)
    bad_result = {"content": [], "_meta": "not an object"}
    assert reply == {"jsonrpc": "2.0", "id": 3, "result": bad_result}
    assert ok is not None and "result" in ok
    assert (check.responses, check.notifications) == (2, 0)
    message = str(failed.value)
    assert message.startswith("2 SDK MCP server message(s) broke the MCP schema:")
    assert "notification {'jsonrpc': '2.0', 'method': 'notifications/progress'" in message
    assert f"tools/call result {bad_result}" in message
    assert sink.messages[0]["method"] == "notifications/progress"  # still delivered
    assert mcp_schema_check.failures == []  # reported once, by the inner check
    assert mcp_schema_check.responses >= 2  # the valid traffic is handed on


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("message", "code", "text", "reply_id"),
    [
        ("not a dict", -32600, "must be a JSON object", None),
        ([1, 2], -32600, "batches are not supported", None),
        ({"jsonrpc": "2.0"}, -32600, "neither a request nor a response", None),
        ({"jsonrpc": "2.0", "id": 4}, -32600, "neither a request nor a response", 4),
        ({"jsonrpc": "2.0", "id": 4, "method": 12}, -32600, "method must be a string", 4),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}, -32600, "id must be", None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600, "id must be", None),
        ({"id": 12, "method": "ping"}, -32600, 'jsonrpc must be "2.0"', 12),
        ({"jsonrpc": "1.0", "id": "v1", "method": "ping"}, -32600, "jsonrpc must be", "v1"),
        ({"jsonrpc": 2.0, "id": 13, "method": "tools/list"}, -32600, "jsonrpc must be", 13),
        ({"method": "notifications/initialized"}, -32600, "jsonrpc must be", None),
        # JSON-RPC 2.0 answers an invalid message even without an id; MCP's params are an
        # object (an array is no MCP request: -32600, as `ccwire serve` answers it)
        *[
            (
                {"jsonrpc": "2.0", **id_, "method": method, "params": params},
                -32600,
                "params must be an object",
                id_.get("id"),
            )
            for id_, method in (({"id": 5}, "tools/call"), ({}, "notifications/initialized"))
            for params in ([1], "x")
        ],
        # a response has a result or an error, never both, and is JSON-RPC 2.0's too
        (
            {"jsonrpc": "2.0", "id": 14, "result": {}, "error": {"code": 1, "message": "m"}},
            -32600,
            "neither a request nor a response",
            14,
        ),
        ({"id": 15, "result": {}}, -32600, 'jsonrpc must be "2.0"', 15),
        (
            {"jsonrpc": "2.0", "id": 6, "method": "resources/watch"},
            -32601,
            "Method not found: resources/watch",
            6,
        ),
        (
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "nope"}},
            -32602,
            "Unknown tool: nope",
            7,
        ),
        ({"jsonrpc": "2.0", "id": 8, "method": "tools/call"}, -32602, "name must be a string", 8),
        (
            {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": 5}},
            -32602,
            "name must be a string",
            10,
        ),
        *[
            (
                {
                    "jsonrpc": "2.0",
                    "id": 11,
                    "method": "tools/call",
                    "params": {"name": "greet", "arguments": arguments},
                },
                -32602,
                "arguments must be an object",
                11,
            )
            for arguments in ([1, 2], "x", '{"name": "x"}', 3, True)
        ],
        (
            {"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "loud"}},
            -32602,
            "unknown log level",
            9,
        ),
    ],
)
async def test_malformed_and_unknown_requests_get_jsonrpc_errors(
    message: Any, code: int, text: str, reply_id: Any
) -> None:
    reply = await make_server().handle(message)
    assert reply is not None
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == reply_id
    assert reply["error"]["code"] == code
    assert text in reply["error"]["message"]


async def test_unknown_method_message_is_exact() -> None:
    reply = await make_server().handle({"jsonrpc": "2.0", "id": 1, "method": "tools/unknown"})
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found: tools/unknown"},
    }


# --------------------------------------------------------------------------- tools/list


async def test_tools_list_entries() -> None:
    @tool(
        "add",
        "Add",
        {"a": float},
        ToolAnnotations(read_only_hint=True),
        title="Adder",
        output_schema={"type": "object"},
        meta={"anthropic/alwaysLoad": True},
    )
    async def add(args: dict[str, Any]) -> str:
        return ""

    reply = await make_server(add).handle({"method": "tools/list", "jsonrpc": "2.0", "id": 1})
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "tools": [
                {
                    "name": "greet",
                    "description": "Greet someone by name",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
                {
                    "name": "add",
                    "title": "Adder",
                    "description": "Add",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"a": {"type": "number"}},
                        "required": ["a"],
                    },
                    "outputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                    "_meta": {"anthropic/alwaysLoad": True},
                },
            ]
        },
    }


async def test_tools_list_pagination_and_bad_cursor() -> None:
    many = [tool(f"t{i}", "d", {})(greet.handler) for i in range(5)]
    server = SdkMcpServer("big", tools=many, page_size=2)
    names: list[str] = []
    cursor: Any = None
    pages = 0
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        reply = await server.handle(
            {"jsonrpc": "2.0", "id": pages, "method": "tools/list", "params": params}
        )
        assert reply is not None
        result = reply["result"]
        names += [t["name"] for t in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        assert isinstance(cursor, str)
    assert names == ["t0", "t1", "t2", "t3", "t4"]
    assert pages == 3
    for bad in ["garbage", "", 17, "ccwire-tools:-1", "ccwire-tools:x"]:
        reply = await server.handle(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"cursor": bad}}
        )
        assert reply is not None
        assert reply["error"]["code"] == -32602


async def test_create_sdk_mcp_server_takes_a_page_size() -> None:
    many = [tool(f"t{i}", "d", {})(greet.handler) for i in range(3)]
    server = create_sdk_mcp_server("paged", tools=many, page_size=2)["instance"]
    assert server.page_size == 2
    first = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert first is not None
    assert [t["name"] for t in first["result"]["tools"]] == ["t0", "t1"]
    cursor = first["result"]["nextCursor"]
    params = {"cursor": cursor}
    rest = await server.handle(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params}
    )
    assert rest is not None
    assert [t["name"] for t in rest["result"]["tools"]] == ["t2"]
    assert "nextCursor" not in rest["result"]
    whole = create_sdk_mcp_server("whole", tools=many)["instance"]
    assert whole.page_size == 100


@pytest.mark.parametrize("size", [0, -1, 1.5, True, "2", None])
def test_page_size_must_be_a_positive_integer(size: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="page_size must be a positive integer"):
        create_sdk_mcp_server("s", page_size=size)


# --------------------------------------------------------------------------- tools/call


async def test_greet_call_matches_the_captured_trace() -> None:
    message = call(
        "greet",
        {"name": "Alice"},
        2,
        **{"claudecode/toolUseId": "toolu_011ps2", "progressToken": 2},
    )
    reply = await make_server().handle(message, session_id="s1")
    assert reply == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "Hello, Alice! Welcome."}]},
    }


async def test_raising_handler_and_tool_error() -> None:
    @tool("boom", "d", {})
    async def boom(args: dict[str, Any]) -> str:
        raise RuntimeError("kaput")

    @tool("fail", "d", {})
    async def fail(args: dict[str, Any]) -> str:
        raise ToolError("fail: something went wrong")

    server = make_server(boom, fail)
    reply = await server.handle(call("boom", req_id=3))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": "kaput"}], "isError": True},
    }
    reply = await server.handle(call("fail", req_id=4))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {
            "content": [{"type": "text", "text": "fail: something went wrong"}],
            "isError": True,
        },
    }


async def test_validation_failure_never_reaches_the_handler() -> None:
    calls: list[Any] = []

    @tool("add", "Add", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> str:
        calls.append(args)
        return "x"

    reply = await make_server(add).handle(call("add", {"a": 2}))
    assert reply is not None
    assert reply["result"] == {
        "content": [
            {
                "type": "text",
                "text": "Input validation error: invalid arguments for tool 'add': "
                "'b' is required (rule: required)",
            }
        ],
        "isError": True,
    }
    assert calls == []


async def test_sync_handler_runs_off_the_event_loop_thread() -> None:
    where: list[int] = []

    @tool("sync", "d", {})
    def sync(args: dict[str, Any]) -> str:
        where.append(threading.get_ident())
        return "done"

    reply = await make_server(sync).handle(call("sync"))
    assert reply is not None
    assert reply["result"] == {"content": [{"type": "text", "text": "done"}]}
    assert where
    assert where[0] != threading.get_ident()


async def test_sync_handler_reports_progress_and_logs_from_its_worker_thread() -> None:
    threads: list[int] = []

    @tool("crunch", "d", {"n": int})
    def crunch(args: dict[str, Any], ctx: ToolContext) -> str:
        threads.append(threading.get_ident())
        sent = [ctx.report_progress_sync(i, args["n"], f"step {i}") for i in range(1, 3)]
        sent.append(ctx.log_sync("info", {"crunched": args["n"]}))
        return json.dumps(sent)

    sink = Recorder()
    message = call("crunch", {"n": 2}, 5, progressToken="tok-5")
    reply = await make_server(crunch).handle(message, send=sink)
    assert reply == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": "[true, true, true]"}]},
    }
    assert threads and threads[0] != threading.get_ident()
    assert sink.messages == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "tok-5", "progress": i, "total": 2, "message": f"step {i}"},
        }
        for i in (1, 2)
    ] + [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": {"crunched": 2}},
        }
    ]


async def test_structured_results_through_the_server() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Forecast(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        city: str
        high: int

    @tool("forecast", "d", {"city": str}, output_schema=Forecast)
    async def forecast(args: dict[str, Any]) -> Any:
        if args["city"] == "Oslo":
            return Forecast(city="Oslo", high=21)
        return f"no forecast for {args['city']}"  # no structured data: refused

    server = make_server(forecast)
    listed = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert listed is not None
    assert listed["result"]["tools"][1]["outputSchema"] == {
        "type": "object",
        "title": "Forecast",
        "properties": {
            "city": {"type": "string", "title": "City"},
            "high": {"type": "integer", "title": "High"},
        },
        "required": ["city", "high"],
    }
    reply = await server.handle(call("forecast", {"city": "Oslo"}, 2))
    assert reply is not None
    assert reply["result"] == {
        "content": [{"type": "text", "text": '{"city": "Oslo", "high": 21}'}],
        "structuredContent": {"city": "Oslo", "high": 21},
    }
    refused = await server.handle(call("forecast", {"city": "Bergen"}, 3))
    assert refused is not None
    assert refused["result"]["isError"] is True
    assert "must return structured data" in refused["result"]["content"][0]["text"]


async def test_context_and_progress_through_send() -> None:
    contexts: list[ToolContext] = []

    @tool("work", "d", {"steps": int})
    async def work(args: dict[str, Any], ctx: ToolContext) -> str:
        contexts.append(ctx)
        await ctx.report_progress(1, args["steps"], "first step")
        await ctx.log("info", "halfway")
        return "ok"

    sink = Recorder()
    message = call(
        "work", {"steps": 2}, 7, **{"claudecode/toolUseId": "toolu_9", "progressToken": 7}
    )
    reply = await make_server(work).handle(message, session_id="sess", send=sink)
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [{"type": "text", "text": "ok"}]},
    }
    ctx = contexts[0]
    assert (ctx.tool_use_id, ctx.progress_token, ctx.request_id) == ("toolu_9", 7, 7)
    assert (ctx.session_id, ctx.server_name, ctx.tool_name) == ("sess", "demo_tools", "work")
    assert sink.messages == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 7, "progress": 1, "total": 2, "message": "first step"},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "halfway"},
        },
    ]


async def test_logging_set_level_filters_per_session() -> None:
    @tool("chatty", "d", {})
    async def chatty(args: dict[str, Any], ctx: ToolContext) -> str:
        await ctx.log("info", "detail")
        await ctx.log("error", "bad")
        return ""

    server, quiet, loud = make_server(chatty), Recorder(), Recorder()
    set_level = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "logging/setLevel",
        "params": {"level": "error"},
    }
    assert await server.handle(set_level, send=quiet) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    await server.handle(call("chatty"), send=quiet)
    await server.handle(call("chatty"), send=loud)
    assert [m["params"]["data"] for m in quiet.messages] == ["bad"]
    assert [m["params"]["data"] for m in loud.messages] == ["detail", "bad"]


async def test_return_forms_and_content_helpers_pass_through() -> None:
    blocks = [
        image_content(b"img", "image/png"),
        audio_content(b"wav", "audio/wav"),
        resource_link("file:///x", "x"),
        {"type": "resource", "resource": {"uri": "u", "text": "t"}},
    ]

    @tool("mixed", "d", {})
    async def mixed(args: dict[str, Any]) -> list[dict[str, Any]]:
        return blocks

    @tool("plain", "d", {})
    async def plain(args: dict[str, Any]) -> str:
        return "just text"

    server = make_server(mixed, plain)
    reply = await server.handle(call("mixed"))
    assert reply is not None
    assert reply["result"] == {"content": blocks}
    reply = await server.handle(call("plain"))
    assert reply is not None
    assert reply["result"] == {"content": [{"type": "text", "text": "just text"}]}


async def test_timeout_cancels_the_handler() -> None:
    cancelled = anyio.Event()

    @tool("slow", "d", {}, timeout=0.05)
    async def slow(args: dict[str, Any]) -> str:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    reply = await make_server(slow).handle(call("slow", req_id=11))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 11,
        "result": {
            "content": [{"type": "text", "text": "Tool 'slow' timed out after 0.05 s"}],
            "isError": True,
        },
    }
    assert cancelled.is_set()


async def test_default_timeout_applies_to_tools_without_their_own() -> None:
    @tool("slow", "d", {})
    def slow(args: dict[str, Any]) -> str:  # a blocking handler: its thread is abandoned
        threading.Event().wait(0.5)
        return "late"

    reply = await make_server(slow, default_timeout=0.05).handle(call("slow"))
    assert reply is not None
    assert reply["result"]["isError"] is True
    assert "timed out after 0.05 s" in reply["result"]["content"][0]["text"]


def slow_tool(started: anyio.Event, finished: list[str]) -> SdkMcpTool[Any]:
    @tool("slow", "d", {})
    async def slow(args: dict[str, Any]) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            finished.append("cancelled")
        return "never"

    return slow


async def run_and_capture(
    tg: anyio.abc.TaskGroup, fn: Callable[[], Awaitable[Any]], into: list[Any]
) -> None:
    async def runner() -> None:
        into.append(await fn())

    tg.start_soon(runner)


async def test_notifications_cancelled_cancels_exactly_that_call() -> None:
    started, finished, replies = anyio.Event(), list[str](), list[Any]()
    server = make_server(slow_tool(started, finished))
    send = Recorder()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await run_and_capture(
                tg, lambda: server.handle(call("slow", req_id=21), send=send), replies
            )
            await started.wait()
            other = Recorder()  # another session cancelling the same id must not hit ours
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 21, "reason": "AbortError"},
            }
            assert await server.handle(cancel, send=other) is None
            assert finished == []
            assert await server.handle(cancel, send=send) is None
    assert replies == [None]
    assert finished == ["cancelled"]


async def test_cancel_that_overtakes_its_call_still_cancels_it() -> None:
    ran: list[str] = []

    @tool("note", "d", {"name": str})
    async def note(args: dict[str, Any]) -> str:
        ran.append(args["name"])
        return "noted"

    server = make_server(note)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    assert await server.handle(cancel, session_key="k") is None
    # not run; answered all the same (a client that cancelled it ignores the answer; one
    # that reused the id of a request it cancelled before sending this one learns why)
    reply = await server.handle(call("note", {"name": "A"}, 5), session_key="k")
    assert reply is not None and reply["result"]["isError"] is True
    assert "notifications/cancelled" in reply["result"]["content"][0]["text"]
    assert ran == []
    reply = await server.handle(call("note", {"name": "B"}, 5), session_key="k")
    assert reply is not None  # the pending cancellation was used up
    assert reply["result"]["content"][0]["text"] == "noted"
    assert ran == ["B"]


@pytest.mark.parametrize("first", ["tools/call", "tools/list"])
async def test_a_cancellation_after_the_answer_withdraws_no_later_call(first: str) -> None:
    """A ``notifications/cancelled`` that comes after its call was answered (the
    client's interrupt raced the answer) is not kept for a later call that reuses the
    id: that one is run. After another request, the later call is answered all the
    same, with an error saying why it did not run."""
    server = make_server()
    if first == "tools/call":
        request = call("greet", {"name": "A"}, 5)
    else:
        request = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    assert await server.handle(request, session_key="k") is not None
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    assert await server.handle(cancel, session_key="k") is None
    reply = await server.handle(call("greet", {"name": "B"}, 5), session_key="k")
    assert reply is not None
    text = reply["result"]["content"][0]["text"]
    if first == "tools/call":
        assert text == "Hello, B! Welcome."
    else:
        assert reply["result"]["isError"] is True and "notifications/cancelled" in text


async def test_cancellation_through_the_callers_scope() -> None:
    started, finished = anyio.Event(), list[str]()
    server = make_server(slow_tool(started, finished))
    outcome: list[str] = []

    async def control_layer_task() -> None:
        with anyio.CancelScope() as scope:
            await server.handle(call("slow", req_id=1), session_key="s", cancel_scope=scope)
            outcome.append("returned")
        outcome.append("cancelled" if scope.cancelled_caught else "not cancelled")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(control_layer_task)
            await started.wait()
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1},
            }
            await server.handle(cancel, session_key="s")
    assert outcome == ["cancelled"]
    assert finished == ["cancelled"]


async def test_calls_run_concurrently() -> None:
    a_in, b_in = anyio.Event(), anyio.Event()

    @tool("a", "d", {}, ToolAnnotations(read_only_hint=True))
    async def a(args: dict[str, Any]) -> str:
        a_in.set()
        await b_in.wait()
        return "a"

    @tool("b", "d", {}, ToolAnnotations(read_only_hint=True))
    async def b(args: dict[str, Any]) -> str:
        b_in.set()
        await a_in.wait()
        return "b"

    server, replies = make_server(a, b), list[Any]()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await run_and_capture(tg, lambda: server.handle(call("a", req_id=1)), replies)
            await run_and_capture(tg, lambda: server.handle(call("b", req_id=2)), replies)
    assert sorted(r["result"]["content"][0]["text"] for r in replies) == ["a", "b"]


async def test_max_concurrency_limits_running_calls() -> None:
    release, running, peak = anyio.Event(), [0], [0]

    @tool("gate", "d", {})
    async def gate(args: dict[str, Any]) -> str:
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await release.wait()
        running[0] -= 1
        return "ok"

    server, replies = make_server(gate, max_concurrency=1), list[Any]()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for i in range(3):
                await run_and_capture(
                    tg, functools.partial(server.handle, call("gate", req_id=i)), replies
                )
            await anyio.wait_all_tasks_blocked()
            assert running[0] == 1
            release.set()
    assert peak[0] == 1
    assert len(replies) == 3


@pytest.mark.parametrize("backends", [("asyncio", "trio"), ("trio", "asyncio")])
def test_max_concurrency_holds_on_each_event_loop_the_server_serves(
    backends: tuple[str, str],
) -> None:
    """A server (a module-level one, say) serving on one event loop and then on another
    (a second anyio.run, trio after asyncio) limits its calls there too: the limiter
    of the first loop could not be waited on from the second (every call failed)."""

    @tool("gate", "d", {})
    async def gate(args: dict[str, Any]) -> str:
        await anyio.lowlevel.checkpoint()  # the other call waits for the limiter meanwhile
        return "ok"

    server = make_server(gate, max_concurrency=1)

    async def calls() -> list[Any]:
        replies = list[Any]()
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(2):
                    await run_and_capture(
                        tg, functools.partial(server.handle, call("gate", req_id=i)), replies
                    )
        return replies

    for backend in backends:
        replies = anyio.run(calls, backend=backend)
        assert [r["result"]["content"][0]["text"] for r in replies] == ["ok", "ok"], backend


# --------------------------------------------------------------------------- tool set changes


async def test_add_and_remove_tool_notify_every_attached_sink() -> None:
    server = make_server()
    first, second = Recorder(), Recorder()
    detach_first = server.attach(first)
    server.attach(second)

    async def broken(message: dict[str, Any]) -> None:
        raise ConnectionError("session gone")

    server.attach(broken)
    extra = tool("extra", "d", {})(greet.handler)
    server.add_tool(extra)
    assert await first.next() == LIST_CHANGED
    assert await second.next() == LIST_CHANGED
    assert list(server.tools) == ["greet", "extra"]
    listed = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["greet", "extra"]

    detach_first()
    detach_first()  # idempotent
    assert server.remove_tool("extra") is extra
    assert await second.next() == LIST_CHANGED
    assert len(first.messages) == 1
    listed = await server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["greet"]


async def test_changes_are_coalesced_until_delivered() -> None:
    server = make_server()
    sink = Recorder()
    server.attach(sink)
    server.add_tool(tool("x", "d", {})(greet.handler))
    server.add_tool(tool("y", "d", {})(greet.handler))
    server.remove_tool("x")
    assert await sink.next() == LIST_CHANGED
    await anyio.wait_all_tasks_blocked()
    assert sink.messages == [LIST_CHANGED]


async def test_add_tool_from_a_worker_thread_reaches_the_sink() -> None:
    server = make_server()
    sink = Recorder()
    server.attach(sink)

    @tool("installer", "d", {})
    def installer(args: dict[str, Any]) -> str:
        server.add_tool(tool("late_tool", "d", {})(greet.handler))
        return "installed"

    server.add_tool(installer)
    assert await sink.next() == LIST_CHANGED
    reply = await server.handle(call("installer"))
    assert reply is not None
    assert reply["result"]["content"][0]["text"] == "installed"
    assert await sink.next() == LIST_CHANGED
    assert "late_tool" in server.tools


async def test_notify_tools_changed_delivers_now() -> None:
    server = make_server()
    sink = Recorder()
    server.attach(sink)
    await server.notify_tools_changed()
    assert sink.messages == [LIST_CHANGED]


def test_add_tool_without_a_loop_is_remembered_for_later() -> None:
    server = make_server()
    sink = Recorder()
    server.attach(sink)  # no event loop running: nothing can be sent yet
    server.add_tool(tool("later", "d", {})(greet.handler))

    async def main() -> None:
        await server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert await sink.next() == LIST_CHANGED

    anyio.run(main)
    assert sink.messages == [LIST_CHANGED]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_delivery_lost_with_its_event_loop_does_not_block_later_ones(backend: str) -> None:
    server = make_server()
    sink = Recorder()
    server.attach(sink)

    async def change_and_leave() -> None:
        server.add_tool(tool("first", "d", {})(greet.handler))  # the loop ends before delivery

    async def change_and_wait() -> None:
        server.add_tool(tool("second", "d", {})(greet.handler))
        assert await sink.next() == LIST_CHANGED

    anyio.run(change_and_leave, backend=backend)
    anyio.run(change_and_wait, backend=backend)
    assert LIST_CHANGED in sink.messages


def test_duplicate_names_and_bad_tools_are_rejected() -> None:
    with pytest.raises(ToolDefinitionError, match="duplicate tool name 'greet'"):
        SdkMcpServer("s", tools=[greet, tool("greet", "other", {})(greet.handler)])
    server = make_server()
    with pytest.raises(ToolDefinitionError, match="duplicate"):
        server.add_tool(greet)
    with pytest.raises(ToolDefinitionError, match="SdkMcpTool"):
        server.add_tool("greet")  # type: ignore[arg-type]

    def add(a: float, b: float) -> float:  # a plain function: says how to make it a tool
        return a + b

    with pytest.raises(ToolDefinitionError, match=r"decorate it, `@tool\('add', \"what it does"):
        SdkMcpServer("s", tools=[add])  # type: ignore[list-item]
    # one tool, or a dict of them, where the list goes: a bare "'SdkMcpTool' object is
    # not iterable", or "got 'greet'" (the dict's first key)
    with pytest.raises(
        ToolDefinitionError, match=r"^tools must be a list of tools: write tools=\[greet\]$"
    ):
        create_sdk_mcp_server("s", tools=greet)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match=r"not a dict: write tools=\[greet\]$"):
        create_sdk_mcp_server("s", tools={"greet": greet})  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match=r"not a int: write tools=\[\.\.\.\]$"):
        create_sdk_mcp_server("s", tools=5)  # type: ignore[arg-type]  # "'int' object is not iterable"
    with pytest.raises(KeyError):
        server.remove_tool("missing")
    with pytest.raises(TypeError):
        server.tools["x"] = greet  # type: ignore[index]
    with pytest.raises(ToolDefinitionError):
        SdkMcpServer("s", max_concurrency=0)


@asynccontextmanager
async def serving(server: SdkMcpServer) -> AsyncIterator[FakeCLI]:
    """A client serving ``server`` as ``demo_tools``, connected to a fake CLI (within
    15 s), before the MCP ``initialize``."""
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    config = {"type": "sdk", "name": "demo_tools", "instance": server}
    options = ClaudeAgentOptions(mcp_servers={"demo_tools": config})  # type: ignore[dict-item]
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options, transport=transport):
                yield fake


@asynccontextmanager
async def connected(server: SdkMcpServer) -> AsyncIterator[FakeCLI]:
    """A client serving ``server`` as ``demo_tools``, connected to a fake CLI."""
    async with serving(server) as fake:
        init = await fake.mcp("demo_tools", "initialize", {"protocolVersion": "2025-11-25"})
        assert init["response"]["mcp_response"]["result"]["capabilities"]["tools"] == {
            "listChanged": True
        }
        yield fake


ACK = {"mcp_response": {"jsonrpc": "2.0", "result": {}}}


def answered(fake: FakeCLI, request_id: str) -> bool:
    """Whether the fake CLI has read the SDK's answer to one of its requests."""
    return any(
        f.get("type") == "control_response" and f["response"].get("request_id") == request_id
        for f in fake.received
    )


@pytest.mark.parametrize(
    ("fields", "reply_id", "text"),
    [
        ({"message": [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]}, None, "JSON object"),
        ({"message": []}, None, "JSON object"),
        ({"message": "ping"}, None, "JSON object"),
        ({}, None, "JSON object"),
        ({"server_name": 5, "message": {"jsonrpc": "2.0", "id": 3, "method": "ping"}}, 3, "5"),
        ({"server_name": None, "message": {"jsonrpc": "2.0", "id": 4, "method": "ping"}}, 4, ""),
    ],
)
async def test_an_unreadable_mcp_message_gets_a_jsonrpc_error(
    fields: dict[str, Any], reply_id: Any, text: str
) -> None:
    """A batch array, a message that is no object, or no server name: the CLI's MCP
    client gets a JSON-RPC Invalid Request error (not a control error it cannot read),
    and the connection serves on."""
    async with connected(make_server()) as fake:
        answer = await fake.request("mcp_message", **{"server_name": "demo_tools", **fields})
        assert answer["subtype"] == "success"
        reply = answer["response"]["mcp_response"]
        assert reply["id"] == reply_id
        assert reply["error"]["code"] == -32600
        assert text in reply["error"]["message"]
        ping = await fake.mcp("demo_tools", "ping")
        assert ping["response"]["mcp_response"]["result"] == {}


async def test_add_tool_while_connected_sends_list_changed_to_the_cli() -> None:
    server = make_server()
    async with connected(server) as fake:
        server.add_tool(tool("extra", "d", {})(greet.handler))
        announced = await fake.receive("control_request", "mcp_message")
        assert announced["request"] == {
            "subtype": "mcp_message",
            "server_name": "demo_tools",
            "message": LIST_CHANGED,
        }
        await fake.respond(announced["request_id"], ACK)
        listed = await fake.mcp("demo_tools", "tools/list")
        names = [t["name"] for t in listed["response"]["mcp_response"]["result"]["tools"]]
        assert names == ["greet", "extra"]

        # the ack completes the delivery: notify_tools_changed() returns only once acked
        delivered = anyio.Event()

        async def notify() -> None:
            await server.notify_tools_changed()
            delivered.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(notify)
            again = await fake.receive("control_request", "mcp_message")
            assert again["request"]["message"] == LIST_CHANGED
            assert not delivered.is_set()
            await fake.respond(again["request_id"], ACK)
            await delivered.wait()


async def test_a_tool_call_that_adds_a_tool_is_answered_after_the_cli_acked_the_change() -> None:
    server = make_server()

    @tool("installer", "Adds a tool", {})
    async def installer(args: dict[str, Any]) -> str:
        server.add_tool(tool("late", "d", {})(greet.handler))
        return "installed"

    server.add_tool(installer)  # before connecting: nobody to tell
    async with connected(server) as fake:
        params = {"name": "installer", "arguments": {}}
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        rid = await fake.start_request("mcp_message", server_name="demo_tools", message=message)
        announced = await fake.receive("control_request", "mcp_message")
        assert announced["request"]["message"] == LIST_CHANGED
        await anyio.wait_all_tasks_blocked()  # an answer sent now would precede the pong
        pong = await fake.mcp("demo_tools", "ping")
        assert pong["response"]["mcp_response"]["result"] == {}
        assert not answered(fake, rid)  # the answer waits for the CLI's ack
        await fake.respond(announced["request_id"], ACK)
        reply = await fake.response_to(rid)
        assert reply["response"]["mcp_response"] == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": [{"type": "text", "text": "installed"}]},
        }
    assert list(server.tools) == ["greet", "installer", "late"]


async def test_a_cli_that_listed_the_tools_gets_the_answer_after_it_re_listed_them() -> None:
    server = make_server()

    @tool("installer", "Adds a tool", {})
    async def installer(args: dict[str, Any]) -> str:
        server.add_tool(tool("late", "d", {})(greet.handler))
        return "installed"

    server.add_tool(installer)
    async with connected(server) as fake:
        await fake.mcp("demo_tools", "tools/list")  # what the CLI does at start
        params = {"name": "installer", "arguments": {}}
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        rid = await fake.start_request("mcp_message", server_name="demo_tools", message=message)
        announced = await fake.receive("control_request", "mcp_message")
        await fake.respond(announced["request_id"], ACK)
        await anyio.wait_all_tasks_blocked()
        await fake.mcp("demo_tools", "ping")
        assert not answered(fake, rid)  # the answer waits for the re-list
        relisted = await fake.mcp("demo_tools", "tools/list")
        tools = relisted["response"]["mcp_response"]["result"]["tools"]
        assert [t["name"] for t in tools] == ["greet", "installer", "late"]
        reply = await fake.response_to(rid)
        assert reply["response"]["mcp_response"]["result"]["content"][0]["text"] == "installed"


async def test_the_answer_waits_for_the_re_list_of_its_own_session_only() -> None:
    server, sink, other = make_server(), Recorder(), Recorder()
    server.attach(sink)

    @tool("installer", "Adds a tool", {})
    async def installer(args: dict[str, Any]) -> str:
        server.add_tool(tool(f"t{len(server.tools)}", "d", {})(greet.handler))
        return "installed"

    server.add_tool(installer)
    assert await sink.next() == LIST_CHANGED
    tools_list = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    await server.handle(tools_list, session_key="cli")
    await server.handle(tools_list, session_key="other", send=other)
    replies: list[Any] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await run_and_capture(
                tg, lambda: server.handle(call("installer", req_id=2), session_key="cli"), replies
            )
            assert await sink.next() == LIST_CHANGED
            await anyio.wait_all_tasks_blocked()
            await server.handle(tools_list, session_key="other")  # not the caller's session
            await anyio.wait_all_tasks_blocked()
            assert replies == []
            await server.handle(tools_list, session_key="cli")
    assert replies[0]["result"]["content"][0]["text"] == "installed"
    # a session that does not re-list in time is answered anyway, and not waited for again
    server.relist_timeout = 0.05
    first = await server.handle(call("installer", req_id=3), session_key="other")
    assert first is not None and "result" in first
    server.relist_timeout = 3600
    with anyio.fail_after(5):
        again = await server.handle(call("installer", req_id=4), session_key="other")
    assert again is not None and "result" in again


async def test_a_call_that_changes_the_tools_answers_after_the_change_is_announced() -> None:
    server = make_server()
    order: list[str] = []
    release = anyio.Event()

    @tool("installer", "Adds a tool", {})
    async def installer(args: dict[str, Any]) -> str:
        server.add_tool(tool("late", "d", {})(greet.handler))
        return "installed"

    server.add_tool(installer)  # no sink yet: nothing to announce

    async def slow_sink(message: dict[str, Any]) -> None:
        order.append("announced")
        await release.wait()
        order.append("acknowledged")

    server.attach(slow_sink)

    async def run() -> None:
        reply = await server.handle(call("installer"))
        assert reply is not None and reply["result"]["content"][0]["text"] == "installed"
        order.append("answered")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await anyio.wait_all_tasks_blocked()
            assert order == ["announced"]  # the answer waits for the CLI to know the new tool
            release.set()
    assert order == ["announced", "acknowledged", "answered"]


# ------------------------------------------------- CLIs that cannot re-list (2.1.197)


def client_info(version: str) -> dict[str, Any]:
    """The ``initialize`` params a Claude Code CLI of ``version`` sends an SDK server."""
    info = {"name": "claude-code", "title": "Claude Code", "version": version}
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}


@asynccontextmanager
async def introduced(server: SdkMcpServer, version: str) -> AsyncIterator[FakeCLI]:
    """Connected to a fake CLI whose MCP handshake says it is CLI ``version``."""
    async with serving(server) as fake:
        await fake.mcp("demo_tools", "initialize", client_info(version))
        await fake.mcp("demo_tools", "tools/list")
        yield fake


def mcp_messages_sent(fake: FakeCLI) -> list[Any]:
    return [
        f["request"]["message"]
        for f in fake.received
        if f.get("type") == "control_request" and f["request"]["subtype"] == "mcp_message"
    ]


async def test_notify_tools_changed_raises_for_a_cli_that_never_re_lists() -> None:
    server = make_server()
    async with introduced(server, "2.1.197") as fake:
        with pytest.raises(UnsupportedFeatureError) as refused:
            await server.notify_tools_changed()
        await fake.mcp("demo_tools", "ping")  # the session goes on
    assert refused.value.subtype == "mcp_message"
    assert str(refused.value) == (
        "the tools of the in-process MCP server 'demo_tools' changed, but the connected "
        "Claude Code CLI (2.1.197) lacks the 'sdk_mcp_tools_list_changed' capability: it "
        "never re-lists the tools, so the model keeps the tool list it got when the server "
        "connected (upgrade the CLI, or register every tool before connecting)"
    )
    assert mcp_messages_sent(fake) == []  # not sent to no effect


async def test_background_changes_warn_once_per_session_on_such_a_cli(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = make_server()
    caplog.set_level(logging.WARNING, logger="ccwire")
    async with introduced(server, "2.1.197") as fake:
        for name in ("one", "two"):
            server.add_tool(tool(name, "d", {})(greet.handler))
            await anyio.wait_all_tasks_blocked()  # the background delivery ran
        server.remove_tool("one")
        await anyio.wait_all_tasks_blocked()
    warnings = [r.getMessage() for r in caplog.records if r.name == "ccwire"]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("ccwire: MCP server 'demo_tools': the tools of the in-process")
    assert "'sdk_mcp_tools_list_changed'" in warnings[0]
    assert mcp_messages_sent(fake) == []


async def test_a_cli_that_re_lists_still_gets_the_notification() -> None:
    server = make_server()
    async with introduced(server, "2.1.330") as fake, anyio.create_task_group() as tg:
        tg.start_soon(server.notify_tools_changed)
        announced = await fake.receive("control_request", "mcp_message")
        await fake.respond(announced["request_id"], ACK)
    assert announced["request"]["message"] == LIST_CHANGED


async def test_one_refusing_session_does_not_keep_the_others_from_the_news() -> None:
    server = make_server()
    told = Recorder()

    async def old_cli(message: dict[str, Any]) -> None:
        raise UnsupportedFeatureError("cannot re-list: lacks 'sdk_mcp_tools_list_changed'")

    server.attach(old_cli)
    server.attach(told)
    with pytest.raises(UnsupportedFeatureError, match="cannot re-list"):
        await server.notify_tools_changed()
    assert told.messages == [LIST_CHANGED]
