"""The in-process MCP server: JSON-RPC dispatch for the messages the CLI sends.

The control layer hands every ``mcp_message`` to :meth:`SdkMcpServer.handle` (from a
task of its own, so calls overlap) and writes back whatever it returns; ``None`` means
"write no JSON-RPC response".  Dispatch goes through the ``_ROUTES`` table.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final

import anyio

from ._errors import ToolDefinitionError
from ._mcp_config import McpSdkServerConfig
from ._tools import LOG_LEVELS, SdkMcpTool, Sink, ToolContext, error_result

__all__ = ["PROTOCOL_VERSIONS", "SdkMcpServer", "create_sdk_mcp_server"]

logger = logging.getLogger("ccwire")

PROTOCOL_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""MCP protocol versions this server speaks; a client asking for another gets 2025-06-18."""
_DEFAULT_VERSION: Final = "2025-06-18"
_INVALID_REQUEST, _METHOD_NOT_FOUND, _INVALID_PARAMS, _INTERNAL_ERROR = (
    -32600,
    -32601,
    -32602,
    -32603,
)
_NO_PARAMS: Final[Mapping[str, Any]] = MappingProxyType({})
_CURSOR_PREFIX: Final = "ccwire-tools:"
_INF: Final = float("inf")
_PRECANCEL_LIMIT: Final = 64
_BACKGROUND: set[Any] = set()  # strong references to asyncio notification tasks

_Route = Callable[..., Awaitable["dict[str, Any] | None"]]


def _result(req_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def _error(req_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class SdkMcpServer:
    """An MCP server whose tools run in this process; the ``instance`` of an SDK config.

    ``tools`` is a read-only name -> :class:`SdkMcpTool` view; change it with
    :meth:`add_tool` / :meth:`remove_tool`.  One server may serve several sessions at
    once: their in-flight calls are told apart by ``(session key, JSON-RPC id)``.

    **How tool-list changes reach the CLI.**  :meth:`attach` registers an async *sink*
    (one per session).  ``add_tool``/``remove_tool`` are plain sync methods; they
    schedule one background delivery of ``notifications/tools/list_changed`` to every
    sink on the running event loop: an ``asyncio`` task on asyncio, a
    ``trio.lowlevel.spawn_system_task`` on trio (both are legal from sync code running
    in the loop thread).  Called from a worker thread they hop onto the loop through
    the anyio token captured by :meth:`attach`; called with no loop anywhere they set
    a pending flag that the next :meth:`handle` (or :meth:`notify_tools_changed`)
    honours.  Several changes before the delivery runs are coalesced into one
    notification.  Sinks are sent to concurrently and a failing sink is logged and
    never affects the others.  Await :meth:`notify_tools_changed` to deliver
    synchronously instead.
    """

    _ROUTES: ClassVar[dict[str, tuple[_Route, bool]]]  # method -> (route, is_notification)

    def __init__(
        self,
        name: str,
        version: str = "1.0.0",
        tools: Iterable[SdkMcpTool[Any]] | None = None,
        *,
        instructions: str | None = None,
        default_timeout: float | None = None,
        max_concurrency: int | None = None,
        page_size: int = 100,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ToolDefinitionError(f"server name must be a non-empty string, got {name!r}")
        if default_timeout is not None and not default_timeout > 0:
            raise ToolDefinitionError("default_timeout must be a positive number of seconds")
        if max_concurrency is not None and not (
            isinstance(max_concurrency, int) and max_concurrency > 0
        ):
            raise ToolDefinitionError("max_concurrency must be a positive integer")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.default_timeout = default_timeout
        self.max_concurrency = max_concurrency
        self.page_size = page_size
        """How many tools one ``tools/list`` page holds."""
        self._tools: dict[str, SdkMcpTool[Any]] = {}
        self._definitions: list[dict[str, Any]] | None = None
        self._sinks: dict[object, Sink] = {}
        self._loop_token: Any = None
        self._notify_scheduled: object = None  # the loop a delivery is scheduled on
        self._pending_notify = False
        self._limiter: anyio.CapacityLimiter | None = None
        self._inflight: dict[tuple[Hashable, Any], anyio.CancelScope] = {}
        self._precancelled: dict[tuple[Hashable, Any], None] = {}
        self._log_levels: dict[Hashable, str] = {}
        for t in tools or ():
            self._insert(t)

    def __repr__(self) -> str:
        return (
            f"SdkMcpServer(name={self.name!r}, version={self.version!r}, tools={list(self._tools)})"
        )

    @property
    def tools(self) -> Mapping[str, SdkMcpTool[Any]]:
        """A read-only, live view of the tools by name."""
        return MappingProxyType(self._tools)

    # ------------------------------------------------------------------ tool set

    def _insert(self, tool: SdkMcpTool[Any]) -> None:
        if not isinstance(tool, SdkMcpTool):
            raise ToolDefinitionError(f"expected an SdkMcpTool (made with @tool), got {tool!r}")
        if tool.name in self._tools:
            raise ToolDefinitionError(f"duplicate tool name {tool.name!r} in server {self.name!r}")
        self._tools[tool.name] = tool
        self._definitions = None

    def add_tool(self, tool: SdkMcpTool[Any]) -> None:
        """Add ``tool`` and announce ``tools/list_changed`` to attached sinks (see class doc).

        Raises :class:`~ccwire.ToolDefinitionError` if the name is already taken.
        """
        self._insert(tool)
        self._announce()

    def remove_tool(self, name: str) -> SdkMcpTool[Any]:
        """Remove and return the tool called ``name`` (``KeyError`` if there is none) and
        announce ``tools/list_changed``.  Calls already running are not interrupted."""
        tool = self._tools.pop(name)
        self._definitions = None
        self._announce()
        return tool

    # ------------------------------------------------------------------ sinks

    def attach(self, sink: Sink) -> Callable[[], None]:
        """Register an async callable that delivers this server's own notifications to
        one session; returns a function that detaches it again (idempotent)."""
        key = object()
        self._sinks[key] = sink
        with contextlib.suppress(Exception):  # outside an event loop: keep any token we had
            import anyio.lowlevel

            self._loop_token = anyio.lowlevel.current_token()

        def detach() -> None:
            self._sinks.pop(key, None)

        return detach

    async def notify_tools_changed(self) -> None:
        """Send ``notifications/tools/list_changed`` to every attached sink, now."""
        self._pending_notify = False
        sinks = list(self._sinks.values())
        if len(sinks) == 1:
            await _send_safely(sinks[0])
        elif sinks:
            async with anyio.create_task_group() as tg:
                for sink in sinks:
                    tg.start_soon(_send_safely, sink)

    def _announce(self) -> None:
        if not self._sinks:
            return
        found = _spawner()
        if found is not None:
            loop, spawn = found
            if self._notify_scheduled is not loop:  # else: coalesced into the pending one
                self._notify_scheduled = loop
                spawn(self._deliver)
            return
        if self._loop_token is not None:  # a worker or foreign thread: hop onto the loop
            try:
                import anyio.from_thread

                anyio.from_thread.run_sync(self._announce, token=self._loop_token)
                return
            except Exception:
                pass
        self._pending_notify = True

    async def _deliver(self) -> None:
        self._notify_scheduled = None  # changes made from here on schedule a new delivery
        await self.notify_tools_changed()

    # ------------------------------------------------------------------ dispatch

    async def handle(
        self,
        message: Mapping[str, Any],
        *,
        session_id: str | None = None,
        send: Sink | None = None,
        session_key: Hashable | None = None,
        cancel_scope: anyio.CancelScope | None = None,
    ) -> dict[str, Any] | None:
        """Serve one JSON-RPC message from the CLI and return the response to write back.

        Returns ``None`` for notifications, for JSON-RPC responses (the CLI answering a
        request of ours), and for a ``tools/call`` cancelled by ``notifications/cancelled``
        (its late result must not be sent).  ``send`` delivers this session's
        notifications (progress and log messages of the call) to the CLI.  Calls with the
        same JSON-RPC id are kept apart by ``session_key`` (default: ``send`` itself, else
        ``session_id``).  Never raises for bad input: malformed messages get JSON-RPC errors.

        ``cancel_scope`` is optional: a scope that already encloses only this call (the
        control layer's per-request scope).  ``notifications/cancelled`` then cancels that
        scope, so the cancellation propagates out of ``handle`` to its owner instead of
        ``None`` being returned, and the call costs no cancel scope of its own (unless it
        has a timeout).
        """
        if self._pending_notify:
            self._announce()
        if type(message) is not dict and not isinstance(message, Mapping):
            return _error(
                None, _INVALID_REQUEST, "Invalid Request: a message must be a JSON object"
            )
        method = message.get("method")
        has_id = "id" in message
        req_id = message.get("id")
        if has_id and type(req_id) is not int and not _valid_id(req_id):
            if method is None and ("result" in message or "error" in message):
                return None
            return _error(None, _INVALID_REQUEST, "Invalid Request: id must be a string or number")
        if not isinstance(method, str):
            if method is None and has_id and ("result" in message or "error" in message):
                return None  # a response to a server->client request: nothing to answer
            if method is None and not has_id:
                return _error(None, _INVALID_REQUEST, "Invalid Request: no method and no id")
            return _error(req_id, _INVALID_REQUEST, "Invalid Request: method must be a string")
        params = message.get("params")
        if params is None:
            params = _NO_PARAMS
        elif type(params) is not dict and not isinstance(params, Mapping):
            return (
                _error(req_id, _INVALID_PARAMS, "Invalid params: params must be an object")
                if has_id
                else None
            )
        route = self._ROUTES.get(method)
        if route is None:
            return (
                _error(req_id, _METHOD_NOT_FOUND, f"Method not found: {method}") if has_id else None
            )
        fn, is_notification = route
        if not has_id and not is_notification:
            return None  # a request sent as a notification: nobody waits for an answer
        key = session_key if session_key is not None else send if send is not None else session_id
        try:
            hash(key)
        except TypeError:
            key = id(key)
        try:
            response = await fn(self, req_id, params, key, session_id, send, cancel_scope)
        except Exception as exc:  # a bug here must not take the connection down
            logger.exception("ccwire: MCP server %r failed on %s", self.name, method)
            return (
                _error(req_id, _INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
                if has_id
                else None
            )
        if is_notification:
            return _result(req_id, {}) if has_id else None
        return response

    # ------------------------------------------------------------------ routes

    async def _initialize(
        self, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
    ) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        for pending in [k for k in self._precancelled if k[0] == key]:  # ids restart at 0
            del self._precancelled[pending]
        result: dict[str, Any] = {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else _DEFAULT_VERSION,
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": self.name, "version": self.version},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return _result(req_id, result)

    async def _ping(self, req_id: Any, *_: Any) -> dict[str, Any]:
        return _result(req_id, {})

    async def _noop(self, *_: Any) -> None:
        return None

    async def _set_level(
        self, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
    ) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            return _error(req_id, _INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
        self._log_levels[key] = level
        return _result(req_id, {})

    async def _tools_list(self, req_id: Any, params: Mapping[str, Any], *_: Any) -> dict[str, Any]:
        definitions = self._definitions
        if definitions is None:
            definitions = self._definitions = [t.definition for t in self._tools.values()]
        cursor = params.get("cursor")
        start = 0 if cursor is None else _decode_cursor(cursor)
        if start is None:
            return _error(req_id, _INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}")
        end = start + max(1, self.page_size)
        result: dict[str, Any] = {"tools": definitions[start:end]}
        if end < len(definitions):
            result["nextCursor"] = _encode_cursor(end)
        return _result(req_id, result)

    async def _tools_call(
        self,
        req_id: Any,
        params: Mapping[str, Any],
        key: Hashable,
        session_id: str | None,
        send: Sink | None,
        outer: anyio.CancelScope | None,
    ) -> dict[str, Any] | None:
        name = params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return _error(req_id, _INVALID_PARAMS, f"Unknown tool: {name}")
        call_key = (key, req_id)
        if self._precancelled and self._precancelled.pop(call_key, 0) is None:
            return None  # its notifications/cancelled overtook it
        ctx = (
            self._context(tool, req_id, params, key, session_id, send)
            if tool.wants_context
            else None
        )
        timeout = tool.timeout if tool.timeout is not None else self.default_timeout
        own = outer is None or timeout is not None
        scope = (
            outer
            if not own
            else anyio.CancelScope(
                deadline=_INF if timeout is None else anyio.current_time() + timeout
            )
        )
        assert scope is not None
        inflight = self._inflight
        registered = call_key not in inflight  # a duplicate id keeps the first registration
        if registered:
            inflight[call_key] = scope
        arguments = params.get("arguments")
        result: dict[str, Any] | None = None
        try:
            if not own:  # the caller's scope encloses us: its cancellation propagates
                result = (
                    await tool.call(arguments, ctx)
                    if self.max_concurrency is None
                    else await self._limited(tool, arguments, ctx)
                )
            else:
                with scope:
                    result = (
                        await tool.call(arguments, ctx)
                        if self.max_concurrency is None
                        else await self._limited(tool, arguments, ctx)
                    )
        finally:
            cancelled = registered and inflight.pop(call_key, None) is not scope
        if cancelled:
            return None
        if result is None:
            result = error_result(f"Tool {tool.name!r} timed out after {timeout:g} s")
        return _result(req_id, result)

    async def _limited(
        self, tool: SdkMcpTool[Any], arguments: Any, ctx: ToolContext | None
    ) -> dict[str, Any]:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.max_concurrency or 1)
        async with self._limiter:
            return await tool.call(arguments, ctx)

    def _context(
        self,
        tool: SdkMcpTool[Any],
        req_id: Any,
        params: Mapping[str, Any],
        key: Hashable,
        session_id: str | None,
        send: Sink | None,
    ) -> ToolContext:
        meta = params.get("_meta")
        meta = meta if isinstance(meta, Mapping) else {}
        tool_use_id = meta.get("claudecode/toolUseId")
        token = meta.get("progressToken")
        return ToolContext(
            tool_name=tool.name, server_name=self.name, request_id=req_id,
            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            session_id=session_id, progress_token=token if _valid_id(token) else None,
            meta=meta, send=send, log_level=self._log_levels.get(key, "debug"),
        )  # fmt: skip

    async def _cancelled(
        self, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
    ) -> None:
        target = params.get("requestId")
        if not _valid_id(target):
            return
        scope = self._inflight.pop((key, target), None)
        if scope is not None:
            scope.cancel()
            return
        self._precancelled[(key, target)] = None  # it may not have started yet
        while len(self._precancelled) > _PRECANCEL_LIMIT:
            del self._precancelled[next(iter(self._precancelled))]


SdkMcpServer._ROUTES = {
    "initialize": (SdkMcpServer._initialize, False),
    "ping": (SdkMcpServer._ping, False),
    "tools/list": (SdkMcpServer._tools_list, False),
    "tools/call": (SdkMcpServer._tools_call, False),
    "logging/setLevel": (SdkMcpServer._set_level, False),
    "notifications/initialized": (SdkMcpServer._noop, True),
    "notifications/cancelled": (SdkMcpServer._cancelled, True),
}


def _encode_cursor(offset: int) -> str:
    return f"{_CURSOR_PREFIX}{offset}"


def _decode_cursor(cursor: Any) -> int | None:
    if not isinstance(cursor, str) or not cursor.startswith(_CURSOR_PREFIX):
        return None
    digits = cursor[len(_CURSOR_PREFIX) :]
    return int(digits) if digits.isascii() and digits.isdigit() else None


async def _send_safely(sink: Sink) -> None:
    try:
        await sink({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    except Exception as exc:
        logger.warning("ccwire: could not deliver tools/list_changed: %s", exc)


def _spawner() -> tuple[object, Callable[[Callable[[], Awaitable[None]]], None]] | None:
    """``(loop identity, spawn)`` for the event loop running in *this* thread, if any."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is not None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:

            def spawn(fn: Callable[[], Awaitable[None]]) -> None:
                task = loop.create_task(fn())
                _BACKGROUND.add(task)
                task.add_done_callback(_BACKGROUND.discard)

            return loop, spawn
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            token = trio.lowlevel.current_trio_token()
        except RuntimeError:
            return None
        return token, trio.lowlevel.spawn_system_task
    return None


def create_sdk_mcp_server(
    name: str,
    version: str = "1.0.0",
    tools: Sequence[SdkMcpTool[Any]] | None = None,
    *,
    instructions: str | None = None,
    default_timeout: float | None = None,
    max_concurrency: int | None = None,
) -> McpSdkServerConfig:
    """Make an in-process MCP server config for ``ClaudeAgentOptions.mcp_servers``.

    Returns ``{"type": "sdk", "name": name, "instance": SdkMcpServer(...)}``.  Duplicate
    tool names raise :class:`~ccwire.ToolDefinitionError`.  ``default_timeout`` (seconds)
    applies to tools without their own ``timeout``; ``max_concurrency`` caps how many
    calls run at once; ``instructions`` is sent to the client at ``initialize``.
    """
    server = SdkMcpServer(
        name, version, tools, instructions=instructions,
        default_timeout=default_timeout, max_concurrency=max_concurrency,
    )  # fmt: skip
    return {"type": "sdk", "name": name, "instance": server}
