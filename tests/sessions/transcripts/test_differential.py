"""ccwire's session helpers against the reference SDK's, on the same transcript directory.

The reference (`claude-agent-sdk==0.2.187`) runs in its own venv through
`dump_calls.py`; ccwire runs the same calls in-process. Results must be equal: every
`SDKSessionInfo` field, every `SessionMessage`, every error type.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import ccwire
from ccwire._app.main import CliIO, main
from tests.e2e.conftest import CLI_PATH

from .conftest import Captured, RefRunner
from .dump_calls import run_calls
from .make_transcripts import make_transcripts
from .synthetic import write_project

MISSING = "00000000-0000-0000-0000-000000000000"


def _read_calls(config: Path, cwd: str | None) -> list[list[Any]]:
    """Every read-only call worth making on the transcripts under `config`."""
    calls: list[list[Any]] = [
        ["list_sessions", [], {}],
        ["list_sessions", [], {"limit": 2}],
        ["list_sessions", [], {"limit": 2, "offset": 1}],
        ["list_sessions", [], {"offset": 1}],
        ["get_session_info", [MISSING], {}],
        ["get_session_info", ["not-a-uuid"], {}],
        ["get_session_messages", [MISSING], {}],
        ["list_subagents", ["nope"], {}],
    ]
    if cwd is not None:
        calls += [
            ["list_sessions", [cwd], {}],
            ["list_sessions", [cwd], {"include_worktrees": False, "limit": 1}],
            ["project_key_for_directory", [cwd], {}],
        ]
    for path in sorted((config / "projects").glob("*/*.jsonl")):
        sid = path.stem
        calls += [
            ["get_session_info", [sid], {}],
            ["get_session_messages", [sid], {}],
            ["get_session_messages", [sid], {"limit": 3, "offset": 1}],
            ["list_subagents", [sid], {}],
        ]
        if cwd is not None:
            calls.append(["get_session_info", [sid], {"directory": cwd}])
        for agent in sorted(path.with_suffix("").glob("subagents/**/agent-*.jsonl")):
            agent_id = agent.name[len("agent-") : -len(".jsonl")]
            calls.append(["get_subagent_messages", [sid, agent_id], {}])
    return calls


def _assert_same(calls: list[list[Any]], run_ref: RefRunner) -> None:
    ours = run_calls(ccwire, calls)
    theirs = run_ref(calls)
    assert len(ours) == len(theirs) == len(calls)
    for call, mine, ref in zip(calls, ours, theirs, strict=True):
        assert mine == ref, f"{call[0]}{tuple(call[1])} {call[2]} differs"


def test_captured_transcripts_read_the_same(captured: Captured, run_ref: RefRunner) -> None:
    calls = _read_calls(captured.config, captured.cwd)
    assert sum(c[0] == "get_subagent_messages" for c in calls) == 1
    _assert_same(calls, run_ref)


@pytest.mark.parametrize("seed", [1, 2])
def test_synthetic_transcripts_read_the_same(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_ref: RefRunner
) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    write_project(config / "projects", "-proj-a", "/proj/a", 120, seed)
    write_project(config / "projects", "-proj-b", "/proj/b", 40, seed + 100)
    calls = _read_calls(config, "/proj/a")
    _assert_same(calls, run_ref)


def _normalise_ids(text: str) -> str:
    """Replace every UUID by its order of first appearance, and the fork's new stamps."""
    seen: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        return seen.setdefault(m.group(0), f"<id{len(seen)}>")

    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", sub, text)
    return re.sub(r'"timestamp":"[^"]*"', '"timestamp":"T"', text)


def _twin_mutations(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_ref: RefRunner
) -> None:
    """Apply the same mutations to two copies, one per package; compare the files."""
    sessions = sorted(p.stem for p in (config / "projects").glob("*/*.jsonl"))
    target, other = sessions[0], sessions[-1]
    some_message = ccwire.get_session_messages(target)[1].uuid
    calls: list[list[Any]] = [
        ["rename_session", [target, "  Renamed  "], {}],
        ["tag_session", [target, "Red\u200b tag"], {}],
        ["tag_session", [other, None], {}],
        ["rename_session", [target, " "], {}],
        ["tag_session", ["bad", "x"], {}],
        ["rename_session", [MISSING, "x"], {}],
        ["delete_session", [MISSING], {}],
        ["fork_session", [target], {"up_to_message_id": MISSING}],
        ["fork_session", [target], {"up_to_message_id": some_message}],
        ["fork_session", [other], {"title": "Mine"}],
        ["delete_session", [other], {}],
        ["list_sessions", [], {}],
    ]
    copies = {}
    for side in ("ref", "ours"):
        copies[side] = tmp_path / f"twin-{side}"
        shutil.copytree(config, copies[side])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(copies["ref"]))
    theirs = run_ref(calls)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(copies["ours"]))
    ours = run_calls(ccwire, calls)
    for call, mine, ref in zip(calls[:-1], ours[:-1], theirs[:-1], strict=True):
        if call[0] == "fork_session" and "ok" in ref:
            assert set(mine["ok"]) == set(ref["ok"])
        else:
            assert mine == ref, call

    def files(root: Path) -> dict[str, str]:
        out = {}
        for p in sorted(root.rglob("*.jsonl")):
            out[p.name] = p.read_text(encoding="utf-8", errors="replace")
        return out

    ref_files, our_files = files(copies["ref"]), files(copies["ours"])
    ref_forks = {
        ref["ok"]["session_id"]
        for c, ref in zip(calls, theirs, strict=True)
        if c[0] == "fork_session" and "ok" in ref
    }
    our_forks = {
        mine["ok"]["session_id"]
        for c, mine in zip(calls, ours, strict=True)
        if c[0] == "fork_session" and "ok" in mine
    }
    assert {k for k in ref_files if k[:-6] not in ref_forks} == {
        k for k in our_files if k[:-6] not in our_forks
    }
    for name, text in ref_files.items():
        if name[:-6] not in ref_forks:
            assert our_files[name] == text, name
    ref_fork_texts = sorted(_normalise_ids(ref_files[f"{s}.jsonl"]) for s in ref_forks)
    our_fork_texts = sorted(_normalise_ids(our_files[f"{s}.jsonl"]) for s in our_forks)
    assert ref_fork_texts == our_fork_texts
    # The listings agree too, but for the fork ids and the new files' times. The forks
    # are written within the same few milliseconds, so their order in a listing sorted by
    # modification time is a tie: entries are compared as a multiset, and the order is
    # compared for the sessions that existed before.
    strip = re.compile(r'"(session_id|last_modified)": [^,}]*')

    def entries(listing: dict[str, Any]) -> list[str]:
        return sorted(strip.sub("", _normalise_ids(json.dumps(e))) for e in listing["ok"])

    def old_order(listing: dict[str, Any], forks: set[str]) -> list[str]:
        return [e["session_id"] for e in listing["ok"] if e["session_id"] not in forks]

    assert entries(ours[-1]) == entries(theirs[-1])
    assert old_order(ours[-1], our_forks) == old_order(theirs[-1], ref_forks)


def test_mutations_write_the_same(
    captured: Captured, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_ref: RefRunner
) -> None:
    _twin_mutations(captured.config, tmp_path, monkeypatch, run_ref)


@pytest.mark.e2e
@pytest.mark.skipif(CLI_PATH is None, reason="Claude Code CLI not installed (run `make cli`)")
def test_fresh_real_cli_transcripts_match_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_ref: RefRunner
) -> None:
    assert CLI_PATH is not None
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    made = make_transcripts(home, work, CLI_PATH)
    config = home / ".claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    calls = _read_calls(config, os.path.realpath(work))
    assert {made.multi_turn, made.subagent, made.forked} <= {c[1][0] for c in calls if c[1]}
    _assert_same(calls, run_ref)
    # The same through HOME alone, as a user without CLAUDE_CONFIG_DIR has it.
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(home))
    _assert_same(calls[:3], run_ref)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    # `ccwire sessions` and `ccwire show --html` on what the real CLI just wrote.
    out = io.StringIO()
    cli_io = CliIO(io.StringIO(), out, io.StringIO(), environ={})
    assert main(["sessions", "--project", str(work), "--json"], io=cli_io) == 0
    rows = {row["session_id"]: row for row in json.loads(out.getvalue())}
    assert set(rows) == {made.multi_turn, made.subagent, made.forked}
    assert (rows[made.multi_turn]["turns"], rows[made.forked]["turns"]) == (3, 4)
    assert all(row["cost_usd"] > 0 for row in rows.values())
    page = tmp_path / "page.html"
    assert main(["show", made.subagent, "--html", str(page)], io=cli_io) == 0
    assert "The helper says: done." in page.read_text()
    _twin_mutations(config, tmp_path, monkeypatch, run_ref)
