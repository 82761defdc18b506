"""`materialize_resume_session`: what lands in the temporary config dir, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from ccwire import InMemorySessionStore, SessionKey, SessionStoreEntry, SessionStoreError
from ccwire._conversation.cli_paths import project_key_for_directory
from ccwire._conversation.transcript_store.resume import materialize_resume_session

pytestmark = pytest.mark.anyio

SID = "11111111-2222-3333-4444-555555555555"
OLDER = "99999999-2222-3333-4444-555555555555"
SIDECHAIN = "aaaaaaaa-2222-3333-4444-555555555555"


def e(**fields: Any) -> SessionStoreEntry:
    return cast("SessionStoreEntry", {"type": "user", **fields})


def _jsonl_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*.jsonl")]


def test_project_keys_follow_the_cli_directory_names(tmp_path: Path) -> None:
    assert project_key_for_directory("/srv/my project.v2") == "-srv-my-project-v2"
    long = "/" + "x" * 300
    key = project_key_for_directory(long)
    assert key.startswith("-" + "x" * 199 + "-") and len(key) > 200
    assert key == project_key_for_directory(long)  # stable
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert project_key_for_directory(tmp_path / "link") == project_key_for_directory(
        tmp_path / "real"
    )


async def test_a_session_and_its_subagents_are_written_like_the_cli_keeps_them(
    tmp_path: Path,
) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    creds = {"claudeAiOauth": {"accessToken": "at", "refreshToken": "single-use"}}
    (home / ".claude" / ".credentials.json").write_text(json.dumps(creds))
    settings = {"model": "x", "enabledPlugins": {"p": True}, "env": {"CLAUDE_CONFIG_DIR": "/x"}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    (home / ".claude.json").write_text('{"theme": "dark"}')
    store = InMemorySessionStore()
    key: SessionKey = {"project_key": project_key_for_directory(cwd), "session_id": SID}
    await store.append(key, [e(uuid="u1", text="hello"), e(uuid="u2")])
    await store.append(
        {**key, "subpath": "subagents/agent-1"},
        [e(uuid="s1"), cast("SessionStoreEntry", {"type": "agent_metadata", "agentType": "x"})],
    )
    await store.append({**key, "subpath": "../../escape"}, [e(uuid="bad")])

    done = await materialize_resume_session(store, cwd=cwd, resume=SID, env={"HOME": str(home)})
    assert done is not None and done.resume_session_id == SID
    base = done.config_dir
    project = base / "projects" / key["project_key"]
    main = (project / f"{SID}.jsonl").read_text().splitlines()
    assert [json.loads(line)["uuid"] for line in main] == ["u1", "u2"]
    sub = project / SID / "subagents" / "agent-1.jsonl"
    assert [json.loads(line)["uuid"] for line in sub.read_text().splitlines()] == ["s1"]
    assert json.loads(sub.with_name("agent-1.meta.json").read_text()) == {"agentType": "x"}
    assert sorted(_jsonl_files(base)) == [f"{SID}.jsonl", "agent-1.jsonl"]  # no escape.jsonl
    copied = json.loads((base / ".credentials.json").read_text())
    assert copied == {"claudeAiOauth": {"accessToken": "at"}}  # never the refresh token
    assert json.loads((base / "settings.json").read_text()) == {"model": "x", "env": {}}
    assert json.loads((base / ".claude.json").read_text()) == {"theme": "dark"}
    assert done.env({"A": "1"}) == {"A": "1", "CLAUDE_CONFIG_DIR": str(base)}
    await done.cleanup()
    assert not base.exists()


async def test_continue_picks_the_newest_session_that_is_not_a_subagent(tmp_path: Path) -> None:
    store = InMemorySessionStore()
    pk = project_key_for_directory(tmp_path)
    await store.append({"project_key": pk, "session_id": OLDER}, [e(uuid="o")])
    await store.append({"project_key": pk, "session_id": SID}, [e(uuid="n")])
    await store.append(
        {"project_key": pk, "session_id": SIDECHAIN}, [e(uuid="side", isSidechain=True)]
    )
    await store.append({"project_key": pk, "session_id": "not-a-uuid"}, [e(uuid="x")])
    done = await materialize_resume_session(store, cwd=tmp_path, continue_conversation=True)
    assert done is not None and done.resume_session_id == SID
    await done.cleanup()


async def test_nothing_to_resume_gives_none() -> None:
    store = InMemorySessionStore()
    assert await materialize_resume_session(store, resume=SID) is None  # not in the store
    assert await materialize_resume_session(store, resume="not-a-uuid") is None
    assert await materialize_resume_session(store) is None  # neither resume nor continue


async def test_store_failures_are_typed() -> None:
    class Broken(InMemorySessionStore):
        async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
            raise ConnectionError("db down")

    with pytest.raises(SessionStoreError, match="db down"):
        await materialize_resume_session(Broken(), resume=SID)

    class Minimal:
        async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None: ...

        async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
            return None

    with pytest.raises(ValueError, match="list_sessions"):
        await materialize_resume_session(Minimal(), continue_conversation=True)  # type: ignore[arg-type]
