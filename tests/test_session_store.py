"""Session stores: the SQLite default, the in-memory store, and the snapshot format."""

from __future__ import annotations

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
    MemorySessionStore,
    PendingPermission,
    PendingToolCall,
    SessionState,
    SessionStateInfo,
    SessionStats,
    SessionStore,
    SQLiteSessionStore,
    ToolStats,
    default_session_store_path,
)
from ccwire._sessions.owner import current_owner, session_liveness
from ccwire._sessions.state import SessionOwner

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
    store = SQLiteSessionStore(path)
    assert isinstance(store, SessionStore)
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
    again = SQLiteSessionStore(path)  # another instance (or process) sees the same rows
    assert (await again.load("a")) == done
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT state, snapshot FROM sessions WHERE session_id='b'").fetchone()
    assert row[0] == "running" and json.loads(row[1])["project_path"] == "/srv/project"
    assert json.loads(row[1])["owner"] == {"host": "build-host", "pid": 4242, "token": "0f1e2d3c"}


async def test_sqlite_store_takes_many_concurrent_writers(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.sqlite3")
    async with anyio.create_task_group() as tg:
        for i in range(20):
            for state in (SessionState.STARTING, SessionState.RUNNING, SessionState.COMPLETED):
                tg.start_soon(store.save, snapshot(f"s{i}", state, at=i))
    listed = await store.list()
    assert sorted(i.session_id for i in listed) == sorted(f"s{i}" for i in range(20))


async def test_memory_store_orders_by_update_time() -> None:
    store = MemorySessionStore()
    assert isinstance(store, SessionStore)
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
    assert isinstance(agent.store, SQLiteSessionStore) and agent.store.path == expected
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
