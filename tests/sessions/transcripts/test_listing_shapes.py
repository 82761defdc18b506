"""What `list_sessions` and `get_session_info` read from transcripts written by hand to
show what the CLI writes rarely: escaped quotes and backslashes in a title, an invalid
escape, a tag on the first line, a first timestamp that is not a time, user lines
that carry no prompt, a field cut off by a crash. Each expectation is spelled out,
and the reference SDK (`claude-agent-sdk==0.2.187`) must read the same files the same
way."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

import ccwire
from ccwire import get_session_info

from .conftest import RefRunner
from .dump_calls import run_calls


def _sid(n: int) -> str:
    return f"11571000-0000-4000-8000-{n:012d}"


def _user(content: Any, uid: str = "u1", **extra: Any) -> str:
    entry = {"type": "user", "uuid": uid, "parentUuid": None, "cwd": "/proj",
             "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user",
             "content": content}, **extra}  # fmt: skip
    return json.dumps(entry, separators=(",", ":"))


def _lines(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


SPACED_FIRST = json.dumps({"type": "user", "uuid": "u1", "cwd": "/spaced", "gitBranch": "dev",
                           "message": {"role": "user", "content": "hi"}})  # fmt: skip

# Each shape: the transcript's text, and fields of its session info.
SHAPES: list[tuple[str, dict[str, Any]]] = [
    (  # a title with escaped quotes, ending in a backslash; a tag on the first line
        _lines(
            '{"type":"tag","tag":"red","sessionId":"s"}',
            _user("start"),
            json.dumps({"type": "custom-title", "customTitle": 'say "hi" in C:\\dir\\'}),
        ),
        {"custom_title": 'say "hi" in C:\\dir\\', "tag": "red", "first_prompt": "start"},
    ),
    (  # an escape JSON does not know: the text as written
        _lines(_user("start"), '{"type":"last-prompt","lastPrompt":"bad \\q escape"}'),
        {"summary": "bad \\q escape", "first_prompt": "start"},
    ),
    (  # a first timestamp that is not a time
        _lines(_user("start", timestamp="yesterday")),
        {"created_at": None, "summary": "start"},
    ),
    (  # user markers on lines that hold no prompt, then blank text before the prompt
        _lines(
            '{"type":"system","content":{"type":"user"},"uuid":"s1"}',
            '{"type":"user","uuid":"u0","message":"not an object"}',
            _user(42, "u2"),
            _user([{"type": "text", "text": "  "}, {"type": "text", "text": "the real one"}]),
        ),
        {"first_prompt": "the real one", "summary": "the real one"},
    ),
    (  # the spaced spelling first; the compact one only where a crash cut the file off,
        # right after an escaped quote
        _lines(SPACED_FIRST) + '{"type":"user","uuid":"u2","cwd":"/cut at \\"',
        {"cwd": "/spaced", "git_branch": "dev", "first_prompt": "hi"},
    ),
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "config" / "projects" / "-proj"
    folder.mkdir(parents=True)
    for n, (text, _) in enumerate(SHAPES):
        (folder / f"{_sid(n)}.jsonl").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("n", range(len(SHAPES)))
def test_the_info_of_each_shape(project: Path, n: int, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ccwire.transcripts"):
        info = get_session_info(_sid(n))
    assert info is not None
    expected = SHAPES[n][1]
    assert {field: getattr(info, field) for field in expected} == expected
    assert "unreadable" not in caplog.text  # no line here is damaged where it is read


def test_a_damaged_user_line_before_the_prompt_is_counted(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sid = _sid(99)
    text = _lines('{"type":"user","message":{"content":"cut o', _user("after it"))
    (project / f"{sid}.jsonl").write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="ccwire.transcripts"):
        info = get_session_info(sid)
    assert info is not None and info.first_prompt == "after it"
    assert "skipped 1 unreadable transcript line(s) in 1 file(s)" in caplog.text


def test_the_reference_reads_every_shape_the_same(project: Path, run_ref: RefRunner) -> None:
    calls: list[list[Any]] = [["list_sessions", [], {}]]
    calls += [["get_session_info", [_sid(n)], {}] for n in range(len(SHAPES))]
    ours = run_calls(ccwire, calls)
    assert len(ours[0]["ok"]) == len(SHAPES)
    assert ours == run_ref(calls)
