"""Conformance: every JSON-RPC message our in-process server produces, checked against the
official MCP schema (the ``mcp-types`` package: the generated per-version wire models).

Each response is validated three ways:

* the envelope parses as a JSON-RPC response or error (``jsonrpc_message_adapter``);
* a result parses as the schema's result type for its method and protocol version
  (``mcp_types.methods.parse_server_result``: the per-version surface, then the models);
* nothing is lost in a round trip through the schema (``serialize_server_result``): the
  wire models ignore unknown fields, so a misspelled or misplaced field would be
  dropped silently; we require the dump to equal what we sent.

Notifications the server emits (progress, log messages, list changes) are validated the
same way with ``parse_server_notification``.  The scenario set runs at every protocol
version reachable by the ``initialize`` handshake.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import mcp_types
import pytest
from mcp_types import jsonrpc_message_adapter, methods as spec
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ccwire import (
    ToolAnnotations,
    ToolContext,
    ToolError,
    audio_content,
    create_sdk_mcp_server,
    embedded_blob_resource,
    embedded_text_resource,
    image_content,
    prompt,
    resource,
    resource_link,
    tool,
)
from ccwire._mcp.server import SdkMcpServer
from tests.fixtures.summary import KEY as SUMMARY

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n"
ERROR_CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32001}


# --------------------------------------------------------------------------- the server


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float
    summary: str


@tool(
    "weather",
    "Weather for a city",
    {"city": str, "units": Literal["metric", "imperial"]},
    title="Weather",
    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True, title="Weather"),
    output_schema=Weather,
    meta={"example.com/owner": "tests"},
)
async def weather(args: dict[str, Any], ctx: ToolContext) -> Weather:
    await ctx.report_progress(1, 2, "looking outside")
    await ctx.log("info", {"city": args["city"]}, logger="weather")
    return Weather(args["city"], 21.5, "sunny")


@tool("media", "Every content type", {})
async def media(args: dict[str, Any]) -> list[Any]:
    return [
        "text first",
        image_content(PNG, "image/png"),
        audio_content(b"RIFF", "audio/wav"),
        resource_link("file:///notes.txt", "notes", mime_type="text/plain", size=4),
        embedded_text_resource("memo://a", "embedded", "text/plain"),
        embedded_blob_resource("memo://b", b"\x00\x01", "application/octet-stream"),
    ]


@tool("fail", "Always fails", {"how": Literal["tool_error", "crash"]})
async def fail(args: dict[str, Any]) -> str:
    if args["how"] == "tool_error":
        raise ToolError("exactly this message")
    raise RuntimeError("boom")


@tool("nothing", "Returns nothing", {})
def nothing(args: dict[str, Any]) -> None:
    return None


@tool("stuck", "Times out", {}, timeout=0.05)
async def stuck(args: dict[str, Any]) -> str:
    await anyio.sleep(3600)
    return "unreachable"


@tool("raw_result", "A hand-built CallToolResult", {})
async def raw_result(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "raw"}], "isError": False, "_meta": {"k": 1}}


@resource("config://app", mime_type="application/json", title="Config", size=17)
def config() -> dict[str, Any]:
    """The configuration."""
    return {"debug": True}


@resource("blob://logo", mime_type="image/png", annotations={"audience": ["user"], "priority": 0.5})
def logo() -> bytes:
    return PNG


@resource("users://{user_id}{?verbose}", description="A user")
def user(user_id: int, verbose: bool = False) -> str:
    return f"user {user_id} verbose={verbose}"


@resource("broken://x")
def broken() -> str:
    raise RuntimeError("cannot read")


@prompt("review", "Review code", title="Code review")
def review(code: str, style: str = "pep8") -> list[Any]:
    return [
        {"role": "user", "content": f"Review for {style}:\n{code}"},
        {"role": "assistant", "content": "Sure."},
        image_content(PNG, "image/png"),
        embedded_text_resource("memo://guide", "Be kind.", "text/plain"),
    ]


@prompt("plain")
def plain() -> str:
    """Just text."""
    return "Say hello."


def make_server() -> SdkMcpServer:
    config_dict = create_sdk_mcp_server(
        "conformance",
        version="9.9.9",
        tools=[weather, media, fail, nothing, stuck, raw_result],
        resources=[config, logo, user, broken],
        prompts=[review, plain],
        instructions="Use the tools.",
    )
    server = config_dict["instance"]
    server.page_size = 4
    return server


# --------------------------------------------------------------------------- the checking client


class Client:
    """Sends requests to the server and validates everything that comes back."""

    def __init__(self, server: SdkMcpServer, version: str) -> None:
        self.server = server
        self.version = version
        self.next_id = 0
        self.validated = 0
        self.notifications: list[dict[str, Any]] = []

    async def _sink(self, message: dict[str, Any]) -> None:
        self.notifications.append(message)
        method = message["method"]
        spec.parse_server_notification(method, self.version, message.get("params"))
        jsonrpc_message_adapter.validate_python(message)
        self.validated += 1

    async def raw(self, message: Any) -> dict[str, Any]:
        reply = await self.server.handle(message, send=self._sink, session_key="conformance")
        assert reply is not None
        envelope = jsonrpc_message_adapter.validate_python(reply)
        assert isinstance(envelope, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError))
        if isinstance(envelope, mcp_types.JSONRPCError):
            assert envelope.error.code in ERROR_CODES, reply
            assert envelope.error.message
        self.validated += 1
        return reply

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = await self.raw(message)
        assert reply["id"] == self.next_id
        if "result" in reply:
            result = reply["result"]
            spec.parse_server_result(method, self.version, result)
            dumped = spec.serialize_server_result(method, self.version, result)
            assert dumped == result, f"fields lost in a schema round trip of {method}"
        return reply

    async def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = await self.request(method, params)
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    async def error(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = await self.request(method, params)
        assert "error" in reply, reply
        error: dict[str, Any] = reply["error"]
        return error

    async def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments or {}}
        params["_meta"] = {"progressToken": self.next_id + 1, "claudecode/toolUseId": "toolu_x"}
        return await self.result("tools/call", params)


# --------------------------------------------------------------------------- scenarios


async def lifecycle(c: Client) -> None:
    init = await c.result(
        "initialize",
        {
            "protocolVersion": c.version,
            "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "2.1.330"},
        },
    )
    assert init["protocolVersion"] == c.version
    assert set(init["capabilities"]) == {"tools", "logging", "resources", "prompts"}
    await c.result("ping")
    await c.result("logging/setLevel", {"level": "debug"})


async def tools(c: Client) -> None:
    pages: list[dict[str, Any]] = [await c.result("tools/list")]
    while "nextCursor" in pages[-1]:
        pages.append(await c.result("tools/list", {"cursor": pages[-1]["nextCursor"]}))
    listed = [t for p in pages for t in p["tools"]]
    assert len(pages) == 2 and len(listed) == 6
    first = listed[0]
    assert {"title", "annotations", "outputSchema", "_meta"} <= set(first)
    done = await c.call("weather", {"city": "Oslo", "units": "metric"})
    assert done["structuredContent"] == {"city": "Oslo", "celsius": 21.5, "summary": "sunny"}
    assert [n["method"] for n in c.notifications[-2:]] == [
        "notifications/progress",
        "notifications/message",
    ]
    everything = await c.call("media")
    assert [b["type"] for b in everything["content"]] == [
        "text", "image", "audio", "resource_link", "resource", "resource",
    ]  # fmt: skip
    for how in ("tool_error", "crash"):
        assert (await c.call("fail", {"how": how}))["isError"] is True
    invalid = await c.call("weather", {"city": 3, "units": "kelvin"})
    assert invalid["isError"] is True
    assert (await c.call("nothing"))["content"] == []
    assert (await c.call("stuck"))["isError"] is True
    assert (await c.call("raw_result"))["_meta"] == {"k": 1}


async def resources(c: Client) -> None:
    listed = await c.result("resources/list")
    assert [r["uri"] for r in listed["resources"]] == ["config://app", "blob://logo", "broken://x"]
    templates = await c.result("resources/templates/list")
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "users://{user_id}{?verbose}"
    ]
    for uri in ("config://app", "blob://logo", "users://7?verbose=true"):
        assert (await c.result("resources/read", {"uri": uri}))["contents"]


async def prompts(c: Client) -> None:
    listed = await c.result("prompts/list")
    assert [p["name"] for p in listed["prompts"]] == ["review", "plain"]
    got = await c.result("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}})
    assert [m["role"] for m in got["messages"]] == ["user", "assistant", "user", "user"]
    assert (await c.result("prompts/get", {"name": "plain"}))["messages"]


async def list_changes(c: Client) -> None:
    before = len(c.notifications)
    all_three = anyio.Event()

    async def sink(message: dict[str, Any]) -> None:
        await c._sink(message)
        if len(c.notifications) >= before + 3:
            all_three.set()

    detach = c.server.attach(sink)
    try:
        c.server.add_tool(tool("extra", "d", {})(nothing.handler))
        c.server.add_resource(resource("x://extra")(lambda: "e"))
        c.server.add_prompt(prompt("extra")(lambda: "e"))
        with anyio.fail_after(5):
            await all_three.wait()
    finally:
        detach()
    assert {n["method"] for n in c.notifications[before:]} == {
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    }
    assert len((await c.result("tools/list", {"cursor": "ccwire:tools:4"}))["tools"]) == 3


async def errors(c: Client) -> None:
    codes = [
        (await c.error("no/such/method"))["code"],
        (await c.error("tools/call", {"name": "missing", "arguments": {}}))["code"],
        (await c.error("tools/list", {"cursor": "bogus"}))["code"],
        (await c.error("resources/read", {"uri": "nothing://"}))["code"],
        (await c.error("resources/read", {"uri": "users://abc"}))["code"],
        (await c.error("resources/read", {"uri": "broken://x"}))["code"],
        (await c.error("prompts/get", {"name": "review"}))["code"],
        (await c.error("prompts/get", {"name": "nope"}))["code"],
        (await c.error("logging/setLevel", {"level": "loud"}))["code"],
        # params that are no object: no valid request (JSON-RPC 2.0's params are structured;
        # MCP's, an object)
        (await c.error("tools/call", 5))["code"],  # type: ignore[arg-type]
    ]
    assert codes == [-32601, -32602, -32602, -32002, -32602, -32603, -32602, -32602, -32602, -32600]
    for bad in ([1, 2], {"jsonrpc": "2.0", "id": True, "method": "ping"}, {"jsonrpc": "2.0"}):
        assert (await c.raw(bad))["error"]["code"] == -32600


SCENARIOS: list[Callable[[Client], Awaitable[None]]] = [
    lifecycle,
    tools,
    resources,
    prompts,
    list_changes,
    errors,
]


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
async def test_scenario_conforms(
    scenario: Callable[[Client], Awaitable[None]], version: str
) -> None:
    client = Client(make_server(), version)
    if scenario is not lifecycle:
        await lifecycle(client)
    await scenario(client)
    assert client.validated > 0


async def test_every_message_of_the_whole_set_is_validated(
    record_property: Callable[[str, object], None],
) -> None:
    total = 0
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        client = Client(make_server(), version)
        for scenario in SCENARIOS:
            await scenario(client)
        total += client.validated
    assert total >= 150  # 40 per protocol version today
    record_property(SUMMARY, f"[conformance] {total} server messages validated against mcp-types")
