"""Reading past sessions from a store whose adapter fails, lacks methods, or holds odd
entries: one broken session never breaks a listing, a real cancellation is not taken
for a broken session, and each optional method's absence has its documented result."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import pytest
import sniffio

from ccwire import (
    InMemorySessionStore,
    get_session_info_from_store,
    get_subagent_messages_from_store,
    list_sessions_from_store,
    list_subagents_from_store,
    project_key_for_directory,
)

pytestmark = pytest.mark.anyio

DIRECTORY = "/work/app"
KEY = project_key_for_directory(DIRECTORY)


def _sid(n: int) -> str:
    return f"5703e000-0000-4000-8000-{n:012d}"


def _prompt(session_id: str, text: str, **extra: Any) -> Any:
    return {
        "type": "user",
        "uuid": f"{session_id[:-4]}0001",
        "parentUuid": None,
        "sessionId": session_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text},
        **extra,
    }


def _own_cancellation() -> BaseException:
    """The cancellation exception of the running backend, raised by an adapter itself."""
    if sniffio.current_async_library() == "trio":
        import trio

        return trio.Cancelled._create()
    return asyncio.CancelledError()


class ListingStore:
    """A store with `list_sessions` but no summaries; `load` of some sessions fails."""

    def __init__(self) -> None:
        self.inner = InMemorySessionStore()
        self.failures: dict[str, BaseException] = {}
        self.blocked: anyio.Event | None = None
        self.loading = anyio.Event()

    async def append(self, key: Any, entries: list[Any]) -> None:
        await self.inner.append(key, entries)

    async def load(self, key: Any) -> Any:
        self.loading.set()
        if self.blocked is not None:
            await self.blocked.wait()
        failure = self.failures.get(key["session_id"])
        if failure is not None:
            raise failure
        return await self.inner.load(key)

    async def list_sessions(self, project_key: str) -> Any:
        return await self.inner.list_sessions(project_key)


class SummariesNotThere(ListingStore):
    """Declares `list_session_summaries`, but its backend turns out not to have it."""

    async def list_session_summaries(self, project_key: str) -> Any:
        raise NotImplementedError("this backend keeps no summaries")


async def _fill(store: Any) -> None:
    for n, entries in enumerate(
        [
            [_prompt(_sid(0), "fine")],
            [_prompt(_sid(1), "broken adapter")],
            [_prompt(_sid(2), "cancelled in the adapter")],
            [{"type": "assistant", "uuid": "a", "message": {"content": []}}],  # nothing to title
        ]
    ):
        await store.append({"project_key": KEY, "session_id": _sid(n)}, entries)


@pytest.mark.parametrize("kind", [ListingStore, SummariesNotThere])
async def test_a_failing_load_gives_its_session_an_empty_summary(kind: type[ListingStore]) -> None:
    store: Any = kind()  # a store without the optional methods it lacks
    await _fill(store)
    store.failures = {_sid(1): OSError("connection reset"), _sid(2): _own_cancellation()}
    infos = {i.session_id: i for i in await list_sessions_from_store(store, DIRECTORY)}
    assert sorted(infos) == [_sid(0), _sid(1), _sid(2)]  # the untitled one is left out
    assert infos[_sid(0)].summary == "fine" and infos[_sid(0)].cwd == DIRECTORY
    for broken in (_sid(1), _sid(2)):
        assert infos[broken].summary == "" and infos[broken].first_prompt is None
        assert infos[broken].last_modified > 0  # the listing's time of the session


async def test_a_listed_session_the_store_cannot_load_is_left_out() -> None:
    store: Any = ListingStore()
    await _fill(store)
    await store.append({"project_key": KEY, "session_id": _sid(4)}, [])  # listed, no entries
    listed = await list_sessions_from_store(store, DIRECTORY)
    assert sorted(i.session_id for i in listed) == [_sid(0), _sid(1), _sid(2)]


async def test_cancelling_a_listing_is_not_a_broken_session() -> None:
    store: Any = ListingStore()
    await _fill(store)
    store.blocked = anyio.Event()  # every load waits
    done: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def listing() -> None:
                done.append(await list_sessions_from_store(store, DIRECTORY))

            tg.start_soon(listing)
            await store.loading.wait()
            tg.cancel_scope.cancel()
    assert done == []  # cancelled, not answered with empty summaries


async def test_summaries_skip_an_untitled_session() -> None:
    store = InMemorySessionStore()
    await _fill(store)
    listed = await list_sessions_from_store(store, DIRECTORY)
    assert sorted(i.session_id for i in listed) == [_sid(0), _sid(1), _sid(2)]


async def test_session_info_is_stamped_with_its_last_entry() -> None:
    store = InMemorySessionStore()
    sid = _sid(5)
    key: Any = {"project_key": KEY, "session_id": sid}
    # an entry with no type (written by another tool) reads as it is
    typeless: Any = {"leafUuid": "x"}
    await store.append(key, [typeless, _prompt(sid, "hi")])
    info = await get_session_info_from_store(store, sid, DIRECTORY)
    assert info is not None and info.summary == "hi"
    assert info.last_modified == 1767225600000  # 2026-01-01T00:00:00Z
    before = int(time.time() * 1000)
    await store.append(key, [_prompt(sid, "again", timestamp="the day after")])
    info = await get_session_info_from_store(store, sid, DIRECTORY)
    after = int(time.time() * 1000)
    assert info is not None and before <= info.last_modified <= after  # no time: now


async def test_subagents_listed_once_each() -> None:
    store = InMemorySessionStore()
    sid = _sid(6)
    for subpath in (
        "subagents/agent-x",
        "subagents/workflows/run-1/agent-x",  # the same agent, resumed in a workflow
        "subagents/workflows/run-1/agent-y",
        "notes/agent-z",  # not a subagent transcript
        "subagents/helper",
    ):
        key: Any = {"project_key": KEY, "session_id": sid, "subpath": subpath}
        await store.append(key, [_prompt(sid, "sub", isSidechain=True)])
    assert await list_subagents_from_store(store, sid, DIRECTORY) == ["x", "y"]


async def test_subagent_messages_of_bad_ids_and_metadata_only() -> None:
    store = InMemorySessionStore()
    sid = _sid(7)
    key: Any = {"project_key": KEY, "session_id": sid, "subpath": "subagents/agent-m"}
    meta: Any = {"type": "agent_metadata", "toolUseId": "toolu_1"}
    await store.append(key, [meta])
    assert await get_subagent_messages_from_store(store, sid, "m", DIRECTORY) == []
    await store.append(key, [_prompt(sid, "go", isSidechain=True)])
    (message,) = await get_subagent_messages_from_store(store, sid, "m", DIRECTORY)
    assert message.parent_tool_use_id == "toolu_1"
    assert await get_subagent_messages_from_store(store, "not-a-uuid", "m", DIRECTORY) == []
    assert await get_subagent_messages_from_store(store, sid, "", DIRECTORY) == []
