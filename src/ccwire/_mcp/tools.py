"""Tool definitions: the ``@tool`` decorator, `SdkMcpTool`, annotations, context.

Everything that can be computed about a tool (its JSON Schema, the compiled validator,
how to call its handler, its ``tools/list`` entry) is computed when the tool is
defined, and again when one of its fields is assigned, so that a ``tools/call`` does no
schema work and no introspection.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from typing import Any, Final, Generic, TypeVar

from .._core.cancel import is_cancellation, raised_by_callback
from .._core.errors import ToolDefinitionError, ToolError, exception_text
from .._core.redact import install_log_filter, redact_text
from .._wire.content import (
    CONTENT_TYPES,
    audio_content,
    block_problem,
    dumps_json,
    embedded_blob_resource,
    embedded_text_resource,
    error_result,
    image_content,
    resource_link,
    text_content,
    to_plain,
)
from .annotations import ToolAnnotations, read_annotations
from .asking import AskingClient, Requester
from .handlers import as_async, kwargs_fields, read_signature
from .meta import tool_meta
from .schema import params_schema, to_json_schema
from .validation import CompiledValidator, ValidationFailure, compile_validator

__all__ = [
    "TOOL_FAILURES",
    "SdkMcpTool",
    "ToolAnnotations",
    "ToolContext",
    "audio_content",
    "embedded_blob_resource",
    "embedded_text_resource",
    "error_result",
    "image_content",
    "resource_link",
    "text_content",
    "tool",
    "tool_failed",
]

logger = logging.getLogger("ccwire")
tool_logger = logging.getLogger("ccwire.tools")
"""Where a tool handler's exception is told: one WARNING line, its traceback at DEBUG."""
install_log_filter(tool_logger)  # its records mask secrets, as the ``ccwire`` logger's do
T = TypeVar("T")
Sink = Callable[[dict[str, Any]], Awaitable[None]]
"""Delivers one JSON-RPC notification to the CLI."""
TOOL_FAILURES: ContextVar[Callable[[BaseException], None] | None] = ContextVar(
    "ccwire_tool_failures", default=None
)
"""Told of each exception a tool handler raised in this context, and of a call that
timed out (`TimeoutError`), whose caller (the model) gets an error result: a session's
telemetry records it on the span of the tool call."""

_NAME: Final = r"[A-Za-z0-9_.\-]{1,128}"  # compiled on first use (re's cache)
_RESULT_KEYS: Final = ("content", "isError", "is_error", "structuredContent")
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert",
                     "emergency")  # fmt: skip
"""MCP log levels, least severe first (``logging/setLevel`` and `ToolContext.log()`)."""
_LOG_RANK: Final = {name: i for i, name in enumerate(LOG_LEVELS)}
_SCHEMA_KEYWORDS: Final = frozenset({
    "type", "items", "prefixItems", "enum", "const", "format", "pattern", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems",
    "maxItems", "uniqueItems", "title", "description", "default", "examples", "nullable",
})  # fmt: skip
"""JSON Schema keywords of non-object schemas (to tell ``{"type": "string"}`` apart)."""


# --------------------------------------------------------------------------- context


@dataclass(frozen=True)
class ToolContext(AskingClient):
    """What a handler written as ``(args, ctx)`` learns about its call.

    ``tool_use_id`` is the model's ``tool_use`` id (from ``_meta["claudecode/toolUseId"]``),
    ``request_id`` the JSON-RPC id of the ``tools/call``, ``progress_token`` the token
    for `report_progress()`.  ``send`` delivers notifications for this call to the
    CLI; without it (or without a token) progress reports are dropped.  ``meta`` is the
    call's raw ``_meta`` and ``log_level`` the client's ``logging/setLevel`` threshold
    (``"off"`` when the client did not opt in to log messages: a 2026-07-28 request
    without a ``logLevel`` in its ``_meta``).
    `elicit()` and `sample()` ask the client (the user, its model) through ``request``;
    ``client_capabilities`` is what the client declared it supports.
    """

    tool_name: str
    server_name: str = ""
    request_id: str | int | None = None
    tool_use_id: str | None = None
    session_id: str | None = None
    progress_token: str | int | None = None
    meta: Mapping[str, Any] | None = None
    send: Sink | None = field(default=None, repr=False, compare=False)
    log_level: str = "debug"
    request: Requester | None = field(default=None, repr=False, compare=False)
    client_capabilities: Mapping[str, Any] | None = field(default=None, repr=False)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` for this call (a no-op without a progress token).

        Returns ``True`` once the client acknowledged it, ``False`` if it was dropped
        (no token, no session, or delivery failed: logged, never raised).
        """
        if self.progress_token is None:
            return False
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return await self._notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send an MCP log message (``notifications/message``) at ``level`` ("info", ...).

        Messages below the level the client set with ``logging/setLevel`` are dropped.
        Returns ``True`` once the client acknowledged it (as `report_progress()`).
        A level MCP does not define raises ``ValueError``.
        """
        rank = _LOG_RANK.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LOG_LEVELS)}")
        if rank < _LOG_RANK.get(self.log_level, len(LOG_LEVELS)):  # "off": nothing is sent
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return await self._notify("notifications/message", params)

    def report_progress_sync(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """`report_progress()` for a plain ``def`` handler, from its worker thread.

        The notification is sent on the event loop, and this returns once it was
        delivered (same return value).  Only for the worker thread ccwire runs the
        handler in: elsewhere it raises ``RuntimeError``.
        """
        return self._from_thread(self.report_progress, progress, total, message)

    def log_sync(self, level: str, data: Any, logger: str | None = None) -> bool:
        """`log()` for a plain ``def`` handler, from its worker thread (as
        `report_progress_sync()`)."""
        return self._from_thread(self.log, level, data, logger)

    def _from_thread(self, fn: Callable[..., Coroutine[Any, Any, bool]], *args: Any) -> bool:
        import anyio.from_thread  # on first use: it loads much of anyio

        try:
            return anyio.from_thread.run(fn, *args)
        except RuntimeError as exc:
            if type(exc).__name__ == "RunFinishedError":
                return False  # the event loop is gone: nobody to tell any more
            if "worker thread" not in str(exc):
                raise
            name = fn.__name__
            raise RuntimeError(
                f"ToolContext.{name}_sync() can only be called from the worker thread of a "
                f"plain def handler; in an async handler use await ctx.{name}(...)"
            ) from exc

    async def _notify(self, method: str, params: dict[str, Any]) -> bool:
        if self.send is None:
            return False
        try:
            await self.send({"jsonrpc": "2.0", "method": method, "params": params})
        except Exception as exc:  # a lost notification must not fail the tool
            logger.warning("ccwire: tool %r lost a %s: %s", self.tool_name, method, exc)
            return False
        return True


# --------------------------------------------------------------------------- tools

_Invoke = Callable[[Any, "ToolContext | None"], Awaitable[Any]]


@dataclass(frozen=True)
class _Served:
    """What a tool serves, computed from its fields: see `SdkMcpTool`."""

    json_schema: dict[str, Any]
    validator: CompiledValidator
    output_json_schema: dict[str, Any] | None
    output_validator: CompiledValidator | None
    wants_context: bool
    definition: dict[str, Any]
    invoke: _Invoke


@dataclass(eq=False)
class SdkMcpTool(Generic[T]):
    """A tool served by an in-process MCP server; made by `tool()`.

    ``input_schema`` is kept as given; ``json_schema`` is the JSON Schema computed from
    it (or from the handler's signature when it is ``None``) and ``validator`` its
    compiled validator (JSON Schema draft 2020-12 unless ``$schema`` says otherwise;
    ``format`` checked unless ``validate_formats`` is false).
    ``handler`` may be ``async def`` or a plain ``def`` (run in a worker thread) taking
    ``(args)``, ``(args, ctx)``, or, when the schema was inferred, keyword arguments
    (plus an optional ``ctx: ToolContext``).

    As in ``claude-agent-sdk``, the fields may be assigned after the tool is made
    (tracing integrations replace ``handler`` with a wrapper): everything computed from
    them (schema, validator, how the handler is called, the ``tools/list`` entry) is
    computed again at once, so the tool serves what its fields say. An assignment the
    tool cannot serve raises `ToolDefinitionError` and leaves the tool as it was.
    Change a field by assigning it, not by changing a dict it holds in place.
    """

    name: str
    description: str
    input_schema: Any
    handler: Callable[..., Any]
    annotations: ToolAnnotations | Mapping[str, Any] | None = None
    title: str | None = None
    output_schema: Any = None
    timeout: float | None = None
    meta: Mapping[str, Any] | None = None
    validate_formats: bool = True

    def __post_init__(self) -> None:
        self._served = _serve(self)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FIELDS or "_served" not in self.__dict__:  # not made yet
            object.__setattr__(self, name, value)
            return
        old = self.__dict__[name]
        object.__setattr__(self, name, value)
        try:
            served = _serve(self)
        except BaseException:
            object.__setattr__(self, name, old)
            raise
        object.__setattr__(self, "_served", served)

    @property
    def json_schema(self) -> dict[str, Any]:
        """The input's JSON Schema (from ``input_schema``, or the handler's signature)."""
        return self._served.json_schema

    @property
    def validator(self) -> CompiledValidator:
        """The compiled validator of `json_schema`."""
        return self._served.validator

    @property
    def output_json_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of ``output_schema``, or ``None`` without one."""
        return self._served.output_json_schema

    @property
    def wants_context(self) -> bool:
        """Whether the handler takes a `ToolContext`."""
        return self._served.wants_context

    @property
    def definition(self) -> dict[str, Any]:
        """The tool's ``tools/list`` entry."""
        return self._served.definition

    async def call(self, arguments: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        """Validate ``arguments``, run the handler and return a ``CallToolResult`` dict.

        Never raises for tool failures (those become ``isError`` results); timeouts and
        cancellation are applied by the server around this call.
        """
        args, ctx, refused = self._prepared(arguments, ctx)
        if refused is not None:
            return refused
        try:
            result = self._result(_not_a_coroutine(self.name, await self._served.invoke(args, ctx)))
        except BaseException as exc:
            return self._failed(exc)
        return self._checked(result)

    def _prepared(
        self, arguments: Any, ctx: ToolContext | None
    ) -> tuple[Any, ToolContext | None, dict[str, Any] | None]:
        """The validated arguments and the call's context, or the result refusing them."""
        args, failure = self.validator.validate({} if arguments is None else arguments)
        if failure is not None:
            return (
                args,
                ctx,
                error_result(
                    # the reference's prefix (code checks for it), then every failure
                    f"Input validation error: invalid arguments for tool {self.name!r}: {failure}"
                ),
            )
        if ctx is None and self.wants_context:
            ctx = ToolContext(tool_name=self.name)
        return args, ctx, None

    def _failed(self, exc: BaseException) -> dict[str, Any]:
        """The error result for an exception the handler raised (ours propagate)."""
        if isinstance(exc, ToolError):  # the handler's own answer: nothing went wrong here
            return error_result(exception_text(exc))
        if isinstance(exc, Exception):  # its text, as the reference SDK sends; secrets masked
            _log_tool_exception(self.name, exc)
            return error_result(redact_text(exception_text(exc) or type(exc).__name__))
        if not raised_by_callback(exc):  # a cancellation the handler raised is its error
            raise exc
        if is_cancellation(exc):
            return error_result(f"{type(exc).__name__}: the tool cancelled itself")
        _log_tool_exception(self.name, exc)  # a BaseException of its own: its failure
        return error_result(redact_text(f"{type(exc).__name__}: {exception_text(exc)}"))

    def _result(self, value: Any) -> dict[str, Any]:
        output_validator = self._served.output_validator
        if output_validator is not None:
            return self._structured_result(value, output_validator)
        if (
            type(value) is dict
            and "content" in value
            and "is_error" not in value
            and "structuredContent" not in value
        ):
            content = value["content"]  # the common shape: checked without copying
            if type(content) is list:
                for block in content:
                    if type(block) is not dict:
                        break
                else:
                    return value
        if isinstance(value, dict):
            if any(key in value for key in _RESULT_KEYS):
                return self._mcp_result(value)
            if value.get("type") in CONTENT_TYPES:
                return {"content": [value]}
        elif isinstance(value, str):
            return {"content": [{"type": "text", "text": value}]}
        elif isinstance(value, (list, tuple)):
            return {"content": _blocks(value)}
        elif value is None:
            return {"content": []}
        return {"content": [text_content(dumps_json(value))]}

    def _checked(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result``, or, if one of its content blocks is not one (`block_problem`),
        an error result saying what is wrong: every result a tool returns, whatever
        its shape, meets the same rule before it goes to the CLI or an MCP client."""
        for index, block in enumerate(result.get("content") or ()):
            problem = block_problem(block)
            if problem is not None:
                text = f"Tool {self.name!r} returned invalid content: block {index}: {problem}"
                tool_logger.warning(  # the developer's mistake: the model alone was told
                    "%s; the caller (the model) got it as an error result", text
                )
                return error_result(text)
        return result

    def _structured_result(self, value: Any, validator: CompiledValidator) -> dict[str, Any]:
        """A result for a tool with an output schema: every success carries
        ``structuredContent`` that matches the schema (MCP requires it)."""
        if isinstance(value, dict) and any(key in value for key in _RESULT_KEYS):
            result = self._mcp_result(value)
            if result.get("isError") or "structuredContent" in result:
                return result
            return self._derive(result, validator)
        if isinstance(value, str):
            return self._derive({"content": [text_content(value)]}, validator)
        if isinstance(value, (list, tuple)):
            return self._derive({"content": _blocks(value)}, validator)
        if value is None:
            return self._derive({"content": []}, validator)
        data, failure = validator.validate(to_plain(value))
        if failure is None and isinstance(data, Mapping):
            data = data if type(data) is dict else dict(data)
            return {"content": [text_content(dumps_json(data))], "structuredContent": data}
        if isinstance(value, dict) and value.get("type") in CONTENT_TYPES:
            return self._derive({"content": [value]}, validator)  # a content block, not data
        return self._mismatch(failure)

    def _derive(self, result: dict[str, Any], validator: CompiledValidator) -> dict[str, Any]:
        """``result`` (content only) with ``structuredContent`` parsed from its single
        JSON text block, or an error result saying that structured data is required."""
        content = result.get("content")
        if isinstance(content, list) and len(content) == 1:
            block = content[0]  # content blocks are dicts by now
            text = block.get("text")
            if block.get("type") == "text" and isinstance(text, str):
                try:
                    data = json.loads(text)
                except (ValueError, RecursionError):
                    data = None
                if isinstance(data, dict):
                    checked, failure = validator.validate(data)
                    if failure is not None:
                        return self._mismatch(failure)
                    return {**result, "structuredContent": checked}
        return error_result(
            f"Tool {self.name!r} has an output schema, so it must return structured data: "
            "a dict, dataclass or pydantic model matching the schema, a result with "
            "'structuredContent', or one text block holding that data as a JSON object; "
            "it returned content without structured data"
        )

    def _mismatch(self, failure: ValidationFailure | None) -> dict[str, Any]:
        why = "output must be object" if failure is None else failure.describe("output")
        return error_result(
            f"Tool {self.name!r} returned output that does not match its output schema: {why}"
        )

    def _mcp_result(self, result: dict[str, Any]) -> dict[str, Any]:
        if "is_error" in result:  # the reference SDK's spelling
            result = {("isError" if k == "is_error" else k): v for k, v in result.items()}
            result["isError"] = bool(result["isError"])
        content = result.get("content")
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            if content is not None and not isinstance(content, (list, tuple, str)):
                return error_result(f"Tool {self.name!r} returned invalid content: {content!r}")
            items = [content] if isinstance(content, str) else content or []
            result = {**result, "content": _blocks(items)}
        if "structuredContent" in result and not isinstance(result["structuredContent"], dict):
            return error_result(
                f"Tool {self.name!r} returned structuredContent that is not a JSON object: "
                f"{result['structuredContent']!r}"
            )
        validator = self._served.output_validator
        if validator is not None and "structuredContent" in result and not result.get("isError"):
            _, failure = validator.validate(result["structuredContent"])
            if failure is not None:
                return self._mismatch(failure)
        return result


def _not_a_coroutine(name: str, value: Any) -> Any:
    """``value``, a handler's result; a coroutine there is ``return other()`` in an async
    handler, a missing await: closed (never run, no "was never awaited" warning later) and
    refused with a TypeError (logged for the developer, an error result for the model)."""
    if inspect.iscoroutine(value):
        value.close()
        raise TypeError(
            f"tool {name!r} returned a coroutine object instead of its result "
            "(a missing 'await' in its handler?)"
        )
    return value


def _log_tool_exception(name: str, exc: BaseException) -> None:
    """Tell the developer that tool ``name`` raised (the model only sees an error result):
    a one-line WARNING on ``ccwire.tools``, the traceback at DEBUG (a test whose tools
    raise on purpose gets one captured line per call, not a traceback); and
    `TOOL_FAILURES`, if set."""
    text = exception_text(exc).strip().splitlines()
    tool_logger.warning(
        "tool %r raised %s%s; the caller (the model) got it as an error result (the "
        "traceback: the 'ccwire.tools' logger at DEBUG level, or ccwire run/serve --verbose)",
        name, type(exc).__name__, f": {text[0]}" if text else "",
    )  # fmt: skip
    tool_logger.debug("the traceback of tool %r:", name, exc_info=exc)
    tool_failed(exc)


def tool_failed(exc: BaseException) -> None:
    """Tell `TOOL_FAILURES` (if set) that the tool call of this context failed with
    ``exc`` (its handler raised it, or it timed out).

    Args:
        exc: The exception.
    """
    observe = TOOL_FAILURES.get()
    if observe is not None:
        observe(exc)


def _blocks(items: Any) -> list[Any]:
    return [
        b if isinstance(b, dict) else text_content(b if isinstance(b, str) else dumps_json(b))
        for b in items
    ]


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED: Final[Any] = _Required()
"""The default of `tool()`'s name and description, so that ``@tool`` without them is
told how to write it instead of Python's "missing 1 required positional argument"."""


def decorate_hint(name: str) -> str:
    """How to make a tool of the function called ``name``."""
    return (
        f'`@tool({name!r}, "what it does", {{"x": float}})` (or `@tool(name, description)` '
        "to take the schema from its parameters)"
    )


def tool(
    name: str = _REQUIRED,
    description: str = _REQUIRED,
    input_schema: Any = None,
    annotations: ToolAnnotations | Mapping[str, Any] | None = None,
    *,
    title: str | None = None,
    output_schema: Any = None,
    timeout: float | None = None,
    meta: Mapping[str, Any] | None = None,
    validate_formats: bool = True,
    search_hint: str | None = None,
    always_load: bool = False,
    end_turn: bool = False,
    end_turn_honors_stop_hooks: bool = False,
) -> Callable[[Callable[..., Any]], SdkMcpTool[Any]]:
    """Decorate a handler to make it an `SdkMcpTool`.

    Example:
        ```python
        @tool("greet", "Greet someone by name", {"name": str})
        async def greet(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

        server = create_sdk_mcp_server("demo_tools", tools=[greet])
        # the model sees it as mcp__demo_tools__greet: allow it with
        # ClaudeAgentOptions(mcp_servers={"demo_tools": server},
        #                    allowed_tools=["mcp__demo_tools__greet"])
        ```

    The handler gets the arguments as one dict and returns the MCP result dict above;
    a plain ``str`` (one text block), a list of content blocks, ``None`` or any
    JSON-able value is accepted too. An exception it raises becomes an ``isError``
    result with the exception's text (`ToolError` for exactly your message), logged
    on the ``ccwire.tools`` logger; the conversation goes on. The decorated name is
    the `SdkMcpTool`, not a function: to call the handler yourself (in a unit test),
    ``await greet.handler({"name": "Alice"})``.
    ``input_schema`` may be a ``{param: type}`` dict, type-name strings, a JSON Schema
    dict, a TypedDict, a dataclass, a pydantic model class, or ``None`` to infer it from
    the handler's parameters (which are then passed as keyword arguments).  It is
    compiled here, as JSON Schema draft 2020-12 unless its ``$schema`` names another
    draft.  Arguments that do not match it become an ``isError`` result naming each
    offending field and the failing rule, and the handler is not called; a string
    holding a JSON object or array is decoded where the schema wants one.  ``format``
    is checked (``"format": "email"`` refuses ``"x"``) unless ``validate_formats=False``,
    which leaves it an annotation, as JSON Schema does by default.  The name is
    checked here too (1-128 letters, digits, ``_``, ``-``, ``.``): a bad one, or a
    schema that is not valid JSON Schema, raises `ToolDefinitionError`, as does
    ``@tool`` without its name and description (a `TypeError` too, as in
    ``claude-agent-sdk``), saying how to write it.
    ``timeout`` (seconds) bounds each call; ``output_schema`` (a JSON Schema,
    TypedDict, dataclass or pydantic model class) makes dict/dataclass/model return
    values ``structuredContent``, validated against it (``format`` as an annotation),
    plus the same JSON as a text block; ``meta`` becomes the tool's ``_meta`` in
    ``tools/list``.  ``annotations`` are sent as given (``read_only_hint=True`` lets
    the CLI run several calls of the tool at once).  ``search_hint`` gives tool search
    words to find the tool by, ``always_load=True`` keeps it in the prompt (never
    deferred behind tool search), and ``end_turn=True`` makes a successful call end
    the turn, with no model request after it (``end_turn_honors_stop_hooks=True``:
    Stop hooks still run, and may keep the turn going); they set the ``_meta`` keys
    ``anthropic/searchHint``, ``anthropic/alwaysLoad``, ``claude/endTurn`` and
    ``claude/endTurnHonorsStopHooks`` (``meta``'s own values win).
    """
    if name is _REQUIRED or description is _REQUIRED or callable(name):
        raise _without_arguments(name)
    meta = tool_meta(
        meta,
        search_hint=search_hint,
        always_load=always_load,
        end_turn=end_turn,
        end_turn_honors_stop_hooks=end_turn_honors_stop_hooks,
    )

    def decorator(handler: Callable[..., Any]) -> SdkMcpTool[Any]:
        return SdkMcpTool(
            name=name, description=description, input_schema=input_schema, handler=handler,
            annotations=annotations, title=title, output_schema=output_schema,
            timeout=timeout, meta=meta, validate_formats=validate_formats,
        )  # fmt: skip

    return decorator


def _without_arguments(name: Any) -> ToolDefinitionError:
    """The error for `tool()` called without its name or description: a bare ``@tool``
    passes the function as the name."""
    if isinstance(name, str):
        return ToolDefinitionError(
            f"tool {name!r} needs a description: write {decorate_hint(name)}"
        )
    if callable(name):
        fn = getattr(name, "__name__", None)
        fn = fn if isinstance(fn, str) and fn.isidentifier() else "my_tool"
        return ToolDefinitionError(
            f"@tool over `{fn}` needs a name and a description: write {decorate_hint(fn)}"
        )
    return ToolDefinitionError(
        f"tool() needs a name and a description: write {decorate_hint('name')}"
    )


_FIELDS: Final = frozenset(f.name for f in fields(SdkMcpTool))


def _serve(t: SdkMcpTool[Any]) -> _Served:
    """Check ``t``'s fields and compute what it serves from them."""
    if not isinstance(t.name, str) or not re.fullmatch(_NAME, t.name):
        raise ToolDefinitionError(
            f"invalid tool name {t.name!r}: use 1-128 letters, digits, '_', '-' or '.'"
        )
    if not isinstance(t.description, str):
        raise ToolDefinitionError(f"tool {t.name!r}: description must be a string")
    if not callable(t.handler):
        raise ToolDefinitionError(f"tool {t.name!r}: handler is not callable")
    if t.timeout is not None and not (isinstance(t.timeout, (int, float)) and t.timeout > 0):
        raise ToolDefinitionError(f"tool {t.name!r}: timeout must be a positive number")
    schema, invoke, wants_ctx = _analyse(t)
    output = None if t.output_schema is None else _output_schema(t)
    entry: dict[str, Any] = {"name": t.name}
    if t.title is not None:
        entry["title"] = t.title
    entry.update(description=t.description, inputSchema=schema)
    if output is not None:
        entry["outputSchema"] = output
    hints = read_annotations(t.annotations)
    if hints is not None and hints.to_dict():
        entry["annotations"] = hints.to_dict()
    meta = {**(hints.meta() if hints is not None else {}), **(t.meta or {})}
    if meta:
        entry["_meta"] = meta
    return _Served(
        json_schema=schema,
        validator=_compile(t, schema, "input_schema", formats=t.validate_formats),
        output_json_schema=output,
        output_validator=None if output is None else _compile(t, output, "output_schema"),
        wants_context=wants_ctx,
        definition=entry,
        invoke=invoke,
    )


# --------------------------------------------------------------------------- handler analysis


def _analyse(t: SdkMcpTool[Any]) -> tuple[dict[str, Any], _Invoke, bool]:
    """``(schema, invoke, wants_context)``, from the schema and the handler's signature."""
    handler, inferred, what = t.handler, t.input_schema is None, f"tool {t.name!r}"
    sig = read_signature(handler, what=what, need_annotations=inferred)
    params = list(sig.parameters.values()) if sig is not None else []
    if params and params[0].name in ("self", "cls") and not inspect.ismethod(handler):
        owner, _, method = getattr(handler, "__qualname__", "").rpartition(".")
        instance = owner.rpartition(".")[2].lower() or "instance"
        raise ToolDefinitionError(
            f"{what}: the handler's first parameter is `{params[0].name}`, but a tool's "
            "handler is called as a function, with no instance: decorate a function, or "
            f"pass a bound method, `tool({t.name!r}, ...)({instance}.{method or 'method'})`"
        )
    ctx_param = next((p for p in params if _is_ctx(p)), None)
    ctx_name = ctx_param.name if ctx_param is not None else ""
    P = inspect.Parameter
    if inferred:
        skip = () if ctx_param is None else (ctx_param,)
        fields, extra = kwargs_fields(params, what=what, skip=skip)
        try:
            schema = params_schema(fields, additional=extra)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"{what}: {exc}") from None
        mode = "kwargs_ctx" if ctx_param is not None else "kwargs"
    else:
        try:
            schema = to_json_schema(t.input_schema)
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"{what}: {exc}") from None
        positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
        if len(positional) >= 2 and (
            positional[1].default is P.empty or positional[1] is ctx_param
        ):
            mode = "args_ctx"
        elif ctx_param is not None and ctx_param.kind is P.KEYWORD_ONLY:
            mode = "args_kwctx"
        else:
            mode = "args"
        if sig is not None:
            _check_callable_with_args(t, sig, mode, ctx_name, schema)
    return schema, _make_invoke(handler, mode, ctx_name), mode != "args" and mode != "kwargs"


def _check_callable_with_args(
    t: SdkMcpTool[Any], sig: inspect.Signature, mode: str, ctx_name: str, schema: Any
) -> None:
    """Refuse a handler that cannot take the arguments dict (``async def now()`` with a
    schema), which would otherwise fail only when the model calls it, or that is written
    for the arguments as parameters (``async def greet(name: str)``, ``async def add(a,
    b)``), which would get the dict in the first one (and the context in the second)."""
    try:
        if mode == "args_kwctx":
            sig.bind(None, **{ctx_name: None})
        else:
            sig.bind(*((None, None) if mode == "args_ctx" else (None,)))
    except TypeError:
        name = getattr(t.handler, "__name__", "handler")
        raise ToolDefinitionError(
            f"tool {t.name!r}: the handler {name}{sig} cannot take the arguments dict: "
            f"write `async def {name}(args)`, or leave out the schema to have the "
            "arguments passed as its parameters"
        ) from None
    params = list(sig.parameters.values())
    if not params or params[0].name == ctx_name:
        return
    keys = schema.get("properties") if isinstance(schema, Mapping) else None
    named = [p.name for p in params if p.default is p.empty and p.kind is not p.VAR_KEYWORD]
    if params[0].annotation in _ONE_VALUE:
        why = f"its parameter `{params[0].name}` is annotated `{params[0].annotation.__name__}`"
    elif (
        mode == "args_ctx"
        and not ctx_name
        and isinstance(keys, Mapping)
        and len(named) >= 2
        and all(n in keys for n in named)
    ):
        listed = ", ".join(f"`{n}`" for n in named)
        why = (
            f"its parameters {listed} are the schema's keys (the second would get the "
            "call's ToolContext)"
        )
    else:
        return
    name = getattr(t.handler, "__name__", "handler")
    raise ToolDefinitionError(
        f"tool {t.name!r}: with an input schema, the handler gets the arguments as one dict, "
        f"but {why}: write `async def {name}(args: dict[str, Any])` and read args['...'], "
        "or leave out the schema to have each argument passed as the parameter of its name"
    )


_ONE_VALUE: Final = (str, int, float, bool, bytes, list, tuple)
"""Annotations of a handler's first parameter that cannot be the arguments dict (a
handler written for an inferred schema, ``async def greet(name: str)``, given one)."""


def _compile(
    t: SdkMcpTool[Any], schema: Any, what: str, *, formats: bool = False
) -> CompiledValidator:
    """The compiled validator of ``schema``; ``format`` is an annotation in an output
    schema (JSON Schema's default) and checked in an input schema unless switched off."""
    try:
        return compile_validator(schema, validate_formats=formats)
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(f"tool {t.name!r}: {what} {exc}") from None


def _output_schema(t: SdkMcpTool[Any]) -> dict[str, Any]:
    """The JSON Schema of ``output_schema``: it must describe an object, because MCP's
    ``structuredContent`` always is one."""
    spec = t.output_schema
    if (
        isinstance(spec, Mapping)
        and isinstance(spec.get("type"), (str, list))
        and spec["type"] != "object"
        and (isinstance(spec["type"], list) or spec.keys() <= _SCHEMA_KEYWORDS)
    ):  # {"type": "string"} is a JSON Schema here, not a {param: type} dict
        schema = dict(spec)
    else:
        schema = to_json_schema(spec, "output_schema")
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            f'tool {t.name!r}: output_schema must be an object schema ("type": "object"), '
            f"because MCP structured content is always a JSON object; got {schema!r}"
        )
    return schema


def _is_ctx(p: inspect.Parameter) -> bool:
    ann = p.annotation
    if ann is ToolContext or (isinstance(ann, str) and ann.rsplit(".", 1)[-1] == "ToolContext"):
        return True
    return ann is inspect.Parameter.empty and p.name == "ctx"


def _make_invoke(handler: Callable[..., Any], mode: str, ctx_name: str) -> _Invoke:
    call: Callable[[Any, ToolContext | None], Any]
    if mode == "args":
        call = lambda a, c: handler(a)  # noqa: E731
    elif mode == "args_ctx":
        call = handler
    elif mode == "args_kwctx":
        call = lambda a, c: handler(a, **{ctx_name: c})  # noqa: E731
    elif mode == "kwargs":
        call = lambda a, c: handler(**a)  # noqa: E731
    else:
        call = lambda a, c: handler(**a, **{ctx_name: c})  # noqa: E731
    return as_async(call, handler)
