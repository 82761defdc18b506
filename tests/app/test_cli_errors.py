"""Every failure of `ccwire run` is one line, an exit code, and with `--json` a final
`{"type": "error"}` event; never a traceback (unless `--verbose`).

Each case runs `python -m ccwire` as a real process, against a fake CLI written to
`tmp_path`, the fault CLI of `tests/faults`, or the real CLI with the scripted model.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ccwire._app.io import ExitCode

ROOT = Path(__file__).resolve().parents[2]
FAULT_CLI = ROOT / "tests" / "faults" / "fault_cli.py"
REAL_CLI = os.environ.get("CCWIRE_CLI_PATH")
needs_cli = pytest.mark.skipif(
    not (REAL_CLI and os.access(REAL_CLI, os.X_OK)),
    reason="set CCWIRE_CLI_PATH to the Claude Code CLI",
)

# A tool that never returns: the run is stopped while it is in flight.
TOOLS = """
import anyio
from ccwire import create_sdk_mcp_server, tool

@tool("block", "Never returns", {})
async def block(args):
    await anyio.sleep_forever()

server = create_sdk_mcp_server("calc", tools=[block])
"""

BLOCKING = ("--tools", "blocking_tools:server", "--allow", "mcp__calc__block")

# A fake CLI that answers `initialize`, calls a tool of server `calc`, and exits at once.
EXIT_MID_TOOL = """
import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    frame = json.loads(line)
    if frame.get("type") == "control_request" and frame["request"]["subtype"] == "initialize":
        send({"type": "control_response", "response": {"subtype": "success",
              "request_id": frame["request_id"], "response": {"commands": []}}})
    elif frame.get("type") == "user":
        send({"type": "control_request", "request_id": "t1", "request": {
            "subtype": "mcp_message", "server_name": "calc", "message": {
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "block", "arguments": {}}}}})
        sys.stderr.write("fatal: gone mid-tool-call\\n"); sys.stderr.flush()
        sys.exit(5)
"""


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE_", "CCWIRE_"))
    }
    env.update(HOME=str(home), PYTHONPATH=str(tmp_path), **extra)
    return env


def run_ccwire(args: Sequence[str], tmp_path: Path, **env: str) -> Outcome:
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", *args],
        cwd=tmp_path,
        env=_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def python_cli(tmp_path: Path, source: str, name: str = "fake_claude") -> Path:
    code = tmp_path / f"{name}.py"
    code.write_text(textwrap.dedent(source))
    return script(tmp_path, name, f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {code} "$@"\n')


def assert_reported(outcome: Outcome, code: int, *words: str, stderr_tail: str = "") -> None:
    """The exit code, `ccwire: error:` with `words`, no traceback, the final JSON event."""
    assert outcome.code == code, outcome
    assert "Traceback" not in outcome.stderr + outcome.stdout, outcome.stderr
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("ccwire: error: ")]
    assert len(errors) == 1, outcome.stderr
    for word in words:
        assert word in errors[0], (word, outcome.stderr)
    last = outcome.events()[-1]
    assert last["type"] == "error" and last["exit_code"] == code, last
    assert last["message"] == errors[0].removeprefix("ccwire: error: ")
    if stderr_tail:
        assert stderr_tail in (last["stderr"] or ""), last
        assert f"  | {stderr_tail}" in outcome.stderr, outcome.stderr


# --------------------------------------------------------------------------- the CLI itself


def test_cli_missing(tmp_path: Path) -> None:
    outcome = run_ccwire(["run", "hi", "--json", "--cli-path", str(tmp_path / "nope")], tmp_path)
    assert_reported(outcome, ExitCode.CLI_NOT_FOUND, "does not exist", str(tmp_path / "nope"))
    hint = "ccwire: hint: install it with `npm install --prefix ~/.ccwire/cli @anthropic-ai/"
    assert hint + "claude-code@" in outcome.stderr


def test_cli_not_found_anywhere_names_the_places(tmp_path: Path) -> None:
    outcome = run_ccwire(["run", "hi", "--offline", "--json"], tmp_path, PATH=str(tmp_path))
    assert_reported(outcome, ExitCode.CLI_NOT_FOUND, "Claude Code not found", "CCWIRE_CLI_PATH")


def test_cli_not_executable(tmp_path: Path) -> None:
    plain = tmp_path / "claude"
    plain.write_text("not a program")
    outcome = run_ccwire(["run", "hi", "--offline", "--json", "--cli-path", str(plain)], tmp_path)
    assert_reported(outcome, ExitCode.CLI_NOT_FOUND, "not an executable file")


def test_cli_crashing_at_start(tmp_path: Path) -> None:
    crash = script(tmp_path, "claude", "#!/bin/sh\necho 'boom: cannot start' >&2\nexit 3\n")
    outcome = run_ccwire(["run", "hi", "--offline", "--json", "--cli-path", str(crash)], tmp_path)
    assert_reported(outcome, ExitCode.ERROR, "exit code: 3", stderr_tail="boom: cannot start")
    plain = run_ccwire(["run", "hi", "--offline", "--plain", "--cli-path", str(crash)], tmp_path)
    assert plain.code == ExitCode.ERROR and "Traceback" not in plain.stderr
    assert plain.stderr.startswith("ccwire: error: ") and "  | boom: cannot start" in plain.stderr


def test_verbose_shows_the_traceback(tmp_path: Path) -> None:
    crash = script(tmp_path, "claude", "#!/bin/sh\necho 'boom' >&2\nexit 3\n")
    outcome = run_ccwire(["run", "hi", "--offline", "-v", "--cli-path", str(crash)], tmp_path)
    assert outcome.code == ExitCode.ERROR
    assert "Traceback" in outcome.stderr and "ccwire: error: " in outcome.stderr


@pytest.mark.parametrize("scenario", ["kill_mid_turn", "exit_mid_turn"])
def test_cli_killed_or_exiting_mid_run(tmp_path: Path, scenario: str) -> None:
    cli = script(
        tmp_path,
        "claude",
        f"#!/bin/sh\nFAULT_SCENARIO={scenario} "
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FAULT_CLI))} "$@"\n',
    )
    outcome = run_ccwire(["run", "hi", "--offline", "--json", "--cli-path", str(cli)], tmp_path)
    code = "exit code: -9" if scenario.startswith("kill") else "exit code: 2"
    assert_reported(outcome, ExitCode.ERROR, code, stderr_tail="fatal: mid-turn")


def test_cli_exiting_mid_tool_call(tmp_path: Path) -> None:
    (tmp_path / "blocking_tools.py").write_text(TOOLS)
    cli = python_cli(tmp_path, EXIT_MID_TOOL)
    outcome = run_ccwire(
        ["run", "hi", "--offline", "--json", "--cli-path", str(cli), *BLOCKING],
        tmp_path,
    )
    assert_reported(
        outcome, ExitCode.ERROR, "exit code: 5", stderr_tail="fatal: gone mid-tool-call"
    )


# --------------------------------------------------------------------------- the command line


def test_bad_cwd(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    outcome = run_ccwire(["run", "hi", "--offline", "--json", "--cwd", str(missing)], tmp_path)
    assert_reported(outcome, ExitCode.USAGE, "--cwd", "does not exist")
    assert "not found" not in outcome.stderr


def test_unreadable_scripted_file(tmp_path: Path) -> None:
    outcome = run_ccwire(["run", "hi", "--json", "--scripted", str(tmp_path)], tmp_path)
    assert_reported(outcome, ExitCode.USAGE, "--scripted: cannot read")
    bad = tmp_path / "bad.json"
    bad.write_text("[not json")
    outcome = run_ccwire(["run", "hi", "--json", "--scripted", str(bad)], tmp_path)
    assert_reported(outcome, ExitCode.USAGE, "not valid JSON")


def test_tools_naming_a_tool_says_to_name_its_server(tmp_path: Path) -> None:
    # it said only "expected an MCP server (...), got SdkMcpTool"
    (tmp_path / "blocking_tools.py").write_text(TOOLS)
    outcome = run_ccwire(
        ["run", "hi", "--offline", "--json", "--tools", "blocking_tools:block"], tmp_path
    )
    assert_reported(
        outcome,
        ExitCode.USAGE,
        "got SdkMcpTool: 'block' is a tool; name the MCP server that serves it: "
        "--tools blocking_tools:server",
    )


def test_tools_import_error(tmp_path: Path) -> None:
    (tmp_path / "broken_tools.py").write_text("import no_such_module_here\n")
    outcome = run_ccwire(
        ["run", "hi", "--offline", "--json", "--tools", "broken_tools:server"], tmp_path
    )
    assert_reported(outcome, ExitCode.USAGE, "--tools broken_tools:server", "no_such_module_here")


@pytest.mark.skipif(sys.platform == "darwin", reason="a keychain login cannot be ruled out")
def test_no_key(tmp_path: Path) -> None:
    outcome = run_ccwire(["run", "hi", "--json", "--cli-path", sys.executable], tmp_path)
    assert_reported(outcome, ExitCode.AUTH_MISSING, "no ANTHROPIC_API_KEY")
    assert "ccwire: hint: " in outcome.stderr and "--offline" in outcome.stderr


@needs_cli
@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGINT, ExitCode.INTERRUPTED, "interrupted (Ctrl-C)"),
        # was: killed at once by the default action, its CLI left running, nothing said
        (signal.SIGTERM, ExitCode.TERMINATED, "terminated (SIGTERM)"),
    ],
)
def test_a_signal_mid_tool_call(tmp_path: Path, signum: int, code: int, said: str) -> None:
    """SIGINT or SIGTERM while a tool runs: exit 130 or 143, one line, the final error
    event, and no CLI left running."""
    import psutil

    assert REAL_CLI is not None
    (tmp_path / "blocking_tools.py").write_text(TOOLS)
    steps = [{"tool_use": {"name": "mcp__calc__block", "input": {}}}, "never reached"]
    (tmp_path / "script.json").write_text(json.dumps(steps))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ccwire",
            "run",
            "hi",
            "--json",
            "--cli-path",
            REAL_CLI,
            "--scripted",
            "script.json",
            *BLOCKING,
            "--cwd",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:  # bounded by the tool call's start event (or the CLI's end)
            seen.append(line)
            if '"tool_start"' in line or '"tool_call"' in line or "mcp__calc__block" in line:
                break
        assert any("mcp__calc__block" in line for line in seen), seen
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children  # the CLI
        proc.send_signal(signum)
        rest, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    outcome = Outcome(proc.returncode, "".join(seen) + rest, stderr)
    assert_reported(outcome, code, said)
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, alive


def _catches_sigterm(pid: int) -> bool:
    """The process has a handler for SIGTERM (Linux: SigCgt in /proc/PID/status)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(ln for ln in status.splitlines() if ln.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_outside_the_event_loop_is_reported(tmp_path: Path) -> None:
    """SIGTERM while a command waits outside its event loop (here `run -` reading its
    prompt): exit 143 and one line, as Ctrl-C (was: killed silently)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccwire", "run", "-", "--offline", "--json"],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30  # the handler is set before the arguments are read
        while not _catches_sigterm(proc.pid):  # polled: the process says nothing before
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert_reported(Outcome(proc.returncode, stdout, stderr), ExitCode.TERMINATED, "SIGTERM")


@needs_cli
def test_batch_output_closed_stops_the_batch_quietly(tmp_path: Path) -> None:
    """`ccwire batch --json ... | head -1`: the batch stops (its tasks would block
    forever) and exits 141 with nothing on stderr (was: a BrokenPipeError traceback
    per event, and the batch ran on)."""
    assert REAL_CLI is not None
    (tmp_path / "blocking_tools.py").write_text(TOOLS)
    steps = [{"tool_use": {"name": "mcp__calc__block", "input": {}}}, "never reached"]
    (tmp_path / "script.json").write_text(json.dumps(steps))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"t{i}", "prompt": "hi"}) + "\n" for i in range(3)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccwire", "batch", str(tasks), "-o", str(tmp_path / "out.jsonl"),
         "--json", "--cli-path", REAL_CLI, "--scripted", "script.json",
         "--tools", "blocking_tools:server"],
        cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert '"start"' in proc.stdout.readline()
        proc.stdout.close()  # the reader has gone
        stderr = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == ExitCode.OUTPUT_CLOSED, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
