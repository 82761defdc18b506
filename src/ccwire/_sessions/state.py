"""Session states, the one transition table, and the immutable state snapshot.

A session is in one of nine states; `TRANSITIONS` lists every allowed move,
including the edges that concurrency and follow-up turns need:

* ``waiting_tool_call`` <-> ``waiting_permission``: read-only tools run concurrently,
  so a permission request can arrive while another tool call is in flight;
* ``paused`` -> any active state, or ``completed``/``failed``: on ``resume()`` the
  session goes wherever the work in flight says (a turn may have ended meanwhile);
* ``completed`` -> ``running``: a follow-up turn (``Session.send``) or a turn the CLI
  started by itself;
* ``failed`` and ``cancelled`` are terminal.

Everything here is plain data: no I/O, no clocks. `SessionStateInfo` converts
to and from a JSON-friendly dict for the session stores.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "ACTIVE_STATES",
    "FINAL_STATES",
    "TRANSITIONS",
    "PendingPermission",
    "PendingToolCall",
    "SessionOwner",
    "SessionState",
    "SessionStateInfo",
    "SessionStats",
    "ToolStats",
    "can_transition",
]


class SessionState(str, enum.Enum):
    """Where a session is. Compares equal to its string value."""

    IDLE = "idle"
    """Not started."""
    STARTING = "starting"
    """The CLI process is being spawned and initialized."""
    RUNNING = "running"
    """Normal execution: the model is working."""
    WAITING_TOOL_CALL = "waiting_tool_call"
    """At least one tool call is in flight (its result has not reached the CLI)."""
    WAITING_PERMISSION = "waiting_permission"
    """At least one permission callback is in flight (its decision has not reached the CLI)."""
    PAUSED = "paused"
    """User-initiated pause: answers and input are held back until ``resume()``."""
    COMPLETED = "completed"
    """The last turn finished successfully (``send()`` may start another)."""
    FAILED = "failed"
    """Finished with an error (error result, CLI crash, failed start). Terminal."""
    CANCELLED = "cancelled"
    """User-initiated cancellation. Terminal."""

    def __str__(self) -> str:
        return self.value


_S = SessionState

TRANSITIONS: Final[Mapping[SessionState, frozenset[SessionState]]] = MappingProxyType(
    {
        _S.IDLE: frozenset({_S.STARTING, _S.CANCELLED}),
        _S.STARTING: frozenset({_S.RUNNING, _S.FAILED, _S.CANCELLED}),
        _S.RUNNING: frozenset(
            {
                _S.WAITING_TOOL_CALL,
                _S.WAITING_PERMISSION,
                _S.PAUSED,
                _S.COMPLETED,
                _S.FAILED,
                _S.CANCELLED,
            }
        ),
        _S.WAITING_TOOL_CALL: frozenset(
            {_S.RUNNING, _S.WAITING_PERMISSION, _S.PAUSED, _S.FAILED, _S.CANCELLED}
        ),
        _S.WAITING_PERMISSION: frozenset(
            {_S.RUNNING, _S.WAITING_TOOL_CALL, _S.PAUSED, _S.FAILED, _S.CANCELLED}
        ),
        _S.PAUSED: frozenset(
            {
                _S.RUNNING,
                _S.WAITING_TOOL_CALL,
                _S.WAITING_PERMISSION,
                _S.COMPLETED,
                _S.FAILED,
                _S.CANCELLED,
            }
        ),
        _S.COMPLETED: frozenset({_S.RUNNING}),
        _S.FAILED: frozenset(),
        _S.CANCELLED: frozenset(),
    }
)
"""The one transition table: state -> the states it may go to."""

ACTIVE_STATES: Final = frozenset(
    {_S.RUNNING, _S.WAITING_TOOL_CALL, _S.WAITING_PERMISSION, _S.PAUSED}
)
"""States in which a turn is under way."""

FINAL_STATES: Final = frozenset({_S.COMPLETED, _S.FAILED, _S.CANCELLED})
"""States in which nothing is under way (``completed`` may still be left by ``send``)."""


def can_transition(from_state: SessionState, to_state: SessionState) -> bool:
    """True if `TRANSITIONS` allows ``from_state -> to_state``."""
    return to_state in TRANSITIONS[from_state]


def _frozen(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _amount(data: Mapping[str, Any], key: str, kind: type[int] | type[float] = int) -> Any:
    """``data[key]`` (0 if absent) as ``kind``; a statistic is never negative nor NaN."""
    value = kind(data.get(key, 0))
    if not value >= 0:  # NaN too
        raise ValueError(f"{key} must be a non-negative number, not {value!r}")
    return value


def _parse_time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class PendingToolCall:
    """A tool call in flight.

    ``tool_name`` is the name the model used (``mcp__calc__add`` for MCP tools, ``Bash``
    for built-ins); ``server_name`` the MCP server (``None`` for built-in tools).
    ``request_id`` is the control request id of an in-process (SDK) tool call.
    """

    tool_use_id: str
    tool_name: str
    server_name: str | None
    arguments: Mapping[str, Any]
    started_at: datetime
    request_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "tool_use_id": self.tool_use_id,
            "tool_name": self.tool_name,
            "server_name": self.server_name,
            "arguments": dict(self.arguments),
            "started_at": _time(self.started_at),
            "request_id": self.request_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingToolCall:
        """The inverse of `to_dict()`."""
        started = _parse_time(data.get("started_at"))
        if started is None:
            raise ValueError(f"tool call {data.get('tool_use_id')!r} has no started_at time")
        return cls(
            tool_use_id=str(data["tool_use_id"]),
            tool_name=str(data["tool_name"]),
            server_name=data.get("server_name"),
            arguments=_frozen(data.get("arguments")),
            started_at=started,
            request_id=data.get("request_id"),
        )


@dataclass(frozen=True)
class PendingPermission:
    """A ``can_use_tool`` request whose decision has not reached the CLI yet."""

    request_id: str
    tool_name: str
    tool_input: Mapping[str, Any]
    tool_use_id: str | None
    requested_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "request_id": self.request_id,
            "tool_name": self.tool_name,
            "tool_input": dict(self.tool_input),
            "tool_use_id": self.tool_use_id,
            "requested_at": _time(self.requested_at),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingPermission:
        """The inverse of `to_dict()`."""
        requested = _parse_time(data.get("requested_at"))
        if requested is None:
            raise ValueError(f"permission {data.get('request_id')!r} has no requested_at time")
        return cls(
            request_id=str(data["request_id"]),
            tool_name=str(data["tool_name"]),
            tool_input=_frozen(data.get("tool_input")),
            tool_use_id=data.get("tool_use_id"),
            requested_at=requested,
        )


@dataclass(frozen=True)
class ToolStats:
    """Per-tool totals: finished calls, how many failed, and their summed duration."""

    call_count: int = 0
    error_count: int = 0
    total_duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "call_count": self.call_count,
            "error_count": self.error_count,
            "total_duration_s": self.total_duration_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolStats:
        """The inverse of `to_dict()`."""
        return cls(
            _amount(data, "call_count"),
            _amount(data, "error_count"),
            _amount(data, "total_duration_s", float),
        )


@dataclass(frozen=True)
class SessionStats:
    """Statistics of a session.

    ``tool_call_count`` counts finished tool calls; ``message_count`` the conversation
    messages received; ``turn_count`` the results. ``total_cost_usd`` is the CLI's
    reported cost (what each process of a resumed session spent, added up: not the
    cost the CLI restores on ``--resume``, counted once already) and ``usage`` the
    token counts of every result added up.
    """

    started_at: datetime | None = None
    completed_at: datetime | None = None
    tool_call_count: int = 0
    message_count: int = 0
    turn_count: int = 0
    tools: Mapping[str, ToolStats] = field(default_factory=lambda: MappingProxyType({}))
    total_cost_usd: float | None = None
    usage: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "started_at": _time(self.started_at),
            "completed_at": _time(self.completed_at),
            "tool_call_count": self.tool_call_count,
            "message_count": self.message_count,
            "turn_count": self.turn_count,
            "tools": {name: s.to_dict() for name, s in self.tools.items()},
            "total_cost_usd": self.total_cost_usd,
            "usage": dict(self.usage),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionStats:
        """The inverse of `to_dict()`."""
        tools = data.get("tools")
        cost = data.get("total_cost_usd")
        return cls(
            started_at=_parse_time(data.get("started_at")),
            completed_at=_parse_time(data.get("completed_at")),
            tool_call_count=_amount(data, "tool_call_count"),
            message_count=_amount(data, "message_count"),
            turn_count=_amount(data, "turn_count"),
            tools=MappingProxyType(
                {str(k): ToolStats.from_dict(v) for k, v in (tools or {}).items()}
            ),
            total_cost_usd=_amount(data, "total_cost_usd", float)
            if isinstance(cost, (int, float))
            else None,
            usage=_frozen(data.get("usage")),
        )


@dataclass(frozen=True)
class SessionOwner:
    """The Python process that ran a session when its snapshot was taken.

    ``host`` is the machine's host name, ``pid`` the process id and ``token`` a random
    id drawn once per process (pids are reused; the token is not). A snapshot left in
    an active state by an owner that no longer runs is an orphan of a crash: see
    `session_liveness()`.
    """

    host: str
    pid: int
    token: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {"host": self.host, "pid": self.pid, "token": self.token}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionOwner:
        """The inverse of `to_dict()`."""
        return cls(host=str(data["host"]), pid=int(data["pid"]), token=str(data["token"]))


@dataclass(frozen=True)
class SessionStateInfo:
    """An immutable snapshot of a session (``Session.get_state()``).

    ``pending_tool_call`` is the oldest tool call in flight and ``pending_tool_calls``
    all of them (several run at once for read-only tools); the same for permissions.
    They are kept while ``paused`` too. ``error`` says why a session failed,
    ``result`` is the text of the last result, ``cli_state`` the CLI's own last
    reported state (``idle``/``running``/``requires_action``), ``project_path`` the
    CLI's working directory (needed to resume), ``resumed_from`` the session this one
    continues or forks, ``owner`` the process that ran it (``None`` in snapshots made
    by hand or by older versions).
    """

    state: SessionState
    session_id: str
    stats: SessionStats = field(default_factory=SessionStats)
    pending_tool_calls: tuple[PendingToolCall, ...] = ()
    pending_permissions: tuple[PendingPermission, ...] = ()
    project_path: str | None = None
    error: str | None = None
    result: str | None = None
    cli_state: str | None = None
    resumed_from: str | None = None
    updated_at: datetime | None = None
    owner: SessionOwner | None = None

    @property
    def pending_tool_call(self) -> PendingToolCall | None:
        """The oldest tool call in flight, if any."""
        return self.pending_tool_calls[0] if self.pending_tool_calls else None

    @property
    def pending_permission(self) -> PendingPermission | None:
        """The oldest permission request in flight, if any."""
        return self.pending_permissions[0] if self.pending_permissions else None

    @property
    def is_final(self) -> bool:
        """True in ``completed``, ``failed`` and ``cancelled``."""
        return self.state in FINAL_STATES

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (what the stores persist)."""
        return {
            "state": self.state.value,
            "session_id": self.session_id,
            "stats": self.stats.to_dict(),
            "pending_tool_calls": [c.to_dict() for c in self.pending_tool_calls],
            "pending_permissions": [p.to_dict() for p in self.pending_permissions],
            "project_path": self.project_path,
            "error": self.error,
            "result": self.result,
            "cli_state": self.cli_state,
            "resumed_from": self.resumed_from,
            "updated_at": _time(self.updated_at),
            "owner": self.owner.to_dict() if self.owner is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionStateInfo:
        """The inverse of `to_dict()`."""
        owner = data.get("owner")
        return cls(
            state=SessionState(data["state"]),
            session_id=str(data["session_id"]),
            stats=SessionStats.from_dict(data.get("stats") or {}),
            pending_tool_calls=tuple(
                PendingToolCall.from_dict(c) for c in data.get("pending_tool_calls") or ()
            ),
            pending_permissions=tuple(
                PendingPermission.from_dict(p) for p in data.get("pending_permissions") or ()
            ),
            project_path=data.get("project_path"),
            error=data.get("error"),
            result=data.get("result"),
            cli_state=data.get("cli_state"),
            resumed_from=data.get("resumed_from"),
            updated_at=_parse_time(data.get("updated_at")),
            owner=SessionOwner.from_dict(owner) if isinstance(owner, Mapping) else None,
        )
