"""The declarations of the ``ccwire`` commands: their arguments, help and epilogs.

This module imports nothing but `argparse` and constants, so that ``ccwire --help``
and ``ccwire COMMAND --help`` (answered by argparse from these declarations alone)
and every usage error cost no more than starting Python: `main` imports a command's
own module (through `commands`) only to run it.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import Any, Final

from .io import EXIT_CODES
from .reference_names import REFERENCE_VERSION

__all__ = [
    "PERMISSION_MODES",
    "CommandParser",
    "SERVE_USAGE",
    "add_batch_arguments",
    "add_compat_arguments",
    "add_observability_arguments",
    "add_report_arguments",
    "add_run_arguments",
    "add_sessions_arguments",
    "add_show_arguments",
    "batch_report_parser",
    "build_parser",
]


class CommandParser(argparse.ArgumentParser):
    """The parser of one command: an argument it does not know is reported with this
    command's usage (not the top-level one) and the nearest option (``--ofline``: did
    you mean ``--offline``?), or, for words after ``ccwire run``'s prompt, the hint to
    quote a prompt of several words."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras))
        return parsed, extras

    def _unrecognized(self, extras: list[str]) -> str:
        text = f"unrecognized arguments: {' '.join(extras)}"
        options = [o for action in self._actions for o in action.option_strings]
        for extra in extras:
            if not extra.startswith("-"):
                continue
            near = difflib.get_close_matches(extra.partition("=")[0], options, n=1)
            if near:
                return f"{text} (did you mean {near[0]}?)"
        if self.prog.endswith(" run") and not extras[0].startswith("-"):
            return f'{text} (a prompt of several words goes in quotes: ccwire run "...")'
        return text


PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ccwire run``."""
    parser.add_argument("prompt", help="the prompt ('-' reads it from stdin)")
    parser.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:SERVER",
        help="load an in-process MCP server (create_sdk_mcp_server result, SdkMcpServer, "
        "or a function returning one); repeatable",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help=(
            "allow a tool without asking (exact name or pattern, e.g. 'mcp__calc__*'; a "
            "tool of --tools by its own name, e.g. 'add'); repeatable"
        ),
    )
    parser.add_argument(
        "--permission-mode", choices=PERMISSION_MODES, metavar="MODE",
        help=f"the CLI's permission mode ({', '.join(PERMISSION_MODES)}); no prompts then",
    )  # fmt: skip
    parser.add_argument("--model", help="model to use (default: the CLI's)")
    parser.add_argument("--max-turns", type=int, metavar="N", help="stop after N model turns")
    parser.add_argument(
        "--system-prompt", metavar="TEXT", help="the system prompt (default: none, as in the SDK)"
    )
    parser.add_argument("--cwd", metavar="DIR", help="working directory of the CLI")
    parser.add_argument("--cli-path", metavar="PATH", help="the claude executable to run")
    parser.add_argument(
        "--spawn",
        metavar="MODULE:FUNC",
        help="start the CLI with this spawner (spawn_claude_code_process), e.g. "
        "ccwire:BubblewrapSpawner for a sandbox",
    )
    offline = parser.add_mutually_exclusive_group()
    offline.add_argument(
        "--offline",
        action="store_true",
        help="no API key needed: a local scripted model echoes the prompt",
    )
    offline.add_argument(
        "--scripted",
        metavar="FILE.json",
        help="offline, with the scripted model's replies read from FILE.json",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print NDJSON events (for scripts)")
    out.add_argument("--plain", action="store_true", help="plain lines, no live status line")
    parser.add_argument("--verbose", "-v", action="store_true", help="print the protocol trace")
    _add_otel_arguments(parser)


def _add_otel_arguments(parser: argparse.ArgumentParser) -> None:
    """``--otel`` and ``--otel-cli`` (``ccwire run`` and ``ccwire batch``)."""
    parser.add_argument(
        "--otel",
        action="store_true",
        help="OpenTelemetry traces and metrics over OTLP/HTTP (OTEL_EXPORTER_OTLP_* variables)",
    )
    parser.add_argument(
        "--otel-cli", action="store_true", help="with --otel: the CLI's own spans join the trace"
    )


def add_batch_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ccwire batch``."""
    parser.add_argument("tasks", metavar="TASKS.jsonl", help="one JSON task per line")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="RESULTS.jsonl",
        help="results file (appended; finished ids are skipped on a re-run; .parquet with pyarrow)",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=4, metavar="N", help="sessions at once (default 4)"
    )
    offline = parser.add_mutually_exclusive_group()
    offline.add_argument(
        "--offline",
        action="store_true",
        help="no API key needed: a local scripted model echoes each prompt",
    )
    offline.add_argument(
        "--scripted",
        metavar="FILE.json",
        help="offline; every session plays the steps of FILE.json in order",
    )
    parser.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:SERVER",
        help="an in-process MCP server by reference, its tools allowed; repeatable",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help="allow a tool without asking; repeatable",
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        metavar="MODE",
        help="the CLI's permission mode",
    )
    parser.add_argument("--model", help="model for tasks that name none")
    parser.add_argument("--max-turns", type=int, metavar="N", help="turn limit per session")
    parser.add_argument("--cli-path", metavar="PATH", help="the claude executable to run")
    parser.add_argument(
        "--silence-timeout",
        type=float,
        metavar="SECONDS",
        help="stop a session whose CLI writes nothing this long mid-turn (a hung CLI): "
        "the task fails and the batch goes on (default: no limit)",
    )
    parser.add_argument(
        "--task-timeout",
        type=float,
        metavar="SECONDS",
        help="stop a task still running after SECONDS (its retries included; a task's own "
        '"timeout" key wins): it fails as timed out, is not retried, and the batch goes on '
        "(default: no limit)",
    )
    parser.add_argument(
        "--spawn",
        metavar="MODULE:FUNC",
        help="start every CLI with this spawner (a function, or a spawner class such as "
        "ccwire:BubblewrapSpawner); imported wherever sessions run",
    )
    parser.add_argument(
        "--spares",
        type=_spares,
        default=0,
        metavar="N",
        help="keep N spare CLIs booted (per Ray actor) so that tasks start on one",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        metavar="N",
        help="retries of a rate-limited/overloaded task (default 3)",
    )
    parser.add_argument(
        "--rerun-failed",
        action="store_true",
        help="run again the tasks whose recorded result failed",
    )
    skipping = parser.add_mutually_exclusive_group()
    skipping.add_argument(
        "--strict", action="store_true", help="reject the whole file if any line is malformed"
    )
    skipping.add_argument(
        "--allow-skipped",
        action="store_true",
        help="exit 0 even if malformed lines were skipped (when every task succeeded)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run sessions on Ray actors (ADDRESS, else RAY_ADDRESS, else a local Ray)",
    )
    parser.add_argument(
        "--num-cpus", type=float, default=1.0, metavar="N", help="Ray: CPUs per task (default 1)"
    )
    parser.add_argument("--memory-mb", type=int, metavar="MB", help="Ray: memory per task")
    parser.add_argument(
        "--sessions-per-actor",
        type=int,
        metavar="K",
        help="Ray: sessions one actor runs at once (default: from the cluster's nodes)",
    )
    add_observability_arguments(parser)
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="NDJSON progress events (for scripts)")
    out.add_argument("--plain", action="store_true", help="plain lines, no live display")
    out.add_argument("--live", action="store_true", help=argparse.SUPPRESS)  # tests: force rich
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="full error messages, and each failed task's exit code and CLI stderr",
    )


def add_observability_arguments(parser: argparse.ArgumentParser) -> None:
    """The budget, OpenTelemetry and report options of ``ccwire batch``."""
    parser.add_argument(
        "--max-cost-usd",
        type=float,
        metavar="USD",
        help="a budget for the batch: the first task runs alone, each session is capped by "
        "what is left (--max-budget-usd), and no task starts once the results file records "
        "this cost (re-runs included)",
    )
    parser.add_argument(
        "--on-budget",
        choices=("finish", "interrupt"),
        default="finish",
        help="when the budget is spent, let running tasks finish (default) or interrupt them",
    )
    _add_otel_arguments(parser)
    parser.add_argument(
        "--report",
        metavar="OUT.html",
        help="keep a batch report page up to date as results arrive (`ccwire batch report`)",
    )


def _spares(text: str) -> int:
    """``--spares N``: a count, 0 or more."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"expected a count of spare CLIs (0 or more): {text!r}")
    return count


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ccwire batch report``."""
    parser.add_argument("results", metavar="RESULTS.jsonl", help="a batch's results file")
    parser.add_argument("--html", metavar="OUT.html", help="write the report page to this file")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the report's numbers as one JSON object (totals, results by kind, "
        "percentiles, slowest and most expensive tasks)",
    )
    parser.add_argument(
        "--no-transcripts",
        action="store_true",
        help="do not write the transcript pages of the slowest and most expensive tasks",
    )


def add_compat_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the actions of `ccwire compat`.

    Args:
        parser: The subcommand's parser.
    """
    actions = parser.add_subparsers(
        dest="action", metavar="{install,uninstall,status}", required=True
    )
    actions.add_parser(
        "install",
        help="make `import claude_agent_sdk` give ccwire's objects in this environment",
        description="Write a claude_agent_sdk package and a claude-agent-sdk "
        f"{REFERENCE_VERSION} distribution (installer: ccwire) into this Python's "
        "site-packages; refused where the real claude-agent-sdk is installed.",
    )
    actions.add_parser(
        "uninstall",
        help="remove exactly what `ccwire compat install` wrote",
        description="Remove every file the drop-in's RECORD lists, the bytecode "
        "cached for them and the directories left empty.",
    )
    status = actions.add_parser("status", help="say whether the drop-in is installed here")
    status.add_argument("--json", action="store_true", help="print the status as JSON")


def add_sessions_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of `ccwire sessions`.

    Args:
        parser: The subcommand's parser.
    """
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", help="sessions of this project (default: .)")
    where.add_argument("--all", action="store_true", help="sessions of every project")
    parser.add_argument("--limit", type=_limit, default=50, help="at most N sessions (0: all)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="the sessions of offline runs (kept in ~/.ccwire/offline or $CCWIRE_OFFLINE_DIR)",
    )


def _limit(text: str) -> int:
    """``--limit N``: a count, 0 (all) or more."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"expected a count of sessions (0 for all): {text!r}")
    return count


def add_show_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of `ccwire show`.

    Args:
        parser: The subcommand's parser.
    """
    parser.add_argument(
        "session_id",
        metavar="SESSION_ID",
        help="the session's id, or its start (the 8 characters `ccwire run` shows)",
    )
    parser.add_argument("--project", metavar="DIR", help="look only in this project")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="look only among the sessions of offline runs (as `ccwire sessions --offline`)",
    )
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    parser.add_argument("--full", action="store_true", help="unfold tool inputs and results")
    parser.add_argument("--plain", action="store_true", help="no colours, even on a terminal")


SERVE_USAGE: Final = """\
usage: ccwire serve [-v] [--drain-timeout S] [--otel] [--http [HOST:]PORT [LIMITS]]
                    PACKAGE.MODULE:ATTRIBUTE

Serve an MCP server to any MCP client: over stdin/stdout (one JSON-RPC message per
line), or with --http over Streamable HTTP at http://HOST:PORT/mcp (HOST defaults to
127.0.0.1; --http needs pip install 'ccwire[http]').

  --drain-timeout S      seconds the calls running when the server is stopped (Ctrl-C,
                         SIGTERM; on stdio also the end of stdin) get to finish
                         (default 5): those cut off then are answered with an error,
                         and the exit code is 1; a second signal cuts them off at once
  --otel                 each request a span (tools/call NAME, ...), its duration a
                         point of mcp.server.operation.duration, exported over OTLP
                         (OTEL_EXPORTER_OTLP_* variables; pip install 'ccwire[otel]');
                         a client's trace context in params._meta is the parent
  --verbose, -v          the traceback of a failure, and of each tool call that raised

LIMITS of the HTTP server:
  --max-body-bytes N     the largest request body (default 4194304, 4 MiB): 413 beyond
  --max-sessions N       the most sessions open at once (default 1000): 503 beyond
  --max-connections N    the most connections open at once (default: what the
                         file-descriptor limit, ulimit -n, leaves): 503 beyond
  --idle-timeout S       seconds a session may sit idle before it ends (default 1800)
  --request-timeout S    seconds a request's head, then its body, may take to arrive
                         (default 30): a slower client is disconnected
  --resume-timeout S     seconds a call whose client disconnected may run on without
                         the client resuming its stream (default 30): then it is
                         cancelled

ATTRIBUTE names the config made by create_sdk_mcp_server(), an SdkMcpServer, a server
of the official mcp package (FastMCP, MCPServer, a low-level Server), or a function
without arguments returning one (dots reach into objects).  The current directory is
searched first.
"""


_EPILOG = "exit codes:\n" + "\n".join(f"  {int(c):<4} {text}" for c, text in EXIT_CODES.items())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccwire",
        description="Drive the Claude Code CLI from Python, with in-process tools.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print ccwire's version, the pinned and the found Claude Code CLI version",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    run = sub.add_parser(
        "run",
        help="run one prompt, streamed live (offline with --offline/--scripted)",
        description="Run one prompt through the Claude Code CLI and stream the conversation.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(run)
    demo = sub.add_parser(
        "demo",
        help="the calculator demo (offline unless ANTHROPIC_API_KEY is set)",
        description="Run the calculator demo: Claude adds and subtracts with two tools\n"
        "served from this process, shown live. Offline (a scripted model plays Claude,\n"
        "no API key needed) unless ANTHROPIC_API_KEY is set.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--offline", action="store_true", help="use the scripted model even with an API key"
    )
    out = demo.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print NDJSON events")
    out.add_argument("--plain", action="store_true", help="plain lines, no live status line")
    demo.add_argument("--verbose", "-v", action="store_true", help="print the protocol trace")
    batch = sub.add_parser(
        "batch",
        help="run every task of a JSONL file, resumably, with live progress (or on Ray)",
        description="Run one session per task of TASKS.jsonl; results go to -o as they "
        "finish, and a re-run skips the ids already there. `ccwire batch report RESULTS.jsonl "
        "--html OUT.html` draws a results file as a web page.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_batch_arguments(batch)
    doctor = sub.add_parser(
        "doctor",
        help="check Python, the CLI, the protocol and credentials; print fixes",
        description="Check that ccwire can run here: Python and the extras, the Claude "
        "Code CLI (where it was found, its version), an offline round trip with the CLI, "
        "and the credentials; each problem comes with its fix.",
        epilog="exit codes: 0 no problems, 1 a check failed, 3 the CLI was not found",
    )
    doctor.add_argument("--cli-path", metavar="PATH", help="check this claude executable")
    doctor.add_argument("--quick", action="store_true", help="skip the offline round trip")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")

    add_sessions_arguments(
        sub.add_parser(
            "sessions",
            help="list past sessions (from the CLI's transcripts)",
            description="List the past sessions of this project (--all: of every project), "
            "newest first, from the CLI's transcripts; `ccwire show ID` shows one.",
        )
    )
    add_show_arguments(
        sub.add_parser(
            "show",
            help="show one past session (--html: as a web page)",
            description="Show one past session: its prompts, tool calls and answers "
            "(--html: as a self-contained web page).",
        )
    )
    sub.add_parser(
        "serve",
        add_help=False,
        help="serve package.module:server over MCP stdio or HTTP (`ccwire serve --help`)",
    )
    add_compat_arguments(
        sub.add_parser(
            "compat",
            help="install, remove or check the claude_agent_sdk drop-in in this environment",
            description="Make code that imports claude_agent_sdk (and cannot be edited) "
            "run on ccwire: `install` writes a claude_agent_sdk package answered by ccwire "
            "and a claude-agent-sdk distribution into this Python's site-packages.",
        )
    )
    return parser


def batch_report_parser() -> argparse.ArgumentParser:
    """The parser of ``ccwire batch report`` (parsed apart from ``ccwire batch``'s)."""
    parser = CommandParser(
        prog="ccwire batch report",
        description="Draw a batch's results file as one self-contained web page (--html): "
        "durations, cost, tokens and tool calls per task, failures by kind, the slowest and "
        "the most expensive tasks linked to their transcripts; or print its numbers as JSON "
        "(--json).",
    )
    add_report_arguments(parser)
    return parser
