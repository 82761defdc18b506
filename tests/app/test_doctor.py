"""``ccwire doctor``: each check, with fake executables and environments (no real CLI)."""

from __future__ import annotations

import io
import json
import os
import select
import stat
from pathlib import Path

import pytest

import ccwire._app.doctor
from ccwire._app.doctor import (
    Check,
    CheckStatus,
    capability_hint,
    check_auth,
    check_cli_version,
    check_packages,
    check_python,
    detect_auth,
    doctor_exit_code,
    locate_cli,
    print_checks,
)
from ccwire._app.errors import AUTH_HINT, auth_hint
from ccwire._app.main import CliIO, main


def fake_cli(tmp_path: Path, version_output: str, code: int = 0) -> str:
    path = tmp_path / "claude"
    path.write_text(f"#!/bin/sh\necho '{version_output}'\nexit {code}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


# --------------------------------------------------------------------------- credentials


def test_detect_auth_sources(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path)}
    key = detect_auth({**home, "ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnop-WXYZ"})
    assert key.found is True and "sk-ant-...WXYZ" in key.detail and "abcdefgh" not in key.detail
    assert detect_auth({**home, "ANTHROPIC_AUTH_TOKEN": "t"}).found is True
    assert detect_auth({**home, "CLAUDE_CODE_OAUTH_TOKEN": "t"}).found is True
    bedrock = detect_auth({**home, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert bedrock.found is True and "Bedrock" in bedrock.detail
    assert detect_auth({**home, "CLAUDE_CODE_USE_VERTEX": "0"}, platform="linux").found is False


def test_detect_auth_login_and_settings(tmp_path: Path) -> None:
    config = tmp_path / ".claude"
    config.mkdir()
    env = {"HOME": str(tmp_path)}
    assert detect_auth(env, platform="linux").found is False
    (config / "settings.json").write_text(json.dumps({"apiKeyHelper": "pass show key"}))
    assert detect_auth(env, platform="linux").found is True
    (config / "settings.json").write_text("{broken")
    assert detect_auth(env, platform="linux").found is False
    (config / ".credentials.json").write_text("{}")
    login = detect_auth(env, platform="linux")
    assert login.found is True and ".credentials.json" in login.detail
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert detect_auth({**env, "CLAUDE_CONFIG_DIR": str(other)}, platform="linux").found is False


def test_a_gateway_may_need_no_key(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "ANTHROPIC_BASE_URL": "http://gateway.internal"}
    assert detect_auth(env, platform="linux").found is None


def test_macos_cannot_rule_out_a_keychain_login(tmp_path: Path) -> None:
    status = detect_auth({"HOME": str(tmp_path)}, platform="darwin")
    assert status.found is None and "keychain" in status.detail
    assert check_auth({"HOME": str(tmp_path)}, platform="darwin").status is CheckStatus.INFO


def test_check_auth_missing_is_a_warning_with_a_fix(tmp_path: Path) -> None:
    check = check_auth({"HOME": str(tmp_path)}, platform="linux")
    assert check.status is CheckStatus.WARN and check.fix == AUTH_HINT
    assert "offline mode works" in check.detail
    assert "`claude /login`" not in AUTH_HINT  # no `claude` on PATH after the README's install
    cli = str(tmp_path / ".ccwire/cli/node_modules/.bin/claude")
    found = check_auth({"HOME": str(tmp_path)}, platform="linux", cli=cli)
    assert found.fix == auth_hint(cli) and f"run `{cli}` and type /login" in found.fix
    ok = check_auth({"ANTHROPIC_API_KEY": "sk-ant-xxxxxxxxxxxxxxxxxxxx"}, platform="linux")
    assert ok.status is CheckStatus.OK


# --------------------------------------------------------------------------- python, packages


def test_check_python() -> None:
    assert check_python().status is CheckStatus.OK
    old = check_python((3, 9, 18))
    assert old.status is CheckStatus.FAIL and old.fix == "use Python 3.10 or newer"


def test_check_packages_names_each_extra() -> None:
    checks = check_packages()
    assert [c.name for c in checks] == ["extra cli", "extra mcp", "extra pydantic"]
    for check in checks:  # the dev environment has all of them
        assert check.status is CheckStatus.OK, check


# --------------------------------------------------------------------------- the CLI


def test_locate_cli_reports_origin_or_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = fake_cli(tmp_path, "2.1.330 (Claude Code)")
    found, path = locate_cli(None, {"CCWIRE_CLI_PATH": cli})
    assert path == cli and found.status is CheckStatus.OK and "$CCWIRE_CLI_PATH" in found.detail
    explicit, _ = locate_cli(cli, {})
    assert "--cli-path" in explicit.detail
    monkeypatch.chdir(tmp_path)  # no project-local install on the way
    (tmp_path / ".ccwire" / "cli" / "node_modules" / ".bin").mkdir(parents=True)
    own = fake_cli(tmp_path / ".ccwire" / "cli" / "node_modules" / ".bin", "2.1.330")
    found, path = locate_cli(None, {"HOME": str(tmp_path), "PATH": str(tmp_path / "empty")})
    assert path == own and "found via ccwire's CLI folder, ~/.ccwire/cli" in found.detail
    missing, none = locate_cli(str(tmp_path / "nope"), {})
    assert none is None and missing.status is CheckStatus.FAIL
    assert (
        missing.fix is not None
        and "npm install --prefix ~/.ccwire/cli @anthropic-ai/claude-code@2.1.330" in missing.fix
    )


@pytest.mark.parametrize(
    ("output", "code", "status", "words"),
    [
        ("2.1.330 (Claude Code)", 0, CheckStatus.OK, "2.1.330 (the pinned version; tested:"),
        ("2.1.250 (Claude Code)", 0, CheckStatus.WARN, "2.1.250 is not the pinned 2.1.330"),
        ("2.0.5 (Claude Code)", 0, CheckStatus.WARN, "older than tested"),
        ("2.2.0 (Claude Code)", 0, CheckStatus.WARN, "newer than tested"),
        ("no version here", 0, CheckStatus.FAIL, "exited 0"),
        ("2.1.330", 3, CheckStatus.FAIL, "exited 3"),
    ],
)
def test_check_cli_version(
    tmp_path: Path, output: str, code: int, status: CheckStatus, words: str
) -> None:
    check = check_cli_version(fake_cli(tmp_path, output, code))
    assert check.status is status and words in check.detail


def test_check_cli_version_of_a_cli_printing_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """``ccwire doctor`` crashed on them (UnicodeDecodeError) instead of printing the fix."""
    path = tmp_path / "claude"
    path.write_bytes(b"#!/bin/sh\nprintf '\\377\\376 garbage'\n")
    path.chmod(0o755)
    check = check_cli_version(str(path))
    assert check.status is CheckStatus.FAIL and "garbage" in check.detail
    assert check.fix is not None and "reinstall" in check.fix


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="Linux's pidfd_open tells the exit")
def test_check_cli_version_of_a_cli_that_leaves_a_process_holding_its_output(
    tmp_path: Path,
) -> None:
    """The check waited for the end of the pipes, which that process held: the CLI's
    answer was reported as a timeout (30 s later), and the process was left running."""
    path = tmp_path / "claude"
    path.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {tmp_path / 'pid'}\necho 2.1.330\n")
    path.chmod(0o755)
    check = check_cli_version(str(path), timeout=10)
    assert check.status is CheckStatus.OK, check.detail
    try:  # and it was killed: its pidfd is readable once it has exited
        fd = os.pidfd_open(int((tmp_path / "pid").read_text()))
    except ProcessLookupError:
        return
    try:
        assert select.select([fd], [], [], 10)[0] == [fd]
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- report


def test_print_checks_and_exit_codes() -> None:
    checks = [
        Check("python", CheckStatus.OK, "Python 3.11"),
        Check("credentials", CheckStatus.WARN, "no key", "export ANTHROPIC_API_KEY=..."),
    ]
    buffer = io.StringIO()
    print_checks(checks, buffer)
    assert buffer.getvalue().splitlines() == [
        "  ok    python         Python 3.11",
        "  warn  credentials    no key",
        "                       fix: export ANTHROPIC_API_KEY=...",
        "0 problem(s), 1 warning(s)",
    ]
    assert doctor_exit_code(checks) == 0
    assert doctor_exit_code([*checks, Check("protocol", CheckStatus.FAIL, "x")]) == 1
    assert doctor_exit_code([Check("cli", CheckStatus.FAIL, "x")]) == 3
    as_json = io.StringIO()
    print_checks(checks, as_json, as_json=True)
    rows = json.loads(as_json.getvalue())["checks"]
    assert rows[1] == {
        "name": "credentials", "status": "warn", "detail": "no key",
        "fix": "export ANTHROPIC_API_KEY=...",
    }  # fmt: skip


ALL_FEATURES = {
    "live tool sets": True,
    "session states": True,
    "prompt lifecycle": True,
    "interrupt receipts": True,
}


def test_capability_hint_of_a_current_cli_is_none() -> None:
    assert capability_hint(ALL_FEATURES) is None


def test_capability_hint_claims_no_fallback_for_live_tool_sets() -> None:
    # CLI 2.1.197 has none of them; a new tool is never offered, whatever ccwire does
    hint = capability_hint(dict.fromkeys(ALL_FEATURES, False))
    assert hint is not None and "falls back where a feature is missing" not in hint
    assert hint == (
        "upgrade the CLI to get them all. Without them, live tool sets: tools added or "
        "removed mid-session never reach the model (no fallback: "
        "SdkMcpServer.notify_tools_changed() raises UnsupportedFeatureError and background "
        "changes log a warning); register every tool before connecting; session states: "
        "turns are tracked by their results instead; prompt lifecycle: prompts are settled "
        "by their results instead; interrupt receipts: interrupt() cannot tell which "
        "prompts were still queued"
    )


def test_capability_hint_names_only_what_is_missing() -> None:
    hint = capability_hint({**ALL_FEATURES, "session states": False, "new thing": False})
    assert hint == (
        "upgrade the CLI to get them all. Without them, session states: turns are tracked "
        "by their results instead; new thing: not available"
    )
    buffer = io.StringIO()
    print_checks([Check("capabilities", CheckStatus.INFO, "session states no", hint)], buffer)
    assert buffer.getvalue().splitlines()[1].strip() == f"fix: {hint}"


def test_doctor_command_quick(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, "2.1.330 (Claude Code)")
    stdout = io.StringIO()
    cli_io = CliIO(io.StringIO(), stdout, io.StringIO(), {"HOME": str(tmp_path)})
    assert main(["doctor", "--quick", "--cli-path", cli], io=cli_io) == 0
    text = stdout.getvalue()
    assert text.startswith("ccwire doctor\n")
    assert f"ok    cli            {cli} (found via --cli-path)" in text
    assert "ok    cli version    2.1.330" in text


def test_doctor_shows_each_check_before_the_slow_probe_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The protocol probe takes seconds (the CLI starts and runs a turn): the report was
    written only once everything had run, so `ccwire doctor` showed nothing meanwhile."""
    cli = fake_cli(tmp_path, "2.1.330 (Claude Code)")
    stdout = io.StringIO()
    shown_before: list[str] = []

    async def probe(path: str) -> list[Check]:
        shown_before.append(stdout.getvalue())
        return [Check("protocol", CheckStatus.OK, "probed")]

    monkeypatch.setattr(ccwire._app.doctor, "probe_protocol", probe)
    cli_io = CliIO(io.StringIO(), stdout, io.StringIO(), {"HOME": str(tmp_path)})
    main(["doctor", "--cli-path", cli], io=cli_io)
    [before] = shown_before
    assert before.startswith("ccwire doctor\n  ok    python ")
    assert "ok    cli version    2.1.330" in before and "credentials" not in before
    assert "ok    protocol       probed\n" in stdout.getvalue()
    assert stdout.getvalue().endswith(" warning(s)\n")


_NODE_CRASH = """\
file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1
import{createRequire as A}from'node:module';
                                          ^

SyntaxError: Unexpected token '{'
    at internalCompileFunction (node:internal/vm:76:18)
    at wrapSafe (node:internal/modules/cjs/loader:1283:20)
    at Module._compile (node:internal/modules/cjs/loader:1328:27)
    at Module._extensions..js (node:internal/modules/cjs/loader:1422:10)
    at Module.load (node:internal/modules/cjs/loader:1203:32)
    at Module._load (node:internal/modules/cjs/loader:1019:12)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:128:12)
    at node:internal/main/run_main_module:28:49

Node.js v14.21.3
"""


def test_doctor_shows_the_useful_part_of_a_multi_line_failure(tmp_path: Path) -> None:
    """A CLI whose ``--version`` crashed showed its first 200 characters (the source
    line, not the error nor the Node.js version), and a probe that failed showed the
    first line of the error (not the CLI's stderr under it): now the first line and
    the last ones, bounded."""
    (tmp_path / "crash.txt").write_text(_NODE_CRASH)
    cli = tmp_path / "claude"
    cli.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then cat {tmp_path / "crash.txt"} >&2; exit 1; fi\n'
        "printf 'TypeError: boom\\n    at main (cli.js:1:1)\\nNode.js v22.1.0\\n' >&2\n"
        "exit 1\n"
    )
    cli.chmod(0o755)
    stdout = io.StringIO()
    cli_io = CliIO(io.StringIO(), stdout, io.StringIO(), {"HOME": str(tmp_path)})
    assert main(["doctor", "--cli-path", str(cli)], io=cli_io) == 1
    text = stdout.getvalue()
    version = text[text.index("cli version") : text.index("fix: reinstall")].rstrip().splitlines()
    assert "`claude --version` exited 1:" in version[0]
    assert [line.strip() for line in version[1:]] == [
        "file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1",
        "import{createRequire as A}from'node:module';",
        "SyntaxError: Unexpected token '{'",
        "Node.js v14.21.3",
        "(9 more lines not shown)",  # the indented ones: the trace's frames
    ]
    assert all(line.startswith(" " * 25) for line in version[1:])  # in the detail column
    probe = text[text.index("protocol") : text.index("fix: run `ccwire run")]
    assert "offline round trip failed: " in probe
    assert "TypeError: boom" in probe and "Node.js v22.1.0" in probe


def test_doctor_command_without_cli_exits_3(tmp_path: Path) -> None:
    stdout = io.StringIO()
    env = {"HOME": str(tmp_path), "PATH": str(tmp_path)}
    cli_io = CliIO(io.StringIO(), stdout, io.StringIO(), env)
    assert main(["doctor", "--json", "--cli-path", os.fspath(tmp_path / "nope")], io=cli_io) == 3
    rows = {r["name"]: r for r in json.loads(stdout.getvalue())["checks"]}
    assert rows["cli"]["status"] == "fail" and "cli version" not in rows
