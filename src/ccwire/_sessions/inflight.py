"""What a session has in flight: tool calls and permission requests, plus per-tool totals.

Pure bookkeeping for `SessionMachine` (no I/O, clocks
injected). In-process (SDK) tool calls are tracked from the control requests that
carry them: a ``tools/call`` starting, and its answer being written. Every other tool
(built-in, external MCP) is tracked from the model's ``tool_use`` block to the
``tool_result`` block the CLI reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from .._protocol.control import ControlEvent
from .events import PermissionRequested, ToolCallFinished, ToolCallStarted
from .state import PendingPermission, PendingToolCall, ToolStats

__all__ = ["InFlight", "split_tool_name"]

_TOOLS_CALL = "tools/call"


def split_tool_name(name: str) -> tuple[str | None, str]:
    """``mcp__calc__add`` -> ``("calc", "add")``; a built-in ``Bash`` -> ``(None, "Bash")``."""
    if name.startswith("mcp__"):
        server, sep, tool = name[5:].partition("__")
        if sep and server and tool:
            return server, tool
    return None, name


def _tools_call(event: ControlEvent) -> Mapping[str, Any] | None:
    message = event.request.get("message")
    if isinstance(message, Mapping) and message.get("method") == _TOOLS_CALL:
        params = message.get("params")
        return params if isinstance(params, Mapping) else {}
    return None


def _outcome(event: ControlEvent) -> tuple[bool, Any]:
    """``(is_error, result)`` of a finished ``tools/call``."""
    if event.outcome != "ok":
        return True, event.detail or event.outcome
    reply = (event.response or {}).get("mcp_response")
    if not isinstance(reply, Mapping):
        return False, None
    if "error" in reply:
        return True, reply.get("error")
    result = reply.get("result")
    return isinstance(result, Mapping) and bool(result.get("isError")), result


@dataclass
class _Call:
    pending: PendingToolCall
    started: float  # monotonic


class InFlight:
    """Tool calls and permission requests in flight, and the totals of finished calls."""

    def __init__(
        self,
        *,
        sdk_servers: frozenset[str],
        clock: Callable[[], datetime],
        monotonic: Callable[[], float],
        tools: Mapping[str, ToolStats],
        finished: int,
    ) -> None:
        self._sdk_servers = sdk_servers
        self._clock = clock
        self._monotonic = monotonic
        self._calls: dict[str, _Call] = {}
        self._sdk_requests: dict[str, str] = {}  # control request id -> tool_use_id
        self._permissions: dict[str, PendingPermission] = {}
        self.tool_stats: dict[str, ToolStats] = dict(tools)
        """Per tool name: finished calls, errors, summed durations."""
        self.finished = finished
        """How many tool calls finished (including earlier processes of a resumed session)."""

    @property
    def calls(self) -> tuple[PendingToolCall, ...]:
        """Tool calls in flight, oldest first."""
        return tuple(c.pending for c in self._calls.values())

    @property
    def permissions(self) -> tuple[PendingPermission, ...]:
        """Permission requests in flight, oldest first."""
        return tuple(self._permissions.values())

    @property
    def ids(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The tool_use_ids of the calls and the request ids of the permissions in flight."""
        return tuple(self._calls), tuple(self._permissions)

    @property
    def has_calls(self) -> bool:
        """True while a tool call is in flight."""
        return bool(self._calls)

    @property
    def has_permissions(self) -> bool:
        """True while a permission request is in flight."""
        return bool(self._permissions)

    # ---------------------------------------------------------------- tool calls

    def tracks_block(self, tool_use_id: str, name: str) -> bool:
        """True if a ``tool_use`` block starts a call (not an SDK tool, not known yet)."""
        server, _ = split_tool_name(name)
        in_process = server is not None and server in self._sdk_servers
        return not in_process and tool_use_id not in self._calls

    def is_sdk_start(self, event: ControlEvent) -> bool:
        """True if ``event`` is a ``tools/call`` to an in-process server, starting."""
        return event.outcome is None and _tools_call(event) is not None

    def start(
        self,
        tool_use_id: str,
        name: str,
        arguments: Mapping[str, Any],
        request_id: str | None = None,
    ) -> ToolCallStarted:
        """A call began."""
        server, _ = split_tool_name(name)
        pending = PendingToolCall(
            tool_use_id=tool_use_id,
            tool_name=name,
            server_name=server,
            arguments=MappingProxyType(dict(arguments)),
            started_at=self._clock(),
            request_id=request_id,
        )
        self._calls[tool_use_id] = _Call(pending, self._monotonic())
        return ToolCallStarted(tool_use_id, name, server, pending.arguments, pending.started_at)

    def start_sdk(self, event: ControlEvent) -> ToolCallStarted:
        """An in-process ``tools/call`` arrived (check `is_sdk_start()` first)."""
        params = _tools_call(event) or {}
        meta = params.get("_meta")
        tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, Mapping) else None
        if not isinstance(tool_use_id, str):
            tool_use_id = f"request:{event.request_id}"
        server = str(event.request.get("server_name", ""))
        arguments = params.get("arguments")
        self._sdk_requests[event.request_id] = tool_use_id
        return self.start(
            tool_use_id,
            f"mcp__{server}__{params.get('name', '')}",
            arguments if isinstance(arguments, Mapping) else {},
            event.request_id,
        )

    def finish_sdk(self, event: ControlEvent) -> ToolCallFinished | None:
        """The answer to an in-process ``tools/call`` was written (or it was withdrawn)."""
        tool_use_id = self._sdk_requests.pop(event.request_id, None)
        if tool_use_id is None or _tools_call(event) is None:
            return None
        is_error, result = _outcome(event)
        return self.finish(tool_use_id, is_error=is_error, result=result)

    def finish(self, tool_use_id: str, *, is_error: bool, result: Any) -> ToolCallFinished | None:
        """A call ended (``None`` if it was not in flight)."""
        call = self._calls.pop(tool_use_id, None)
        if call is None:
            return None
        p = call.pending
        duration = max(0.0, self._monotonic() - call.started)
        old = self.tool_stats.get(p.tool_name, ToolStats())
        self.tool_stats[p.tool_name] = ToolStats(
            old.call_count + 1, old.error_count + int(is_error), old.total_duration_s + duration
        )
        self.finished += 1
        return ToolCallFinished(
            tool_use_id=p.tool_use_id,
            tool_name=p.tool_name,
            server_name=p.server_name,
            arguments=p.arguments,
            started_at=p.started_at,
            finished_at=self._clock(),
            duration_s=duration,
            is_error=is_error,
            result=result,
        )

    # --------------------------------------------------------------- permissions

    def ask(self, event: ControlEvent) -> PermissionRequested:
        """A ``can_use_tool`` request arrived."""
        req = event.request
        tool_input = req.get("input")
        tool_input = tool_input if isinstance(tool_input, Mapping) else {}
        tool_use_id = req.get("tool_use_id")
        pending = PendingPermission(
            request_id=event.request_id,
            tool_name=str(req.get("tool_name", "")),
            tool_input=MappingProxyType(
                dict(tool_input if isinstance(tool_input, Mapping) else {})
            ),
            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            requested_at=self._clock(),
        )
        self._permissions[event.request_id] = pending
        return PermissionRequested(
            pending.request_id, pending.tool_name, pending.tool_input, pending.tool_use_id
        )

    def answered(self, request_id: str) -> bool:
        """The decision was written (or the request withdrawn); False if unknown."""
        return self._permissions.pop(request_id, None) is not None

    # ------------------------------------------------------------------- the end

    def abandon(self, why: str) -> list[ToolCallFinished]:
        """Everything in flight ends now: calls as errors, permission requests dropped."""
        finished = [self.finish(t, is_error=True, result=why) for t in list(self._calls)]
        self._sdk_requests.clear()
        self._permissions.clear()
        return [f for f in finished if f is not None]
