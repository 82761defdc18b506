"""The ``ccwire`` command line without a CLI process: parsing, errors, events, rendering,
permission prompts and the loaders of ``--tools`` and ``--scripted``."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    CcwireError,
    ClaudeAgentOptions,
    CLINotFoundError,
    OptionsError,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    ResultMessage,
    SdkMcpServer,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ccwire._app.doctor import AuthMissingError
from ccwire._app.events import RunEvent, RunTracker, ToolPhase
from ccwire._app.loaders import UsageError, load_script, load_server, parse_step
from ccwire._app.main import EXIT_CODES, CliIO, ExitCode, classify, main
from ccwire._app.permissions import PermissionPrompter, parse_answer
from ccwire._app.render import JsonRenderer, PlainRenderer, RichRenderer, format_duration
from ccwire._conversation.argv import build_argv
from ccwire._protocol.control import ControlEvent
from ccwire.testing import ErrorReply, ModelRequest, Reply, text
from tests.fixtures.cli_io import err, make_io, out

# --------------------------------------------------------------------------- parsing, errors


def test_help_lists_commands_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"], io=make_io()) == 0
    text = capsys.readouterr().out
    for command in ("run", "demo", "doctor", "serve"):
        assert command in text
    for code, meaning in EXIT_CODES.items():
        assert f"{int(code):<4} {meaning}" in text
    assert main(["run", "--help"], io=make_io()) == 0
    run_help = capsys.readouterr().out
    assert "--tools MODULE:SERVER" in run_help and "130" in run_help
    for command in ("run", "demo", "batch", "doctor", "sessions", "show", "compat"):
        assert main([command, "--help"], io=make_io()) == 0
        paragraphs = capsys.readouterr().out.split("\n\n")
        # a sentence that says what the command does, between usage and options
        assert paragraphs[1][:1].isupper() and paragraphs[1].rstrip().endswith("."), command


_HELP_DIR = Path(__file__).parent.parent / "data" / "cli_help"
_HELP_PROBE = """
import contextlib, io, json, sys
from ccwire._app.main import CliIO, main
outputs = {}
for name, argv in json.loads(sys.argv[1]).items():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv, io=CliIO(io.StringIO(), out, io.StringIO(), {}))
    outputs[name] = (code, out.getvalue())
print(json.dumps({"outputs": outputs, "modules": sorted(sys.modules)}))
"""


def test_help_needs_only_the_declarations_and_is_unchanged() -> None:
    """``ccwire --help`` and ``ccwire COMMAND --help`` come from the commands'
    declarations alone: no command's module (the client, the MCP server, rich...) is
    imported (it made ``--help`` take half a second), and every text is the one the
    commands printed before (tests/data/cli_help, written at 80 columns)."""
    argvs = {  # ccwire.txt: `ccwire --help`; batch_report.txt: `ccwire batch report --help`
        path.stem: [*path.stem.removeprefix("ccwire").split("_"), "--help"][path.stem == "ccwire" :]
        for path in sorted(_HELP_DIR.glob("*.txt"))
    }
    assert len(argvs) == 10  # ccwire and its nine commands (batch report included)
    env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
    done = subprocess.run(
        [sys.executable, "-c", _HELP_PROBE, json.dumps(argvs)],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)
    loaded = {m for m in report["modules"] if m.startswith("ccwire.")}
    light = {"ccwire._app", "ccwire._app.arguments", "ccwire._app.commands", "ccwire._app.errors",
             "ccwire._app.io", "ccwire._app.main", "ccwire._app.reference_names",
             "ccwire._batch", "ccwire._batch.errors", "ccwire._core", "ccwire._core.errors",
             "ccwire._core.groups", "ccwire._core.lazy", "ccwire._core.redact", "ccwire._transport",
             "ccwire._transport.discovery", "ccwire._version"}  # fmt: skip
    assert loaded <= light, sorted(loaded - light)
    for name, (code, written) in report["outputs"].items():
        assert code == 0, name
        if sys.version_info < (3, 13):  # argparse's layout changed in 3.13
            assert written == (_HELP_DIR / f"{name}.txt").read_text(), name


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], io=make_io()) == 2
    assert main(["run"], io=make_io()) == 2
    assert main(["run", "hi", "--offline", "--scripted", "x.json"], io=make_io()) == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["run", "--ofline", "hi"], "unrecognized arguments: --ofline (did you mean --offline?)"),
        (["run", "hi", "--modle=x"], "unrecognized arguments: --modle=x (did you mean --model?)"),
        (["run", "what", "is", "2+2", "--offline"],
         'unrecognized arguments: is 2+2 (a prompt of several words goes in quotes: ccwire run'),
        (["compat", "status", "--jsn"], "unrecognized arguments: --jsn (did you mean --json?)"),
    ],
)  # fmt: skip
def test_an_unknown_argument_is_told_with_the_commands_usage_and_the_nearest_option(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in an option was told with the top-level usage (`ccwire [-h] [--version]
    COMMAND ...`) and no suggestion; an unquoted prompt of several words likewise."""
    assert main(argv, io=make_io()) == 2
    lines = capsys.readouterr().err.splitlines()
    command = " ".join(a for a in argv[:2] if a in ("run", "compat", "status"))
    assert lines[0].startswith(f"usage: ccwire {command} ")
    assert lines[-1].startswith(f"ccwire {command}: error: {said}")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-turns", "0"], "--max-turns must be at least 1"),
        (["--cwd", "{tmp}/none"], "none: does not exist"),
        (["--cwd", "{tmp}/a-file"], "a-file: is not a directory"),
        (
            ["--tools", "tests.fixtures.mcp_serve_server:server"] * 2,
            "--tools: two servers are called 'fixture'",
        ),
        (
            ["--spawn", "tests.batch.spawners:nothing_here"],
            "'tests.batch.spawners' has no attribute 'nothing_here'",
        ),
    ],
)
def test_bad_run_options_are_one_line_before_the_cli_starts(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    (tmp_path / "a-file").write_text("")
    cli_io = make_io()
    argv = ["run", "hi", "--offline", *(x.format(tmp=tmp_path) for x in extra)]
    assert main(argv, io=cli_io) == 2
    lines = err(cli_io).splitlines()
    assert lines[0].startswith("ccwire: error: ") and message in lines[0], lines
    assert lines[1:] == ["ccwire: hint: see `ccwire run --help`"]


def test_an_offline_folder_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")  # a file where the folder would go
    cli_io = make_io(env={"CCWIRE_OFFLINE_DIR": str(blocker / "sessions")})
    assert main(["run", "hi", "--offline", "--plain"], io=cli_io) == 2
    assert "cannot create the offline sessions folder" in err(cli_io)
    assert "set CCWIRE_OFFLINE_DIR to another one" in err(cli_io)


def test_bad_tools_spec_is_one_line_and_a_hint() -> None:
    cli_io = make_io()
    assert main(["run", "hi", "--offline", "--tools", "no_colon_here"], io=cli_io) == 2
    lines = err(cli_io).splitlines()
    assert lines == [
        "ccwire: error: --tools expects package.module:attribute, got 'no_colon_here'",
        "ccwire: hint: see `ccwire run --help`",
    ]


def test_after_ctrl_c_a_second_one_cannot_interrupt_the_exit() -> None:
    """People press Ctrl-C twice: once the first one ends the command, a second one must
    not land in the report (or the interpreter's exit) as a KeyboardInterrupt traceback."""
    import os
    import signal

    from ccwire._app.main import _guarded

    def interrupted() -> int:
        raise KeyboardInterrupt

    before = signal.getsignal(signal.SIGINT)
    before_term = signal.getsignal(signal.SIGTERM)
    try:
        cli_io = make_io()
        cli_io.handle_signals = True
        assert _guarded(interrupted, cli_io, verbose=False, as_json=False, name="serve") == 130
        assert err(cli_io) == "ccwire: error: interrupted (Ctrl-C)\n"
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C: nothing happens
    finally:
        # restored both: an ignored SIGTERM is inherited by every process tests start
        signal.signal(signal.SIGINT, before)
        signal.signal(signal.SIGTERM, before_term)
    fake = make_io()  # a CliIO of a test, not of the process: its signals are left alone
    assert _guarded(interrupted, fake, verbose=False, as_json=False, name="serve") == 130
    assert signal.getsignal(signal.SIGINT) is before


def test_missing_cli_exits_3(tmp_path: Path) -> None:
    cli_io = make_io()
    code = main(["run", "hi", "--cli-path", str(tmp_path / "nope")], io=cli_io)
    assert code == 3 == int(ExitCode.CLI_NOT_FOUND)
    first, hint = err(cli_io).splitlines()
    assert first.startswith("ccwire: error: Claude Code not found at: ")
    assert first.endswith("(given by cli_path: it does not exist)")
    assert (
        "npm install --prefix ~/.ccwire/cli @anthropic-ai/claude-code@" in hint
        and "ccwire doctor" in hint
    )


@pytest.mark.skipif(sys.platform == "darwin", reason="a keychain login cannot be ruled out")
def test_missing_credentials_exit_4_with_json_error_event(tmp_path: Path) -> None:
    cli_io = make_io(env={"HOME": str(tmp_path)})
    code = main(["run", "hi", "--json", "--cli-path", sys.executable], io=cli_io)
    assert code == 4 == int(ExitCode.AUTH_MISSING)
    assert "no ANTHROPIC_API_KEY" in err(cli_io) and "--offline" in err(cli_io)
    event = json.loads(out(cli_io))
    assert event["event"] == "error" and event["exit_code"] == 4


def test_empty_prompt_from_stdin_is_a_usage_error() -> None:
    cli_io = make_io(stdin="   \n")
    assert main(["run", "-", "--offline"], io=cli_io) == 2
    assert "the prompt is empty" in err(cli_io)


@pytest.mark.parametrize(
    ("args", "stdin", "named"),
    [
        (["run", "hi\udcff"], None, "the prompt is"),  # argv bytes: surrogateescape
        (["run", "-"], "surrogateescape", "the prompt read from stdin is"),
        (["run", "-"], "strict", "the prompt read from stdin is"),
        (["run", "hi", "--system-prompt", "be\udcfe"], None, "--system-prompt is"),
        (["run", "hi", "--model", "m\udcff"], None, "--model is"),
        (["run", "hi", "--allow", "\udcffx"], None, "--allow is"),
        (["batch", "t.jsonl", "-o", "r.jsonl", "--allow", "\udcffx"], None, "--allow is"),
        (["batch", "t.jsonl", "-o", "r.jsonl", "--model", "m\udcff"], None, "--model is"),
    ],
)
def test_text_that_is_not_utf8_is_a_usage_error(
    args: list[str], stdin: str | None, named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text('{"id": "a", "prompt": "hi"}\n')
    cli_io = make_io(env={"CCWIRE_CLI_PATH": sys.executable})
    if stdin is not None:  # the bytes b"hi \xff" on stdin, decoded as Python would
        cli_io.stdin = io.TextIOWrapper(io.BytesIO(b"hi \xff"), "utf-8", errors=stdin)
    assert main([*args, "--offline"], io=cli_io) == 2
    lines = err(cli_io).splitlines()
    assert lines[0].startswith(f"ccwire: error: {named} not valid UTF-8 text (byte 0x"), lines
    assert len(lines) == 2 and lines[1].startswith("ccwire: hint: "), lines


def test_classify_maps_errors_to_exit_codes() -> None:
    assert classify(UsageError("x"))[0] == ExitCode.USAGE
    assert classify(OptionsError("x"), "run") == (ExitCode.USAGE, "see `ccwire run --help`")
    assert classify(CLINotFoundError("x"))[0] == ExitCode.CLI_NOT_FOUND
    assert classify(AuthMissingError("x"))[0] == ExitCode.AUTH_MISSING
    code, hint = classify(ProcessError("died", exit_code=1, stderr="boom"))
    assert code == ExitCode.ERROR and "--verbose" in hint
    assert classify(CcwireError("other"))[0] == ExitCode.ERROR


def test_serve_usage_errors_are_one_line_reports() -> None:
    cli_io = make_io()
    assert main(["serve"], io=cli_io) == ExitCode.USAGE
    assert err(cli_io).startswith("ccwire: error: serve expects one PACKAGE.MODULE:ATTRIBUTE")
    cli_io = make_io()
    assert main(["serve", "--http", "x:y", "pkg.mod:server"], io=cli_io) == ExitCode.USAGE
    assert err(cli_io).startswith("ccwire: error: serve --http expects [HOST:]PORT")


def test_serve_http_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "ccwire._mcp.http", raising=False)
    for name in ("starlette", "starlette.applications", "uvicorn"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    cli_io = make_io()
    code = main(["serve", "--http", "0", "tests.fixtures.mcp_serve_server:server"], io=cli_io)
    assert code == ExitCode.USAGE
    assert err(cli_io).startswith("ccwire: error: serve --http needs the HTTP extra (starlette)")
    assert "pip install 'ccwire[http]'" in err(cli_io)


# --------------------------------------------------------------------------- the tracker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def tracked() -> tuple[RunTracker, list[RunEvent], Clock]:
    events: list[RunEvent] = []
    clock = Clock()
    return RunTracker(events.append, clock=clock), events, clock


def _state(state: str) -> SystemMessage:
    data = {"type": "system", "subtype": "session_state_changed", "state": state}
    return SystemMessage("session_state_changed", data)


def _tool_call(tool_use_id: str, server: str = "calc", name: str = "add") -> ControlEvent:
    request = {
        "subtype": "mcp_message",
        "server_name": server,
        "message": {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "_meta": {"claudecode/toolUseId": tool_use_id}},
        },
    }
    return ControlEvent("r1", "mcp_message", request)


def test_tracker_follows_a_tool_round_trip(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    tracker, events, clock = tracked
    tracker.on_message(_state("running"))
    tracker.on_message(_state("running"))  # repeated states are reported once
    init = {"subtype": "init", "session_id": "s1", "model": "m", "tools": ["a", "b"]}
    tracker.on_message(SystemMessage("init", init))
    use = ToolUseBlock("tu1", "mcp__calc__add", {"a": 1, "b": 2})
    tracker.on_message(AssistantMessage([ThinkingBlock("hmm"), use], "m", message_id="msg1"))
    assert [t.name for t in tracker.active_tools()] == ["mcp__calc__add"]
    perm = ControlEvent("p1", "can_use_tool", {"tool_use_id": "tu1"})
    tracker.on_control(perm)
    assert tracker.tools["tu1"].phase is ToolPhase.PERMISSION
    tracker.permission_decided("tu1", "mcp__calc__add", "allow", "once")
    tracker.on_control(_tool_call("tu1"))
    assert tracker.tools["tu1"].phase.value == ToolPhase.RUNNING.value
    tracker.on_control(
        ControlEvent("r1", "mcp_message", _tool_call("tu1").request, "ok", {"mcp_response": {}})
    )
    clock.now += 0.25
    result = ToolResultBlock("tu1", [{"type": "text", "text": "1 + 2 = 3"}])
    tracker.on_message(UserMessage([result]))
    tracker.on_message(AssistantMessage([TextBlock("It is 3.")], "m", message_id="msg2"))
    tracker.on_message(AssistantMessage([TextBlock("")], "m", message_id="msg2"))
    final = ResultMessage("success", 300, 200, False, 2, "s1", total_cost_usd=0.5, result="3")
    tracker.on_message(final)

    kinds = [e.kind for e in events]
    assert kinds == [
        "state", "init", "thinking", "tool_call", "permission", "tool_running",
        "tool_result", "text", "result",
    ]  # fmt: skip
    by_kind = {e.kind: e.data for e in events}
    assert by_kind["init"]["session_id"] == "s1" and by_kind["init"]["tools"] == ["a", "b"]
    assert by_kind["tool_running"] == {"id": "tu1", "name": "mcp__calc__add", "server": "calc"}
    assert by_kind["tool_result"] == {
        "id": "tu1", "name": "mcp__calc__add", "is_error": False, "text": "1 + 2 = 3",
        "duration_ms": 250,
    }  # fmt: skip
    assert by_kind["result"]["total_cost_usd"] == 0.5 and by_kind["result"]["num_turns"] == 2
    assert tracker.turns == 2 and tracker.tools_done == 1 and tracker.active_tools() == []
    assert tracker.cost_usd == 0.5 and tracker.result is final and tracker.state == "running"


def test_tracker_state_without_session_state_frames(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    # CLI 2.1.197 sends no session_state_changed: running from system/init, idle after
    # the result, for every turn
    tracker, events, _ = tracked
    assert tracker.state == "connecting"
    for turn in ("s1", "s1"):
        tracker.on_message(SystemMessage("init", {"subtype": "init", "session_id": turn}))
        assert tracker.state == "running"
        tracker.on_message(AssistantMessage([TextBlock("hi")], "m", message_id=f"m-{turn}"))
        tracker.on_message(ResultMessage("success", 10, 5, False, 1, turn, result="hi"))
        assert tracker.state == "idle"
    kinds = [(e.kind, e.data.get("state")) for e in events]
    assert kinds == [
        ("state", "running"), ("init", None), ("text", None), ("result", None),
        ("state", "idle"),
        ("state", "running"), ("init", None), ("text", None), ("result", None),
        ("state", "idle"),
    ]  # fmt: skip


def test_a_cli_reporting_states_is_never_second_guessed(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    tracker, events, _ = tracked
    tracker.on_message(_state("requires_action"))
    tracker.on_message(SystemMessage("init", {"subtype": "init", "session_id": "s"}))
    assert tracker.state == "requires_action"
    tracker.on_message(ResultMessage("success", 10, 5, False, 1, "s", result="x"))
    assert tracker.state == "requires_action"  # until the CLI says idle
    tracker.on_message(_state("idle"))
    states = [e.data["state"] for e in events if e.kind == "state"]
    assert states == ["requires_action", "idle"]


def test_tracker_ignores_unrelated_control_events(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    tracker, events, _ = tracked
    tracker.on_control(ControlEvent("h", "hook_callback", {"callback_id": "hook_0"}))
    listing = {"subtype": "mcp_message", "message": {"method": "tools/list"}}
    tracker.on_control(ControlEvent("l", "mcp_message", listing))
    assert events == []
    tracker.on_control(_tool_call("unknown-id", name="mystery"))  # no matching tool_use
    assert events[0].data["name"] == "mystery"


# --------------------------------------------------------------------------- renderers


def _sample_events() -> list[RunEvent]:
    return [
        RunEvent("start", {"prompt": "add 1 and 2", "offline": True}),
        RunEvent("state", {"state": "running"}),
        RunEvent("init", {"session_id": "abcdef123", "model": "m", "tools": ["x"],
                          "mcp_servers": [{"name": "calc", "status": "connected"}]}),
        RunEvent("retry", {"attempt": 1, "max_retries": 10, "delay_ms": 600, "status": 529,
                           "error": "overloaded"}),
        RunEvent("retry", {"attempt": 2, "max_retries": 10, "delay_ms": 1200, "status": None,
                           "error": "unknown"}),
        RunEvent("tool_call", {"id": "t", "name": "mcp__calc__add", "input": {"a": 1}}),
        RunEvent("permission", {"name": "mcp__calc__add", "decision": "deny",
                                "reason": "policy"}),
        RunEvent("tool_result", {"id": "t", "name": "mcp__calc__add", "is_error": True,
                                 "text": "nope", "duration_ms": 1500}),
        RunEvent("text", {"text": "Sorry."}),
        RunEvent("result", {"subtype": "success", "is_error": False, "num_turns": 1,
                            "total_cost_usd": 0.0006, "duration_ms": 120,
                            "structured_output": {"n": 3}}),
    ]  # fmt: skip


def test_plain_renderer_lines() -> None:
    buffer = io.StringIO()
    renderer = PlainRenderer(buffer)
    for event in _sample_events():
        renderer.handle(event)
    assert buffer.getvalue().splitlines() == [
        "> add 1 and 2",
        "  [offline: scripted model; set ANTHROPIC_API_KEY for the real one]",
        "  [session abcdef12 - model m - 1 tools - servers: calc (connected)]",
        "  api retry    529 overloaded - retry 1 of 10 in 600 ms",
        "  api retry    no response - retry 2 of 10 in 1.2 s",
        '  tool call    mcp__calc__add {"a": 1}',
        "  permission   denied mcp__calc__add (policy)",
        "  tool error   mcp__calc__add (1.5 s): nope",
        "Sorry.",
        'structured output: {"n": 3}',
        "done: success - 1 turn - 120 ms",  # offline: the scripted model costs nothing
    ]


def test_a_run_with_the_real_model_shows_its_cost() -> None:
    buffer = io.StringIO()
    renderer = PlainRenderer(buffer)
    for event in _sample_events():
        if event.kind == "start":
            event = RunEvent("start", {**event.data, "offline": False})
        renderer.handle(event)
    assert buffer.getvalue().splitlines()[-1] == "done: success - 1 turn - $0.0006 - 120 ms"


def test_json_renderer_writes_ndjson() -> None:
    buffer = io.StringIO()
    renderer = JsonRenderer(buffer)
    for event in _sample_events():
        renderer.handle(event)
    rows = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [r["event"] for r in rows] == [e.kind for e in _sample_events()]
    assert rows[5] == {"event": "tool_call", "id": "t", "name": "mcp__calc__add", "input": {"a": 1}}
    assert rows[3] == {
        "event": "retry", "attempt": 1, "max_retries": 10, "delay_ms": 600, "status": 529,
        "error": "overloaded",
    }  # fmt: skip


def test_rich_renderer_prints_lines_and_a_status(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    from rich.console import Console

    tracker, _, clock = tracked
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=False, color_system=None)
    renderer = RichRenderer(buffer, tracker, console=console)
    for event in _sample_events():
        renderer.handle(event)
    assert "tool error   mcp__calc__add (1.5 s): nope" in buffer.getvalue()
    tracker.on_message(_state("requires_action"))
    tracker.on_message(AssistantMessage([ToolUseBlock("t9", "slow", {})], "m", message_id="x"))
    clock.now += 2.0
    console.print(renderer._status())
    status = buffer.getvalue().splitlines()[-2:]
    assert "requires_action - turn 1 - tools 0 done - 2.0 s" in status[0]
    assert "$" not in status[0]  # an offline run (the sample's start event)
    assert "slow - requested 2.0 s" in status[1]


def test_after_the_terminal_narrows_the_status_rows_it_rewrapped_are_erased(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    """A terminal that gets narrower re-wraps the status rows already on screen: the
    next redraw must erase every row they now take, or copies of them stay behind."""
    from rich.console import Console

    tracker, _, _ = tracked
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    renderer = RichRenderer(buffer, tracker, console=console)
    with renderer:
        renderer.handle(RunEvent("start", {"prompt": "hi", "offline": True}))
        tracker.on_message(_state("running"))
        long_name = "mcp__tools__" + "x" * 200  # its row is cut to the terminal's width
        tracker.on_message(AssistantMessage([ToolUseBlock("t1", long_name, {})], "m"))
        assert renderer._live is not None
        renderer._live.refresh()  # drawn at 120 columns: a short row and a full one
        console.width = 40  # each row is re-wrapped by the terminal: 1 + 3 rows
        before = buffer.getvalue().count("\x1b[2K")  # erase-line, one per row erased
        renderer._live.refresh()
        assert buffer.getvalue().count("\x1b[2K") - before == 4
        before = buffer.getvalue().count("\x1b[2K")
        renderer._live.refresh()  # drawn at 40 now: two rows, each one row high
        assert buffer.getvalue().count("\x1b[2K") - before == 2
        with renderer.suspended():  # the user answers a question: no status meanwhile
            assert not renderer._live.is_started
        assert renderer._live.is_started


def test_the_status_shows_the_latest_retry_until_the_model_answers(
    tracked: tuple[RunTracker, list[RunEvent], Clock],
) -> None:
    from rich.console import Console

    tracker, events, _ = tracked
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, force_terminal=False, color_system=None)
    renderer = RichRenderer(buffer, tracker, console=console)
    renderer.handle(RunEvent("start", {"prompt": "hi", "offline": False}))
    tracker.on_message(_state("running"))
    retry = {"subtype": "api_retry", "attempt": 3, "max_retries": 10, "retry_delay_ms": 2400,
             "error_status": None, "error": "unknown", "session_id": "s"}  # fmt: skip
    tracker.on_message(SystemMessage("api_retry", retry))
    assert events[-1] == RunEvent(
        "retry",
        {"attempt": 3, "max_retries": 10, "delay_ms": 2400, "status": None, "error": "unknown"},
    )
    console.print(renderer._status())
    assert "running, model unreachable: no response - retry 3 of 10 in 2.4 s - turn 0" in (
        buffer.getvalue()
    )
    assert "- $-" in buffer.getvalue()  # the real model: its cost so far
    tracker.on_message(AssistantMessage([TextBlock("hi")], "m", message_id="m1"))
    assert tracker.retry is None
    console.print(renderer._status())
    last = buffer.getvalue().splitlines()[-1]
    assert "running - turn 1 - tools 0 done" in last and "unreachable" not in last


def test_format_duration() -> None:
    assert format_duration(0.0123) == "12 ms"
    assert format_duration(3.25) == "3.2 s"
    assert format_duration(125) == "2 min 5 s"
    assert format_duration(None) == "?"


def test_renderer_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    from ccwire._app.arguments import build_parser as _parser
    from ccwire._app.run import choose_renderer

    class TTYOut(io.StringIO):
        def isatty(self) -> bool:
            return True

    def chosen(*argv: str, stdout: io.StringIO) -> str:
        args = _parser().parse_args(["run", "hi", *argv])
        cli_io = CliIO(io.StringIO(), stdout, io.StringIO(), {})
        return type(choose_renderer(args, cli_io, RunTracker(lambda e: None))).__name__

    assert chosen(stdout=TTYOut()) == "RichRenderer"
    assert chosen(stdout=io.StringIO()) == "PlainRenderer"  # not a terminal
    assert chosen("--plain", stdout=TTYOut()) == "PlainRenderer"
    assert chosen("--verbose", stdout=TTYOut()) == "PlainRenderer"  # the trace needs plain lines
    assert chosen("--json", stdout=TTYOut()) == "JsonRenderer"
    monkeypatch.setitem(sys.modules, "rich", None)  # rich not installed
    assert chosen(stdout=TTYOut()) == "PlainRenderer"


# --------------------------------------------------------------------------- permissions


def _ctx(tool_use_id: str = "tu1") -> ToolPermissionContext:
    return ToolPermissionContext(tool_use_id=tool_use_id)


class Answers:
    """A fake terminal: hands out scripted answers and records the questions."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(self, question: str) -> str:
        self.questions.append(question)
        answer = self.answers.pop(0)
        if answer is None:
            raise EOFError
        return answer


def test_parse_answer() -> None:
    assert [parse_answer(a) for a in ("y", " YES ", "1", "a", "always", "n", "3", "?", "")] == [
        "once", "once", "once", "always", "always", "deny", "deny", None, None,
    ]  # fmt: skip


@pytest.mark.anyio
async def test_prompter_once_always_deny() -> None:
    events: list[RunEvent] = []
    ask = Answers("y", "a", "n")
    prompter = PermissionPrompter(RunTracker(events.append), ask=ask)
    first = await prompter("mcp__calc__add", {"a": 1}, _ctx())
    assert first == PermissionResultAllow()
    assert 'Allow mcp__calc__add {"a": 1}?' in ask.questions[0]
    assert "[y] yes, once   [a] yes, always for this session   [n] no" in ask.questions[0]
    always = await prompter("mcp__calc__sub", {}, _ctx())
    assert isinstance(always, PermissionResultAllow) and always.updated_permissions
    rule = always.updated_permissions[0]
    assert rule.destination == "session" and rule.rules is not None
    assert rule.rules[0].tool_name == "mcp__calc__sub"
    again = await prompter("mcp__calc__sub", {}, _ctx())  # remembered: not asked again
    assert again == PermissionResultAllow() and len(ask.questions) == 2
    denied = await prompter("Bash", {"command": "rm -rf /"}, _ctx())
    assert isinstance(denied, PermissionResultDeny)
    assert denied.message == "The user denied permission to use Bash."
    reasons = [(e.data["name"], e.data["decision"], e.data["reason"]) for e in events]
    assert reasons == [
        ("mcp__calc__add", "allow", "once"),
        ("mcp__calc__sub", "allow", "always"),
        ("mcp__calc__sub", "allow", "remembered"),
        ("Bash", "deny", "denied"),
    ]


@pytest.mark.anyio
async def test_prompter_reasks_then_gives_up_and_handles_eof() -> None:
    events: list[RunEvent] = []
    ask = Answers("maybe", "", "y")
    prompter = PermissionPrompter(RunTracker(events.append), ask=ask)
    assert await prompter("T", {}, _ctx()) == PermissionResultAllow()
    assert ask.questions[1] == "  please answer y, a or n > "
    stubborn = PermissionPrompter(RunTracker(events.append), ask=Answers("?", "?", "?"))
    assert isinstance(await stubborn("T", {}, _ctx()), PermissionResultDeny)
    closed = PermissionPrompter(RunTracker(events.append), ask=Answers(None))
    assert isinstance(await closed("T", {}, _ctx()), PermissionResultDeny)
    assert [e.data["reason"] for e in events] == ["once", "no answer", "no answer"]


@pytest.mark.anyio
async def test_prompter_without_terminal_applies_the_policy() -> None:
    events: list[RunEvent] = []
    prompter = PermissionPrompter(RunTracker(events.append), allowed=["mcp__calc__*"])
    assert await prompter("mcp__calc__add", {}, _ctx()) == PermissionResultAllow()
    denied = await prompter("Bash", {}, _ctx())
    assert isinstance(denied, PermissionResultDeny) and "--allow Bash" in denied.message
    assert [e.data["reason"] for e in events] == ["allowed", "policy"]


def test_interactive_only_on_a_terminal_without_policy(tmp_path: Path) -> None:
    from ccwire._app.arguments import build_parser as _parser
    from ccwire._app.run import spec_from_args

    def interactive(argv: list[str], tty: bool) -> bool:
        args = _parser().parse_args(["run", "hi", "--offline", *argv])
        return spec_from_args(args, make_io(tty=tty)).interactive

    assert interactive([], tty=True)
    assert not interactive([], tty=False)
    assert not interactive(["--allow", "X"], tty=True)
    assert not interactive(["--permission-mode", "acceptEdits"], tty=True)
    assert not interactive(["--json"], tty=True)


def test_allow_names_a_tool_of_tools_by_its_own_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--allow add`` means the in-process tool's full name (the CLI knows it by that
    alone, so a bare name would match nothing); other names and patterns pass as given."""
    from ccwire._app.arguments import build_parser as _parser
    from ccwire._app.run import spec_from_args

    monkeypatch.setattr(sys, "path", list(sys.path))  # load_server() prepends to it
    argv = ["run", "hi", "--offline", "--tools", "tests.fixtures.mcp_serve_server:server"]
    allows = ["--allow", "add", "--allow", "Bash", "--allow", "mcp__fixture__*"]
    spec = spec_from_args(_parser().parse_args([*argv, *allows]), make_io())
    assert spec.allowed == ["mcp__fixture__add", "Bash", "mcp__fixture__*"]
    options = ClaudeAgentOptions(mcp_servers=spec.servers, allowed_tools=spec.allowed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "matches nothing" warning left
        build_argv(options, cli_path="claude", spill_dir=None)


def test_server_tools_reads_an_in_process_server_or_its_config() -> None:
    """One helper reads the tools of what ``--tools`` loaded, for ``--allow``'s full names
    and for the hint of a tool given where its server goes; other servers have none."""
    from ccwire import create_sdk_mcp_server, tool
    from ccwire._app.loaders import server_tools

    @tool("add", "Add", {})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {}

    config = create_sdk_mcp_server("calc", tools=[add])
    assert list(server_tools(config)) == ["add"]
    assert list(server_tools(config["instance"])) == ["add"]
    assert server_tools({"type": "stdio", "command": "calc"}) == {}
    assert server_tools(add) == {}


# --------------------------------------------------------------------------- loaders


@pytest.fixture
def tools_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_server() prepends to it
    name = f"cli_tools_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from ccwire import SdkMcpServer, create_sdk_mcp_server, tool

            @tool("ping", "Ping", {})
            async def ping(args):
                return {"content": [{"type": "text", "text": "pong"}]}

            config = create_sdk_mcp_server("pinger", tools=[ping])
            bare = SdkMcpServer("bare", tools=[ping])

            def factory():
                return create_sdk_mcp_server("made", tools=[ping])

            def broken():
                raise RuntimeError("no")

            class Holder:
                inner = SdkMcpServer("nested")

            not_a_server = 42
            """
        )
    )
    yield name
    sys.modules.pop(name, None)


def test_load_server_accepts_configs_servers_and_factories(
    tools_module: str, tmp_path: Path
) -> None:
    where = str(tmp_path)
    config = load_server(f"{tools_module}:config", search_path=where)
    assert config["name"] == "pinger" and isinstance(config["instance"], SdkMcpServer)
    assert list(config["instance"].tools) == ["ping"]
    assert load_server(f"{tools_module}:bare", search_path=where)["name"] == "bare"
    assert load_server(f"{tools_module}:factory", search_path=where)["name"] == "made"
    assert load_server(f"{tools_module}:Holder.inner", search_path=where)["name"] == "nested"


@pytest.mark.parametrize(
    ("attr", "message"),
    [
        ("missing", "has no attribute 'missing'"),
        ("broken", "calling broken() failed: RuntimeError: no"),
        ("not_a_server", "expected an MCP server"),
    ],
)
def test_load_server_errors(tools_module: str, tmp_path: Path, attr: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        load_server(f"{tools_module}:{attr}", search_path=str(tmp_path))


def test_load_server_given_a_file_or_no_attribute_names_the_spec_to_write(
    tools_module: str, tmp_path: Path
) -> None:
    """``--tools calc_tools`` and ``--tools calc_tools.py:server``, the first tries:
    "expects package.module:attribute" alone, and "no calc_tools/py.py" for the file."""
    where = str(tmp_path)
    for spec in (tools_module, f"{tools_module}.py"):
        with pytest.raises(UsageError) as caught:
            load_server(spec, search_path=where)
        assert str(caught.value) == (
            f"--tools expects package.module:attribute, got {spec!r}: did you mean "
            f"'{tools_module}:config'?"
        )
    for path in (f"{tools_module}.py", f"./{tools_module}.py"):
        with pytest.raises(UsageError) as caught:
            load_server(f"{path}:config", search_path=where)
        assert str(caught.value) == (
            f"--tools {path}:config: name the module, not its file: --tools {tools_module}:config"
        )


def test_load_server_unknown_module_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module not found (the commonest slip: ccwire run from another folder) names the
    file and the folder searched; a module that fails on an import of its own says so."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_server() prepends to it
    with pytest.raises(UsageError) as caught:
        load_server("no_such_module_xyz:server", search_path=str(tmp_path))
    assert str(caught.value) == (
        f"--tools no_such_module_xyz:server: cannot import 'no_such_module_xyz': no "
        f"no_such_module_xyz.py in {tmp_path} (searched first) nor on sys.path; run from "
        "the folder that holds it, or add that folder to PYTHONPATH"
    )
    (tmp_path / "needs_dep_xyz.py").write_text("import missing_dependency_xyz\n")
    with pytest.raises(UsageError) as caught:
        load_server("needs_dep_xyz:server", search_path=str(tmp_path))
    assert str(caught.value) == (
        "--tools needs_dep_xyz:server: cannot import 'needs_dep_xyz' "
        "(No module named 'missing_dependency_xyz')"
    )


def test_load_server_missing_attribute_names_the_module_servers(
    tools_module: str, tmp_path: Path
) -> None:
    with pytest.raises(UsageError) as caught:
        load_server(f"{tools_module}:srv", search_path=str(tmp_path))
    assert str(caught.value).endswith("has no attribute 'srv'; its MCP servers: 'config', 'bare'")


def _request(tool_result: str, prompt: str = "the question") -> ModelRequest:
    body = {
        "messages": [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x"}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": tool_result}],
            },
        ]
    }
    return ModelRequest("POST", "/v1/messages", {}, body)


def test_parse_step_forms() -> None:
    assert parse_step("hi") == text("hi")
    assert parse_step({"text": "hi"}) == text("hi")
    call = parse_step({"tool_use": {"name": "mcp__a__b", "input": {"x": 1}}})
    assert not callable(call) and not isinstance(call, (Reply, ErrorReply))
    assert call.to_api()["name"] == "mcp__a__b" and call.to_api()["input"] == {"x": 1}
    many = parse_step({"reply": [{"thinking": "hm"}, {"tool_use": {"name": "a"}}, "and"]})
    assert isinstance(many, Reply) and len(many.content) == 3 and many.stop_reason == "tool_use"
    failure = parse_step({"error": {"status": 529, "message": "Overloaded", "retry": False}})
    assert isinstance(failure, ErrorReply) and failure.status == 529 and failure.retry is False
    template = parse_step({"text": "Got {tool_results} for {prompt}"})
    assert callable(template)
    assert template(_request("42")) == text("Got 42 for the question")


@pytest.mark.parametrize(
    "raw",
    [
        {"nothing": 1},
        {"reply": []},
        {"error": {"message": "no status"}},
        {"error": {"status": 200}},
        {"tool_use": {"name": "x", "input": [1]}},
    ],
)
def test_parse_step_rejects(raw: Any) -> None:
    with pytest.raises(UsageError):
        parse_step(raw)


def test_load_script(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"model": "claude-x", "steps": ["a", {"text": "b"}]}))
    steps, model = load_script(path)
    assert steps == [text("a"), text("b")] and model == "claude-x"
    path.write_text("[not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_script(path)
    path.write_text("[" * 100_000)  # was a RecursionError: exit 1, "a bug in ccwire"
    with pytest.raises(UsageError, match="not valid JSON: nested too deeply"):
        load_script(path)
    path.write_text("[]")
    with pytest.raises(UsageError, match="non-empty list"):
        load_script(path)
    with pytest.raises(UsageError, match="cannot read"):
        load_script(tmp_path / "missing.json")


# --------------------------------------------------------------------------- documentation


def test_exit_code_table_in_docs_matches_exit_codes() -> None:
    # docs/cli.md, "Errors and exit codes": one row per code, the meaning as in
    # EXIT_CODES (backticks aside), nothing more and nothing less
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = docs.split("### Errors and exit codes", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*(.*?)\s*\|\s*$", section, flags=re.MULTILINE)
    documented = [(int(code), meaning.replace("`", "")) for code, meaning in rows]
    assert documented == [(int(code), meaning) for code, meaning in EXIT_CODES.items()]


def test_every_option_of_every_command_is_in_the_docs() -> None:
    # a newcomer reads docs/cli.md, or an error message's hint, and finds the option there
    import argparse

    from ccwire._app.arguments import build_parser

    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")

    def options(parser: argparse.ArgumentParser, command: str) -> Iterator[tuple[str, str]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from options(sub, f"{command} {name}".strip())
            for flag in action.option_strings:
                if flag.startswith("--") and flag not in ("--help", "--version"):
                    if action.help == argparse.SUPPRESS:  # hidden: for tests
                        continue
                    yield command, flag

    found = options(build_parser(), "")
    missing = [f"ccwire {c} {flag}" for c, flag in found if not re.search(f"{flag}\\b", docs)]
    assert not missing, missing
