"""The spans and metrics of a session (`Telemetry`) over the in-memory fake CLI: the
frames the real CLI sends only in some runs (subagents, hook events, error results of
each kind, a tool still running at close), content across turns and prompt shapes, and
the environment that lets the CLI join the trace. The whole flow against the real CLI
is in ``tests/e2e/test_telemetry_e2e.py``."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    ResultMessage,
    SpawnError,
    Telemetry,
    ToolError,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fixtures.fake_session import connected

pytest.importorskip("opentelemetry.sdk.trace", reason="needs ccwire[otel]")

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode

from tests.fixtures.failing_otel import FailingProcessor, FailingProvider

pytestmark = pytest.mark.anyio

SECRET = "sk-ant-api03-Zq9xY8wV7uT6sR5q"


@dataclass
class Otel:
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    telemetry: Telemetry

    def one(self, name: str) -> ReadableSpan:
        found = [s for s in self.spans.get_finished_spans() if s.name == name]
        assert len(found) == 1, [s.name for s in self.spans.get_finished_spans()]
        return found[0]

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            p
            for rm in data.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
            if m.name == metric
            for p in m.data.data_points
        ]


def make_otel(**telemetry: Any) -> Otel:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    return Otel(
        spans,
        reader,
        Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider, **telemetry),
    )


@pytest.fixture
def otel() -> Otel:
    return make_otel()


def attrs_of(span: Any) -> dict[str, Any]:
    return dict(span.attributes or {})


def events_of(span: ReadableSpan, name: str) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == name]


async def test_a_subagent_hook_events_and_content_over_two_turns() -> None:
    otel = make_otel(record_content=True)
    options = ClaudeAgentOptions(model="claude-asked", telemetry=otel.telemetry)
    async with connected(options) as (client, fake):
        # turn 1: a prompt of content blocks
        await client.query(
            [
                {"type": "text", "text": f"look, key {SECRET}"},
                {"type": "image", "source": {"type": "base64", "data": "AA=="}},
            ]
        )
        await fake.receive("user")
        await fake.send(
            {
                "type": "system",
                "subtype": "init",
                "session_id": fake.session_id,
                "model": "claude-from-init",
                "tools": [],
            }
        )
        await fake.state("running")
        await fake.assistant(
            {"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"prompt": "read it"}}
        )
        # the subagent's own turn: its messages name the Task call as their parent
        await fake.send(
            {
                "type": "assistant",
                "parent_tool_use_id": "toolu_task",
                "session_id": fake.session_id,
                "message": {
                    "id": "m2",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sub",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_read",
                            "name": "Read",
                            "input": {"file_path": "/etc/hosts"},
                        }
                    ],
                },
            }
        )
        hook = {
            "type": "system",
            "session_id": fake.session_id,
            "hook_id": "h1",
            "hook_name": "PreToolUse:Read",
            "hook_event": "PreToolUse",
            "tool_use_id": "toolu_read",
        }
        await fake.send({**hook, "subtype": "hook_started"})
        await fake.send(
            {
                **hook,
                "subtype": "hook_response",
                "outcome": "success",
                "exit_code": 0,
                "stdout": "",
                "stderr": "",
            }
        )
        await fake.send(
            {
                "type": "user",
                "parent_tool_use_id": "toolu_task",
                "session_id": fake.session_id,
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "a note, not a result"},
                        {"type": "tool_result", "tool_use_id": "toolu_unknown", "content": "stray"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_read",
                            "content": [{"type": "text", "text": "127.0.0.1 localhost"}],
                        },
                    ],
                },
            }
        )
        await fake.send(
            {
                "type": "user",
                "session_id": fake.session_id,
                "message": {"role": "user", "content": "plain text from the CLI"},
            }
        )
        await fake.tool_result("toolu_task", None, is_error=True)
        await fake.result(
            "first answer",
            stop_reason=None,
            permission_denials=[
                "junk",
                {"tool_use_id": "toolu_read", "tool_name": "Read", "tool_input": {}},
            ],
        )
        first = [m async for m in client.receive_response()]

        # turn 2: a whole user-message frame, a result with no cost and no answer
        async def frames() -> AsyncIterator[dict[str, Any]]:
            yield {
                "type": "user",
                "message": {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
                "parent_tool_use_id": None,
            }

        await client.query(frames())
        await fake.receive("user")
        await fake.result(None, total_cost_usd=None, session_id="", stop_reason=None)  # type: ignore[arg-type]
        second = [m async for m in client.receive_response()]
    assert isinstance(first[-1], ResultMessage) and isinstance(second[-1], ResultMessage)

    session = otel.one("invoke_agent claude-code")
    task = otel.one("execute_tool Task")
    read = otel.one("execute_tool Read")
    attrs = attrs_of(session)
    # the model asked for wins over the one init reports; the answer's model is the
    # main agent's, never the subagent's
    assert attrs["gen_ai.request.model"] == "claude-asked"
    assert attrs["gen_ai.response.model"] == "claude-fake"
    assert "gen_ai.response.finish_reasons" not in attrs  # no stop_reason was given
    # the subagent's tool call is a child of its Task call, and the CLI's hook event is on it
    assert read.parent is not None and read.parent.span_id == task.context.span_id
    assert task.parent is not None and task.parent.span_id == session.context.span_id
    assert events_of(read, "ccwire.hook") == [
        {
            "ccwire.hook.event": "PreToolUse",
            "ccwire.hook.source": "cli",
            "ccwire.hook.hook_name": "PreToolUse:Read",
            "ccwire.hook.outcome": "success",
            "ccwire.hook.exit_code": 0,
        }
    ]
    assert attrs_of(read)["gen_ai.tool.call.result"] == "127.0.0.1 localhost"
    # a tool result without text: an error without a description from its content
    assert task.status.status_code is StatusCode.ERROR
    assert task.status.description == "the tool reported an error"
    assert "gen_ai.tool.call.result" not in attrs_of(task)
    # the CLI's denial of a tool whose span had ended goes on the session, naming the
    # call (it named none: which call was denied could not be told); junk is skipped
    assert events_of(session, "ccwire.permission") == [
        {
            "ccwire.permission.decision": "deny",
            "ccwire.permission.source": "cli",
            "gen_ai.tool.name": "Read",
            "gen_ai.tool.call.id": "toolu_read",
        }
    ]
    # content: the first prompt (text blocks only, secrets masked) on the span, each
    # turn's prompt on its event; the last answer given stays the span's output
    first_prompt = [{"role": "user", "parts": [{"type": "text", "content": "look, key ***"}]}]
    assert json.loads(attrs["gen_ai.input.messages"]) == first_prompt
    turns = events_of(session, "ccwire.turn")
    assert [json.loads(t["gen_ai.input.messages"]) for t in turns] == [
        first_prompt,
        [{"role": "user", "parts": [{"type": "text", "content": "and now?"}]}],
    ]
    assert "gen_ai.output.messages" not in turns[1]
    assert json.loads(attrs["gen_ai.output.messages"])[0]["parts"][0]["content"] == "first answer"
    # the second result reported no cost: the total stays the first one's, no cost point
    assert attrs["ccwire.usage.cost_usd"] == pytest.approx(0.0012)
    assert [t["ccwire.usage.cost_usd"] for t in turns] == [pytest.approx(0.0012), 0.0]
    (cost,) = otel.points("ccwire.client.cost")
    assert cost.value == pytest.approx(0.0012)
    assert attrs["gen_ai.conversation.id"] == "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(
    ("fields", "error_type", "description"),
    [
        (
            {"api_error_status": 529, "errors": ["overloaded", f"key {SECRET}"]},
            "api_error_529",
            "overloaded; key ***",
        ),
        ({"terminal_reason": "aborted_tools"}, "aborted_tools", "it stopped"),
        ({}, "error", "it stopped"),
        ({"result": None}, "error", "success"),
    ],
)
async def test_each_kind_of_error_result_names_the_error_on_the_span(
    otel: Otel, fields: dict[str, Any], error_type: str, description: str
) -> None:
    async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.result(**{"text": "it stopped", "is_error": True, **fields})
        messages = [m async for m in client.receive_response()]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].is_error
    session = otel.one("invoke_agent claude-code")
    assert attrs_of(session)["error.type"] == error_type
    assert session.status.status_code is StatusCode.ERROR
    assert session.status.description == description
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == error_type


async def test_a_tool_still_running_at_close_is_cancelled_and_a_later_success_clears_the_error(
    otel: Otel,
) -> None:
    async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.result("failed", is_error=True, subtype="error_during_execution")
        [m async for m in client.receive_response()]
        await client.query("again")
        await fake.receive("user")
        await fake.assistant(
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "sleep 100"}}
        )
        await fake.result("ok")
        [m async for m in client.receive_response()]
        await client.disconnect()  # the tool never got its result
        await client.disconnect()  # idempotent: the spans are ended once
    session = otel.one("invoke_agent claude-code")
    assert session.status.status_code is StatusCode.UNSET  # the last turn succeeded
    assert "error.type" not in attrs_of(session)
    bash = otel.one("execute_tool Bash")
    assert attrs_of(bash)["error.type"] == "cancelled"
    assert bash.status.status_code is StatusCode.ERROR
    assert bash.end_time is not None and session.end_time is not None
    assert bash.end_time <= session.end_time


async def test_a_hook_decision_and_its_reason_are_an_event_on_the_tool_span(otel: Otel) -> None:
    async def guard(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"not with {SECRET}",
            }
        }

    options = ClaudeAgentOptions(
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
        telemetry=otel.telemetry,
    )
    async with connected(options) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.assistant(
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "rm -rf /"}}
        )
        answer = await fake.request(
            "hook_callback",
            callback_id="hook_0",
            tool_use_id="toolu_1",
            input={
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "rm -rf /"},
                "tool_use_id": "toolu_1",
            },
        )
        assert answer["subtype"] == "success"
        # the CLI's own report of a hook that was cancelled: no exit code, no name
        await fake.send(
            {
                "type": "system",
                "subtype": "hook_response",
                "hook_id": "h2",
                "hook_event": "PreToolUse",
                "outcome": "cancelled",
                "tool_use_id": "toolu_1",
                "exit_code": None,
            }
        )
        await fake.tool_result("toolu_1", "denied", is_error=True)
        await fake.result("ok")
        [m async for m in client.receive_response()]
    bash = otel.one("execute_tool Bash")
    assert events_of(bash, "ccwire.hook") == [
        {
            "ccwire.hook.event": "PreToolUse",
            "ccwire.hook.decision": "deny",
            "ccwire.hook.callback": "hook_0",
            "ccwire.hook.reason": "not with ***",
        },
        {
            "ccwire.hook.event": "PreToolUse",
            "ccwire.hook.source": "cli",
            "ccwire.hook.outcome": "cancelled",
        },
    ]
    # the call the hook denied failed as denied, not as a tool's error
    assert attrs_of(bash)["error.type"] == "permission_denied"
    assert bash.status.description == "denied: not with ***"


async def test_a_call_the_permission_callback_denied_fails_as_denied(otel: Otel) -> None:
    # it was `tool_error`, "the tool reported an error", as a tool that ran and failed
    async def decide(name: str, data: dict[str, Any], ctx: Any) -> PermissionResult:
        return PermissionResultDeny(message="no" if name == "Bash" else "")

    async def after(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {"decision": "block", "reason": "too late to deny"}

    async def gate(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        answer = {"behavior": "deny", "message": "by policy"}  # (it was seen as "ok")
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": answer}}

    options = ClaudeAgentOptions(
        can_use_tool=decide,
        hooks={
            "PostToolUse": [HookMatcher(matcher=None, hooks=[after])],
            "PermissionRequest": [HookMatcher(matcher=None, hooks=[gate])],
        },
        telemetry=otel.telemetry,
    )
    async with connected(options) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        calls = {"toolu_1": "Bash", "toolu_2": "Write", "toolu_3": "Read", "toolu_4": "Edit"}
        await fake.assistant(
            *({"type": "tool_use", "id": i, "name": n, "input": {}} for i, n in calls.items())
        )
        for call, name in list(calls.items())[:2]:
            await fake.request("can_use_tool", tool_name=name, input={}, tool_use_id=call,
                               permission_suggestions=[])  # fmt: skip
        hook_input = {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}}
        await fake.request(
            "hook_callback", callback_id="hook_0", tool_use_id="toolu_3", input=hook_input
        )
        asked = {"hook_event_name": "PermissionRequest", "tool_name": "Edit", "tool_input": {}}
        await fake.request(
            "hook_callback", callback_id="hook_1", tool_use_id="toolu_4", input=asked
        )
        for call in calls:
            await fake.tool_result(call, "refused", is_error=True)
        await fake.result("ok")
        [m async for m in client.receive_response()]
    failures = {
        name: (attrs_of(otel.one(f"execute_tool {name}"))["error.type"],
               otel.one(f"execute_tool {name}").status.description)
        for name in calls.values()
    }  # fmt: skip
    assert failures == {
        "Bash": ("permission_denied", "denied: no"),
        "Write": ("permission_denied", "the tool call was denied"),
        # a hook after the call ran cannot deny it: the error is the tool's own
        "Read": ("tool_error", "the tool reported an error"),
        "Edit": ("permission_denied", "denied: by policy"),
    }


async def test_an_mcp_request_that_is_not_a_tool_call_runs_in_the_session_span(
    otel: Otel,
) -> None:
    seen: list[int] = []

    @tool("where", "Which span am I in", {})
    async def where(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(trace.get_current_span().get_span_context().span_id)
        return {"content": [{"type": "text", "text": "here"}]}

    server = create_sdk_mcp_server("s", tools=[where])
    options = ClaudeAgentOptions(mcp_servers={"s": server}, telemetry=otel.telemetry)
    async with connected(options) as (_client, fake):
        listed = await fake.mcp("s", "tools/list")
        assert listed["response"]["mcp_response"]["result"]["tools"][0]["name"] == "where"
        # a tools/call the CLI sends without (or with an unknown) tool use id
        await fake.mcp("s", "tools/call", {"name": "where", "arguments": {}})
        await fake.mcp(
            "s",
            "tools/call",
            {"name": "where", "arguments": {}, "_meta": {"claudecode/toolUseId": "toolu_x"}},
        )
    session = otel.one("invoke_agent claude-code")
    assert seen == [session.context.span_id] * 2
    assert [s.name for s in otel.spans.get_finished_spans()] == ["invoke_agent claude-code"]


async def test_two_sessions_on_one_meter_provider_add_to_the_same_metrics(otel: Otel) -> None:
    costs: list[list[Any]] = []
    for reported in (0.0, 0.0012):
        async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):
            await client.query("go")
            await fake.receive("user")
            await fake.result("ok", total_cost_usd=reported)
            [m async for m in client.receive_response()]
        costs.append([p.value for p in otel.points("ccwire.client.cost")])
    assert costs == [[], [pytest.approx(0.0012)]]  # a free turn adds no cost point
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.count == 2
    tokens = {
        p.attributes["gen_ai.token.type"]: p.sum for p in otel.points("gen_ai.client.token.usage")
    }
    assert tokens == {"input": 20, "output": 10}


async def test_a_prompt_sent_under_another_span_links_the_session_to_it(otel: Otel) -> None:
    # one client shared by a server's requests: its span is a child of the span current
    # at connect, and the trace of each request that sent a prompt led nowhere
    provider = otel.telemetry.tracer_provider
    assert provider is not None
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("startup") as startup:
        async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):
            requests: list[tuple[str, Any]] = []
            for name in ("request 1", "request 2", "request 2"):
                if not requests or name != requests[-1][0]:
                    requests.append((name, tracer.start_span(name)))
                with trace.use_span(requests[-1][1], end_on_exit=False):
                    await client.query("go")
                await fake.receive("user")
                await fake.result("ok")
                [m async for m in client.receive_response()]
            await client.query("from the startup span")  # its parent's: no link
            await fake.receive("user")
            await fake.result("ok")
            [m async for m in client.receive_response()]
    session = otel.one("invoke_agent claude-code")
    assert session.parent is not None
    assert session.parent.span_id == startup.get_span_context().span_id
    linked = [(link.context.span_id, dict(link.attributes or {})) for link in session.links]
    assert linked == [
        (span.get_span_context().span_id, {"ccwire.link.reason": "prompt"}) for _, span in requests
    ]


async def test_a_resumed_cli_restored_cost_is_not_a_cost_of_this_session(otel: Otel) -> None:
    # on --resume the CLI's totals count the cost it restored (0.0018 here): the first
    # turn cost what the CLI says it spent since its previous result
    spent = {"m": {"costUSD": 0.0012}}
    async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):
        for total in (0.003, 0.0042):
            await client.query("go")
            await fake.receive("user")
            await fake.result("ok", total_cost_usd=total, model_usage_since_last_result=spent)
            [m async for m in client.receive_response()]
    assert [p.value for p in otel.points("ccwire.client.cost")] == [pytest.approx(0.0024)]
    attrs = dict(otel.one("invoke_agent claude-code").attributes or {})
    assert attrs["ccwire.usage.cost_usd"] == pytest.approx(0.0024)


async def test_the_cli_gets_the_trace_context_and_with_cli_traces_the_export_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    # left on in the shell (for interactive Claude Code, say): the CLI's spans would carry
    # the prompts, tool inputs and API bodies unmasked, with record_content off
    content = ("OTEL_LOG_USER_PROMPTS", "OTEL_LOG_ASSISTANT_RESPONSES", "OTEL_LOG_TOOL_CONTENT",
               "OTEL_LOG_TOOL_DETAILS", "OTEL_LOG_RAW_API_BODIES")  # fmt: skip
    for name in content:
        monkeypatch.setenv(name, "1")
    envs: list[dict[str, str]] = []

    def spawner(spawn: Any) -> Any:
        envs.append(dict(spawn.env))
        raise RuntimeError("no sandbox on this machine")

    for cli_traces in (False, True):
        otel = make_otel(cli_traces=cli_traces)
        options = ClaudeAgentOptions(
            cli_path="claude",
            spawn_claude_code_process=spawner,
            inherit_env=["OTEL_LOG_*"],  # and only those of this process
            telemetry=otel.telemetry,
        )
        with pytest.raises(SpawnError, match="no sandbox"):
            async with ClaudeSDKClient(options):
                pass
        session = otel.one("invoke_agent claude-code")
        assert attrs_of(session)["error.type"] == "SpawnError"
        ctx = session.context
        assert envs[-1]["TRACEPARENT"].startswith(f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-")
    plain, exporting = envs
    assert "OTEL_TRACES_EXPORTER" not in plain and "OTEL_EXPORTER_OTLP_ENDPOINT" not in plain
    assert exporting["OTEL_TRACES_EXPORTER"] == "otlp"
    assert exporting["CLAUDE_CODE_ENABLE_TELEMETRY"] == "1"
    assert exporting["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:4318"
    assert {name: exporting[name] for name in content} == dict.fromkeys(content, "0")
    assert all(plain[name] == "1" for name in content)  # not exporting: not ccwire's to say

    explicit = make_otel(cli_traces=True)  # options.env still says what the CLI gets
    options = ClaudeAgentOptions(
        cli_path="claude",
        spawn_claude_code_process=spawner,
        env={"OTEL_LOG_TOOL_DETAILS": "1"},
        telemetry=explicit.telemetry,
    )
    with pytest.raises(SpawnError, match="no sandbox"):
        async with ClaudeSDKClient(options):
            pass
    assert envs[-1]["OTEL_LOG_TOOL_DETAILS"] == "1" and envs[-1]["OTEL_LOG_USER_PROMPTS"] == "0"


@pytest.mark.parametrize("failing", ["start", "end", "provider"])
async def test_a_failing_span_processor_or_tracer_provider_does_not_fail_the_session(
    failing: str, caplog: pytest.LogCaptureFixture
) -> None:
    otel = make_otel()
    provider = otel.telemetry.tracer_provider
    if failing == "provider":
        provider = FailingProvider()
    else:
        provider.add_span_processor(FailingProcessor(failing))  # after the exporter's
    telemetry = Telemetry(tracer_provider=provider, meter_provider=otel.telemetry.meter_provider)
    async with connected(ClaudeAgentOptions(telemetry=telemetry)) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}})
        await fake.assistant({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}})
        await fake.tool_result("toolu_1", "read")
        await fake.result("done")
        messages = [m async for m in client.receive_response()]
        assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    # the session ran and closed; every span that started also ended
    names = sorted(s.name for s in otel.spans.get_finished_spans())
    if failing == "end":
        assert names == ["execute_tool Bash", "execute_tool Read", "invoke_agent claude-code"]
    else:  # no session span: the session ran untraced
        assert names == []
    assert "telemetry" in caplog.text or "span" in caplog.text


async def test_a_failure_is_recorded_with_its_secrets_masked_in_the_stacktrace_too(
    otel: Otel,
) -> None:
    def spawner(spawn: Any) -> Any:
        raise RuntimeError(f"cannot reach the host with ANTHROPIC_API_KEY={SECRET}")

    options = ClaudeAgentOptions(
        cli_path="claude", spawn_claude_code_process=spawner, telemetry=otel.telemetry
    )
    with pytest.raises(SpawnError):
        async with ClaudeSDKClient(options):
            pass
    session = otel.one("invoke_agent claude-code")
    (event,) = events_of(session, "exception")
    assert "RuntimeError: cannot reach the host" in event["exception.stacktrace"]  # the cause
    assert SECRET not in json.dumps(event)


class _Recorder(SpanProcessor):
    """Which spans started and which ended."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: list[str] = []

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.started.append(span.name)

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span.name)


async def test_a_frame_read_as_the_client_closes_mid_turn_opens_no_span_left_open() -> None:
    otel = make_otel()
    recorder = _Recorder()
    otel.telemetry.tracer_provider.add_span_processor(recorder)
    async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        # the client closes without waiting for it
        await fake.assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}})
    assert "invoke_agent claude-code" in recorder.ended
    assert sorted(recorder.started) == sorted(recorder.ended)


async def test_permission_and_hook_callbacks_run_inside_the_span_of_their_tool_call(
    otel: Otel,
) -> None:
    current: dict[str, int] = {}

    async def decide(name: str, data: dict[str, Any], ctx: Any) -> PermissionResultAllow:
        current["can_use_tool"] = trace.get_current_span().get_span_context().span_id
        return PermissionResultAllow()

    async def pre_tool(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        current["hook"] = trace.get_current_span().get_span_context().span_id
        return {}

    options = ClaudeAgentOptions(
        can_use_tool=decide,
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[pre_tool])]},
        telemetry=otel.telemetry,
    )
    async with connected(options) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}})
        hook_input = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}}
        await fake.request(
            "hook_callback", callback_id="hook_0", tool_use_id="toolu_1", input=hook_input
        )
        await fake.request(
            "can_use_tool",
            tool_name="Read",
            input={},
            tool_use_id="toolu_1",
            permission_suggestions=[],
        )
        await fake.tool_result("toolu_1", "read")
        await fake.result("ok")
        [m async for m in client.receive_response()]
    read = otel.one("execute_tool Read").context.span_id
    assert current == {"hook": read, "can_use_tool": read}  # their own spans nest there


async def test_a_session_its_caller_cancels_or_fails_records_why_and_a_close_does_not(
    otel: Otel,
) -> None:
    tool = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "x"}}

    async def run(stop: str, cut_short: bool) -> None:
        transport, peer = memory_transport_pair(close_grace=10 if cut_short else 0)
        fake = FakeCLI(peer)
        options = ClaudeAgentOptions(telemetry=otel.telemetry)
        async with anyio.create_task_group() as tg:

            async def answer() -> None:
                await fake.handshake()
                await fake.receive("user")
                await fake.assistant(tool)  # the tool then runs until the session stops
                if cut_short:  # as the CLI does: the call cut short is an error result
                    await fake.expect_eof()
                    await fake.tool_result("toolu_1", "Interrupted by user", is_error=True)
                    await fake.exit(0)

            tg.start_soon(answer)
            with anyio.fail_after(15):
                if stop == "raise":  # the caller's code fails inside the client's block
                    with pytest.raises(ValueError, match="the caller's bug"):
                        async with ClaudeSDKClient(options, transport=transport) as client:
                            await client.query("go")
                            async for _ in client.receive_response():
                                raise ValueError("the caller's bug\n" + "x" * 100_000)
                    return
                messages = query(prompt="go", options=options, transport=transport)
                with anyio.CancelScope() as scope:
                    async with aclosing(messages):
                        async for message in messages:
                            if isinstance(message, AssistantMessage):
                                if stop == "cancel":  # the caller's task is cancelled
                                    scope.cancel()
                                    await anyio.sleep_forever()
                                break  # or the caller stops reading, on purpose

    for stop, cut_short in itertools.product(("cancel", "raise", "close"), (False, True)):
        otel.spans.clear()
        await run(stop, cut_short)
        session = otel.one("invoke_agent claude-code")
        assert session.end_time is not None
        # it never got its result, or the CLI said it failed as the session stopped (it
        # was `tool_error`, as a tool that fails by itself): cancelled, in each case
        bash = otel.one("execute_tool Bash")
        assert attrs_of(bash)["error.type"] == "cancelled", (stop, cut_short)
        assert bash.status.status_code is StatusCode.ERROR
        raised = [dict(e.attributes or {}) for e in session.events if e.name == "exception"]
        if stop == "close":
            assert session.status.status_code is StatusCode.UNSET, stop
            assert raised == [] and "error.type" not in attrs_of(session)
            continue
        assert session.status.status_code is StatusCode.ERROR, stop
        assert len(raised) == 1, stop
        if stop == "cancel":
            assert attrs_of(session)["error.type"] == "cancelled"
        else:
            assert attrs_of(session)["error.type"] == "ValueError"
            message, stack = (
                str(raised[0][k]) for k in ("exception.message", "exception.stacktrace")
            )
            assert message.startswith("the caller's bug\nxxx") and len(message) == 500
            assert session.status.description == "the caller's bug"
            assert len(stack) <= 16384  # not the 100 kB


async def test_a_session_cancelled_while_its_cli_starts_is_cancelled_on_its_span(
    otel: Otel,
) -> None:
    # a time limit that passed before the CLI answered `initialize` ended the span as a
    # session that went well (UNSET, nothing recorded)
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    options = ClaudeAgentOptions(telemetry=otel.telemetry)
    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:

            async def connect(scope: anyio.CancelScope) -> None:
                with scope:
                    async with ClaudeSDKClient(options, transport=transport):
                        pytest.fail("the CLI never answered: the client cannot connect")

            scope = anyio.CancelScope()
            tg.start_soon(connect, scope)
            await fake.receive("control_request", "initialize")  # the CLI is starting
            scope.cancel()
    session = otel.one("invoke_agent claude-code")
    assert attrs_of(session)["error.type"] == "cancelled"
    assert session.status.status_code is StatusCode.ERROR
    assert [e.name for e in session.events] == ["exception"]


async def test_an_exception_a_tool_handler_raised_is_recorded_on_its_call_span(
    otel: Otel,
) -> None:
    # the span said `tool_error`, as for any error result: what the handler raised, and
    # where, was in no span; nor that a call had timed out
    @tool("boom", "Fails", {})
    def boom(args: dict[str, Any]) -> dict[str, Any]:  # a sync handler: in a thread
        raise ValueError(f"cannot reach {SECRET}\nsecond line")

    @tool("refuse", "Says no", {})
    async def refuse(args: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("not today")  # its own answer: nothing went wrong

    @tool("stuck", "Never answers", {}, timeout=0.05)
    async def stuck(args: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    server = create_sdk_mcp_server("s", tools=[boom, refuse, stuck])
    options = ClaudeAgentOptions(mcp_servers={"s": server}, telemetry=otel.telemetry)
    async with connected(options) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        calls = {"toolu_1": "boom", "toolu_2": "refuse", "toolu_3": "stuck"}
        await fake.assistant(
            *(
                {"type": "tool_use", "id": i, "name": f"mcp__s__{n}", "input": {}}
                for i, n in calls.items()
            )
        )
        for call, name in calls.items():
            meta = {"claudecode/toolUseId": call}
            await fake.mcp("s", "tools/call", {"name": name, "arguments": {}, "_meta": meta})
            await fake.tool_result(call, "it failed", is_error=True)
        await fake.result("ok")
        [m async for m in client.receive_response()]
    failed = otel.one("execute_tool mcp__s__boom")
    assert attrs_of(failed)["error.type"] == "ValueError"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "cannot reach ***"
    (raised,) = events_of(failed, "exception")
    assert raised["exception.type"] == "ValueError"
    assert SECRET not in str(raised) and "second line" in str(raised["exception.message"])
    refused = otel.one("execute_tool mcp__s__refuse")
    assert attrs_of(refused)["error.type"] == "tool_error"
    assert events_of(refused, "exception") == []
    timed_out = otel.one("execute_tool mcp__s__stuck")  # its time limit passed
    assert attrs_of(timed_out)["error.type"] == "TimeoutError"
    assert timed_out.status.description == "Tool 'stuck' timed out after 0.05 s"
    session = otel.one("invoke_agent claude-code")
    assert session.status.status_code is StatusCode.UNSET
    assert events_of(session, "exception") == []


async def test_content_utf8_cannot_carry_is_recorded_so_that_it_exports() -> None:
    # the CLI's JSON may hold a lone surrogate (a "\ud800" escape: a string cut in the
    # middle of a pair); recorded as it came, the OTLP exporter dropped the attribute,
    # and in a status description it failed the export of every span sent with it
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    otel = make_otel(record_content=True)
    async with connected(ClaudeAgentOptions(telemetry=otel.telemetry)) as (client, fake):

        async def escaped(frame: Any) -> None:  # as the CLI writes them: JSON escapes
            await fake.peer.send_raw(json.dumps(frame).encode() + b"\n")

        fake.send = escaped  # type: ignore[method-assign]
        await client.query("go")
        await fake.receive("user")
        await fake.assistant({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}})
        await fake.tool_result("toolu_1", "cut \ud83d here", is_error=True)
        await fake.result("half \ud800 a pair", is_error=True, subtype="error_during_execution")
        [m async for m in client.receive_response()]
    read = otel.one("execute_tool Read")
    assert attrs_of(read)["gen_ai.tool.call.result"] == "cut ? here"
    assert read.status.description == "cut ? here"
    encoded = encode_spans(otel.spans.get_finished_spans()).SerializeToString()
    assert b"cut ? here" in encoded and b"half ? a pair" in encoded


@pytest.mark.parametrize("how", ["crash", "cancel"])
async def test_a_turn_cut_short_records_its_duration_with_its_error(otel: Otel, how: str) -> None:
    # a turn that never got its result recorded no `gen_ai.client.operation.duration`
    # point: crashed and cancelled turns were missing from the metric (and its error rate)
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    options = ClaudeAgentOptions(telemetry=otel.telemetry)
    tool = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "x"}}
    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:

            async def cli() -> None:
                await fake.handshake()
                await fake.receive("user")
                await fake.assistant(tool)
                if how == "crash":
                    await fake.exit(3, "fatal: out of memory")

            tg.start_soon(cli)
            with anyio.CancelScope() as scope:
                messages = query(prompt="go", options=options, transport=transport)
                async with aclosing(messages):
                    try:
                        async for message in messages:
                            if isinstance(message, AssistantMessage) and how == "cancel":
                                scope.cancel()
                                await anyio.sleep_forever()
                    except ProcessError:
                        assert how == "crash"
    session = otel.one("invoke_agent claude-code")
    error_type = attrs_of(session)["error.type"]
    assert error_type == ("cancelled" if how == "cancel" else "ProcessError")
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == error_type
    assert duration.count == 1 and duration.sum < 15
    assert otel.points("gen_ai.client.token.usage") == []  # what it used is not known
