"""Make real transcripts: the real Claude Code CLI, offline, against the scripted model.

`make_transcripts(home, work)` runs a few sessions whose transcripts cover what the
session helpers must handle: several turns, tool calls (two in parallel), a
subagent, a resumed session and a fork made by the CLI. The CLI writes them under
`home/.claude/projects/`. Run as a script to refresh the committed fixtures:

    CCWIRE_CLI_PATH=node_modules/.bin/claude python -m tests.sessions.transcripts.make_transcripts
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ccwire import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    Message,
    ResultMessage,
    query,
)
from ccwire.testing import ModelRequest, ScriptedModel, reply, text, tool_use

FIXTURE_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
"""Where the captured transcripts are committed."""

FIXTURE_CWD = "/ccwire-fixture/work"
"""The project path the committed fixtures are rewritten to (it need not exist)."""

TIMEOUT = 120


@dataclass(frozen=True)
class Made:
    """The sessions `make_transcripts` ran.

    Attributes:
        multi_turn: Two turns, Bash calls (two in parallel), later resumed.
        subagent: A turn that ran a subagent through the Agent tool.
        forked: The CLI's fork (`fork_session=True`) of `multi_turn`.
    """

    multi_turn: str
    subagent: str
    forked: str


def _options(
    model: ScriptedModel, home: Path, work: Path, cli: str, **kw: Any
) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cli_path=cli, cwd=str(work), env=model.env(str(home)), allowed_tools=["Bash"], **kw
    )


def _session_id(messages: list[Message]) -> str:
    result = next(m for m in messages if isinstance(m, ResultMessage))
    assert not result.is_error, result
    return result.session_id


async def _turn(client: ClaudeSDKClient, prompt: str) -> list[Message]:
    await client.query(prompt)
    return [m async for m in client.receive_response()]


async def _run(model: ScriptedModel, home: Path, work: Path, cli: str) -> Made:
    model.add(
        tool_use("Bash", {"command": "echo alpha", "description": "Print alpha"}),
        reply(
            tool_use("Bash", {"command": "echo one", "description": "Print one"}),
            tool_use("Bash", {"command": "echo two", "description": "Print two"}),
        ),
        text("Both commands ran: one and two."),
        text("You are welcome."),
    )
    async with ClaudeSDKClient(_options(model, home, work, cli)) as client:
        first = await _turn(client, "Run echo alpha, then echo one and two in parallel")
        await _turn(client, "Thanks!")
    multi = _session_id(first)

    sub_script: list[Any] = [text("The helper says: done.")]
    main_script: list[Any] = [text("The helper finished its task.")]

    def first_turn(request: ModelRequest) -> Any:
        spec = next(t for t in request.tools if t["name"] in ("Agent", "Task"))
        call: dict[str, Any] = {
            "subagent_type": "helper",
            "description": "Help out",
            "prompt": "Say done.",
        }
        if "run_in_background" in spec["input_schema"].get("properties", {}):
            call["run_in_background"] = False
        return tool_use(spec["name"], call, id="toolu_agent_fixture_1")

    def route(request: ModelRequest) -> Any:
        is_main = any(n in ("Agent", "Task") for n in request.tool_names)
        return (main_script if is_main else sub_script).pop(0)

    model.add(first_turn, route, route)
    agents = {
        "helper": AgentDefinition(
            description="Helps out", prompt="You are the helper.", tools=["Bash"], model="inherit"
        )
    }
    sub = [
        m
        async for m in query(
            prompt="Ask the helper agent to say done",
            options=_options(model, home, work, cli, agents=agents),
        )
    ]
    subagent = _session_id(sub)

    model.add(text("Picking up where we left off."))
    resumed = [
        m
        async for m in query(
            prompt="Where were we?", options=_options(model, home, work, cli, resume=multi)
        )
    ]
    assert _session_id(resumed) == multi

    model.add(text("This is the forked branch."))
    forked_msgs = [
        m
        async for m in query(
            prompt="Try another way",
            options=_options(model, home, work, cli, resume=multi, fork_session=True),
        )
    ]
    forked = _session_id(forked_msgs)
    assert forked != multi
    model.assert_script_consumed()
    return Made(multi_turn=multi, subagent=subagent, forked=forked)


def make_transcripts(home: Path, work: Path, cli: str) -> Made:
    """Run the sessions; the CLI writes their transcripts under `home/.claude`.

    Args:
        home: The `HOME` the CLI runs with (a fresh temporary directory).
        work: The working directory of every session.
        cli: The `claude` executable.

    Returns:
        The ids of the sessions made.
    """

    async def bounded(model: ScriptedModel) -> Made:
        with anyio.fail_after(TIMEOUT):
            return await _run(model, home, work, cli)

    with ScriptedModel() as model:
        return anyio.run(bounded, model)


def _rewrite(src_projects: Path, work: Path, dest: Path) -> None:
    """Copy the projects tree into `dest`, with the temp paths made fixed."""
    real = os.path.realpath(work)
    from ccwire import project_key_for_directory

    old_key = project_key_for_directory(real)
    new_key = project_key_for_directory(FIXTURE_CWD)
    if dest.exists():
        shutil.rmtree(dest)
    for path in sorted(src_projects.rglob("*")):
        rel = str(path.relative_to(src_projects)).replace(old_key, new_key)
        target = dest / rel
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_text(encoding="utf-8").replace(real, FIXTURE_CWD)
        target.write_text(data, encoding="utf-8")


def main() -> None:
    """Regenerate tests/fixtures/transcripts from the real CLI."""
    cli = os.environ.get("CCWIRE_CLI_PATH")
    if not cli:
        sys.exit("set CCWIRE_CLI_PATH to the claude executable")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        made = make_transcripts(home, work, cli)
        _rewrite(home / ".claude" / "projects", work, FIXTURE_DIR / "projects")
        (FIXTURE_DIR / "sessions.txt").write_text(
            f"multi_turn {made.multi_turn}\nsubagent {made.subagent}\nforked {made.forked}\n"
        )
    print(made)


if __name__ == "__main__":
    main()
