"""One reply path: every request of the CLI gets exactly one answer, even when the
answer a user callback produced cannot be encoded as JSON.

A tool result, a permission answer or a hook answer holding a lone surrogate, a
``set``, NaN or a non-UTF-8 file name used to be logged and never answered, and the
CLI waited forever. Now the CLI gets an answer naming the cause (a failed tool result
for ``tools/call``, an error answer otherwise), the user gets a `CallbackError`
(``on_callback_error``, and an ``error`` event of source ``"callback"`` in a session),
and the conversation goes on.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

from ccwire import (
    CallbackError,
    ClaudeCodeAgent,
    ClaudeSDKClient,
    ErrorOccurred,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    ToolPermissionContext,
    create_sdk_mcp_server,
    tool,
)
from tests.fixtures.mcp_schema import SchemaCheck

from .conftest import FaultOptions, no_leaks

pytestmark = pytest.mark.anyio
LIMIT = 30


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@tool("surrogate", "A lone surrogate in the text", {})
async def surrogate(args: dict[str, Any]) -> dict[str, Any]:
    return _text("half a pair: \ud800")


@tool("a_set", "A set in the structured content", {})
async def a_set(args: dict[str, Any]) -> dict[str, Any]:
    return {**_text("ok"), "structuredContent": {"ids": {1, 2}}}


@tool("nan", "NaN, which strict JSON has no spelling for", {})
async def nan(args: dict[str, Any]) -> dict[str, Any]:
    return {**_text("ok"), "structuredContent": {"x": float("nan")}}


@tool("filename", "A file name that is not UTF-8", {})
def filename(args: dict[str, Any]) -> dict[str, Any]:
    return _text(os.fsdecode(b"report-\xff.txt"))  # 'report-\udcff.txt'


@tool("fine", "An ordinary tool", {})
async def fine(args: dict[str, Any]) -> dict[str, Any]:
    return _text("still serving")


async def allow_with_a_set(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
    return PermissionResultAllow(updated_input={"x": {1, 2}})


async def hook_with_surrogate(inp: Any, tid: Any, ctx: Any) -> Any:
    return {"systemMessage": "bad \udfff"}


def _options(fault_options: FaultOptions, reported: list[CallbackError]) -> Any:
    server = create_sdk_mcp_server("s", tools=[surrogate, a_set, nan, filename, fine])
    return fault_options(
        "unencodable",
        mcp_servers={"s": server},
        can_use_tool=allow_with_a_set,
        hooks={"Stop": [HookMatcher(hooks=[hook_with_surrogate])]},
        on_callback_error=reported.append,
    )


def _check_answers(final: Any) -> None:
    assert isinstance(final, ResultMessage) and final.result == "unencodable done"
    got = final.structured_output
    assert isinstance(got, dict)
    for name, cause in (
        ("surrogate", "'\\ud800' is a lone surrogate"),
        ("a_set", "object of type set is not json serializable"),
        ("nan", "nan and infinity have no spelling in json"),
        ("filename", "'\\udcff' is a lone surrogate"),
    ):
        answer = got[name]
        assert answer["subtype"] == "success", name
        result = answer["response"]["mcp_response"]["result"]
        assert result["isError"] is True, name
        text = result["content"][0]["text"]
        assert text.startswith("ccwire could not encode the answer: cannot encode"), text
        assert cause in text.lower(), (name, text)
    for key in ("perm", "hook"):
        assert got[key]["subtype"] == "error", key
        assert "could not encode the answer" in got[key]["error"], got[key]
    fine_result = got["fine"]["response"]["mcp_response"]["result"]
    assert fine_result["content"] == [{"type": "text", "text": "still serving"}]


def _expect_broken_results(check: SchemaCheck) -> None:
    """The schema check saw the two results that could not be sent (a set and NaN are
    not JSON values); what the CLI got instead is checked by `_check_answers`."""
    assert len(check.failures) == 2 and all("lost fields" in f for f in check.failures)
    check.failures.clear()


async def test_every_unencodable_answer_gets_an_answer_and_an_error(
    fault_options: FaultOptions, mcp_schema_check: SchemaCheck
) -> None:
    reported: list[CallbackError] = []
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(_options(fault_options, reported)) as client:
                await client.query("hi")
                items = [m async for m in client.receive_response()]
    _check_answers(items[-1])
    assert sorted(e.kind for e in reported) == ["can_use_tool", "hook"] + ["tool"] * 4
    assert all("could not be encoded as JSON" in str(e) for e in reported)
    _expect_broken_results(mcp_schema_check)


async def test_a_session_publishes_them_as_callback_errors(
    fault_options: FaultOptions, mcp_schema_check: SchemaCheck
) -> None:
    reported: list[CallbackError] = []
    events: list[ErrorOccurred] = []
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeCodeAgent(_options(fault_options, reported)) as agent:
                session = agent.create_session("hi")
                session.on("error", events.append)
                await session.start()
                await session.wait_for_completion()
                final = session.last_result
    _check_answers(final)
    callback_errors = [e.error for e in events if e.source == "callback"]
    assert len(callback_errors) == 6 and all(isinstance(e, CallbackError) for e in callback_errors)
    assert len(reported) == 6  # the user's own handler still hears of each
    _expect_broken_results(mcp_schema_check)


@tool("echo", "Answers at once (no await)", {"text": str})
async def echo(args: dict[str, Any]) -> dict[str, Any]:
    return _text(args["text"])


@tool("slow_echo", "Answers after a checkpoint (a worker serves it)", {"text": str})
async def slow_echo(args: dict[str, Any]) -> dict[str, Any]:
    await anyio.lowlevel.checkpoint()
    return _text(args["text"])


@tool("bad_echo", "Answers at once with what JSON cannot carry", {"text": str})
async def bad_echo(args: dict[str, Any]) -> dict[str, Any]:
    return {**_text(args["text"]), "structuredContent": {"ids": {1}}}


async def test_a_burst_of_calls_gets_every_answer_once(
    fault_options: FaultOptions, mcp_schema_check: SchemaCheck
) -> None:
    """40 calls in one write: the answers given at once are written together after the
    burst (in writes a pipe takes whole), those of workers on their own; each exactly once."""
    server = create_sdk_mcp_server("s", tools=[echo, slow_echo, bad_echo])
    count = 40
    options = fault_options(
        "burst",
        f"echo,slow_echo,echo,bad_echo:{count}",
        mcp_servers={"s": server},
        on_callback_error=lambda error: None,
    )
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                items = [m async for m in client.receive_response()]
    final = items[-1]
    assert isinstance(final, ResultMessage) and final.result == "burst done"
    got = final.structured_output
    assert isinstance(got, dict)
    assert got["answers"] == {f"b{n}": 1 for n in range(count)}
    for n in range(count):
        text = got["texts"][f"b{n}"]
        if n % 4 == 3:
            assert text.startswith("ccwire could not encode the answer"), text
        else:
            assert text == f"{n:03d}" * 100
    assert len(mcp_schema_check.failures) == count // 4  # the sets: not sent, as checked
    assert all("lost fields" in f for f in mcp_schema_check.failures)
    mcp_schema_check.failures.clear()
