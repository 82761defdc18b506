"""Resources and prompts on SDK servers: decorators, templates, resources/* and prompts/*."""

from __future__ import annotations

import dataclasses
import threading
from typing import Annotated, Any

import anyio
import pytest

from ccwire import (
    McpError,
    ResourceNotFoundError,
    SdkMcpPrompt,
    SdkMcpResource,
    SdkMcpServer,
    ToolDefinitionError,
    ToolError,
    create_sdk_mcp_server,
    prompt,
    resource,
)
from tests.fixtures.mcp_schema import (
    schema_checked_module,  # noqa: F401 (autouse: every test here)
)

pytestmark = pytest.mark.anyio


@resource("config://app", mime_type="application/json", title="App config")
def app_config() -> dict[str, Any]:
    """The application's configuration."""
    return {"debug": False, "level": 3}


@resource("file:///{+path}", mime_type="text/plain")
async def read_file(path: str) -> str:
    if path == "missing.txt":
        raise FileNotFoundError(path)
    return f"contents of {path}"


@resource("users://{user_id}/profile{?fields}")
async def profile(user_id: int, fields: str = "all", uri: str = "") -> dict[str, Any]:
    return {"id": user_id, "fields": fields, "uri": uri}


@prompt("review", "Review some code")
def review(code: str, style: Annotated[str, "The style guide"] = "pep8") -> str:
    return f"Review this code for {style}:\n{code}"


def make_server(**kwargs: Any) -> SdkMcpServer:
    config = create_sdk_mcp_server(
        "docs", resources=[app_config, read_file, profile], prompts=[review], **kwargs
    )
    return config["instance"]


async def rpc(server: SdkMcpServer, method: str, params: Any = None, req_id: int = 1) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        message["params"] = params
    reply = await server.handle(message)
    assert reply is not None and reply["id"] == req_id
    return reply


async def result_of(server: SdkMcpServer, method: str, params: Any = None) -> Any:
    reply = await rpc(server, method, params)
    assert "error" not in reply, reply
    return reply["result"]


async def error_of(server: SdkMcpServer, method: str, params: Any = None) -> dict[str, Any]:
    reply = await rpc(server, method, params)
    assert "result" not in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


# --------------------------------------------------------------------------- capabilities


async def test_initialize_advertises_only_what_is_there() -> None:
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    caps = (await result_of(make_server(), "initialize", init))["capabilities"]
    assert caps["resources"] == {"subscribe": True, "listChanged": True} and caps["prompts"] == {
        "listChanged": True
    }
    bare = create_sdk_mcp_server("bare")["instance"]
    caps = (await result_of(bare, "initialize", init))["capabilities"]
    assert (
        "resources" not in caps and "prompts" not in caps and caps["tools"] == {"listChanged": True}
    )
    assert await result_of(bare, "resources/list") == {"resources": []}
    assert await result_of(bare, "prompts/list") == {"prompts": []}


# --------------------------------------------------------------------------- resources


async def test_resources_and_templates_are_listed_separately() -> None:
    server = make_server()
    listed = await result_of(server, "resources/list")
    assert listed == {
        "resources": [
            {
                "uri": "config://app",
                "name": "app_config",
                "title": "App config",
                "description": "The application's configuration.",
                "mimeType": "application/json",
            }
        ]
    }
    templates = await result_of(server, "resources/templates/list")
    assert templates == {
        "resourceTemplates": [
            {"uriTemplate": "file:///{+path}", "name": "read_file", "mimeType": "text/plain"},
            {"uriTemplate": "users://{user_id}/profile{?fields}", "name": "profile"},
        ]
    }


async def test_read_fixed_resource_returns_json_text() -> None:
    contents = (await result_of(make_server(), "resources/read", {"uri": "config://app"}))[
        "contents"
    ]
    assert contents == [
        {
            "uri": "config://app",
            "text": '{"debug": false, "level": 3}',
            "mimeType": "application/json",
        }
    ]


async def test_templates_match_and_convert_variables() -> None:
    server = make_server()
    read = await result_of(server, "resources/read", {"uri": "file:///notes/a%20b.txt"})
    assert read == {
        "contents": [
            {
                "uri": "file:///notes/a%20b.txt",
                "text": "contents of notes/a b.txt",
                "mimeType": "text/plain",
            }
        ]
    }
    read = await result_of(server, "resources/read", {"uri": "users://42/profile?fields=name&x=1"})
    (content,) = read["contents"]
    assert content["mimeType"] == "application/json"
    assert content["text"] == (
        '{"id": 42, "fields": "name", "uri": "users://42/profile?fields=name&x=1"}'
    )
    read = await result_of(server, "resources/read", {"uri": "users://7/profile"})
    assert '"fields": "all"' in read["contents"][0]["text"]


async def test_read_errors() -> None:
    server = make_server()
    missing = await error_of(server, "resources/read", {"uri": "nothing://here"})
    assert missing == {
        "code": -32002,
        "message": "Resource not found: nothing://here",
        "data": {"uri": "nothing://here"},
    }
    not_found = await error_of(server, "resources/read", {"uri": "file:///missing.txt"})
    assert not_found["code"] == -32002 and not_found["data"] == {"uri": "file:///missing.txt"}
    bad_int = await error_of(server, "resources/read", {"uri": "users://abc/profile"})
    assert bad_int["code"] == -32602 and "user_id='abc'" in bad_int["message"]
    no_uri = await error_of(server, "resources/read", {})
    assert no_uri == {"code": -32602, "message": "Invalid params: uri must be a string"}


async def test_resource_return_forms() -> None:
    values: list[Any] = [
        b"\x00\x01",
        {"text": "t", "mimeType": "text/markdown"},
        {"blob": b"\xff"},
        ["a", b"b"],
        {"contents": [{"uri": "x://other", "text": "as is"}]},
        None,
    ]
    expected = [
        [{"uri": "x://v", "blob": "AAE="}],
        [{"uri": "x://v", "text": "t", "mimeType": "text/markdown"}],
        [{"uri": "x://v", "blob": "/w=="}],
        [{"uri": "x://v", "text": "a"}, {"uri": "x://v", "blob": "Yg=="}],
        [{"uri": "x://other", "text": "as is"}],
        [],
    ]
    for value, contents in zip(values, expected, strict=True):
        r = resource("x://v")(lambda v=value: v)
        server = create_sdk_mcp_server("s", resources=[r])["instance"]
        assert (await result_of(server, "resources/read", {"uri": "x://v"}))["contents"] == contents


async def test_resource_handler_failures() -> None:
    @resource("x://boom")
    async def boom() -> str:
        raise RuntimeError("disk on fire")

    @resource("x://custom")
    async def custom() -> str:
        raise McpError("go away", code=-32000, data={"why": "testing"})

    @resource("x://gone")
    async def gone() -> str:
        raise ResourceNotFoundError("x://gone", "it was deleted")

    server = create_sdk_mcp_server("s", resources=[boom, custom, gone])["instance"]
    assert await error_of(server, "resources/read", {"uri": "x://boom"}) == {
        "code": -32603,
        "message": "Error reading resource x://boom: RuntimeError: disk on fire",
    }
    assert await error_of(server, "resources/read", {"uri": "x://custom"}) == {
        "code": -32000,
        "message": "go away",
        "data": {"why": "testing"},
    }
    gone_error = await error_of(server, "resources/read", {"uri": "x://gone"})
    assert gone_error == {"code": -32002, "message": "it was deleted", "data": {"uri": "x://gone"}}


async def test_sync_resource_handlers_run_off_the_loop() -> None:
    threads: list[int] = []

    @resource("x://t")
    def where() -> str:
        threads.append(threading.get_ident())
        return "ok"

    server = create_sdk_mcp_server("s", resources=[where])["instance"]
    await result_of(server, "resources/read", {"uri": "x://t"})
    assert threads and threads[0] != threading.get_ident()


@pytest.mark.parametrize(
    ("uri", "handler", "message"),
    [
        ("x://{a}{a}", lambda a: a, "repeats"),
        ("x://{a,b}", lambda a, b: a, "unsupported"),
        ("x://{;a}", lambda a: a, "unsupported"),
        ("x://{a", lambda: 1, "malformed"),
        ("x://{a}", lambda: 1, "no parameter"),
        ("x://fixed", lambda a: a, "not in the URI"),
        ("", lambda: 1, "non-empty"),
        ("x://{?a}{?b}", lambda a="", b="": a, "two query"),
    ],
)
def test_bad_resource_definitions(uri: str, handler: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        resource(uri)(handler)


def test_duplicate_resources_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="duplicate resource"):
        create_sdk_mcp_server("s", resources=[app_config, app_config])
    server = make_server()
    with pytest.raises(ToolDefinitionError, match="SdkMcpResource"):
        server.add_resource("config://x")  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        server.remove_resource("nothing://")


def test_match_is_exposed_for_templates() -> None:
    assert isinstance(profile, SdkMcpResource) and profile.is_template
    assert profile.match("users://5/profile") == {"user_id": "5"}
    assert profile.match("users://5/other") is None
    assert app_config.match("config://app") == {} and app_config.match("config://x") is None


# --------------------------------------------------------------------------- prompts


async def test_prompts_list_infers_arguments() -> None:
    listed = await result_of(make_server(), "prompts/list")
    assert listed == {
        "prompts": [
            {
                "name": "review",
                "description": "Review some code",
                "arguments": [
                    {"name": "code", "required": True},
                    {"name": "style", "description": "The style guide", "required": False},
                ],
            }
        ]
    }


async def test_prompts_get_runs_the_handler() -> None:
    got = await result_of(
        make_server(), "prompts/get", {"name": "review", "arguments": {"code": "x=1"}}
    )
    assert got == {
        "description": "Review some code",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this code for pep8:\nx=1"}}
        ],
    }


async def test_prompts_get_errors() -> None:
    server = make_server()
    missing = await error_of(server, "prompts/get", {"name": "review", "arguments": {}})
    assert missing == {
        "code": -32602,
        "message": "Invalid params: prompt 'review' requires argument(s) 'code'",
    }
    unknown = await error_of(server, "prompts/get", {"name": "nope"})
    assert unknown == {"code": -32602, "message": "Invalid params: unknown prompt 'nope'"}
    bad = await error_of(server, "prompts/get", {"name": "review", "arguments": ["x"]})
    assert bad["code"] == -32602


async def test_prompt_forms_and_explicit_arguments() -> None:
    @prompt(
        "chat", arguments=[{"name": "topic", "description": "What to talk about", "required": True}]
    )
    async def chat(topic: str, **extra: Any) -> list[Any]:
        return [
            {"role": "assistant", "content": f"Let us talk about {topic}."},
            {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
            {"type": "text", "text": "a bare block"},
            f"extra={sorted(extra)}",
        ]

    @prompt("whole", "d", ["n"])
    def whole(n: int) -> dict[str, Any]:
        return {"messages": [f"{n * 2}"], "description": "custom"}

    @prompt("fails")
    def fails() -> str:
        raise ToolError("exactly this")

    @prompt("broken")
    def broken() -> str:
        raise RuntimeError("oops")

    server = create_sdk_mcp_server("s", prompts=[chat, whole, fails, broken])["instance"]
    got = await result_of(
        server, "prompts/get", {"name": "chat", "arguments": {"topic": "wires", "x": "1"}}
    )
    assert got["messages"] == [
        {"role": "assistant", "content": {"type": "text", "text": "Let us talk about wires."}},
        {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "a bare block"}},
        {"role": "user", "content": {"type": "text", "text": "extra=['x']"}},
    ]
    assert "description" not in got
    whole_result = await result_of(
        server, "prompts/get", {"name": "whole", "arguments": {"n": "21"}}
    )
    assert whole_result == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "42"}}],
        "description": "custom",
    }
    assert await error_of(server, "prompts/get", {"name": "fails"}) == {
        "code": -32602,
        "message": "exactly this",
    }
    broken_error = await error_of(server, "prompts/get", {"name": "broken"})
    assert broken_error["code"] == -32603 and "RuntimeError: oops" in broken_error["message"]
    not_int = await error_of(server, "prompts/get", {"name": "whole", "arguments": {"n": "x"}})
    assert not_int["code"] == -32602


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: prompt("bad name!")(lambda: "x"), "invalid prompt name"),
        (lambda: prompt("p", arguments=["a"])(lambda: "x"), "no handler parameter"),
        (lambda: prompt("p", arguments=[])(lambda a: a), "not arguments"),
        (lambda: prompt("p", arguments="a")(lambda a: a), "must be a list"),
        (lambda: prompt("p", arguments=[3])(lambda a: a), "bad argument"),
    ],
)
def test_bad_prompt_definitions(make: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        make()


def test_prompt_argument_mapping_form() -> None:
    p = prompt("p", arguments={"a": "first"})(lambda a: a)
    assert isinstance(p, SdkMcpPrompt)
    assert p.definition["arguments"] == [{"name": "a", "description": "first", "required": True}]


# --------------------------------------------------------------------------- live changes


class Recorder:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.count = 0
        self.arrived = anyio.Event()

    async def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.arrived.set()

    async def wait_for(self, n: int) -> None:
        with anyio.fail_after(5):
            while len(self.messages) < n:
                await self.arrived.wait()
                self.arrived = anyio.Event()


async def test_adding_and_removing_announce_list_changes() -> None:
    server = make_server()
    sink = Recorder()
    server.attach(sink)
    extra = resource("x://extra")(lambda: "e")
    server.add_resource(extra)
    await sink.wait_for(1)
    server.add_prompt(prompt("hello")(lambda: "hi"))
    await sink.wait_for(2)
    assert server.remove_resource("x://extra") is extra
    assert isinstance(server.remove_prompt("hello"), SdkMcpPrompt)
    await sink.wait_for(4)
    methods = [m["method"] for m in sink.messages]
    assert methods == [
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    ]
    assert set(server.resources) == {
        "config://app",
        "file:///{+path}",
        "users://{user_id}/profile{?fields}",
    }
    assert list(server.prompts) == ["review"]


async def test_pagination_of_resources_and_prompts() -> None:
    many = [resource(f"x://{i}")(lambda: "v") for i in range(5)]
    server = SdkMcpServer("s", resources=many, page_size=2)
    seen: list[str] = []
    cursor = None
    for _ in range(5):
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        page = await result_of(server, "resources/list", params)
        seen += [r["uri"] for r in page["resources"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert seen == [f"x://{i}" for i in range(5)]
    wrong_kind = await error_of(server, "prompts/list", {"cursor": "ccwire:resources:2"})
    assert wrong_kind["code"] == -32602


@dataclasses.dataclass
class Point:
    x: int
    y: int


async def test_dataclass_resource_is_json() -> None:
    r = resource("x://p")(lambda: Point(1, 2))
    server = create_sdk_mcp_server("s", resources=[r])["instance"]
    (content,) = (await result_of(server, "resources/read", {"uri": "x://p"}))["contents"]
    assert content == {"uri": "x://p", "text": '{"x": 1, "y": 2}', "mimeType": "application/json"}
