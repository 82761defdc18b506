"""Reading hand-made transcripts whose shape the CLI writes rarely: non-object lines,
branches without a message, damaged entries, tool calls claimed twice, tool results
filed under another entry. Each expectation is spelled out, and the reference SDK
(`claude-agent-sdk==0.2.187`) must read the same files the same way."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

import ccwire
from ccwire import get_session_messages, get_subagent_messages, list_subagents

from .conftest import RefRunner
from .dump_calls import run_calls

Entry = dict[str, Any]

SID = "5e55104e-0000-4000-8000-000000000001"


class Transcript:
    """Entries of one session in the CLI's format, stamped in file order."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.entries: list[Any] = []

    def add(self, kind: str, uid: str, parent: str | None, **extra: Any) -> str:
        self.entries.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "type": kind,
                "uuid": uid,
                "timestamp": f"2026-03-01T00:00:{len(self.entries):02d}.000Z",
                "sessionId": self.sid,
                **extra,
            }
        )
        return uid

    def prompt(self, uid: str, parent: str | None, text: str = "hi") -> str:
        return self.add("user", uid, parent, message={"role": "user", "content": text})

    def call(self, uid: str, parent: str | None, mid: str, *calls: str, **extra: Any) -> str:
        content = [{"type": "tool_use", "id": c, "name": "Bash", "input": {}} for c in calls]
        message = {"id": mid, "role": "assistant", "content": content}
        return self.add("assistant", uid, parent, message=message, **extra)

    def reply(self, uid: str, parent: str | None, mid: str, text: str = "ok") -> str:
        message = {"id": mid, "role": "assistant", "content": [{"type": "text", "text": text}]}
        return self.add("assistant", uid, parent, message=message)

    def result(self, uid: str, parent: str | None, *calls: str, **extra: Any) -> str:
        content = [{"type": "tool_result", "tool_use_id": c, "content": "ok"} for c in calls]
        return self.add("user", uid, parent, message={"role": "user", "content": content}, **extra)

    def write(self, folder: Path, *raw_lines: str, name: str = "") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(e, separators=(",", ":")) for e in self.entries]
        text = "\n".join([*lines, *raw_lines]) + "\n"
        (folder / (name or f"{self.sid}.jsonl")).write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config" / "projects" / "-proj"


def _uuids(session_id: str = SID, **kwargs: Any) -> list[str]:
    return [m.uuid for m in get_session_messages(session_id, **kwargs)]


# ------------------------------------------------------------------------ the shapes
# Each writes session `sid` under `project` and returns the uuids ccwire must read back.


def lines_that_are_not_objects(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    t.prompt("u1", None)
    t.reply("a1", "u1", "m1")
    t.write(project, "[1, 2]", '"text"', "42", "null")
    return ["u1", "a1"]


def a_newer_branch_without_messages(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    t.prompt("u1", None)
    t.reply("a1", "u1", "m1")
    t.add("progress", "p1", "a1", data={"type": "hook_progress"})  # ends on a1's branch
    t.add("progress", "p2", None, data={"type": "hook_progress"})  # a root of its own
    t.add("attachment", "at1", "p2", attachment={"type": "todo"})  # newest, no message
    t.write(project)
    return ["u1", "a1"]


def no_message_at_all(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    t.add("system", "s1", None, subtype="informational", content="started")
    t.add("progress", "p1", "s1", data={"type": "hook_progress"})
    t.write(project)
    return []


def damaged_assistant_entries(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    t.prompt("u1", None)
    t.add("assistant", "a1", "u1", message="not an object")
    t.add("assistant", "a2", "a1", message={"id": "m2", "role": "assistant", "content": "text"})
    t.add("assistant", "a3", "a2", message={"id": "", "content": []})
    t.write(project)
    return ["u1", "a1", "a2", "a3"]


def _parallel_turn(t: Transcript) -> None:
    """One response (m1) calling t1 and t3, then t2; the chain runs through t2's result.

    Off the chain: t1's result filed under its call, and three results filed under
    t2's result (as a resumed CLI may write them): t1 again, t3, and t2 again.
    """
    t.prompt("u1", None)
    t.call("a1", "u1", "m1", "t1", "t3")
    t.call("a2", "a1", "m1", "t2")
    t.result("r2", "a2", "t2", sourceToolAssistantUUID="a2")
    t.result("r1", "a1", "t1", sourceToolAssistantUUID="a1")
    t.result("r1-again", "r2", "t1")
    t.result("r3", "r2", "t3")
    t.result("r2-again", "r2", "t2")


def results_filed_under_another_entry(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    _parallel_turn(t)
    t.reply("a3", "r2", "m3")
    t.write(project)
    # r3 answers a call of the turn nothing else answered: it is put back; the two
    # "again" results answer calls already answered, and stay out.
    return ["u1", "a1", "a2", "r1", "r3", "r2", "a3"]


def two_turns_with_results_filed_elsewhere(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    _parallel_turn(t)
    t.reply("a3", "r2", "m3")
    t.prompt("u2", "a3", "and again")
    t.call("b1", "u2", "m4", "t11", "t13")
    t.call("b2", "b1", "m4", "t12")
    t.result("q2", "b2", "t12")
    t.result("q1", "b1", "t11")
    t.result("q3", "q2", "t13")
    t.reply("a4", "q2", "m5")
    t.write(project)
    first = ["u1", "a1", "a2", "r1", "r3", "r2", "a3"]
    return [*first, "u2", "b1", "b2", "q1", "q3", "q2", "a4"]


def a_call_claimed_by_two_responses(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    t.call("b1", "u1", "m9", "t3")  # a rewound branch: another response claims t3
    _parallel_turn(t)
    t.reply("a3", "r2", "m3")
    t.write(project)
    # whose call t3 is cannot be told, so the result filed elsewhere is not put back
    return ["u1", "a1", "a2", "r1", "r2", "a3"]


def a_subagents_results_naming_main_calls(project: Path, sid: str) -> list[str]:
    t = Transcript(sid)
    side = {"isSidechain": True, "agentId": "ag1"}
    t.prompt("s1", "a1")
    t.entries[-1].update(side)
    # a sidechain result naming a main call, by its id and by its source, written before
    # the main result of that call: another writer's, so it is not the main one's
    t.result("s2", "s1", "t3", sourceToolAssistantUUID="a1", **side)
    _parallel_turn(t)
    t.result("r-lost", "r2", "t9", sourceToolAssistantUUID="gone")  # nobody's call
    t.reply("a3", "r2", "m3")
    t.write(project)
    return ["u1", "a1", "a2", "r1", "r3", "r2", "a3"]


SHAPES = [
    lines_that_are_not_objects,
    a_newer_branch_without_messages,
    no_message_at_all,
    damaged_assistant_entries,
    results_filed_under_another_entry,
    two_turns_with_results_filed_elsewhere,
    a_call_claimed_by_two_responses,
    a_subagents_results_naming_main_calls,
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
def test_the_conversation_of_each_shape(shape: Any, project: Path) -> None:
    expected = shape(project, SID)
    assert _uuids() == expected
    assert _uuids(limit=2, offset=1) == expected[1:3]


def test_lines_that_are_not_objects_are_counted_as_unreadable(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines_that_are_not_objects(project, SID)
    with caplog.at_level(logging.WARNING, logger="ccwire.transcripts"):
        assert _uuids() == ["u1", "a1"]
    assert "skipped 4 unreadable line(s)" in caplog.text


def test_system_entries_alone_are_no_conversation(project: Path) -> None:
    no_message_at_all(project, SID)
    assert get_session_messages(SID, include_system_messages=True) == []


def test_a_subagent_transcript_without_messages_reads_empty(project: Path) -> None:
    t = Transcript(SID)
    t.prompt("u1", None)
    t.reply("a1", "u1", "m1")
    t.write(project)
    agent = Transcript(SID)
    agent.add("progress", "p1", None, isSidechain=True, data={"type": "hook_progress"})
    agent.add("system", "s1", "p1", isSidechain=True, subtype="informational")
    agent.write(project / SID / "subagents", name="agent-ag1.jsonl")
    assert list_subagents(SID) == ["ag1"]
    assert get_subagent_messages(SID, "ag1") == []
    agent.prompt("s2", "s1")
    agent.entries[-1]["isSidechain"] = True
    agent.write(project / SID / "subagents", name="agent-ag1.jsonl")  # a message now
    assert [m.uuid for m in get_subagent_messages(SID, "ag1")] == ["s2"]


def test_the_reference_reads_every_shape_the_same(project: Path, run_ref: RefRunner) -> None:
    calls: list[list[Any]] = []
    for n, shape in enumerate(SHAPES):
        sid = f"5e55104e-0000-4000-8000-{n:012d}"
        shape(project, sid)
        calls += [
            ["get_session_messages", [sid], {}],
            ["get_session_messages", [sid], {"limit": 2, "offset": 1}],
        ]
    assert run_calls(ccwire, calls) == run_ref(calls)
