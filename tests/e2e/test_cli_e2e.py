"""``ccwire run``, ``demo`` and ``doctor`` end to end: the real CLI, offline."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

from ccwire._app.main import CliIO, main

from .conftest import CLI_PATH, old_cli

TIMEOUT = 60

CALC = textwrap.dedent(
    """
    import anyio
    from ccwire import create_sdk_mcp_server, tool

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args):
        return {"content": [{"type": "text", "text": f"{args['a'] + args['b']:g}"}]}

    @tool("subtract", "Subtract b from a", {"a": float, "b": float})
    async def subtract(args):
        return {"content": [{"type": "text", "text": f"{args['a'] - args['b']:g}"}]}

    @tool("wait", "Wait a long time", {})
    async def wait(args):
        await anyio.sleep(60)
        return {"content": [{"type": "text", "text": "waited"}]}

    @tool("div", "Divide a by b", {"a": float, "b": float})
    async def div(args):
        return {"content": [{"type": "text", "text": f"{args['a'] / args['b']:g}"}]}

    server = create_sdk_mcp_server("calc", tools=[add, subtract, wait, div])
    """
)


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding ``calctools.py``, made the current directory."""
    (tmp_path / "calctools.py").write_text(CALC)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "calctools", raising=False)
    return tmp_path


def script(path: Path, steps: list[Any]) -> str:
    path.write_text(json.dumps(steps))
    return str(path)


def call(name: str, **args: float) -> dict[str, Any]:
    return {"tool_use": {"name": f"mcp__calc__{name}", "input": args}}


def run(argv: list[str], *, stdin: io.StringIO | None = None) -> tuple[int, str, str]:
    cli_io = CliIO(stdin or io.StringIO(), io.StringIO(), io.StringIO(), dict(os.environ))
    code = main(["run", "--cli-path", str(CLI_PATH), *argv], io=cli_io)
    assert isinstance(cli_io.stdout, io.StringIO) and isinstance(cli_io.stderr, io.StringIO)
    return code, cli_io.stdout.getvalue(), cli_io.stderr.getvalue()


def test_run_scripted_json_events(workdir: Path) -> None:
    steps = script(workdir / "s.json", [call("add", a=2, b=3), {"text": "It is {tool_results}."}])
    code, out, err = run(
        ["add 2 and 3", "--scripted", steps, "--tools", "calctools:server",
         "--allow", "mcp__calc__*", "--json", "--cwd", str(workdir)]
    )  # fmt: skip
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and events[0]["offline"] is True
    for expected in ("init", "tool_call", "tool_running", "tool_result", "text"):
        assert expected in kinds
    assert "permission" not in kinds  # --allow settled it in the CLI: nobody was asked
    assert kinds.index("tool_call") < kinds.index("tool_running") < kinds.index("tool_result")
    by_kind = {e["event"]: e for e in events}
    assert by_kind["tool_result"]["text"] == "5" and by_kind["tool_result"]["is_error"] is False
    assert by_kind["text"]["text"] == "It is 5."
    result = by_kind["result"]
    assert result["subtype"] == "success" and result["num_turns"] == 2
    assert result["total_cost_usd"] > 0
    if not old_cli():  # CLIs before 2.1.330 send no session_state_changed frames
        assert {"event": "state", "state": "running"} in events


def test_run_asks_at_the_terminal(workdir: Path) -> None:
    steps = script(
        workdir / "s.json",
        [call("add", a=1, b=1), call("add", a=2, b=2), call("subtract", a=4, b=1),
         {"text": "Results: {tool_results}"}],
    )  # fmt: skip
    code, out, err = run(
        ["do sums", "--scripted", steps, "--tools", "calctools:server", "--cwd", str(workdir)],
        stdin=FakeTTY("a\nn\n"),
    )
    assert code == 0, err
    assert err.count("Allow mcp__calc__") == 2  # the second add is covered by "always"
    assert 'Allow mcp__calc__add {"a": 1, "b": 1}?' in err
    assert "[y] yes, once   [a] yes, always for this session   [n] no" in err
    assert "permission   allowed mcp__calc__add (always)" in out
    assert "(remembered)" not in out  # the CLI kept the session rule: it did not ask again
    assert "permission   denied mcp__calc__subtract (denied)" in out
    assert "tool result  mcp__calc__add" in out and ": 4" in out
    assert "Results: The user denied permission to use mcp__calc__subtract." in out


def test_run_without_a_terminal_denies_with_a_hint(workdir: Path) -> None:
    """...and a misspelt --allow is one `ccwire: warning:` line, not Python's form."""
    steps = script(workdir / "s.json", [call("add", a=1, b=1), "{tool_results}"])
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as outside pytest: shown, not raised
        code, out, err = run(
            ["add", "--scripted", steps, "--tools", "calctools:server", "--json",
             "--allow", "mcp__calc__ad", "--cwd", str(workdir)]
        )  # fmt: skip
    assert code == 0
    assert err == (
        "ccwire: warning: allowed_tools names 'mcp__calc__ad', which matches no tool of the "
        "in-process servers: did you mean 'mcp__calc__add'?\n"
    )
    events = [json.loads(line) for line in out.splitlines()]
    denial = next(e for e in events if e["event"] == "permission")
    assert denial["decision"] == "deny" and denial["reason"] == "policy"
    result = next(e for e in events if e["event"] == "tool_result")
    assert result["is_error"] is True and "pass --allow mcp__calc__add" in result["text"]


def test_error_result_exits_1(workdir: Path) -> None:
    steps = script(
        workdir / "s.json", [{"error": {"status": 500, "message": "boom", "retry": False}}]
    )
    code, out, _ = run(["hi", "--scripted", steps, "--plain", "--cwd", str(workdir)])
    assert code == 1
    assert out.splitlines()[-1].startswith("error result - 1 turn - ")
    assert "$" not in out.splitlines()[-1]  # offline: no dollar cost
    assert "API Error: 500 boom" in out


def test_an_offline_run_is_kept_listed_and_shown_by_its_short_id(
    workdir: Path, tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    environ = {**os.environ, "CCWIRE_OFFLINE_DIR": str(kept)}
    out_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), environ)
    code = main(
        ["run", "--cli-path", str(CLI_PATH), "remember me", "--offline", "--plain",
         "--cwd", str(workdir)],
        io=out_io,
    )  # fmt: skip
    assert isinstance(out_io.stdout, io.StringIO)
    shown = out_io.stdout.getvalue()
    assert code == 0, shown
    short = re.search(r"\[session (\w{8}) - ", shown)
    assert short is not None, shown
    listing = io.StringIO()
    listed = CliIO(io.StringIO(), listing, io.StringIO(), environ)
    assert main(["sessions", "--offline", "--project", str(workdir), "--json"], io=listed) == 0
    (row,) = json.loads(listing.getvalue())
    assert row["session_id"].startswith(short.group(1)) and row["cost_usd"] is None
    assert row["first_prompt"] == "remember me"
    page = io.StringIO()
    assert (
        main(["show", short.group(1)], io=CliIO(io.StringIO(), page, io.StringIO(), environ)) == 0
    )
    assert f"Session {row['session_id']}: remember me" in page.getvalue()
    assert "(offline echo) remember me" in page.getvalue()


def test_verbose_prints_the_protocol_trace(workdir: Path) -> None:
    """The trace, and the traceback of a tool that raised (the model only got its text)."""
    steps = script(workdir / "s.json", [call("div", a=1, b=0), {"text": "(offline echo) {prompt}"}])
    code, out, err = run(
        ["hello", "--scripted", steps, "--tools", "calctools:server", "--allow", "div",
         "--verbose", "--cwd", str(workdir)]
    )  # fmt: skip
    assert code == 0, err
    assert "(offline echo) hello" in out
    assert "tool error   mcp__calc__div" in out
    told = err[err.index("ccwire: warning: tool 'div' raised ZeroDivisionError: ") :]
    assert "ccwire: debug: the traceback of tool 'div':\n  Traceback (most recent" in told
    assert "calctools.py" in told and "  ZeroDivisionError: division by zero\n" in told
    if not old_cli():  # CLIs before 2.1.330 send no session_state_changed frames
        assert "[state] running" in out
    trace = err.splitlines()
    assert trace[0].startswith("[trace] ") and "--input-format stream-json" in trace[0]
    assert any(line.startswith('-> {"type":"control_request"') for line in trace)
    assert any(
        line.startswith('<- {"type":"result"') or '"type":"result"' in line for line in trace
    )
    assert trace[-1] == "[trace] CLI exited with status 0"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["CCWIRE_CLI_PATH"] = str(CLI_PATH)
    return env


def test_ctrl_c_exits_130(workdir: Path) -> None:
    steps = script(workdir / "s.json", [call("wait"), "never"])
    argv = [sys.executable, "-m", "ccwire", "run", "wait", "--scripted", steps,
            "--tools", "calctools:server", "--allow", "mcp__calc__wait", "--json"]  # fmt: skip
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=workdir, env=_env()
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line)["event"] == "tool_running":
                break
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    events = [json.loads(line) for line in rest.splitlines()]
    assert {"event": "interrupted"} in events
    assert events[-1]["type"] == "error" and events[-1]["exit_code"] == 130


def test_demo_runs_offline() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", "demo", "--plain"],
        capture_output=True, text=True, timeout=TIMEOUT, env=_env(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "> Calculate 100 + 50, then subtract 25 from the result"
    assert "  tool result  mcp__calc__add" in done.stdout and "150 - 25 = 125" in done.stdout
    assert re.fullmatch(r"done: success - 3 turns - [\d.]+ (ms|s)", lines[-1]), lines[-1]


def test_doctor_probes_the_protocol(tmp_path: Path) -> None:
    stdout = io.StringIO()
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    cli_io = CliIO(io.StringIO(), stdout, io.StringIO(), env)
    assert main(["doctor", "--cli-path", str(CLI_PATH)], io=cli_io) == 0
    text = stdout.getvalue()
    assert "ok    protocol       initialize in" in text
    assert "offline turn with an in-process tool" in text
    if old_cli():
        assert (
            "info  capabilities   live tool sets no, session states no, prompt lifecycle no, "
            "interrupt receipts no" in text
        )
    else:
        assert "live tool sets yes" in text and "session states yes" in text
    assert "warn  credentials" in text
