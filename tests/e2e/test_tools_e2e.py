"""In-process tools end to end: the real CLI 2.1.330, the scripted model, ccwire's server.

One test per capability of issue 3's proof list: schema forms (as the model sees them),
argument validation, sync handlers, ToolContext, progress, timeouts, interrupts, tools
added at runtime, structured output, image and audio content; plus a server of the
official ``mcp`` package bridged in-process.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re
import threading
from typing import Any, Literal, Optional, TypedDict

import anyio
import pydantic
import pytest

from ccwire import (
    ClaudeSDKClient,
    Message,
    ResultMessage,
    SdkMcpTool,
    ToolAnnotations,
    ToolContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    audio_content,
    create_sdk_mcp_server,
    image_content,
    query,
    tool,
)
from ccwire.testing import ModelRequest, ScriptedModel, text, tool_use
from tests.fixtures.mcp_schema import (
    schema_checked_module,  # noqa: F401 (autouse: every test here)
)

from .helpers import content_blocks

pytestmark = pytest.mark.anyio


TIMEOUT = 60
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00"


def _final(messages: list[Message]) -> ResultMessage:
    final = messages[-1]
    assert isinstance(final, ResultMessage)
    return final


async def _run(options: Any, prompt: str = "go") -> list[Message]:
    with anyio.fail_after(TIMEOUT):
        return [m async for m in query(prompt=prompt, options=options)]


async def _cli_version(cli_path: Any) -> tuple[int, ...]:
    done = await anyio.run_process([str(cli_path), "--version"])
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", done.stdout.decode())
    return tuple(int(part) for part in found.groups()) if found else (0,)


def _options(make_options: Any, name: str, *tools: SdkMcpTool[Any], **kw: Any) -> Any:
    server = create_sdk_mcp_server(name, tools=list(tools), **kw)
    allowed = [f"mcp__{name}__{t.name}" for t in tools]
    return make_options(mcp_servers={name: server}, allowed_tools=allowed)


# --------------------------------------------------------------------------- schema forms


class Address(TypedDict):
    street: str
    zip: int


class Filters(TypedDict):
    tags: list[str]
    near: Address


@dataclasses.dataclass
class Order:
    item: str
    quantity: int = 1


class Person(pydantic.BaseModel):
    name: str
    age: int


RAW_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string", "minLength": 1}},
    "required": ["q"],
    "additionalProperties": False,
}


async def _echo(args: dict[str, Any]) -> str:
    return "ok"


async def _inferred(city: str, days: int = 3) -> str:
    return city


SCHEMA_TOOLS: list[tuple[SdkMcpTool[Any], dict[str, Any]]] = [
    (
        tool(
            "mapping",
            "d",
            {
                "ids": list[int],
                "scores": dict[str, float],
                "note": Optional[str],  # noqa: UP045 - the form under test
                "mode": Literal["fast", "slow"],
                "home": Address,
            },
        )(_echo),
        {
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "integer"}},
                "scores": {"type": "object", "additionalProperties": {"type": "number"}},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "home": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
                    "required": ["street", "zip"],
                },
            },
            "required": ["ids", "scores", "mode", "home"],
        },
    ),
    (
        tool("names", "d", {"a": "number", "b": "string"})(_echo),
        {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "string"}},
            "required": ["a", "b"],
        },
    ),
    (tool("raw", "d", RAW_SCHEMA)(_echo), RAW_SCHEMA),
    (
        tool("typeddict", "d", Filters)(_echo),
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "near": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
                    "required": ["street", "zip"],
                },
            },
            "required": ["tags", "near"],
        },
    ),
    (
        tool("dataclass", "d", Order)(_echo),
        {
            "type": "object",
            "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
            "required": ["item"],
        },
    ),
    (tool("pydantic", "d", Person)(_echo), Person.model_json_schema()),
    (
        tool("inferred", "d")(_inferred),
        {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    ),
]


async def test_schema_forms_reach_the_model(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("seen"))
    options = _options(make_options, "forms", *(t for t, _ in SCHEMA_TOOLS))
    messages = await _run(options)
    assert _final(messages).result == "seen"
    offered = {t["name"]: t for t in model.turn_requests[0].tools}
    for t, expected in SCHEMA_TOOLS:
        spec = offered[f"mcp__forms__{t.name}"]
        assert spec["input_schema"] == expected, t.name
        assert t.json_schema == expected


# --------------------------------------------------------------------------- validation


async def test_invalid_arguments_never_reach_the_handler(
    model: ScriptedModel, make_options: Any
) -> None:
    got: list[dict[str, Any]] = []

    @tool("stock", "Set the stock of items", {"count": int, "items": list[int]})
    async def stock(args: dict[str, Any]) -> str:
        got.append(args)
        return f"stocked {sum(args['items']) * args['count']}"

    model.add(
        tool_use("mcp__inv__stock", {"count": "many", "items": [1]}),
        tool_use("mcp__inv__stock", {"count": 2, "items": "[1, 2, 3]"}),  # JSON-encoded array
        text("done"),
    )
    messages = await _run(_options(make_options, "inv", stock))
    refused, accepted = (req.tool_results()[0] for req in model.turn_requests[1:3])
    assert refused.is_error
    assert (
        refused.content == "Input validation error: invalid arguments for tool 'stock': "
        "'count' must be integer, got string (rule: type)"
    )
    assert not accepted.is_error and accepted.content == "stocked 12"
    assert got == [{"count": 2, "items": [1, 2, 3]}]  # the handler ran only for the valid call
    assert _final(messages).subtype == "success"


# --------------------------------------------------------------------------- sync handlers, context


async def test_sync_handler_runs_in_a_worker_thread(
    model: ScriptedModel, make_options: Any
) -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []

    @tool("blocking", "A blocking handler", {"n": int})
    def blocking(args: dict[str, Any]) -> str:
        threads.append(threading.get_ident())
        return f"squared: {args['n'] ** 2}"

    model.add(tool_use("mcp__sync__blocking", {"n": 12}), text("done"))
    messages = await _run(_options(make_options, "sync", blocking))
    assert [r.content for r in model.turn_requests[1].tool_results()] == ["squared: 144"]
    assert threads and threads[0] != loop_thread
    assert _final(messages).subtype == "success"


async def test_tool_context_names_the_tool_use(model: ScriptedModel, make_options: Any) -> None:
    seen: list[ToolContext] = []

    @tool("whoami", "Report the call's context", {})
    async def whoami(args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append(ctx)
        return str(ctx.tool_use_id)

    model.add(tool_use("mcp__ctx__whoami", {}), text("done"))
    messages = await _run(_options(make_options, "ctx", whoami))
    (use,) = content_blocks(messages, ToolUseBlock)
    (ctx,) = seen
    assert ctx.tool_use_id == use.id
    assert (ctx.tool_name, ctx.server_name) == ("whoami", "ctx")
    assert ctx.session_id == _final(messages).session_id
    assert ctx.progress_token == ctx.request_id  # the CLI's token is the JSON-RPC id
    assert model.turn_requests[1].tool_results()[0].content == use.id


async def test_progress_and_log_notifications_are_acknowledged(
    model: ScriptedModel, make_options: Any, caplog: pytest.LogCaptureFixture
) -> None:
    delivered: list[bool] = []

    @tool("work", "Work in steps", {"steps": int})
    async def work(args: dict[str, Any], ctx: ToolContext) -> str:
        for i in range(1, args["steps"] + 1):
            delivered.append(await ctx.report_progress(i, args["steps"], f"step {i}"))
        delivered.append(await ctx.log("info", {"finished": args["steps"]}))
        return "all steps done"

    model.add(tool_use("mcp__prog__work", {"steps": 3}), text("done"))
    with caplog.at_level(logging.WARNING, logger="ccwire"):
        messages = await _run(_options(make_options, "prog", work))
    assert delivered == [True, True, True, True]  # each one acknowledged by the CLI
    assert not [r for r in caplog.records if "lost" in r.getMessage()]
    assert model.turn_requests[1].tool_results()[0].content == "all steps done"
    assert _final(messages).subtype == "success"


# --------------------------------------------------------------------------- timeout, interrupt


async def test_timeout_cancels_the_handler(model: ScriptedModel, make_options: Any) -> None:
    finished = anyio.Event()

    @tool("stuck", "Never finishes", {}, timeout=0.5)
    async def stuck(args: dict[str, Any]) -> str:
        try:
            await anyio.sleep(3600)
        finally:
            finished.set()
        return "unreachable"

    model.add(tool_use("mcp__slow__stuck", {}), text("it timed out"))
    messages = await _run(_options(make_options, "slow", stuck))
    assert finished.is_set()
    (outcome,) = model.turn_requests[1].tool_results()
    assert outcome.is_error and outcome.content == "Tool 'stuck' timed out after 0.5 s"
    assert _final(messages).result == "it timed out"


async def test_interrupt_cancels_a_running_handler(model: ScriptedModel, make_options: Any) -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    @tool("crawl", "Takes forever", {})
    async def crawl(args: dict[str, Any]) -> str:
        started.set()
        try:
            await anyio.sleep(3600)
        finally:
            cancelled.set()  # runs only when the sleep is cancelled
        return "unreachable"

    model.add(tool_use("mcp__intr__crawl", {}))
    options = _options(make_options, "intr", crawl)
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("crawl")
            await started.wait()
            await client.interrupt()
            messages = [m async for m in client.receive_response()]
            await cancelled.wait()
    final = _final(messages)
    assert final.subtype == "error_during_execution" and final.is_error
    assert len(model.turn_requests) == 1  # the late result never reached the model


# --------------------------------------------------------------------------- runtime tools


async def test_tool_added_at_runtime_is_called_in_the_same_turn(
    model: ScriptedModel, make_options: Any
) -> None:
    config = create_sdk_mcp_server("rt", tools=[])
    server = config["instance"]

    @tool("late_tool", "Added while a turn runs", {"word": str})
    async def late_tool(args: dict[str, Any]) -> str:
        return f"late tool says {args['word']}"

    @tool("installer", "Installs another tool", {})
    async def installer(args: dict[str, Any]) -> str:
        server.add_tool(late_tool)
        return "installed late_tool"

    server.add_tool(installer)
    offered: list[list[str]] = []

    def call_the_new_tool(request: ModelRequest) -> Any:
        offered.append(request.tool_names)
        return tool_use("mcp__rt__late_tool", {"word": "hello"})

    model.add(tool_use("mcp__rt__installer", {}), call_the_new_tool, text("done"))
    options = make_options(
        mcp_servers={"rt": config}, allowed_tools=["mcp__rt__installer", "mcp__rt__late_tool"]
    )
    if await _cli_version(options.cli_path) < (2, 1, 330):
        pytest.skip("older CLIs acknowledge tools/list_changed but never re-list the tools")
    messages = await _run(options)
    assert "mcp__rt__late_tool" not in model.turn_requests[0].tool_names
    assert offered and "mcp__rt__late_tool" in offered[0]
    assert [r.content for r in model.turn_requests[2].tool_results()] == ["late tool says hello"]
    assert _final(messages).result == "done"
    assert len(model.turn_requests) == 3  # one turn: the new tool was called before it ended


# --------------------------------------------------------------------------- result forms


@dataclasses.dataclass
class Forecast:
    city: str
    high: int


async def test_structured_output(model: ScriptedModel, make_options: Any) -> None:
    @tool("forecast", "Weather", {"city": str}, output_schema=Forecast)
    async def forecast(args: dict[str, Any]) -> Forecast:
        return Forecast(city=args["city"], high=21)

    model.add(tool_use("mcp__wx__forecast", {"city": "Oslo"}), text("done"))
    messages = await _run(_options(make_options, "wx", forecast))
    results = [m for m in messages if isinstance(m, UserMessage) and m.tool_use_result]
    (raw,) = [m.tool_use_result for m in results]
    assert isinstance(raw, dict) and raw["structuredContent"] == {"city": "Oslo", "high": 21}
    (seen,) = model.turn_requests[1].tool_results()
    assert not seen.is_error
    assert json.loads(seen.content) == {"city": "Oslo", "high": 21}


async def test_image_and_audio_content(model: ScriptedModel, make_options: Any) -> None:
    @tool(
        "media",
        "Returns a picture and a sound",
        {},
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def media(args: dict[str, Any]) -> list[Any]:
        return ["here you go", image_content(PNG, "image/png"), audio_content(WAV, "audio/wav")]

    model.add(tool_use("mcp__av__media", {}), text("done"))
    messages = await _run(_options(make_options, "av", media))
    (block,) = content_blocks(messages, ToolResultBlock)
    assert isinstance(block.content, list)
    raw = model.turn_requests[1].tool_results()[0].raw
    images = [b for b in raw["content"] if b.get("type") == "image"]
    assert images == [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(PNG).decode(),
            },
        }
    ]
    (audio,) = [b["text"] for b in raw["content"] if "[Audio from av]" in b.get("text", "")]
    assert "audio/wav" in audio
    saved = anyio.Path(audio.split(" saved to ", 1)[1].strip())
    assert await saved.read_bytes() == WAV  # the CLI decoded exactly our bytes
    assert _final(messages).subtype == "success"


# --------------------------------------------------------------------------- interop


async def test_official_mcp_server_is_bridged(model: ScriptedModel, make_options: Any) -> None:
    from mcp.server.mcpserver import MCPServer

    official = MCPServer("official")

    @official.tool()
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    model.add(tool_use("mcp__off__multiply", {"a": 6, "b": 7}), text("done"))
    options = make_options(mcp_servers={"off": official}, allowed_tools=["mcp__off__multiply"])
    messages = await _run(options)
    spec = next(t for t in model.turn_requests[0].tools if t["name"] == "mcp__off__multiply")
    assert spec["description"] == "Multiply two integers."
    # the CLI shows the model the structured result the official server produced
    assert json.loads(model.turn_requests[1].tool_results()[0].content) == {"result": 42}
    assert _final(messages).subtype == "success"
