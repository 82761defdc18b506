"""What ``ccwire run`` reports: typed run events, and the tracker that produces them.

`RunTracker` is fed by the two observers of a
`Connection` (every decoded message, and every control
request the CLI sends us) and turns them into `RunEvent` values for a renderer.
It also keeps the live status the terminal shows: the CLI's session state, the model
turns so far, the tools in flight with their durations, and the cost.

Event kinds (the ``event`` field of ``ccwire run --json``):

``start``, ``state``, ``init``, ``retry``, ``text``, ``thinking``, ``tool_call``,
``tool_running``, ``permission``, ``tool_result``, ``result``, ``error``, ``interrupted``.

``retry`` reports the CLI's own retries when the model cannot be reached (an
``api_retry`` frame): ``attempt``, ``max_retries``, ``delay_ms``, ``status`` (the HTTP
status, null when there was no response) and ``error`` (the CLI's reason). The live
status shows the latest one until the model answers.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._protocol.control import ControlEvent
from .._wire import codec
from .._wire.messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = ["RunEvent", "RunTracker", "ToolPhase", "ToolStatus", "result_text"]

_TOOL_USE_META = "claudecode/toolUseId"


@dataclass(frozen=True)
class RunEvent:
    """One thing worth reporting; ``data`` is JSON-serialisable."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The NDJSON object: ``{"event": kind, **data}``."""
        return {"event": self.kind, **self.data}


class ToolPhase(enum.Enum):
    """Where one tool call is."""

    REQUESTED = "requested"  # the model asked for it
    PERMISSION = "permission"  # waiting for a permission decision
    RUNNING = "running"  # our in-process server is running it
    DONE = "done"  # its result reached the conversation


@dataclass
class ToolStatus:
    """One tool call, keyed by the model's ``tool_use`` id."""

    id: str
    name: str
    input: Mapping[str, Any]
    started: float
    phase: ToolPhase = ToolPhase.REQUESTED
    finished: float | None = None
    is_error: bool = False


def result_text(block: ToolResultBlock) -> str:
    """The text of a tool result, whatever shape its content has."""
    content = block.content
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    return "" if content is None else str(content)


class RunTracker:
    """Turns messages and control events into `RunEvent` values (see module doc).

    ``emit`` receives every event synchronously, in order; ``clock`` is a monotonic
    clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        emit: Callable[[RunEvent], None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._clock = clock
        self.started = clock()
        self.state = "connecting"
        """The CLI's session state (``idle``/``running``/``requires_action``), or ours
        before it reports one (``connecting``). A CLI that never reports one (older
        than 2.1.330) is ``running`` from its ``system/init`` and ``idle`` after each
        ``result``."""
        self._state_reported = False
        self.turns = 0
        """Model responses seen so far (distinct assistant message ids)."""
        self.cost_usd: float | None = None
        self.tools: dict[str, ToolStatus] = {}
        self.result: ResultMessage | None = None
        self.session_id: str | None = None
        self._message_ids: set[str] = set()
        self.interrupted = False
        """Set by `interrupt()`: the user stopped the run (Ctrl-C)."""
        self.output_closed: BrokenPipeError | None = None
        """Set by `close_output()`: the reader of the output has gone (``| head``)."""
        self.stop: Callable[[], None] = lambda: None
        """Ends the conversation (set by whoever runs it)."""
        self.retry: codec.ApiRetry | None = None
        """The CLI's latest retry notice, until the model answers (or the run ends)."""

    # ----------------------------------------------------------------- status

    @property
    def elapsed(self) -> float:
        """Seconds since the tracker was created."""
        return self._clock() - self.started

    def active_tools(self) -> list[ToolStatus]:
        """Tool calls without a result yet, oldest first."""
        return [t for t in list(self.tools.values()) if t.phase is not ToolPhase.DONE]

    def tool_seconds(self, status: ToolStatus) -> float:
        """How long ``status`` has taken (so far, or in total when done)."""
        end = status.finished if status.finished is not None else self._clock()
        return end - status.started

    @property
    def tools_done(self) -> int:
        """How many tool calls have a result."""
        return sum(1 for t in list(self.tools.values()) if t.phase is ToolPhase.DONE)

    def emit(self, kind: str, **data: Any) -> None:
        """Report an event that did not come from the CLI (start, error, ...).

        After `interrupt()` only the ``interrupted`` event is reported.
        """
        if self.interrupted and kind != "interrupted":
            return
        self._emit(RunEvent(kind, data))

    def close_output(self, error: BrokenPipeError) -> None:
        """The output cannot be written any more: report nothing more, end the run."""
        self.output_closed = error
        self.stop()

    def interrupt(self) -> None:
        """The user stopped the run: report nothing more of it (what the CLI sends while
        it is shut down), until the ``interrupted`` event."""
        self.interrupted = True

    # ------------------------------------------------------------- messages

    def on_message(self, message: Message) -> None:
        """Observer for every decoded message (``Connection.add_observer``)."""
        if isinstance(message, SystemMessage):
            self._on_system(message)
        elif isinstance(message, AssistantMessage):
            self._on_assistant(message)
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    self._on_tool_result(block)
        elif isinstance(message, ResultMessage):
            self._on_result(message)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.emit("state", state=state)

    def _on_system(self, message: SystemMessage) -> None:
        state = codec.session_state(message.data)
        if state is not None:
            self._state_reported = True
            self._set_state(state)
            return
        retry = codec.api_retry(message.data)
        if retry is not None:
            self.retry = retry
            self.emit(
                "retry",
                attempt=retry.attempt,
                max_retries=retry.max_retries,
                delay_ms=retry.delay_ms,
                status=retry.status,
                error=retry.error,
            )
            return
        if message.subtype == "init":
            if not self._state_reported:  # a CLI without session_state_changed frames
                self._set_state("running")
            data = message.data
            sid = data.get("session_id")
            self.session_id = sid if isinstance(sid, str) else self.session_id
            servers = data.get("mcp_servers")
            self.emit(
                "init",
                session_id=self.session_id,
                model=data.get("model"),
                cli_version=data.get("claude_code_version"),
                permission_mode=data.get("permissionMode"),
                tools=list(data.get("tools") or []),
                mcp_servers=[
                    {"name": s.get("name"), "status": s.get("status")}
                    for s in (servers if isinstance(servers, list) else [])
                    if isinstance(s, Mapping)
                ],
            )

    def _on_assistant(self, message: AssistantMessage) -> None:
        self.retry = None  # the model answered
        if message.parent_tool_use_id is None:
            key = message.message_id or f"anon-{id(message)}"
            if key not in self._message_ids:
                self._message_ids.add(key)
                self.turns += 1
        for block in message.content:
            if isinstance(block, TextBlock):
                if block.text:
                    self.emit("text", text=block.text)
            elif isinstance(block, ThinkingBlock):
                if block.thinking:
                    self.emit("thinking", text=block.thinking)
            elif isinstance(block, ToolUseBlock):
                self.tools[block.id] = ToolStatus(block.id, block.name, block.input, self._clock())
                self.emit("tool_call", id=block.id, name=block.name, input=block.input)

    def _on_tool_result(self, block: ToolResultBlock) -> None:
        status = self.tools.get(block.tool_use_id)
        name = status.name if status is not None else None
        duration_ms: int | None = None
        if status is not None:
            status.phase = ToolPhase.DONE
            status.finished = self._clock()
            status.is_error = bool(block.is_error)
            duration_ms = round(self.tool_seconds(status) * 1000)
        self.emit(
            "tool_result",
            id=block.tool_use_id,
            name=name,
            is_error=bool(block.is_error),
            text=result_text(block),
            duration_ms=duration_ms,
        )

    def _on_result(self, message: ResultMessage) -> None:
        self.retry = None
        self.result = message
        self.cost_usd = message.total_cost_usd
        self.session_id = message.session_id or self.session_id
        self.emit(
            "result",
            subtype=message.subtype,
            is_error=message.is_error,
            result=message.result,
            structured_output=message.structured_output,
            num_turns=message.num_turns,
            total_cost_usd=message.total_cost_usd,
            duration_ms=message.duration_ms,
            session_id=message.session_id,
            stop_reason=message.stop_reason,
            errors=list(message.errors or ()),
        )
        if not self._state_reported:  # after the result, as a CLI reporting states does
            self._set_state("idle")

    # ------------------------------------------------------- control events

    def on_control(self, event: ControlEvent) -> None:
        """Observer for incoming control requests (``Connection.add_control_observer``)."""
        if event.subtype == codec.CAN_USE_TOOL and event.outcome is None:
            status = self.tools.get(str(event.request.get("tool_use_id")))
            if status is not None:
                status.phase = ToolPhase.PERMISSION
            return
        if event.subtype != codec.MCP_MESSAGE or event.outcome is not None:
            return
        message = event.request.get("message")
        if not isinstance(message, Mapping) or message.get("method") != "tools/call":
            return
        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        meta = params.get("_meta")
        tool_use_id = meta.get(_TOOL_USE_META) if isinstance(meta, Mapping) else None
        status = self.tools.get(str(tool_use_id))
        if status is not None:
            status.phase = ToolPhase.RUNNING
        self.emit(
            "tool_running",
            id=tool_use_id,
            name=status.name if status is not None else params.get("name"),
            server=event.request.get("server_name"),
        )

    def permission_decided(
        self, tool_use_id: str | None, name: str, decision: str, reason: str, message: str = ""
    ) -> None:
        """Record a permission decision made by ``ccwire run`` (prompt or policy)."""
        status = self.tools.get(str(tool_use_id))
        if status is not None and status.phase is ToolPhase.PERMISSION:
            status.phase = ToolPhase.REQUESTED
        self.emit(
            "permission",
            id=tool_use_id,
            name=name,
            decision=decision,
            reason=reason,
            message=message,
        )
