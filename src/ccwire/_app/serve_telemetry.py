"""``ccwire serve --otel``: each request the served server answers is a span and a point
of the ``mcp.server.operation.duration`` histogram, named as OpenTelemetry's
conventions for MCP name them.

A request is a ``SERVER`` span ``{method} {target}`` (``tools/call add``,
``prompts/get review``, ``initialize``) with ``mcp.method.name``,
``jsonrpc.request.id``, ``network.transport``, and ``gen_ai.tool.name`` /
``gen_ai.operation.name`` (``execute_tool``), ``gen_ai.prompt.name`` or
``mcp.resource.uri`` where they apply.  Its parent is the trace context the client
put in the request's ``params._meta`` (``traceparent``, ``tracestate``), so a client
that propagates it sees the tool call inside its own trace.  A JSON-RPC error answer
sets ``error.type`` and ``rpc.response.status_code`` to its code; a tool result with
``isError`` sets ``error.type`` to ``tool_error`` (a failed tool is a successful
JSON-RPC answer, which a dashboard would otherwise count as a success), or, when the
tool's handler raised (or the call timed out), to the exception's class, the exception
recorded on the span; a call cut
off (the client cancelled it, or serving stopped) sets it to ``cancelled``.  Both
make the span's status an error.  Notifications are not traced.

OpenTelemetry is imported only here, and this module only with ``--otel``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio

from .._mcp.tools import TOOL_FAILURES

__all__ = ["TracedServer"]

_TARGETS = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
_URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


class TracedServer:
    """The served server with each request it answers traced.

    Everything but `handle` is the served server's own (the serving loop reads its
    routes, attaches to it, and so on).

    Args:
        server: The server to serve (an `SdkMcpServer` or a hosted official one).
        transport: ``network.transport``: ``"pipe"`` (stdio) or ``"tcp"`` (HTTP).
        tracer_provider: Where the spans go (default: OpenTelemetry's global one).
        meter_provider: Where the durations go (default: the global one).
    """

    def __init__(
        self,
        server: Any,
        transport: str,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        from opentelemetry import metrics, trace

        self._server = server
        self._transport = transport
        self._tracer = trace.get_tracer("ccwire", tracer_provider=tracer_provider)
        meter = metrics.get_meter("ccwire", meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="The time the server took to answer an MCP request",
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)

    async def handle(self, message: Mapping[str, Any], **kwargs: Any) -> dict[str, Any] | None:
        """Serve ``message`` as the served server does, inside its request's span."""
        method = message.get("method") if isinstance(message, Mapping) else None
        if not isinstance(method, str) or "id" not in message:
            return await self._server.handle(message, **kwargs)  # type: ignore[no-any-return]
        from opentelemetry import trace
        from opentelemetry.propagate import extract

        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        meta = params.get("_meta")
        carrier: dict[str, str] = {}
        if isinstance(meta, Mapping):  # the client's trace context, if it sent one
            carrier = {k: v for k, v in meta.items() if isinstance(k, str) and isinstance(v, str)}
        attributes = self._attributes(method, message["id"], params, kwargs.get("session_key"))
        target = params.get("name") if method in _TARGETS else None
        name = f"{method} {target}" if isinstance(target, str) else method
        started = time.perf_counter()
        raised: list[BaseException] = []  # what the tool's handler raised (`TOOL_FAILURES`)
        with self._tracer.start_as_current_span(
            name,
            context=extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes=attributes,
            record_exception=True,
            set_status_on_exception=True,
        ) as span:
            failures = TOOL_FAILURES.set(raised.append)
            try:
                reply: dict[str, Any] | None = await self._server.handle(message, **kwargs)
            except anyio.get_cancelled_exc_class():  # cut off: serving stopped
                self._record(started, attributes, _failed(span, "cancelled"))
                raise
            except Exception as exc:  # recorded on the span by OpenTelemetry
                span.set_attribute("error.type", type(exc).__qualname__)
                self._record(started, attributes, type(exc).__qualname__)
                raise
            finally:
                TOOL_FAILURES.reset(failures)
            self._record(started, attributes, _error_type(reply, span, raised))
            return reply

    def _attributes(
        self, method: str, request_id: Any, params: Mapping[str, Any], session_key: Any
    ) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "jsonrpc.request.id": str(request_id),
            "network.transport": self._transport,
        }
        key = _TARGETS.get(method)
        if key is not None and isinstance(params.get("name"), str):
            attributes[key] = params["name"]
            if method == "tools/call":
                attributes["gen_ai.operation.name"] = "execute_tool"
        if method in _URI_METHODS and isinstance(params.get("uri"), str):
            attributes["mcp.resource.uri"] = params["uri"]
        if method == "initialize" and isinstance(params.get("protocolVersion"), str):
            attributes["mcp.protocol.version"] = params["protocolVersion"]
        if isinstance(session_key, str):
            attributes["mcp.session.id"] = session_key
        return attributes

    def _record(
        self, started: float, attributes: Mapping[str, Any], error_type: str | None
    ) -> None:
        point = {k: v for k, v in attributes.items() if k != "jsonrpc.request.id"}
        point.pop("mcp.resource.uri", None)  # high cardinality: spans only
        if error_type is not None:
            point["error.type"] = error_type
        self._duration.record(time.perf_counter() - started, point)


def _failed(span: Any, error_type: str, description: str | None = None) -> str:
    """``error_type`` set on ``span``, its status an error; returns ``error_type``."""
    from opentelemetry.trace import StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(StatusCode.ERROR, description or error_type)
    return error_type


def _error_type(
    reply: Mapping[str, Any] | None, span: Any, raised: list[BaseException]
) -> str | None:
    """What failed in ``reply`` (set on ``span``, its status an error), or ``None``: for
    an error result, what the tool's handler ``raised`` (recorded on ``span``), if it
    raised, else ``tool_error``."""
    if reply is None:  # the client cancelled it: no answer is owed
        return _failed(span, "cancelled")
    failure = reply.get("error")
    if isinstance(failure, Mapping):
        code = str(failure.get("code"))
        span.set_attribute("rpc.response.status_code", code)
        message = failure.get("message")
        return _failed(span, code, message if isinstance(message, str) else None)
    result = reply.get("result")
    if isinstance(result, Mapping) and result.get("isError") is True:
        if raised:
            from .._conversation.tracing import record_exception

            return _failed(span, *record_exception(span, raised[-1]))
        return _failed(span, "tool_error", "the tool reported an error")
    return None
