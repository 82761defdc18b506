"""The live display of `ccwire run` in a real terminal (tmux): many short tool calls, a long
one, and a resize while it runs. Afterwards the screen holds the conversation's lines,
each whole, and no status line is left behind.

The test waits on what the screen shows (a bounded poll of `tmux capture-pane`), never
on time.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

CLI = os.environ.get("CCWIRE_CLI_PATH")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not (CLI and os.access(CLI, os.X_OK)), reason="set CCWIRE_CLI_PATH"),
]

SHORT = 8

TOOLS = """
import os
from pathlib import Path

import anyio
from ccwire import create_sdk_mcp_server, tool

RELEASE = Path(os.environ["RELEASE_FILE"])


@tool("ping", "Answer pong", {"n": int})
async def ping(args):
    return {"content": [{"type": "text", "text": f"pong {args['n']}"}]}


@tool("slow", "A long job: ends when the test says so", {})
async def slow(args):
    with anyio.fail_after(120):
        while not RELEASE.exists():
            await anyio.sleep(0.05)
    return {"content": [{"type": "text", "text": "slow job finished"}]}


server = create_sdk_mcp_server("t", tools=[ping, slow])
"""

# every line the finished screen may show (the run's output, then the shell's)
LINE_SHAPES = [
    r"> go",
    r"  \[offline: scripted model; set ANTHROPIC_API_KEY for the real one\]",
    r"  \[session \w+ - model [\w.-]+ - \d+ tools - servers: t \(connected\)\]",
    r"  tool call    mcp__t__(ping \{\"n\": \d+\}|slow \{\})",
    r"  tool result  mcp__t__ping \(\d+ ms\): pong \d+",
    r"  tool result  mcp__t__slow \([\d.]+ (ms|s)\): slow job finished",
    r"All done\.",
    r"done: success - \d+ turns - \$[\d.]+ - [\d.]+ (ms|s)",
    r"EXIT=0",
]


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-J", "-S", "-", "-t", "run")

    def wait_for(self, what: Callable[[str], bool], label: str, limit: float = 90) -> str:
        deadline = time.monotonic() + limit  # a bound on the poll, not a synchronisation
        while True:
            screen = self.screen()
            if what(screen):
                return screen
            assert time.monotonic() < deadline, f"never saw {label}:\n{screen}"


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    t = Tmux(f"ccwire-test-{os.getpid()}-{tmp_path.name}")
    yield t
    subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True, check=False)


def test_live_display_leaves_clean_lines(tmux: Tmux, tmp_path: Path) -> None:
    (tmp_path / "term_tools.py").write_text(TOOLS)
    release = tmp_path / "release"
    pings = [{"tool_use": {"name": "mcp__t__ping", "input": {"n": n}}} for n in range(SHORT)]
    steps = [
        {"reply": pings},
        {"tool_use": {"name": "mcp__t__slow", "input": {}}},
        "All done.",
    ]
    (tmp_path / "script.json").write_text(json.dumps(steps))
    command = " ".join(
        [
            shlex.quote(sys.executable), "-m", "ccwire", "run", "go",
            "--scripted", "script.json", "--tools", "term_tools:server",
            "--allow", "'mcp__t__*'", "--cli-path", shlex.quote(str(CLI)),
        ]
    )  # fmt: skip
    env = {
        "PYTHONPATH": str(tmp_path),
        "RELEASE_FILE": str(release),
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # COLUMNS/LINES (set by some parents) would pin the width: the terminal's must count
    shell = (
        f"cd {shlex.quote(str(tmp_path))} && env -u COLUMNS -u LINES {exports} {command}; "
        "echo EXIT=$?; read x"
    )
    tmux("new-session", "-d", "-s", "run", "-x", "120", "-y", "40", "sh", "-c", shell)

    # the long call runs: its own status row shows, under the finished short calls
    tmux.wait_for(lambda s: "slow - running" in s, "the slow tool's status row")
    # shrink the terminal while the status is live, then let the long call finish
    tmux("resize-window", "-t", "run", "-x", "36", "-y", "40")
    tmux.wait_for(lambda s: "slow - running" in s, "the status after the resize")
    release.write_text("go")
    screen = tmux.wait_for(lambda s: "EXIT=" in s, "the end of the run")

    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    leftovers = [line for line in lines if " - turn " in line or " - running" in line]
    assert not leftovers, "status lines left behind:\n" + screen
    torn = [line for line in lines if not any(re.fullmatch(p, line) for p in LINE_SHAPES)]
    assert not torn, "lines that are not whole:\n" + "\n".join(torn) + "\n---\n" + screen
    assert sum("tool result  mcp__t__ping" in line for line in lines) == SHORT
    assert lines[-1] == "EXIT=0"
