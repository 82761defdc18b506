"""Resume after a crash, with the snapshots in each transcript store on a real server.

A child Python process runs a session (the real CLI against the scripted model) with
`ClaudeCodeAgent(store=<SQLiteStore | PostgresStore | RedisStore>)`, so its snapshots
go through `StoreSnapshots`. It is SIGKILLed while a tool call is in flight. A new
agent in this process then finds the orphaned snapshot in the same store and resumes
the conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    PostgresStore,
    RedisStore,
    SessionState,
    SessionStore,
    SQLiteStore,
    StoreSnapshots,
)
from ccwire.testing import ScriptedModel, text, tool_use
from tests.e2e.conftest import CLI_PATH
from tests.sessions.crash import kill_at_tool_call

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(CLI_PATH is None, reason="Claude Code CLI not installed (run `make cli`)"),
]

TIMEOUT = 60


def _make_store(spec: dict[str, str]) -> SessionStore:
    kinds: dict[str, Any] = {"sqlite": SQLiteStore, "postgres": PostgresStore, "redis": RedisStore}
    store: SessionStore = kinds[spec["kind"]](spec["where"])
    return store


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    kind = str(request.param)
    if kind == "sqlite":
        return {"kind": kind, "where": str(tmp_path / "store.sqlite3")}
    if kind == "postgres":
        return {"kind": kind, "where": str(request.getfixturevalue("postgres_dsn"))}
    return {"kind": kind, "where": str(request.getfixturevalue("redis_url"))}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # each run starts two real CLIs
async def test_a_crashed_session_resumes_from_the_store(
    scripted_model: ScriptedModel,
    offline_env: dict[str, str],
    tmp_path: Path,
    store_spec: dict[str, str],
) -> None:
    scripted_model.add(tool_use("mcp__jobs__slow", {"job": "C"}))
    scripted_model.default = text("The word was PAPAYA.")
    cwd = tmp_path / "work"
    cwd.mkdir()
    assert CLI_PATH is not None
    sid = await kill_at_tool_call(CLI_PATH, str(cwd), store_spec, offline_env, TIMEOUT)

    store = _make_store(store_spec)  # a new connection, as a new process would make
    crashed = await StoreSnapshots(store).load(sid)
    assert crashed is not None and crashed.state is SessionState.WAITING_TOOL_CALL
    assert crashed.pending_tool_call is not None
    assert crashed.pending_tool_call.tool_name == "mcp__jobs__slow"

    options = ClaudeAgentOptions(
        cli_path=CLI_PATH, cwd=str(cwd), env=offline_env, allowed_tools=["mcp__jobs__slow"]
    )
    try:
        with anyio.fail_after(TIMEOUT):
            async with ClaudeCodeAgent(options, store=store) as agent:
                session = await agent.resume_session(sid, "What was the word?")
                final = await session.wait_for_completion(TIMEOUT)
        assert final.state is SessionState.COMPLETED and final.result == "The word was PAPAYA."
        assert final.session_id == sid and final.resumed_from == sid
        history = json.dumps(scripted_model.turn_requests[-1].body["messages"])
        assert "Remember the word PAPAYA" in history and "What was the word?" in history
        saved = await StoreSnapshots(store).load(sid)
        assert saved is not None and saved.state is SessionState.COMPLETED
    finally:
        aclose = getattr(store, "aclose", None)
        if aclose is not None:
            await aclose()
