"""The ``ccwire`` command line (``ccwire demo``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import anyio

from ._errors import CcwireError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 1 error, 2 usage)."""
    parser = argparse.ArgumentParser(
        prog="ccwire", description="Drive the Claude Code CLI from Python."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="run the calculator demo (offline unless ANTHROPIC_API_KEY is set)"
    )
    demo.add_argument(
        "--offline", action="store_true", help="use the scripted model even with an API key"
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import run_demo

        try:
            anyio.run(lambda: run_demo(offline=True if args.offline else None))
        except CcwireError as exc:
            print(f"ccwire: error: {exc}", file=sys.stderr)
            return 1
        return 0
    parser.error(f"unknown command {args.command}")
    return 2
