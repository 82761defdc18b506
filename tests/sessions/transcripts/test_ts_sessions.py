"""The session helpers the TypeScript SDK added: archiving, leaving programmatic sessions
out of a listing, and reading system messages too. The archive mark is the file the
TypeScript SDK writes (``<project dir>/<session id>/archived.json``)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from ccwire import (
    SessionNotFoundError,
    TranscriptArgumentError,
    archive_session,
    get_session_info,
    get_session_messages,
    list_sessions,
    unarchive_session,
)

from .conftest import Captured

LATER = "2999-01-01T00:00:00.000Z"  # a prompt sent after any archive mark written now


def _archived(captured: Captured) -> dict[str, bool | None]:
    return {s.session_id: s.archived for s in list_sessions(captured.cwd)}


def _append(captured: Captured, session_id: str, entry: dict[str, Any]) -> None:
    with open(captured.project_dir / f"{session_id}.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def test_archive_and_unarchive(captured: Captured) -> None:
    sid = captured.multi_turn
    assert set(_archived(captured).values()) == {None}  # never archived
    archive_session(sid)
    assert _archived(captured)[sid] is True
    mark = captured.project_dir / sid / "archived.json"
    record = json.loads(mark.read_text())
    assert record["archived"] is True and record["by"] == "sdk" and record["at"].endswith("Z")
    assert stat.S_IMODE(mark.stat().st_mode) == 0o600
    assert stat.S_IMODE(mark.parent.stat().st_mode) == 0o700
    info = get_session_info(sid, captured.cwd)
    assert info is not None and info.archived is True
    unarchive_session(sid, captured.cwd)
    assert _archived(captured)[sid] is False
    others = set(_archived(captured)) - {sid}
    assert all(_archived(captured)[o] is None for o in others)


def test_a_prompt_sent_later_unarchives(captured: Captured) -> None:
    sid = captured.multi_turn
    archive_session(sid)
    result = {"type": "tool_result", "tool_use_id": "t", "content": "x"}
    _append(captured, sid, {"type": "user", "uuid": "r1", "timestamp": LATER,
                            "message": {"role": "user", "content": [result]}})  # fmt: skip
    assert _archived(captured)[sid] is True  # a tool result is not a prompt
    _append(captured, sid, {"type": "user", "uuid": "p1", "timestamp": LATER,
                            "message": {"role": "user", "content": "one more thing"}})  # fmt: skip
    assert _archived(captured)[sid] is False


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": "u", "timestamp": LATER,
            "message": {"role": "user", "content": content}, **extra}  # fmt: skip


def _queued(prompt: Any, **extra: Any) -> dict[str, Any]:
    attachment = {"type": "queued_command", "prompt": prompt, **extra}
    return {"type": "attachment", "uuid": "q", "timestamp": LATER, "attachment": attachment}


@pytest.mark.parametrize(
    ("entry", "unarchives"),
    [
        (_user([{"type": "text", "text": "and then?"}]), True),
        (_user([{"type": "image", "source": {}}]), True),  # a picture is a prompt too
        (_user([{"type": "document", "source": {}}]), True),
        (_queued("queued while it worked"), True),
        (_queued("typed while it ran", origin={"kind": "human"}), True),
        (_user("   "), False),  # nothing said
        (_user([{"type": "text", "text": " "}, "user"]), False),
        (_user([{"type": "tool_result", "content": "x"}, {"type": "text", "text": "hi"}]), False),
        (_user({"not": "content"}), False),
        (_user("compacted", isCompactSummary=True), False),
        (_user("a subagent's", isSidechain=True), False),
        (_user("from a hook", isMeta=True), False),
        (_user("from a cron job", origin={"kind": "scheduled"}), False),
        (_queued("from a cron job", origin={"kind": "scheduled"}), False),
        (_queued(["not", "a", "prompt"]), False),
        (
            {
                "type": "attachment",
                "uuid": "a",
                "timestamp": LATER,
                "attachment": {"type": "file", "prompt": "user"},
            },
            False,
        ),
        ({**_queued("x"), "attachment": "queued_command"}, False),
        ({"type": "assistant", "uuid": "a", "timestamp": LATER, "note": "user"}, False),
        (_user("said", timestamp="not a time"), False),
        (_user("said", timestamp="2000-01-01T00:00:00.000Z"), False),  # before the mark
    ],
)
def test_what_counts_as_a_prompt_sent_later(
    captured: Captured, entry: dict[str, Any], unarchives: bool
) -> None:
    sid = captured.multi_turn
    archive_session(sid)
    _append(captured, sid, entry)
    assert _archived(captured)[sid] is (not unarchives)


@pytest.mark.parametrize(
    "mark",
    [
        b"{not json",
        b'{"archived": "yes"}',
        b"[true]",
        b'{"archived": true}',  # when it was written is part of the mark
        b'{"archived": true, "at": "last week"}',
        # more than a mark ever holds (its first 4 KiB alone would read as one)
        b'{"archived": true, "at": "2026-01-01T00:00:00.000Z"}' + b" " * 4096,
    ],
    ids=["not-json", "not-a-bool", "not-an-object", "no-at", "bad-at", "too-big"],
)
def test_a_damaged_archive_mark_is_no_mark(captured: Captured, mark: bytes) -> None:
    sid = captured.multi_turn
    archive_session(sid)
    (captured.project_dir / sid / "archived.json").write_bytes(mark)
    assert _archived(captured)[sid] is None
    info = get_session_info(sid, captured.cwd)
    assert info is not None and info.archived is None


def test_archiving_a_session_that_is_not_there(captured: Captured) -> None:
    with pytest.raises(TranscriptArgumentError):
        archive_session("not-a-uuid")
    with pytest.raises(SessionNotFoundError):
        archive_session("00000000-0000-4000-8000-000000000000")
    with pytest.raises(SessionNotFoundError, match="project directory for /elsewhere"):
        unarchive_session(captured.multi_turn, "/elsewhere")


def _write(folder: Path, session_id: str, lines: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / f"{session_id}.jsonl").write_text(text, encoding="utf-8")


def _prompt(uid: str, parent: str | None, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uid, "parentUuid": parent, "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w",
            "message": {"role": "user", "content": text}, **extra}  # fmt: skip


def test_programmatic_sessions_can_be_left_out(captured: Captured) -> None:
    every = {s.session_id for s in list_sessions(captured.cwd)}
    assert every  # the captured sessions: started by ccwire (entrypoint sdk-py)
    assert list_sessions(captured.cwd, include_programmatic=False) == []
    by_hand = "11111111-1111-4111-8111-111111111111"
    daemon = "22222222-2222-4222-8222-222222222222"
    _write(captured.project_dir, by_hand, [_prompt("a", None, "hi", entrypoint="cli")])
    _write(captured.project_dir, daemon, [_prompt("b", None, "hi", sessionKind="daemon")])
    people = list_sessions(captured.cwd, include_programmatic=False)
    assert [s.session_id for s in people] == [by_hand]
    assert {s.session_id for s in list_sessions()} == every | {by_hand, daemon}


def test_system_messages_on_request(captured: Captured) -> None:
    sid = "33333333-3333-4333-8333-333333333333"
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "s1",
                "parentUuid": "a1", "sessionId": sid, "content": "Conversation compacted",
                "timestamp": "2026-01-01T00:00:01.000Z"}  # fmt: skip
    answer = {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": sid,
        "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    }
    again = _prompt("u2", "s1", "go on")
    _write(captured.project_dir, sid, [_prompt("u1", None, "start"), answer, boundary, again])
    plain = get_session_messages(sid, captured.cwd)
    assert [m.type for m in plain] == ["user", "assistant", "user"]
    full = get_session_messages(sid, captured.cwd, include_system_messages=True)
    assert [m.type for m in full] == ["user", "assistant", "system", "user"]
    assert full[2].uuid == "s1" and full[2].message["subtype"] == "compact_boundary"


def test_lines_that_are_not_entries_never_unarchive(captured: Captured) -> None:
    sid = captured.multi_turn
    archive_session(sid)
    with open(captured.project_dir / f"{sid}.jsonl", "a", encoding="utf-8") as fh:
        fh.write('["user", "queued_command"]\n{"type":"user","message":{"content":"cut o\n')
    assert _archived(captured)[sid] is True


def test_a_prompt_in_the_head_of_a_long_transcript_counts(captured: Captured) -> None:
    sid = "44444444-4444-4444-8444-444444444444"
    filler = [_prompt(f"f{n}", None, "x" * 1000) for n in range(80)]  # past the 64 KiB tail
    _write(captured.project_dir, sid, [_prompt("u1", None, "start"), *filler])
    archive_session(sid)
    assert _archived(captured)[sid] is True
    later = _prompt("u2", "u1", "typed later", timestamp=LATER)
    _write(captured.project_dir, sid, [later, *filler])  # only the head has it
    assert _archived(captured)[sid] is False
