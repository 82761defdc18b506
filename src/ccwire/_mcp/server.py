"""The in-process MCP server: JSON-RPC dispatch for the messages the CLI sends.

The control layer hands every ``mcp_message`` to `SdkMcpServer.handle()` (from a
task of its own, so calls overlap) and writes back whatever it returns; ``None`` means
"write no JSON-RPC response".  Dispatch goes through the ``_ROUTES`` table; tools are
served here, resources and prompts by `ResourceSet` and
`PromptSet`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final

import anyio

from .._core.errors import McpError, ToolDefinitionError
from .._wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    check_request,
    error as _error,
    page,
    result as _result,
    valid_id,
)
from .broadcast import Broadcaster, Sink
from .calls import CallRunner
from .meta import ALWAYS_LOAD, ends_turn
from .outbound import Requester
from .prompts import PromptSet, SdkMcpPrompt
from .resources import ResourceSet, SdkMcpResource
from .routes import (
    discover_route,
    key_of,
    log_level,
    noop_route,
    ping_route,
    prompts_get_route,
    prompts_list_route,
    remember,
    resources_list_route,
    resources_read_route,
    set_level_route,
    templates_list_route,
)
from .subscriptions import Subscriptions, complete_route, subscribe_route, unsubscribe_route
from .tools import SdkMcpTool, ToolContext, decorate_hint
from .versions import (
    CLIENT_CAPABILITIES_META,
    PROTOCOL_VERSIONS,
    modern_result,
    negotiate,
    request_version,
    unsupported,
)

__all__ = ["PROTOCOL_VERSIONS", "SdkMcpServer"]

logger = logging.getLogger("ccwire")

_NO_PARAMS: Final[Mapping[str, Any]] = MappingProxyType({})
_SETTLE_SECONDS: Final = 5.0
TOOLS_CHANGED: Final = "notifications/tools/list_changed"
RESOURCES_CHANGED: Final = "notifications/resources/list_changed"
PROMPTS_CHANGED: Final = "notifications/prompts/list_changed"

_Route = Callable[..., Awaitable["dict[str, Any] | None"]]


class SdkMcpServer:
    """An MCP server whose tools, resources and prompts run in this process.

    It is the ``instance`` of an SDK server config.  ``tools``, ``resources`` and
    ``prompts`` are read-only live views; change them with `add_tool()` /
    `remove_tool()`, `add_resource()` / `remove_resource()` and
    `add_prompt()` / `remove_prompt()`.  One server may serve several sessions
    at once: their in-flight calls are told apart by ``(session key, JSON-RPC id)``.

    **How changes reach the CLI.**  `attach()` registers an async *sink* (one per
    session).  Each change schedules one background delivery of
    ``notifications/tools/list_changed`` (or the resources/prompts one) to every sink
    on the running event loop, also when made from a worker thread (a sync tool
    handler) or with no loop at all (delivered on the next message); changes made
    before the delivery runs are coalesced, and a failing sink never affects the
    others (see `broadcast`).  Await `notify_tools_changed()` to
    deliver at once instead.  The Claude Code CLI (2.1.330) re-lists the tools when
    told and offers the new ones to the model within the same turn.  A CLI without the
    ``sdk_mcp_tools_list_changed`` capability (one older than 2.1.205, like 2.1.197)
    acknowledges the notification but never re-lists, so the model never sees the
    change: for such a session `notify_tools_changed()` raises
    `UnsupportedFeatureError`, and a background announcement logs a
    warning on the ``ccwire`` logger (once per session).

    **A call that changes the tools** is answered only once the change is known to
    the session: after the CLI acknowledged ``tools/list_changed`` and, if the session
    listed the tools before, after it re-listed them (at most ``relist_timeout``
    seconds; a session that does not re-list in time, like CLI 2.1.197, is not waited
    for again).  Otherwise the model's next request could be made before the CLI knew
    the new tools.
    """

    relist_timeout: float = 1.0
    """How long the answer to a tool-changing call waits for the session to re-list."""

    _ROUTES: ClassVar[dict[str, tuple[_Route, bool]]]  # method -> (route, is_notification)

    def __init__(
        self,
        name: str,
        version: str = "1.0.0",
        tools: Iterable[SdkMcpTool[Any]] | None = None,
        *,
        resources: Iterable[SdkMcpResource] | None = None,
        prompts: Iterable[SdkMcpPrompt] | None = None,
        instructions: str | None = None,
        default_timeout: float | None = None,
        max_concurrency: int | None = None,
        page_size: int = 100,
        always_load: bool = False,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ToolDefinitionError(f"server name must be a non-empty string, got {name!r}")
        if default_timeout is not None and not default_timeout > 0:
            raise ToolDefinitionError("default_timeout must be a positive number of seconds")
        if max_concurrency is not None and not (
            isinstance(max_concurrency, int) and max_concurrency > 0
        ):
            raise ToolDefinitionError("max_concurrency must be a positive integer")
        if isinstance(page_size, bool) or not (isinstance(page_size, int) and page_size > 0):
            raise ToolDefinitionError(f"page_size must be a positive integer, got {page_size!r}")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.default_timeout = default_timeout
        self.max_concurrency = max_concurrency
        self.page_size = page_size
        """How many entries one ``tools/list`` (``resources/list``, ...) page holds."""
        self.always_load = always_load
        """Whether every tool is listed with ``_meta["anthropic/alwaysLoad"]`` (never
        deferred behind tool search; a tool's own ``_meta`` value wins)."""
        self._tools: dict[str, SdkMcpTool[Any]] = {}
        self._resources = ResourceSet(name, resources or ())
        self._prompts = PromptSet(name, prompts or ())
        self._broadcast = Broadcaster(f"MCP server {name!r}")
        self._calls = CallRunner()
        self._subscriptions = Subscriptions()
        self._log_levels: dict[Hashable, str] = {}
        self._client_caps: dict[Hashable, Mapping[str, Any]] = {}
        self._tools_version = 0  # counts changes of the tool set
        self._listed: dict[Hashable, int] = {}  # session -> version it last listed
        self._relist_waiters: dict[Hashable, list[anyio.Event]] = {}
        self._no_relist: dict[Hashable, None] = {}  # sessions that did not re-list in time
        for t in tools or ():
            self._insert(t)

    def __repr__(self) -> str:
        return (
            f"SdkMcpServer(name={self.name!r}, version={self.version!r}, tools={list(self._tools)})"
        )

    if not TYPE_CHECKING:  # to a type checker the server has its own names only

        def __getattr__(self, name: str) -> Any:
            # Called for names the server lacks. In claude-agent-sdk the config's
            # ``instance`` is an ``mcp.server.Server``, and code written for it serves
            # that object itself (run(), create_initialization_options(), an HTTP
            # session manager...): those names are the official Server's built for
            # this server (`official_server`), whose tool requests come back to handle().
            state = self.__dict__
            if name.startswith("__") or "name" not in state:
                raise AttributeError(name)
            official = state.get("_official")
            if official is None:
                from .official import official_server

                try:
                    official = state["_official"] = official_server(self)
                except ImportError as exc:
                    raise AttributeError(
                        f"'SdkMcpServer' object has no attribute {name!r} ({exc})"
                    ) from None
            try:
                return getattr(official, name)
            except AttributeError:
                raise AttributeError(f"'SdkMcpServer' object has no attribute {name!r}") from None

    @property
    def tools(self) -> Mapping[str, SdkMcpTool[Any]]:
        """A read-only, live view of the tools by name."""
        return MappingProxyType(self._tools)

    @property
    def resources(self) -> Mapping[str, SdkMcpResource]:
        """A read-only, live view of the resources and templates by URI (or template)."""
        return self._resources.view

    @property
    def prompts(self) -> Mapping[str, SdkMcpPrompt]:
        """A read-only, live view of the prompts by name."""
        return self._prompts.view

    # ------------------------------------------------------------------ what is served

    def _insert(self, tool: SdkMcpTool[Any]) -> None:
        if not isinstance(tool, SdkMcpTool):
            name = getattr(tool, "__name__", None)
            fix = (
                f": decorate it, {decorate_hint(name)}"
                if callable(tool) and isinstance(name, str)
                else ""
            )
            raise ToolDefinitionError(
                f"expected an SdkMcpTool (made with @tool), got {tool!r}{fix}"
            )
        if tool.name in self._tools:
            raise ToolDefinitionError(f"duplicate tool name {tool.name!r} in server {self.name!r}")
        self._tools[tool.name] = tool
        self._tools_version += 1

    def add_tool(self, tool: SdkMcpTool[Any]) -> None:
        """Add ``tool`` and announce ``tools/list_changed`` to attached sinks (see class doc).

        Raises `ToolDefinitionError` if the name is already taken.
        """
        self._insert(tool)
        self._broadcast.announce(TOOLS_CHANGED)

    def remove_tool(self, name: str) -> SdkMcpTool[Any]:
        """Remove and return the tool called ``name`` (``KeyError`` if there is none) and
        announce ``tools/list_changed``.  Calls already running are not interrupted."""
        tool = self._tools.pop(name)
        self._tools_version += 1
        self._broadcast.announce(TOOLS_CHANGED)
        return tool

    def add_resource(self, resource: SdkMcpResource) -> None:
        """Add a resource (or template) made with `resource()` and announce
        ``resources/list_changed``; a URI already taken raises ToolDefinitionError."""
        self._resources.add(resource)
        self._broadcast.announce(RESOURCES_CHANGED)

    def remove_resource(self, uri: str) -> SdkMcpResource:
        """Remove and return the resource with this URI or template (``KeyError`` if none)."""
        found = self._resources.remove(uri)
        self._broadcast.announce(RESOURCES_CHANGED)
        return found

    def add_prompt(self, prompt: SdkMcpPrompt) -> None:
        """Add a prompt made with `prompt()` and announce
        ``prompts/list_changed``; a name already taken raises ToolDefinitionError."""
        self._prompts.add(prompt)
        self._broadcast.announce(PROMPTS_CHANGED)

    def remove_prompt(self, name: str) -> SdkMcpPrompt:
        """Remove and return the prompt called ``name`` (``KeyError`` if there is none)."""
        found = self._prompts.remove(name)
        self._broadcast.announce(PROMPTS_CHANGED)
        return found

    async def notify_resource_updated(self, uri: str, *, title: str | None = None) -> int:
        """Tell every client subscribed to ``uri`` (``resources/subscribe``) that the
        resource changed (``notifications/resources/updated``); they read it again.

        Returns how many sessions were told.  From a plain ``def`` handler, run it with
        ``anyio.from_thread.run(server.notify_resource_updated, uri)``.
        """
        return await self._subscriptions.notify(uri, title)

    # ------------------------------------------------------------------ sinks

    def attach(self, sink: Sink) -> Callable[[], None]:
        """Register an async callable that delivers this server's own notifications to
        one session; returns a function that detaches it again (idempotent)."""
        return self._broadcast.attach(sink)

    def _forget_session(self, key: Hashable) -> None:
        """Drop what is kept for session ``key``, whose connection ended (``ccwire
        serve``): its subscriptions, log level, capabilities and listings."""
        self._subscriptions.forget(key)
        for table in (self._log_levels, self._client_caps, self._listed, self._no_relist):
            table.pop(key, None)
        self._calls.forget_session(key)

    async def notify_tools_changed(self) -> None:
        """Send ``notifications/tools/list_changed`` to every attached sink, now.

        Raises `UnsupportedFeatureError` (after the other sessions were
        told) when an attached session's CLI cannot re-list the tools (it lacks the
        ``sdk_mcp_tools_list_changed`` capability), so the model there would never see
        the change.
        """
        self._broadcast.pending = False
        await self._broadcast.send_now(TOOLS_CHANGED, strict=True)

    # ------------------------------------------------------------------ dispatch

    async def handle(
        self,
        message: Mapping[str, Any],
        *,
        session_id: str | None = None,
        send: Sink | None = None,
        session_key: Hashable | None = None,
        cancel_scope: anyio.CancelScope | None = None,
        request: Requester | None = None,
    ) -> dict[str, Any] | None:
        """Serve one JSON-RPC message from the CLI and return the response to write back.

        Returns ``None`` for notifications, for JSON-RPC responses (the CLI answering a
        request of ours), and for a ``tools/call``, ``resources/read`` or ``prompts/get``
        cancelled by ``notifications/cancelled`` (its late result must not be sent).
        ``send`` delivers this session's notifications (progress and log messages of
        the call) to the CLI.  Calls with the same JSON-RPC id are kept apart by
        ``session_key`` (default: ``send`` itself, else ``session_id``).  Never raises for
        bad input: malformed messages get JSON-RPC errors.

        ``cancel_scope`` is optional: a scope that already encloses only this call (the
        control layer's per-request scope).  ``notifications/cancelled`` then cancels that
        scope, so the cancellation propagates out of ``handle`` to its owner instead of
        ``None`` being returned, and the call costs no cancel scope of its own (unless it
        has a timeout).

        ``request`` sends a request to the client (`ToolContext.elicit()`,
        `ToolContext.sample()`); without it a tool cannot ask the client anything.
        """
        if self._broadcast.pending:
            self._broadcast.flush()
        if (refused := check_request(message)) is not None:
            return refused
        if "method" not in message:
            return None  # a response to a server->client request: nothing to answer
        method = message["method"]
        has_id = "id" in message
        req_id = message.get("id")
        params = message.get("params")
        if params is None:
            params = _NO_PARAMS
        route = self._ROUTES.get(method)
        if route is None:
            return (
                _error(req_id, METHOD_NOT_FOUND, f"Method not found: {method}") if has_id else None
            )
        fn, is_notification = route
        if not has_id and not is_notification:
            return None  # a request sent as a notification: nobody waits for an answer
        version = request_version(params)
        if (refused := unsupported(req_id, version)) is not None:
            return refused
        key = key_of(session_key, send, session_id)
        try:
            response = await fn(self, req_id, params, key, session_id, send, cancel_scope, request)
        except McpError as exc:
            return _error(req_id, exc.code, exc.message, exc.data) if has_id else None
        except Exception as exc:  # a bug here must not take the connection down
            logger.exception("ccwire: MCP server %r failed on %s", self.name, method)
            if not has_id:
                return None
            return _error(req_id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
        if is_notification:
            return _result(req_id, {}) if has_id else None
        return modern_result(method, version, response, self._info)

    def _info(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    def _capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"tools": {"listChanged": True}, "logging": {}}
        if self._resources:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if self._prompts:
            capabilities["prompts"] = {"listChanged": True}
        if self._prompts.completes or self._resources.completes:
            capabilities["completions"] = {}
        return capabilities

    # ------------------------------------------------------------------ routes

    async def _initialize(
        self, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
    ) -> dict[str, Any]:
        self._calls.forget_session(key)  # JSON-RPC ids restart at 0
        capabilities = params.get("capabilities")
        remember(self._client_caps, key, capabilities if isinstance(capabilities, Mapping) else {})
        result: dict[str, Any] = {
            "protocolVersion": negotiate(params.get("protocolVersion")),
            "capabilities": self._capabilities(),
            "serverInfo": self._info(),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return _result(req_id, result)

    async def _tools_list(
        self, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
    ) -> dict[str, Any]:
        definitions = [  # a tool's fields may change
            _always_loaded(t.definition) if self.always_load else t.definition
            for t in self._tools.values()
        ]
        listed = page(definitions, params.get("cursor"), self.page_size, "tools", "tools")
        remember(self._listed, key, self._tools_version)
        for waiter in self._relist_waiters.pop(key, ()):
            waiter.set()
        return _result(req_id, listed)

    async def _await_relist(self, key: Hashable) -> None:
        """Wait (bounded) until session ``key`` has listed the current tool set."""
        target = self._tools_version
        with anyio.move_on_after(self.relist_timeout) as scope:
            while self._listed.get(key, -1) < target:
                waiter = anyio.Event()
                waiters = self._relist_waiters.setdefault(key, [])
                waiters.append(waiter)
                try:
                    await waiter.wait()
                finally:
                    if waiter in waiters:
                        waiters.remove(waiter)
                    if not waiters and self._relist_waiters.get(key) is waiters:
                        del self._relist_waiters[key]
        if scope.cancelled_caught:
            remember(self._no_relist, key, None)

    async def _tools_call(
        self,
        req_id: Any,
        params: Mapping[str, Any],
        key: Hashable,
        session_id: str | None,
        send: Sink | None,
        outer: anyio.CancelScope | None,
        request: Requester | None,
    ) -> dict[str, Any] | None:
        name = params.get("name")
        if not isinstance(name, str):
            return _error(req_id, INVALID_PARAMS, "Invalid params: name must be a string")
        tool = self._tools.get(name)
        if tool is None:
            return _error(req_id, INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            return _error(req_id, INVALID_PARAMS, "Invalid params: arguments must be an object")
        ctx = (
            self._context(tool, req_id, params, key, session_id, send, request)
            if tool.wants_context
            else None
        )
        timeout = tool.timeout if tool.timeout is not None else self.default_timeout
        version = self._tools_version
        result = await self._calls.run(
            tool, arguments, ctx, (key, req_id), outer, timeout, self.max_concurrency
        )
        if result is None:
            return None
        if self._broadcast.busy or self._tools_version != version:
            await self._announce(key, version)
        return _result(req_id, ends_turn(tool.meta, result))

    async def _announce(self, key: Hashable, version: int) -> None:
        """After a call that changed the server: tell the CLI, and wait (bounded) until
        this session has re-listed the tools, so that it can offer the new ones now."""
        if self._broadcast.busy:
            await self._broadcast.settle(_SETTLE_SECONDS)
        if (
            self._tools_version != version
            and key is not None
            and key in self._listed  # a session that lists tools re-lists them when told
            and key not in self._no_relist
            and self._broadcast.sinks
        ):
            await self._await_relist(key)

    def _context(
        self,
        tool: SdkMcpTool[Any],
        req_id: Any,
        params: Mapping[str, Any],
        key: Hashable,
        session_id: str | None,
        send: Sink | None,
        request: Requester | None,
    ) -> ToolContext:
        meta = params.get("_meta")
        meta = meta if isinstance(meta, Mapping) else {}
        capabilities = meta.get(CLIENT_CAPABILITIES_META, self._client_caps.get(key))
        tool_use_id = meta.get("claudecode/toolUseId")
        token = meta.get("progressToken")
        return ToolContext(
            tool_name=tool.name, server_name=self.name, request_id=req_id,
            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            session_id=session_id, progress_token=token if valid_id(token) else None,
            meta=meta, send=send, log_level=log_level(meta, self._log_levels.get(key, "debug")),
            request=request, client_capabilities=capabilities,
        )  # fmt: skip

    async def _cancelled(
        self, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
    ) -> None:
        target = params.get("requestId")
        if valid_id(target):
            self._calls.cancel((key, target))


SdkMcpServer._ROUTES = {
    "initialize": (SdkMcpServer._initialize, False),
    "server/discover": (discover_route, False),
    "ping": (ping_route, False),
    "tools/list": (SdkMcpServer._tools_list, False),
    "tools/call": (SdkMcpServer._tools_call, False),
    "resources/list": (resources_list_route, False),
    "resources/templates/list": (templates_list_route, False),
    "resources/read": (resources_read_route, False),
    "prompts/list": (prompts_list_route, False),
    "prompts/get": (prompts_get_route, False),
    "logging/setLevel": (set_level_route, False),
    "resources/subscribe": (subscribe_route, False),
    "resources/unsubscribe": (unsubscribe_route, False),
    "completion/complete": (complete_route, False),
    "notifications/initialized": (noop_route, True),
    "notifications/cancelled": (SdkMcpServer._cancelled, True),
}


def _always_loaded(definition: dict[str, Any]) -> dict[str, Any]:
    """A tool definition with ``_meta["anthropic/alwaysLoad"]`` (its own value wins)."""
    own = definition.get("_meta")
    return {**definition, "_meta": {ALWAYS_LOAD: True, **(own if isinstance(own, Mapping) else {})}}
