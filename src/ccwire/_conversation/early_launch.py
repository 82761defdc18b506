"""Start the CLI first, then load the connection machinery while it boots.

The first ``connect()`` of a process imports the control protocol, the hooks, the
transport and the rest (about 15 ms); the CLI takes longer than that to start (tens of
milliseconds for a small script, about half a second for Claude Code). `launch_early()`
builds the command line and starts the child before those imports, so the two overlap
instead of adding up. It needs only the standard library and the options' own modules.
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from .._core.loops import running_asyncio_loop
from .._transport.discovery import find_cli
from .._transport.spawn import abandon_popen, kill_quietly, spawn_kwargs, start_popen
from .argv import SpillDir, build_argv
from .cli_env import build_env

if TYPE_CHECKING:
    import asyncio

    from .options import ClaudeAgentOptions

__all__ = ["EarlyLaunch", "launch_early"]

_REAP_WAIT = 10.0  # seconds: a spawn ends with exec, a killed child exits at once


class EarlyLaunch:
    """A CLI started by `launch_early()`, for the connection to take over."""

    __slots__ = ("argv", "env", "spill_dir", "started", "taken")

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        spill_dir: SpillDir,
        started: asyncio.Future[subprocess.Popen[bytes]],
    ) -> None:
        self.argv = argv
        self.env = env
        self.spill_dir = spill_dir
        self.started = started
        self.taken = False
        """Whether a transport took the child over (`abandon()` then does nothing)."""

    async def aclose(self) -> None:
        """Like `abandon()`, but wait (shielded, at most ``_REAP_WAIT`` s) for the spawn
        to end and the killed child to be reaped: once this returns, nothing of it is
        left running."""
        if self.taken:
            return
        self.taken = True
        import anyio
        import anyio.to_thread

        done = False
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_REAP_WAIT):
                try:
                    popen = await self.started
                except Exception:  # the spawn failed: no child
                    done = True
                    return
                kill_quietly(popen)
                await anyio.to_thread.run_sync(popen.wait, abandon_on_cancel=True)
                done = True
        finally:
            if not done:  # killed and reaped later, whenever the spawn ends
                abandon_popen(self.started)
            self.spill_dir.remove()

    def abandon(self) -> None:
        """Kill and reap the child and remove its spill directory, unless a transport
        took them over. Idempotent."""
        if self.taken:
            return
        self.taken = True
        abandon_popen(self.started)
        self.spill_dir.remove()


def launch_early(options: ClaudeAgentOptions) -> EarlyLaunch | None:
    """Start the CLI for ``options`` now, on the running asyncio loop (POSIX).

    Returns ``None``, having started nothing, where the connection must start the CLI
    itself: not on asyncio, a session store to resume from first, or options that do
    not build a command line (the connection then raises the error in its own order).
    """
    if os.name != "posix" or options.session_store is not None:
        return None
    loop = running_asyncio_loop()
    if loop is None:  # trio
        return None
    spill_dir = SpillDir()
    try:
        cli = find_cli(options.cli_path, cwd=options.cwd)
        argv = build_argv(options, cli_path=cli, spill_dir=spill_dir)
        env = build_env(options, base_env=os.environ)
    except Exception:  # raised again, in order, by the connection's own launch
        spill_dir.remove()
        return None
    kwargs = spawn_kwargs(cwd=options.cwd, env=env, user=options.user)
    return EarlyLaunch(argv, env, spill_dir, start_popen(loop, argv, kwargs))
