"""OpenTelemetry end to end: the real CLI against the scripted model, spans and metrics
caught by the OpenTelemetry SDK's in-memory exporter and reader.

The shape of each span (GenAI semantic conventions), its parent, the permission and
hook decisions as events, tokens and cost as attributes and metrics equal to what the
CLI reported, errors on the span, and no content (nor secrets) unless asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    Telemetry,
    ToolPermissionContext,
    ToolUseBlock,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import ScriptedModel, text, tool_use

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="needs ccwire[otel]")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode  # noqa: E402

pytestmark = pytest.mark.anyio

SECRET = "sk-ant-api03-Zq9xY8wV7uT6sR5q"


@dataclass
class Otel:
    """An SDK tracer provider with an in-memory exporter, and a meter provider with an
    in-memory reader."""

    spans: InMemorySpanExporter
    tracer_provider: TracerProvider
    reader: InMemoryMetricReader
    meter_provider: MeterProvider

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def one(self, name: str) -> ReadableSpan:
        found = [s for s in self.finished() if s.name == name]
        assert len(found) == 1, [s.name for s in self.finished()]
        return found[0]

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for rm in data.resource_metrics
            for sm in rm.scope_metrics
            for m in sm.metrics
            if m.name == metric
            for point in m.data.data_points
        ]


@pytest.fixture
def otel() -> Iterator[Otel]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Otel(spans, tracer_provider, reader, meter_provider)
    tracer_provider.shutdown()
    meter_provider.shutdown()


def everything_recorded(spans: list[ReadableSpan]) -> str:
    """Every attribute and event of `spans` as one text, to search for leaks."""
    parts = []
    for span in spans:
        parts.append(json.dumps(dict(span.attributes or {}), default=str))
        parts.extend(json.dumps(dict(e.attributes or {}), default=str) for e in span.events)
        parts.append(span.status.description or "")
    return "\n".join(parts)


async def run_session(options: ClaudeAgentOptions, prompt: str) -> list[Any]:
    async with ClaudeSDKClient(options) as client:
        await client.query(prompt)
        return [m async for m in client.receive_response()]


async def test_a_session_is_one_span_and_each_tool_call_a_child(
    otel: Otel, model: ScriptedModel, make_options: Any
) -> None:
    tracer = otel.tracer_provider.get_tracer("test")

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        with tracer.start_as_current_span("the tool's own work"):
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    asked: list[tuple[str, str]] = []

    async def decide(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        if name == "Bash":
            asked.append((name, "deny"))
            return PermissionResultDeny(message="no shell today")
        asked.append((name, "allow"))
        return PermissionResultAllow()

    async def pre_tool(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {}

    model.add(
        tool_use("Bash", {"command": f"touch made.txt # {SECRET}"}),
        tool_use("mcp__calc__add", {"a": 20, "b": 22}),
        text("the sum is 42"),
    )
    options = make_options(
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        can_use_tool=decide,
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[pre_tool])]},
        telemetry=Telemetry(
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            attributes={"app.request": "r-1"},
        ),
    )
    with tracer.start_as_current_span("the caller's request") as request:
        messages = await run_session(options, f"add them up, key {SECRET}")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    calls = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content
             if isinstance(b, ToolUseBlock)]  # fmt: skip
    assert [c.name for c in calls] == ["Bash", "mcp__calc__add"]
    assert asked == [("Bash", "deny"), ("mcp__calc__add", "allow")]

    session = otel.one("invoke_agent claude-code")
    assert session.parent is not None
    assert session.parent.span_id == request.get_span_context().span_id
    attrs = dict(session.attributes or {})
    usage = result.usage or {}
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.provider.name"] == "anthropic"
    assert attrs["gen_ai.agent.name"] == "claude-code"
    assert attrs["app.request"] == "r-1"
    assert attrs["gen_ai.conversation.id"] == result.session_id
    assert attrs["gen_ai.request.model"] == model.model
    assert attrs["gen_ai.usage.input_tokens"] == sum(
        usage[k]
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        if k in usage
    )
    assert attrs["gen_ai.usage.output_tokens"] == usage["output_tokens"] > 0
    assert attrs["ccwire.usage.cost_usd"] == pytest.approx(result.total_cost_usd)
    assert attrs["ccwire.num_turns"] == result.num_turns
    assert session.status.status_code is StatusCode.UNSET
    turn = [e for e in session.events if e.name == "ccwire.turn"]
    assert len(turn) == 1 and dict(turn[0].attributes or {})["ccwire.turn.subtype"] == "success"

    bash = otel.one("execute_tool Bash")
    add_span = otel.one("execute_tool mcp__calc__add")
    for span, call in ((bash, calls[0]), (add_span, calls[1])):
        assert span.parent is not None and span.parent.span_id == session.context.span_id
        a = dict(span.attributes or {})
        assert a["gen_ai.operation.name"] == "execute_tool"
        assert a["gen_ai.tool.name"] == call.name
        assert a["gen_ai.tool.call.id"] == call.id
        assert "gen_ai.tool.call.arguments" not in a and "gen_ai.tool.call.result" not in a
        assert session.start_time is not None and span.start_time is not None
        assert session.end_time is not None and span.end_time is not None
        assert session.start_time <= span.start_time <= span.end_time <= session.end_time
        events = {e.name: dict(e.attributes or {}) for e in span.events}
        assert events["ccwire.permission"]["ccwire.permission.source"] == "can_use_tool"
        assert events["ccwire.hook"]["ccwire.hook.event"] == "PreToolUse"
    assert dict(bash.attributes or {})["ccwire.tool.source"] == "builtin"
    assert bash.status.status_code is StatusCode.ERROR  # denied: its result is an error
    bash_events = {e.name: dict(e.attributes or {}) for e in bash.events}
    assert bash_events["ccwire.permission"]["ccwire.permission.decision"] == "deny"
    assert bash_events["ccwire.permission"]["ccwire.permission.message"] == "no shell today"
    add_attrs = dict(add_span.attributes or {})
    assert (add_attrs["ccwire.tool.source"], add_attrs["ccwire.tool.mcp_server"]) == ("sdk", "calc")
    assert add_span.status.status_code is StatusCode.UNSET
    own = otel.one("the tool's own work")  # the tool's code ran inside its span
    assert own.parent is not None and own.parent.span_id == add_span.context.span_id

    recorded = everything_recorded(otel.finished())
    assert "touch made.txt" not in recorded and "add them up" not in recorded
    assert SECRET not in recorded

    points = otel.points("gen_ai.client.token.usage")
    tokens = {p.attributes["gen_ai.token.type"]: p for p in points}
    assert tokens["input"].sum == attrs["gen_ai.usage.input_tokens"]
    assert tokens["output"].sum == attrs["gen_ai.usage.output_tokens"]
    assert tokens["input"].attributes["gen_ai.request.model"] == model.model
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.count == 1 and duration.sum == pytest.approx(result.duration_ms / 1000)
    assert "error.type" not in duration.attributes
    (cost,) = otel.points("ccwire.client.cost")
    assert cost.value == pytest.approx(result.total_cost_usd)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_content_only_when_asked_secrets_never_errors_on_the_span(
    otel: Otel, model: ScriptedModel, make_options: Any
) -> None:
    @tool("fail", "Always fails", {"why": str})
    async def fail(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(f"cannot: {args['why']}")

    model.add(tool_use("mcp__t__fail", {"why": "no disk", "api_key": SECRET}))
    options = make_options(
        mcp_servers={"t": create_sdk_mcp_server("t", tools=[fail])},
        allowed_tools=["mcp__t__fail"],
        max_turns=1,
        telemetry=Telemetry(
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            record_content=True,
        ),
    )
    messages = await run_session(options, f"try it with password={SECRET}")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_turns"

    session = otel.one("invoke_agent claude-code")
    assert session.status.status_code is StatusCode.ERROR
    attrs = dict(session.attributes or {})
    assert attrs["error.type"] == "error_max_turns"
    prompt = json.loads(str(attrs["gen_ai.input.messages"]))
    part = {"type": "text", "content": "try it with password=***"}
    assert prompt == [{"role": "user", "parts": [part]}]
    failed = otel.one("execute_tool mcp__t__fail")
    assert failed.status.status_code is StatusCode.ERROR
    fattrs = dict(failed.attributes or {})
    assert fattrs["error.type"] == "RuntimeError"  # what its handler raised, recorded there
    (raised,) = [dict(e.attributes or {}) for e in failed.events if e.name == "exception"]
    assert raised["exception.message"] == "cannot: no disk"
    assert json.loads(str(fattrs["gen_ai.tool.call.arguments"])) == {"why": "no disk",
                                                                     "api_key": "***"}  # fmt: skip
    assert "cannot: no disk" in str(fattrs["gen_ai.tool.call.result"])
    assert SECRET not in everything_recorded(otel.finished())
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == "error_max_turns"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_cli_that_cannot_start_is_an_error_on_the_span(otel: Otel, tmp_path: Any) -> None:
    options = ClaudeAgentOptions(
        cli_path=str(tmp_path / "no-such-claude"),
        telemetry=Telemetry(
            tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        ),
    )
    with pytest.raises(Exception, match="no-such-claude"):
        await run_session(options, "hello")
    session = otel.one("invoke_agent claude-code")
    assert session.status.status_code is StatusCode.ERROR
    assert dict(session.attributes or {})["error.type"] == "CLINotFoundError"
    assert [e.name for e in session.events] == ["exception"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("background", [True, False], ids=["background", "foreground"])
async def test_a_subagent_is_an_agent_span_under_its_call_with_its_tool_calls_under_it(
    otel: Otel, model: ScriptedModel, make_options: Any, background: bool
) -> None:
    # The CLI runs a Task in the background unless asked not to: the call returns at
    # once ("Async agent launched") while the subagent's tool calls come later.
    served = {"main": 0, "sub": 0}

    def step(request: Any) -> Any:
        if "do the sub task" in json.dumps(request.messages[0]):
            served["sub"] += 1
            return tool_use("Bash", {"command": "echo sub"}) if served["sub"] == 1 else text("ok")
        served["main"] += 1
        if served["main"] > 1:
            return text("all done")
        call = {"description": "sub", "prompt": "do the sub task"}
        call["subagent_type"] = "general-purpose"
        return tool_use("Task", call if background else {**call, "run_in_background": False})

    model.default = step
    options = make_options(
        allowed_tools=["Bash", "Task"],
        telemetry=Telemetry(
            tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        ),
    )
    messages = [m async for m in query(prompt="delegate it", options=options)]
    assert any(isinstance(m, ResultMessage) for m in messages)

    session = otel.one("invoke_agent claude-code")
    call = otel.one("execute_tool Task")
    agent = otel.one("invoke_agent general-purpose")
    bash = otel.one("execute_tool Bash")
    assert call.parent is not None and call.parent.span_id == session.context.span_id
    assert agent.parent is not None and agent.parent.span_id == call.context.span_id
    assert bash.parent is not None and bash.parent.span_id == agent.context.span_id
    attrs = dict(agent.attributes or {})
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.agent.name"] == "general-purpose"
    assert attrs["gen_ai.tool.call.id"] == dict(call.attributes or {})["gen_ai.tool.call.id"]
    assert attrs["ccwire.agent.background"] is background
    assert "gen_ai.agent.description" not in attrs  # the call's argument: content
    assert agent.status.status_code is StatusCode.UNSET
    assert agent.end_time is not None and bash.end_time is not None
    assert agent.start_time is not None and bash.start_time is not None
    assert agent.start_time <= bash.start_time <= bash.end_time <= agent.end_time


async def test_calls_the_callback_or_a_hook_denied_are_denied_on_their_spans(
    otel: Otel, model: ScriptedModel, make_options: Any
) -> None:
    async def decide(
        name: str, data: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        if "rm " in str(data.get("command")):
            return PermissionResultDeny(message="not on my watch")
        return PermissionResultAllow()

    async def guard(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        if "secret" not in str(data.get("tool_input")):
            return {}
        specific = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                    "permissionDecisionReason": "the hook says no"}  # fmt: skip
        return {"hookSpecificOutput": specific}

    model.add(
        tool_use("Bash", {"command": "rm -rf /tmp/nothing-here"}),
        tool_use("Bash", {"command": "cat secret"}),
        tool_use("Bash", {"command": "echo hi"}),
        text("done"),
    )
    options = make_options(
        can_use_tool=decide,
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[guard])]},
        telemetry=Telemetry(tracer_provider=otel.tracer_provider),
    )
    messages = await run_session(options, "go")
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    calls = [s for s in otel.finished() if s.name == "execute_tool Bash"]
    assert [(dict(s.attributes or {}).get("error.type"), s.status.description) for s in calls] == [
        ("permission_denied", "denied: not on my watch"),
        ("permission_denied", "denied: the hook says no"),
        (None, None),  # allowed, and it ran
    ]
    session = otel.one("invoke_agent claude-code")
    denials = [dict(e.attributes or {}) for e in session.events if e.name == "ccwire.permission"]
    ids = [dict(s.attributes or {})["gen_ai.tool.call.id"] for s in calls[:2]]
    assert sorted(str(d["gen_ai.tool.call.id"]) for d in denials) == sorted(map(str, ids))
