"""Archiving, and listing without programmatic sessions, on the CLI's real transcripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import ClaudeSDKClient, ResultMessage, archive_session, list_sessions
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def _turn(options: Any, prompt: str) -> str:
    async with ClaudeSDKClient(options) as client:
        await client.query(prompt)
        messages = [m async for m in client.receive_response()]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    return result.session_id


async def test_archive_then_a_new_prompt_unarchives(
    model: ScriptedModel, make_options: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    model.add(text("one"), text("two"))
    options = make_options()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(options.env["HOME"]) / ".claude"))
    cwd = str(options.cwd)
    with anyio.fail_after(TIMEOUT):
        sid = await _turn(options, "first")
    (info,) = list_sessions(cwd)
    assert info.session_id == sid and info.archived is None
    # the CLI wrote it for an SDK (entrypoint sdk-py): not a session a person started
    assert list_sessions(cwd, include_programmatic=False) == []
    archive_session(sid, cwd)
    assert [s.archived for s in list_sessions(cwd)] == [True]
    with anyio.fail_after(TIMEOUT):
        await _turn(make_options(resume=sid), "second")
    assert [s.archived for s in list_sessions(cwd)] == [False]
