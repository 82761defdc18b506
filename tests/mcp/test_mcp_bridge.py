"""Servers of the official ``mcp`` package served in-process through :class:`McpBridge`."""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer

from ccwire import ClaudeAgentOptions, McpError, create_sdk_mcp_server, tool as ccwire_tool
from ccwire._conversation.argv import build_mcp_config, sdk_servers
from ccwire._mcp import bridge as _mcp_bridge
from ccwire._mcp.bridge import (
    McpBridge,
    as_served_server,
    from_message,
    is_official_server,
    is_server_object,
)

pytestmark = pytest.mark.anyio

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1.330"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Sink:
    """Records the notifications a bridged server sends to its session."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.changed = anyio.Event()

    async def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.changed.set()

    def methods(self) -> list[str]:
        return [m["method"] for m in self.messages]


def call(name: str, arguments: dict[str, Any], req_id: int = 2) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": {"progressToken": req_id}}
    return {"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": params}


@asynccontextmanager
async def session(bridge: McpBridge, sink: Sink) -> AsyncIterator[None]:
    detach = bridge.attach(sink)
    try:
        with anyio.fail_after(10):
            reply = await bridge.handle(INIT, send=sink)
            assert reply is not None and reply["id"] == 0 and "result" in reply
            assert await bridge.handle(INITIALIZED, send=sink) is None
            yield
    finally:
        detach()
        await bridge.aclose()


def make_official() -> tuple[MCPServer, dict[str, Any]]:
    state: dict[str, Any] = {
        "lifespans": 0,
        "closed": 0,
        "started": anyio.Event(),
        "cancelled": anyio.Event(),
    }

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[dict[str, Any]]:
        state["lifespans"] += 1
        try:
            yield {}
        finally:
            state["closed"] += 1

    official = MCPServer("official", lifespan=lifespan)

    @official.tool()
    async def add(a: int, b: int, ctx: Context) -> int:
        """Add two integers."""
        await ctx.report_progress(1, 2, "half way")
        return a + b

    @official.tool()
    async def hang(ctx: Context) -> str:
        """Never finishes."""
        state["started"].set()
        try:
            await anyio.sleep(3600)
        finally:
            state["cancelled"].set()
        return "unreachable"

    @official.tool()
    async def ping_back(ctx: Context) -> str:
        """Pings the client and asks for its roots."""
        await ctx.session.send_ping()
        try:
            await ctx.session.list_roots()
        except Exception as exc:
            return f"roots refused: {exc}"
        return "roots given"

    @official.resource("memo://note")
    def note() -> str:
        """A note."""
        return "remember the milk"

    return official, state


async def test_tools_flow_through_the_bridge_with_progress() -> None:
    official, _ = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    async with session(bridge, sink):
        listed = await bridge.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, send=sink)
        assert listed is not None and listed["id"] == 1
        names = [t["name"] for t in listed["result"]["tools"]]
        assert names == ["add", "hang", "ping_back"]
        reply = await bridge.handle(call("add", {"a": 2, "b": 40}, req_id=7), send=sink)
        assert reply is not None and reply["id"] == 7
        assert reply["result"]["structuredContent"] == {"result": 42}
        progress = [m for m in sink.messages if m["method"] == "notifications/progress"]
        assert progress == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 7, "progress": 1, "total": 2, "message": "half way"},
            }
        ]
        read = await bridge.handle(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "resources/read",
                "params": {"uri": "memo://note"},
            },
            send=sink,
        )
        assert read is not None
        assert read["result"]["contents"][0]["text"] == "remember the milk"


@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_server_to_client_requests_are_answered_or_refused() -> None:
    official, _ = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    async with session(bridge, sink):
        reply = await bridge.handle(call("ping_back", {}), send=sink)
        assert reply is not None
        text = reply["result"]["content"][0]["text"]
        assert text.startswith("roots refused") and "Method not found" in text


async def test_notifications_cancelled_cancels_the_handler_and_withdraws_the_answer() -> None:
    official, state = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    async with session(bridge, sink):
        replies: list[Any] = []

        async def run() -> None:
            replies.append(await bridge.handle(call("hang", {}, req_id=5), send=sink))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await state["started"].wait()
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 5, "reason": "AbortError: remote-cancel"},
            }
            assert await bridge.handle(cancel, send=sink) is None
        assert replies == [None]
        with anyio.fail_after(5):
            await state["cancelled"].wait()
        # the session still serves
        after = await bridge.handle(call("add", {"a": 1, "b": 1}, req_id=6), send=sink)
        assert after is not None and after["result"]["structuredContent"] == {"result": 2}


async def test_cancelling_the_caller_cancels_the_server_handler() -> None:
    official, state = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    async with session(bridge, sink):

        async def run() -> None:
            await bridge.handle(call("hang", {}, req_id=3), send=sink)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await state["started"].wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(5):
            await state["cancelled"].wait()


async def test_timeout_gives_a_jsonrpc_error() -> None:
    official, _ = make_official()
    bridge = McpBridge(official, timeout=0.2)
    sink = Sink()
    async with session(bridge, sink):
        reply = await bridge.handle(call("hang", {}, req_id=4), send=sink)
        assert reply == {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32001, "message": "Request timed out after 0.2 s"},
        }


async def test_lifespan_per_connection_and_reinitialize_restarts() -> None:
    official, state = make_official()
    bridge = McpBridge(official, shutdown_grace=2)
    sink = Sink()
    async with session(bridge, sink):
        assert state["lifespans"] == 1
        again = await bridge.handle(INIT, send=sink)  # e.g. after mcp_toggle
        assert again is not None and "result" in again
        assert state["lifespans"] == 2
        listed = await bridge.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, send=sink)
        assert listed is not None and "result" in listed
    assert state["closed"] == 2  # detach + aclose ended both loops


async def test_lowlevel_server_and_its_list_changed_notification() -> None:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return types.ListToolsResult(tools=[types.Tool(name="touch", input_schema=schema)])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="touched")])

    low = Server("low", on_list_tools=list_tools, on_call_tool=call_tool)
    bridge = McpBridge(low)
    sink = Sink()
    async with session(bridge, sink):
        reply = await bridge.handle(call("touch", {}), send=sink)
        assert reply is not None and reply["result"]["content"][0]["text"] == "touched"
        assert "notifications/tools/list_changed" in sink.methods()
        bogus = await bridge.handle({"jsonrpc": "2.0", "id": 9, "method": 3}, send=sink)
        assert bogus == {
            "jsonrpc": "2.0",
            "id": 9,
            "error": {"code": -32600, "message": "Invalid Request: method must be a string"},
        }
        no_method = await bridge.handle({"jsonrpc": "2.0", "id": [1]}, send=sink)
        assert no_method is not None
        assert no_method["id"] is None and no_method["error"]["code"] == -32600
        answer = {"jsonrpc": "2.0", "id": 11, "result": {}}  # the CLI answering a request
        assert await bridge.handle(answer, send=sink) is None
        unknown = await bridge.handle(
            {"jsonrpc": "2.0", "id": 10, "method": "prompts/list"}, send=sink
        )
        assert unknown is not None and unknown["error"]["code"] == -32601


class FastMCP:
    """A stand-in for mcp 1.x's ``mcp.server.fastmcp.FastMCP``: a class of the ``mcp``
    package with its own ``run(transport)`` (not the low-level one) and the low-level
    ``Server`` in ``_mcp_server`` (2.x's ``MCPServer`` has ``_lowlevel_server``)."""

    __module__ = "mcp.server.fastmcp.server"

    def __init__(self, name: str) -> None:
        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            schema = {"type": "object", "properties": {"who": {"type": "string"}}}
            return types.ListToolsResult(tools=[types.Tool(name="hello", input_schema=schema)])

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            who = (params.arguments or {}).get("who", "world")
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"hi {who}")])

        self._mcp_server = Server(name, on_list_tools=list_tools, on_call_tool=call_tool)

    @property
    def name(self) -> str:
        return str(self._mcp_server.name)

    def run(self, transport: str = "stdio") -> None:
        raise AssertionError("the bridge must run the low-level server, not FastMCP.run")


async def test_an_mcp_1x_fastmcp_object_is_bridged_through_its_mcp_server() -> None:
    fast = FastMCP("fast")
    assert not hasattr(fast, "_lowlevel_server")
    assert is_official_server(fast) and is_server_object(fast)
    bridge = as_served_server(fast)
    assert isinstance(bridge, McpBridge)
    assert bridge.server is fast and bridge.name == "fast"
    served = sdk_servers(ClaudeAgentOptions(mcp_servers={"fm": fast}).mcp_servers)
    assert isinstance(served["fm"], McpBridge) and served["fm"].server is fast
    sink = Sink()
    async with session(bridge, sink):
        listed = await bridge.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, send=sink)
        assert listed is not None
        assert [t["name"] for t in listed["result"]["tools"]] == ["hello"]
        reply = await bridge.handle(call("hello", {"who": "ccwire"}, req_id=2), send=sink)
        assert reply == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "hi ccwire"}], "isError": False},
        }


def test_mcp_1x_messages_wrapped_in_a_root_model_are_unwrapped() -> None:
    class RootModel:  # mcp 1.x's JSONRPCMessage: a pydantic RootModel around the message
        def __init__(self, root: Any) -> None:
            self.root = root

    class SessionMessage:
        def __init__(self, message: Any) -> None:
            self.message = message

    inner = types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"ok": True})
    expected = {"jsonrpc": "2.0", "id": 3, "result": {"ok": True}}
    assert from_message(SessionMessage(RootModel(inner))) == expected
    assert from_message(RootModel(inner)) == expected
    assert from_message(inner) == expected


def test_without_mcp_types_the_mcp_1x_message_model_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import types as pytypes

    validated: list[Any] = []

    class JSONRPCMessage:  # mcp 1.x's mcp.types.JSONRPCMessage
        @classmethod
        def model_validate(cls, data: Any) -> Any:
            validated.append(data)
            return cls()

    legacy = pytypes.ModuleType("mcp.types")
    legacy.JSONRPCMessage = JSONRPCMessage  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mcp_types", None)  # as with mcp 1.x: no mcp_types
    monkeypatch.setitem(sys.modules, "mcp.types", legacy)
    _mcp_bridge._wire.cache_clear()
    try:
        wrapped = _mcp_bridge.to_session_message({"jsonrpc": "2.0", "method": "ping", "id": 1})
    finally:
        _mcp_bridge._wire.cache_clear()
    assert isinstance(wrapped.message, JSONRPCMessage)
    assert validated == [{"jsonrpc": "2.0", "method": "ping", "id": 1}]


async def test_detected_and_wired_through_the_options() -> None:
    official, _ = make_official()
    low = Server("low")
    own = create_sdk_mcp_server("own")["instance"]
    assert is_official_server(official) and is_official_server(low)
    assert not is_official_server(own) and not is_official_server(object())
    assert is_server_object(own) and is_server_object(official)
    assert not is_server_object({"type": "sdk"})
    assert as_served_server(own) is own and as_served_server(42) is None
    options = ClaudeAgentOptions(
        mcp_servers={
            "fm": official,  # type: ignore[dict-item]
            "low": {"type": "sdk", "name": "low", "instance": low},  # type: ignore[typeddict-item]
            "own": own,
        }
    )
    assert build_mcp_config(options.mcp_servers) == {
        "mcpServers": {
            "fm": {"type": "sdk", "name": "fm"},
            "low": {"type": "sdk", "name": "low"},
            "own": {"type": "sdk", "name": "own"},
        }
    }
    served = sdk_servers(options.mcp_servers)
    assert isinstance(served["fm"], McpBridge) and served["fm"].server is official
    assert isinstance(served["low"], McpBridge) and served["own"] is own
    with pytest.raises(TypeError):
        McpBridge(object())


def test_importing_ccwire_does_not_import_mcp() -> None:
    code = (
        "import sys, ccwire, ccwire._mcp.bridge, ccwire._mcp.serve, ccwire._conversation.argv\n"
        "from ccwire._conversation.argv import sdk_servers\n"
        "sdk_servers({'x': {'type': 'http', 'url': 'https://h'}})\n"
        "bad = [m for m in ('mcp', 'mcp_types', 'pydantic') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


# ----------------------------------------------------------------------------- faults


async def test_a_server_whose_loop_fails_answers_the_request_in_flight(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[dict[str, Any]]:
        raise RuntimeError("database down")
        yield {}  # pragma: no cover - never reached

    broken = MCPServer("broken", lifespan=lifespan)
    bridge = McpBridge(broken)
    assert repr(bridge) == f"McpBridge({broken!r})"
    sink = Sink()
    detach = bridge.attach(sink)
    try:
        with anyio.fail_after(10):
            for _ in range(2):  # each try gets a fresh loop, which fails the same way
                reply = await bridge.handle(INIT, send=sink)
                assert reply == {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "error": {"code": -32603, "message": "MCP server 'broken' stopped"},
                }
    finally:
        detach()
        await bridge.aclose()
    failures = [r for r in caplog.records if "the bridged MCP server 'broken' failed" in r.message]
    assert len(failures) == 2 and "database down" in str(failures[0].exc_info)


async def test_notifications_reach_only_the_session_they_belong_to() -> None:
    official, _ = make_official()
    bridge = McpBridge(official)
    one, two = Sink(), Sink()
    detach_one, detach_two = bridge.attach(one), bridge.attach(two)
    try:
        with anyio.fail_after(10):
            # no `send`, and two sessions attached: whose notifications these are is unknown
            assert await bridge.handle(INIT, session_key="k") is not None
            reply = await bridge.handle(call("add", {"a": 1, "b": 2}), session_key="k")
            assert reply is not None and reply["result"]["structuredContent"] == {"result": 3}
    finally:
        detach_one()
        detach_two()
        await bridge.aclose()
    assert one.messages == [] and two.messages == []


async def test_a_failing_sink_loses_the_notification_not_the_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    official, _ = make_official()
    bridge = McpBridge(official)

    async def broken_sink(message: dict[str, Any]) -> None:
        raise OSError("connection reset")

    detach = bridge.attach(broken_sink)
    try:
        with anyio.fail_after(10):
            assert await bridge.handle(INIT, send=broken_sink) is not None
            reply = await bridge.handle(call("add", {"a": 2, "b": 2}), send=broken_sink)
            assert reply is not None and reply["result"]["structuredContent"] == {"result": 4}
    finally:
        detach()
        await bridge.aclose()
    assert "'official' lost a notifications/progress: connection reset" in caplog.text


@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_a_relayed_request_the_client_refuses() -> None:
    official, _ = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    asked: list[str] = []

    async def client(method: str, params: Mapping[str, Any], timeout: float | None) -> Any:
        asked.append(method)
        raise McpError("no roots here", code=-32602)

    async with session(bridge, sink):
        reply = await bridge.handle(call("ping_back", {}), send=sink, request=client)
    assert reply is not None
    assert reply["result"]["content"][0]["text"] == "roots refused: no roots here"
    assert asked == ["roots/list"]  # the ping was answered by the bridge itself


@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_a_relayed_answer_after_the_session_closed_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    official, _ = make_official()
    bridge = McpBridge(official, shutdown_grace=5)
    sink = Sink()
    asked, release = anyio.Event(), anyio.Event()

    async def client(method: str, params: Mapping[str, Any], timeout: float | None) -> Any:
        asked.set()
        await release.wait()
        return {"roots": []}

    detach = bridge.attach(sink)
    with anyio.fail_after(10):
        assert await bridge.handle(INIT, send=sink) is not None
        async with anyio.create_task_group() as tg:
            ask = functools.partial(bridge.handle, send=sink, request=client)
            tg.start_soon(ask, call("ping_back", {}))
            await asked.wait()
            detach()  # the connection closes while the client is still answering
            release.set()
        await bridge.aclose()
    assert "failed" not in caplog.text  # the late answer was dropped, not raised


async def test_a_cancel_for_no_request_in_flight_is_ignored() -> None:
    official, _ = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    async with session(bridge, sink):
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
        assert await bridge.handle({**cancel, "params": {"requestId": 99}}, send=sink) is None
        invalid = await bridge.handle({**cancel, "params": "not an object"}, send=sink)
        assert invalid is not None and invalid["error"]["code"] == -32600  # not a notification
        reply = await bridge.handle(call("add", {"a": 1, "b": 1}), send=sink)
        assert reply is not None and reply["result"]["structuredContent"] == {"result": 2}


def _gated_server() -> tuple[MCPServer, dict[str, anyio.Event]]:
    events = {name: anyio.Event() for name in ("started", "gate", "hung", "cancelled")}
    server = MCPServer("gated")

    @server.tool()
    async def stubborn() -> str:
        """Finishes when the gate opens, cancelled or not."""
        events["started"].set()
        with anyio.CancelScope(shield=True):
            await events["gate"].wait()
        return "late"

    @server.tool()
    async def hang() -> str:
        """Never finishes."""
        events["hung"].set()
        try:
            await anyio.sleep(3600)
        finally:
            events["cancelled"].set()
        return "unreachable"

    return server, events


async def test_a_client_id_reused_while_in_flight_cancels_the_latest_request() -> None:
    server, events = _gated_server()
    bridge = McpBridge(server)
    sink = Sink()
    replies: list[Any] = []
    async with session(bridge, sink):

        async def run(name: str) -> None:
            replies.append(await bridge.handle(call(name, {}, req_id=5), send=sink))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "stubborn")
            await events["started"].wait()
            tg.start_soon(run, "hang")  # the same id, while the first is still running
            await events["hung"].wait()
            events["gate"].set()
            while not replies:  # the first answered: its id no longer names it
                await anyio.lowlevel.checkpoint()
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
            assert await bridge.handle({**cancel, "params": {"requestId": 5}}, send=sink) is None
            await events["cancelled"].wait()  # the second one was cancelled
    assert replies[0]["result"]["structuredContent"] == {"result": "late"}
    assert replies[1:] == [None]


async def test_messages_the_bridge_or_the_mcp_package_refuse() -> None:
    official, state = make_official()
    bridge = McpBridge(official)
    sink = Sink()
    async with session(bridge, sink):
        assert await bridge.handle("not an object", send=sink) == {  # type: ignore[arg-type]
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid Request: a message must be a JSON object, got str",
            },
        }
        bad = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "not an object"}
        refused = await bridge.handle(bad, send=sink)
        assert refused is not None and refused["id"] == 3
        assert refused["error"]["code"] == -32600
        assert refused["error"]["message"].startswith("Invalid Request: ")
        # JSON-RPC 2.0 answers an invalid message even without an id, as SdkMcpServer does
        notice = {"jsonrpc": "2.0", "method": "notifications/progress", "params": "not an object"}
        assert await bridge.handle(notice, send=sink) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request: params must be an object"},
        }
        both = {"jsonrpc": "2.0", "id": 4, "result": {}, "error": {"code": 1, "message": "m"}}
        answered = await bridge.handle(both, send=sink)  # a response has one of the two
        assert answered is not None and answered["error"]["code"] == -32600
        reply = await bridge.handle(call("add", {"a": 1, "b": 1}), send=sink)  # still serving
        assert reply is not None and reply["result"]["structuredContent"] == {"result": 2}
    assert state["lifespans"] == 1


async def test_each_unhashable_sender_keeps_its_own_session() -> None:
    class Unhashable(Sink):
        def __eq__(self, other: object) -> bool:
            return other is self

        __hash__ = None  # type: ignore[assignment]

    official, state = make_official()
    bridge = McpBridge(official)
    first, second = Unhashable(), Unhashable()
    async with session(bridge, first), session(bridge, second):
        for n, sink in enumerate((first, second, first)):
            reply = await bridge.handle(call("add", {"a": n, "b": 1}, req_id=n + 1), send=sink)
            assert reply is not None and reply["result"]["structuredContent"] == {"result": n + 1}
    assert state["lifespans"] == 2  # one server loop per connection
    tokens = [[m["params"]["progressToken"] for m in s.messages] for s in (first, second)]
    assert tokens == [[1, 3], [2]]  # each connection got its own progress


# ------------------------------------------- the other way: an SDK server as an official one


async def test_an_sdk_server_serves_as_the_official_server_the_reference_gives() -> None:
    # claude-agent-sdk's create_sdk_mcp_server() gives an mcp.server.Server as the
    # instance, and code written for it serves that object: ag-ui-claude-sdk 0.2.3 puts it
    # behind HTTP with StreamableHTTPSessionManager(instance) (then gives the CLI an http
    # server) and its tests run it on memory streams. On ccwire's SdkMcpServer both
    # failed with AttributeError ('lifespan', 'run')
    from mcp.client.session import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    @ccwire_tool("add", "Add two numbers.", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    @ccwire_tool("deny", "Always fails.", {})
    async def deny(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "denied"}], "is_error": True}

    server: Any = create_sdk_mcp_server("calc", "2.0.0", tools=[add, deny])["instance"]
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(server.run, *server_streams, server.create_initialization_options())
        with anyio.fail_after(10):
            async with ClientSession(*client_streams) as client:
                started = await client.initialize()
                listed = await client.list_tools()
                summed = await client.call_tool("add", {"a": 2, "b": 3})
                denied = await client.call_tool("deny", {})
                invalid = await client.call_tool("add", {"a": "two"})
        tg.cancel_scope.cancel()
    assert (started.server_info.name, started.server_info.version) == ("calc", "2.0.0")
    assert [t.name for t in listed.tools] == ["add", "deny"]
    assert listed.tools[0].input_schema["required"] == ["a", "b"]
    assert (summed.is_error, summed.content[0].text) == (False, "5")  # type: ignore[union-attr]
    assert (denied.is_error, denied.content[0].text) == (True, "denied")  # type: ignore[union-attr]
    assert invalid.is_error
    assert callable(server.lifespan)  # what StreamableHTTPSessionManager enters
    with pytest.raises(AttributeError, match="'SdkMcpServer' object has no attribute 'nope'"):
        server.nope  # noqa: B018


class FalsySink(Sink):
    """A sink that is false as a bool (a container of what it got, say)."""

    def __bool__(self) -> bool:
        return False


async def test_each_sink_has_its_own_session_even_a_falsy_one() -> None:
    """Sessions are keyed as SdkMcpServer keys calls (`key_of`): the sink, not its truth
    value (two falsy sinks shared one session, each initialize restarting the other's)."""
    official, _ = make_official()
    bridge = McpBridge(official)
    first, second = FalsySink(), FalsySink()
    try:
        with anyio.fail_after(10):
            for sink in (first, second):
                reply = await bridge.handle(INIT, send=sink)
                assert reply is not None and "result" in reply
            assert len(bridge._sessions) == 2
    finally:
        await bridge.aclose()
