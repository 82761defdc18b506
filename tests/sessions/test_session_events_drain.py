"""``wait_for_completion()`` returns only once the final events reached the callbacks."""

from __future__ import annotations

import logging

import anyio
import anyio.lowlevel
import pytest

from ccwire import Session, SessionStateInfo, StateChanged
from ccwire._sessions import events as session_events
from tests.sessions.test_session_fake import finish_turn, harness

pytestmark = pytest.mark.anyio


async def test_the_final_state_change_reached_the_callbacks(anyio_backend: str) -> None:
    seen: list[str] = []
    completes: list[str] = []

    async def unhurried(ev: StateChanged) -> None:
        for _ in range(20):  # a callback that takes a few steps of the event loop
            await anyio.lowlevel.checkpoint()
        seen.append(ev.to_state.value)

    async with harness() as (agent, h):
        session = agent.create_session("hi")
        session.on("state_change", unhurried)
        session.on("complete", lambda ev: completes.append(ev.info.state.value))
        await session.start()
        fake = h.fakes[-1]
        prompt = await fake.receive("user")
        await finish_turn(fake, prompt["uuid"])
        info = await session.wait_for_completion(5)
        assert info.state.value == "completed"
        # nothing else ran in between: the callbacks were done when it returned
        assert seen == ["starting", "running", "completed"]
        assert completes == ["completed"]
        await session.close()


async def test_a_subscription_made_just_before_the_end_is_waited_for(anyio_backend: str) -> None:
    seen: list[str] = []

    async def unhurried(ev: StateChanged) -> None:
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        seen.append(ev.to_state.value)

    async with harness() as (agent, h):
        session = await agent.start_session("hi")
        fake = h.fakes[-1]
        prompt = await fake.receive("user")
        await finish_turn(fake, prompt["uuid"])
        # registered with replay while the turn ends: its task has not run yet
        session.on("state_change", unhurried, replay=True)
        await session.wait_for_completion(5)
        assert seen[-1] == "completed"
        await session.close()


async def test_a_callback_waiting_for_its_own_session_does_not_wait_for_itself(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    finals: list[SessionStateInfo] = []

    async def on_complete(ev: object) -> None:
        finals.append(await session.wait_for_completion(5))

    caplog.set_level(logging.WARNING, logger="ccwire")
    async with harness() as (agent, h):
        session: Session = agent.create_session("hi")
        session.on("complete", on_complete)
        await session.start()
        fake = h.fakes[-1]
        prompt = await fake.receive("user")
        await finish_turn(fake, prompt["uuid"])
        await session.wait_for_completion(5)
        assert [f.state.value for f in finals] == ["completed"]
        await session.close()
    assert not [r for r in caplog.records if "still busy" in r.getMessage()]


async def test_a_stuck_callback_delays_completion_only_within_the_bound(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(session_events, "EVENT_DRAIN_TIMEOUT", 0.05)
    gate = anyio.Event()

    async def stuck(ev: StateChanged) -> None:
        await gate.wait()

    caplog.set_level(logging.WARNING, logger="ccwire")
    async with harness() as (agent, h):
        session = agent.create_session("hi")
        session.on("state_change", stuck)
        await session.start()
        fake = h.fakes[-1]
        prompt = await fake.receive("user")
        await finish_turn(fake, prompt["uuid"])
        info = await session.wait_for_completion(5)
        assert info.state.value == "completed"
        gate.set()
        await session.close()
    assert [r for r in caplog.records if "still busy" in r.getMessage()]
