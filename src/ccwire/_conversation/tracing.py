"""OpenTelemetry spans and metrics of one session, following the GenAI semantic conventions.

Loaded only by a session whose options carry a `Telemetry` (it imports OpenTelemetry).
`SessionTrace` watches the observation points a `Connection` already has, and adds
nothing to a session without it:

* the session is one ``invoke_agent`` span, from connect to close, a child of the span
  current at connect; its context goes to the CLI as ``TRACEPARENT``, where the CLI's
  own spans (when it exports them) join it; a prompt sent under another span (each
  request of a server sharing one client) adds a link to it, so that request's trace
  leads to the session;
* every ``tool_use`` block the model sends opens an ``execute_tool`` span, closed by
  its ``tool_result`` (built-in and MCP tools alike); a subagent the call starts
  (``Task``/``Agent``) is an ``invoke_agent`` span under it, from the CLI's
  ``task_started`` to the task's end, and the subagent's own tool calls nest under
  that: a background agent's too, which run on after the call has returned; an
  in-process tool's handler, and
  the permission and hook callbacks about a tool call, run inside its span, so spans
  made by their code nest under it;
* permission answers (``can_use_tool``), hook answers and the CLI's own permission
  denials are events on the tool's span (``ccwire.permission``, ``ccwire.hook``);
* each result (one turn) is an event ``ccwire.turn``, adds its tokens and cost to the
  session's attributes, and records the ``gen_ai.client.token.usage``,
  ``gen_ai.client.operation.duration`` and ``ccwire.client.cost`` metrics; a turn an
  exception cut short (the CLI crashed, the session was cancelled) records its
  duration so far, with its ``error.type``;
* an error result, a failed connection or an unfinished tool sets the span's error (a
  tool the CLI reports failed as the application closes the session was cut short:
  ``cancelled``, not ``tool_error``); an exception an in-process tool's handler raised
  is recorded on its call's span, whose ``error.type`` is the exception's class; a
  call a permission or hook callback denied is ``permission_denied``.

Content (prompts, answers, tool arguments and results) is recorded only with
``Telemetry.record_content``; whatever is recorded passes through the secret masking of
``_core.redact`` first.
"""

from __future__ import annotations

import inspect
import json
import logging
import time
import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as otel_context, metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .._core.errors import ResultError
from .._core.redact import redact_text, redact_value
from .._mcp.tools import TOOL_FAILURES
from .._protocol.control import ControlEvent, RouteHandler
from .._version import __version__
from .._wire import codec
from .._wire.cost import CostMeter
from .._wire.messages import (
    AssistantMessage,
    HookEventMessage,
    Message,
    ResultMessage,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from .audit import _hook_outcome, _permission_outcome

if TYPE_CHECKING:
    from .telemetry import Telemetry

__all__ = ["SCOPE", "SessionTrace", "encodable", "end_span", "record_exception"]

logger = logging.getLogger("ccwire")

SCOPE: Final = "ccwire"
"""The instrumentation scope name of ccwire's spans and metrics."""

PROVIDER: Final = "anthropic"
_MAX_LINKS: Final = 64  # the most callers' spans a session's span links to
_CONTENT_CHARS: Final = 4096  # the longest content attribute recorded
_DETAIL_CHARS: Final = 500
_STACK_CHARS: Final = 16384  # the longest stack trace recorded (a message may be huge)
_PROPAGATOR: Final = TraceContextTextMapPropagator()
# the bucket boundaries the GenAI conventions advise for these two histograms
_TOKEN_BUCKETS: Final = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
                         4194304, 16777216, 67108864)  # fmt: skip
_DURATION_BUCKETS: Final = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12,
                            10.24, 20.48, 40.96, 81.92)  # fmt: skip

# the CLI's own trace export, with `Telemetry.cli_traces`: without content (prompts,
# answers, tool inputs and outputs, API bodies), whatever this process's environment
# says, since the CLI masks no secret in it; ccwire records content itself, masked, with
# `record_content` (`options.env` may still set these variables for the CLI)
_CLI_TRACE_ENV: Final = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
    "OTEL_TRACES_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",  # as `setup_otlp` (may be overridden)
    "OTEL_LOG_USER_PROMPTS": "0",
    "OTEL_LOG_ASSISTANT_RESPONSES": "0",
    "OTEL_LOG_TOOL_CONTENT": "0",
    "OTEL_LOG_TOOL_DETAILS": "0",
    "OTEL_LOG_RAW_API_BODIES": "0",
}


class _Instruments:
    """The three metric instruments of one meter provider (made once per provider)."""

    _made: dict[int, tuple[Any, _Instruments]] = {}

    def __init__(self, meter: metrics.Meter) -> None:
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=list(_TOKEN_BUCKETS),
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=list(_DURATION_BUCKETS),
        )
        self.cost = meter.create_counter(
            "ccwire.client.cost", unit="USD", description="What the model calls cost"
        )

    @classmethod
    def of(cls, provider: metrics.MeterProvider) -> _Instruments:
        key = id(provider)
        found = cls._made.get(key)
        if found is None or found[0] is not provider:
            meter = provider.get_meter(SCOPE, __version__)
            found = cls._made[key] = (provider, cls(meter))
        return found[1]


class SessionTrace:
    """The spans and metrics of one session (one CLI process). See the module docstring.

    Args:
        telemetry: The option that asked for it.
        model: The requested model (``options.model``), if any.
        started: Start the session's span now, under the current span. A spare CLI's
            starts at its claim instead (`start`), under the claimer's span: until
            then nothing is recorded.
    """

    def __init__(self, telemetry: Telemetry, model: str | None, *, started: bool = True) -> None:
        self._config = telemetry
        tracer_provider = telemetry.tracer_provider or trace.get_tracer_provider()
        meter_provider = telemetry.meter_provider or metrics.get_meter_provider()
        self._tracer = tracer_provider.get_tracer(SCOPE, __version__)
        self._instruments = _Instruments.of(meter_provider)
        self._content = telemetry.record_content
        self._metric_attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": PROVIDER,
        }
        if model:
            self._metric_attrs["gen_ai.request.model"] = model
        self._span: Span = trace.INVALID_SPAN  # records nothing until `start()`
        self._context = trace.set_span_in_context(self._span)
        self._tools: dict[str, Span] = {}  # open tool spans by tool_use id
        # why a tool call failed, as this side knows (its handler raised, its permission
        # was denied): by span, for its error result (error.type, description)
        self._failed: dict[int, tuple[str, str]] = {}
        self._agents: dict[str, tuple[str, Span]] = {}  # open subagent spans: task id, span
        self._totals = {"input": 0, "output": 0, "cache_read": 0, "cache_creation": 0}
        self._cost = CostMeter()  # what the CLI process spent (not what a resume restored)
        self._turns = 0
        self._turn_since: float | None = None  # a prompt awaits its result since (monotonic)
        self._turn_cut = False  # an exception ended the session during that turn
        self._prompts: list[str] = []
        self._response_model: str | None = None
        self._error: tuple[str, str] | None = None  # (error.type, description)
        self._stopped: tuple[str, str] | None = None  # the application stopped it: why
        self._closing = False  # the application is closing the session (`on_closing`)
        self._ended = False
        self._parent = trace.INVALID_SPAN_CONTEXT  # the span current at `start`
        self._links: set[tuple[int, int]] = set()  # the prompts' callers' spans (ids)
        if started:
            self.start()

    def start(self) -> None:
        """Start the session's span under the current span (once; not after `end`)."""
        if self._span is not trace.INVALID_SPAN or self._ended:
            return
        attrs: dict[str, Any] = {
            **self._metric_attrs,
            "gen_ai.agent.name": self._config.agent_name,
            **self._config.attributes,
        }
        self._parent = trace.get_current_span().get_span_context()
        self._span = self._tracer.start_span(
            f"invoke_agent {self._config.agent_name}", kind=SpanKind.CLIENT, attributes=attrs
        )
        self._context = trace.set_span_in_context(self._span)

    # ---------------------------------------------------------------- the CLI

    def cli_env(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The variables that let the CLI join this trace, and with ``cli_traces`` export
        its spans where this process's ``OTEL_EXPORTER_OTLP_*`` variables say.

        Args:
            environ: This process's environment.
        """
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=self._context)
        env = {k.upper(): v for k, v in carrier.items()}
        if self._config.cli_traces:
            env.update(_CLI_TRACE_ENV)
            env.update({k: v for k, v in environ.items() if k.startswith("OTEL_EXPORTER_OTLP_")})
        return env

    # ------------------------------------------------------------- observers

    def on_prompt(self, prompt: object) -> None:
        """A prompt was sent (its text is kept only with ``record_content``); a prompt
        sent under a span other than the one the session began under (a long-lived
        client used by each request of a server) links the session's span to it."""
        if self._content:
            self._prompts.append(_prompt_text(prompt))
        if self._turn_since is None:
            self._turn_since = time.monotonic()
        caller = trace.get_current_span().get_span_context()
        key = (caller.trace_id, caller.span_id)
        if (
            caller.is_valid
            and caller.span_id not in (self._parent.span_id, self._span.get_span_context().span_id)
            and key not in self._links
            and len(self._links) < _MAX_LINKS
        ):
            self._links.add(key)
            self._span.add_link(caller, {"ccwire.link.reason": "prompt"})

    def on_message(self, message: Message) -> None:
        """The message observer of the connection (a frame read as the session ended,
        after `end`, is left out: a span it opened would never end)."""
        if self._ended:
            return
        if isinstance(message, AssistantMessage):
            self._on_assistant(message)
        elif isinstance(message, UserMessage):
            if isinstance(message.content, list):
                for block in message.content:
                    if isinstance(block, ToolResultBlock):
                        self._tool_result(block)
        elif isinstance(message, ResultMessage):
            self._on_result(message)
        elif isinstance(message, HookEventMessage):
            self._on_hook_message(message)
        elif isinstance(message, TaskStartedMessage):
            self._agent_started(message)
        elif isinstance(message, (TaskNotificationMessage, TaskUpdatedMessage)):
            self._agent_ended(message.task_id, message.status)
        elif isinstance(message, SystemMessage) and message.subtype == "init":
            sid = message.data.get("session_id")
            if isinstance(sid, str):
                self._span.set_attribute("gen_ai.conversation.id", sid)
            model = message.data.get("model")
            if isinstance(model, str) and "gen_ai.request.model" not in self._metric_attrs:
                self._metric_attrs["gen_ai.request.model"] = model
                self._span.set_attribute("gen_ai.request.model", model)

    def on_control(self, event: ControlEvent) -> None:
        """The control observer: permission and hook answers become span events."""
        if event.outcome is None or self._ended:
            return
        req = event.request
        if event.subtype == codec.CAN_USE_TOOL:
            decision, detail = _permission_outcome(event)
            attrs = {"ccwire.permission.decision": decision,
                     "ccwire.permission.source": "can_use_tool"}  # fmt: skip
            if detail:
                attrs["ccwire.permission.message"] = _detail(detail)
            denied = decision == "deny"
            self._decided(req.get("tool_use_id"), "ccwire.permission", attrs, denied, detail)
        elif event.subtype == codec.HOOK_CALLBACK:
            inp = req.get("input")
            inp = inp if isinstance(inp, Mapping) else {}
            decision, detail = _hook_outcome(event)
            attrs = {"ccwire.hook.event": str(inp.get("hook_event_name", "")),
                     "ccwire.hook.decision": decision,
                     "ccwire.hook.callback": str(req.get("callback_id", ""))}  # fmt: skip
            if detail:
                attrs["ccwire.hook.reason"] = _detail(detail)
            # a hook that decides before the call runs may deny it (after, it cannot)
            denied = decision in ("deny", "block") and attrs["ccwire.hook.event"] in (
                "PreToolUse", "PermissionRequest")  # fmt: skip
            self._decided(req.get("tool_use_id"), "ccwire.hook", attrs, denied, detail)

    def _decided(
        self, call: object, event: str, attrs: dict[str, Any], denied: bool, why: str | None
    ) -> None:
        """A permission or hook decision about the tool call ``call``: an event on its
        span; a denial is why the call then fails (``permission_denied``, not
        ``tool_error``)."""
        span = self._owner(call)
        span.add_event(event, attrs)
        if denied and span is not self._span:
            description = f"denied: {_detail(why)}" if why else "the tool call was denied"
            self._failed.setdefault(id(span), ("permission_denied", description))

    def wrap_route(self, handler: RouteHandler) -> RouteHandler:
        """A route whose handlers run inside the span of the tool call the request is
        about (an in-process tool's call, a permission question, a hook), else the
        session's: the spans the application's code makes there nest under it."""

        async def route(req: codec.ControlRequest, call: Any) -> Any:
            failures = None
            if req.subtype == codec.MCP_MESSAGE:
                span = self._mcp_span(req.request)
                if span is not self._span:  # a tool call: what its handler raises is its error
                    failures = TOOL_FAILURES.set(lambda error: self._tool_raised(span, error))
            else:
                span = self._owner(req.request.get("tool_use_id"))
            token = otel_context.attach(trace.set_span_in_context(span))
            try:
                given = handler(req, call)
                return await given if inspect.isawaitable(given) else given
            finally:
                otel_context.detach(token)
                if failures is not None:
                    TOOL_FAILURES.reset(failures)

        return route

    def on_closing(self) -> None:
        """The application closes the session: a tool call the CLI then reports as
        failed was cut short (it is ``cancelled``, as one with no result at all), not a
        tool's error."""
        self._closing = True

    def on_closed(self, error: BaseException | None) -> None:
        """The connection ended or failed to open (``error``: why, if it went badly)."""
        if isinstance(error, ResultError) and self._error is not None:
            return  # the CLI's exit after an error result: that result is the error
        if error is not None:
            self._record(error)

    def on_abandoned(self, error: BaseException, *, cancelled: bool) -> None:
        """The application stopped the session with ``error``: its task was
        ``cancelled``, or its code raised (an error the session itself reported is
        already recorded)."""
        if self._ended or self._error is not None:
            return
        self._record(error)
        if cancelled:
            self._error = ("cancelled", "the session was cancelled")
        self._stopped = self._error  # what the CLI reports while it stops does not clear it

    def _record(self, error: BaseException) -> None:
        """Record ``error`` on the session's span, which ends as its error."""
        self._error = record_exception(self._span, error)
        self._turn_cut = self._turn_since is not None

    def _tool_raised(self, span: Span, error: BaseException) -> None:
        """The in-process handler of the tool call ``span`` raised ``error`` (the model
        got an error result): the call's error is that exception, not ``tool_error``."""
        self._failed[id(span)] = record_exception(span, error)

    def end(self) -> None:
        """End every open span (idempotent)."""
        if self._ended:
            return
        self._ended = True
        for _, span in reversed(list(self._agents.values())):
            span.set_attribute("error.type", "cancelled")
            span.set_status(Status(StatusCode.ERROR, "the session ended before the subagent"))
            end_span(span)
        self._agents.clear()
        for span in reversed(list(self._tools.values())):
            span.set_attribute("error.type", "cancelled")
            span.set_status(Status(StatusCode.ERROR, "the session ended before the tool's result"))
            end_span(span)
        self._tools.clear()
        self._failed.clear()
        error = self._stopped or self._error
        if error is not None:
            kind, description = error
            self._span.set_attribute("error.type", kind)
            self._span.set_status(Status(StatusCode.ERROR, description))
            if self._turn_cut and self._turn_since is not None:  # a turn with no result
                attrs = {**self._metric_attrs, "error.type": kind}
                took = time.monotonic() - self._turn_since
                self._instruments.duration.record(took, attrs)
        end_span(self._span)

    # ------------------------------------------------------------- internals

    def _owner(self, tool_use_id: object) -> Span:
        """The span an event about ``tool_use_id`` goes on: its tool's, else the session's."""
        found = self._tools.get(tool_use_id) if isinstance(tool_use_id, str) else None
        return found if found is not None else self._span

    def _agent_of(self, tool_use_id: object) -> Span:
        """The span a subagent's message goes under: the subagent's (started by the
        call ``tool_use_id``), else that call's, else the session's."""
        found = self._agents.get(tool_use_id) if isinstance(tool_use_id, str) else None
        return found[1] if found is not None else self._owner(tool_use_id)

    def _agent_started(self, message: TaskStartedMessage) -> None:
        """A subagent started by a tool call: an ``invoke_agent`` span under that call.
        (A background agent runs on after its call returned: its span keeps its tools.)"""
        call = message.tool_use_id
        if call is None or message.task_type not in (None, "local_agent") or call in self._agents:
            return
        name = message.data.get("subagent_type")
        name = encodable(name) if isinstance(name, str) and name else "subagent"
        background = message.data.get("is_backgrounded")
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.agent.name": name,
            "gen_ai.agent.id": message.task_id,
            "gen_ai.tool.call.id": call,
            "ccwire.agent.background": background is True,
        }
        if message.description and self._content:  # the model's words: an argument of the call
            attrs["gen_ai.agent.description"] = _detail(message.description)
        span = self._tracer.start_span(
            f"invoke_agent {name}",
            context=trace.set_span_in_context(self._owner(call)),
            kind=SpanKind.INTERNAL,
            attributes=attrs,
        )
        self._agents[call] = (message.task_id, span)

    def _agent_ended(self, task_id: str, status: str | None) -> None:
        """The subagent's task reached ``status``: its span ends on a terminal one."""
        if status not in ("completed", "failed", "stopped", "killed"):
            return
        for call, (tid, span) in list(self._agents.items()):
            if tid == task_id:
                del self._agents[call]
                if status != "completed":
                    span.set_attribute("error.type", status)
                    span.set_status(Status(StatusCode.ERROR, f"the subagent {status}"))
                end_span(span)

    def _on_assistant(self, message: AssistantMessage) -> None:
        if message.model and message.parent_tool_use_id is None:
            self._response_model = message.model
            self._span.set_attribute("gen_ai.response.model", message.model)
        parent = self._agent_of(message.parent_tool_use_id)
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.id not in self._tools:
                self._tool_started(block, parent)

    def _tool_started(self, block: ToolUseBlock, parent: Span) -> None:
        source = "mcp" if block.name.startswith("mcp__") else "builtin"
        name = encodable(block.name)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": encodable(block.id),
            "gen_ai.tool.type": "function",
            "ccwire.tool.source": source,
        }
        if self._content:
            attrs["gen_ai.tool.call.arguments"] = _json(block.input)
        self._tools[block.id] = self._tracer.start_span(
            f"execute_tool {name}",
            context=trace.set_span_in_context(parent),
            kind=SpanKind.INTERNAL,
            attributes=attrs,
        )

    def _mcp_span(self, request: Mapping[str, Any]) -> Span:
        """The span an MCP request runs in: its tool call's for ``tools/call``."""
        message = request.get("message")
        if not isinstance(message, Mapping) or message.get("method") != "tools/call":
            return self._span
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, Mapping) else None
        span = self._owner(tool_use_id)
        if span is not self._span:
            span.set_attribute("ccwire.tool.source", "sdk")
            server = request.get("server_name")
            if isinstance(server, str):
                span.set_attribute("ccwire.tool.mcp_server", server)
        return span

    def _tool_result(self, block: ToolResultBlock) -> None:
        span = self._tools.pop(block.tool_use_id, None)
        if span is None:
            return
        text = _content_text(block.content)
        if self._content and text is not None:
            span.set_attribute("gen_ai.tool.call.result", _clip(redact_text(text)))
        known = self._failed.pop(id(span), None)
        if block.is_error and self._closing:  # what the CLI says of a call cut short
            span.set_attribute("error.type", "cancelled")
            span.set_status(Status(StatusCode.ERROR, "the session ended before the tool's result"))
        elif block.is_error and known is not None:  # its handler raised, or it was denied
            span.set_attribute("error.type", known[0])
            span.set_status(Status(StatusCode.ERROR, known[1]))
        elif block.is_error:
            span.set_attribute("error.type", "tool_error")
            why = _detail(text) if self._content and text else "the tool reported an error"
            span.set_status(Status(StatusCode.ERROR, why))
        end_span(span)

    def _on_result(self, message: ResultMessage) -> None:
        self._turns += 1
        self._turn_since, self._turn_cut = None, False
        usage = message.usage or {}
        turn = {
            "input": _int(usage.get("input_tokens")),
            "output": _int(usage.get("output_tokens")),
            "cache_read": _int(usage.get("cache_read_input_tokens")),
            "cache_creation": _int(usage.get("cache_creation_input_tokens")),
        }
        for key, value in turn.items():
            self._totals[key] += value
        cost = self._cost.add(message) or 0.0
        turn_input = turn["input"] + turn["cache_read"] + turn["cache_creation"]
        error_type = _result_error_type(message)
        span = self._span
        if message.session_id:
            span.set_attribute("gen_ai.conversation.id", message.session_id)
        totals = self._totals
        span.set_attributes({
            "gen_ai.usage.input_tokens": totals["input"] + totals["cache_read"]
            + totals["cache_creation"],
            "gen_ai.usage.output_tokens": totals["output"],
            "gen_ai.usage.cache_read.input_tokens": totals["cache_read"],
            "gen_ai.usage.cache_creation.input_tokens": totals["cache_creation"],
            "ccwire.usage.cost_usd": round(self._cost.spent, 10),
            "ccwire.turns": self._turns,
            "ccwire.num_turns": message.num_turns,
        })  # fmt: skip
        if message.stop_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [message.stop_reason])
        event: dict[str, Any] = {
            "ccwire.turn.subtype": message.subtype,
            "ccwire.turn.is_error": message.is_error,
            "ccwire.turn.duration_ms": message.duration_ms,
            "ccwire.turn.num_turns": message.num_turns,
            "gen_ai.usage.input_tokens": turn_input,
            "gen_ai.usage.output_tokens": turn["output"],
            "ccwire.usage.cost_usd": round(cost, 10),
        }
        if self._content:
            if self._prompts:
                event["gen_ai.input.messages"] = _messages("user", self._prompts)
                if self._turns == 1:
                    span.set_attribute("gen_ai.input.messages", event["gen_ai.input.messages"])
                self._prompts = []
            if message.result is not None:
                event["gen_ai.output.messages"] = _messages("assistant", [message.result])
                span.set_attribute("gen_ai.output.messages", event["gen_ai.output.messages"])
        span.add_event("ccwire.turn", event)
        for denial in message.permission_denials or ():
            if isinstance(denial, Mapping):
                attrs = {"ccwire.permission.decision": "deny", "ccwire.permission.source": "cli"}
                for key, name in (("tool_name", "gen_ai.tool.name"),
                                  ("tool_use_id", "gen_ai.tool.call.id")):  # fmt: skip
                    said = denial.get(key)  # (its call's span has ended: the session's
                    if isinstance(said, str):  # event must say which call it was)
                        attrs[name] = said
                self._owner(denial.get("tool_use_id")).add_event("ccwire.permission", attrs)
        if error_type is not None:
            self._error = (error_type, _detail(_result_error_text(message)))
        else:
            self._error = None
        self._record_metrics(message, turn_input, turn["output"], cost, error_type)

    def _record_metrics(
        self,
        message: ResultMessage,
        input_tokens: int,
        output_tokens: int,
        cost: float,
        error_type: str | None,
    ) -> None:
        attrs = dict(self._metric_attrs)
        if self._response_model is not None:
            attrs["gen_ai.response.model"] = self._response_model
        ins = self._instruments
        ins.tokens.record(input_tokens, {**attrs, "gen_ai.token.type": "input"})
        ins.tokens.record(output_tokens, {**attrs, "gen_ai.token.type": "output"})
        if cost:
            ins.cost.add(cost, attrs)
        if error_type is not None:
            attrs["error.type"] = error_type
        ins.duration.record(max(0, message.duration_ms) / 1000.0, attrs)

    def _on_hook_message(self, message: HookEventMessage) -> None:
        if message.subtype != "hook_response":
            return
        data = message.data
        attrs: dict[str, Any] = {
            "ccwire.hook.event": message.hook_event_name,
            "ccwire.hook.source": "cli",
        }
        for key in ("hook_name", "outcome", "exit_code"):
            value = data.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                attrs[f"ccwire.hook.{key}"] = value
        self._owner(data.get("tool_use_id")).add_event("ccwire.hook", attrs)


def record_exception(span: Span, error: BaseException) -> tuple[str, str]:
    """Record ``error`` on ``span`` as an ``exception`` event, its message and stack trace
    masked and clipped.

    Args:
        span: The span it ended.
        error: The exception.

    Returns:
        Its ``error.type`` and the span's status description (its first line, masked).
    """
    stack = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    span.record_exception(  # masked: a cause's message may hold a secret
        error,
        attributes={
            "exception.message": _detail(str(error)),
            "exception.stacktrace": _clip(redact_text(stack), _STACK_CHARS),
        },
    )
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    return type(error).__name__, _detail(first)


def end_span(span: Span) -> None:
    """End ``span``; a span processor that fails on it is logged, not raised (telemetry
    must not fail a session or a batch, nor leave their other spans open).

    Args:
        span: The span to end.
    """
    try:
        span.end()
    except Exception:
        logger.exception("ccwire: a span processor failed to end a span")


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _clip(text: str, limit: int = _CONTENT_CHARS) -> str:
    """``text``, at most ``limit`` characters, as UTF-8 can carry it (`encodable`)."""
    return encodable(text if len(text) <= limit else text[: limit - 1] + "\u2026")


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (a ``"\\ud800"`` escape in the JSON the CLI or a
    task file sent) replaced by ``?``: an OTLP exporter drops a string attribute that
    UTF-8 cannot carry, logging a traceback each time.

    Args:
        text: Text to record on a span.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _detail(text: str) -> str:
    return _clip(redact_text(text), _DETAIL_CHARS)


def _json(value: Any) -> str:
    # a tool call's input was decoded from JSON: it encodes again
    return _clip(json.dumps(redact_value(value), ensure_ascii=False, default=repr))


def _messages(role: str, texts: list[str]) -> str:
    """Messages in the GenAI conventions' JSON shape (secrets masked)."""
    return _clip(
        json.dumps(
            [{"role": role, "parts": [{"type": "text", "content": redact_text(t)}]} for t in texts],
            ensure_ascii=False,
        )
    )


def _prompt_text(prompt: object) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Mapping):
        message = prompt.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        return _content_text(content) or ""
    return _content_text(prompt) or ""


def _content_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, Mapping)]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return None


def _result_error_type(message: ResultMessage) -> str | None:
    if not message.is_error:
        return None
    if message.api_error_status is not None:
        return f"api_error_{message.api_error_status}"
    if message.subtype and message.subtype != "success":
        return message.subtype
    return message.terminal_reason or "error"


def _result_error_text(message: ResultMessage) -> str:
    if message.errors:
        return "; ".join(str(e) for e in message.errors)
    return message.result or message.subtype
