"""ccwire's store-backed session helpers against the reference SDK's, on the same store data.

The transcripts (the committed real-CLI ones, and synthetic ones) are appended to a
store in batches, subagents with their `.meta.json` as `agent_metadata` entries. The
reference (`claude-agent-sdk==0.2.187`) runs `dump_store_calls.py` in its own venv;
ccwire runs the same calls in-process. Results must be equal: every `SDKSessionInfo`
field, every `SessionMessage`, every error type and message, and the entries a fork
writes (up to its new ids and time stamps).

* `memory`: each package fills its own `InMemorySessionStore` with the same entries.
  Its `mtime`s are each process's write times, so `last_modified` of a listing is left
  out of the comparison (the order of the sessions is still compared).
* `sqlite`: ccwire's `SQLiteStore`, filled once; both packages read the same file.
* `+nosummaries` and `+minimal` wrap the store to leave out optional methods, which
  sends the helpers down their other paths (one `load` per session; no listing).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

import ccwire

from .conftest import DUMP, Captured, run_reference
from .dump_store_calls import run_store_job
from .synthetic import write_project
from .test_differential import MISSING, _normalise_ids

DUMP_STORE = DUMP.with_name("dump_store_calls.py")
BATCH = 7  # entries per append: summaries are folded over several appends


def _fill(config: Path, cwd: str) -> list[list[Any]]:
    """`[key, entries]` appends that put every transcript under `config` into a store."""
    project_key = ccwire.project_key_for_directory(cwd)
    fill: list[list[Any]] = []

    def add(key: dict[str, str], path: Path) -> None:
        entries = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a corrupt line: a store keeps objects only
            if isinstance(entry, dict) and isinstance(entry.get("type"), str):
                entries.append(entry)
        for i in range(0, len(entries), BATCH):
            fill.append([key, entries[i : i + BATCH]])
        meta = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
        if meta.exists():
            fill.append([key, [{**json.loads(meta.read_text()), "type": "agent_metadata"}]])

    for path in sorted((config / "projects").glob("*/*.jsonl")):
        main = {"project_key": project_key, "session_id": path.stem}
        add(main, path)
        for agent in sorted(path.with_suffix("").glob("subagents/**/*.jsonl")):
            subpath = agent.relative_to(path.with_suffix("")).as_posix()[: -len(".jsonl")]
            add({**main, "subpath": subpath}, agent)
    return fill


def _extra_subagents(fill: list[list[Any]], host: str, donor: str) -> None:
    """Subagents the captured sessions lack: nested, re-described, and not a subagent."""
    donor_entries = [e for key, batch in fill if key.get("session_id") == donor for e in batch]
    side = [{**e, "isSidechain": True} for e in donor_entries if isinstance(e.get("uuid"), str)]
    key = {**next(k for k, _ in fill if k["session_id"] == host)}
    key.pop("subpath", None)
    fill.append([{**key, "subpath": "subagents/workflows/run-1/agent-nested"}, side[:6]])
    fill.append([{**key, "subpath": "subagents/agent-twice"}, side[:4]])
    fill.append([{**key, "subpath": "subagents/agent-twice"}, [_meta("toolu_first")]])
    fill.append([{**key, "subpath": "subagents/agent-twice"}, [_meta("toolu_last", "agent-p")]])
    fill.append([{**key, "subpath": "notes/agent-nope"}, side[:2]])


def _meta(tool_use_id: str, parent: str | None = None) -> dict[str, Any]:
    meta = {"type": "agent_metadata", "agentType": "helper", "toolUseId": tool_use_id}
    if parent is not None:
        meta["parentAgentId"] = parent
    return meta


def _calls(fill: list[list[Any]], cwd: str, *, forks: bool) -> list[list[Any]]:
    sessions = sorted({key["session_id"] for key, _ in fill})
    calls: list[list[Any]] = [
        ["list_sessions_from_store", [cwd], {}],
        ["list_sessions_from_store", [cwd], {"limit": 2}],
        ["list_sessions_from_store", [cwd], {"limit": 2, "offset": 1}],
        ["list_sessions_from_store", [cwd], {"offset": 3}],
        ["list_sessions_from_store", [cwd], {"limit": 0, "offset": -1}],
        ["list_sessions_from_store", ["/no/such/project"], {}],
        ["get_session_info_from_store", [MISSING, cwd], {}],
        ["get_session_info_from_store", ["not-a-uuid", cwd], {}],
        ["get_session_messages_from_store", [MISSING, cwd], {}],
        ["get_session_messages_from_store", ["nope"], {}],
        ["list_subagents_from_store", ["nope", cwd], {}],
        ["get_subagent_messages_from_store", [MISSING, "x", cwd], {}],
    ]
    for sid in sessions:
        calls += [
            ["get_session_info_from_store", [sid, cwd], {}],
            ["get_session_messages_from_store", [sid, cwd], {}],
            ["get_session_messages_from_store", [sid, cwd], {"limit": 3, "offset": 1}],
            ["list_subagents_from_store", [sid, cwd], {}],
        ]
        subpaths = sorted(
            {key["subpath"] for key, _ in fill if key["session_id"] == sid and "subpath" in key}
        )
        for subpath in subpaths:
            agent = subpath.rsplit("/", 1)[-1].removeprefix("agent-")
            calls.append(["get_subagent_messages_from_store", [sid, agent, cwd], {}])
            calls.append(["get_subagent_messages_from_store", [sid, agent, cwd], {"limit": 1}])
    if forks:
        target = sessions[0]
        chain = [
            e["uuid"]
            for key, batch in fill
            if key == {"project_key": key["project_key"], "session_id": target}
            for e in batch
            if e.get("type") in ("user", "assistant") and not e.get("isSidechain")
        ]
        calls += [
            ["fork_session_via_store", [target, cwd], {"up_to_message_id": chain[2]}],
            ["fork_session_via_store", [target, cwd], {"up_to_message_id": MISSING}],
            ["fork_session_via_store", ["bad", cwd], {}],
            ["fork_session_via_store", [MISSING, cwd], {}],
            ["fork_session_via_store", [target, cwd], {"title": "Mine"}],
            ["fork_session_via_store", [sessions[-1], cwd], {}],
        ]
    return calls


def _comparable(call: list[Any], result: dict[str, Any], memory: bool, untimed: set[str]) -> Any:
    if "ok" not in result:
        return result
    value = result["ok"]
    if call[0] == "fork_session_via_store":
        return _normalise_ids(json.dumps(value["entries"], sort_keys=True, separators=(",", ":")))
    if memory and call[0] == "list_sessions_from_store":
        return [{**info, "last_modified": None} for info in value]
    if call[0] == "get_session_info_from_store" and value and value["session_id"] in untimed:
        return {**value, "last_modified": None}  # the time of the call
    return value


def _untimed(fill: list[list[Any]]) -> set[str]:
    """Sessions whose last entry has no timestamp: their info is stamped with "now"."""
    last: dict[str, dict[str, Any]] = {}
    for key, entries in fill:
        if "subpath" not in key and entries:
            last[key["session_id"]] = entries[-1]
    return {sid for sid, entry in last.items() if not isinstance(entry.get("timestamp"), str)}


def _assert_same(
    job: dict[str, Any], ours: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> None:
    memory = job["store"].startswith("memory")
    untimed = _untimed(job["untimed_fill"])
    assert len(ours) == len(theirs) == len(job["calls"])
    for call, mine, ref in zip(job["calls"], ours, theirs, strict=True):
        assert _comparable(call, mine, memory, untimed) == _comparable(
            call, ref, memory, untimed
        ), f"{job['store']}: {call[0]}{tuple(call[1])} {call[2]} differs"


def _sqlite(tmp_path: Path, name: str, fill: list[list[Any]]) -> Path:
    path = tmp_path / f"{name}.sqlite3"
    store = ccwire.SQLiteStore(path)

    async def write() -> None:
        for key, entries in fill:
            await store.append(key, entries)

    anyio.run(write)
    return path


def _run_both(
    ref_python: str, job: dict[str, Any], tmp_path: Path, fill: list[list[Any]]
) -> list[dict[str, Any]]:
    if job["store"].startswith("sqlite"):  # forks write: each package gets its own copy
        ours_job, ref_job = dict(job), dict(job)
        for side, side_job in (("ours", ours_job), ("ref", ref_job)):
            copy = tmp_path / f"{side}-{Path(job['path']).name}"
            shutil.copyfile(job["path"], copy)
            side_job["path"] = str(copy)
    else:
        ours_job = ref_job = job
    theirs = run_reference(ref_python, DUMP_STORE, ref_job)
    ours = anyio.run(run_store_job, ccwire, ours_job)
    _assert_same({**job, "untimed_fill": fill}, ours, theirs)
    return ours


@pytest.mark.parametrize("kind", ["memory", "memory+nosummaries", "memory+minimal", "sqlite"])
def test_captured_sessions_read_the_same_from_a_store(
    kind: str, captured: Captured, tmp_path: Path, ref_python: str
) -> None:
    fill = _fill(captured.config, captured.cwd)
    _extra_subagents(fill, captured.subagent, captured.multi_turn)
    job: dict[str, Any] = {"store": kind, "calls": _calls(fill, captured.cwd, forks=True)}
    if kind.startswith("sqlite"):
        job["path"] = str(_sqlite(tmp_path, "captured", fill))
    else:
        job["fill"] = fill
    ours = _run_both(ref_python, job, tmp_path, fill)
    by_call = {json.dumps(c): r for c, r in zip(job["calls"], ours, strict=True)}

    def result(*call: Any) -> Any:
        return by_call[json.dumps(list(call))]

    # what the comparison covered is not empty
    cwd, host = captured.cwd, captured.subagent
    messages = result("get_subagent_messages_from_store", [host, "twice", cwd], {})["ok"]
    assert messages[0]["parent_tool_use_id"] == "toolu_last"  # the last metadata wins
    assert messages[0]["parent_agent_id"] == "agent-p"
    assert result("get_session_messages_from_store", [captured.multi_turn, cwd], {})["ok"]
    if kind.endswith("minimal"):
        assert result("list_sessions_from_store", [cwd], {})["error"] == "ValueError"
        return
    assert len(result("list_sessions_from_store", [cwd], {})["ok"]) == 3
    assert sorted(result("list_subagents_from_store", [host, cwd], {})["ok"]) == [
        "abd9dbe1cbd56c21f",
        "nested",
        "twice",
    ]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "sqlite+nosummaries"])
def test_synthetic_sessions_read_the_same_from_a_store(
    kind: str, tmp_path: Path, ref_python: str
) -> None:
    config = tmp_path / "config"
    write_project(config / "projects", "-proj-a", "/proj/a", 40, 7)
    fill = _fill(config, "/proj/a")
    job: dict[str, Any] = {"store": kind, "calls": _calls(fill, "/proj/a", forks=False)}
    if kind.startswith("sqlite"):
        job["path"] = str(_sqlite(tmp_path, "synthetic", fill))
    else:
        job["fill"] = fill
    _run_both(ref_python, job, tmp_path, fill)


def test_stale_and_missing_summaries_are_loaded_the_same_way(
    captured: Captured, tmp_path: Path, ref_python: str
) -> None:
    config = tmp_path / "config"
    write_project(config / "projects", "-proj-a", "/proj/a", 12, 11)
    fill = _fill(config, "/proj/a")
    path = _sqlite(tmp_path, "stale", fill)
    # one summary gone, one older than its session (closing(): a connection's own
    # context manager commits but does not close)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        rows = db.execute("SELECT session_id FROM ccwire_summaries ORDER BY session_id").fetchall()
        db.execute("DELETE FROM ccwire_summaries WHERE session_id = ?", rows[0])
        db.execute("UPDATE ccwire_summaries SET mtime = 0 WHERE session_id = ?", rows[1])
    calls = [
        ["list_sessions_from_store", ["/proj/a"], {}],
        ["list_sessions_from_store", ["/proj/a"], {"limit": 3}],
        ["list_sessions_from_store", ["/proj/a"], {"limit": 3, "offset": 9}],
    ]
    _run_both(ref_python, {"store": "sqlite", "path": str(path), "calls": calls}, tmp_path, fill)
