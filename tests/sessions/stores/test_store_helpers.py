"""rename/tag/delete via a store, and importing local transcripts into one."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    InMemorySessionStore,
    ResultMessage,
    SQLiteStore,
    delete_session_via_store,
    import_session_to_store,
    rename_session_via_store,
    tag_session_via_store,
)
from ccwire._conversation.cli_paths import project_key_for_directory
from ccwire._conversation.transcript_store.resume import materialize_resume_session
from ccwire.testing import ScriptedModel, text
from tests.e2e.conftest import CLI_PATH

pytestmark = pytest.mark.anyio

SID = "11111111-2222-3333-4444-555555555555"


async def test_rename_and_tag_append_entries_the_summary_folds(tmp_path: Path) -> None:
    store = InMemorySessionStore()
    key = {"project_key": project_key_for_directory(tmp_path), "session_id": SID}
    await rename_session_via_store(store, SID, "  My title  ", directory=str(tmp_path))
    await tag_session_via_store(store, SID, "exp\u200b-1", directory=str(tmp_path))
    entries = store.get_entries(key)  # type: ignore[arg-type]
    assert [(e["type"], e.get("customTitle"), e.get("tag")) for e in entries] == [
        ("custom-title", "My title", None),
        ("tag", None, "exp-1"),  # the zero-width space is gone
    ]
    assert all(e["sessionId"] == SID and e["uuid"] and e["timestamp"] for e in entries)  # type: ignore[typeddict-item]
    (summary,) = await store.list_session_summaries(key["project_key"])
    assert summary["data"]["custom_title"] == "My title" and summary["data"]["tag"] == "exp-1"
    await tag_session_via_store(store, SID, None, directory=str(tmp_path))
    (summary,) = await store.list_session_summaries(key["project_key"])
    assert "tag" not in summary["data"]
    for bad in ("", "   ", "\u200b"):
        with pytest.raises(ValueError, match="non-empty"):
            await tag_session_via_store(store, SID, bad)
    with pytest.raises(ValueError, match="non-empty"):
        await rename_session_via_store(store, SID, " ")
    with pytest.raises(ValueError, match="Invalid session_id"):
        await rename_session_via_store(store, "nope", "t")
    await delete_session_via_store(store, SID, directory=str(tmp_path))
    assert await store.load(key) is None  # type: ignore[arg-type]


async def test_delete_is_a_no_op_for_a_store_without_delete() -> None:
    class AppendOnly:
        def __init__(self) -> None:
            self.calls = 0

        async def append(self, key: object, entries: object) -> None:
            self.calls += 1

        async def load(self, key: object) -> None:
            return None

    store = AppendOnly()
    await delete_session_via_store(store, SID)  # type: ignore[arg-type]
    assert store.calls == 0


async def test_import_copies_a_transcript_its_subagents_and_their_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    project = config / "projects" / "-some-project"
    sub = project / SID / "subagents"
    sub.mkdir(parents=True)
    lines = [{"type": "user", "uuid": f"u{i}", "n": i} for i in range(5)]
    (project / f"{SID}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + "\n")
    (sub / "agent-1.jsonl").write_text(json.dumps({"type": "user", "uuid": "s"}) + "\n")
    (sub / "agent-1.meta.json").write_text(json.dumps({"agentType": "helper", "type": "x"}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    store = SQLiteStore(tmp_path / "store.sqlite3")
    await import_session_to_store(SID, store, batch_size=2)
    key = {"project_key": "-some-project", "session_id": SID}
    assert await store.load(key) == lines  # type: ignore[arg-type]
    assert await store.load({**key, "subpath": "subagents/agent-1"}) == [  # type: ignore[typeddict-item]
        {"type": "user", "uuid": "s"},
        {"agentType": "helper", "type": "agent_metadata"},
    ]
    await import_session_to_store(SID, store)  # again: the uuids keep one copy
    assert await store.load(key) == lines  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        await import_session_to_store("99999999-2222-3333-4444-555555555555", store)
    with pytest.raises(FileNotFoundError):
        await import_session_to_store(SID, store, directory=str(tmp_path / "elsewhere"))


@pytest.mark.e2e
@pytest.mark.skipif(CLI_PATH is None, reason="Claude Code CLI not installed (run `make cli`)")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # two real CLIs
async def test_an_imported_cli_session_resumes_from_the_store(
    scripted_model: ScriptedModel,
    offline_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scripted_model.add(text("Noted."))
    scripted_model.default = text("It was MANGO.")
    cwd = tmp_path / "work"
    cwd.mkdir()
    options = ClaudeAgentOptions(cli_path=CLI_PATH, cwd=str(cwd), env=offline_env)
    with anyio.fail_after(60):
        async with ClaudeSDKClient(options) as client:
            await client.query("Remember the fruit MANGO.")
            async for _ in client.receive_response():
                pass
            session_id = client.session_id
    assert session_id is not None
    monkeypatch.setenv("HOME", offline_env["HOME"])  # where the CLI kept the transcript
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    store = SQLiteStore(tmp_path / "store.sqlite3")
    await import_session_to_store(session_id, store, directory=str(cwd))
    key = {"project_key": project_key_for_directory(cwd), "session_id": session_id}
    stored = await store.load(key)  # type: ignore[arg-type]
    assert stored is not None and any("MANGO" in json.dumps(e) for e in stored)

    materialized = await materialize_resume_session(
        store, cwd=cwd, resume=session_id, env=offline_env
    )
    assert materialized is not None
    resumed = ClaudeAgentOptions(
        cli_path=CLI_PATH, cwd=str(cwd), env=materialized.env(offline_env), resume=session_id
    )
    try:
        with anyio.fail_after(60):
            async with ClaudeSDKClient(resumed) as client:
                await client.query("Which fruit?")
                results = [
                    m async for m in client.receive_response() if isinstance(m, ResultMessage)
                ]
    finally:
        await materialized.cleanup()
    assert results[-1].result == "It was MANGO."
    history = json.dumps(scripted_model.turn_requests[-1].body["messages"])
    assert "Remember the fruit MANGO." in history and "Which fruit?" in history
