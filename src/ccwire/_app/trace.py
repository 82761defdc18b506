"""``--verbose``: the protocol trace of ``ccwire run`` (every line in and out, CLI stderr).

`tracing_transport()` builds the same subprocess transport a connection would
build from the options, wrapped in `TracingTransport`, which writes each line
(cut to a readable length) before passing it on. Nothing else changes.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Callable

import anyio.abc

from .._conversation.argv import build_argv
from .._conversation.cli_env import build_env
from .._conversation.options import ClaudeAgentOptions
from .._transport.base import LineTransport, ProcessExit
from .._transport.discovery import find_cli, spawned_command
from .._transport.subprocess import SubprocessTransport

__all__ = ["TracingTransport", "tracing_transport"]

_LIMIT = 2000


def _cut(line: bytes) -> str:
    text = line.decode("utf-8", "replace").rstrip("\n")
    if len(text) > _LIMIT:
        return f"{text[:_LIMIT]}... ({len(text)} chars)"
    return text


class TracingTransport(LineTransport):
    """Passes everything to ``inner`` and writes a trace line for each step."""

    def __init__(self, inner: LineTransport, write: Callable[[str], None]) -> None:
        self._inner = inner
        self._write = write

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the inner transport."""
        await self._inner.start(task_group)
        self._write("[trace] CLI started")

    async def send_line(self, line: bytes) -> None:
        """Trace, then write ``line``."""
        self._write(f"-> {_cut(line)}")
        await self._inner.send_line(line)

    async def receive_line(self) -> bytes | None:
        """Read a line, then trace it."""
        line = await self._inner.receive_line()
        self._write("<- [end of output]" if line is None else f"<- {_cut(line)}")
        return line

    async def end_input(self) -> None:
        """Close the CLI's stdin."""
        self._write("-> [close stdin]")
        await self._inner.end_input()

    async def terminate(self) -> None:
        """Stop a CLI that lingers (its output stays readable)."""
        self._write("[trace] stopping the CLI")
        await self._inner.terminate()

    def kill(self) -> None:
        """Kill the CLI now."""
        self._inner.kill()

    async def aclose(self) -> None:
        """Stop the CLI and trace how it ended."""
        await self._inner.aclose()
        info = self._inner.exit_info
        if info is not None:
            self._write(f"[trace] CLI exited with status {info.returncode}")

    @property
    def exit_info(self) -> ProcessExit | None:
        """How the inner process ended."""
        return self._inner.exit_info


def tracing_transport(
    options: ClaudeAgentOptions, write: Callable[[str], None]
) -> tuple[TracingTransport, str]:
    """The traced transport for ``options`` and the scratch directory to delete after."""
    spawner = options.spawn_claude_code_process
    find = find_cli if spawner is None else spawned_command
    cli = find(options.cli_path, cwd=options.cwd)
    spill_dir = tempfile.mkdtemp(prefix="ccwire-")
    argv = build_argv(options, cli_path=cli, spill_dir=spill_dir)
    env = build_env(options, base_env=os.environ)
    write(f"[trace] {shlex.join(argv)}")

    def stderr(line: str) -> None:
        write(f"[cli stderr] {line}")
        if options.stderr is not None:
            options.stderr(line)

    inner = SubprocessTransport(
        argv,
        env=env,
        cwd=options.cwd,
        user=options.user,
        stderr_callback=stderr,
        max_line_bytes=options.max_buffer_size,
        spawner=spawner,
        private_files=[os.path.join(spill_dir, name) for name in sorted(os.listdir(spill_dir))],
        explicit_env=options.env.keys(),
    )
    return TracingTransport(inner, write), spill_dir
