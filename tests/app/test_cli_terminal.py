"""The command line in a real terminal (tmux).

* The live display of `ccwire run`: many short tool calls, a long one, and a resize
  while it runs. Afterwards the screen holds the conversation's lines, each whole, and
  no status line is left behind; the CLI's retries show as they happen.
* Ctrl-C ends every command at once, wherever it waits (`run` at its permission prompt,
  `serve` on stdio and over HTTP, `batch`, `show` writing to a terminal that does not
  take its output): exit code 130, one line saying so, no traceback, and nothing left
  for a second Ctrl-C to interrupt.

The tests wait on what the screen shows (a bounded poll of `tmux capture-pane`) or on a
file a tool writes, never on time.
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
]
needs_cli = pytest.mark.skipif(not (CLI and os.access(CLI, os.X_OK)), reason="set CCWIRE_CLI_PATH")

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
    r"done: success - \d+ turns - [\d.]+ (ms|s)",  # offline: no dollar cost
    r"EXIT=0",
]


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args],
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
            assert "EXIT=" not in screen, f"the command ended before {label}:\n{screen}"
            assert time.monotonic() < deadline, f"never saw {label}:\n{screen}"


@pytest.fixture
def tmux(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tmux]:
    # a server of the test's own, its socket in a short temporary directory (a socket's
    # path has a length limit), removed with it
    t = Tmux(str(tmp_path_factory.mktemp("tmux") / "s"))
    yield t
    subprocess.run(["tmux", "-S", t.socket, "kill-server"], capture_output=True, check=False)
    Path(t.socket).unlink(missing_ok=True)


@needs_cli
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


# --------------------------------------------------------------------------- the retries


@needs_cli
def test_the_live_display_shows_the_clis_retries(tmux: Tmux, tmp_path: Path) -> None:
    """The scripted model answers 529, then 500, then the reply: the CLI retries on its
    own, and each retry shows (its reason, which attempt, the wait) without --verbose."""
    steps = [
        {"error": {"status": 529, "message": "Overloaded", "type": "overloaded_error"}},
        {"error": {"status": 500, "message": "Internal server error"}},
        "Reached the model.",
    ]
    (tmp_path / "script.json").write_text(json.dumps(steps))
    launch(tmux, tmp_path, ["run", "go", "--scripted", "script.json"])
    screen = tmux.wait_for(lambda s: "EXIT=" in s, "the end of the run")
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    retries = [line for line in lines if line.startswith("api retry")]
    assert len(retries) == 2, screen
    assert re.fullmatch(r"api retry +529 overloaded - retry 1 of \d+ in [\d.]+ (ms|s)", retries[0])
    assert re.fullmatch(r"api retry +500 \w+ - retry 2 of \d+ in [\d.]+ (ms|s)", retries[1])
    assert lines.index(retries[1]) < lines.index("Reached the model.")
    assert lines[-1] == "EXIT=0"


# --------------------------------------------------------------------------- Ctrl-C

EXIT = re.compile(r"EXIT=(\d+)$", re.MULTILINE)


def launch(
    tmux: Tmux, where: Path, argv: list[str], env: dict[str, str] | None = None, prefix: str = ""
) -> None:
    """Start `python -m ccwire ARGV` in the terminal; the shell prints EXIT=<code> after."""
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "ccwire", *argv])
    variables = {
        "PYTHONPATH": str(where),
        "HOME": str(where),
        "TERM": "xterm-256color",
        "RELEASE_FILE": str(where / "release"),  # for TOOLS
        **({"CCWIRE_CLI_PATH": str(CLI)} if CLI else {}),
        **(env or {}),
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
    shell = (
        f"cd {shlex.quote(str(where))} && {prefix}env -u COLUMNS -u LINES {exports} {command}; "
        "echo EXIT=$?; read x"
    )
    # bash, not sh: on Ctrl-C dash ends too, even when its command handled the signal
    tmux("new-session", "-d", "-s", "run", "-x", "120", "-y", "40", "bash", "-c", shell)


def interrupted(tmux: Tmux) -> str:
    """Press Ctrl-C once; the command must end by itself: code 130, no traceback."""
    tmux("send-keys", "-t", "run", "C-c")
    screen = tmux.wait_for(lambda s: EXIT.search(s) is not None, "the command's end", limit=30)
    match = EXIT.search(screen)
    assert match is not None and match.group(1) == "130", screen
    assert "Traceback" not in screen and "KeyboardInterrupt" not in screen, screen
    assert "ccwire: error: interrupted (Ctrl-C)" in screen or "ccwire batch: interrupted" in screen
    return screen


@needs_cli
def test_ctrl_c_at_the_permission_prompt(tmux: Tmux, tmp_path: Path) -> None:
    """`ccwire run` asks whether a tool may run; Ctrl-C instead of an answer ends it."""
    (tmp_path / "term_tools.py").write_text(TOOLS)
    steps = [{"tool_use": {"name": "mcp__t__ping", "input": {"n": 1}}}, "never reached"]
    (tmp_path / "script.json").write_text(json.dumps(steps))
    launch(
        tmux, tmp_path, ["run", "go", "--scripted", "script.json", "--tools", "term_tools:server"]
    )
    tmux.wait_for(lambda s: "[n] no >" in s, "the permission prompt")
    screen = interrupted(tmux)
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    assert lines[lines.index("interrupted") - 1].endswith("[n] no > ^C"), screen  # kept whole
    assert "never reached" not in screen and "tool error" not in screen
    # the CLI has its own session (the terminal's Ctrl-C does not reach it): ccwire's
    # shutdown stopped it, and what it started
    shell = tmux("display-message", "-p", "-t", "run", "#{pane_pid}").strip()
    assert processes_in(tmp_path, but=shell) == []


def processes_in(folder: Path, but: str) -> list[str]:
    """The command lines of the processes (except ``but``) working in ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name == but:
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == folder.resolve():
                found.append((entry / "cmdline").read_text().replace("\0", " "))
        except OSError:  # gone, or not ours
            continue
    return found


def test_ctrl_c_ends_serve_on_stdio(tmux: Tmux, tmp_path: Path) -> None:
    """`ccwire serve` reading an MCP client's lines from the terminal: the first Ctrl-C
    ends it."""
    (tmp_path / "term_tools.py").write_text(TOOLS)
    launch(tmux, tmp_path, ["serve", "term_tools:server"])
    request = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tmux", "version": "1"}},
    }  # fmt: skip
    tmux("send-keys", "-t", "run", "-l", json.dumps(request))
    tmux("send-keys", "-t", "run", "Enter")
    tmux.wait_for(lambda s: '"serverInfo"' in s, "the answer to initialize")  # it reads stdin
    interrupted(tmux)


def test_ctrl_c_ends_serve_over_http(tmux: Tmux, tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    (tmp_path / "term_tools.py").write_text(TOOLS)
    launch(tmux, tmp_path, ["serve", "--http", "127.0.0.1:0", "term_tools:server"])
    tmux.wait_for(lambda s: "serving MCP on http://127.0.0.1:" in s, "the server's address")
    interrupted(tmux)


BATCH_TOOLS = """
import os
from pathlib import Path

import anyio
from ccwire import create_sdk_mcp_server, tool


@tool("hang", "A job that never ends", {})
async def hang(args):
    Path(os.environ["STARTED_FILE"]).write_text("started")
    with anyio.fail_after(120):
        await anyio.sleep_forever()
    return {"content": [{"type": "text", "text": "never"}]}


server = create_sdk_mcp_server("b", tools=[hang])
"""


@needs_cli
def test_ctrl_c_ends_batch(tmux: Tmux, tmp_path: Path) -> None:
    (tmp_path / "batch_tools.py").write_text(BATCH_TOOLS)
    (tmp_path / "tasks.jsonl").write_text('{"id": "a", "prompt": "hang"}\n')
    (tmp_path / "script.json").write_text(
        json.dumps([{"tool_use": {"name": "mcp__b__hang", "input": {}}}])
    )
    started = tmp_path / "started"
    launch(
        tmux, tmp_path,
        ["batch", "tasks.jsonl", "-o", "out.jsonl", "--scripted", "script.json",
         "--tools", "batch_tools:server"],
        env={"STARTED_FILE": str(started)},
    )  # fmt: skip
    deadline = time.monotonic() + 90  # a bound on the poll, not a synchronisation
    while not started.exists():
        assert time.monotonic() < deadline, "the task's tool never started:\n" + tmux.screen()
    interrupted(tmux)


def _write_syscall_number() -> int | None:
    return {"x86_64": 1, "aarch64": 64}.get(os.uname().machine)


def test_ctrl_c_ends_show(tmux: Tmux, tmp_path: Path) -> None:
    """`ccwire show` of a long session, to a terminal whose output is stopped (Ctrl-S):
    blocked in a write, Ctrl-C still ends it (the terminal resumes its output)."""
    if _write_syscall_number() is None or not Path("/proc/self/syscall").exists():
        pytest.skip("needs Linux's /proc/PID/syscall on x86_64 or aarch64")
    sid = "3e50f30a-7114-42a3-8985-318786384707"
    project = tmp_path / "config" / "projects" / "-work"
    project.mkdir(parents=True)
    answer = "\n".join(f"line {i} of a long answer" for i in range(20000))
    entries = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid, "cwd": "/work",
         "timestamp": "2026-03-01T10:00:00.000Z", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid, "cwd": "/work",
         "timestamp": "2026-03-01T10:00:01.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}},
    ]  # fmt: skip
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    launch(
        tmux, tmp_path, ["show", sid[:8], "--plain"],
        env={"CLAUDE_CONFIG_DIR": str(tmp_path / "config")},
        prefix="stty ixon; printf READY; read x; ",
    )  # fmt: skip
    tmux.wait_for(lambda s: "READY" in s, "the shell")
    tmux("send-keys", "-t", "run", "C-s")  # the terminal stops taking output
    tmux("send-keys", "-t", "run", "Enter")
    shell = tmux("display-message", "-p", "-t", "run", "#{pane_pid}").strip()
    deadline = time.monotonic() + 60  # a bound on the poll, not a synchronisation
    while True:  # until `show` is blocked writing to the terminal (fd 1)
        children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        call = Path(f"/proc/{children[0]}/syscall").read_text().split() if children else []
        if call[:2] == [str(_write_syscall_number()), "0x1"]:
            break
        assert time.monotonic() < deadline, f"show never blocked in a write: {call}"
    interrupted(tmux)
