"""The session state model: the transition table, the snapshot, and the pure machine.

The machine is driven here with hand-made protocol facts (no I/O) to pin down the rules
that are awkward to reach over a wire: impossible transitions raise, every pair of
states outside the table is refused, clocks and durations, the statistics.
"""

from __future__ import annotations

import dataclasses
import itertools
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    InvalidTransitionError,
    ResultMessage,
    SessionState,
    SessionStateError,
    SessionStateInfo,
    SessionStats,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ccwire._protocol.control import ControlEvent
from ccwire._sessions.events import (
    ErrorOccurred,
    SessionCompleted,
    SessionEvent,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
)
from ccwire._sessions.inflight import split_tool_name
from ccwire._sessions.machine import SessionMachine
from ccwire._sessions.state import TRANSITIONS

S = SessionState

# every edge of the documented session diagram, plus the documented concurrency / follow-up edges
EXPECTED_EDGES = {
    (S.IDLE, S.STARTING),
    (S.IDLE, S.CANCELLED),
    (S.STARTING, S.RUNNING),
    (S.STARTING, S.FAILED),
    (S.STARTING, S.CANCELLED),
    (S.RUNNING, S.WAITING_TOOL_CALL),
    (S.RUNNING, S.WAITING_PERMISSION),
    (S.RUNNING, S.PAUSED),
    (S.RUNNING, S.COMPLETED),
    (S.RUNNING, S.FAILED),
    (S.RUNNING, S.CANCELLED),
    (S.WAITING_TOOL_CALL, S.RUNNING),
    (S.WAITING_TOOL_CALL, S.WAITING_PERMISSION),
    (S.WAITING_TOOL_CALL, S.PAUSED),
    (S.WAITING_TOOL_CALL, S.FAILED),
    (S.WAITING_TOOL_CALL, S.CANCELLED),
    (S.WAITING_PERMISSION, S.RUNNING),
    (S.WAITING_PERMISSION, S.WAITING_TOOL_CALL),
    (S.WAITING_PERMISSION, S.PAUSED),
    (S.WAITING_PERMISSION, S.FAILED),
    (S.WAITING_PERMISSION, S.CANCELLED),
    (S.PAUSED, S.RUNNING),
    (S.PAUSED, S.WAITING_TOOL_CALL),
    (S.PAUSED, S.WAITING_PERMISSION),
    (S.PAUSED, S.COMPLETED),
    (S.PAUSED, S.FAILED),
    (S.PAUSED, S.CANCELLED),
    (S.COMPLETED, S.RUNNING),
}


class Clock:
    """A hand-driven wall clock and monotonic clock."""

    def __init__(self) -> None:
        self.t = 100.0
        self.base = datetime(2030, 1, 1, tzinfo=timezone.utc)

    def now(self) -> datetime:
        return self.base + timedelta(seconds=self.t)

    def mono(self) -> float:
        return self.t


def make(clock: Clock | None = None, **kw: Any) -> SessionMachine:
    clock = clock or Clock()
    kw.setdefault("sdk_servers", frozenset({"calc"}))
    return SessionMachine("sid-1", clock=clock.now, monotonic=clock.mono, **kw)


def tools_call(
    rid: str, tool_use_id: str, *, outcome: str | None = None, result: Any = None, **args: Any
) -> ControlEvent:
    request = {
        "subtype": "mcp_message",
        "server_name": "calc",
        "message": {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "add",
                "arguments": args,
                "_meta": {"claudecode/toolUseId": tool_use_id, "progressToken": 2},
            },
        },
    }
    response = None
    if outcome == "ok":
        response = {"mcp_response": {"jsonrpc": "2.0", "id": 2, "result": result or {}}}
    return ControlEvent(rid, "mcp_message", request, outcome, response)


def permission(rid: str, *, outcome: str | None = None, tool: str = "Bash") -> ControlEvent:
    request = {
        "subtype": "can_use_tool",
        "tool_name": tool,
        "input": {"command": "ls"},
        "tool_use_id": "toolu_p",
    }
    return ControlEvent(rid, "can_use_tool", request, outcome, {"behavior": "allow"})


def result(
    *, is_error: bool = False, cost: float = 0.01, text: str = "done", since: float | None = None
) -> ResultMessage:
    """A result; ``since``: the CLI 2.1.330's cost since its previous result."""
    raw = {} if since is None else {"model_usage_since_last_result": {"m": {"costUSD": since}}}
    return ResultMessage(
        subtype="error_during_execution" if is_error else "success",
        duration_ms=5,
        duration_api_ms=4,
        is_error=is_error,
        num_turns=1,
        session_id="sid-1",
        total_cost_usd=cost,
        usage={"input_tokens": 10, "output_tokens": 3, "service_tier": "standard"},
        result=text,
        raw=raw,
    )


def states(events: list[SessionEvent]) -> list[tuple[str, str]]:
    return [(e.from_state.value, e.to_state.value) for e in events if isinstance(e, StateChanged)]


def running(clock: Clock | None = None, **kw: Any) -> SessionMachine:
    m = make(clock, **kw)
    m.start()
    m.connected()
    return m


def drive_to(state: SessionState) -> SessionMachine:
    """A machine in ``state``, reached through its public methods."""
    m = make()
    if state is S.IDLE:
        return m
    m.start()
    if state is S.STARTING:
        return m
    if state is S.FAILED:
        m.start_failed(RuntimeError("boom"))
        return m
    if state is S.CANCELLED:
        m.cancel()
        return m
    m.connected()
    if state is S.WAITING_TOOL_CALL:
        m.control(tools_call("r1", "t1"))
        m.settle(True)
    elif state is S.WAITING_PERMISSION:
        m.control(permission("p1"))
        m.settle(True)
    elif state is S.PAUSED:
        m.pause()
    elif state is S.COMPLETED:
        m.message(result())
        m.settle(False)
    assert m.state is state
    return m


def test_the_table_is_the_diagram_plus_documented_edges() -> None:
    assert set(TRANSITIONS) == set(SessionState)
    edges = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert edges == EXPECTED_EDGES
    assert [s.value for s in SessionState] == [
        "idle",
        "starting",
        "running",
        "waiting_tool_call",
        "waiting_permission",
        "paused",
        "completed",
        "failed",
        "cancelled",
    ]
    assert isinstance(S.RUNNING, str) and str(S.RUNNING) == "running"


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (a, b)
        for a, b in itertools.product(SessionState, SessionState)
        if a is not b and (a, b) not in EXPECTED_EDGES
    ],
)
def test_every_transition_outside_the_table_raises(
    source: SessionState, target: SessionState
) -> None:
    m = drive_to(source)
    before = m.info
    with pytest.raises(InvalidTransitionError) as info:
        m._go(target, [])
    assert (info.value.from_state, info.value.to_state) == (source.value, target.value)
    assert m.state is source and m.info is before


def test_impossible_steps_through_the_methods_raise_not_overwrite() -> None:
    m = make()
    with pytest.raises(InvalidTransitionError):
        m.connected()  # idle -> running skips starting
    assert m.state is S.IDLE
    done = drive_to(S.COMPLETED)
    with pytest.raises(InvalidTransitionError):
        done.start()
    with pytest.raises(SessionStateError):
        done.pause()  # not an impossible transition: an operation refused
    failed = drive_to(S.FAILED)
    with pytest.raises(SessionStateError):
        failed.new_turn()
    assert failed.state is S.FAILED


def test_concurrent_tool_calls_are_all_tracked_with_durations() -> None:
    clock = Clock()
    m = running(clock)
    ev = m.control(tools_call("r1", "t1", a=1))
    clock.t += 1.0
    ev += m.control(tools_call("r2", "t2", a=2))
    ev += m.settle(True)
    info = m.info
    assert info.state is S.WAITING_TOOL_CALL
    assert [c.tool_use_id for c in info.pending_tool_calls] == ["t1", "t2"]
    first = info.pending_tool_call
    assert first is not None
    assert (first.tool_name, first.server_name, dict(first.arguments)) == (
        "mcp__calc__add",
        "calc",
        {"a": 1},
    )
    clock.t += 2.0
    ev += m.control(tools_call("r2", "t2", outcome="ok", result={"isError": True}))
    ev += m.settle(True)
    assert m.state is S.WAITING_TOOL_CALL  # t1 is still in flight
    clock.t += 0.5
    ev += m.control(tools_call("r1", "t1", outcome="ok", result={"content": []}))
    ev += m.settle(True)
    assert m.info.state is S.RUNNING
    finished = [e for e in ev if isinstance(e, ToolCallFinished)]
    assert [(f.tool_use_id, f.duration_s, f.is_error) for f in finished] == [
        ("t2", 2.0, True),
        ("t1", 3.5, False),
    ]
    stats = m.info.stats
    assert stats.tool_call_count == 2
    assert stats.tools["mcp__calc__add"].call_count == 2
    assert stats.tools["mcp__calc__add"].error_count == 1
    assert stats.tools["mcp__calc__add"].total_duration_s == 5.5
    assert states(ev) == [("running", "waiting_tool_call"), ("waiting_tool_call", "running")]


def test_built_in_tools_are_tracked_from_blocks_sdk_ones_from_control() -> None:
    m = running()
    use = AssistantMessage(
        content=[
            ToolUseBlock("toolu_b", "Bash", {"command": "ls"}),
            ToolUseBlock("toolu_s", "mcp__calc__add", {"a": 1}),
            ToolUseBlock("toolu_x", "mcp__other__q", {}),
        ],
        model="m",
    )
    ev = m.message(use) + m.settle(True)
    started = [(e.tool_use_id, e.server_name) for e in ev if isinstance(e, ToolCallStarted)]
    assert started == [("toolu_b", None), ("toolu_x", "other")]
    back = UserMessage(
        content=[
            ToolResultBlock("toolu_b", "file", is_error=False),
            ToolResultBlock("toolu_x", "nope", is_error=True),
        ]
    )
    ev = m.message(back) + m.settle(True)
    assert [(e.tool_use_id, e.is_error) for e in ev if isinstance(e, ToolCallFinished)] == [
        ("toolu_b", False),
        ("toolu_x", True),
    ]
    assert m.state is S.RUNNING and m.info.stats.message_count == 2


def test_result_completes_only_when_nothing_is_owed_and_accumulates_stats() -> None:
    m = running(prior=dataclasses.replace(drive_to(S.COMPLETED).info.stats))
    base_cost = m.info.stats.total_cost_usd
    assert base_cost == 0.01
    m.message(result(cost=0.03, since=0.02))  # the resumed CLI restored the prior 0.01
    assert m.settle(True) == [] and m.state is S.RUNNING  # the CLI is not idle yet
    ev = m.settle(False)
    assert states(ev) == [("running", "completed")]
    done = [e for e in ev if isinstance(e, SessionCompleted)]
    assert len(done) == 1 and done[0].result is not None and done[0].info.result == "done"
    stats = m.info.stats
    assert stats.total_cost_usd == pytest.approx(0.03)
    assert stats.usage["input_tokens"] == 20 and "service_tier" not in stats.usage
    assert stats.turn_count == 2 and stats.completed_at is not None


@pytest.mark.parametrize(
    ("prior", "results", "costs"),
    [
        # resumed: the CLI's totals count the prior 0.01 it restored
        (0.01, [(0.03, 0.02), (0.04, 0.01)], [0.03, 0.04]),
        # resumed after a process that was killed: the CLI restored nothing
        (0.01, [(0.02, 0.02), (0.05, 0.03)], [0.03, 0.06]),
        # forked: fresh stats, while the CLI restored the parent's 0.5
        (None, [(0.52, 0.02)], [0.02]),
        # a CLI that does not say what it spent since the last result: it restored the prior
        (0.01, [(0.03, None), (0.04, None)], [0.03, 0.04]),
        # a new session, with and without the field
        (None, [(0.02, 0.02), (0.05, 0.03)], [0.02, 0.05]),
        (None, [(0.02, None), (0.05, None)], [0.02, 0.05]),
    ],
)
def test_a_resumed_cli_restored_cost_is_not_counted_twice(
    prior: float | None, results: list[tuple[float, float | None]], costs: list[float]
) -> None:
    m = running(prior=SessionStats(total_cost_usd=prior), resumed_from="sid-0")
    seen = []
    for total, since in results:
        m.message(result(cost=total, since=since))
        seen.append(m.info.stats.total_cost_usd)
    assert seen == pytest.approx(costs)


def test_error_result_fails_but_not_after_our_interrupt() -> None:
    m = running()
    m.message(result(is_error=True, text="boom"))
    ev = m.settle(False)
    assert m.state is S.FAILED and m.info.error is not None and "boom" in m.info.error
    assert any(isinstance(e, ErrorOccurred) and e.source == "result" for e in ev)
    m2 = running()
    m2.interrupted()
    m2.message(result(is_error=True))
    m2.settle(False)
    assert m2.state is S.COMPLETED


def test_turn_end_abandons_calls_still_marked_in_flight() -> None:
    m = running()
    m.control(tools_call("r1", "t1"))
    m.control(permission("p1"))
    m.settle(True)
    assert m.state is S.WAITING_PERMISSION
    m.message(result())
    ev = m.settle(False)
    assert states(ev) == [("waiting_permission", "running"), ("running", "completed")]
    orphan = [e for e in ev if isinstance(e, ToolCallFinished)]
    assert len(orphan) == 1 and orphan[0].is_error
    assert m.info.pending_tool_calls == () and m.info.pending_permissions == ()


def test_pause_keeps_bookkeeping_and_resume_goes_where_the_work_is() -> None:
    m = running()
    m.pause()
    m.control(tools_call("r1", "t1"))
    assert m.settle(True) == [] and m.state is S.PAUSED
    assert m.info.pending_tool_call is not None  # visible while paused
    assert states(m.resume(True)) == [("paused", "waiting_tool_call")]
    m.pause()
    m.control(tools_call("r1", "t1", outcome="ok"))
    m.message(result())
    assert m.settle(False) == [] and m.state is S.PAUSED  # nothing reported while paused
    assert states(m.resume(False)) == [("paused", "completed")]


def test_follow_up_turns_and_session_id_adoption() -> None:
    m = drive_to(S.COMPLETED)
    assert states(m.new_turn()) == [("completed", "running")]
    assert m.new_turn() == []  # mid-turn: joins the turn
    m.message(result())
    m.settle(False)
    assert states(m.cli_state("running")) == [("completed", "running")]
    m.message(SystemMessage("init", {"session_id": "sid-2"}))
    assert m.session_id == "sid-2" and m.info.session_id == "sid-2"
    assert m.info.cli_state == "running"


def test_crash_and_cancel_end_calls_in_flight_as_errors() -> None:
    m = running()
    m.control(tools_call("r1", "t1"))
    m.settle(True)
    ev = m.process_ended(RuntimeError("CLI died"))
    assert states(ev) == [("waiting_tool_call", "failed")]
    assert [e.is_error for e in ev if isinstance(e, ToolCallFinished)] == [True]
    assert m.info.error == "CLI died"
    assert m.process_ended(None) == [] and m.cancel() == []  # terminal
    c = running()
    c.control(permission("p1"))
    c.settle(True)
    assert states(c.cancel()) == [("waiting_permission", "cancelled")]
    done = drive_to(S.COMPLETED)
    assert done.process_ended(None) == [] and done.state is S.COMPLETED


def test_snapshots_are_immutable_and_round_trip() -> None:
    clock = Clock()
    m = running(clock)
    m.control(tools_call("r1", "t1", a=1))
    m.control(permission("p1"))
    m.message(AssistantMessage([TextBlock("hi")], model="m"))
    m.settle(True)
    info = m.info
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.state = S.RUNNING  # type: ignore[misc]
    call = info.pending_tool_call
    assert call is not None
    with pytest.raises(TypeError):
        call.arguments["a"] = 2  # type: ignore[index]
    data = info.to_dict()
    again = SessionStateInfo.from_dict(data)
    assert again.to_dict() == data
    assert again.pending_permission is not None
    assert again.pending_permission.tool_input == {"command": "ls"}
    assert isinstance(again.stats.started_at, datetime)
    assert not again.is_final and drive_to(S.FAILED).info.is_final


def test_split_tool_name() -> None:
    assert split_tool_name("mcp__calc__add") == ("calc", "add")
    assert split_tool_name("mcp__a__b__c") == ("a", "b__c")
    assert split_tool_name("Bash") == (None, "Bash")
    assert split_tool_name("mcp__broken") == (None, "mcp__broken")
