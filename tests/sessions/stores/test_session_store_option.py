"""The `session_store` option over a fake CLI: mirroring, flushes, mirror errors, checks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    InMemorySessionStore,
    Message,
    MirrorErrorMessage,
    ResultMessage,
    SessionKey,
    SessionStoreEntry,
    SystemMessage,
    TranscriptMirrorMessage,
)
from ccwire._conversation.argv import build_argv
from ccwire._conversation.transcript_store import mirror
from ccwire.testing import FakeCLI, memory_transport_pair

pytestmark = pytest.mark.anyio

CONFIG = "/fake-config"
SID = "11111111-2222-3333-4444-555555555555"
MAIN_KEY: SessionKey = {"project_key": "-work", "session_id": SID}
SUB_KEY: SessionKey = {**MAIN_KEY, "subpath": "subagents/agent-7"}


def _frame(*uuids: str, sub: bool = False) -> dict[str, Any]:
    tail = f"{SID}/subagents/agent-7.jsonl" if sub else f"{SID}.jsonl"
    return {
        "type": "transcript_mirror",
        "filePath": f"{CONFIG}/projects/-work/{tail}",
        "entries": [{"type": "user", "uuid": u, "sessionId": SID} for u in uuids],
    }


@asynccontextmanager
async def connected(options: ClaudeAgentOptions) -> AsyncIterator[tuple[ClaudeSDKClient, FakeCLI]]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options, transport=transport) as client:
                yield client, fake


def _options(store: Any, **kwargs: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(session_store=store, env={"CLAUDE_CONFIG_DIR": CONFIG}, **kwargs)


async def _turn(client: ClaudeSDKClient, fake: FakeCLI, *frames: dict[str, Any]) -> list[Message]:
    await client.query("hi")
    await fake.receive("user")
    for frame in frames:
        await fake.send(frame)
    await fake.result()
    return [m async for m in client.receive_response()]


class Recording(InMemorySessionStore):
    """An in-memory store that remembers each append call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[SessionKey, list[str]]] = []
        self.appended = anyio.Event()

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        self.calls.append((key, [e.get("uuid", "") for e in entries]))
        await super().append(key, entries)
        self.appended.set()


async def test_a_turn_is_in_the_store_when_its_result_arrives() -> None:
    store = Recording()
    async with connected(_options(store)) as (client, fake):
        got = await _turn(client, fake, _frame("a", "b"), _frame("s1", sub=True), _frame("c"))
        assert isinstance(got[-1], ResultMessage)
        # batched: one append per transcript, in frame order, before the result came out
        assert store.calls == [(MAIN_KEY, ["a", "b", "c"]), (SUB_KEY, ["s1"])]
        assert not any(isinstance(m, TranscriptMirrorMessage) for m in got)  # not surfaced
        got = await _turn(client, fake, _frame("d"))
        assert store.calls[-1] == (MAIN_KEY, ["d"])
    assert [e["uuid"] for e in store.get_entries(MAIN_KEY)] == ["a", "b", "c", "d"]


async def test_with_session_mirror_too_the_frames_are_also_surfaced() -> None:
    store = Recording()
    async with connected(_options(store, session_mirror=True)) as (client, fake):
        got = await _turn(client, fake, _frame("a"))
    assert [m.file_path for m in got if isinstance(m, TranscriptMirrorMessage)] == [
        f"{CONFIG}/projects/-work/{SID}.jsonl"
    ]
    assert store.calls == [(MAIN_KEY, ["a"])]


async def test_eager_mode_appends_each_frame_without_waiting_for_the_result() -> None:
    store = Recording()
    async with connected(_options(store, session_store_flush="eager")) as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        await fake.send(_frame("a"))
        with anyio.fail_after(5):
            await store.appended.wait()  # no result sent yet
        assert store.calls == [(MAIN_KEY, ["a"])]
        await fake.result()
        assert isinstance([m async for m in client.receive_response()][-1], ResultMessage)


async def test_what_is_pending_at_close_is_flushed() -> None:
    store = Recording()
    async with connected(_options(store)) as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        await fake.send(_frame("a"))
        await fake.assistant({"type": "text", "text": "partial"})
        async with aclosing(client.receive_messages()) as messages:  # left early
            async for message in messages:
                if not isinstance(message, SystemMessage):
                    break  # the assistant message: the frame before it was read
        assert store.calls == []
    assert store.calls == [(MAIN_KEY, ["a"])]


class Failing(InMemorySessionStore):
    """A store whose `append` always raises."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        self.attempts += 1
        raise ConnectionError("the database is down")


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing batch's retries 0.1 s apart in all, not 1 s: only their number counts."""
    monkeypatch.setattr(mirror, "MIRROR_APPEND_BACKOFF", (0.02, 0.08))


@pytest.mark.usefixtures("quick_retries")
@pytest.mark.parametrize("mode", ["batched", "eager"])
async def test_a_batch_that_fails_three_times_becomes_a_mirror_error_message(mode: str) -> None:
    store = Failing()
    async with connected(_options(store, session_store_flush=mode)) as (client, fake):
        got = await _turn(client, fake, _frame("a"))
        assert store.attempts == 3  # tried three times, then dropped
        errors = [m for m in got if isinstance(m, MirrorErrorMessage)]
        assert len(errors) == 1 and isinstance(got[-1], ResultMessage)
        assert got.index(errors[0]) < len(got) - 1  # before the result, as the reference
        (error,) = errors
        assert error.subtype == "mirror_error" and isinstance(error, SystemMessage)
        assert error.key == MAIN_KEY
        assert error.error == "ConnectionError: the database is down"
        assert error.data["session_id"] == SID and error.data["uuid"]
        # the session goes on: the next turn works, and fails to mirror on its own
        got = await _turn(client, fake, _frame("b"))
        assert [type(m) for m in got] == [MirrorErrorMessage, ResultMessage]
        assert store.attempts == 6


async def test_frames_outside_the_projects_directory_are_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Recording()
    async with connected(_options(store)) as (client, fake):
        frame = {**_frame("a"), "filePath": f"/elsewhere/-work/{SID}.jsonl"}
        got = await _turn(client, fake, frame)
    assert store.calls == [] and isinstance(got[-1], ResultMessage)
    assert "is not under /fake-config/projects" in caplog.text


def test_the_cli_is_asked_to_mirror_when_a_store_is_set() -> None:
    argv = build_argv(ClaudeAgentOptions(session_store=InMemorySessionStore()), cli_path="claude")
    assert "--session-mirror" in argv
    assert "--session-mirror" not in build_argv(ClaudeAgentOptions(), cli_path="claude")


class Minimal:
    """A store with only the two required methods (mypy wants all six: `type: ignore`)."""

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        return None

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        return None


def test_option_combinations_the_reference_refuses_are_refused() -> None:
    with pytest.raises(ValueError, match="requires the store to implement list_sessions"):
        ClaudeAgentOptions(session_store=Minimal(), continue_conversation=True)  # type: ignore[arg-type]
    # with resume set, resume wins: list_sessions() is never needed
    ClaudeAgentOptions(session_store=Minimal(), continue_conversation=True, resume=SID)  # type: ignore[arg-type]
    ClaudeAgentOptions(session_store=InMemorySessionStore(), continue_conversation=True)
    with pytest.raises(ValueError, match="enable_file_checkpointing"):
        ClaudeAgentOptions(session_store=Minimal(), enable_file_checkpointing=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="session_store_flush must be"):
        ClaudeAgentOptions(session_store_flush="lazy")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="session_store must be a SessionStore"):
        ClaudeAgentOptions(session_store=object())  # type: ignore[arg-type]
    defaults = ClaudeAgentOptions()
    assert defaults.session_store is None and defaults.session_store_flush == "batched"


async def test_options_changed_after_construction_are_checked_at_connect() -> None:
    options = _options(Minimal())
    options.enable_file_checkpointing = True
    transport, _peer = memory_transport_pair()
    with pytest.raises(ValueError, match="enable_file_checkpointing"):
        await ClaudeSDKClient(options, transport=transport).connect()


async def test_with_a_custom_transport_a_resume_loads_nothing_from_the_store() -> None:
    class Loading(Recording):
        loads = 0

        async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
            self.loads += 1
            return await super().load(key)

    store = Loading()
    await store.append(MAIN_KEY, [{"type": "user", "uuid": "a"}])
    # the options a store resume writes could never reach a transport built by the caller
    async with connected(_options(store, resume=SID)) as (client, fake):
        await _turn(client, fake)
    assert store.loads == 0


@pytest.mark.usefixtures("quick_retries")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio's Cancelled cannot be raised
async def test_a_store_raising_its_own_cancellation_is_a_failed_append() -> None:
    import asyncio

    class Cancelling(Failing):
        async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
            self.attempts += 1
            raise asyncio.CancelledError

    store = Cancelling()
    async with connected(_options(store)) as (client, fake):
        got = await _turn(client, fake, _frame("a"))
        assert [type(m) for m in got] == [MirrorErrorMessage, ResultMessage]
        assert store.attempts == 3
        got = await _turn(client, fake)  # the connection lives on
        assert [type(m) for m in got] == [ResultMessage]


async def test_a_reader_cancelled_while_the_result_waits_for_the_store_loses_nothing() -> None:
    class Slow(Recording):
        def __init__(self) -> None:
            super().__init__()
            self.entered = anyio.Event()
            self.release = anyio.Event()

        async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
            self.entered.set()
            await self.release.wait()
            await super().append(key, entries)

    store = Slow()
    async with connected(_options(store)) as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        await fake.send(_frame("a"))
        await fake.result()
        seen: list[Message] = []
        with anyio.CancelScope() as scope:

            async def read() -> None:
                async for message in client.receive_response():
                    seen.append(message)

            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                with anyio.fail_after(5):
                    await store.entered.wait()  # the result waits for this append
                scope.cancel()
        assert not any(isinstance(m, ResultMessage) for m in seen)
        store.release.set()  # the flush goes on without the reader
        got = [m async for m in client.receive_response()]
        assert isinstance(got[-1], ResultMessage)
        assert store.calls == [(MAIN_KEY, ["a"])]
