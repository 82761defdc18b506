"""The audit log: tool calls, permission and hook decisions as JSON lines."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    AuditLog,
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
    create_sdk_mcp_server,
    redact_keys,
    tool,
)
from ccwire.testing import FakeCLI
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


@tool("login", "Log in", {"user": str, "password": str})
async def login(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"welcome {args['user']}"}]}


@tool("explode", "Always fails", {})
async def explode(args: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("kaboom")


def records(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


async def call(fake: FakeCLI, name: str, arguments: Mapping[str, Any], tid: str) -> Any:
    params = {"name": name, "arguments": dict(arguments), "_meta": {"claudecode/toolUseId": tid}}
    return await fake.mcp("s", "tools/call", params)


async def test_tool_calls_permissions_and_hooks_are_recorded() -> None:
    buf = io.StringIO()

    async def decide(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        if inp.get("user") == "mallory":
            return PermissionResultDeny(message="not mallory")
        return PermissionResultAllow()

    async def pre(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> dict[str, Any]:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "frozen",
            }
        }

    async def gate(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> dict[str, Any]:
        answer = {"behavior": "deny", "message": "by policy"}  # (it was recorded as "ok")
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": answer}}

    server = create_sdk_mcp_server("s", tools=[login, explode])
    opts = ClaudeAgentOptions(
        mcp_servers={"s": server},
        can_use_tool=decide,
        hooks={
            "PreToolUse": [HookMatcher(hooks=[pre])],
            "PermissionRequest": [HookMatcher(hooks=[gate])],
        },
        audit_log=AuditLog(buf),
    )
    async with connected(opts) as (_, fake):
        await fake.mcp("s", "tools/list")  # not audited
        await call(fake, "login", {"user": "alice", "password": "hunter2"}, "toolu_1")
        await call(fake, "explode", {}, "toolu_2")
        await call(fake, "nope", {}, "toolu_3")
        await fake.request(
            "can_use_tool", tool_name="mcp__s__login", input={"user": "alice"}, tool_use_id="t4"
        )
        await fake.request(
            "can_use_tool", tool_name="mcp__s__login", input={"user": "mallory"}, tool_use_id="t5"
        )
        await fake.request(
            "hook_callback",
            callback_id="hook_0",
            input={
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "rm -rf /", "token": "abc"},
            },
            tool_use_id="t6",
        )
        await fake.request(
            "hook_callback",
            callback_id="hook_1",
            input={"hook_event_name": "PermissionRequest", "tool_name": "Edit", "tool_input": {}},
            tool_use_id="t7",
        )
    got = records(buf)
    assert [(r["kind"], r["who"], r["what"], r["outcome"]) for r in got] == [
        ("tool_call", "mcp:s/login", "login", "ok"),
        ("tool_call", "mcp:s/explode", "explode", "error"),
        ("tool_call", "mcp:s/nope", "nope", "failed"),
        ("permission", "can_use_tool", "mcp__s__login", "allow"),
        ("permission", "can_use_tool", "mcp__s__login", "deny"),
        ("hook", "hook:hook_0", "PreToolUse:Bash", "deny"),
        ("hook", "hook:hook_1", "PermissionRequest:Edit", "deny"),
    ]
    assert got[0]["arguments"] == {"user": "alice", "password": "***"}
    assert got[0]["tool_use_id"] == "toolu_1"
    assert got[1]["detail"] == "kaboom"  # what the model was told, as the reference tells it
    assert "Unknown tool" in got[2]["detail"]
    assert got[4]["detail"] == "not mallory"
    assert got[5]["detail"] == "frozen"
    assert got[6]["detail"] == "by policy"
    assert got[5]["arguments"] == {"command": "rm -rf /", "token": "***"}
    assert all(isinstance(r["duration_ms"], float) and r["duration_ms"] >= 0 for r in got)
    assert all(r["ts"].endswith("Z") for r in got)
    assert "hunter2" not in buf.getvalue()


async def test_missing_permission_callback_is_recorded_as_error() -> None:
    buf = io.StringIO()
    async with connected(ClaudeAgentOptions(audit_log=AuditLog(buf))) as (_, fake):
        answer = await fake.request("can_use_tool", tool_name="Bash", input={"command": "ls"})
    assert answer["subtype"] == "error"
    (record,) = records(buf)
    assert record["outcome"] == "error"
    assert "canUseTool callback is not provided" in record["detail"]


async def test_withdrawn_tool_call_is_recorded_as_cancelled() -> None:
    started = anyio.Event()

    @tool("hang", "Never returns", {})
    async def hang(args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError

    buf = io.StringIO()
    server = create_sdk_mcp_server("s", tools=[hang])
    opts = ClaudeAgentOptions(mcp_servers={"s": server}, audit_log=AuditLog(buf))
    async with connected(opts) as (_, fake):
        rid = await fake.start_request(
            "mcp_message",
            server_name="s",
            message={"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "hang"}},
        )
        with anyio.fail_after(5):
            await started.wait()
        await fake.cancel(rid)
        await fake.request("no_such_subtype")  # a round trip: the cancel was handled
    (record,) = records(buf)
    assert record["outcome"] == "cancelled" and record["what"] == "hang"


async def test_custom_none_and_broken_redactors() -> None:
    def upper(what: str, arguments: Any) -> Any:
        return {k: str(v).upper() for k, v in arguments.items()}

    def broken(what: str, arguments: Any) -> Any:
        raise ValueError("oops")

    server = create_sdk_mcp_server("s", tools=[login])
    outputs = []
    for redact in (upper, None, broken, redact_keys(["user"], mask="<hidden>")):
        buf = io.StringIO()
        opts = ClaudeAgentOptions(mcp_servers={"s": server}, audit_log=AuditLog(buf, redact=redact))
        async with connected(opts) as (_, fake):
            await call(fake, "login", {"user": "bob", "password": "pw"}, "t")
        outputs.append(records(buf)[0]["arguments"])
    assert outputs == [
        {"user": "BOB", "password": "PW"},
        {"user": "bob", "password": "pw"},
        "***",
        {"user": "<hidden>", "password": "pw"},
    ]


async def test_path_target_appends_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    server = create_sdk_mcp_server("s", tools=[login])
    for n in range(2):
        log = AuditLog(path)
        opts = ClaudeAgentOptions(mcp_servers={"s": server}, audit_log=log)
        async with connected(opts) as (_, fake):
            await call(fake, "login", {"user": f"u{n}", "password": "x"}, f"t{n}")
        log.close()
        assert log.records_written == 1
    lines = path.read_text().splitlines()
    assert [json.loads(line)["arguments"]["user"] for line in lines] == ["u0", "u1"]
    assert repr(log) == f"AuditLog({str(path)!r})"
    assert "audit_log=AuditLog(" in repr(ClaudeAgentOptions(audit_log=log))


def test_redact_keys_walks_nested_values() -> None:
    redact = redact_keys()
    value = {"a": [{"API-Key": "k", "b": 1}], "Authorization": "Bearer x", "ok": "fine"}
    assert redact("t", value) == {
        "a": [{"API-Key": "***", "b": 1}],
        "Authorization": "***",
        "ok": "fine",
    }
    assert redact("t", "plain") == "plain"


def test_write_failure_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(io.StringIO):
        def write(self, s: str) -> int:
            raise OSError("disk full")

    log = AuditLog(Broken())
    log.write({"kind": "tool_call"})
    assert log.records_written == 0
    assert "disk full" in caplog.text
