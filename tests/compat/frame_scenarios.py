"""Conversations that make the real CLI send its newer frames, offline.

Each scenario runs the real Claude Code CLI against `ScriptedModel` and returns every
frame it sent (the ``raw`` of each message, in order):

* `subagent_with_tools`: a foreground subagent that reads a file twice
  (``task_started``, ``task_progress`` twice, ``task_updated``, ``task_notification``);
* `background_subagent`: a background subagent whose completion starts a second turn
  (a result whose ``origin`` is ``{"kind": "task-notification", ...}``);
* `clear_conversation`: a turn, ``/clear`` (``conversation_reset``), another turn;
* `hook_events`: a ``Read`` call guarded by a command hook from the settings, with
  ``include_hook_events`` (``hook_started``, ``hook_response``);
* `rate_limited`: a turn whose API answers carry rate-limit headers (added by
  `HeaderProxy`), with an OAuth-style token: the CLI sends a ``rate_limit_event``.

``python -m tests.compat.frame_scenarios CLI_PATH [NAME...]`` runs them (all, or the
named ones) and rewrites their fixtures under ``tests/fixtures/frames/`` (one JSON
frame per line).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio

from ccwire import AgentDefinition, ClaudeAgentOptions, ClaudeSDKClient
from ccwire.testing import ModelRequest, ScriptedModel, text, tool_use
from tests.compat.header_proxy import HeaderProxy

FRAMES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "frames"
TIMEOUT = 120

Frames = list[dict[str, Any]]


def _options(model: ScriptedModel, cli_path: str, tmp: Path, **kwargs: Any) -> ClaudeAgentOptions:
    home, cwd = tmp / "home", tmp / "work"
    home.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    return ClaudeAgentOptions(cli_path=cli_path, cwd=str(cwd), env=model.env(str(home)), **kwargs)


def _agent_call(background: bool, tool_use_id: str, prompt: str) -> Callable[[ModelRequest], Any]:
    """The main loop's first reply: call the Agent (or Task) tool on the helper."""

    def step(request: ModelRequest) -> Any:
        spec = next(t for t in request.tools if t["name"] in ("Agent", "Task"))
        call: dict[str, Any] = {"subagent_type": "helper", "description": prompt, "prompt": prompt}
        if "run_in_background" in spec["input_schema"].get("properties", {}):
            call["run_in_background"] = background
        return tool_use(spec["name"], call, id=tool_use_id)

    return step


def _router(main: list[Any], sub: list[Any]) -> Callable[[ModelRequest], Any]:
    """Serve the main loop's requests from ``main``, the subagent's from ``sub``."""

    def step(request: ModelRequest) -> Any:
        is_main = any(name in ("Agent", "Task") for name in request.tool_names)
        script = main if is_main else sub
        return script.pop(0) if script else text("done")

    return step


async def _turns(options: ClaudeAgentOptions, prompts: list[str]) -> Frames:
    frames: Frames = []
    async with ClaudeSDKClient(options) as client:
        for prompt in prompts:
            await client.query(prompt)
            async for message in client.receive_response():
                frames.append(dict(message.raw))
    return frames


async def subagent_with_tools(cli_path: str, tmp: Path) -> Frames:
    """A foreground subagent reading a file twice; see the module docstring."""
    notes = tmp / "work" / "notes.txt"
    notes.parent.mkdir(parents=True, exist_ok=True)
    notes.write_text("the answer is 42\n", encoding="utf-8")
    read = {"file_path": str(notes)}
    route = _router(
        [text("The helper read it.")],
        [tool_use("Read", read), tool_use("Read", read), text("It says 42.")],
    )
    with ScriptedModel() as model:
        model.add(_agent_call(False, "toolu_agent_fg", "Read notes.txt"), *[route] * 4)
        agent = AgentDefinition(
            description="Reads files", prompt="You read files.", tools=["Read"], model="inherit"
        )
        options = _options(model, cli_path, tmp, allowed_tools=["Read"], agents={"helper": agent})
        with anyio.fail_after(TIMEOUT):
            return await _turns(options, ["ask the helper to read notes.txt"])


async def background_subagent(cli_path: str, tmp: Path) -> Frames:
    """A background subagent whose completion is a turn of its own."""
    route = _router([text("The helper is on it."), text("The helper says 42.")], [text("42.")])
    with ScriptedModel() as model:
        model.add(_agent_call(True, "toolu_agent_bg", "Compute the answer"), *[route] * 4)
        agent = AgentDefinition(
            description="Computes answers", prompt="You compute.", tools=[], model="inherit"
        )
        options = _options(model, cli_path, tmp, agents={"helper": agent})
        frames: Frames = []
        with anyio.fail_after(TIMEOUT):
            async with ClaudeSDKClient(options) as client:
                await client.query("ask the helper in the background")
                results = 0
                async with aclosing(client.receive_messages()) as messages:  # left early
                    async for message in messages:
                        frames.append(dict(message.raw))
                        results += message.raw.get("type") == "result"
                        if results == 2:  # our turn, then the task notification's
                            break
        return frames


async def clear_conversation(cli_path: str, tmp: Path) -> Frames:
    """A turn, ``/clear``, another turn."""
    with ScriptedModel() as model:
        model.add(text("first answer"), text("second answer"))
        options = _options(model, cli_path, tmp)
        with anyio.fail_after(TIMEOUT):
            return await _turns(options, ["hello", "/clear", "hello again"])


async def hook_events(cli_path: str, tmp: Path) -> Frames:
    """A tool call whose command hook the CLI reports (``include_hook_events``)."""
    target = tmp / "work" / "a.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x\n", encoding="utf-8")
    hooks = {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "true"}]}]}
    with ScriptedModel() as model:
        model.add(tool_use("Read", {"file_path": str(target)}), text("read it"))
        options = _options(
            model,
            cli_path,
            tmp,
            include_hook_events=True,
            allowed_tools=["Read"],
            settings=json.dumps({"hooks": hooks}),
        )
        with anyio.fail_after(TIMEOUT):
            return await _turns(options, ["read a.txt"])


RATE_LIMIT_HEADERS = {
    "anthropic-ratelimit-unified-status": "allowed_warning",
    "anthropic-ratelimit-unified-reset": "1900000000",
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-status": "allowed_warning",
    "anthropic-ratelimit-unified-5h-utilization": "0.91",
    "anthropic-ratelimit-unified-5h-reset": "1900000000",
}
"""What the API sends a subscriber close to the five-hour limit."""


async def rate_limited(cli_path: str, tmp: Path) -> Frames:
    """A turn whose API answers report rate limits."""
    with ScriptedModel() as model, HeaderProxy(model.url, RATE_LIMIT_HEADERS) as proxy:
        model.add(text("within limits"))
        options = _options(model, cli_path, tmp)
        env = dict(options.env)
        env["ANTHROPIC_BASE_URL"] = proxy.url
        # rate limits are reported to subscribers (an OAuth token), not to API keys
        del env["ANTHROPIC_API_KEY"]
        env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-offline-test-token"
        options.env = env
        with anyio.fail_after(TIMEOUT):
            return await _turns(options, ["hello"])


SCENARIOS: dict[str, Callable[[str, Path], Awaitable[Frames]]] = {
    "subagent_foreground": subagent_with_tools,
    "subagent_background": background_subagent,
    "conversation_reset": clear_conversation,
    "rate_limit": rate_limited,
    "hook_events": hook_events,
}


def load_fixture(name: str) -> Frames:
    """The frames captured for scenario ``name``."""
    lines = (FRAMES_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


async def _capture(cli_path: str, *names: str) -> None:
    FRAMES_DIR.mkdir(parents=True, exist_ok=True)
    for name, scenario in SCENARIOS.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            frames = await scenario(cli_path, Path(tmp))
        path = FRAMES_DIR / f"{name}.jsonl"
        path.write_text("".join(json.dumps(f) + "\n" for f in frames), encoding="utf-8")
        print(f"{path}: {len(frames)} frames")


if __name__ == "__main__":
    anyio.run(_capture, sys.argv[1], *sys.argv[2:])
