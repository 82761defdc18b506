"""Port of the reference SDK's ``e2e-tests/test_agents_and_settings.py``.

Programmatic agents (small and 260 KB worth) and filesystem agents reach the CLI and
show up in the ``init`` message; ``setting_sources`` decides which settings files the
CLI reads (project agents, local ``outputStyle``, project slash commands).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    AgentDefinition,
    ClaudeSDKClient,
    Message,
    SystemMessage,
    query,
)
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60


def _big_agents(count: int = 20, kib: int = 13) -> dict[str, AgentDefinition]:
    return {
        f"big-agent-{n}": AgentDefinition(
            description=f"Big agent number {n}, for size testing",
            prompt=f"You are big agent {n}. " + "y" * (kib * 1024),
        )
        for n in range(count)
    }


def _init_data(messages: list[Message]) -> dict[str, Any]:
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    return dict(init.data)


async def _client_turn(options: Any, prompt: str) -> list[Message]:
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            return [m async for m in client.receive_response()]


async def _query(options: Any, prompt: str) -> list[Message]:
    with anyio.fail_after(TIMEOUT):
        return [m async for m in query(prompt=prompt, options=options)]


def _project(make_options: Any, **kwargs: Any) -> tuple[Any, Path]:
    options = make_options(**kwargs)
    claude_dir = Path(options.cwd) / ".claude"
    claude_dir.mkdir()
    return options, claude_dir


async def test_agent_definition_listed_in_init(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("4"))
    options = make_options(
        agents={
            "test-agent": AgentDefinition(
                description="A test agent for verification",
                prompt="You are a test agent. Always respond with 'Test agent activated'",
                tools=["Read"],
                model="sonnet",
            )
        },
        max_turns=1,
    )
    agents = _init_data(await _client_turn(options, "What is 2 + 2?"))["agents"]
    assert isinstance(agents, list)
    assert "test-agent" in agents


async def test_agent_definition_with_query(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("4"))
    options = make_options(
        agents={
            "test-agent-query": AgentDefinition(
                description="A test agent for query function verification",
                prompt="You are a test agent.",
            )
        },
        max_turns=1,
    )
    assert "test-agent-query" in _init_data(await _query(options, "What is 2 + 2?"))["agents"]


async def test_large_agents_with_query(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("4"))
    agents = _big_agents()
    options = make_options(agents=agents, max_turns=1)
    registered = _init_data(await _query(options, "What is 2 + 2?"))["agents"]
    assert set(agents) <= set(registered)


async def test_filesystem_agent_loaded_and_the_turn_completes(
    model: ScriptedModel, make_options: Any
) -> None:
    # reference issue #406: with a filesystem agent the iterator stopped after init
    model.add(text("Hello there friend"))
    options, claude_dir = _project(make_options, setting_sources=["project"], max_turns=1)
    (claude_dir / "agents").mkdir()
    (claude_dir / "agents" / "fs-test-agent.md").write_text(
        "---\n"
        "name: fs-test-agent\n"
        "description: A filesystem test agent for SDK testing\n"
        "tools: Read\n"
        "---\n\n"
        "# Filesystem Test Agent\n\nYou are a simple test agent.\n",
        encoding="utf-8",
    )
    messages = await _client_turn(options, "Say hello in exactly 3 words")
    kinds = [type(m).__name__ for m in messages]
    assert "SystemMessage" in kinds
    assert "AssistantMessage" in kinds, kinds
    assert "ResultMessage" in kinds
    assert "fs-test-agent" in _init_data(messages)["agents"]


async def test_setting_sources_default_loads_local_settings(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("4"))
    options, claude_dir = _project(make_options, max_turns=1)
    (claude_dir / "settings.local.json").write_text('{"outputStyle": "local-test-style"}')
    init = _init_data(await _client_turn(options, "What is 2 + 2?"))
    assert init["output_style"] == "local-test-style"


async def test_setting_sources_user_only_excludes_project_commands(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("4"), text("4"))
    options, claude_dir = _project(make_options, setting_sources=["user"], max_turns=1)
    (claude_dir / "commands").mkdir()
    (claude_dir / "commands" / "testcmd.md").write_text(
        "---\ndescription: Test command\n---\n\nThis is a test command.\n", encoding="utf-8"
    )
    init = _init_data(await _client_turn(options, "What is 2 + 2?"))
    assert "testcmd" not in init["slash_commands"]
    # the control: the same project with project sources does offer the command
    with_project = dataclasses.replace(options, setting_sources=["user", "project"])
    assert (
        "testcmd"
        in _init_data(await _client_turn(with_project, "What is 2 + 2?"))["slash_commands"]
    )


async def test_setting_sources_with_local_loads_local_settings(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("4"))
    options, claude_dir = _project(
        make_options, setting_sources=["user", "project", "local"], max_turns=1
    )
    (claude_dir / "settings.local.json").write_text('{"outputStyle": "local-test-style"}')
    init = _init_data(await _client_turn(options, "What is 2 + 2?"))
    assert init["output_style"] == "local-test-style"


async def test_large_agent_definitions_via_initialize(
    model: ScriptedModel, make_options: Any
) -> None:
    agents = _big_agents()
    total = sum(
        len(json.dumps({k: v for k, v in dataclasses.asdict(a).items() if v is not None}))
        for a in agents.values()
    )
    assert total > 250_000
    model.add(text("Here they are"))
    options = make_options(agents=agents, max_turns=1)
    registered = _init_data(await _client_turn(options, "List available agents"))["agents"]
    assert isinstance(registered, list)
    assert set(agents) <= set(registered)
    assert len(registered) >= len(agents)
