"""``ccwire doctor``: is everything in place to drive the Claude Code CLI from Python?

Checks, each with a fix when it fails: the Python and package versions, the optional
extras, where the ``claude`` executable was found and its version, a real protocol
round trip run fully offline (``initialize``, then one turn in which a scripted model
calls an in-process tool), the CLI's capabilities, and credentials for the real model
(or offline mode). Exit code 0 when nothing failed, 3 when the CLI is missing, 1 for
any other failure; warnings do not fail.
"""

from __future__ import annotations

import argparse
import enum
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import IO, Any

from .._conversation.client import ClaudeSDKClient
from .._conversation.options import ClaudeAgentOptions
from .._core.errors import CcwireError, CLINotFoundError
from .._mcp.sdk import create_sdk_mcp_server
from .._mcp.tools import tool
from .._transport.discovery import (
    CLI_PREFIX,
    ENV_VAR,
    INSTALL_COMMAND,
    PINNED_CLI_VERSION,
    cli_version_output,
    find_cli,
)
from .._wire.messages import Message, ResultMessage, SystemMessage
from ..testing import ScriptedModel, text, tool_use
from .errors import AuthMissingError, auth_hint
from .io import CliIO

__all__ = [
    "TESTED_CLI_VERSIONS",
    "AuthMissingError",
    "AuthStatus",
    "Check",
    "CheckStatus",
    "check_auth",
    "check_cli_version",
    "check_packages",
    "detect_auth",
    "doctor_command",
    "doctor_exit_code",
    "excerpt",
    "locate_cli",
    "print_checks",
    "probe_protocol",
]

TESTED_CLI_VERSIONS = ("2.1.197", PINNED_CLI_VERSION)
"""The oldest and newest Claude Code versions ccwire's test suite runs against (the newest
is the pinned version, `PINNED_CLI_VERSION`)."""

_TRACE_HINT = "run `ccwire run --offline --verbose hi` to see the protocol trace"

_EXCERPT_LINES = 8
"""The most lines of an error `excerpt()` keeps."""

_EXCERPT_LINE_CHARS = 200
"""The most characters `excerpt()` keeps of one line."""


def excerpt(text: str) -> str:
    """The useful part of an error's text, bounded, for one check of the report.

    Its first line says what failed; a stack trace (the CLI's ``--version`` crashing
    in Node.js, or its stderr kept by a `ProcessError`) adds the error and the runtime
    on lines of their own, between its frames, which are indented. A text of more than
    8 lines loses its indented lines, then its middle ones, and says how many it lost;
    blank lines go, and each line is cut to 200 characters.

    Args:
        text: The error's text (a message, a program's output).

    Returns:
        At most 8 lines and a count of those left out; ``""`` for a blank text.
    """
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    total = len(lines)
    if total > _EXCERPT_LINES:  # the frames go first: a trace's error line is not indented
        lines = [lines[0], *(line for line in lines[1:] if not line[:1].isspace())]
    if len(lines) > _EXCERPT_LINES:  # then the middle: what failed, and how it ended
        lines = [lines[0], *lines[-(_EXCERPT_LINES - 1) :]]
    cut = _EXCERPT_LINE_CHARS
    shown = [line if len(line) <= cut else line[: cut - 3] + "..." for line in lines]
    if len(lines) < total:
        shown.append(f"({total - len(lines)} more lines not shown)")
    return "\n".join(shown)


class CheckStatus(enum.Enum):
    """Outcome of one check."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report; ``fix`` says what to do when it is not ok."""

    name: str
    status: CheckStatus
    detail: str
    fix: str | None = None


# --------------------------------------------------------------------------- credentials


@dataclass(frozen=True)
class AuthStatus:
    """Whether credentials were found: True, False, or None (cannot tell)."""

    found: bool | None
    detail: str


def _mask(secret: str) -> str:
    return f"{secret[:7]}...{secret[-4:]}" if len(secret) > 16 else "***"


def detect_auth(environ: Mapping[str, str], *, platform: str = sys.platform) -> AuthStatus:
    """Look for what the CLI authenticates with (environment, login, settings)."""
    key = environ.get("ANTHROPIC_API_KEY")
    if key:
        return AuthStatus(True, f"ANTHROPIC_API_KEY is set ({_mask(key)})")
    for var in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        if environ.get(var):
            return AuthStatus(True, f"{var} is set")
    for var, label in (
        ("CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock"),
        ("CLAUDE_CODE_USE_VERTEX", "Google Vertex AI"),
        ("CLAUDE_CODE_USE_FOUNDRY", "Microsoft Foundry"),
    ):
        if environ.get(var, "").strip().lower() in ("1", "true", "yes"):
            return AuthStatus(True, f"{label} ({var})")
    home = environ.get("HOME") or os.path.expanduser("~")
    config = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    credentials = os.path.join(config, ".credentials.json")
    if os.path.isfile(credentials):
        return AuthStatus(True, f"Claude Code login ({credentials})")
    settings = _read_json(os.path.join(config, "settings.json"))
    env = settings.get("env")
    if settings.get("apiKeyHelper") or (isinstance(env, Mapping) and env.get("ANTHROPIC_API_KEY")):
        return AuthStatus(True, f"Claude Code settings ({os.path.join(config, 'settings.json')})")
    if environ.get("ANTHROPIC_BASE_URL"):
        return AuthStatus(None, "no API key set, but ANTHROPIC_BASE_URL points at a gateway")
    if platform == "darwin":
        return AuthStatus(None, "no API key set; a `claude /login` may be in the macOS keychain")
    return AuthStatus(False, "no ANTHROPIC_API_KEY and no Claude Code login found")


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def check_auth(
    environ: Mapping[str, str], *, platform: str = sys.platform, cli: str | None = None
) -> Check:
    """The credentials check: missing credentials are a warning (offline mode works);
    its fix names ``cli``, the executable found, to log in with."""
    status = detect_auth(environ, platform=platform)
    if status.found:
        return Check("credentials", CheckStatus.OK, status.detail)
    if status.found is None:
        return Check("credentials", CheckStatus.INFO, status.detail)
    return Check(
        "credentials",
        CheckStatus.WARN,
        f"{status.detail}: real-model runs will fail, offline mode works",
        auth_hint(cli),
    )


# --------------------------------------------------------------------------- python side


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def check_python(version: Sequence[int] | None = None) -> Check:
    """Python itself (ccwire needs 3.10 or newer) and the core packages."""
    if version is None:
        version = sys.version_info[:3]
    shown = ".".join(str(v) for v in version[:3])
    packages = f"ccwire {_version('ccwire') or '?'}, anyio {_version('anyio') or '?'}"
    if tuple(version[:2]) < (3, 10):
        return Check("python", CheckStatus.FAIL, f"Python {shown}", "use Python 3.10 or newer")
    return Check("python", CheckStatus.OK, f"Python {shown} ({packages})")


_EXTRAS = (
    ("rich", "cli", "`ccwire run` prints plain lines without a live status line"),
    ("mcp", "mcp", "bridging servers written with the official MCP SDK is unavailable"),
    ("pydantic", "pydantic", "pydantic models cannot be used as tool schemas"),
)


def check_packages() -> list[Check]:
    """The optional extras: present, or what is missing without them."""
    checks = []
    for dist, extra, without in _EXTRAS:
        found = _version(dist)
        if found is not None:
            checks.append(Check(f"extra {extra}", CheckStatus.OK, f"{dist} {found}"))
        else:
            checks.append(
                Check(
                    f"extra {extra}",
                    CheckStatus.INFO,
                    f"{dist} not installed: {without}",
                    f"pip install 'ccwire[{extra}]'",
                )
            )
    return checks


# --------------------------------------------------------------------------- the CLI


def locate_cli(
    cli_path: str | None, environ: Mapping[str, str], cwd: str | None = None
) -> tuple[Check, str | None]:
    """Where the ``claude`` executable is, and which rule found it."""
    try:
        path = find_cli(cli_path, environ=environ, cwd=cwd)
    except CLINotFoundError as exc:
        first = str(exc).splitlines()[0]
        return (
            Check(
                "cli",
                CheckStatus.FAIL,
                first.rstrip("."),
                f"{INSTALL_COMMAND}, or set {ENV_VAR} to the executable",
            ),
            None,
        )
    home = environ.get("HOME") or os.path.expanduser("~")
    own_folder = os.path.join(home, CLI_PREFIX.removeprefix("~/"), "")
    if cli_path is not None:
        origin = "--cli-path"
    elif environ.get(ENV_VAR):
        origin = f"${ENV_VAR}"
    elif path.startswith(own_folder):
        origin = f"ccwire's CLI folder, {CLI_PREFIX}"
    elif os.sep + "node_modules" + os.sep in path:
        origin = "a project-local npm install"
    else:
        origin = "PATH or a usual install location"
    return Check("cli", CheckStatus.OK, f"{path} (found via {origin})"), path


def _parse_version(text: str) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(g) for g in match.groups()) if match else None


def check_cli_version(path: str, *, timeout: float = 30.0) -> Check:
    """Run ``claude --version`` and compare with the tested range."""
    try:
        code, output = cli_version_output(path, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check(
            "cli version",
            CheckStatus.FAIL,
            f"`claude --version` failed: {exc}",
            f"reinstall: {INSTALL_COMMAND}",
        )
    version = _parse_version(output)
    if code != 0 or version is None:
        said = f":\n{excerpt(output)}" if output else " and printed nothing"
        return Check(
            "cli version",
            CheckStatus.FAIL,
            f"`claude --version` exited {code}{said}",
            f"reinstall: {INSTALL_COMMAND}",
        )
    shown = ".".join(map(str, version))
    low = _parse_version(TESTED_CLI_VERSIONS[0])
    tested = f"tested: {TESTED_CLI_VERSIONS[0]} to {TESTED_CLI_VERSIONS[1]}"
    if version == _parse_version(PINNED_CLI_VERSION):
        return Check("cli version", CheckStatus.OK, f"{shown} (the pinned version; {tested})")
    if low is not None and version < low:
        detail = f"{shown} is older than tested ({tested})"
    elif version > (_parse_version(PINNED_CLI_VERSION) or version):
        detail = f"{shown} is newer than tested ({tested}); ccwire pins {PINNED_CLI_VERSION}"
    else:
        detail = f"{shown} is not the pinned {PINNED_CLI_VERSION} ({tested})"
    return Check("cli version", CheckStatus.WARN, detail, INSTALL_COMMAND)


# --------------------------------------------------------------------------- report


_MARK = {
    CheckStatus.OK: "ok",
    CheckStatus.INFO: "info",
    CheckStatus.WARN: "warn",
    CheckStatus.FAIL: "FAIL",
}


def doctor_command(args: argparse.Namespace, io: CliIO) -> int:
    """Run ``ccwire doctor``: every check, printed (as JSON with ``--json``).

    Args:
        args: The parsed arguments (``--cli-path``, ``--quick``, ``--json``).
        io: Where to write, and the environment to check.

    Returns:
        The exit code (`doctor_exit_code`).
    """
    import anyio

    checks: list[Check] = []

    def add(*done: Check) -> None:  # each line shows as soon as its check is done
        checks.extend(done)
        if not args.json:
            for check in done:
                _print_check(check, io.stdout)
            io.stdout.flush()

    if not args.json:
        io.stdout.write("ccwire doctor\n")
    add(check_python(), *check_packages())
    found, cli = locate_cli(args.cli_path, io.environ)
    add(found)
    if cli is not None:
        add(check_cli_version(cli))
        if not args.quick:  # seconds: the CLI starts and runs a turn
            add(*anyio.run(probe_protocol, cli))
    add(check_auth(io.environ, cli=cli))
    if args.json:
        print_checks(checks, io.stdout, as_json=True)
    else:
        _print_summary(checks, io.stdout)
    return doctor_exit_code(checks)


def print_checks(checks: Sequence[Check], out: IO[str], *, as_json: bool = False) -> None:
    """Write the report: aligned lines with fixes, or one JSON document."""
    if as_json:
        rows = [{**asdict(c), "status": c.status.value} for c in checks]
        out.write(json.dumps({"checks": rows}, indent=2) + "\n")
        return
    for check in checks:
        _print_check(check, out)
    _print_summary(checks, out)


def _print_check(check: Check, out: IO[str]) -> None:
    head = f"  {_MARK[check.status]:<5} {check.name:<14} "
    first, *more = check.detail.splitlines() or [""]
    out.write(f"{head}{first}\n")
    for line in more:  # a multi-line detail (an excerpt of an error) stays in its column
        out.write(f"{'':<{len(head)}}  {line}\n")
    if check.fix and check.status is not CheckStatus.OK:
        out.write(f"  {'':<5} {'':<14} fix: {check.fix}\n")


def _print_summary(checks: Sequence[Check], out: IO[str]) -> None:
    warnings = sum(c.status is CheckStatus.WARN for c in checks)
    failures = sum(c.status is CheckStatus.FAIL for c in checks)
    out.write(f"{failures} problem(s), {warnings} warning(s)\n")


def doctor_exit_code(checks: Sequence[Check]) -> int:
    """0 without failures, 3 when the CLI is missing, 1 for any other failure."""
    failed = [c for c in checks if c.status is CheckStatus.FAIL]
    if any(c.name == "cli" for c in failed):
        return 3
    return 1 if failed else 0


async def probe_protocol(cli: str, *, timeout: float = 60.0) -> list[Check]:
    """One offline round trip: ``initialize``, then a turn calling an in-process tool."""
    import anyio

    @tool("ping", "Answer pong", {})
    async def ping(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "pong"}]}

    states: set[str] = set()
    caps: set[str] = set()

    def observe(message: Message) -> None:
        if isinstance(message, SystemMessage):
            if message.subtype == "session_state_changed":
                states.add(str(message.data.get("state")))
            elif message.subtype == "init":
                caps.update(c for c in message.data.get("capabilities") or () if isinstance(c, str))

    with (
        tempfile.TemporaryDirectory(prefix="ccwire-doctor-") as home,
        ScriptedModel(tool_use("mcp__doctor__ping", {}), text("pong received")) as model,
    ):
        options = ClaudeAgentOptions(
            cli_path=cli,
            cwd=home,
            env=model.env(home),
            max_turns=3,
            mcp_servers={"doctor": create_sdk_mcp_server("doctor", tools=[ping])},
            allowed_tools=["mcp__doctor__ping"],
            initialize_timeout=timeout,
        )
        start = time.monotonic()
        result: ResultMessage | None = None
        try:
            with anyio.fail_after(timeout):
                async with ClaudeSDKClient(options) as client:
                    handshake = time.monotonic() - start
                    client._connection().add_observer(observe)
                    await client.query("ccwire doctor: call the ping tool")
                    async for message in client.receive_response():
                        if isinstance(message, ResultMessage):
                            result = message
        except (CcwireError, TimeoutError) as exc:
            said = excerpt(str(exc)) or type(exc).__name__
            return [
                Check(
                    "protocol", CheckStatus.FAIL, f"offline round trip failed: {said}", _TRACE_HINT
                )
            ]
        total = time.monotonic() - start
        results = [r.content for req in model.turn_requests for r in req.tool_results()]
        tool_ran = "pong" in results
    if result is None or result.is_error or not tool_ran:
        detail = f"the offline turn ended badly: {result.subtype if result else 'no result'}"
        return [Check("protocol", CheckStatus.FAIL, detail, _TRACE_HINT)]
    features = {
        "live tool sets": "sdk_mcp_tools_list_changed" in caps,
        "session states": bool(states),
        "prompt lifecycle": "msg_lifecycle_v1" in caps,
        "interrupt receipts": "interrupt_receipt_v1" in caps,
    }
    listed = ", ".join(f"{name} {'yes' if ok else 'no'}" for name, ok in features.items())
    return [
        Check(
            "protocol",
            CheckStatus.OK,
            f"initialize in {handshake * 1000:.0f} ms; offline turn with an in-process "
            f"tool in {total:.1f} s",
        ),
        Check(
            "capabilities",
            CheckStatus.OK if all(features.values()) else CheckStatus.INFO,
            listed,
            capability_hint(features),
        ),
    ]


_WITHOUT: dict[str, str] = {
    "live tool sets": "tools added or removed mid-session never reach the model (no "
    "fallback: SdkMcpServer.notify_tools_changed() raises UnsupportedFeatureError and "
    "background changes log a warning); register every tool before connecting",
    "session states": "turns are tracked by their results instead",
    "prompt lifecycle": "prompts are settled by their results instead",
    "interrupt receipts": "interrupt() cannot tell which prompts were still queued",
}


def capability_hint(features: Mapping[str, bool]) -> str | None:
    """What an older CLI's missing features mean for a ccwire user (None if none is
    missing): a fallback where ccwire has one, the plain consequence where it has not."""
    missing = [name for name, ok in features.items() if not ok]
    if not missing:
        return None
    effects = "; ".join(f"{name}: {_WITHOUT.get(name, 'not available')}" for name in missing)
    return f"upgrade the CLI to get them all. Without them, {effects}"
