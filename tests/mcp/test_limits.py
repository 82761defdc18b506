"""Per-tool output-size and rate limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

import ccwire._mcp.limits as limits_module
from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ToolAnnotations,
    ToolDefinitionError,
    create_sdk_mcp_server,
    image_content,
    limit_output,
    rate_limit,
    tool,
)
from ccwire._mcp.limits import output_size
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fixtures.mcp_schema import SchemaCheck

pytestmark = pytest.mark.anyio


@tool(
    "say",
    "Repeat a letter",
    {"letter": str, "times": int},
    annotations=ToolAnnotations(read_only_hint=True),
)
async def say(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": args["letter"] * args["times"]}]}


def text_of(result: dict[str, Any]) -> str:
    return "".join(b["text"] for b in result["content"] if b["type"] == "text")


async def test_output_under_the_limit_passes_unchanged() -> None:
    capped = limit_output(say, 10)
    assert await capped.call({"letter": "a", "times": 10}) == await say.call(
        {"letter": "a", "times": 10}
    )


async def test_output_over_the_limit_is_a_clear_error() -> None:
    result = await limit_output(say, 10).call({"letter": "a", "times": 11})
    assert result["isError"] is True
    assert text_of(result) == (
        "Tool 'say' returned 11 characters of output, over its limit of 10 (limit_output)"
    )


async def test_truncate_mode_cuts_text_and_says_so() -> None:
    result = await limit_output(say, 10, on_exceed="truncate").call({"letter": "b", "times": 25})
    assert not result.get("isError")
    assert result["content"][0]["text"] == "b" * 10
    assert "15 of 25 characters dropped" in result["content"][1]["text"]


async def test_truncate_mode_cannot_cut_images() -> None:
    @tool("pic", "An image", {})
    async def pic(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [image_content(b"x" * 300, "image/png")]}

    result = await limit_output(pic, 100, on_exceed="truncate").call({})
    assert result["isError"] is True and "limit of 100" in text_of(result)


def test_output_size_counts_every_kind_of_payload() -> None:
    result = {
        "content": [
            {"type": "text", "text": "abc"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "x:", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///a", "name": "a"},
        ],
        "structuredContent": {"k": 1},
    }
    assert output_size(result) == 3 + 4 + 5 + len("file:///a") + len('{"k":1}')


async def test_rate_limit_rejects_calls_over_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return now[0]

    monkeypatch.setattr(limits_module, "time", Clock)
    limited = rate_limit(say, calls=2, per_seconds=60)
    args = {"letter": "c", "times": 1}
    assert text_of(await limited.call(args)) == "c"
    now[0] += 10
    assert text_of(await limited.call(args)) == "c"
    now[0] += 10
    refused = await limited.call(args)
    assert refused["isError"] is True
    assert text_of(refused) == (
        "Tool 'say' is rate-limited to 2 calls per 60 s; try again in 40.0 s"
    )
    now[0] += 40  # the first call leaves the window
    assert text_of(await limited.call(args)) == "c"


async def test_wrappers_keep_the_definition_and_validation() -> None:
    wrapped = rate_limit(limit_output(say, 100), calls=5, per_seconds=1)
    assert wrapped.definition == say.definition
    assert wrapped.name == "say" and wrapped.annotations == say.annotations
    bad = await wrapped.call({"letter": "a", "times": "many"})
    assert bad["isError"] is True and "Input validation error: invalid arguments" in text_of(bad)


def test_bad_limits_are_definition_errors() -> None:
    makers: tuple[Callable[[], object], ...] = (
        lambda: limit_output(say, 0),
        lambda: limit_output(say, True),
        lambda: limit_output(say, 5, on_exceed="drop"),  # type: ignore[arg-type]
        lambda: rate_limit(say, 0, 1),
        lambda: rate_limit(say, 1, 0),
    )
    for make in makers:
        with pytest.raises(ToolDefinitionError):
            make()


async def test_limits_apply_through_the_session() -> None:
    server = create_sdk_mcp_server("s", tools=[rate_limit(say, calls=1, per_seconds=3600)])
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    answers = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake, None)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(
                ClaudeAgentOptions(mcp_servers={"s": server}), transport=transport
            ):
                for _ in range(2):
                    resp = await fake.mcp(
                        "s", "tools/call", {"name": "say", "arguments": {"letter": "z", "times": 2}}
                    )
                    answers.append(resp["response"]["mcp_response"]["result"])
    assert answers[0] == {"content": [{"type": "text", "text": "zz"}]}
    assert answers[1]["isError"] is True and "rate-limited" in text_of(answers[1])


@pytest.mark.parametrize(
    ("structured", "cause"),
    [
        ({(1, 2): "a tuple key"}, "keys must be str, int, float, bool or None, not tuple"),
        ({"n": 10**5000}, "an integer of more than"),
        ({"ids": {1, 2}}, "Object of type set is not JSON serializable"),
    ],
)
async def test_a_capped_result_json_cannot_carry_is_refused_by_the_wire_as_any_other(
    structured: dict[Any, Any], cause: str, mcp_schema_check: SchemaCheck
) -> None:
    """`limit_output` measured such a result with `json.dumps`, which raised: the model
    was told the tool had raised (Python's own words), and no `CallbackError` said the
    answer could not be sent. Now it is refused where every answer is, naming the cause."""

    @tool("odd", "Returns what JSON cannot carry", {})
    async def odd(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}], "structuredContent": structured}

    server = create_sdk_mcp_server("s", tools=[limit_output(odd, 1000)])
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    reported: list[Exception] = []
    options = ClaudeAgentOptions(mcp_servers={"s": server}, on_callback_error=reported.append)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake, None)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options, transport=transport):
                resp = await fake.mcp("s", "tools/call", {"name": "odd", "arguments": {}})
    result = resp["response"]["mcp_response"]["result"]
    assert result["isError"] is True
    assert text_of(result).startswith("ccwire could not encode the answer: cannot encode")
    assert cause in text_of(result)
    assert len(reported) == 1 and cause in str(reported[0])
    mcp_schema_check.failures.clear()  # it saw the result that could not be sent (not all)
