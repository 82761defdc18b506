"""The `session_store` option end to end: the real CLI mirrors into SQLite, and resumes from it.

A first client runs one turn with `session_store=SQLiteStore(...)`: when its result
arrives, the turn is in the store. The CLI's local transcripts are then deleted, so
only the store has the session. A second client with `resume=<id>` (and then one with
`continue_conversation=True`) loads it from the store into a temporary config
directory; the scripted model sees the earlier turn in its request, the new turn is
mirrored under the same session, and the temporary directory is gone afterwards.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    Message,
    MirrorErrorMessage,
    ResultMessage,
    SessionKey,
    SQLiteStore,
    TranscriptMirrorMessage,
    get_session_messages_from_store,
    list_sessions_from_store,
    project_key_for_directory,
)
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60
Options = Callable[..., ClaudeAgentOptions]


def _resume_dirs(session_id: str) -> set[Path]:
    """The temporary config dirs ccwire made to resume ``session_id`` from a store: this
    test's only (another test's, beside it under `pytest -n`, holds another session)."""
    found = set()
    for folder in Path(tempfile.gettempdir()).glob("ccwire-resume-*"):
        with contextlib.suppress(OSError):  # another test's, removed meanwhile
            if any(folder.glob(f"projects/*/{session_id}.jsonl")):
                found.add(folder)
    return found


async def _turn(options: ClaudeAgentOptions, prompt: str) -> tuple[list[Message], set[Path]]:
    """One turn; also the temporary resume directories of the session it resumes (by
    id) that existed during it."""
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            during = _resume_dirs(options.resume) if options.resume else set()
            await client.query(prompt)
            messages = [m async for m in client.receive_response()]
    return messages, during


def _user_texts(entries: list[Any]) -> list[str]:
    return [json.dumps(e["message"]) for e in entries if e.get("type") == "user"]


async def _first_session(
    model: ScriptedModel, make_options: Options, store: SQLiteStore
) -> tuple[str, ClaudeAgentOptions]:
    model.add(text("Noted: PAPAYA."))
    options = make_options(session_store=store)
    messages, _ = await _turn(options, "Remember the word PAPAYA.")
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Noted: PAPAYA."
    assert not any(isinstance(m, (TranscriptMirrorMessage, MirrorErrorMessage)) for m in messages)
    return result.session_id, options


async def test_a_session_mirrored_to_sqlite_resumes_from_it_alone(
    model: ScriptedModel, make_options: Options, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "store.sqlite3")
    session_id, first = await _first_session(model, make_options, store)
    cwd, home = str(first.cwd), Path(first.env["HOME"])
    key: SessionKey = {"project_key": project_key_for_directory(cwd), "session_id": session_id}
    stored = await store.load(key)
    assert stored is not None
    assert any("Remember the word PAPAYA." in t for t in _user_texts(stored))
    (listed,) = await list_sessions_from_store(store, cwd)
    assert listed.session_id == session_id and listed.first_prompt == "Remember the word PAPAYA."

    shutil.rmtree(home / ".claude" / "projects")  # from now on only the store has it
    before = _resume_dirs(session_id)
    model.add(text("The word was PAPAYA."))
    messages, during = await _turn(
        make_options(session_store=store, resume=session_id), "What was the word?"
    )
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "The word was PAPAYA."
    history = json.dumps(model.turn_requests[-1].body["messages"])
    assert "Remember the word PAPAYA." in history and "What was the word?" in history
    assert len(during - before) == 1  # the temporary config dir the CLI resumed from...
    assert not [d for d in during - before if d.exists()]  # ...is gone
    assert not (home / ".claude" / "projects").exists()  # the CLI never wrote there

    # the resumed turn was mirrored into the same session, nothing twice
    stored = await store.load(key)
    assert stored is not None
    texts = _user_texts(stored)
    assert sum("Remember the word PAPAYA." in t for t in texts) == 1
    assert any("What was the word?" in t for t in texts)
    uuids = [e["uuid"] for e in stored if "uuid" in e]
    assert len(uuids) == len(set(uuids))
    said = [m.message for m in await get_session_messages_from_store(store, session_id, cwd)]
    assert "The word was PAPAYA." in json.dumps(said[-1])


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the same path as resume, once
async def test_continue_conversation_picks_the_latest_session_from_the_store(
    model: ScriptedModel, make_options: Options, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "store.sqlite3")
    session_id, first = await _first_session(model, make_options, store)
    shutil.rmtree(Path(first.env["HOME"]) / ".claude" / "projects")
    model.add(text("It was PAPAYA."))
    messages, _ = await _turn(
        make_options(session_store=store, continue_conversation=True), "Which word?"
    )
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "It was PAPAYA."
    assert result.session_id == session_id
    assert "Remember the word PAPAYA." in json.dumps(model.turn_requests[-1].body["messages"])
