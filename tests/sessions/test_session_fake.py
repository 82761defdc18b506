"""Sessions over the in-memory fake CLI: every documented transition driven by real
protocol traffic, failure paths, cancel in every state, pause/resume, callbacks, limits."""

from __future__ import annotations

import os
import socket
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    ErrorOccurred,
    HookMatcher,
    MemorySnapshotStore,
    MessageReceived,
    PermissionRequested,
    PermissionResultAllow,
    ProcessError,
    ResultMessage,
    Session,
    SessionCompleted,
    SessionEvent,
    SessionState,
    SessionStateError,
    SessionStateInfo,
    SessionStats,
    SessionTimeoutError,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
    ToolContext,
    ToolPermissionContext,
    UnknownEventError,
    create_sdk_mcp_server,
    tool,
)
from ccwire._core.errors import SessionInUseError
from ccwire._sessions import events as session_events
from ccwire._sessions.owner import session_liveness
from ccwire._sessions.state import SessionOwner
from ccwire._transport.base import Transport
from ccwire.testing import FakeCLI, memory_transport_pair

pytestmark = pytest.mark.anyio

S = SessionState
NO_SUCH_PID = 2**22 + 1  # above any pid_max: no process has it


class RecordingStore(MemorySnapshotStore):
    """Remembers every snapshot saved, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[SessionStateInfo] = []
        self._saved = anyio.Event()

    async def save(self, info: SessionStateInfo) -> None:
        self.saved.append(info)
        await super().save(info)
        self._saved.set()
        self._saved = anyio.Event()

    async def until(self, check: Callable[[SessionStateInfo], bool]) -> SessionStateInfo:
        """Wait (bounded) until the last snapshot saved passes ``check``; returns it."""
        with anyio.fail_after(5):
            while not (self.saved and check(self.saved[-1])):
                await self._saved.wait()
        return self.saved[-1]


def in_flight(info: SessionStateInfo) -> list[str]:
    return [c.tool_use_id for c in info.pending_tool_calls]


class Blocker:
    """A tool handler (or permission callback) that runs until the test releases it."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = False
        self.contexts: list[ToolContext] = []

    async def wait(self) -> None:
        self.started.set()
        try:
            await self.release.wait()
        except BaseException:
            self.cancelled = True
            raise


class Harness:
    """Makes one FakeCLI per session; answers ``initialize`` unless told not to."""

    def __init__(self, tg: anyio.abc.TaskGroup, handshake: bool) -> None:
        self.tg = tg
        self.handshake = handshake
        self.fakes: list[FakeCLI] = []
        self.options: list[ClaudeAgentOptions] = []

    def factory(self, options: ClaudeAgentOptions) -> Transport:
        self.options.append(options)
        transport, peer = memory_transport_pair()
        fake = FakeCLI(peer)
        self.fakes.append(fake)
        if self.handshake:
            self.tg.start_soon(fake.handshake)
        return transport


@asynccontextmanager
async def harness(
    options: ClaudeAgentOptions | None = None,
    *,
    handshake: bool = True,
    store: MemorySnapshotStore | None = None,
    **agent_kw: Any,
) -> AsyncIterator[tuple[ClaudeCodeAgent, Harness]]:
    async with anyio.create_task_group() as tg:
        h = Harness(tg, handshake)
        agent = ClaudeCodeAgent(
            options or ClaudeAgentOptions(),
            store=store if store is not None else MemorySnapshotStore(),
            transport_factory=h.factory,
            **agent_kw,
        )
        with anyio.fail_after(20):
            async with agent:
                yield agent, h


async def start(agent: ClaudeCodeAgent, h: Harness) -> tuple[Session, FakeCLI, dict[str, Any]]:
    session = await agent.start_session("hi")
    fake = h.fakes[-1]
    prompt = await fake.receive("user")
    return session, fake, prompt


async def reach(session: Session, state: SessionState) -> None:
    """Wait (bounded) until the session is in ``state``."""
    with anyio.fail_after(5):
        async for _ in session.events():
            if session.state is state:
                return
    raise AssertionError(f"the session closed in {session.state.value}, never {state.value}")


async def all_events(session: Session) -> list[SessionEvent]:
    """Every event, once the session is closed (bounded)."""
    with anyio.fail_after(10):
        return [e async for e in session.events()]


def transitions(events: list[SessionEvent]) -> list[str]:
    return [
        f"{e.from_state.value}->{e.to_state.value}" for e in events if isinstance(e, StateChanged)
    ]


async def call_tool(fake: FakeCLI, tool_use_id: str, name: str, **args: Any) -> str:
    """Send a ``tools/call`` for server ``calc`` without waiting for the answer."""
    message = {
        "jsonrpc": "2.0",
        "id": len(fake.received) + 100,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": args,
            "_meta": {"claudecode/toolUseId": tool_use_id, "progressToken": 1},
        },
    }
    return await fake.start_request("mcp_message", server_name="calc", message=message)


def calc_options(*blockers: Blocker, **kw: Any) -> ClaudeAgentOptions:
    tools = []
    for i, blocker in enumerate(blockers):

        def make(b: Blocker, name: str) -> Any:
            @tool(name, "Add two numbers (slowly)", {"a": int, "b": int})
            async def handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
                b.contexts.append(ctx)
                await b.wait()
                return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

            return handler

        tools.append(make(blocker, f"add{i}"))
    return ClaudeAgentOptions(
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=tools)}, **kw
    )


async def finish_turn(fake: FakeCLI, *uuids: str, text: str = "done") -> None:
    await fake.assistant({"type": "text", "text": text})
    await fake.result(text, user_message_uuids=list(uuids))
    await fake.state("idle")


# ---------------------------------------------------------------- transitions


async def test_tool_call_round_trip_follows_the_diagram_and_is_persisted() -> None:
    add = Blocker()
    store = RecordingStore()
    async with harness(calc_options(add), store=store) as (agent, h):
        session, fake, p = await start(agent, h)
        assert session.state is S.RUNNING
        await fake.state("running")
        await fake.init(["mcp__calc__add0"])
        use = {"type": "tool_use", "id": "toolu_1", "name": "mcp__calc__add0", "input": {}}
        await fake.assistant(use)
        rid = await call_tool(fake, "toolu_1", "add0", a=1, b=2)
        await reach(session, S.WAITING_TOOL_CALL)
        pending = session.get_state().pending_tool_call
        assert pending is not None
        assert (pending.tool_use_id, pending.tool_name, pending.server_name) == (
            "toolu_1",
            "mcp__calc__add0",
            "calc",
        )
        assert dict(pending.arguments) == {"a": 1, "b": 2}
        add.release.set()
        answer = await fake.response_to(rid)
        assert answer["response"]["mcp_response"]["result"]["content"][0]["text"] == "3"
        await reach(session, S.RUNNING)
        await fake.tool_result("toolu_1", [{"type": "text", "text": "3"}])
        await finish_turn(fake, p["uuid"], text="1 + 2 = 3")
        info = await session.wait_for_completion(5)
        messages = [m async for m in session.messages()]
        sid = session.session_id
    events = await all_events(session)
    assert transitions(events) == [
        "idle->starting",
        "starting->running",
        "running->waiting_tool_call",
        "waiting_tool_call->running",
        "running->completed",
    ]
    assert [s.state.value for s in store.saved] == [
        "starting",
        "running",
        "waiting_tool_call",
        "running",
        "completed",
    ]
    assert info.state is S.COMPLETED and info.result == "1 + 2 = 3"
    assert info.stats.tool_call_count == 1 and info.stats.tools["mcp__calc__add0"].call_count == 1
    assert info.stats.total_cost_usd == pytest.approx(0.0012)
    assert info.stats.message_count == len(messages) == 5  # init, use, result, text, result
    assert isinstance(messages[-1], ResultMessage)
    assert [
        type(e).__name__ for e in events if isinstance(e, (ToolCallStarted, ToolCallFinished))
    ] == [
        "ToolCallStarted",
        "ToolCallFinished",
    ]
    done = [e for e in events if isinstance(e, SessionCompleted)]
    assert len(done) == 1 and done[0].info.state is S.COMPLETED
    assert add.contexts[0].session_id == "00000000-0000-4000-8000-000000000000"  # the CLI's id
    assert (await store.load(sid)) is not None


async def test_concurrent_calls_and_permissions_are_all_tracked() -> None:
    a, c = Blocker(), Blocker()
    decide = Blocker()

    async def can_use_tool(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        await decide.wait()
        return PermissionResultAllow()

    async with harness(calc_options(a, c, can_use_tool=can_use_tool)) as (agent, h):
        session, fake, p = await start(agent, h)
        rid_a = await call_tool(fake, "toolu_a", "add0", a=1, b=1)
        await reach(session, S.WAITING_TOOL_CALL)
        rid_p = await fake.start_request(
            "can_use_tool", tool_name="mcp__calc__add1", input={"a": 2}, tool_use_id="toolu_c"
        )
        await reach(session, S.WAITING_PERMISSION)
        perm = session.get_state().pending_permission
        assert perm is not None
        assert (perm.request_id, perm.tool_name, dict(perm.tool_input)) == (
            rid_p,
            "mcp__calc__add1",
            {"a": 2},
        )
        decide.release.set()
        assert (await fake.response_to(rid_p))["response"]["behavior"] == "allow"
        await reach(session, S.WAITING_TOOL_CALL)
        rid_c = await call_tool(fake, "toolu_c", "add1", a=2, b=2)
        await c.started.wait()
        assert [t.tool_use_id for t in session.get_state().pending_tool_calls] == [
            "toolu_a",
            "toolu_c",
        ]
        c.release.set()
        await fake.response_to(rid_c)
        assert session.state is S.WAITING_TOOL_CALL  # toolu_a is still running
        a.release.set()
        await fake.response_to(rid_a)
        await reach(session, S.RUNNING)
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
    events = await all_events(session)
    assert transitions(events)[2:] == [
        "running->waiting_tool_call",
        "waiting_tool_call->waiting_permission",
        "waiting_permission->waiting_tool_call",
        "waiting_tool_call->running",
        "running->completed",
    ]
    asked = [e for e in events if isinstance(e, PermissionRequested)]
    assert [(e.tool_name, e.tool_use_id) for e in asked] == [("mcp__calc__add1", "toolu_c")]
    finished = [e.tool_use_id for e in events if isinstance(e, ToolCallFinished)]
    assert finished == ["toolu_c", "toolu_a"]
    assert session.get_state().stats.tool_call_count == 2


async def test_a_parallel_call_starting_or_finishing_updates_the_stored_snapshot() -> None:
    a, b = Blocker(), Blocker()
    store = RecordingStore()
    async with harness(calc_options(a, b), store=store) as (agent, h):
        session, fake, p = await start(agent, h)
        sid = session.session_id
        rid_a = await call_tool(fake, "toolu_a", "add0", a=1, b=1)
        await store.until(lambda i: in_flight(i) == ["toolu_a"])
        rid_b = await call_tool(fake, "toolu_b", "add1", a=2, b=2)
        both = await store.until(lambda i: in_flight(i) == ["toolu_a", "toolu_b"])
        assert both.state is S.WAITING_TOOL_CALL  # no transition, yet saved
        assert await store.load(sid) == both  # what a crash now would leave behind
        b.release.set()
        await fake.response_to(rid_b)
        one = await store.until(lambda i: in_flight(i) == ["toolu_a"])
        assert one.state is S.WAITING_TOOL_CALL and one.stats.tool_call_count == 1
        assert one.stats.tools["mcp__calc__add1"].call_count == 1
        a.release.set()
        await fake.response_to(rid_a)
        await store.until(lambda i: i.state is S.RUNNING)
        fake.session_id = sid
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
    assert [(i.state.value, in_flight(i)) for i in store.saved] == [
        ("starting", []),
        ("running", []),
        ("waiting_tool_call", ["toolu_a"]),
        ("waiting_tool_call", ["toolu_a", "toolu_b"]),
        ("waiting_tool_call", ["toolu_a"]),
        ("running", []),
        ("completed", []),
    ]
    assert store.saved[-1].stats.tool_call_count == 2


async def test_permission_alone_running_waiting_permission_running() -> None:
    decide = Blocker()

    async def slow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await decide.wait()
        return PermissionResultAllow()

    async with harness(ClaudeAgentOptions(can_use_tool=slow)) as (agent, h):
        session, fake, p = await start(agent, h)
        rid = await fake.start_request("can_use_tool", tool_name="Bash", input={"command": "ls"})
        await reach(session, S.WAITING_PERMISSION)
        decide.release.set()
        await fake.response_to(rid)
        await reach(session, S.RUNNING)
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
    assert transitions(await all_events(session))[2:] == [
        "running->waiting_permission",
        "waiting_permission->running",
        "running->completed",
    ]


async def test_pause_while_a_tool_call_is_in_flight_holds_answer_and_input() -> None:
    add = Blocker()
    async with harness(calc_options(add)) as (agent, h):
        session, fake, p = await start(agent, h)
        rid = await call_tool(fake, "toolu_1", "add0", a=2, b=3)
        await reach(session, S.WAITING_TOOL_CALL)
        await session.pause()
        assert session.state is S.PAUSED
        assert session.get_state().pending_tool_call is not None
        add.release.set()
        await anyio.wait_all_tasks_blocked()  # the answer is ready, and held at the gate
        with anyio.fail_after(1):
            await session.send("and then?")  # queued: returns at once while paused

        async with anyio.create_task_group() as tg:  # an ungated request shows the order
            tg.start_soon(session.interrupt)
            req = await fake.receive("control_request", "interrupt")
            await fake.respond(req["request_id"], {"still_queued": []})
        written = list(fake.received)
        assert not any(f.get("type") == "control_response" for f in written[written.index(req) :])
        assert not any(f.get("response", {}).get("request_id") == rid for f in written)
        assert sum(f.get("type") == "user" for f in written) == 1
        assert session.state is S.PAUSED

        await session.resume()
        answer = await fake.response_to(rid)
        second = await fake.receive("user")
        assert answer["response"]["mcp_response"]["result"]["content"][0]["text"] == "5"
        order = [f for f in fake.received if f is second or f.get("response") is not None]
        assert order.index(second) > next(
            i for i, f in enumerate(order) if f.get("response", {}).get("request_id") == rid
        )
        await reach(session, S.RUNNING)
        await finish_turn(fake, p["uuid"], second["uuid"])
        await session.wait_for_completion(5)
    assert transitions(await all_events(session))[2:] == [
        "running->waiting_tool_call",
        "waiting_tool_call->paused",
        "paused->waiting_tool_call",
        "waiting_tool_call->running",
        "running->completed",
    ]


async def test_pause_from_running_and_waiting_permission_and_a_turn_ending_while_paused() -> None:
    decide = Blocker()

    async def slow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await decide.wait()
        return PermissionResultAllow()

    async with harness(ClaudeAgentOptions(can_use_tool=slow)) as (agent, h):
        session, fake, p = await start(agent, h)
        await session.pause()
        await session.pause()  # a no-op
        await session.resume()
        assert session.state is S.RUNNING
        rid = await fake.start_request("can_use_tool", tool_name="Bash", input={})
        await reach(session, S.WAITING_PERMISSION)
        await session.pause()
        await session.resume()
        assert session.get_state().state is S.WAITING_PERMISSION
        decide.release.set()
        await fake.response_to(rid)
        await reach(session, S.RUNNING)
        await session.pause()
        await finish_turn(fake, p["uuid"])  # the model answered without needing us
        await anyio.wait_all_tasks_blocked()
        assert session.get_state().state is S.PAUSED
        await session.resume()
        assert session.get_state().state is S.COMPLETED
        with pytest.raises(SessionStateError):
            await session.pause()
    assert transitions(await all_events(session))[2:] == [
        "running->paused",
        "paused->running",
        "running->waiting_permission",
        "waiting_permission->paused",
        "paused->waiting_permission",
        "waiting_permission->running",
        "running->paused",
        "paused->completed",
    ]


async def test_pause_holds_permission_decisions_and_hook_answers_then_releases_in_order() -> None:
    ran: list[str] = []

    async def allow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        ran.append(f"permission {name}")
        return PermissionResultAllow()

    async def pre_tool_use(inp: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        ran.append(f"hook {tool_use_id}")
        return {"continue_": True}

    options = ClaudeAgentOptions(
        can_use_tool=allow, hooks={"PreToolUse": [HookMatcher(hooks=[pre_tool_use])]}
    )
    async with harness(options) as (agent, h):
        session, fake, p = await start(agent, h)
        await session.pause()

        async def held(count: int) -> None:
            with anyio.fail_after(5):  # the callback ran; its answer waits at the gate
                while len(ran) < count:
                    await anyio.wait_all_tasks_blocked()
            await anyio.wait_all_tasks_blocked()

        rid_perm = await fake.start_request(
            "can_use_tool", tool_name="Bash", input={"command": "ls"}, tool_use_id="toolu_1"
        )
        await held(1)
        rid_hook = await fake.start_request(
            "hook_callback",
            callback_id="hook_0",
            input={"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}},
            tool_use_id="toolu_2",
        )
        await held(2)
        with anyio.fail_after(1):
            await session.send("and then?")  # queued behind the two answers
        assert ran == ["permission Bash", "hook toolu_2"]

        async with anyio.create_task_group() as tg:  # an ungated request shows the order
            tg.start_soon(session.interrupt)
            req = await fake.receive("control_request", "interrupt")
            await fake.respond(req["request_id"], {"still_queued": []})
        written = list(fake.received)
        answered = {f.get("response", {}).get("request_id") for f in written}
        assert rid_perm not in answered and rid_hook not in answered
        assert sum(f.get("type") == "user" for f in written) == 1  # only the first prompt
        info = session.get_state()
        assert info.state is S.PAUSED
        assert info.pending_permission is not None
        assert info.pending_permission.request_id == rid_perm

        await session.resume()
        perm = await fake.response_to(rid_perm)
        hook = await fake.response_to(rid_hook)
        second = await fake.receive("user")
        assert perm["response"]["behavior"] == "allow"
        assert hook["response"] == {"continue": True}
        frames = fake.received
        positions = [
            next(i for i, f in enumerate(frames) if f.get("response", {}).get("request_id") == r)
            for r in (rid_perm, rid_hook)
        ] + [frames.index(second)]
        assert positions == sorted(positions)  # released in the order they were held
        assert second["message"]["content"] == "and then?"
        await reach(session, S.RUNNING)
        await finish_turn(fake, p["uuid"], second["uuid"])
        await session.wait_for_completion(5)
    assert transitions(await all_events(session))[2:] == [
        "running->paused",
        "paused->waiting_permission",
        "waiting_permission->running",
        "running->completed",
    ]


async def test_follow_up_turns_and_a_turn_the_cli_starts_itself() -> None:
    async with harness() as (agent, h):
        session, fake, p = await start(agent, h)
        await fake.state("running")
        await finish_turn(fake, p["uuid"], text="one")
        first = [m async for m in session.messages()]
        assert isinstance(first[-1], ResultMessage) and first[-1].result == "one"

        async def cli_side() -> None:
            p2 = await fake.receive("user")
            await fake.state("running")
            await finish_turn(fake, p2["uuid"], text="two")

        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            await session.send("second")
            assert session.state is S.RUNNING
            second = [m async for m in session.messages()]
        assert isinstance(second[-1], ResultMessage) and second[-1].result == "two"
        await fake.state("running")  # e.g. a background task woke the CLI up
        await reach(session, S.RUNNING)
        await fake.result("three")
        await fake.state("idle")
        info = await session.wait_for_completion(5)
        assert info.result == "three" and info.stats.turn_count == 3
    assert transitions(await all_events(session))[2:] == [
        "running->completed",
        "completed->running",
        "running->completed",
        "completed->running",
        "running->completed",
    ]


async def test_built_in_tools_are_tracked_from_tool_use_to_tool_result() -> None:
    async with harness() as (agent, h):
        session, fake, p = await start(agent, h)
        await fake.assistant(
            {"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "ls"}}
        )
        await reach(session, S.WAITING_TOOL_CALL)
        call = session.get_state().pending_tool_call
        assert call is not None and (call.tool_name, call.server_name) == ("Bash", None)
        await fake.tool_result("toolu_b", "a.txt", is_error=True)
        await reach(session, S.RUNNING)
        await finish_turn(fake, p["uuid"])
        info = await session.wait_for_completion(5)
    assert info.stats.tools["Bash"].error_count == 1


async def test_error_result_fails_and_interrupt_completes() -> None:
    async with harness() as (agent, h):
        session, fake, _ = await start(agent, h)
        await fake.result("API down", is_error=True, subtype="error_during_execution")
        await fake.state("idle")
        info = await session.wait_for_completion(5)
        assert info.state is S.FAILED and info.error is not None and "API down" in info.error
        events = await all_events(session)  # a failed session closes itself
        assert any(isinstance(e, ErrorOccurred) and e.source == "result" for e in events)
        with pytest.raises(SessionStateError):
            await session.send("more")

        other, fake2, _ = await start(agent, h)
        async with anyio.create_task_group() as tg:
            tg.start_soon(other.interrupt)
            req = await fake2.receive("control_request", "interrupt")
            await fake2.respond(req["request_id"], {"still_queued": []})
        await fake2.result("", is_error=True, subtype="error_during_execution")
        await fake2.state("idle")
        assert (await other.wait_for_completion(5)).state is S.COMPLETED
        assert not other.closed  # usable: a follow-up turn follows

        async with anyio.create_task_group() as tg:
            tg.start_soon(other.send, "try again")
            p2 = await fake2.receive("user")
        assert p2["message"]["content"] == "try again"
        assert other.state is S.RUNNING
        await fake2.state("running")
        await finish_turn(fake2, p2["uuid"], text="second time lucky")
        info = await other.wait_for_completion(5)
        assert info.state is S.COMPLETED and info.result == "second time lucky"
        assert info.stats.turn_count == 2
    assert transitions(await all_events(other))[2:] == [
        "running->completed",
        "completed->running",
        "running->completed",
    ]


# ------------------------------------------------------------------- failures


@pytest.mark.parametrize("where", ["running", "waiting_tool_call", "waiting_permission", "paused"])
async def test_cli_crash_fails_the_session(where: str) -> None:
    add = Blocker()
    decide = Blocker()

    async def slow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await decide.wait()
        return PermissionResultAllow()

    async with harness(calc_options(add, can_use_tool=slow)) as (agent, h):
        session, fake, _ = await start(agent, h)
        if where == "waiting_tool_call":
            await call_tool(fake, "toolu_1", "add0", a=1, b=1)
        elif where == "waiting_permission":
            await fake.start_request("can_use_tool", tool_name="Bash", input={})
        elif where == "paused":
            await session.pause()
        await reach(session, SessionState(where))
        await fake.exit(3, "segfault")
        info = await session.wait_for_completion(5)
        events = await all_events(session)
    assert info.state is S.FAILED and info.error is not None and "segfault" in info.error
    assert transitions(events)[-1] == f"{where}->failed"
    errors = [e for e in events if isinstance(e, ErrorOccurred)]
    assert [e.source for e in errors] == ["cli"] and isinstance(errors[0].error, ProcessError)
    if where == "waiting_tool_call":
        finished = [e for e in events if isinstance(e, ToolCallFinished)]
        assert len(finished) == 1 and finished[0].is_error
        assert add.cancelled
    assert session.closed and agent.sessions() == []


async def test_cli_dying_during_start_fails_the_session_and_raises() -> None:
    store = RecordingStore()
    async with harness(handshake=False, store=store) as (agent, h):
        session = agent.create_session("hi")
        fake = h.fakes[-1]

        async def die() -> None:
            await fake.receive("control_request", "initialize")
            await fake.exit(1, "Error: bad flag")

        async with anyio.create_task_group() as tg:
            tg.start_soon(die)
            with pytest.raises(ProcessError):
                await session.start()
    assert session.state is S.FAILED and session.closed
    assert transitions(await all_events(session)) == ["idle->starting", "starting->failed"]
    assert [s.state.value for s in store.saved] == ["starting", "failed"]


async def test_start_session_whose_caller_is_cancelled_cancels_the_session() -> None:
    store = RecordingStore()
    async with harness(handshake=False, store=store) as (agent, h):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.start_session, "hi")
                await anyio.wait_all_tasks_blocked()
                await h.fakes[-1].receive("control_request", "initialize")  # never answered
                scope.cancel()
        # nobody holds the session: it must not start later for nobody, nor keep its CLI
        assert agent.sessions() == [] and h.fakes[-1].peer.stdin_closed
    assert [s.state.value for s in store.saved] == ["starting", "cancelled"]


# ------------------------------------------------------------ cancel, any state


async def answer_interrupt(fake: FakeCLI, cost: float = 0.0012) -> None:
    """As the CLI 2.1.330 does: the answer, then the interrupted turn's result."""
    req = await fake.receive("control_request", "interrupt")
    await fake.respond(req["request_id"], {"still_queued": []})
    await anyio.wait_all_tasks_blocked()  # the result comes later (~15 ms): cancel() waits
    await fake.result(None, is_error=True, subtype="error_during_execution",  # type: ignore[arg-type]
                      total_cost_usd=cost)  # fmt: skip
    await fake.state("idle")


async def test_cancel_mid_turn_keeps_what_the_turn_cost() -> None:
    add = Blocker()
    store = RecordingStore()
    async with harness(calc_options(add), store=store) as (agent, h):
        session, fake, _ = await start(agent, h)
        await call_tool(fake, "toolu_1", "add0", a=1, b=1)
        await reach(session, S.WAITING_TOOL_CALL)

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_interrupt, fake, 0.25)
            await session.cancel()
    assert session.state is S.CANCELLED
    assert session.get_state().stats.total_cost_usd == pytest.approx(0.25)
    assert session.get_state().stats.turn_count == 1
    saved = store.saved[-1]
    assert saved.state is S.CANCELLED and saved.stats.total_cost_usd == pytest.approx(0.25)


async def test_a_second_cancel_waits_for_the_first_to_count_the_interrupted_turn() -> None:
    async with harness() as (agent, h):
        session, fake, _ = await start(agent, h)
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.cancel)
            req = await fake.receive("control_request", "interrupt")
            assert session.state is S.CANCELLED
            tg.start_soon(session.cancel)  # closing at once would lose the interrupted turn
            await anyio.wait_all_tasks_blocked()
            await fake.respond(req["request_id"], {"still_queued": []})
            await fake.result(None, is_error=True, subtype="error_during_execution",  # type: ignore[arg-type]
                              total_cost_usd=0.25)  # fmt: skip
            await fake.state("idle")
    stats = session.get_state().stats
    assert stats.total_cost_usd == pytest.approx(0.25) and stats.turn_count == 1
    assert session.closed


async def test_cancel_whose_caller_is_cancelled_still_releases_the_cli() -> None:
    async with harness() as (agent, h):
        session, fake, _ = await start(agent, h)

        async def cancel_the_caller(scope: anyio.CancelScope) -> None:
            await fake.receive("control_request", "interrupt")  # never answered
            scope.cancel()

        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_the_caller, scope)
                await session.cancel()
        assert session.state is S.CANCELLED
        with anyio.fail_after(5):  # without close(): the cancelled session lets its CLI go
            while not session.closed:
                await anyio.wait_all_tasks_blocked()
        assert fake.peer.stdin_closed and agent.sessions() == []


@pytest.mark.parametrize("state", [s.value for s in SessionState])
async def test_cancel_works_in_every_state(state: str) -> None:
    target = SessionState(state)
    add = Blocker()
    decide = Blocker()

    async def slow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await decide.wait()
        return PermissionResultAllow()

    handshake = target not in (S.IDLE, S.STARTING)
    async with harness(calc_options(add, can_use_tool=slow), handshake=handshake) as (agent, h):
        if target is S.IDLE:
            session = agent.create_session("hi")
        elif target is S.STARTING:
            session = agent.create_session("hi")
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.start)
                await h.fakes[-1].receive("control_request", "initialize")  # never answered
                assert session.state is S.STARTING
                await session.cancel()
        else:
            session, fake, p = await start(agent, h)
            if target is S.WAITING_TOOL_CALL:
                await call_tool(fake, "toolu_1", "add0", a=1, b=1)
            elif target is S.WAITING_PERMISSION:
                await fake.start_request("can_use_tool", tool_name="Bash", input={})
            elif target is S.PAUSED:
                await session.pause()
            elif target is S.COMPLETED:
                await finish_turn(fake, p["uuid"])
            elif target is S.FAILED:
                await fake.exit(2)
            elif target is S.CANCELLED:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(answer_interrupt, fake)
                    await session.cancel()
            await reach(session, target)
        if target is not S.STARTING:
            async with anyio.create_task_group() as tg:
                if target in (S.RUNNING, S.WAITING_TOOL_CALL, S.WAITING_PERMISSION, S.PAUSED):
                    tg.start_soon(answer_interrupt, h.fakes[-1])
                await session.cancel()
        assert agent.sessions() == []
    expected = target if target in (S.COMPLETED, S.FAILED) else S.CANCELLED
    assert session.state is expected and session.closed
    if h.fakes and target is not S.IDLE:
        assert h.fakes[-1].peer.stdin_closed
    if target is S.WAITING_TOOL_CALL:
        assert add.cancelled
    if target is S.IDLE:
        assert h.fakes[-1].received == []  # never started
        assert transitions(await all_events(session)) == ["idle->cancelled"]
        with pytest.raises(SessionStateError):
            await session.start()


# ------------------------------------------------------------------- callbacks


async def test_callbacks_slow_failing_sync_async_and_unsubscribe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(session_events, "EVENT_DRAIN_TIMEOUT", 0.05)
    gate = anyio.Event()
    slow_seen: list[str] = []
    sync_seen: list[str] = []
    async_seen: list[str] = []
    errors: list[ErrorOccurred] = []

    async def slow(ev: StateChanged) -> None:
        await gate.wait()  # never released until the session is done
        slow_seen.append(ev.to_state.value)

    def broken(ev: MessageReceived) -> None:
        raise RuntimeError("callback bug")

    async def record(ev: StateChanged) -> None:
        async_seen.append(ev.to_state.value)

    async with harness() as (agent, h):
        session = agent.create_session("hi")
        session.on("state_change", slow)
        session.on("message", broken)
        session.on("error", errors.append)
        session.on("state_change", lambda ev: sync_seen.append(ev.to_state.value))
        unsubscribe = session.on("state_change", record)
        with pytest.raises(UnknownEventError):
            session.on("stateChange", record)  # type: ignore[call-overload]
        await session.start()
        fake = h.fakes[-1]
        p = await fake.receive("user")
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)  # held up by the slow callback only so long
        assert slow_seen == []
        with anyio.fail_after(5):
            while "completed" not in async_seen:
                await anyio.wait_all_tasks_blocked()
        unsubscribe()
        late: list[str] = []
        session.on("state_change", lambda ev: late.append(ev.to_state.value), replay=True)
        gate.set()
        await session.close()
    assert sync_seen == ["starting", "running", "completed"]
    assert async_seen == ["starting", "running", "completed"]
    assert slow_seen == ["starting", "running", "completed"]
    assert late == ["starting", "running", "completed"]
    assert len(errors) == 2 and all(e.source == "callback" for e in errors)
    assert str(errors[0].error) == "callback bug"


async def test_events_stream_and_decode_errors_do_not_break_the_session() -> None:
    async with harness() as (agent, h):
        session, fake, p = await start(agent, h)
        await fake.peer.send_raw(b'{"type": "assistant", broken\n')
        await fake.assistant({"type": "text", "text": "still here"})
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
    events = await all_events(session)
    names = [e.name for e in events]
    assert names[:2] == ["state_change", "state_change"] and names[-2:] == [
        "state_change",
        "complete",
    ]
    decode = [e for e in events if isinstance(e, ErrorOccurred)]
    assert [e.source for e in decode] == ["decode"]
    texts = [
        b.text
        for e in events
        if isinstance(e, MessageReceived) and isinstance(e.message, AssistantMessage)
        for b in e.message.content
        if hasattr(b, "text")
    ]
    assert texts == ["still here", "done"]


# --------------------------------------------------------- agents and limits


async def test_concurrency_limit_and_live_sessions() -> None:
    async with harness(max_concurrent_sessions=1) as (agent, h):
        first, fake1, p1 = await start(agent, h)
        assert agent.sessions() == [first]
        second = agent.create_session("second")
        async with anyio.create_task_group() as tg:
            tg.start_soon(second.start)
            await anyio.wait_all_tasks_blocked()
            assert second.state is S.IDLE  # waiting for the slot
            assert set(agent.sessions()) == {first, second}
            h.handshake = False  # the third never gets to talk to its CLI
            third = agent.create_session("third")
            tg.start_soon(third.start)
            await anyio.wait_all_tasks_blocked()
            await third.close()  # gives up its place in the queue
            assert third.state is S.CANCELLED and third.closed
            await finish_turn(fake1, p1["uuid"])
            await first.wait_for_completion(5)
            await first.close()
        assert second.state is S.RUNNING
        assert agent.sessions() == [second]
        fake2 = h.fakes[1]
        p2 = await fake2.receive("user")
        await finish_turn(fake2, p2["uuid"])
        await second.wait_for_completion(5)
    assert agent.sessions() == []
    assert transitions(await all_events(second)) == [
        "idle->starting",
        "starting->running",
        "running->completed",
    ]


async def test_start_session_needs_the_agent_context_but_session_does_not() -> None:
    agent = ClaudeCodeAgent(store=False)
    with pytest.raises(SessionStateError, match="async with"):
        await agent.start_session("hi")
    plain: Any = agent  # a plain `with` said only "does not support the context manager protocol"
    with (
        pytest.raises(
            TypeError,
            match=r"^ClaudeCodeAgent is an async context manager: use "
            r"`async with ClaudeCodeAgent\(options\) as agent:`",
        ),
        plain,
    ):
        pass  # pragma: no cover: never entered
    assert agent.store is None
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    standalone = ClaudeCodeAgent(store=False, transport_factory=lambda o: transport)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake)
        with anyio.fail_after(10):
            async with standalone.session("hello") as session:
                p = await fake.receive("user")
                assert p["message"]["content"] == "hello"
                with pytest.raises(SessionTimeoutError):
                    await session.wait_for_completion(timeout=0.05)
                await finish_turn(fake, p["uuid"])
                await session.wait_for_completion(5)
    assert session.closed and session.state is S.COMPLETED and peer.stdin_closed


async def test_shared_server_gives_each_session_its_own_context() -> None:
    contexts: deque[str | None] = deque()

    @tool("who", "Which session am I in?", {})
    async def who(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        contexts.append(ctx.session_id)
        return {"content": [{"type": "text", "text": str(ctx.session_id)}]}

    server = create_sdk_mcp_server("calc", tools=[who])
    async with harness(ClaudeAgentOptions(mcp_servers={"calc": server})) as (agent, h):
        pairs = [await start(agent, h) for _ in range(3)]
        answers: list[Mapping[str, Any]] = []
        for i, (_, fake, _) in enumerate(pairs):
            fake.session_id = f"session-{i}"
            await fake.init(["mcp__calc__who"])
        async with anyio.create_task_group() as tg:

            async def ask(fake: FakeCLI) -> None:
                rid = await call_tool(fake, "toolu_w", "who")
                answers.append(await fake.response_to(rid))

            for _, fake, _ in pairs:
                tg.start_soon(ask, fake)
        for session, fake, p in pairs:
            await finish_turn(fake, p["uuid"])
            await session.wait_for_completion(5)
    assert sorted(c or "" for c in contexts) == ["session-0", "session-1", "session-2"]
    texts = sorted(a["response"]["mcp_response"]["result"]["content"][0]["text"] for a in answers)
    assert texts == ["session-0", "session-1", "session-2"]
    assert sorted(s.session_id for s, _, _ in pairs) == ["session-0", "session-1", "session-2"]


async def test_resume_and_fork_run_the_cli_with_its_resume_options(tmp_path: Path) -> None:
    store = MemorySnapshotStore()
    crashed = SessionStateInfo(
        state=S.WAITING_TOOL_CALL,
        session_id="old-sid",
        stats=SessionStats(message_count=4, tool_call_count=1),
        project_path=str(tmp_path),
        owner=SessionOwner(socket.gethostname(), NO_SUCH_PID, "a-crashed-process"),
    )
    await store.save(crashed)
    assert session_liveness(crashed) == ("unknown" if sys.platform == "win32" else "orphaned")
    async with harness(store=store) as (agent, h):
        session = await agent.resume_session("old-sid", "go on")
        assert session_liveness(crashed) == "live"  # now it runs here
        owner = session.get_state().owner
        assert owner is not None and owner.pid == os.getpid()
        opts = h.options[-1]
        assert (opts.resume, opts.fork_session, opts.session_id) == ("old-sid", False, None)
        assert opts.cwd == str(tmp_path)
        fake = h.fakes[-1]
        fake.session_id = "old-sid"
        p = await fake.receive("user")
        assert p["message"]["content"] == "go on"
        await finish_turn(fake, p["uuid"])
        info = await session.wait_for_completion(5)
        assert (info.session_id, info.resumed_from) == ("old-sid", "old-sid")
        assert info.stats.message_count == 4 + 2 and info.stats.tool_call_count == 1
        await session.close()  # flushes the store
        saved = await store.load("old-sid")
        assert saved is not None and saved.state is S.COMPLETED and saved.stats == info.stats

        fork = await agent.resume_session("old-sid", "branch off", fork=True)
        opts = h.options[-1]
        assert opts.resume == "old-sid" and opts.fork_session
        assert opts.session_id == fork.session_id != "old-sid"
        assert fork.get_state().stats.message_count == 0  # a fork starts its own count
        fake = h.fakes[-1]
        fake.session_id = fork.session_id
        p = await fake.receive("user")
        await finish_turn(fake, p["uuid"])
        await fork.wait_for_completion(5)
    assert {i.session_id for i in await store.list()} == {"old-sid", fork.session_id}


async def test_project_path_is_the_cli_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(tmp_path)
    default_dir = tmp_path / "default"
    async with harness(ClaudeAgentOptions(cwd=default_dir)) as (agent, h):
        session = await agent.start_session("hi", project_path="project")  # relative
        assert h.options[-1].cwd == session.options.cwd == str(project.resolve())
        assert session.get_state().project_path == str(project.resolve())
        other = await agent.start_session("hi")  # default: the options' cwd
        assert h.options[-1].cwd == other.get_state().project_path == str(default_dir.resolve())
        for each, fake in ((session, h.fakes[0]), (other, h.fakes[1])):
            p = await fake.receive("user")
            await finish_turn(fake, p["uuid"])
            await each.wait_for_completion(5)


async def test_snapshots_name_their_process_and_a_live_session_is_not_resumed() -> None:
    store = RecordingStore()
    async with harness(store=store) as (agent, h):
        session, fake, p = await start(agent, h)
        sid = fake.session_id = session.session_id
        running = await store.until(lambda i: i.state is S.RUNNING)
        owner = running.owner
        assert owner is not None and (owner.pid, owner.host) == (os.getpid(), socket.gethostname())
        assert session_liveness(running) == "live"
        with pytest.raises(SessionInUseError, match="still live") as err:
            await agent.resume_session(sid, "again")
        assert (err.value.session_id, err.value.state) == (sid, "running")
        assert len(h.fakes) == 1  # no second CLI was started
        await finish_turn(fake, p["uuid"])
        done = await session.wait_for_completion(5)
        assert session_liveness(done) == "live"  # at rest, but it still holds its CLI
        with pytest.raises(SessionInUseError):
            await agent.resume_session(sid, "again")
        await session.close()
        saved = await store.load(sid)
        assert saved is not None and saved.state is S.COMPLETED
        assert session_liveness(saved) == "ended"

        again = await agent.resume_session(sid, "again")  # closed: resuming is fine
        fake = h.fakes[-1]
        fake.session_id = sid
        p = await fake.receive("user")
        await finish_turn(fake, p["uuid"])
        assert (await again.wait_for_completion(5)).owner == owner


@pytest.mark.skipif(sys.platform == "win32", reason="pids are not checked on Windows")
async def test_resuming_a_session_another_live_process_owns_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    if os.getppid() <= 0:
        pytest.skip("no parent process to stand for another live process")
    store = MemorySnapshotStore()
    elsewhere = SessionOwner(socket.gethostname(), os.getppid(), "another-process")
    busy = SessionStateInfo(state=S.RUNNING, session_id="busy", owner=elsewhere)
    await store.save(busy)
    assert session_liveness(busy) == "live"  # our parent process (pytest's) runs
    async with harness(store=store) as (agent, h):
        with caplog.at_level("WARNING", logger="ccwire"):
            session = await agent.resume_session("busy", "go on")
        assert "still running in process" in caplog.text and str(os.getppid()) in caplog.text
        fake = h.fakes[-1]
        fake.session_id = "busy"
        p = await fake.receive("user")
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
