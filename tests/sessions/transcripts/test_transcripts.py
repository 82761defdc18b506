"""The session helpers on transcripts the real CLI wrote (committed fixtures)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ccwire
from ccwire import (
    SDKSessionInfo,
    SessionMessage,
    SessionNotFoundError,
    TranscriptArgumentError,
    delete_session,
    fold_session_summary,
    fork_session,
    get_session_info,
    get_session_messages,
    get_subagent_messages,
    list_sessions,
    list_subagents,
    project_key_for_directory,
    rename_session,
    tag_session,
)

from .conftest import Captured


def _blocks(m: SessionMessage) -> list[dict[str, Any]]:
    content = m.message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ----------------------------------------------------------------------- listing


def test_list_sessions_newest_first_with_titles(captured: Captured) -> None:
    infos = list_sessions()
    assert {i.session_id for i in infos} == {
        captured.multi_turn,
        captured.subagent,
        captured.forked,
    }
    assert [i.last_modified for i in infos] == sorted(
        (i.last_modified for i in infos), reverse=True
    )
    by_id = {i.session_id: i for i in infos}
    multi = by_id[captured.multi_turn]
    assert multi.first_prompt == "Run echo alpha, then echo one and two in parallel"
    assert multi.summary == "Where were we?"  # the last prompt, after the resume
    assert multi.cwd == captured.cwd
    assert multi.file_size == (captured.project_dir / f"{captured.multi_turn}.jsonl").stat().st_size
    assert multi.created_at is not None and multi.created_at <= multi.last_modified
    # The subagent's own transcript is not a session of its own.
    assert by_id[captured.subagent].first_prompt == "Ask the helper agent to say done"


def test_list_sessions_per_project_and_paging(captured: Captured) -> None:
    everything = list_sessions()
    assert list_sessions(captured.cwd) == everything
    assert list_sessions(captured.cwd, include_worktrees=False) == everything
    assert list_sessions(limit=1, offset=1) == everything[1:2]
    assert list_sessions(offset=2) == everything[2:]
    assert list_sessions("/no/such/project") == []


def test_get_session_info_matches_the_listing(captured: Captured) -> None:
    listed = {i.session_id: i for i in list_sessions()}
    for sid, info in listed.items():
        assert get_session_info(sid) == info
        assert get_session_info(sid, directory=captured.cwd) == info
    assert get_session_info("not-a-uuid") is None
    assert get_session_info("00000000-0000-0000-0000-000000000000") is None


def test_project_key_matches_the_cli(captured: Captured, tmp_path: Path) -> None:
    assert project_key_for_directory(captured.cwd) == captured.project_dir.name
    long_dir = tmp_path / ("x" * 250)
    long_dir.mkdir()
    key = project_key_for_directory(long_dir)
    assert len(key) > 200 and key[:200] == project_key_for_directory(long_dir)[:200]
    assert key.startswith(project_key_for_directory(tmp_path))


# ----------------------------------------------------------------------- messages


def test_messages_keep_parallel_tool_calls_and_results(captured: Captured) -> None:
    messages = get_session_messages(captured.multi_turn)
    calls = [
        b for m in messages if m.type == "assistant" for b in _blocks(m) if b["type"] == "tool_use"
    ]
    results = [
        b for m in messages if m.type == "user" for b in _blocks(m) if b["type"] == "tool_result"
    ]
    assert [c["input"]["command"] for c in calls] == ["echo alpha", "echo one", "echo two"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    # Every result follows its call.
    seen_calls: set[str] = set()
    for m in messages:
        for b in _blocks(m):
            if b["type"] == "tool_use":
                seen_calls.add(b["id"])
            if b["type"] == "tool_result":
                assert b["tool_use_id"] in seen_calls
    prompts = [
        b["text"] for m in messages if m.type == "user" for b in _blocks(m) if b["type"] == "text"
    ]
    assert prompts == [
        "Run echo alpha, then echo one and two in parallel",
        "Thanks!",
        "Where were we?",
    ]
    assert all(m.session_id == captured.multi_turn for m in messages)
    assert get_session_messages(captured.multi_turn, limit=2, offset=1) == messages[1:3]
    assert get_session_messages(captured.multi_turn, offset=10) == messages[10:]


def test_fork_made_by_the_cli_has_its_own_branch(captured: Captured) -> None:
    texts = [
        b.get("text")
        for m in get_session_messages(captured.forked)
        for b in _blocks(m)
        if b["type"] == "text"
    ]
    assert texts[-2:] == ["Try another way", "This is the forked branch."]
    # The fork (made after the resume) starts with the whole source conversation...
    source = get_session_messages(captured.multi_turn)
    assert [m.message for m in get_session_messages(captured.forked)][: len(source)] == [
        m.message for m in source
    ]
    # ...and the source does not see the fork's turn.
    assert "Try another way" not in json.dumps([m.message for m in source])


def test_subagent_messages_carry_the_agent_call(captured: Captured) -> None:
    (agent_id,) = list_subagents(captured.subagent)
    messages = get_subagent_messages(captured.subagent, agent_id)
    assert [m.type for m in messages] == ["user", "assistant"]
    assert _blocks(messages[1])[0]["text"] == "The helper says: done."
    assert {m.parent_tool_use_id for m in messages} == {"toolu_agent_fixture_1"}
    assert {m.parent_agent_id for m in messages} == {None}
    assert list_subagents(captured.multi_turn) == []
    assert get_subagent_messages(captured.subagent, "nope") == []
    # The main chain hides the subagent's sidechain but keeps the Agent call.
    main = get_session_messages(captured.subagent)
    names = [b["name"] for m in main for b in _blocks(m) if b["type"] == "tool_use"]
    assert names in (["Agent"], ["Task"])


# ----------------------------------------------------------------------- mutations


def test_rename_and_tag_show_in_the_listing(captured: Captured) -> None:
    rename_session(captured.multi_turn, "  My session  ")
    tag_session(captured.multi_turn, "experiment\u200b")
    info = get_session_info(captured.multi_turn)
    assert info is not None
    assert (info.summary, info.custom_title, info.tag) == ("My session", "My session", "experiment")
    tag_session(captured.multi_turn, None, directory=captured.cwd)
    info = get_session_info(captured.multi_turn)
    assert info is not None and info.tag is None
    with pytest.raises(ValueError, match="title must be non-empty"):
        rename_session(captured.multi_turn, "   ")
    with pytest.raises(TranscriptArgumentError):
        tag_session("bad-id", "x")
    with pytest.raises(FileNotFoundError):
        rename_session("00000000-0000-0000-0000-000000000000", "t")
    # not str: a bare AttributeError ("'int' object has no attribute 'strip'") or
    # TypeError ("expected string or bytes-like object") before
    no_id: Any = 5
    with pytest.raises(TranscriptArgumentError, match="title must be a str, not int"):
        rename_session(captured.multi_turn, no_id)
    with pytest.raises(TranscriptArgumentError, match="tag must be a str or None, not int"):
        tag_session(captured.multi_turn, no_id)
    with pytest.raises(TranscriptArgumentError, match="Invalid session_id: 5"):
        delete_session(no_id)
    assert get_session_messages(no_id) == [] and get_session_info(no_id) is None  # as "x"


def test_mutations_of_sessions_that_are_not_there_or_empty(captured: Captured) -> None:
    empty = "44444444-4444-4444-8444-444444444444"
    (captured.project_dir / f"{empty}.jsonl").write_text("")  # created, nothing written yet
    with pytest.raises(SessionNotFoundError, match="not found in any project directory"):
        rename_session(empty, "t")  # an empty file is no session to append to
    with pytest.raises(SessionNotFoundError, match="/elsewhere"):
        tag_session(captured.multi_turn, "x", directory="/elsewhere")
    with pytest.raises(TranscriptArgumentError, match="tag must be non-empty"):
        tag_session(captured.multi_turn, " \u200b ")  # blank once invisible marks go
    with pytest.raises(SessionNotFoundError):
        fork_session(empty)
    with pytest.raises(TranscriptArgumentError, match="Invalid up_to_message_id"):
        fork_session(captured.multi_turn, up_to_message_id="not-a-uuid")
    assert (captured.project_dir / f"{empty}.jsonl").read_text() == ""  # nothing written


def test_fork_up_to_a_message(captured: Captured) -> None:
    messages = get_session_messages(captured.multi_turn)
    cut = messages[2]
    result = fork_session(captured.multi_turn, up_to_message_id=cut.uuid)
    assert isinstance(result, ccwire.ForkSessionResult)
    forked = get_session_messages(result.session_id)
    assert [m.message for m in forked] == [m.message for m in messages[:3]]
    assert all(m.session_id == result.session_id for m in forked)
    assert not {m.uuid for m in forked} & {m.uuid for m in messages}
    info = get_session_info(result.session_id)
    assert info is not None
    assert info.custom_title == "Run echo alpha, then echo one and two in parallel (fork)"
    lines = _lines(captured.project_dir / f"{result.session_id}.jsonl")
    assert lines[-1]["type"] == "custom-title"
    assert all(
        line["forkedFrom"]["sessionId"] == captured.multi_turn
        for line in lines
        if "forkedFrom" in line
    )
    titled = fork_session(captured.multi_turn, title="Branch B")
    info = get_session_info(titled.session_id)
    assert info is not None and info.summary == "Branch B"
    with pytest.raises(ValueError, match="not found"):
        fork_session(captured.multi_turn, up_to_message_id="00000000-0000-0000-0000-000000000000")


def test_delete_removes_transcript_and_subagents(captured: Captured) -> None:
    delete_session(captured.subagent)
    assert not (captured.project_dir / f"{captured.subagent}.jsonl").exists()
    assert not (captured.project_dir / captured.subagent).exists()
    assert captured.subagent not in {i.session_id for i in list_sessions()}
    with pytest.raises(SessionNotFoundError):
        delete_session(captured.subagent)


# ----------------------------------------------------------------------- damage


def test_corrupt_and_truncated_lines_are_skipped_and_counted(
    captured: Captured, caplog: pytest.LogCaptureFixture
) -> None:
    path = captured.project_dir / f"{captured.multi_turn}.jsonl"
    before = get_session_messages(captured.multi_turn)
    lines = path.read_text().splitlines()
    lines.insert(3, "{not json")
    lines.insert(1, '{"type":"user","message":{"content":"cut o')
    path.write_text("\n".join(lines) + '\n{"type":"assistant","uuid":"x","mess')
    with caplog.at_level(logging.WARNING, logger="ccwire.transcripts"):
        after = get_session_messages(captured.multi_turn)
    assert after == before
    assert "skipped 3 unreadable line(s)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ccwire.transcripts"):
        infos = list_sessions()
    assert captured.multi_turn in {i.session_id for i in infos}
    assert "skipped 1 unreadable transcript line(s) in 1 file(s)" in caplog.text


def test_unreadable_files_never_break_a_listing(captured: Captured) -> None:
    (captured.project_dir / "11111111-1111-1111-1111-111111111111.jsonl").write_bytes(b"")
    (captured.project_dir / "22222222-2222-2222-2222-222222222222.jsonl").write_bytes(
        b"\xff\xfe garbage \x00\n{]\n"
    )
    (captured.project_dir / "33333333-3333-3333-3333-333333333333.jsonl").mkdir()
    (captured.project_dir / "notes.jsonl").write_text("{}")
    assert len(list_sessions()) == 3
    assert get_session_messages("22222222-2222-2222-2222-222222222222") == []


def test_worktrees_share_their_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for args in (
        ["init", "-q"],
        ["commit", "-q", "--allow-empty", "-m", "x"],
        ["worktree", "add", "-q", str(tmp_path / "tree"), "-b", "side"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    sessions = {}
    for name, where in (("a", repo), ("b", tmp_path / "tree")):
        sid = name * 8 + "-0000-0000-0000-000000000000"
        folder = config / "projects" / project_key_for_directory(where)
        folder.mkdir(parents=True)
        entry = {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": sid,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": f"hi {name}"},
        }
        (folder / f"{sid}.jsonl").write_text(json.dumps(entry) + "\n")
        sessions[name] = sid
    assert {i.session_id for i in list_sessions(str(repo))} == set(sessions.values())
    assert {i.session_id for i in list_sessions(str(repo), include_worktrees=False)} == {
        sessions["a"]
    }
    assert len(get_session_messages(sessions["b"], directory=str(repo))) == 1
    info = get_session_info(sessions["b"], directory=str(repo))
    assert isinstance(info, SDKSessionInfo) and info.first_prompt == "hi b"


# ----------------------------------------------------------------------- store summary


def test_fold_session_summary_agrees_with_the_listing(captured: Captured) -> None:
    path = captured.project_dir / f"{captured.multi_turn}.jsonl"
    entries = _lines(path)
    key = {"project_key": captured.project_dir.name, "session_id": captured.multi_turn}
    summary = None
    for i in range(0, len(entries), 7):  # in batches, as a store would see them
        summary = fold_session_summary(summary, key, entries[i : i + 7])  # type: ignore[arg-type]
    assert summary is not None
    info = get_session_info(captured.multi_turn)
    assert info is not None
    data = summary["data"]
    assert summary["session_id"] == captured.multi_turn and summary["mtime"] == 0
    assert data["first_prompt"] == info.first_prompt
    assert data["last_prompt"] == info.summary
    assert data["created_at"] == info.created_at
    assert data["cwd"] == info.cwd and data["git_branch"] == info.git_branch
    assert data["is_sidechain"] is False
