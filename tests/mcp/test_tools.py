"""The ``tool`` decorator, SdkMcpTool, annotations, content helpers and result shapes."""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
import threading
import warnings
from typing import Any, TypedDict

import anyio.to_thread
import pytest

import ccwire
import ccwire._mcp.tools
import ccwire._mcp.validation
from ccwire._core.errors import ToolDefinitionError, ToolError
from ccwire._mcp.tools import (
    SdkMcpTool,
    ToolAnnotations,
    ToolContext,
    audio_content,
    embedded_blob_resource,
    embedded_text_resource,
    image_content,
    resource_link,
    text_content,
    tool,
)


async def echo(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": repr(args)}]}


# --------------------------------------------------------------------------- definition


@pytest.mark.parametrize("name", ["a", "greet", "get_weather", "ns.tool-v2", "A9", "x" * 128])
def test_valid_names(name: str) -> None:
    assert tool(name, "d", {})(echo).name == name


@pytest.mark.parametrize(
    "name", ["", "x" * 129, "has space", "slash/name", "ümlaut", "a:b", 7, None]
)
def test_invalid_names_raise_at_definition(name: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="invalid tool name"):
        tool(name, "d", {})(echo)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"description": 3}, "description"),
        ({"handler": "not callable"}, "not callable"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1.0}, "timeout"),
        ({"annotations": 5}, "annotations"),
    ],
)
def test_bad_definitions(kwargs: dict[str, Any], match: str) -> None:
    base: dict[str, Any] = {"name": "t", "description": "d", "input_schema": {}, "handler": echo}
    with pytest.raises(ToolDefinitionError, match=match):
        SdkMcpTool(**{**base, **kwargs})


async def no_parameters() -> dict[str, Any]:
    return {"content": []}


async def two_required_after_ctx(args: dict[str, Any], ctx: ToolContext, b: int) -> Any:
    return {"content": []}


@pytest.mark.parametrize("handler", [no_parameters, two_required_after_ctx])
def test_a_handler_that_cannot_take_the_arguments_is_refused_at_definition(
    handler: Any,
) -> None:
    """With a schema, the handler gets the arguments dict: one that cannot is refused
    by `@tool`, not when the model calls it ("takes 0 positional arguments")."""
    with pytest.raises(ToolDefinitionError) as caught:
        tool("now", "The time", {})(handler)
    assert str(caught.value).startswith(f"tool 'now': the handler {handler.__name__}(")
    assert f"write `async def {handler.__name__}(args)`, or leave out the schema" in str(
        caught.value
    )
    assert tool("now", "The time")(no_parameters).definition["inputSchema"]["properties"] == {}


async def greet_by_name(name: str) -> str:
    return f"Hello, {name}!"


def test_a_handler_annotated_for_one_value_is_refused_when_a_schema_is_given() -> None:
    """With a schema the handler gets the arguments as one dict: a first parameter
    annotated ``str`` would get ``{'name': 'Al'}`` and answer "Hello, {'name': 'Al'}!"
    without a word; `@tool` says so instead, and how to write it either way."""
    with pytest.raises(ToolDefinitionError) as caught:
        tool("greet", "Greet", {"name": str})(greet_by_name)
    message = str(caught.value)
    assert message.startswith(
        "tool 'greet': with an input schema, the handler gets the arguments as one dict, "
        "but its parameter `name` is annotated `str`"
    ), message
    assert "write `async def greet_by_name(args: dict[str, Any])`" in message
    assert "or leave out the schema" in message
    # what the message offers: no schema, and `name` is the parameter it looks like
    assert tool("greet", "Greet")(greet_by_name).definition["inputSchema"]["required"] == ["name"]

    # an arguments dict annotated as one (or not at all) is what a schema calls for
    async def unannotated(args):  # type: ignore[no-untyped-def]
        return args

    async def with_context(args: Any, ctx: ToolContext) -> Any:
        return args

    for handler in (echo, unannotated, with_context):
        assert tool("greet", "Greet", {"name": str})(handler).handler is handler


def test_a_handler_taking_the_schema_keys_as_parameters_is_refused() -> None:
    """``async def add(a, b)`` with ``{"a": float, "b": float}``: ``a`` got the arguments
    dict and ``b`` the call's `ToolContext` (a second parameter is the context), so every
    call failed with "unsupported operand type(s) for +: 'dict' and 'ToolContext'"."""

    async def add(a, b):  # type: ignore[no-untyped-def]
        return a + b

    with pytest.raises(ToolDefinitionError) as caught:
        tool("add", "Add two numbers", {"a": float, "b": float})(add)
    assert str(caught.value).startswith(
        "tool 'add': with an input schema, the handler gets the arguments as one dict, but "
        "its parameters `a`, `b` are the schema's keys (the second would get the call's "
        "ToolContext): write `async def add(args: dict[str, Any])`"
    ), str(caught.value)
    assert tool("add", "Add two numbers")(add).definition["inputSchema"]["required"] == ["a", "b"]

    async def with_a_context(args, context):  # type: ignore[no-untyped-def]
        return args  # any name for the context: not keys of the schema

    assert tool("add", "Add", {"a": float, "b": float})(with_a_context).handler is with_a_context


def test_a_method_is_refused_and_a_bound_method_is_a_handler() -> None:
    """``@tool`` on a method made a tool whose ``self`` got the arguments dict (and
    ``args`` the context): every call failed with "'dict' object has no attribute ...".
    The decorated name is a tool, not a method, so no instance is ever passed."""

    class Greeter:
        greeting = "Hello"

        async def greet(self, args: dict[str, Any]) -> str:
            return f"{self.greeting}, {args['name']}!"

    for schema in ({"name": str}, None):
        with pytest.raises(ToolDefinitionError) as caught:
            tool("greet", "Greet", schema)(Greeter.greet)
        assert str(caught.value).startswith(
            "tool 'greet': the handler's first parameter is `self`, but a tool's handler is "
            "called as a function, with no instance: decorate a function, or pass a bound "
            "method, `tool('greet', ...)(greeter.greet)`"
        ), str(caught.value)
    greeter = Greeter()
    assert tool("greet", "Greet", {"name": str})(greeter.greet).handler == greeter.greet


def test_reference_style_definition_and_positional_annotations() -> None:
    annotations = ToolAnnotations(read_only_hint=True, title="Adder")
    t = tool("add", "Add two numbers", {"a": float, "b": float}, annotations)(echo)
    assert t.annotations is annotations
    assert t.input_schema == {"a": float, "b": float}
    assert t.definition == {
        "name": "add",
        "description": "Add two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "annotations": {"title": "Adder", "readOnlyHint": True},
    }


def test_definition_with_every_optional_field() -> None:
    t = tool(
        "report",
        "Make a report",
        {"q": str},
        title="Report",
        annotations={"destructiveHint": False, "open_world_hint": True},
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        timeout=2.5,
        meta={"anthropic/maxResultSizeChars": 1000},
    )(echo)
    assert list(t.definition) == [
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
    ]
    assert t.definition["annotations"] == {"destructiveHint": False, "openWorldHint": True}
    assert t.definition["_meta"] == {"anthropic/maxResultSizeChars": 1000}
    assert t.timeout == 2.5


def test_tool_annotations_wire_form_omits_none() -> None:
    full = ToolAnnotations("T", True, False, True, False)
    assert full.to_dict() == {
        "title": "T",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert ToolAnnotations().to_dict() == {}
    assert "annotations" not in tool("t", "d", {}, ToolAnnotations())(echo).definition


class _McpStyleAnnotations:
    def model_dump(self) -> dict[str, Any]:
        return {"readOnlyHint": True, "title": None}


def test_annotations_with_model_dump_are_accepted() -> None:
    t = tool("t", "d", {}, _McpStyleAnnotations())(echo)  # type: ignore[arg-type]
    assert t.definition["annotations"] == {"readOnlyHint": True}


@pytest.mark.anyio
async def test_schema_is_computed_once_at_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[Any] = []
    real = ccwire._mcp.validation.compile_validator

    def spy(schema: Any, **options: Any) -> Any:
        compiled.append(real(schema, **options))
        return compiled[-1]

    monkeypatch.setattr(ccwire._mcp.tools, "compile_validator", spy)
    t = tool("t", "d", {"n": int}, output_schema={"n2": int})(lambda args: {"n2": args["n"] * 2})
    assert t.json_schema is t.definition["inputSchema"]
    assert len(compiled) == 2  # the input and the output schema, once each
    assert compiled[0] is t.validator and t.validator.schema is t.json_schema
    assert compiled[1].schema is t.output_json_schema
    for n in range(5):
        assert (await t.call({"n": n}))["structuredContent"] == {"n2": 2 * n}
    assert (await t.call({"n": "x"}))["isError"] is True
    assert len(compiled) == 2  # calls, valid or not, compile nothing


# --------------------------------------------------------------------------- mutability


@pytest.mark.anyio
async def test_a_replaced_handler_is_what_the_tool_calls() -> None:
    # what langsmith's integration does to every tool: handler = tracing wrapper
    t = tool("add", "Add", {"a": int, "b": int})(
        lambda args: {"content": [text_content(str(args["a"] + args["b"]))]}
    )
    seen: list[Any] = []
    original = t.handler

    async def wrapped(args: Any) -> Any:
        seen.append(args)
        return original(args)

    t.handler = wrapped
    assert t.handler is wrapped
    assert await t.call({"a": 2, "b": 3}) == {"content": [text_content("5")]}
    assert seen == [{"a": 2, "b": 3}]


@pytest.mark.anyio
async def test_what_a_tool_serves_follows_its_fields() -> None:
    from ccwire._mcp.server import SdkMcpServer

    t = tool("t", "first", {"n": int})(echo)
    server = SdkMcpServer("s", tools=[t])
    first = await server.handle({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    assert first is not None and first["result"]["tools"][0]["description"] == "first"
    t.description = "second"
    t.input_schema = {"s": str}
    t.annotations = ToolAnnotations(read_only_hint=True)
    listed = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert listed is not None
    (entry,) = listed["result"]["tools"]
    assert entry["description"] == "second"
    assert entry["inputSchema"]["properties"] == {"s": {"type": "string"}}
    assert entry["annotations"] == {"readOnlyHint": True}
    assert (await t.call({"n": 1}))["isError"] is True  # validated by the new schema
    assert (await t.call({"s": "x"}))["content"][0]["text"] == "{'s': 'x'}"


def test_tool_used_without_its_arguments_says_how_to_call_it() -> None:
    # `@tool` bare, `@tool()` and `@tool("name")` got Python's own "tool() missing 1
    # required positional argument: 'description'"; the reference raises TypeError too
    with pytest.raises(ccwire.CcwireError) as bare:

        @ccwire.tool  # type: ignore[arg-type]
        async def greet(args: dict[str, Any]) -> str:
            return "hi"

    assert isinstance(bare.value, TypeError)
    assert isinstance(bare.value, ccwire.ToolDefinitionError)
    assert str(bare.value) == (
        "@tool over `greet` needs a name and a description: write "
        '`@tool(\'greet\', "what it does", {"x": float})` '
        "(or `@tool(name, description)` to take the schema from its parameters)"
    )
    with pytest.raises(TypeError, match=r"^tool\(\) needs a name and a description: write "):
        ccwire.tool()
    with pytest.raises(
        ccwire.ToolDefinitionError,
        match=r"^tool 'greet' needs a description: write `@tool\('greet', \"what",
    ):
        ccwire.tool("greet")


def test_an_assignment_the_tool_cannot_serve_is_refused_and_undone() -> None:
    t = tool("t", "d", {"n": int})(echo)
    before = t.definition
    with pytest.raises(ToolDefinitionError, match="invalid tool name"):
        t.name = "no spaces"
    with pytest.raises(ToolDefinitionError, match="not callable"):
        t.handler = "nope"  # type: ignore[assignment]
    with pytest.raises(ToolDefinitionError, match="timeout"):
        t.timeout = -1
    assert (t.name, t.handler, t.timeout) == ("t", echo, None)
    assert t.definition is before


def test_the_tool_is_a_plain_dataclass_as_in_the_reference() -> None:
    t = tool("t", "d", {"n": int})(echo)
    assert not type(t).__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert [f.name for f in dataclasses.fields(t)][:5] == [
        "name", "description", "input_schema", "handler", "annotations"
    ]  # fmt: skip
    copy = dataclasses.replace(t, description="other")
    assert copy.definition["description"] == "other" and t.definition["description"] == "d"


# --------------------------------------------------------------------------- calling


@pytest.mark.anyio
async def test_greet_result_is_passed_through_unchanged() -> None:
    @tool("greet", "Greet someone by name", {"name": str})
    async def greet(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"Hello, {args['name']}! Welcome."}]}

    assert await greet.call({"name": "Alice"}) == {
        "content": [{"type": "text", "text": "Hello, Alice! Welcome."}]
    }


@pytest.mark.anyio
async def test_keyword_handler_with_inferred_schema() -> None:
    seen: list[Any] = []

    @tool("scale", "Scale a value")
    async def scale(value: float, factor: int = 2, *, ctx: ToolContext) -> str:
        seen.append(ctx)
        return f"{value * factor:g}"

    assert scale.json_schema == {
        "type": "object",
        "properties": {"value": {"type": "number"}, "factor": {"type": "integer"}},
        "required": ["value"],
        "additionalProperties": False,
    }
    assert await scale.call({"value": 1.5}) == {"content": [text_content("3")]}
    assert await scale.call({"value": 1, "factor": 5}) == {"content": [text_content("5")]}
    assert isinstance(seen[0], ToolContext)
    assert seen[0].tool_name == "scale"
    bad = await scale.call({"value": 1, "other": 2})
    assert bad["isError"] is True
    assert "'other' is not an allowed property" in bad["content"][0]["text"]


@pytest.mark.anyio
async def test_inferred_schema_with_var_keyword_allows_extra_arguments() -> None:
    @tool("kw", "d")
    async def kw(a: str, **rest: Any) -> str:
        return f"{a}:{sorted(rest)}"

    assert "additionalProperties" not in kw.json_schema
    assert await kw.call({"a": "x", "z": 1, "y": 2}) == {"content": [text_content("x:['y', 'z']")]}


def test_inferred_schema_rejects_var_positional() -> None:
    async def handler(*items: int) -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match=r"\*items"):
        tool("t", "d")(handler)


@pytest.mark.anyio
async def test_args_ctx_handler_receives_a_context() -> None:
    got: list[ToolContext] = []

    @tool("c", "d", {"x": int})
    async def with_ctx(args: dict[str, Any], ctx: ToolContext) -> str:
        got.append(ctx)
        return str(args["x"])

    ctx = ToolContext(tool_name="c", tool_use_id="toolu_1", progress_token=4)
    assert with_ctx.wants_context
    assert await with_ctx.call({"x": 1}, ctx) == {"content": [text_content("1")]}
    assert got == [ctx]


@pytest.mark.anyio
async def test_sync_handler_runs_in_a_worker_thread() -> None:
    threads: list[int] = []

    @tool("sync", "d", {"x": int})
    def blocking(args: dict[str, Any]) -> str:
        threads.append(threading.get_ident())
        return f"x={args['x']}"

    assert await blocking.call({"x": 4}) == {"content": [text_content("x=4")]}
    assert threads
    assert threads[0] != threading.get_ident()


@pytest.mark.anyio
async def test_tool_error_gives_exactly_its_message() -> None:
    @tool("fail", "d", {})
    async def fail(args: dict[str, Any]) -> str:
        raise ToolError("fail: something went wrong")

    assert await fail.call({}) == {
        "content": [{"type": "text", "text": "fail: something went wrong"}],
        "isError": True,
    }


@pytest.mark.anyio
async def test_other_exceptions_send_their_text_as_the_reference_does() -> None:
    """`str(exc)`, as claude-agent-sdk sends (tests/compat checks it against the
    reference); an exception without text is named by its class."""

    @tool("boom", "d", {})
    def boom(args: dict[str, Any]) -> str:
        raise KeyError("missing")

    @tool("mute", "d", {})
    def mute(args: dict[str, Any]) -> str:
        raise ValueError

    result = await boom.call({})
    assert result == {"content": [text_content("'missing'")], "isError": True}
    assert await mute.call({}) == {"content": [text_content("ValueError")], "isError": True}


class _BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str() of this exception fails too")


@pytest.mark.anyio
async def test_an_exception_whose_str_raises_is_still_the_tool_error() -> None:
    """Its text could not be read: the model got the server's own "Internal error:
    RuntimeError" instead of the tool's error result."""

    @tool("odd", "d", {})
    async def odd(args: dict[str, Any]) -> str:
        raise _BrokenStr

    @tool("odd_answer", "d", {})
    async def odd_answer(args: dict[str, Any]) -> str:
        raise type("Refusal", (ToolError,), {"__str__": _BrokenStr.__str__})()

    text = "<_BrokenStr: str() failed with RuntimeError>"
    assert await odd.call({}) == {"content": [text_content(text)], "isError": True}
    assert (await odd_answer.call({}))["isError"] is True


async def _answer() -> str:
    return "the answer"


@pytest.mark.anyio
async def test_a_returned_coroutine_is_a_missing_await(caplog: pytest.LogCaptureFixture) -> None:
    """An async handler that returns a coroutine (``return other()``) forgot an await: the
    model got the coroutine's repr as a success, and the coroutine was never awaited."""

    @tool("forgot", "d", {})
    async def forgot(args: dict[str, Any]) -> Any:
        return _answer()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine ... was never awaited"
        result = await forgot.call({})
        gc.collect()
    assert result["isError"] is True
    assert "returned a coroutine object instead of its result (a missing 'await'" in str(result)
    assert "tool 'forgot' raised TypeError" in caplog.text


@pytest.mark.anyio
async def test_a_sync_handler_returning_an_awaitable_has_it_awaited() -> None:
    """As documented, on both backends: trio's worker threads refused to return a
    coroutine ("Trio expected a sync function"), an error result there."""

    @tool("deferred", "d", {})
    def deferred(args: dict[str, Any]) -> Any:
        return _answer()

    assert await deferred.call({}) == {"content": [text_content("the answer")]}


@pytest.mark.anyio
async def test_a_raising_tool_is_logged_once_with_its_traceback_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The model only gets the error result: the developer is told on ``ccwire.tools``,
    one WARNING line (no traceback: tests whose tools raise on purpose stay readable),
    the traceback at DEBUG; a `ToolError` is the tool's own answer and is not logged."""

    @tool("div", "d", {"a": float, "b": float})
    async def div(args: dict[str, Any]) -> str:
        return str(args["a"] / args["b"])

    @tool("refuse", "d", {})
    async def refuse(args: dict[str, Any]) -> str:
        raise ToolError("no")

    with caplog.at_level(logging.WARNING, logger="ccwire"):
        assert (await div.call({"a": 1, "b": 0}))["isError"] is True
        assert (await refuse.call({}))["isError"] is True
    [record] = caplog.records
    assert (record.name, record.levelno, record.exc_info) == ("ccwire.tools", logging.WARNING, None)
    assert record.getMessage().startswith(
        "tool 'div' raised ZeroDivisionError: division by zero; the caller (the model) got "
        "it as an error result"
    )
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="ccwire.tools"):
        await div.call({"a": 1, "b": 0})
    warning, debug = caplog.records
    assert warning.levelno == logging.WARNING and debug.levelno == logging.DEBUG
    assert debug.exc_info is not None and debug.exc_info[0] is ZeroDivisionError
    assert "in div" in caplog.text and "Traceback" in caplog.text


@pytest.mark.anyio
async def test_validation_failure_prevents_the_call() -> None:
    calls: list[Any] = []

    @tool("add", "Add", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> str:
        calls.append(args)
        return "never"

    result = await add.call({"a": 1, "b": "two"})
    assert result == {
        "content": [
            text_content(
                "Input validation error: invalid arguments for tool 'add': "
                "'b' must be number, got string (rule: type)"
            )
        ],
        "isError": True,
    }
    assert calls == []


@pytest.mark.anyio
async def test_json_encoded_arguments_reach_the_handler_decoded() -> None:
    @tool("total", "d", {"xs": list[int]})
    async def total(args: dict[str, Any]) -> str:
        return str(sum(args["xs"]))

    assert await total.call({"xs": "[1, 2, 3]"}) == {"content": [text_content("6")]}


# --------------------------------------------------------------------------- return forms


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float


class WeatherDict(TypedDict):
    city: str
    celsius: float


WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
}
IMAGE = image_content(b"\x89PNG", "image/png")
AUDIO = audio_content(b"RIFF", "audio/wav")
LINK = resource_link("file:///a.txt", "a.txt", mime_type="text/plain", size=3)
EMBEDDED = embedded_text_resource("file:///a.txt", "abc", "text/plain")
BLOB = embedded_blob_resource("file:///b.bin", b"\x00\x01")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hi", {"content": [text_content("hi")]}),
        (
            [text_content("a"), IMAGE, AUDIO, LINK, EMBEDDED, BLOB],
            {"content": [text_content("a"), IMAGE, AUDIO, LINK, EMBEDDED, BLOB]},
        ),
        (["a", 1], {"content": [text_content("a"), text_content("1")]}),
        (AUDIO, {"content": [AUDIO]}),
        (None, {"content": []}),
        ({"content": [AUDIO], "is_error": True}, {"content": [AUDIO], "isError": True}),
        (
            {"content": [], "isError": False, "structuredContent": {"k": 1}},
            {"content": [], "isError": False, "structuredContent": {"k": 1}},
        ),
        ({"content": "plain"}, {"content": [text_content("plain")]}),
        ({"isError": True}, {"isError": True, "content": []}),
        ({"answer": 42}, {"content": [text_content('{"answer": 42}')]}),
        (Weather("Oslo", 3.5), {"content": [text_content('{"city": "Oslo", "celsius": 3.5}')]}),
        (7, {"content": [text_content("7")]}),
    ],
)
@pytest.mark.anyio
async def test_return_forms(value: Any, expected: dict[str, Any]) -> None:
    t = tool("r", "d", {})(lambda args: value)
    assert await t.call({}) == expected


@pytest.mark.anyio
async def test_mcp_result_dict_is_not_copied() -> None:
    result = {"content": [text_content("x")], "isError": False}

    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        return result

    assert await tool("same", "d", {})(handler).call({}) is result


def test_content_helpers_wire_shapes() -> None:
    assert IMAGE == {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}
    assert AUDIO == {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
    assert image_content("AAAA", "image/gif")["data"] == "AAAA"
    assert LINK == {
        "type": "resource_link",
        "uri": "file:///a.txt",
        "name": "a.txt",
        "mimeType": "text/plain",
        "size": 3,
    }
    assert resource_link("u", "n", title="T", description="D") == {
        "type": "resource_link",
        "uri": "u",
        "name": "n",
        "title": "T",
        "description": "D",
    }
    assert EMBEDDED == {
        "type": "resource",
        "resource": {"uri": "file:///a.txt", "text": "abc", "mimeType": "text/plain"},
    }
    assert BLOB == {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAE="}}


@pytest.mark.parametrize("value", [{"city": "Oslo", "celsius": 3.5}, Weather("Oslo", 3.5)])
@pytest.mark.parametrize("schema", [WEATHER_SCHEMA, WeatherDict, Weather])
@pytest.mark.anyio
async def test_structured_output(value: Any, schema: Any) -> None:
    t = tool("weather", "d", {"city": str}, output_schema=schema)(lambda args: value)
    assert t.definition["outputSchema"] == WEATHER_SCHEMA
    assert await t.call({"city": "Oslo"}) == {
        "content": [text_content('{"city": "Oslo", "celsius": 3.5}')],
        "structuredContent": {"city": "Oslo", "celsius": 3.5},
    }


@pytest.mark.parametrize(
    "value",
    [{"city": "Oslo", "celsius": "warm"}, {"content": [], "structuredContent": {"city": 1}}],
)
@pytest.mark.anyio
async def test_structured_output_that_breaks_its_schema_is_an_error(value: Any) -> None:
    t = tool("weather", "d", {}, output_schema=WEATHER_SCHEMA)(lambda args: value)
    result = await t.call({})
    assert result["isError"] is True
    assert "does not match its output schema" in result["content"][0]["text"]
    assert "structuredContent" not in result


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "array", "items": {"type": "integer"}},
        {"type": ["object", "null"]},
        {"anyOf": [{"type": "object"}, {"type": "null"}]},
        {"$ref": "#/$defs/X", "$defs": {"X": {"type": "object"}}},
    ],
)
def test_output_schema_must_describe_an_object(schema: dict[str, Any]) -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool 'w': output_schema must be an object"):
        tool("w", "d", {}, output_schema=schema)(echo)


def test_an_output_schema_that_is_no_schema_names_output_schema() -> None:
    with pytest.raises(ToolDefinitionError, match=r"^output_schema must be a"):
        tool("w", "d", {}, output_schema=int)(echo)


WEATHER_JSON = '{"city": "Oslo", "celsius": 3.5}'


@pytest.mark.parametrize(
    "value",
    [
        "sunny",
        [text_content("sunny"), IMAGE],
        IMAGE,
        None,
        {"content": [text_content("sunny")]},
        {"content": [text_content(WEATHER_JSON), text_content("and more")]},
        {"content": [text_content("[1, 2]")], "isError": False},
        42,
    ],
)
@pytest.mark.anyio
async def test_a_tool_with_an_output_schema_must_return_structured_data(value: Any) -> None:
    t = tool("weather", "d", {}, output_schema=WEATHER_SCHEMA)(lambda args: value)
    result = await t.call({})
    assert result["isError"] is True
    assert "structuredContent" not in result
    text = result["content"][0]["text"]
    if isinstance(value, int):
        assert text == (
            "Tool 'weather' returned output that does not match its output schema: "
            "output must be object, got integer (rule: type)"
        )
    else:
        assert text.startswith("Tool 'weather' has an output schema, so it must return structured")


@pytest.mark.parametrize(
    "value",
    [
        WEATHER_JSON,
        [text_content(WEATHER_JSON)],
        {"content": [text_content(WEATHER_JSON)]},
        {"content": WEATHER_JSON, "isError": False},
    ],
)
@pytest.mark.anyio
async def test_structured_content_is_derived_from_one_json_text_block(value: Any) -> None:
    t = tool("weather", "d", {}, output_schema=WEATHER_SCHEMA)(lambda args: value)
    result = await t.call({})
    assert result["content"] == [text_content(WEATHER_JSON)]
    assert result["structuredContent"] == json.loads(WEATHER_JSON)
    assert not result.get("isError")


@pytest.mark.anyio
async def test_a_derived_structure_must_match_the_schema_too() -> None:
    t = tool("weather", "d", {}, output_schema=WEATHER_SCHEMA)(
        lambda args: '{"city": 1, "celsius": 2}'
    )
    result = await t.call({})
    assert result == {
        "content": [
            text_content(
                "Tool 'weather' returned output that does not match its output schema: "
                "'city' must be string, got integer (rule: type)"
            )
        ],
        "isError": True,
    }


@pytest.mark.anyio
async def test_error_results_of_a_structured_tool_need_no_structured_content() -> None:
    @tool("weather", "d", {"city": str}, output_schema=WEATHER_SCHEMA)
    async def weather(args: dict[str, Any]) -> Any:
        if args["city"] == "Atlantis":
            raise ToolError("no such city")
        return {"content": [text_content("offline")], "isError": True}

    assert await weather.call({"city": "Atlantis"}) == {
        "content": [text_content("no such city")],
        "isError": True,
    }
    assert await weather.call({"city": "Oslo"}) == {
        "content": [text_content("offline")],
        "isError": True,
    }
    invalid = await weather.call({})
    assert invalid["isError"] is True and "'city' is required" in invalid["content"][0]["text"]


@pytest.mark.anyio
async def test_a_content_shaped_dict_that_matches_the_schema_is_data() -> None:
    schema = {"type": "object", "properties": {"type": {"type": "string"}}}
    t = tool("kind", "d", {}, output_schema=schema)(lambda args: {"type": "image"})
    assert await t.call({}) == {
        "content": [text_content('{"type": "image"}')],
        "structuredContent": {"type": "image"},
    }


@pytest.mark.anyio
async def test_structured_content_must_be_an_object_even_without_an_output_schema() -> None:
    t = tool("raw", "d", {})(lambda args: {"content": [], "structuredContent": [1, 2]})
    result = await t.call({})
    assert result["isError"] is True
    assert "structuredContent that is not a JSON object" in result["content"][0]["text"]


@pytest.mark.anyio
async def test_a_pydantic_model_becomes_structured_output() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Forecast(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        city: str
        high: int
        hourly: list[float] = []

    @tool("forecast", "d", {"city": str}, output_schema=Forecast)
    async def forecast(args: dict[str, Any]) -> Any:
        return Forecast(city=args["city"], high=21, hourly=[20.5, 21])

    assert forecast.definition["outputSchema"]["type"] == "object"
    assert forecast.definition["outputSchema"]["required"] == ["city", "high"]
    data = {"city": "Oslo", "high": 21, "hourly": [20.5, 21.0]}
    assert await forecast.call({"city": "Oslo"}) == {
        "content": [text_content(json.dumps(data))],
        "structuredContent": data,
    }


@pytest.mark.anyio
async def test_a_pydantic_model_that_breaks_the_output_schema_is_an_error() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Wrong(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        city: int
        celsius: float

    t = tool("weather", "d", {}, output_schema=WEATHER_SCHEMA)(
        lambda args: Wrong(city=3, celsius=1.5)
    )
    result = await t.call({})
    assert result["isError"] is True
    assert "'city' must be string, got integer" in result["content"][0]["text"]


@pytest.mark.anyio
async def test_unserializable_result_is_an_error_not_an_exception() -> None:
    loop: list[Any] = []
    loop.append(loop)
    t = tool("loop", "d", {})(lambda args: {"x": loop})
    result = await t.call({})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Circular reference detected"  # json's own words


@pytest.mark.anyio
async def test_context_progress_and_log_go_through_send() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    ctx = ToolContext(tool_name="t", progress_token="p1", send=send, log_level="info")
    assert await ctx.report_progress(1, 4, "a quarter") is True
    assert await ctx.report_progress(2) is True
    assert await ctx.log("debug", "dropped: below the level") is False
    assert await ctx.log("warning", {"k": 1}, logger="db") is True
    assert sent == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": 1, "total": 4, "message": "a quarter"},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": 2},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "warning", "data": {"k": 1}, "logger": "db"},
        },
    ]


@pytest.mark.anyio
async def test_an_unknown_log_level_is_refused_before_anything_is_sent() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        await ToolContext(tool_name="t", send=send).log("loud", "x")
    assert sent == []


@pytest.mark.anyio
async def test_sync_context_methods_hop_from_the_worker_thread_to_the_loop() -> None:
    sent: list[tuple[int, dict[str, Any]]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append((threading.get_ident(), message))

    ctx = ToolContext(tool_name="t", progress_token="p", send=send, log_level="info")

    def in_worker() -> list[bool]:
        return [
            ctx.report_progress_sync(1, 2, "half"),
            ctx.log_sync("info", "hi", logger="w"),
            ctx.log_sync("debug", "below the level"),
            ToolContext(tool_name="t", send=send).report_progress_sync(1),  # no token
        ]

    assert await anyio.to_thread.run_sync(in_worker) == [True, True, False, False]
    loop_thread = threading.get_ident()
    assert [(tid, m["method"]) for tid, m in sent] == [
        (loop_thread, "notifications/progress"),
        (loop_thread, "notifications/message"),
    ]
    assert sent[0][1]["params"] == {
        "progressToken": "p",
        "progress": 1,
        "total": 2,
        "message": "half",
    }
    assert sent[1][1]["params"] == {"level": "info", "data": "hi", "logger": "w"}


@pytest.mark.anyio
async def test_sync_context_methods_refuse_the_event_loop_thread() -> None:
    ctx = ToolContext(tool_name="t", progress_token=1)
    with pytest.raises(RuntimeError, match=r"use await ctx\.report_progress\(\.\.\.\)"):
        ctx.report_progress_sync(1)
    with pytest.raises(RuntimeError, match=r"log_sync\(\) can only be called from the worker"):
        ctx.log_sync("info", "x")


@pytest.mark.anyio
async def test_progress_without_token_and_failing_send_are_harmless() -> None:
    async def broken(message: dict[str, Any]) -> None:
        raise ConnectionError("gone")

    assert await ToolContext(tool_name="t", send=broken).report_progress(1) is False
    assert (
        await ToolContext(tool_name="t", progress_token=1, send=broken).report_progress(1) is False
    )
    assert await ToolContext(tool_name="t").log("info", "nowhere to go") is False
    assert ToolContext(tool_name="t").progress_token is None
