"""Port of the reference SDK's ``e2e-tests/test_truncating_resume.py``.

A two-turn session is forked at the end of turn 1 (``resume_session_at``): with
``resume_drops_turn`` naming turn 2's prompt the CLI drops turn 2 and the fork goes on
after turn 1; with any other id the CLI refuses, and the refusal reaches the caller as a
`ProcessError`. Transcripts are read back with `get_session_messages()`.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    ClaudeSDKClient,
    ProcessError,
    ResultMessage,
    get_session_messages,
    query,
)
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60
TURN_1 = "Reply with exactly: one"
TURN_2 = "Reply with exactly: two"
TURN_3 = "Reply with exactly: three"


@pytest.fixture
def session_options(make_options: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``make_options`` whose sessions `get_session_messages()` can read back: this
    process looks in the CLI's config directory (under the CLI's HOME)."""
    home = Path(make_options().env["HOME"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    return make_options


async def _two_turns(model: ScriptedModel, options: Any) -> tuple[str, str, str]:
    """Run two turns; return (session id, last uuid of turn 1, prompt uuid of turn 2)."""
    model.add(text("one"), text("two"))
    last_of_turn_1: AssistantMessage | None = None
    results: list[ResultMessage] = []
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query(TURN_1)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    last_of_turn_1 = message
                elif isinstance(message, ResultMessage):
                    results.append(message)
            await client.query(TURN_2)
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    results.append(message)
    assert last_of_turn_1 is not None and last_of_turn_1.uuid
    assert len(results) == 2 and not any(r.is_error for r in results), results
    session_id = results[-1].session_id

    chain = get_session_messages(session_id, directory=options.cwd)
    uuids = [m.uuid for m in chain]
    keep_at = last_of_turn_1.uuid
    assert keep_at in uuids
    turn_2 = next(
        i for i, m in enumerate(chain) if m.type == "user" and m.message.get("content") == TURN_2
    )
    assert turn_2 == uuids.index(keep_at) + 1, [(m.type, m.uuid) for m in chain]
    return session_id, keep_at, chain[turn_2].uuid


def _prompts(session_id: str, cwd: str) -> list[str]:
    return [
        m.message["content"]
        for m in get_session_messages(session_id, directory=cwd)
        if m.type == "user" and isinstance(m.message.get("content"), str)
    ]


async def test_truncating_resume_with_matching_drops_turn_forks_cleanly(
    model: ScriptedModel, session_options: Any
) -> None:
    base = session_options(max_turns=1)
    session_id, keep_at, turn_2_prompt = await _two_turns(model, base)
    model.add(text("three"))
    options = session_options(
        max_turns=1,
        resume=session_id,
        fork_session=True,
        resume_session_at=keep_at,
        resume_drops_turn=turn_2_prompt,
    )
    forked: ResultMessage | None = None
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=TURN_3, options=options):
            if isinstance(message, ResultMessage):
                forked = message

    assert forked is not None and not forked.is_error
    assert forked.session_id != session_id
    assert _prompts(forked.session_id, base.cwd) == [TURN_1, TURN_3]
    assert _prompts(session_id, base.cwd) == [TURN_1, TURN_2]
    # what the model saw on the fork: turn 1, then turn 3, never turn 2
    seen = str(model.turn_requests[-1].messages)
    assert TURN_1 in seen and TURN_3 in seen and TURN_2 not in seen


async def test_truncating_resume_with_wrong_drops_turn_is_refused(
    model: ScriptedModel, session_options: Any
) -> None:
    base = session_options(max_turns=1)
    session_id, keep_at, _ = await _two_turns(model, base)
    options = session_options(
        max_turns=1,
        resume=session_id,
        fork_session=True,
        resume_session_at=keep_at,
        resume_drops_turn=str(uuid.uuid4()),  # not the prompt that follows keep_at
    )
    with anyio.fail_after(TIMEOUT), pytest.raises(ProcessError) as caught:
        async for _ in query(prompt=TURN_3, options=options):
            pass

    assert "Resume rejected by --resume-drops-turn:" in str(caught.value)
    assert _prompts(session_id, base.cwd) == [TURN_1, TURN_2]
    assert len(model.turn_requests) == 2  # the refused fork never reached the model
