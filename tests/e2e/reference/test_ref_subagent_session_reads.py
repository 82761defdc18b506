"""Port of the reference SDK's ``e2e-tests/test_subagent_session_reads.py``.

After a run that spawns a subagent, reading the subagent's transcript back attributes
its messages to the Agent tool call that spawned it, both from the local transcript
(`list_subagents` / `get_subagent_messages`) and from a `SessionStore` mirror
(`list_subagents_from_store` / `get_subagent_messages_from_store`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    InMemorySessionStore,
    ResultMessage,
    SessionMessage,
    ToolUseBlock,
    get_subagent_messages,
    get_subagent_messages_from_store,
    list_subagents,
    list_subagents_from_store,
    query,
)
from ccwire.testing import ScriptedModel

from ._greeter import AGENT_TOOLS, PROMPT, greeter_options, script_greeter_run

pytestmark = pytest.mark.anyio

TIMEOUT = 60


def _attributed(
    by_agent: Mapping[str, Sequence[SessionMessage]], agent_calls: set[str]
) -> dict[str, set[str | None]]:
    """agent id -> parent_tool_use_ids, for the transcripts that belong to Agent calls
    seen in the stream (other agent transcripts the CLI keeps are ignored)."""
    parents = {agent: {m.parent_tool_use_id for m in msgs} for agent, msgs in by_agent.items()}
    return {a: p for a, p in parents.items() if by_agent[a] and p <= agent_calls}


async def test_subagent_messages_carry_parent_tool_use_id(
    model: ScriptedModel, make_options: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemorySessionStore()
    options = greeter_options(make_options, session_store=store)
    # the local reads look in the CLI's config directory, under the CLI's HOME
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(Path(options.env["HOME"]) / ".claude"))
    script_greeter_run(model)

    session_id: str | None = None
    agent_calls: set[str] = set()
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=PROMPT, options=options):
            if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                agent_calls |= {
                    b.id
                    for b in message.content
                    if isinstance(b, ToolUseBlock) and b.name in AGENT_TOOLS
                }
            elif isinstance(message, ResultMessage):
                assert not message.is_error, message
                session_id = message.session_id
    assert session_id
    assert agent_calls, "the Agent tool was not called"

    local = {a: get_subagent_messages(session_id, a) for a in list_subagents(session_id)}
    local_attributed = _attributed(local, agent_calls)
    assert local_attributed, {a: {m.parent_tool_use_id for m in ms} for a, ms in local.items()}
    for agent in local_attributed:
        assert all(m.parent_agent_id is None for m in local[agent])  # spawned by the main session

    # the store is keyed by project: name the CLI's working directory (the reference
    # runs the CLI in the test's own, the default)
    mirrored = {
        a: await get_subagent_messages_from_store(store, session_id, a, options.cwd)
        for a in await list_subagents_from_store(store, session_id, options.cwd)
    }
    mirrored_attributed = _attributed(mirrored, agent_calls)
    assert mirrored_attributed, {
        a: {m.parent_tool_use_id for m in ms} for a, ms in mirrored.items()
    }
    # the same subagents, attributed the same way, on both paths
    assert {a: p for a, p in local_attributed.items() if a in mirrored_attributed} == {
        a: p for a, p in mirrored_attributed.items() if a in local_attributed
    }
    assert set(local_attributed) & set(mirrored_attributed)
    for agent in mirrored_attributed:
        assert all(m.parent_agent_id is None for m in mirrored[agent])
