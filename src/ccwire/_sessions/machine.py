"""The session state machine: protocol facts in, transitions and events out.

`SessionMachine` is pure bookkeeping (no I/O; clocks are injectable). The
session feeds it what happens on the wire (messages, the CLI's session states,
control requests starting and finishing, the end of the process) and what the user
asks (start, pause, resume, cancel, a new turn). It keeps every tool call and every
permission request in flight (in `InFlight`),
derives the state from them, and changes state only
through `SessionMachine._go()`, which checks `TRANSITIONS` and raises
`InvalidTransitionError` for anything the table does not allow.

How the state is derived while a turn is under way (first match wins): paused ->
``paused``; a permission request in flight -> ``waiting_permission``; a tool call in
flight -> ``waiting_tool_call``; the turn is over (a result arrived and the CLI owes
nothing more) -> ``completed`` (``failed`` for an error result we did not cause by
interrupting); otherwise ``running``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from .._core.errors import CcwireError, InvalidTransitionError, SessionStateError
from .._protocol.control import ControlEvent
from .._wire import codec
from .._wire.cost import CostMeter
from .._wire.messages import (
    AssistantMessage,
    Message,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from .events import (
    ErrorOccurred,
    MessageReceived,
    SessionCompleted,
    SessionEvent,
    StateChanged,
)
from .inflight import InFlight
from .state import (
    ACTIVE_STATES,
    FINAL_STATES,
    SessionOwner,
    SessionState,
    SessionStateInfo,
    SessionStats,
    can_transition,
)

__all__ = ["SessionMachine"]

_S = SessionState


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class SessionMachine:
    """See the module docstring. Every method returns the events it produced, in order."""

    def __init__(
        self,
        session_id: str,
        *,
        project_path: str | None = None,
        resumed_from: str | None = None,
        prior: SessionStats | None = None,
        sdk_servers: frozenset[str] = frozenset(),
        owner: SessionOwner | None = None,
        clock: Callable[[], datetime] = _utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._state = _S.IDLE
        self._session_id = session_id
        self._project_path = project_path
        self._resumed_from = resumed_from
        self._owner = owner
        self._clock = clock
        self._paused = False
        self._owes = True
        self._result_seen = False
        self._interrupted = False
        self._last_result: ResultMessage | None = None
        self._error: str | None = None
        self._cli_state: str | None = None
        prior = prior or SessionStats()
        self._stats = replace(prior, completed_at=None)
        self._cost_base = prior.total_cost_usd or 0.0
        # a resumed (or forked) CLI counts the cost it restored in its totals: only what
        # its own process spends is added to the prior processes' cost
        self._meter = CostMeter(fallback=self._cost_base)
        self._inflight = InFlight(
            sdk_servers=sdk_servers,
            clock=clock,
            monotonic=monotonic,
            tools=prior.tools,
            finished=prior.tool_call_count,
        )
        self._usage: dict[str, Any] = dict(prior.usage)
        self._info: SessionStateInfo | None = None

    # ------------------------------------------------------------------ reading

    @property
    def state(self) -> SessionState:
        """The current state."""
        return self._state

    @property
    def session_id(self) -> str:
        """The session id (the CLI's, once it reports one)."""
        return self._session_id

    @property
    def last_result(self) -> ResultMessage | None:
        """The last result message seen."""
        return self._last_result

    @property
    def info(self) -> SessionStateInfo:
        """An immutable snapshot of everything the machine knows."""
        if self._info is None:
            self._info = SessionStateInfo(
                state=self._state,
                session_id=self._session_id,
                stats=replace(
                    self._stats,
                    tool_call_count=self._inflight.finished,
                    tools=MappingProxyType(dict(self._inflight.tool_stats)),
                    usage=MappingProxyType(dict(self._usage)),
                ),
                pending_tool_calls=self._inflight.calls,
                pending_permissions=self._inflight.permissions,
                project_path=self._project_path,
                error=self._error,
                result=self._last_result.result if self._last_result else None,
                cli_state=self._cli_state,
                resumed_from=self._resumed_from,
                updated_at=self._clock(),
                owner=self._owner,
            )
        return self._info

    @property
    def in_flight(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The ids of the tool calls and of the permission requests in flight."""
        return self._inflight.ids

    def _changed(self) -> None:
        self._info = None

    # -------------------------------------------------------------- transitions

    def _go(self, new: SessionState, out: list[SessionEvent]) -> None:
        old = self._state
        if new is old:
            return
        if not can_transition(old, new):
            raise InvalidTransitionError(old.value, new.value)
        self._state = new
        if new in FINAL_STATES:
            self._stats = replace(self._stats, completed_at=self._clock())
        self._changed()
        info = self.info
        out.append(StateChanged(old, new, info))
        if new in FINAL_STATES:
            out.append(SessionCompleted(info, self._last_result))

    def _target(self) -> SessionState:
        if self._paused:
            return _S.PAUSED
        if self._inflight.has_permissions:
            return _S.WAITING_PERMISSION
        if self._inflight.has_calls:
            return _S.WAITING_TOOL_CALL
        if self._result_seen and not self._owes:
            result = self._last_result
            failed = result is not None and result.is_error and not self._interrupted
            return _S.FAILED if failed else _S.COMPLETED
        return _S.RUNNING

    def _settle(self, out: list[SessionEvent]) -> None:
        if self._state not in ACTIVE_STATES:
            return
        if not self._paused and self._result_seen and not self._owes:
            # the turn is over: anything still marked in flight was abandoned
            self._abandon(out, "the turn ended before this call finished")
        target = self._target()
        if target in (_S.COMPLETED, _S.FAILED) and self._state is not _S.PAUSED:
            self._go(_S.RUNNING, out)  # the last tool result / decision came back
        if target is _S.FAILED and self._last_result is not None:
            result = self._last_result
            self._error = f"error result ({result.subtype}): {result.result or ''}".strip()
            self._changed()
            out.append(ErrorOccurred(CcwireError(self._error), "result"))
        self._go(target, out)

    def _reopen(self, out: list[SessionEvent]) -> None:
        """A new turn begins after ``completed`` (a follow-up, or the CLI's own)."""
        if self._state is _S.COMPLETED:
            self._result_seen = False
            self._interrupted = False
            self._owes = True
            self._go(_S.RUNNING, out)

    def _abandon(self, out: list[SessionEvent], why: str) -> None:
        out.extend(self._inflight.abandon(why))
        self._changed()

    # ---------------------------------------------------------- user commands

    def start(self) -> list[SessionEvent]:
        """``idle -> starting``: the CLI is being spawned."""
        out: list[SessionEvent] = []
        if self._stats.started_at is None:
            self._stats = replace(self._stats, started_at=self._clock())
        self._go(_S.STARTING, out)
        return out

    def connected(self) -> list[SessionEvent]:
        """``starting -> running``: the CLI answered ``initialize``."""
        out: list[SessionEvent] = []
        self._go(_S.RUNNING, out)
        return out

    def start_failed(self, error: BaseException) -> list[SessionEvent]:
        """``starting -> failed``: the CLI could not be started (no-op once cancelled)."""
        out: list[SessionEvent] = []
        if self._state is _S.STARTING:
            self._error = str(error) or type(error).__name__
            self._changed()
            out.append(ErrorOccurred(error, "cli"))
            self._go(_S.FAILED, out)
        return out

    def new_turn(self) -> list[SessionEvent]:
        """A prompt is being sent: ``completed -> running``; mid-turn it joins the turn."""
        if self._state in ACTIVE_STATES:
            return []
        if self._state is _S.COMPLETED:
            out: list[SessionEvent] = []
            self._reopen(out)
            return out
        raise SessionStateError(f"cannot send a prompt to a session that is {self._state.value}")

    def interrupted(self) -> None:
        """We asked the CLI to stop the turn: its error result ends it as ``completed``."""
        if self._state in ACTIVE_STATES:
            self._interrupted = True

    def pause(self) -> list[SessionEvent]:
        """``running``/``waiting_*`` -> ``paused`` (a no-op when already paused)."""
        out: list[SessionEvent] = []
        if self._state is _S.PAUSED:
            return out
        if self._state not in ACTIVE_STATES:
            raise SessionStateError(f"cannot pause a session that is {self._state.value}")
        self._paused = True
        self._go(_S.PAUSED, out)
        return out

    def resume(self, owes_answer: bool | None = None) -> list[SessionEvent]:
        """``paused`` -> wherever the work in flight says (a no-op when not paused).

        ``owes_answer`` refreshes whether the CLI still owes a result (see `settle()`).
        """
        out: list[SessionEvent] = []
        if self._state is not _S.PAUSED:
            return out
        if owes_answer is not None:
            self._owes = owes_answer
        self._paused = False
        self._settle(out)
        return out

    def cancel(self) -> list[SessionEvent]:
        """Any state but a final one -> ``cancelled`` (calls in flight end as errors)."""
        out: list[SessionEvent] = []
        if self._state in FINAL_STATES:
            return out
        self._paused = False
        self._abandon(out, "the session was cancelled")
        self._go(_S.CANCELLED, out)
        return out

    # ------------------------------------------------------------ protocol facts

    def settle(self, owes_answer: bool) -> list[SessionEvent]:
        """Re-derive the state; ``owes_answer`` says whether the CLI still owes a result."""
        self._owes = owes_answer
        out: list[SessionEvent] = []
        self._settle(out)
        return out

    def cli_state(self, state: str) -> list[SessionEvent]:
        """The CLI reported its own state (``idle``/``running``/``requires_action``)."""
        out: list[SessionEvent] = []
        if state != self._cli_state:
            self._cli_state = state
            self._changed()
        if state == "running":
            self._reopen(out)
        return out

    def message(self, message: Message) -> list[SessionEvent]:
        """A conversation message (one the client surfaces)."""
        out: list[SessionEvent] = []
        self._stats = replace(self._stats, message_count=self._stats.message_count + 1)
        self._changed()
        out.append(MessageReceived(message))
        tracking = self._state in ACTIVE_STATES or self._state is _S.COMPLETED
        if isinstance(message, SystemMessage) and message.subtype == "init":
            self._adopt_id(message.data.get("session_id"))
        elif isinstance(message, AssistantMessage) and tracking:
            for block in message.content:
                if isinstance(block, ToolUseBlock) and self._inflight.tracks_block(
                    block.id, block.name
                ):
                    self._reopen(out)
                    out.append(self._inflight.start(block.id, block.name, block.input))
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for item in message.content:
                if isinstance(item, ToolResultBlock):
                    done = self._inflight.finish(
                        item.tool_use_id, is_error=bool(item.is_error), result=item
                    )
                    if done is not None:
                        out.append(done)
        elif isinstance(message, ResultMessage):
            self._on_result(message)
        return out

    def _adopt_id(self, sid: Any) -> None:
        if isinstance(sid, str) and sid and sid != self._session_id:
            self._session_id = sid
            self._changed()

    def _on_result(self, result: ResultMessage) -> None:
        self._adopt_id(result.session_id)
        self._last_result = result
        if self._state in ACTIVE_STATES:
            self._result_seen = True
        cost = self._stats.total_cost_usd
        if self._meter.add(result) is not None:
            cost = self._cost_base + self._meter.spent
        for key, value in (result.usage or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self._usage[key] = self._usage.get(key, 0) + value
        self._stats = replace(
            self._stats, turn_count=self._stats.turn_count + 1, total_cost_usd=cost
        )
        self._changed()

    def control(self, event: ControlEvent) -> list[SessionEvent]:
        """A control request from the CLI started (``outcome`` None) or finished."""
        out: list[SessionEvent] = []
        if self._state not in ACTIVE_STATES and self._state is not _S.COMPLETED:
            return out
        inflight = self._inflight
        if event.subtype == codec.CAN_USE_TOOL:
            if event.outcome is None:
                self._reopen(out)
                out.append(inflight.ask(event))
            elif not inflight.answered(event.request_id):
                return out
        elif event.subtype == codec.MCP_MESSAGE:
            if inflight.is_sdk_start(event):
                self._reopen(out)
                out.append(inflight.start_sdk(event))
            elif event.outcome is not None:
                done = inflight.finish_sdk(event)
                if done is None:
                    return out
                out.append(done)
            else:
                return out
        else:
            return out
        self._changed()
        return out

    def process_ended(self, error: BaseException | None) -> list[SessionEvent]:
        """The CLI's output ended. Mid-session that is a failure; at rest it is not."""
        out: list[SessionEvent] = []
        if self._state not in ACTIVE_STATES and self._state is not _S.STARTING:
            return out
        failure = error or CcwireError("the CLI exited before the session completed")
        self._paused = False
        self._abandon(out, "the CLI ended before this call finished")
        self._error = str(failure) or type(failure).__name__
        self._changed()
        out.append(ErrorOccurred(failure, "cli"))
        self._go(_S.FAILED, out)
        return out
