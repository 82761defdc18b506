"""Sessions end to end: the real CLI, the scripted model, in-process tools (seed 004)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ccwire import (
    ClaudeCodeAgent,
    MemorySnapshotStore,
    PermissionResultAllow,
    SessionState,
    SQLiteSnapshotStore,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
    ToolContext,
    ToolPermissionContext,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import ModelRequest, ScriptedModel, StepResult, reply, text, tool_use
from tests.sessions.crash import kill_at_tool_call

from .conftest import CLI_PATH

pytestmark = pytest.mark.anyio

TIMEOUT = 60
S = SessionState


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    await anyio.sleep(0.2)  # a tool that takes a while, so the timings mean something
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}


class Gate:
    """A tool body the test holds open."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = False

    async def run(self) -> None:
        self.started.set()
        try:
            await self.release.wait()
        except BaseException:
            self.cancelled = True
            raise


def gated_server(gate: Gate) -> Any:
    @tool("slow", "A slow job", {"job": str})
    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        await gate.run()
        return {"content": [{"type": "text", "text": f"job {args['job']} done"}]}

    return create_sdk_mcp_server("jobs", tools=[slow])


def changes(session_events: list[Any]) -> list[str]:
    return [e.to_state.value for e in session_events if isinstance(e, StateChanged)]


async def test_state_tracking_run_like_seed_004_10_3(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(
        tool_use("mcp__calc__add", {"a": 100, "b": 50}),
        tool_use("mcp__calc__add", {"a": 150, "b": -25}),
        text("The result is 125."),
    )
    options = make_options(
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        allowed_tools=["mcp__calc__*"],
    )
    seen: list[str] = []
    pending_tools: list[str] = []
    timings: dict[str, float] = {}
    with anyio.fail_after(TIMEOUT):
        async with ClaudeCodeAgent(options, store=MemorySnapshotStore()) as agent:
            session = agent.create_session("Calculate 100 + 50, then subtract 25")

            def on_state(ev: StateChanged) -> None:
                seen.append(f"{ev.from_state.value}->{ev.to_state.value}")
                if ev.to_state is S.WAITING_TOOL_CALL and ev.info.pending_tool_call:
                    pending_tools.append(ev.info.pending_tool_call.tool_name)

            session.on("state_change", on_state)
            session.on("tool_result", lambda ev: timings.update({ev.tool_use_id: ev.duration_s}))
            await session.start()
            final = await session.wait_for_completion(TIMEOUT)
            await session.close()
    events = [e async for e in session.events()]
    assert changes(events) == [
        "starting",
        "running",
        "waiting_tool_call",
        "running",
        "waiting_tool_call",
        "running",
        "completed",
    ]
    assert seen[0] == "idle->starting" and seen[-1] == "running->completed"
    assert pending_tools == ["mcp__calc__add", "mcp__calc__add"]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [dict(e.arguments) for e in started] == [{"a": 100, "b": 50}, {"a": 150, "b": -25}]
    assert [e.tool_use_id for e in finished] == [e.tool_use_id for e in started]
    assert all(d >= 0.2 for d in timings.values()) and len(timings) == 2
    assert final.state is S.COMPLETED and final.result == "The result is 125."
    assert final.stats.tool_call_count == 2
    assert final.stats.tools["mcp__calc__add"].call_count == 2
    assert final.stats.tools["mcp__calc__add"].total_duration_s >= 0.4
    assert final.stats.total_cost_usd is not None and final.stats.total_cost_usd > 0
    assert final.stats.usage["output_tokens"] > 0
    assert final.stats.completed_at is not None and final.stats.started_at is not None
    assert final.session_id == session.session_id


async def test_waiting_permission_with_a_slow_can_use_tool(
    model: ScriptedModel, make_options: Any
) -> None:
    deciding = anyio.Event()
    decide = anyio.Event()

    async def can_use_tool(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        deciding.set()
        await decide.wait()
        return PermissionResultAllow()

    model.add(tool_use("mcp__calc__add", {"a": 1, "b": 2}), text("3"))
    options = make_options(
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        can_use_tool=can_use_tool,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeCodeAgent(options, store=False) as agent:
            session = await agent.start_session("add 1 and 2")
            await deciding.wait()
            with anyio.fail_after(5):
                while session.state is not S.WAITING_PERMISSION:
                    await anyio.wait_all_tasks_blocked()
            info = session.get_state()
            assert info.pending_permission is not None
            assert info.pending_permission.tool_name == "mcp__calc__add"
            assert dict(info.pending_permission.tool_input) == {"a": 1, "b": 2}
            decide.set()
            final = await session.wait_for_completion(TIMEOUT)
    events = [e async for e in session.events()]
    assert changes(events)[2:] == [
        "waiting_permission",
        "running",
        "waiting_tool_call",
        "running",
        "completed",
    ]
    assert final.result == "3"


async def test_pause_and_resume_around_a_slow_tool(model: ScriptedModel, make_options: Any) -> None:
    gate = Gate()
    model.add(tool_use("mcp__jobs__slow", {"job": "A"}), text("all done"))
    options = make_options(
        mcp_servers={"jobs": gated_server(gate)}, allowed_tools=["mcp__jobs__slow"]
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeCodeAgent(options, store=False) as agent:
            session = await agent.start_session("run job A")
            await gate.started.wait()
            await session.pause()
            gate.release.set()  # the tool finishes, but its answer is held back
            with pytest.raises(TimeoutError):
                await anyio.to_thread.run_sync(model.wait_for_turns, 2, 1.0)
            assert session.state is S.PAUSED and len(model.turn_requests) == 1
            assert session.get_state().pending_tool_call is not None
            await session.resume()
            final = await session.wait_for_completion(TIMEOUT)
    events = [e async for e in session.events()]
    assert changes(events)[2:] == [
        "waiting_tool_call",
        "paused",
        "waiting_tool_call",
        "running",
        "completed",
    ]
    assert final.result == "all done"
    assert model.turn_requests[1].tool_results()[0].content == "job A done"
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1 and finished[0].duration_s >= 1.0 and not finished[0].is_error


async def test_cancel_mid_tool_call(model: ScriptedModel, make_options: Any) -> None:
    gate = Gate()
    model.add(tool_use("mcp__jobs__slow", {"job": "B"}))
    options = make_options(
        mcp_servers={"jobs": gated_server(gate)}, allowed_tools=["mcp__jobs__slow"]
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeCodeAgent(options, store=False) as agent:
            session = await agent.start_session("run job B")
            await gate.started.wait()
            assert session.state is S.WAITING_TOOL_CALL
            await session.cancel()
            assert session.get_state().state is S.CANCELLED and session.closed
            assert agent.sessions() == []
    assert gate.cancelled
    events = [e async for e in session.events()]
    assert changes(events)[-2:] == ["waiting_tool_call", "cancelled"]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1 and finished[0].is_error
    # the model call that asked for the tool was paid: the interrupted turn's result says so
    stats = session.get_state().stats
    assert stats.total_cost_usd is not None and stats.total_cost_usd > 0
    assert stats.turn_count == 1


async def test_resume_after_the_python_process_is_killed(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    model.add(tool_use("mcp__jobs__slow", {"job": "C"}))
    model.default = text("The word was PAPAYA.")  # the orphaned CLI's last turn, and ours
    options = make_options(allowed_tools=["mcp__jobs__slow"])
    db = tmp_path / "sessions.sqlite3"
    assert options.cwd is not None and CLI_PATH is not None
    spec = {"kind": "snapshots", "where": str(db)}
    sid = await kill_at_tool_call(CLI_PATH, str(options.cwd), spec, options.env, TIMEOUT)

    store = SQLiteSnapshotStore(db)
    crashed = await store.load(sid)
    assert crashed is not None and crashed.state is S.WAITING_TOOL_CALL
    assert crashed.pending_tool_call is not None
    assert crashed.pending_tool_call.tool_name == "mcp__jobs__slow"
    assert crashed.project_path == str(await anyio.Path(str(options.cwd)).resolve())

    with anyio.fail_after(TIMEOUT):
        async with ClaudeCodeAgent(options, store=store) as agent:
            session = await agent.resume_session(sid, "What was the word?")
            final = await session.wait_for_completion(TIMEOUT)
    assert final.state is S.COMPLETED and final.result == "The word was PAPAYA."
    assert final.session_id == sid and final.resumed_from == sid
    assert final.stats.message_count > crashed.stats.message_count  # carried over
    history = json.dumps(model.turn_requests[-1].body["messages"])
    assert "Remember the word PAPAYA" in history and "What was the word?" in history
    saved = await store.load(sid)
    assert saved is not None and saved.state is S.COMPLETED


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # ten CLIs are slow; once is enough
async def test_ten_concurrent_sessions_share_one_server(
    model: ScriptedModel, make_options: Any
) -> None:
    seen: list[tuple[str | None, str]] = []

    @tool("whoami", "Which session is calling", {"tag": str})
    async def whoami(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        seen.append((ctx.session_id, args["tag"]))
        await anyio.sleep(0.05)
        return {"content": [{"type": "text", "text": f"{args['tag']}:{ctx.session_id}"}]}

    def step(request: ModelRequest) -> StepResult:
        results = request.tool_results()
        if results:
            return text(f"done {results[0].content}")
        tag = (request.last_user_text() or "").split()[-1]
        return reply(tool_use("mcp__shared__whoami", {"tag": tag}))

    model.default = step
    server = create_sdk_mcp_server("shared", tools=[whoami])
    options = make_options(
        mcp_servers={"shared": server},
        allowed_tools=["mcp__shared__whoami"],
        initialize_timeout=180,  # ten CLIs starting at once on a small, busy machine
    )
    finals: dict[str, Any] = {}
    with anyio.fail_after(TIMEOUT * 4):
        async with ClaudeCodeAgent(options, store=MemorySnapshotStore()) as agent:

            async def one(i: int) -> None:
                session = await agent.start_session(f"identify yourself as s{i}")
                finals[f"s{i}"] = await session.wait_for_completion(TIMEOUT * 3)

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(one, i)
            assert len(agent.sessions()) == 10
            store_list = await agent.store.list() if agent.store else []
    assert agent.sessions() == []
    assert sorted(finals) == sorted(f"s{i}" for i in range(10))
    for tag, info in finals.items():
        assert info.state is S.COMPLETED and info.stats.tool_call_count == 1
        assert info.result == f"done {tag}:{info.session_id}"
    assert sorted(seen, key=lambda x: x[1]) == sorted(
        ((info.session_id, tag) for tag, info in finals.items()), key=lambda x: x[1]
    )
    assert len({sid for sid, _ in seen}) == 10
    assert len(store_list) == 10


async def test_a_resumed_session_counts_each_process_cost_once(
    model: ScriptedModel, make_options: Any
) -> None:
    # the CLI restores a session's cost on --resume (and --fork-session): its totals count
    # the earlier processes, which the session's stats already hold
    model.default = text("noted")
    costs: list[float | None] = []
    with anyio.fail_after(TIMEOUT):
        async with ClaudeCodeAgent(make_options(), store=MemorySnapshotStore()) as agent:
            first = agent.create_session("one")
            await first.start()
            done = await first.wait_for_completion(TIMEOUT)
            await first.close()
            for fork in (False, True):
                session = await agent.resume_session(done.session_id, "two", fork=fork)
                final = await session.wait_for_completion(TIMEOUT)
                await session.close()
                assert session.last_result is not None
                costs.append(session.last_result.total_cost_usd)
                costs.append(final.stats.total_cost_usd)
    turn = done.stats.total_cost_usd
    assert turn is not None and turn > 0
    # the CLI's totals: 2 turns on resume, 3 on the fork of the resumed session
    assert costs[0] == pytest.approx(2 * turn) and costs[2] == pytest.approx(3 * turn)
    assert costs[1] == pytest.approx(2 * turn)  # the resumed session: both turns, once
    assert costs[3] == pytest.approx(turn)  # the fork: its own turn (its stats start anew)
