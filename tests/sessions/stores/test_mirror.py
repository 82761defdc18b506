"""`TranscriptMirrorBatcher`: batching, order, retries, dropped batches, and keys."""

from __future__ import annotations

from typing import Any, cast

import anyio
import pytest

from ccwire import InMemorySessionStore, SessionKey, SessionStoreEntry
from ccwire._conversation.transcript_store.mirror import (
    MIRROR_APPEND_ATTEMPTS,
    TranscriptMirrorBatcher,
    file_path_to_session_key,
)

pytestmark = pytest.mark.anyio

PROJECTS = "/cfg/projects"
MAIN = f"{PROJECTS}/-work/11111111-2222-3333-4444-555555555555.jsonl"
SUB = f"{PROJECTS}/-work/11111111-2222-3333-4444-555555555555/subagents/agent-7.jsonl"
MAIN_KEY: SessionKey = {"project_key": "-work", "session_id": MAIN.rsplit("/", 1)[1][:-6]}


def entries(*uuids: str) -> list[SessionStoreEntry]:
    return [cast("SessionStoreEntry", {"type": "user", "uuid": u}) for u in uuids]


class Recording(InMemorySessionStore):
    """Counts appends; fails the first `failures` of them; `hang` blocks them."""

    def __init__(self, failures: int = 0, hang: bool = False) -> None:
        super().__init__()
        self.calls: list[tuple[SessionKey, int]] = []
        self.failures = failures
        self.hang = hang
        self.appended = anyio.Event()

    async def append(self, key: SessionKey, batch: list[SessionStoreEntry]) -> None:
        self.calls.append((key, len(batch)))
        if self.hang:
            await anyio.sleep_forever()
        if self.failures:
            self.failures -= 1
            raise ConnectionError("store down")
        await super().append(key, batch)
        self.appended.set()


class Errors:
    def __init__(self) -> None:
        self.seen: list[tuple[SessionKey | None, str]] = []

    async def __call__(self, key: SessionKey | None, message: str) -> None:
        self.seen.append((key, message))


def test_file_paths_map_to_keys() -> None:
    assert file_path_to_session_key(MAIN, PROJECTS) == MAIN_KEY
    assert file_path_to_session_key(SUB, PROJECTS) == {**MAIN_KEY, "subpath": "subagents/agent-7"}
    assert file_path_to_session_key("/elsewhere/-work/s.jsonl", PROJECTS) is None
    assert file_path_to_session_key(f"{PROJECTS}/-work", PROJECTS) is None
    assert file_path_to_session_key(f"{PROJECTS}/-work/notes.txt", PROJECTS) is None
    assert file_path_to_session_key(f"{PROJECTS}/-work/s/x.jsonl", PROJECTS) is None


async def test_batches_wait_for_flush_and_keep_frame_order_one_append_per_file() -> None:
    store, errors = Recording(), Errors()
    batcher = TranscriptMirrorBatcher(store, PROJECTS, errors)
    batcher.enqueue(MAIN, entries("a", "b"))
    batcher.enqueue(SUB, entries("s1"))
    batcher.enqueue(MAIN, entries("c"))
    assert store.calls == [] and batcher.pending == 4  # batched: nothing before the flush
    await batcher.flush()
    assert await store.load(MAIN_KEY) == entries("a", "b", "c")
    assert await store.load({**MAIN_KEY, "subpath": "subagents/agent-7"}) == entries("s1")
    assert [n for _, n in store.calls] == [3, 1] and batcher.pending == 0
    batcher.enqueue("/not/under/projects.jsonl", entries("x"))
    await batcher.flush()  # dropped with a warning, not an error
    assert errors.seen == [] and len(store.calls) == 2


async def test_a_failing_append_is_retried_then_succeeds() -> None:
    store, errors = Recording(failures=MIRROR_APPEND_ATTEMPTS - 1), Errors()
    batcher = TranscriptMirrorBatcher(store, PROJECTS, errors)
    batcher.enqueue(MAIN, entries("a"))
    await batcher.flush()
    assert len(store.calls) == MIRROR_APPEND_ATTEMPTS and errors.seen == []
    assert await store.load(MAIN_KEY) == entries("a")


async def test_a_batch_that_keeps_failing_is_dropped_and_reported_never_raised() -> None:
    store, errors = Recording(failures=99), Errors()
    batcher = TranscriptMirrorBatcher(store, PROJECTS, errors)
    batcher.enqueue(MAIN, entries("a"))
    await batcher.flush()
    assert len(store.calls) == MIRROR_APPEND_ATTEMPTS
    assert errors.seen == [(MAIN_KEY, "ConnectionError: store down")]
    assert await store.load(MAIN_KEY) is None
    store.failures = 0
    batcher.enqueue(MAIN, entries("b"))
    await batcher.flush()  # the next batch goes through
    assert await store.load(MAIN_KEY) == entries("b")


async def test_a_timed_out_append_is_not_retried() -> None:
    store, errors = Recording(hang=True), Errors()
    batcher = TranscriptMirrorBatcher(store, PROJECTS, errors, send_timeout=0.05)
    batcher.enqueue(MAIN, entries("a"))
    await batcher.flush()
    assert len(store.calls) == 1
    assert len(errors.seen) == 1 and "timed out" in errors.seen[0][1]


async def test_eager_mode_flushes_in_the_background() -> None:
    store, errors = Recording(), Errors()
    async with anyio.create_task_group() as tg:
        batcher = TranscriptMirrorBatcher(
            store, PROJECTS, errors, task_group=tg, flush_mode="eager"
        )
        batcher.enqueue(MAIN, entries("a"))
        with anyio.fail_after(5):
            await store.appended.wait()
    assert await store.load(MAIN_KEY) == entries("a")


async def test_the_pending_buffer_is_bounded_in_batched_mode() -> None:
    store, errors = Recording(), Errors()
    async with anyio.create_task_group() as tg:
        batcher = TranscriptMirrorBatcher(store, PROJECTS, errors, task_group=tg)
        batcher.enqueue(MAIN, entries(*(f"u{i}" for i in range(501))))
        with anyio.fail_after(5):
            await store.appended.wait()  # past 500 entries: flushed without a result
    loaded = await store.load(MAIN_KEY)
    assert loaded is not None and len(loaded) == 501


async def test_close_flushes_even_when_cancelled() -> None:
    store, errors = Recording(), Errors()
    batcher = TranscriptMirrorBatcher(store, PROJECTS, errors)
    batcher.enqueue(MAIN, entries("last"))
    with anyio.CancelScope() as scope:
        scope.cancel()
        await batcher.close()
    assert await store.load(MAIN_KEY) == entries("last")


async def test_an_error_callback_that_raises_does_not_escape() -> None:
    async def broken(key: Any, message: str) -> None:
        raise RuntimeError("callback bug")

    batcher = TranscriptMirrorBatcher(Recording(failures=99), PROJECTS, broken)
    batcher.enqueue(MAIN, entries("a"))
    await batcher.flush()  # logged, not raised
