"""Port of the reference SDK's ``e2e-tests/test_forward_subagent_text.py``.

With ``forward_subagent_text=True`` the text of a foreground subagent arrives in
assistant messages whose ``parent_tool_use_id`` is the Agent tool call that spawned it;
by default that text stays out of the stream. The scripted model plays both the
main agent (which calls the Agent tool, then says DONE) and the subagent (which
greets).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import AssistantMessage, ResultMessage, TextBlock, ToolUseBlock, query
from ccwire.testing import ScriptedModel

from ._greeter import AGENT_TOOLS, GREETING, PROMPT, greeter_options, script_greeter_run

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def _collect(
    model: ScriptedModel, make_options: Any, *, forward: bool
) -> tuple[set[str], list[AssistantMessage]]:
    """Run the prompt; return the Agent tool_use ids and the attributed assistant messages."""
    script_greeter_run(model)
    agent_calls: set[str] = set()
    attributed: list[AssistantMessage] = []
    result: ResultMessage | None = None
    options = greeter_options(make_options, forward_subagent_text=forward)
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=PROMPT, options=options):
            if isinstance(message, AssistantMessage):
                if message.parent_tool_use_id is None:
                    agent_calls |= {
                        b.id
                        for b in message.content
                        if isinstance(b, ToolUseBlock) and b.name in AGENT_TOOLS
                    }
                else:
                    attributed.append(message)
            elif isinstance(message, ResultMessage):
                result = message
    assert result is not None and not result.is_error, result
    assert result.result == "DONE"
    assert agent_calls, "the Agent tool was not called"
    # the subagent really ran: its greeting came back to the main agent
    assert GREETING in str(model.turn_requests[-1].messages)
    return agent_calls, attributed


def _kinds(messages: list[AssistantMessage]) -> list[list[str]]:
    return [[type(b).__name__ for b in m.content] for m in messages]


async def test_forward_subagent_text_delivers_attributed_text(
    model: ScriptedModel, make_options: Any
) -> None:
    agent_calls, attributed = await _collect(model, make_options, forward=True)
    with_text = [m for m in attributed if any(isinstance(b, TextBlock) for b in m.content)]
    assert with_text, _kinds(attributed)
    for message in with_text:
        assert message.parent_tool_use_id in agent_calls
    assert GREETING in [b.text for m in with_text for b in m.content if isinstance(b, TextBlock)]


async def test_subagent_text_not_forwarded_by_default(
    model: ScriptedModel, make_options: Any
) -> None:
    _, attributed = await _collect(model, make_options, forward=False)
    leaked = [m for m in attributed if any(isinstance(b, TextBlock) for b in m.content)]
    assert not leaked, _kinds(leaked)
