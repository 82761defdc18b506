"""Find the Claude Code CLI executable.

Order: the explicit ``cli_path``; the ``CCWIRE_CLI_PATH`` environment variable; ``claude``
on ``PATH``; a project-local npm install (``node_modules/.bin/claude`` in the working
directory or any parent); ccwire's own CLI folder (``~/.ccwire/cli``, where
`INSTALL_COMMAND` puts it); the usual global install locations.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Mapping

from .._core.errors import CLINotFoundError

__all__ = [
    "AWAIT_CLAIM_FLAG",
    "CLI_PACKAGE",
    "CLI_PREFIX",
    "ENV_VAR",
    "INSTALL_COMMAND",
    "PINNED_CLI_VERSION",
    "cli_version_output",
    "find_cli",
    "spawned_command",
]

AWAIT_CLAIM_FLAG = "await-claim"
"""The CLI flag (``--await-claim``) that parks it after ``initialize`` until a
``claim_session`` binds it to a session: the command line of a spare (``prewarm()``)."""

ENV_VAR = "CCWIRE_CLI_PATH"
"""Environment variable naming the CLI executable."""

PINNED_CLI_VERSION = "2.1.330"
"""The Claude Code CLI version ccwire is tested with: the one place it is written
(the Makefile's `CLI_VERSION` and `package.json` are checked against it by the tests)."""

CLI_PACKAGE = "@anthropic-ai/claude-code"
"""The npm package of the Claude Code CLI."""

CLI_PREFIX = "~/.ccwire/cli"
"""ccwire's own CLI folder: an npm prefix of its own, so installing the CLI there never
touches a project's ``package.json``; ccwire looks in its ``node_modules/.bin``."""

INSTALL_COMMAND = f"npm install --prefix {CLI_PREFIX} {CLI_PACKAGE}@{PINNED_CLI_VERSION}"
"""The command that installs the pinned CLI (into `CLI_PREFIX`, where ccwire finds it)."""

_NAME = "claude"
_LOCAL_BIN = ("node_modules", ".bin", _NAME)
_USUAL_LOCATIONS = (
    f"{CLI_PREFIX}/node_modules/.bin/claude",
    "~/.npm-global/bin/claude",
    "/usr/local/bin/claude",
    "~/.local/bin/claude",
    "~/node_modules/.bin/claude",
    "~/.yarn/bin/claude",
    "~/.claude/local/claude",
)
_INSTALL_HINT = (
    f"Install it with `{INSTALL_COMMAND}`, or pass cli_path= / set {ENV_VAR} to the executable."
)


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _checked(path: str, origin: str) -> str:
    """Return ``path`` (absolute) if it is an executable file, else raise saying why."""
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(full):
        raise CLINotFoundError(
            f"Claude Code not found at: {full} (given by {origin}: it does not exist)\n"
            f"{_INSTALL_HINT}",
            searched=(full,),
        )
    if not _is_executable(full):
        inside = next(
            (p for p in (os.path.join(full, *rel) for rel in _IN_A_FOLDER) if _is_executable(p)),
            None,
        )
        why = "not an executable file" if inside is None else f"a folder; the CLI in it is {inside}"
        raise CLINotFoundError(
            f"Claude Code not found at: {full} (given by {origin}: {why}"
            + (f")\n{_INSTALL_HINT}" if inside is None else ": give that)"),
            searched=(full,),
        )
    return full


_IN_A_FOLDER = (_LOCAL_BIN, ("bin", "claude.exe"), ("bin", _NAME))
"""Where the executable is in a folder given as the CLI: an npm prefix (``~/.ccwire/cli``)
or the npm package's own folder."""


def _expand_home(path: str, home: str | None) -> str:
    if path.startswith("~/") and home:
        return os.path.join(home, path[2:])
    return os.path.expanduser(path)


def find_cli(
    cli_path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> str:
    """Return the absolute path of the Claude Code CLI executable.

    ``environ`` (default ``os.environ``) supplies ``CCWIRE_CLI_PATH``, ``PATH`` and
    ``HOME``; a project-local ``node_modules/.bin/claude`` is looked for in ``cwd``
    (the session's working directory, if given) and its parents, then in the current
    directory and its parents. An explicit ``cli_path`` or
    ``CCWIRE_CLI_PATH`` must name an executable file. Raises
    `CLINotFoundError` listing every place searched.
    """
    env = os.environ if environ is None else environ
    if cli_path is not None:
        return _checked(os.fspath(cli_path), "cli_path")
    configured = env.get(ENV_VAR)
    if configured:
        return _checked(configured, ENV_VAR)

    searched: list[str] = []
    path_var = env.get("PATH", os.defpath)
    searched.append(f"{_NAME!r} on PATH ({path_var})")
    import shutil  # only for a search: a given path needs none (the first connect's imports)

    found = shutil.which(_NAME, path=path_var)
    if found is not None:
        return os.path.abspath(found)

    # the session's working directory and then this process's (the user's project,
    # where `npm install` put it, even when the session runs elsewhere)
    from pathlib import Path  # only for a search, like shutil (~1 ms before the spawn)

    starts = [Path(os.getcwd())]
    if cwd is not None:
        starts.insert(0, Path(os.fspath(cwd)).absolute())
    for start in starts:
        for directory in (start, *start.parents):
            candidate = str(directory.joinpath(*_LOCAL_BIN))
            if candidate in searched:
                continue
            searched.append(candidate)
            if _is_executable(candidate):
                return candidate

    home = env.get("HOME")
    for location in _USUAL_LOCATIONS:
        candidate = _expand_home(location, home)
        searched.append(candidate)
        if _is_executable(candidate):
            return candidate

    listing = "\n".join(f"  - {item}" for item in searched)
    raise CLINotFoundError(
        f"Claude Code not found (${ENV_VAR} is not set; not on PATH, in "
        f"node_modules/.bin or a usual install location)\nSearched:\n"
        f"  - ${ENV_VAR} (not set)\n{listing}\n"
        f"{_INSTALL_HINT}",
        searched=tuple(searched),
    )


def spawned_command(
    cli_path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> str:
    """The command handed to a spawner (``spawn_claude_code_process``).

    ``cli_path`` as given (it may name a path where the spawner runs the CLI, not
    here), else the CLI `find_cli()` finds here, else plain ``claude`` (for the
    spawner to find where it runs the CLI).
    """
    if cli_path is not None:
        return os.fspath(cli_path)
    try:
        return find_cli(None, environ=environ, cwd=cwd)
    except CLINotFoundError:
        return _NAME


_VERSION_OUTPUT_BYTES = 64 * 1024


def cli_version_output(cli: str, *, timeout: float = 30.0) -> tuple[int, str]:
    """Run ``cli --version``: its exit status and what it printed (stdout, else stderr).

    Its output goes to files, not pipes: a process it starts and leaves running (an
    updater, a daemon) holds no pipe open, so the answer comes when ``cli`` exits. That
    process, in ``cli``'s own process group (POSIX), is killed then, as ``cli`` is on a
    timeout.

    Args:
        cli: The executable.
        timeout: Seconds it may take.

    Returns:
        ``(exit status, output)``; bytes that are not UTF-8 are replaced.

    Raises:
        OSError: It cannot be run.
        subprocess.TimeoutExpired: It took longer than ``timeout`` (it was killed).
    """
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [cli, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own process group, killed below
        )
        try:
            code = proc.wait(timeout)
        finally:
            if hasattr(os, "killpg"):
                with contextlib.suppress(OSError):  # none of it is left
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.kill()  # on a timeout where there is no group (a no-op once it exited)
            proc.wait()
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read(_VERSION_OUTPUT_BYTES).decode("utf-8", "replace").strip())
    return code, texts[0] or texts[1]
