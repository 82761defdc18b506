"""`BubblewrapSpawner`: run the CLI in a bubblewrap sandbox on Linux.

Bubblewrap (``bwrap``, Debian's ``bubblewrap`` package) is the sandbox Claude Code
itself uses on Linux. The sandbox built here:

* sees the whole file system **read-only**, but for the session's work folder
  (``cwd``, bound read-write) and the folders in ``writable``;
* does not see the host's home folders (``/home``, ``/root``, this user's home), the
  temporary folders (``/tmp``, ``/var/tmp``: empty and private), ``/run/user``, nor the
  folder that holds the work folder: other sessions' folders next to it are hidden
  (``hidden`` adds more);
* gives the CLI a private, writable ``HOME`` (an empty in-memory folder, or the host
  folder ``home``), where it keeps its configuration and transcripts;
* has its own process namespace (the CLI sees only its own processes), its own IPC,
  UTS and cgroup namespaces, and shares the network (the CLI must reach the API) unless
  ``network=False``;
* dies with the process that started it (``--die-with-parent``).

The work folder must not hold a hidden folder (``/``, ``/var``, a home's parent...):
bound read-write over them, it would show them again (and ``/`` would make the whole
system writable); such a folder is refused (`SpawnError`). A sandbox is made for one
work folder: a spare (``prewarm()``, `SparePool`), which a claim moves into another
folder, is refused (`SpawnError`).

The CLI's executable, the interpreter its ``#!`` line runs (``node``) and the private
files ccwire wrote for it stay visible (read-only), even when they live in a hidden
folder. The environment reaches ``bwrap``
through its process environment, never its command line.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace

import anyio.abc

from .._core.errors import CLINotFoundError, SpawnError
from .discovery import AWAIT_CLAIM_FLAG
from .spawn import SpawnOptions, check_strings, shebang, spawn_local

__all__ = ["BubblewrapSpawner"]

_SANDBOX_HOME = "/home/sandbox"
_ALWAYS_HIDDEN = ("/home", "/root", "/run/user", "/tmp", "/var/tmp")
_NEVER_HIDDEN = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/run"}
    | {"/sbin", "/sys", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/usr/share", "/var"}
    | {"/var/lib"}
)
"""System folders never hidden, even when the work folder sits right inside one."""


@dataclass(frozen=True)
class BubblewrapSpawner:
    """A spawner that runs the CLI in a bubblewrap sandbox (Linux); see the module docstring.

    Pass it as ``ClaudeAgentOptions(spawn_claude_code_process=BubblewrapSpawner())``.
    The sandbox's writable folder is the session's ``cwd`` (this process's working
    directory when ``cwd`` is not set).

    Attributes:
        writable: More host folders the CLI may write (bound read-write at the same
            path); like the work folder, none may hold a folder the sandbox hides.
        readable: Hidden host folders to show again, read-only.
        hidden: More host folders to hide (replaced by an empty folder).
        home: A host folder to be the CLI's ``HOME`` (read-write), to keep its
            configuration and transcripts between sessions. Default ``None``: an
            empty in-memory folder, gone when the sandbox ends.
        network: Share the host's network (the CLI needs it to reach the API).
            ``False`` cuts the sandbox off entirely, the host's loopback too: a model
            server on this machine's ``127.0.0.1`` is unreachable as well.
        bwrap: The ``bwrap`` executable.
        extra_args: More ``bwrap`` arguments, placed before the command.
    """

    writable: Sequence[str] = ()
    readable: Sequence[str] = ()
    hidden: Sequence[str] = ()
    home: str | None = None
    network: bool = True
    bwrap: str = "bwrap"
    extra_args: Sequence[str] = ()

    def __post_init__(self) -> None:
        check_strings(self, "writable", "readable", "hidden", "extra_args")

    async def __call__(self, options: SpawnOptions) -> anyio.abc.Process:
        """Start the CLI in the sandbox.

        Args:
            options: What ccwire would start.

        Returns:
            The ``bwrap`` process (its exit status is the CLI's).

        Raises:
            CLINotFoundError: ``bwrap`` (or the CLI) is not installed.
            SpawnError: ``options`` start a spare (see `wrap()`).
            CLIConnectionError: It cannot be started.
        """
        return await spawn_local(self.wrap(options))

    def wrap(self, options: SpawnOptions) -> SpawnOptions:
        """The ``bwrap`` command line that runs ``options`` in the sandbox.

        Args:
            options: What ccwire would start.

        Returns:
            What to start instead: ``bwrap`` with the same environment (``HOME``
            pointing at the sandbox's home).

        Raises:
            CLINotFoundError: ``bwrap`` or the CLI is not installed.
            SpawnError: ``options`` start a spare (``prewarm()``, `SparePool`): the
                sandbox is made for one work folder, and a claim would move the CLI
                into another, which it could not write, next to folders it must not see.
                Or the work folder, or a folder of ``writable``, holds a folder the
                sandbox hides (``/``, ``/var``, ``/home``...): bound read-write, it would
                show it again. Or a folder of ``writable``, or ``home``, does not exist.
        """
        if f"--{AWAIT_CLAIM_FLAG}" in options.args:
            raise SpawnError(
                "BubblewrapSpawner does not start spares (prewarm(), SparePool): its sandbox "
                "is made for one work folder, and a claim would move the CLI into another; "
                "start sandboxed sessions cold"
            )
        bwrap = shutil.which(self.bwrap)
        if bwrap is None:
            raise CLINotFoundError(
                f"bubblewrap ({self.bwrap!r}) is not installed: install Debian's "
                "`bubblewrap` package (apt-get install bubblewrap)",
                searched=(self.bwrap,),
            )
        found = shutil.which(options.command, path=options.env.get("PATH"))
        if found is None:
            raise CLINotFoundError(
                f"Claude Code not found at: {options.command!r}", searched=(options.command,)
            )
        command = os.path.realpath(found)
        work = os.path.realpath(options.cwd if options.cwd is not None else os.getcwd())
        hidden = self._hidden(work)
        # the work folder is bound read-write over everything hidden: one that holds a
        # hidden folder would show it again, and "/" would make the whole system writable
        uncovered = [p for p in hidden if p != work and _within(p, work)]
        if uncovered:
            which = "ClaudeAgentOptions.cwd"
            if options.cwd is None:
                which = "this process's working directory (ClaudeAgentOptions.cwd is not set)"
            raise SpawnError(
                f"BubblewrapSpawner cannot make {work!r} ({which}) the sandbox's writable "
                f"work folder: it holds {uncovered[0]!r}, which the sandbox hides; give a "
                "work folder that holds no hidden folder"
            )
        writable = [os.path.realpath(p) for p in self.writable]
        # bwrap binds only what exists: a missing folder would fail in the sandbox, where
        # the error reads as the CLI's exit
        named: list[tuple[str, str]] = [("writable", p) for p in writable]
        named += [] if self.home is None else [("home", self.home)]
        for name, folder in named:
            if not os.path.isdir(folder):
                raise SpawnError(
                    f"BubblewrapSpawner.{name}: {folder!r} is not an existing folder; "
                    "create it first"
                )
        for folder in writable:  # likewise ("/" would make the whole system writable)
            uncovered = [p for p in hidden if p != folder and _within(p, folder)]
            if uncovered:
                raise SpawnError(
                    f"BubblewrapSpawner cannot make {folder!r} (writable) writable: it holds "
                    f"{uncovered[0]!r}, which the sandbox hides; give folders that hold no "
                    "hidden folder"
                )
        env = dict(options.env)
        home = env.get("HOME") or _SANDBOX_HOME
        if not os.path.isabs(home) or home in _NEVER_HIDDEN or _within(home, work):
            home = _SANDBOX_HOME  # the sandbox's home must not be (in) the work folder
        env["HOME"] = home

        args = ["--die-with-parent", "--new-session", "--unshare-all"]
        if self.network:
            args.append("--share-net")
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # in this order: what is hidden, the home, then what is shown again on top
        for path in hidden:
            args += ["--tmpfs", path]
        if self.home is None:
            args += ["--tmpfs", home]
        else:
            args += ["--bind", os.path.realpath(self.home), home]
        shown = [os.path.dirname(command), *map(os.path.dirname, options.private_files)]
        # the interpreter of a script (`#!/usr/bin/env node`), often in a hidden home
        # (nvm): where the PATH names it, and where it is
        interpreter = _interpreter(command, env.get("PATH"))
        if interpreter is not None:
            shown += [os.path.dirname(interpreter), os.path.dirname(os.path.realpath(interpreter))]
        shown += [os.path.realpath(p) for p in self.readable]
        for path in _unique(shown):
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        for path in _unique([work, *writable]):
            args += ["--bind", path, path]
        args += ["--chdir", work, *self.extra_args, "--", command, *options.args]
        return replace(options, command=bwrap, args=tuple(args), cwd=work, env=env)

    def _hidden(self, work: str) -> list[str]:
        """The folders replaced by empty ones, parents first."""
        candidates = [*_ALWAYS_HIDDEN, os.path.expanduser("~"), os.path.dirname(work)]
        candidates += self.hidden
        hidden = [os.path.realpath(p) for p in candidates]
        return sorted(
            (p for p in _unique(hidden) if p not in _NEVER_HIDDEN and os.path.isdir(p)),
            key=lambda p: p.count(os.sep),
        )


def _interpreter(command: str, path: str | None) -> str | None:
    """The interpreter the ``#!`` line of ``command`` runs (the program an ``env``
    line names, as ``path`` finds it), or ``None``: not a script, or not found."""
    line = shebang(command)
    words = [] if line is None else line[2:].split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":  # `env node`, `env -S node --flag`
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return shutil.which(names[0], path=path) if names else None
    return words[0]


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it."""
    rel = os.path.relpath(os.path.realpath(path), folder)
    return rel == "." or not rel.startswith("..")


def _unique(paths: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(path, None)
    return list(seen)
