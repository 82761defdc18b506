"""Snapshot stores: the SQLite default, the in-memory store, snapshots kept in a transcript
`SessionStore`, the deprecated old names, corrupt files, and the snapshot format."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import MappingProxyType

import anyio
import pytest

from ccwire import (
    ClaudeCodeAgent,
    InMemorySessionStore,
    MemorySessionStore,
    MemorySnapshotStore,
    OptionsError,
    PendingPermission,
    PendingToolCall,
    SessionState,
    SessionStateInfo,
    SessionStats,
    SessionStoreError,
    SnapshotStore,
    SnapshotTimeoutError,
    SQLiteSessionStore,
    SQLiteSnapshotStore,
    SQLiteStore,
    StoreSnapshots,
    ToolStats,
    default_session_store_path,
)
from ccwire._core.errors import SessionInUseError
from ccwire._sessions.owner import current_owner, session_liveness
from ccwire._sessions.state import SessionOwner
from ccwire._sessions.stores.snapshots import SNAPSHOT_ENTRY_TYPE, SNAPSHOT_PROJECT_KEY
from tests.sessions.test_session_fake import finish_turn, harness, start

pytestmark = pytest.mark.anyio

T0 = datetime(2030, 5, 1, 12, 0, tzinfo=timezone.utc)


def snapshot(
    sid: str, state: SessionState = SessionState.RUNNING, *, at: int = 0
) -> SessionStateInfo:
    return SessionStateInfo(
        state=state,
        session_id=sid,
        stats=SessionStats(
            started_at=T0,
            tool_call_count=2,
            message_count=7,
            turn_count=1,
            tools=MappingProxyType({"mcp__calc__add": ToolStats(2, 1, 0.75)}),
            total_cost_usd=0.0018,
            usage=MappingProxyType({"input_tokens": 300, "output_tokens": 60}),
        ),
        pending_tool_calls=(
            PendingToolCall(
                "toolu_1", "mcp__calc__add", "calc", MappingProxyType({"a": 1}), T0, "req-1"
            ),
        ),
        pending_permissions=(
            PendingPermission("perm-1", "Bash", MappingProxyType({"command": "ls"}), None, T0),
        ),
        project_path="/srv/project",
        cli_state="running",
        updated_at=T0 + timedelta(seconds=at),
        owner=SessionOwner("build-host", 4242, "0f1e2d3c"),
    )


async def test_sqlite_store_round_trips_overwrites_and_lists(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "sessions.sqlite3"
    store = SQLiteSnapshotStore(path)
    assert isinstance(store, SnapshotStore)
    assert await store.load("nope") is None
    first = snapshot("a", at=1)
    await store.save(first)
    await store.save(snapshot("b", at=2))
    assert path.exists()
    loaded = await store.load("a")
    assert loaded == first
    assert loaded is not None and loaded.pending_tool_call is not None
    assert loaded.pending_tool_call.arguments == {"a": 1}
    assert loaded.stats.tools["mcp__calc__add"] == ToolStats(2, 1, 0.75)
    done = SessionStateInfo(
        state=SessionState.COMPLETED, session_id="a", updated_at=T0 + timedelta(seconds=3)
    )
    await store.save(done)
    assert [(i.session_id, i.state) for i in await store.list()] == [
        ("a", SessionState.COMPLETED),
        ("b", SessionState.RUNNING),
    ]
    again = SQLiteSnapshotStore(path)  # another instance (or process) sees the same rows
    assert (await again.load("a")) == done
    with contextlib.closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT state, snapshot FROM sessions WHERE session_id='b'").fetchone()
    assert row[0] == "running" and json.loads(row[1])["project_path"] == "/srv/project"
    assert json.loads(row[1])["owner"] == {"host": "build-host", "pid": 4242, "token": "0f1e2d3c"}


async def test_sqlite_store_takes_many_concurrent_writers(tmp_path: Path) -> None:
    store = SQLiteSnapshotStore(tmp_path / "s.sqlite3")
    async with anyio.create_task_group() as tg:
        for i in range(20):
            for state in (SessionState.STARTING, SessionState.RUNNING, SessionState.COMPLETED):
                tg.start_soon(store.save, snapshot(f"s{i}", state, at=i))
    listed = await store.list()
    assert sorted(i.session_id for i in listed) == sorted(f"s{i}" for i in range(20))


async def test_memory_store_orders_by_update_time() -> None:
    store = MemorySnapshotStore()
    assert isinstance(store, SnapshotStore)
    await store.save(snapshot("old", at=1))
    await store.save(snapshot("new", at=5))
    assert [i.session_id for i in await store.list()] == ["new", "old"]
    assert (await store.load("old")) == snapshot("old", at=1)
    assert await store.load("missing") is None


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG layout")
def test_default_path_follows_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_session_store_path() == tmp_path / "data" / "ccwire" / "sessions.sqlite3"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "share" / "ccwire" / "sessions.sqlite3"
    assert default_session_store_path() == expected
    agent = ClaudeCodeAgent()
    assert isinstance(agent.store, SQLiteSnapshotStore) and agent.store.path == expected
    assert not expected.exists()  # created on first save, not before
    assert ClaudeCodeAgent(store=False).store is None


def test_snapshot_dict_is_json_and_tolerates_missing_fields() -> None:
    info = snapshot("x")
    data = json.loads(json.dumps(info.to_dict()))
    assert SessionStateInfo.from_dict(data) == info
    minimal = SessionStateInfo.from_dict({"state": "failed", "session_id": "y"})
    assert minimal.state is SessionState.FAILED and minimal.stats == SessionStats()
    assert minimal.pending_tool_call is None and minimal.is_final and minimal.owner is None


def test_liveness_tells_live_orphaned_ended_and_unknown_snapshots() -> None:
    S = SessionState
    here = socket.gethostname()

    def liveness(state: SessionState, owner: SessionOwner | None) -> str:
        return session_liveness(SessionStateInfo(state=state, session_id="s-1", owner=owner))

    me = current_owner()
    assert (me.host, me.pid) == (here, os.getpid()) and current_owner() == me
    assert liveness(S.RUNNING, None) == "unknown"  # hand-made, or an older version
    assert liveness(S.COMPLETED, me) == "ended"
    assert liveness(S.CANCELLED, SessionOwner(here, 2**22 + 1, "gone")) == "ended"
    assert liveness(S.WAITING_TOOL_CALL, me) == "orphaned"  # ours, but nothing runs it
    assert liveness(S.PAUSED, SessionOwner(here, os.getpid(), "before-a-restart")) == "orphaned"
    assert liveness(S.RUNNING, SessionOwner("elsewhere.invalid", 1, "x")) == "unknown"
    if sys.platform != "win32":
        assert liveness(S.RUNNING, SessionOwner(here, 2**22 + 1, "crashed")) == "orphaned"
    if sys.platform != "win32" and os.getppid() > 0:
        assert liveness(S.STARTING, SessionOwner(here, os.getppid(), "parent")) == "live"


def test_old_store_names_still_work_with_a_deprecation_warning(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="MemorySnapshotStore"):
        memory = MemorySessionStore()
    with pytest.warns(DeprecationWarning, match="SQLiteSnapshotStore"):
        sqlite = SQLiteSessionStore(tmp_path / "old.sqlite3")
    assert isinstance(memory, MemorySnapshotStore) and isinstance(sqlite, SQLiteSnapshotStore)
    assert isinstance(memory, SnapshotStore) and sqlite.path == tmp_path / "old.sqlite3"


async def test_a_file_that_is_not_a_database_is_a_store_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "sessions.sqlite3"
    bad.write_bytes(b"this is not an SQLite database, just some bytes " * 100)
    for store in (SQLiteSnapshotStore(bad), SQLiteStore(bad)):
        with pytest.raises(SessionStoreError) as caught:
            await store.load("s-1") if isinstance(store, SQLiteSnapshotStore) else await store.load(
                {"project_key": "p", "session_id": "s-1"}
            )
        assert caught.value.path == str(bad) and str(bad) in str(caught.value)
        assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


async def test_a_corrupt_snapshot_row_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SQLiteSnapshotStore(path)
    await store.save(snapshot("good", at=1))
    await store.save(snapshot("bad", at=2))
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE sessions SET snapshot = '{\"state\": tru' WHERE session_id = 'bad'")
        db.execute("INSERT INTO sessions VALUES ('list', 'running', NULL, '[1, 2]')")
        deep = "[" * 100_000 + "]" * 100_000  # json.loads raises RecursionError
        db.execute("INSERT INTO sessions VALUES ('deep', 'running', NULL, ?)", (deep,))
        huge = snapshot("huge", at=3).to_dict()
        huge["stats"]["turn_count"] = 1e999  # written as Infinity: int() raises OverflowError
        db.execute("INSERT INTO sessions VALUES ('huge', 'running', NULL, ?)", (json.dumps(huge),))
    assert await store.load("good") == snapshot("good", at=1)
    calls = [lambda: store.load("bad"), lambda: store.load("list"), store.list]
    calls += [lambda: store.load("deep"), lambda: store.load("huge")]
    for call in calls:
        with pytest.raises(SessionStoreError, match="corrupt session snapshot") as caught:
            await call()
        assert caught.value.path == str(path)


@pytest.mark.parametrize("kind", ["sqlite", "transcript store"])
@pytest.mark.parametrize(
    "fault", ["a call without its start time", "another session's", "a negative count"]
)
async def test_a_snapshot_that_cannot_be_right_is_a_store_error(
    tmp_path: Path, kind: str, fault: str
) -> None:
    data = snapshot("s-1").to_dict()
    if fault == "another session's":
        data["session_id"] = "s-2"  # stored under s-1: resuming s-1 would take s-2's place
    elif fault == "a negative count":
        data["stats"]["turn_count"] = -3  # a resumed session would count on from it
    else:
        del data["pending_tool_calls"][0]["started_at"]
    text = json.dumps(data)
    if kind == "sqlite":
        path = tmp_path / "s.sqlite3"
        store: SnapshotStore = SQLiteSnapshotStore(path)
        await store.list()  # makes the table
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute("INSERT INTO sessions VALUES ('s-1', 'running', NULL, ?)", (text,))
    else:
        backing = InMemorySessionStore()
        store = StoreSnapshots(backing)
        key = {"project_key": SNAPSHOT_PROJECT_KEY, "session_id": "s-1"}
        entry = {"type": SNAPSHOT_ENTRY_TYPE, "snapshot": json.loads(text)}
        await backing.append(key, [entry])  # type: ignore[arg-type, list-item]
    for call in (lambda: store.load("s-1"), store.list):
        with pytest.raises(SessionStoreError, match="corrupt session snapshot"):
            await call()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "transcript store"])
async def test_a_wrong_typed_session_id_or_snapshot_is_an_options_error(
    tmp_path: Path, kind: str
) -> None:
    """``SQLiteSnapshotStore().load(5)`` answered ``None``, as for an unknown session,
    and ``save()`` of something else raised AttributeError from inside the store."""
    store: SnapshotStore = (
        MemorySnapshotStore()
        if kind == "memory"
        else SQLiteSnapshotStore(tmp_path / "s.sqlite3")
        if kind == "sqlite"
        else StoreSnapshots(InMemorySessionStore())
    )
    await store.save(snapshot("s-1"))
    for wrong in (5, None, b"s-1"):
        with pytest.raises(OptionsError, match="session_id must be a str, not"):
            await store.load(wrong)  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match="info must be a SessionStateInfo, not dict"):
        await store.save(snapshot("s-2").to_dict())  # type: ignore[arg-type]
    assert [i.session_id for i in await store.list()] == ["s-1"]


async def test_a_corrupt_transcript_entry_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store = SQLiteStore(path)
    key = {"project_key": "p", "session_id": "s"}
    await store.append(key, [{"type": "user", "uuid": "u1"}])  # type: ignore[arg-type]
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE ccwire_entries SET entry = '{oops'")
    with pytest.raises(SessionStoreError, match="not valid JSON") as caught:
        await store.load(key)  # type: ignore[arg-type]
    assert caught.value.path == str(path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:  # nested too deep to decode
        db.execute("UPDATE ccwire_entries SET entry = ?", ("[" * 100_000 + "]" * 100_000,))
    with pytest.raises(SessionStoreError, match="not valid JSON"):
        await store.load(key)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_snapshots_persist_through_a_transcript_store(tmp_path: Path, kind: str) -> None:
    backing = InMemorySessionStore() if kind == "memory" else SQLiteStore(tmp_path / "t.sqlite3")
    store = StoreSnapshots(backing)
    assert isinstance(store, SnapshotStore)
    assert await store.load("a") is None and await store.list() == []
    await store.save(snapshot("a", at=1))
    await store.save(snapshot("b", at=2))
    done = SessionStateInfo(
        state=SessionState.COMPLETED, session_id="a", updated_at=T0 + timedelta(seconds=3)
    )
    await store.save(done)
    assert await store.load("a") == done
    assert await store.load("b") == snapshot("b", at=2)
    assert [i.session_id for i in await store.list()] == ["a", "b"]
    # the transcripts' own listing is not disturbed: snapshots live under their own key
    assert await backing.list_sessions("p") == []
    if kind == "sqlite":  # another instance (another process) reads them back
        again = StoreSnapshots(SQLiteStore(tmp_path / "t.sqlite3"))
        assert await again.load("a") == done


def test_an_agent_given_a_transcript_store_keeps_its_snapshots_there() -> None:
    backing = InMemorySessionStore()
    agent = ClaudeCodeAgent(store=backing)
    assert isinstance(agent.store, StoreSnapshots) and agent.store.store is backing
    snapshots = MemorySnapshotStore()
    assert ClaudeCodeAgent(store=snapshots).store is snapshots
    with pytest.raises(TypeError, match="not a session store"):
        ClaudeCodeAgent(store=object())  # type: ignore[arg-type]


# ----------------------------------------------- closing waits for the last snapshot


class _SlowStore(MemorySnapshotStore):
    """Saves a final snapshot only when the test releases it."""

    def __init__(self, *, snapshot_timeout: float) -> None:
        super().__init__(snapshot_timeout=snapshot_timeout)
        self.final_started = anyio.Event()
        self.release = anyio.Event()

    async def save(self, info: SessionStateInfo) -> None:
        if info.is_final:
            self.final_started.set()
            await self.release.wait()
        await super().save(info)


async def test_close_waits_for_a_slow_final_snapshot() -> None:
    store = _SlowStore(snapshot_timeout=60)
    async with harness(store=store) as (agent, h):
        session, fake, p = await start(agent, h)
        fake.session_id = session.session_id
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
        closed = anyio.Event()

        async def close() -> None:
            await session.close()
            closed.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(close)
            with anyio.fail_after(10):
                await store.final_started.wait()
            assert not closed.is_set()  # close() is still waiting for the store
            store.release.set()
        saved = await store.load(session.session_id)
        assert saved is not None and saved.state is SessionState.COMPLETED
        assert session.closed


async def test_close_raises_a_typed_error_when_the_store_never_saves() -> None:
    store = _SlowStore(snapshot_timeout=0.2)
    async with harness(store=store) as (agent, h):
        session, fake, p = await start(agent, h)
        fake.session_id = session.session_id
        await finish_turn(fake, p["uuid"])
        await session.wait_for_completion(5)
        # the store's snapshot_timeout bounds close(): its stuck save() is not waited for
        with anyio.fail_after(2), pytest.raises(SnapshotTimeoutError) as caught:
            await session.close()
        assert caught.value.session_id == session.session_id and caught.value.timeout == 0.2
        assert caught.value.unsaved == 1  # the final snapshot, stuck in save()
        assert isinstance(caught.value, SessionStoreError) and isinstance(
            caught.value, TimeoutError
        )
        assert session.closed and agent.sessions() == []
        await session.close()  # raised once; closing again is quiet
        saved = await store.load(session.session_id)
        assert saved is not None and saved.state is SessionState.RUNNING  # the older state


async def test_one_owner_per_session_id_in_a_process() -> None:
    async with harness() as (agent, h), harness(handshake=False) as (other, h2):
        first = agent.create_session("hi", session_id="11111111-2222-3333-4444-555555555555")
        await first.start()
        twin = other.create_session("hi", session_id=first.session_id)  # another agent
        with pytest.raises(SessionInUseError, match="already running") as caught:
            await twin.start()
        assert caught.value.session_id == first.session_id
        assert len(h.fakes) == 1 and len(h2.fakes) == 1
        assert h2.fakes[0].received == []  # the twin never started its CLI
        fake = h.fakes[-1]
        fake.session_id = first.session_id
        p = await fake.receive("user")
        await finish_turn(fake, p["uuid"])
        await first.wait_for_completion(5)
        await first.close()
        await twin.close()  # never started: closing it is harmless


class _FailingLoads(MemorySnapshotStore):
    """A store of the user's own whose ``load`` raises a foreign error, or never answers."""

    def __init__(self, *, hang: bool) -> None:
        super().__init__(snapshot_timeout=0.2)
        self.hang = hang

    async def load(self, session_id: str) -> SessionStateInfo | None:
        if self.hang:
            await anyio.sleep_forever()
        raise ConnectionResetError("the database went away")


@pytest.mark.parametrize("hang", [False, True], ids=["raises", "hangs"])
async def test_resume_session_types_and_bounds_a_failing_store_load(hang: bool) -> None:
    async with harness(store=_FailingLoads(hang=hang)) as (agent, h):
        with anyio.fail_after(5), pytest.raises(SessionStoreError, match="_FailingLoads") as err:
            await agent.resume_session("11111111-2222-3333-4444-555555555555", "go on")
        if hang:
            assert "within 0.2 s" in str(err.value)
        else:
            assert isinstance(err.value.__cause__, ConnectionResetError)
        assert h.fakes == [] and agent.sessions() == []  # no CLI was started
