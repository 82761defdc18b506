"""`ToolAnnotations` as the reference builds it: either spelling of each hint, the
``maxResultSizeChars`` hint copied into ``_meta``, and the ``tools/list`` entry the CLI
receives the same from both packages (the reference run in its own venv)."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
from pathlib import Path
from typing import Any

import mcp.types
import pytest

import ccwire
from ccwire import ToolAnnotations, ToolDefinitionError, create_sdk_mcp_server, tool

# Each case: the keyword arguments given to ToolAnnotations, in either package.
CASES: list[dict[str, Any]] = [
    {"readOnlyHint": True},
    {"read_only_hint": True, "destructive_hint": False},
    {"title": "Weather", "openWorldHint": True, "idempotentHint": True},
    {"readOnlyHint": True, "maxResultSizeChars": 500_000},
    {"max_result_size_chars": 1234, "open_world_hint": False},
    {"readOnlyHint": True, "read_only_hint": True},
    {},
]

_REFERENCE_SCRIPT = r"""
import asyncio, json, sys
from claude_agent_sdk import ToolAnnotations, create_sdk_mcp_server, tool
from claude_agent_sdk._internal.sdk_mcp_bridge import SdkMcpBridge

async def handler(args):
    return {"content": [{"type": "text", "text": "ok"}]}

async def main():
    out = []
    for case in json.loads(sys.argv[1]):
        t = tool("t", "d", {"x": str}, annotations=ToolAnnotations(**case))(handler)
        server = create_sdk_mcp_server("s", tools=[t])["instance"]
        bridge = SdkMcpBridge("s", server)
        await bridge.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}})
        await bridge.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = await bridge.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        await bridge.aclose()
        out.append(listed["result"]["tools"][0])
    print(json.dumps(out))

asyncio.run(main())
"""


async def _handler(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}]}


async def _ccwire_entry(case: dict[str, Any]) -> dict[str, Any]:
    t = tool("t", "d", {"x": str}, annotations=ToolAnnotations(**case))(_handler)
    server = create_sdk_mcp_server("s", tools=[t])["instance"]
    listed = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert listed is not None
    entry: dict[str, Any] = listed["result"]["tools"][0]
    return entry


def _hints(entry: dict[str, Any]) -> tuple[Any, Any]:
    return entry.get("annotations") or None, entry.get("_meta") or None


@pytest.fixture(scope="module")
def reference_entries(reference_python: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [str(reference_python), "-c", _REFERENCE_SCRIPT, json.dumps(CASES)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    entries: list[dict[str, Any]] = json.loads(out)
    return entries


@pytest.mark.anyio
async def test_tools_list_entries_match_the_reference(
    reference_entries: list[dict[str, Any]],
) -> None:
    for case, theirs in zip(CASES, reference_entries, strict=True):
        ours = await _ccwire_entry(case)
        assert _hints(ours) == _hints(theirs), case


def test_both_spellings_build_equal_annotations() -> None:
    snake = ToolAnnotations(read_only_hint=True, max_result_size_chars=10, title="T")
    camel = ToolAnnotations(readOnlyHint=True, maxResultSizeChars=10, title="T")
    assert snake == camel
    assert hash(snake) == hash(camel)
    assert camel.read_only_hint is True and snake.readOnlyHint is True
    assert camel.max_result_size_chars == 10 and snake.maxResultSizeChars == 10
    assert camel.destructive_hint is None and camel.destructiveHint is None
    assert snake.to_dict() == {"title": "T", "readOnlyHint": True}
    assert snake.meta() == {"anthropic/maxResultSizeChars": 10}
    assert dict(snake) == {"title": "T", "readOnlyHint": True, "maxResultSizeChars": 10}


def test_model_dump_follows_pydantic() -> None:
    a = ToolAnnotations(readOnlyHint=True)
    assert a.model_dump(by_alias=True, exclude_none=True) == {"readOnlyHint": True}
    assert a.model_dump()["read_only_hint"] is True
    assert a.model_dump()["destructive_hint"] is None


def test_unknown_hints_are_kept_and_sent() -> None:
    a = ToolAnnotations(readOnlyHint=True, futureHint="x")
    assert a.extra == {"futureHint": "x"}
    assert a.futureHint == "x"
    assert a.to_dict() == {"readOnlyHint": True, "futureHint": "x"}
    with pytest.raises(AttributeError):
        _ = a.noSuchHint


def test_annotations_are_immutable_and_copy() -> None:
    a = ToolAnnotations(open_world_hint=True, extraHint=1)
    with pytest.raises(AttributeError, match="immutable"):
        a.open_world_hint = False  # type: ignore[misc]
    assert copy.deepcopy(a) == a
    assert pickle.loads(pickle.dumps(a)) == a
    assert repr(a) == "ToolAnnotations(open_world_hint=True, extraHint=1)"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"read_only_hint": "yes"},
        {"readOnlyHint": 1},
        {"title": 3},
        {"max_result_size_chars": 0},
        {"maxResultSizeChars": True},
        {"read_only_hint": True, "readOnlyHint": False},
    ],
)
def test_bad_hints_are_typed_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ToolDefinitionError, match="ToolAnnotations"):
        ToolAnnotations(**kwargs)


def test_mcp_models_and_mappings_carry_the_size_hint_into_meta() -> None:
    class Sized(mcp.types.ToolAnnotations, extra="allow"):  # the reference's shape
        maxResultSizeChars: int | None = None

    for given in (
        Sized(read_only_hint=True, maxResultSizeChars=99),
        {"read_only_hint": True, "max_result_size_chars": 99},
        {"readOnlyHint": True, "maxResultSizeChars": 99},
    ):
        t = tool("t", "d", {}, annotations=given)(_handler)  # type: ignore[arg-type]
        assert t.definition["annotations"] == {"readOnlyHint": True}
        assert t.definition["_meta"] == {"anthropic/maxResultSizeChars": 99}


def test_explicit_meta_wins_over_the_size_hint() -> None:
    t = tool(
        "t",
        "d",
        {},
        annotations=ToolAnnotations(max_result_size_chars=5),
        meta={"anthropic/maxResultSizeChars": 7, "other": 1},
    )(_handler)
    assert t.definition["_meta"] == {"anthropic/maxResultSizeChars": 7, "other": 1}


def test_public_module() -> None:
    assert ToolAnnotations.__module__ == "ccwire"
    assert ccwire.ToolAnnotations is ToolAnnotations
