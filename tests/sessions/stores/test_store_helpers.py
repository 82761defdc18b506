"""rename/tag/delete via a store, and importing local transcripts into one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    InMemorySessionStore,
    ResultMessage,
    SQLiteStore,
    TranscriptArgumentError,
    delete_session_via_store,
    fork_session_via_store,
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


def _prompt(session_id: str, n: int, text: str) -> Any:  # a SessionStoreEntry
    return {
        "type": "user",
        "uuid": f"11111111-0000-4000-8000-{n:012d}",
        "parentUuid": None,
        "sessionId": session_id,
        "message": {"role": "user", "content": text},
    }


async def _forked_title(store: InMemorySessionStore, session_id: str) -> Any:
    forked = await fork_session_via_store(store, session_id, "/p")
    entries = await store.load({"project_key": "-p", "session_id": forked.session_id})
    assert entries is not None
    return entries[-1]["customTitle"] if entries[-1]["type"] == "custom-title" else None  # type: ignore[typeddict-item]


async def test_a_store_fork_is_titled_after_its_source() -> None:
    store = InMemorySessionStore()
    named, ai_named, untitled = (f"aaaaaaaa-0000-4000-8000-00000000000{n}" for n in (1, 2, 3))
    titles: list[Any] = [
        {"type": "ai-title", "aiTitle": "AI name", "sessionId": named},
        {"type": "custom-title", "customTitle": "Custom name", "sessionId": named},
        {"type": "ai-title", "aiTitle": "Later AI name", "sessionId": named},
    ]
    await store.append(
        {"project_key": "-p", "session_id": named}, [_prompt(named, 1, "hi"), *titles]
    )
    ai_only: list[Any] = [_prompt(ai_named, 2, "hi"), {"type": "ai-title", "aiTitle": "AI name"}]
    await store.append({"project_key": "-p", "session_id": ai_named}, ai_only)
    await store.append(
        {"project_key": "-p", "session_id": untitled}, [_prompt(untitled, 3, "Do X")]
    )
    assert await _forked_title(store, named) == "Custom name (fork)"  # a custom title wins
    assert await _forked_title(store, ai_named) == "AI name (fork)"
    assert await _forked_title(store, untitled) == "Do X (fork)"  # the first prompt


async def test_a_store_fork_keeps_its_sources_content_replacements_only() -> None:
    store = InMemorySessionStore()
    sid = "aaaaaaaa-0000-4000-8000-000000000001"
    entries: list[Any] = [
        _prompt(sid, 1, "hi"),
        {"type": "content-replacement", "sessionId": sid, "replacements": [{"kind": "mine"}]},
        {"type": "content-replacement", "sessionId": SID, "replacements": [{"kind": "other"}]},
        {"type": "content-replacement", "sessionId": sid, "replacements": "not a list"},
    ]
    await store.append({"project_key": "-p", "session_id": sid}, entries)
    forked = await fork_session_via_store(store, sid, "/p")
    loaded = await store.load({"project_key": "-p", "session_id": forked.session_id})
    assert loaded is not None
    (replacement,) = [e for e in loaded if e["type"] == "content-replacement"]
    assert replacement["replacements"] == [{"kind": "mine"}]  # type: ignore[typeddict-item]
    assert replacement["sessionId"] == forked.session_id  # type: ignore[typeddict-item]


async def test_a_store_fork_passes_over_what_is_not_an_entry() -> None:
    sid = "aaaaaaaa-0000-4000-8000-000000000001"

    class Loose:  # a store handing back what is not an object (it should not)
        def __init__(self) -> None:
            self.appended: list[Any] = []

        async def append(self, key: object, entries: list[Any]) -> None:
            self.appended += entries

        async def load(self, key: object) -> list[Any]:
            return ["junk", 7, _prompt(sid, 1, "hi"), None]

    store = Loose()
    await fork_session_via_store(store, sid, "/p")  # type: ignore[arg-type]
    assert [e["type"] for e in store.appended] == ["user", "custom-title"]
    assert store.appended[-1]["customTitle"] == "hi (fork)"


async def test_a_store_fork_refuses_a_bad_message_id() -> None:
    store = InMemorySessionStore()
    sid = "aaaaaaaa-0000-4000-8000-000000000001"
    await store.append({"project_key": "-p", "session_id": sid}, [_prompt(sid, 1, "hi")])
    with pytest.raises(TranscriptArgumentError, match="Invalid up_to_message_id: msg-1"):
        await fork_session_via_store(store, sid, "/p", up_to_message_id="msg-1")
    assert len(await store.list_sessions("-p")) == 1  # nothing was written


def _lines(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


async def test_import_nested_subagents_and_their_sidecars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "config" / "projects" / "-p"
    entries = [{"type": "user", "uuid": f"u{i}"} for i in range(4)]
    _lines(project / f"{SID}.jsonl", entries)
    sub = project / SID / "subagents"
    _lines(sub / "workflows" / "run-1" / "agent-deep.jsonl", [{"type": "user", "uuid": "d"}])
    _lines(sub / "agent-bad.jsonl", [{"type": "user", "uuid": "b"}])
    (sub / "agent-bad.meta.json").write_text("{not json")  # no metadata from it
    _lines(sub / "agent-list.jsonl", [{"type": "user", "uuid": "l"}])
    (sub / "agent-list.meta.json").write_text("[1]")
    (sub / "notes.txt").write_text("not a transcript")
    store = InMemorySessionStore()
    await import_session_to_store(SID, store, batch_size=0)  # the default size
    key = {"project_key": "-p", "session_id": SID}
    assert await store.load(key) == entries  # type: ignore[arg-type]
    assert await store.list_subkeys(key) == [  # type: ignore[arg-type]
        "subagents/agent-bad",
        "subagents/agent-list",
        "subagents/workflows/run-1/agent-deep",
    ]
    deep = {**key, "subpath": "subagents/workflows/run-1/agent-deep"}
    assert await store.load(deep) == [{"type": "user", "uuid": "d"}]  # type: ignore[arg-type]
    bad = {**key, "subpath": "subagents/agent-bad"}
    assert await store.load(bad) == [{"type": "user", "uuid": "b"}]  # type: ignore[arg-type]

    only_main = InMemorySessionStore()
    await import_session_to_store(SID, only_main, include_subagents=False)
    assert await only_main.load(key) == entries  # type: ignore[arg-type]
    assert await only_main.list_subkeys(key) == []  # type: ignore[arg-type]


class _Recorder(InMemorySessionStore):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    async def append(self, key: Any, entries: Any) -> None:
        self.batches.append(len(entries))
        await super().append(key, entries)


async def test_import_appends_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    path = tmp_path / "config" / "projects" / "-p" / f"{SID}.jsonl"
    _lines(path, [{"type": "user", "uuid": f"u{i}"} for i in range(4)])
    store = _Recorder()
    await import_session_to_store(SID, store, batch_size=2)
    assert store.batches == [2, 2]  # no empty batch after a full one
    _lines(path, [{"type": "user", "uuid": f"v{i}"} for i in range(5)])
    store = _Recorder()
    await import_session_to_store(SID, store, batch_size=2)
    assert store.batches == [2, 2, 1]


async def test_import_finds_a_long_projects_folder_by_its_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    directory = "/" + "/".join(["a-rather-long-folder-name"] * 10)  # a key over 200 characters
    key = project_key_for_directory(directory)
    assert len(key) > 200
    # the CLI hashed the path its own way: the folder shares only the first 200 characters
    folder = tmp_path / "config" / "projects" / f"{key[:200]}-cli0hash"
    _lines(folder / f"{SID}.jsonl", [{"type": "user", "uuid": "u"}])
    _lines(folder.with_name(f"{key[:200]}-another") / f"{SID}.jsonl", [])  # empty: not it
    (folder.with_name(f"{key[:200]}-0first") / "other.jsonl").parent.mkdir()  # nor this
    store = InMemorySessionStore()
    await import_session_to_store(SID, store, directory=directory)
    loaded = await store.load({"project_key": folder.name, "session_id": SID})
    assert loaded == [{"type": "user", "uuid": "u"}]
    with pytest.raises(FileNotFoundError):
        await import_session_to_store(SID, store, directory="/other" + directory)


async def test_import_without_a_projects_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "never-used"))
    with pytest.raises(FileNotFoundError, match=f"Session {SID} not found"):
        await import_session_to_store(SID, InMemorySessionStore())
