"""The end of a run: the session state frames a caller opted in to, and the run-end
ceiling that bounds how long `query()` keeps stdin open between turns
(``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS``).

The ceiling's bookkeeping (`RunEndClock`) is checked with explicit times; `query()`,
`startup()` and the client run against the fake CLI (or a stand-in subprocess), each
ceiling a small one (300 ms) that a CLI which never settles runs into."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    HookMatcher,
    Message,
    ResultMessage,
    SystemMessage,
    query,
    startup,
)
from ccwire._conversation.run_end import (
    DEFAULT_CEILING_MS,
    MAX_CEILING_MS,
    RunEndClock,
    RunPhase,
    run_end_ceiling,
)
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fixtures.fake_session import connected

CEILING = 300  # ms


def _states(messages: list[Message]) -> list[str]:
    return [
        m.data["state"]
        for m in messages
        if isinstance(m, SystemMessage) and m.subtype == "session_state_changed"
    ]


async def _unmarked_state(fake: FakeCLI, state: str) -> None:
    """A state frame as the CLI sends it to a caller who set
    ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`` (no ``sdk_host_only``)."""
    await fake.send(
        {
            "type": "system",
            "subtype": "session_state_changed",
            "state": state,
            "uuid": f"u-{state}",
            "session_id": fake.session_id,
        }
    )


# ----------------------------------------------------------- session state frames


@pytest.mark.anyio
async def test_query_yields_the_state_frames_the_caller_opted_in_to_and_tracks_them() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    asked: list[str] = []

    async def hook(inp: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        asked.append(inp["tool_name"])
        return {}

    async def cli_side() -> None:
        await fake.handshake()
        await fake.receive("user")
        await fake.state("running")  # marked for the host: never shown
        await _unmarked_state(fake, "running")
        await fake.assistant({"type": "text", "text": "LAUNCHED"})
        await fake.result("LAUNCHED")
        # still "running": a background agent wakes a turn whose hook needs stdin, which
        # query() keeps open because it tracks the frames it shows
        answer = await fake.request(
            "hook_callback",
            callback_id="hook_0",
            input={"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {}},
        )
        assert answer["subtype"] == "success"
        await fake.assistant({"type": "text", "text": "FINISHED"})
        await fake.result("FINISHED")
        await _unmarked_state(fake, "idle")
        await fake.expect_eof()
        await fake.exit(0)

    options = ClaudeAgentOptions(
        env={"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"},
        hooks={"PreToolUse": [HookMatcher(hooks=[hook])]},
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            messages = [m async for m in query(prompt="go", options=options, transport=transport)]
    assert asked == ["Write"]
    assert _states(messages) == ["running", "idle"]
    assert [type(m).__qualname__ for m in messages] == [
        "SessionStateChangedMessage",
        "AssistantMessage",
        "ResultMessage",
        "AssistantMessage",
        "ResultMessage",
        "SessionStateChangedMessage",
    ]


@pytest.mark.anyio
async def test_the_client_yields_unmarked_state_frames_and_hides_marked_ones() -> None:
    async with connected() as (client, fake):
        await client.query("hi")
        p = await fake.receive("user")
        await fake.state("running")
        await fake.assistant({"type": "text", "text": "hello"})
        await _unmarked_state(fake, "requires_action")
        await fake.result("hello", user_message_uuids=[p["uuid"]])
        messages = [m async for m in client.receive_response()]
        assert client.session_state == "requires_action"  # tracked all the same
    assert _states(messages) == ["requires_action"]


# -------------------------------------------------------------------- the ceiling


def _at(clock: RunEndClock) -> tuple[RunPhase, float | None]:
    """Where the clock stands (read afresh: each event may move it)."""
    return clock.phase, clock.deadline


def test_the_ceiling_is_read_as_the_cli_reads_it() -> None:
    default = DEFAULT_CEILING_MS / 1000
    assert run_end_ceiling({}, {}) == default
    assert run_end_ceiling({}, {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "300"}) == 0.3
    over = {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "2000"}
    base = {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "300"}
    assert run_end_ceiling(over, base) == 2.0  # options.env wins, as for the CLI
    assert run_end_ceiling({"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "0"}, {}) is None
    for odd in ("-5", "1e6", "abc", "", "1.5", "٣"):
        assert run_end_ceiling({"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": odd}, {}) == default
    not_a_mapping: Any = None  # refused where the env is built, not here
    assert run_end_ceiling(not_a_mapping, base) == 0.3
    huge = {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": str(10**30)}
    assert run_end_ceiling(huge, {}) == MAX_CEILING_MS / 1000


def test_the_clock_counts_only_the_wait_between_turns() -> None:
    clock = RunEndClock(1.0)
    clock.on_prompt()
    clock.on_state("running", 0.0)
    assert _at(clock)[1] is None  # no result yet
    clock.on_turn_output()
    clock.on_result(10.0)
    assert _at(clock) == (RunPhase.BETWEEN, 11.0)
    assert not clock.expire_if_due(10.9)
    clock.on_state("running", 10.5)  # "running" again between turns: starts over
    assert _at(clock)[1] == 11.5
    clock.on_turn_output()  # a turn under way stops it
    assert _at(clock)[1] is None
    assert not clock.expire_if_due(100.0)
    clock.on_result(100.0)
    clock.on_state("requires_action", 100.5)  # the host answers a request: stopped
    assert _at(clock)[1] is None
    clock.on_state("running", 101.0)
    assert _at(clock)[1] == 102.0
    assert clock.expire_if_due(102.0)
    assert clock.ended
    clock.on_state("running", 103.0)  # work taken up after the end reopens the run
    assert _at(clock) == (RunPhase.BETWEEN, 104.0)
    clock.on_prompt()
    assert _at(clock) == (RunPhase.OWED, None)


def test_the_clock_does_not_run_when_idle_or_unlimited_or_without_state() -> None:
    clock = RunEndClock(1.0)
    clock.on_result(0.0)  # a CLI that reports no state: the result settles the run
    assert _at(clock)[1] is None
    clock.on_state("running", 0.0)
    clock.on_state("idle", 0.5)
    assert _at(clock)[1] is None and not clock.expire_if_due(99.0)
    unlimited = RunEndClock(None)
    unlimited.on_state("running", 0.0)
    unlimited.on_result(0.0)
    assert _at(unlimited)[1] is None and not unlimited.expire_if_due(1e12)


def test_a_tracked_agent_in_flight_holds_the_run_open_until_it_settles() -> None:
    clock = RunEndClock(1.0)
    clock.on_state("running", 0.0)
    clock.on_task_started("t-shell", "local_bash")  # not tracked: may never end
    clock.on_task_started("t-agent", "local_agent")
    clock.on_result(0.0)
    assert not clock.expire_if_due(1.0)
    assert _at(clock) == (RunPhase.BETWEEN, None)
    clock.on_task_ended("t-agent", 5.0)  # the last one settled: the clock starts over
    assert _at(clock)[1] == 6.0
    assert clock.expire_if_due(6.0)


_STUCK_CLI = textwrap.dedent(
    """
    import json, sys

    def emit(obj):
        print(json.dumps(obj), flush=True)

    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") == "control_request":
            emit({"type": "control_response", "response": {
                "subtype": "success", "request_id": msg["request_id"], "response": {}}})
        elif msg.get("type") == "user":
            emit({"type": "system", "subtype": "session_state_changed",
                  "state": "running", "sdk_host_only": True, "session_id": "s"})
            emit({"type": "assistant", "parent_tool_use_id": None, "session_id": "s",
                  "message": {"role": "assistant", "model": "m",
                              "content": [{"type": "text", "text": "LAUNCHED"}]}})
            emit({"type": "result", "subtype": "success", "duration_ms": 1,
                  "duration_api_ms": 1, "is_error": False, "num_turns": 1,
                  "session_id": "s", "result": "LAUNCHED"})
            # a background agent that never finishes: "running" for good
    """
)


async def _stuck_cli_side(fake: FakeCLI) -> None:
    await fake.handshake()
    await fake.receive("user")
    await fake.state("running")
    await fake.assistant({"type": "text", "text": "LAUNCHED"})
    await fake.result("LAUNCHED")
    await fake.expect_eof()  # the ceiling closes stdin although "idle" never comes
    await fake.exit(0)


@pytest.mark.anyio
async def test_query_closes_stdin_at_the_ceiling_when_idle_never_comes() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer, timeout=10)
    options = ClaudeAgentOptions(env={"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": str(CEILING)})
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_stuck_cli_side, fake)
            messages = [m async for m in query(prompt="go", options=options, transport=transport)]
    assert [m.result for m in messages if isinstance(m, ResultMessage)] == ["LAUNCHED"]


@pytest.mark.anyio
@pytest.mark.skipif(sys.platform == "win32", reason="spawns a shell script")
async def test_a_warm_start_gets_the_ceiling_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fixtures.wrappers import python_wrapper

    script = tmp_path / "stuck_cli.py"
    script.write_text(_STUCK_CLI)
    # from the environment this time (options.env does not set it)
    monkeypatch.setenv("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS", str(CEILING))
    options = ClaudeAgentOptions(
        cli_path=python_wrapper(tmp_path / "claude", script), initialize_timeout=20
    )
    with anyio.fail_after(20):
        async with await startup(options=options) as warm:
            messages: list[Any] = [m async for m in warm.query("go")]
    assert [m.result for m in messages if isinstance(m, ResultMessage)] == ["LAUNCHED"]
