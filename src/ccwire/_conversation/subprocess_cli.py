"""The CLI's process, as a session starts it, and ``claude-agent-sdk``'s
``SubprocessCLITransport`` for code that imports it from the reference's private module.

`cli_process()` is the one place the options become the `SubprocessTransport` that
runs the CLI: a `Connection` uses it for its own CLI, and so does
`SubprocessCLITransport`. That class stands for
``claude_agent_sdk._internal.transport.subprocess_cli.SubprocessCLITransport`` (the
drop-in serves it under that name): a transport with the reference's six methods, built
from ``(prompt, options)`` as the reference's is, that projects subclass (to time
``connect()``, ``write()`` and ``close()``), wrap in a transport of their own, or build
only to read ``_build_command()``. Passed as ``transport=``, ccwire drives it through
those six methods, so what a subclass overrides is called; the process it starts is the
one a session starts for the same options.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any

import anyio

from .._core.errors import CLIConnectionError, CLINotFoundError
from .._core.tasks import TaskHost
from .._transport.base import Transport
from .._transport.discovery import find_cli, spawned_command
from .._transport.subprocess import SubprocessTransport
from .argv import SpillDir, build_argv
from .cli_env import build_env
from .options import ClaudeAgentOptions, check_settings_file

__all__ = ["SubprocessCLITransport", "cli_process", "resolve_cli"]


def resolve_cli(options: ClaudeAgentOptions) -> str:
    """The command that runs the CLI for ``options``: the executable found (or the
    spawner's command), its settings file checked where ccwire starts it itself.

    Raises:
        CLINotFoundError: No CLI where ``options`` (or the environment) says.
    """
    spawner = options.spawn_claude_code_process
    find = find_cli if spawner is None else spawned_command
    cli = find(options.cli_path, cwd=options.cwd)
    if spawner is None and options.sandbox is None:  # (else read there, or elsewhere)
        check_settings_file(options)
    return cli


def cli_process(
    options: ClaudeAgentOptions,
    argv: list[str],
    *,
    spill_dir: SpillDir,
    extra_env: Mapping[str, str] | None = None,
) -> SubprocessTransport:
    """The (not yet started) transport that runs ``argv`` for ``options``.

    Args:
        options: The session's options.
        argv: The command line (see `build_argv()`).
        spill_dir: Where ``argv``'s over-long values went (the caller removes it).
        extra_env: More variables for the CLI; those of ``options.env`` win over them.

    Returns:
        The transport.
    """
    env = build_env(options, base_env=os.environ)
    env.update({k: v for k, v in (extra_env or {}).items() if k not in options.env})
    return SubprocessTransport(
        argv,
        env=env,
        cwd=options.cwd,
        user=options.user,
        stderr_callback=options.stderr,
        max_line_bytes=options.max_buffer_size,
        spawner=options.spawn_claude_code_process,
        spawn_timeout=options.initialize_timeout,
        private_files=spill_dir.files(),
        explicit_env=options.env.keys(),
    )


class SubprocessCLITransport(Transport):
    """``claude-agent-sdk``'s subprocess transport, on ccwire's process handling.

    Built as the reference's is, from ``(prompt, options)`` (``prompt`` is kept, not
    sent: the prompt goes through the session, as in the reference). `connect()` starts
    the CLI as a session would (`cli_process()`), its background tasks in a task host of
    its own; `close()` stops it (bounded, shielded) from any task. The reference's
    attributes that code reads are there: ``_cli_path`` (``None`` until `connect()`
    unless ``options.cli_path`` is set), ``_options``, ``_prompt``, ``_cwd``.

    Args:
        prompt: The prompt (a string or an async iterable of message dicts).
        options: The options the CLI runs with.
    """

    def __init__(
        self,
        prompt: str | AsyncIterable[dict[str, Any]],
        options: ClaudeAgentOptions,
    ) -> None:
        self._prompt = prompt
        self._options = options
        self._cli_path: str | None = None if options.cli_path is None else str(options.cli_path)
        self._cwd = None if not options.cwd else str(options.cwd)
        self._process: SubprocessTransport | None = None
        self._host: TaskHost | None = None
        self._spill_dir: SpillDir | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._process!r}>"

    def _find_cli(self) -> str:
        """The CLI this transport runs (see `resolve_cli()`)."""
        return resolve_cli(self._options)

    def _build_command(self) -> list[str]:
        """The CLI's command line, as ccwire sends it (see `build_argv()`); `connect()`
        runs what it returns, so a subclass may change it.

        Raises:
            CLINotFoundError: No CLI yet: ``options.cli_path`` unset and `connect()`
                not called (as the reference says).
        """
        if self._cli_path is None:
            raise CLINotFoundError("CLI path not resolved. Call connect() first.")
        return build_argv(self._options, cli_path=self._cli_path, spill_dir=self._spill_dir)

    async def connect(self) -> None:
        """Start the CLI (a second call does nothing)."""
        if self._host is not None:
            return
        if self._cli_path is None:
            self._cli_path = self._find_cli()
        self._spill_dir = SpillDir()
        host = self._host = TaskHost(f"ccwire {type(self).__name__}")
        try:
            argv = self._build_command()
            process = self._process = cli_process(self._options, argv, spill_dir=self._spill_dir)
            await process.launch()
            await process.start(await host.start())
        except BaseException:
            await self.close()
            raise

    def _running(self) -> SubprocessTransport:
        if self._process is None:
            raise CLIConnectionError(f"{type(self).__name__} is not connected: call connect()")
        return self._process

    async def write(self, data: str) -> None:
        """Write one or more JSON lines to the CLI's stdin.

        Args:
            data: The text.
        """
        await self._running().write(data)

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        """The CLI's output as decoded JSON objects; a non-zero exit ends it with a
        `ProcessError`.

        Returns:
            An async iterator of the messages.
        """
        return self._running().read_messages()

    async def end_input(self) -> None:
        """Close the CLI's stdin."""
        await self._running().end_input()

    def is_ready(self) -> bool:
        """Whether the CLI runs and this transport can write to it.

        Returns:
            ``True`` between `connect()` and `close()`, while the CLI runs.
        """
        return self._process is not None and self._process.is_ready()

    async def close(self) -> None:
        """Stop the CLI and release everything (idempotent)."""
        process, host, spill = self._process, self._host, self._spill_dir
        self._process = self._host = self._spill_dir = None
        with anyio.CancelScope(shield=True):
            if process is not None:
                await process.aclose()
            if host is not None:
                await host.aclose()
            if spill is not None:
                spill.remove()
