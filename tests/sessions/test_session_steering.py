"""Steering a session at awkward moments: prompts cut off by the end of the session,
bad prompts, and a callback that closes its own session."""

from __future__ import annotations

import anyio
import anyio.abc
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    ErrorOccurred,
    MemorySnapshotStore,
    OptionsError,
    SessionCompleted,
    SessionState,
    SessionStateError,
)
from ccwire._transport.base import Transport
from ccwire._transport.memory import CLIPeer, MemoryTransport
from ccwire.testing import FakeCLI
from tests.sessions.test_session_fake import finish_turn, harness, reach, start

pytestmark = pytest.mark.anyio

S = SessionState


class StuckTransport(MemoryTransport):
    """A transport whose writes of lines containing ``stuck`` never finish (a CLI
    that stopped reading its input)."""

    def __init__(self) -> None:
        super().__init__()
        self.stuck = anyio.Event()

    async def send_line(self, line: bytes) -> None:
        if b"stuck" in line:
            self.stuck.set()
            await anyio.sleep_forever()
        await super().send_line(line)


def stuck_agent(
    tg: anyio.abc.TaskGroup,
) -> tuple[ClaudeCodeAgent, list[FakeCLI], list[StuckTransport]]:
    """An agent whose CLIs are fakes on `StuckTransport`s (handshaking in ``tg``), and
    the lists each new fake and transport is appended to."""
    fakes: list[FakeCLI] = []
    transports: list[StuckTransport] = []

    def factory(options: ClaudeAgentOptions) -> Transport:
        transport = StuckTransport()
        fake = FakeCLI(CLIPeer(transport))
        fakes.append(fake)
        transports.append(transport)
        tg.start_soon(fake.handshake)
        return transport

    agent = ClaudeCodeAgent(store=MemorySnapshotStore(), transport_factory=factory)
    return agent, fakes, transports


async def test_prompts_cut_off_by_the_end_of_the_session_raise_and_none_hangs(
    anyio_backend: str,
) -> None:
    outcomes: dict[str, BaseException | None] = {}

    async with anyio.create_task_group() as tg:
        agent, fakes, transports = stuck_agent(tg)

        async def send(session_prompt: str) -> None:
            try:
                await session.send(session_prompt)
            except SessionStateError as exc:
                outcomes[session_prompt] = exc
            else:
                outcomes[session_prompt] = None

        with anyio.fail_after(10):
            async with agent:
                session = await agent.start_session("hi")
                fake = fakes[-1]
                await fake.receive("user")
                async with anyio.create_task_group() as senders:
                    senders.start_soon(send, "stuck")  # its write never finishes
                    await transports[-1].stuck.wait()
                    senders.start_soon(send, "queued behind it")
                    await fake.exit(1, "gone")  # the session fails; nothing was written
                info = await session.wait_for_completion(5)
        tg.cancel_scope.cancel()
    assert info.state is S.FAILED
    assert set(outcomes) == {"stuck", "queued behind it"}
    for prompt, error in outcomes.items():
        assert error is not None, f"send({prompt!r}) returned as if the prompt was written"
        assert "before this prompt was written" in str(error)


async def test_a_prompt_whose_sender_was_cancelled_and_that_was_never_written_is_reported(
    anyio_backend: str,
) -> None:
    async with anyio.create_task_group() as tg:
        agent, fakes, transports = stuck_agent(tg)
        with anyio.fail_after(10):
            async with agent:
                session = await agent.start_session("hi")
                await fakes[-1].receive("user")
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as senders:
                        senders.start_soon(session.send, "stuck")  # never written
                        await transports[-1].stuck.wait()
                        scope.cancel()  # its caller gives up waiting
                assert scope.cancelled_caught
                await fakes[-1].exit(1, "gone")  # the session fails: the prompt is lost
                await session.wait_for_completion(5)
                events = [e async for e in session.events()]
        tg.cancel_scope.cancel()
    lost = [e for e in events if isinstance(e, ErrorOccurred) and e.source == "cli"]
    lost = [e for e in lost if isinstance(e.error, SessionStateError)]  # (not the exit's)
    assert len(lost) == 1, events
    assert "before this prompt was written" in str(lost[0].error)


@pytest.mark.parametrize("where", ["completed", "paused"])
async def test_a_prompt_of_the_wrong_type_is_refused_and_changes_nothing(
    anyio_backend: str, where: str
) -> None:
    async with harness() as (agent, h):
        session, fake, prompt = await start(agent, h)
        if where == "completed":
            await finish_turn(fake, prompt["uuid"])
        else:
            await session.pause()
        await reach(session, S(where))
        with pytest.raises(OptionsError):
            await session.send(123)  # type: ignore[arg-type]
        assert session.state is S(where)  # no turn was opened for it
        if where == "paused":
            await session.resume()
            await finish_turn(fake, prompt["uuid"])
        info = await session.wait_for_completion(5)  # the turn still ends normally
        assert info.state is S.COMPLETED and info.error is None
        await session.close()


async def test_a_session_with_a_prompt_of_the_wrong_type_is_refused_before_it_runs(
    anyio_backend: str,
) -> None:
    async with harness() as (agent, h):
        with pytest.raises(OptionsError):
            agent.create_session(None)  # type: ignore[arg-type]
        with pytest.raises(OptionsError):
            await agent.start_session(b"hi")  # type: ignore[arg-type]
        assert h.fakes == [] and agent.sessions() == []  # no CLI was made for them


async def test_a_prompt_queued_while_paused_and_cut_off_by_cancel_is_reported(
    anyio_backend: str,
) -> None:
    async with harness() as (agent, h):
        session, _, _ = await start(agent, h)
        await session.pause()
        await session.send("later")  # queued: returns at once
        await session.cancel()
        events = [e async for e in session.events()]
    lost = [e for e in events if isinstance(e, ErrorOccurred)]
    assert len(lost) == 1 and lost[0].source == "cli"
    assert isinstance(lost[0].error, SessionStateError)
    assert "before this prompt was written" in str(lost[0].error)


async def test_bad_arguments_to_agents_and_sessions_are_options_errors_and_start_nothing(
    anyio_backend: str,
) -> None:
    for limit in (0, "2", 1.5, True):
        with pytest.raises(OptionsError, match="max_concurrent_sessions"):
            ClaudeCodeAgent(max_concurrent_sessions=limit)  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match="ClaudeAgentOptions"):
        ClaudeCodeAgent({"model": "x"})  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match="not a session store"):
        ClaudeCodeAgent(store=object())  # type: ignore[arg-type]
    async with harness(handshake=False) as (agent, h):
        for sid in (123, "not-a-uuid", ""):
            with pytest.raises(OptionsError, match="session_id must be a UUID"):
                agent.create_session("hi", session_id=sid)  # type: ignore[arg-type]
        with pytest.raises(OptionsError, match="project_path"):
            agent.create_session("hi", 5)  # type: ignore[arg-type]
        for bad_id in (None, "", 7):
            with pytest.raises(OptionsError, match="session_id must be a non-empty str"):
                await agent.resume_session(bad_id, "go on")  # type: ignore[arg-type]
        assert h.fakes == []  # no CLI was made for any of them
        session = agent.create_session("hi")
        for callback in (None, 5):
            with pytest.raises(OptionsError, match="callable"):
                session.on("message", callback)  # type: ignore[call-overload]
        for bad_timeout in ("5", float("nan")):
            with pytest.raises(OptionsError, match="timeout"):
                await session.wait_for_completion(bad_timeout)  # type: ignore[arg-type]
        assert session.state is S.IDLE and agent.sessions() == []
        await session.cancel()


async def test_a_callback_closing_its_own_session_goes_on_after_close(
    anyio_backend: str,
) -> None:
    after_close: list[tuple[SessionState, bool]] = []

    async with harness() as (agent, h):
        session = agent.create_session("hi")

        async def close_on_complete(event: SessionCompleted) -> None:
            await session.close()  # waits for the CLI, not for this very callback
            after_close.append((session.state, agent.sessions() == []))

        session.on("complete", close_on_complete)
        await session.start()
        fake = h.fakes[-1]
        prompt = await fake.receive("user")
        await finish_turn(fake, prompt["uuid"])
        await session.wait_for_completion(5)
        await session.close()
        assert session.closed
    assert after_close == [(S.COMPLETED, False)]


async def test_a_callback_registered_on_a_closed_session_is_refused(anyio_backend: str) -> None:
    async with harness() as (agent, h):
        session, fake, prompt = await start(agent, h)
        await finish_turn(fake, prompt["uuid"])
        await session.wait_for_completion(5)
        await session.close()
        with pytest.raises(SessionStateError, match="closed"):  # it would never be called
            session.on("complete", lambda event: None, replay=True)
        assert [e.name async for e in session.events()][-1] == "complete"  # still readable
