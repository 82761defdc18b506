"""``ccwire run``: one prompt through the Claude Code CLI, shown live in the terminal.

The conversation runs on `ClaudeSDKClient`; its connection's two
observers (messages, control requests) feed a `RunTracker`,
which drives the chosen renderer. Offline runs (``--offline``, ``--scripted FILE``)
start a `ScriptedModel` and point the real CLI at it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from .._conversation.client import ClaudeSDKClient
from .._conversation.options import ClaudeAgentOptions
from .._conversation.shadow_warning import CanUseToolShadowedWarning
from .._conversation.telemetry import Telemetry
from .._core.errors import CcwireError
from .._mcp.config import McpServerConfig
from .._transport.base import Transport
from .._transport.discovery import find_cli, spawned_command
from .._transport.spawn import ProcessSpawner
from .._wire.messages import ResultMessage
from .._wire.permission_types import PermissionMode
from ..testing import DEFAULT_MODEL, ScriptedModel
from .doctor import AuthMissingError, detect_auth
from .errors import Terminated, read_text, utf8_options, utf8_text
from .events import RunEvent, RunTracker
from .io import watch_signals
from .loaders import UsageError, load_script, load_server, load_spawner, parse_step, server_tools
from .offline import OFFLINE_DIR_ENV, offline_dir
from .otel import exporting, start_otel, under_parent
from .permissions import PermissionPrompter
from .render import JsonRenderer, PlainRenderer, Renderer, RichRenderer, rich_available
from .trace import tracing_transport

if TYPE_CHECKING:
    from ..testing import ModelRequest, Step
    from .io import CliIO

__all__ = [
    "RunSpec",
    "choose_renderer",
    "execute",
    "run_command",
    "spec_from_args",
    "tracker_and_renderer",
]


@dataclass
class RunSpec:
    """Everything one run needs, resolved from the command line."""

    prompt: str
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    allowed: list[str] = field(default_factory=list)
    permission_mode: PermissionMode | None = None
    model: str | None = None
    max_turns: int | None = None
    system_prompt: str | None = None
    cwd: str | None = None
    cli_path: str | None = None
    spawn: ProcessSpawner | None = None
    offline: bool = False
    script: list[Step] | None = None
    default_step: Step | None = None
    script_model: str | None = None
    interactive: bool = False
    verbose: bool = False
    offline_dir: str | None = None
    """Offline: the CLI's config directory, where the session is kept (`offline_dir()`)."""
    telemetry: Telemetry | None = None
    """``--otel``: the session traced (OTLP export set up)."""


def _echo(request: ModelRequest) -> Any:
    step = parse_step("(offline echo) {prompt}")
    return step(request) if callable(step) else step


def spec_from_args(args: argparse.Namespace, io: CliIO) -> RunSpec:
    """Resolve the parsed arguments (loads ``--tools`` and ``--scripted``)."""
    prompt = args.prompt
    if prompt == "-":
        prompt = read_text(io.stdin, "the prompt read from stdin").strip()
    if not prompt:
        raise UsageError("the prompt is empty")
    utf8_text(prompt, "the prompt")
    utf8_options(args, "system_prompt", "model", "allow")
    spec = RunSpec(
        prompt=prompt,
        allowed=list(args.allow),
        permission_mode=args.permission_mode,
        model=args.model,
        max_turns=args.max_turns,
        system_prompt=args.system_prompt,
        cwd=args.cwd,
        cli_path=args.cli_path,
        verbose=args.verbose,
    )
    if args.max_turns is not None and args.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    if args.cwd is not None and not os.path.isdir(args.cwd):
        why = "does not exist" if not os.path.exists(args.cwd) else "is not a directory"
        raise UsageError(f"--cwd {args.cwd}: {why}")
    if args.spawn:
        spec.spawn = load_spawner(args.spawn)
    for item in args.tools:
        config = load_server(item)
        if config["name"] in spec.servers:
            raise UsageError(f"--tools: two servers are called {config['name']!r}")
        spec.servers[config["name"]] = config
    spec.allowed = [_full_tool_name(name, spec.servers) for name in spec.allowed]
    if args.scripted:
        spec.offline = True
        spec.script, spec.script_model = load_script(args.scripted)
    elif args.offline:
        spec.offline = True
        spec.default_step = _echo
    if spec.offline:
        spec.offline_dir = str(offline_dir(io.environ))
    spec.telemetry = start_otel(args.otel, args.otel_cli)
    spec.interactive = (
        io.stdin.isatty()
        and args.prompt != "-"
        and not args.json
        and not args.allow
        and args.permission_mode is None
    )
    return spec


def _full_tool_name(name: str, servers: Mapping[str, McpServerConfig]) -> str:
    """``--allow add`` means ``mcp__calc__add`` when ``add`` is a tool of exactly one
    ``--tools`` server (the CLI knows in-process tools by their full name only); any
    other name or pattern is passed on as given."""
    owners = [server for server, config in servers.items() if name in server_tools(config)]
    return f"mcp__{owners[0]}__{name}" if len(owners) == 1 else name


def choose_renderer(args: argparse.Namespace, io: CliIO, tracker: RunTracker) -> Renderer:
    """NDJSON with --json; rich on a terminal when available; plain lines otherwise."""
    if args.json:
        return JsonRenderer(io.stdout)
    if args.plain or args.verbose or not io.stdout.isatty() or not rich_available():
        return PlainRenderer(io.stdout, verbose=args.verbose)
    return RichRenderer(io.stdout, tracker, verbose=args.verbose)


def tracker_and_renderer(args: argparse.Namespace, io: CliIO) -> tuple[RunTracker, Renderer]:
    """A tracker whose events go to the renderer ``args`` ask for (which reads the tracker)."""
    renderer = Renderer()

    def emit(event: RunEvent) -> None:
        if tracker.output_closed is not None:
            return
        try:
            renderer.handle(event)
        except BrokenPipeError as exc:  # `ccwire run ... | head -1`: stop the run
            tracker.close_output(exc)

    tracker = RunTracker(emit)
    renderer = choose_renderer(args, io, tracker)
    return tracker, renderer


def run_command(args: argparse.Namespace, io: CliIO) -> int:
    """``ccwire run``: returns the exit code (errors are raised for the caller to map)."""
    spec = spec_from_args(args, io)
    find = find_cli if spec.spawn is None else spawned_command  # the spawner may run it elsewhere
    spec.cli_path = find(spec.cli_path, environ=io.environ)
    if not spec.offline:
        auth = detect_auth(io.environ)
        if auth.found is False:
            raise AuthMissingError(auth.detail)
    tracker, renderer = tracker_and_renderer(args, io)
    return execute(spec, tracker, renderer, io)


def execute(spec: RunSpec, tracker: RunTracker, renderer: Renderer, io: CliIO) -> int:
    """Run `spec` to its end; returns 0 or 1 (an error result).

    Raises:
        KeyboardInterrupt: The run was interrupted (Ctrl-C); `main` maps it to 130, and
            its subclass `Terminated` (SIGTERM) to 143.
        AuthMissingError: A real-model run whose result says the credentials are refused.
    """

    async def ask(question: str) -> str:
        with renderer.suspended():
            try:
                return await io.ask(question)
            except anyio.get_cancelled_exc_class():
                io.stderr.write("\n")  # leave the unanswered question's line
                raise

    prompter = PermissionPrompter(
        tracker, ask=ask if spec.interactive else None, allowed=spec.allowed
    )
    with renderer, io.warnings_as_lines(renderer.suspended), _offline(spec) as env:
        tracker.emit(
            "start",
            prompt=spec.prompt,
            offline=spec.offline,
            model=spec.model,
            cli=spec.cli_path,
            interactive=spec.interactive,
        )
        options = ClaudeAgentOptions(
            mcp_servers=spec.servers,
            allowed_tools=spec.allowed,
            permission_mode=spec.permission_mode,
            model=spec.model,
            max_turns=spec.max_turns,
            system_prompt=spec.system_prompt,
            cwd=spec.cwd,
            cli_path=spec.cli_path,
            env=env,
            can_use_tool=prompter,
            spawn_claude_code_process=spec.spawn,
            telemetry=spec.telemetry,
        )
        signals: list[int] = []  # the signal that stopped the run
        with exporting(spec.telemetry), under_parent(spec.telemetry, io.environ):
            anyio.run(_main, options, spec, tracker, io, signals)
    if tracker.output_closed is not None:
        raise tracker.output_closed
    if tracker.interrupted:
        tracker.emit("interrupted")
        raise Terminated if signals[:1] == [signal.SIGTERM] else KeyboardInterrupt
    result = tracker.result
    if result is None:
        raise CcwireError("the conversation ended without a result")
    if result.is_error and not spec.offline and _AUTH_FAILURE.search(str(result.result or "")):
        raise AuthMissingError(f"the model refused the credentials, saying {result.result}")
    return 1 if result.is_error else 0


_AUTH_FAILURE = re.compile(
    r"invalid api key|/login|authentication|unauthorized|x-api-key|credit balance", re.IGNORECASE
)


@contextlib.contextmanager
def _offline(spec: RunSpec) -> Iterator[dict[str, str]]:
    """The CLI environment: empty for real runs; offline, a started scripted model, a
    fresh HOME, and the offline folder as the CLI's config directory (the session is
    kept there: `ccwire sessions --offline`)."""
    if not spec.offline:
        yield {}
        return

    config = spec.offline_dir or str(offline_dir(os.environ))
    try:
        os.makedirs(config, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot create the offline sessions folder {config}: {exc.strerror or exc} "
            f"(set {OFFLINE_DIR_ENV} to another one)"
        ) from exc
    home = tempfile.mkdtemp(prefix="ccwire-run-")
    model = ScriptedModel(
        *(spec.script or ()),
        default=spec.default_step,
        model=spec.script_model or DEFAULT_MODEL,
    )
    try:
        with model:
            yield model.env(home, extra={"CLAUDE_CONFIG_DIR": config})
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def _main(
    options: ClaudeAgentOptions,
    spec: RunSpec,
    tracker: RunTracker,
    io: CliIO,
    signals: list[int],
) -> None:
    conversation = anyio.CancelScope()
    tracker.stop = conversation.cancel
    if tracker.output_closed is not None:  # already, on the first line
        conversation.cancel()
    async with anyio.create_task_group() as tg:
        if io.handle_signals:  # signals are watched until the CLI is stopped, shielded or not
            tg.start_soon(_watch_signals, conversation, tracker, signals)
        with conversation:
            await converse(options, spec.prompt, tracker, io if spec.verbose else None)
        tg.cancel_scope.cancel()


async def _watch_signals(scope: anyio.CancelScope, tracker: RunTracker, seen: list[int]) -> None:
    """On Ctrl-C or SIGTERM (noted in ``seen``): silence the display (what the CLI sends
    while it is shut down is not shown) and end the conversation. Another signal while
    the CLI is stopped changes nothing: the stop is bounded, and a second interrupt
    would only cut it short (and leave the CLI running)."""

    def stop(signum: int) -> None:
        seen.append(signum)
        tracker.interrupt()
        scope.cancel()

    await watch_signals(stop)


async def converse(
    options: ClaudeAgentOptions, prompt: str, tracker: RunTracker, trace_io: CliIO | None
) -> ResultMessage | None:
    """Send ``prompt`` and follow the conversation to its result, reporting to ``tracker``."""
    transport: Transport | None = None
    spill: str | None = None
    if trace_io is not None:

        def write(line: str) -> None:
            trace_io.stderr.write(line + "\n")
            trace_io.stderr.flush()

        transport, spill = tracing_transport(options, write)
    client = ClaudeSDKClient(options, transport=transport)
    client._told_credentials = True  # refused credentials are this command's own error
    try:
        with warnings.catch_warnings():
            # `--allow` means "run without asking": that it bypasses the prompter is the point
            warnings.simplefilter("ignore", CanUseToolShadowedWarning)
            await client.connect()
        conn = client._connection()
        conn.add_observer(tracker.on_message)
        conn.add_control_observer(tracker.on_control)
        await client.query(prompt)
        async for _ in client.receive_response():
            pass  # the observers report everything, in real time
    finally:
        await client.disconnect()  # shielded and bounded
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)
    return tracker.result
