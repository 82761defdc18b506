"""How the CLI's process is started: the spawn hook and the default, local spawner.

`SubprocessTransport` gets its process in one way only: it calls a *spawner* with a
`SpawnOptions` (the command line, working directory and environment ccwire built) and
uses what it returns. The default spawner, `spawn_local()`, starts the command here
with ``anyio.open_process``; ``ClaudeAgentOptions.spawn_claude_code_process`` replaces
it, to run the CLI in a sandbox, a container or on another machine (see
``_transport.bubblewrap``, ``_transport.ssh``, ``_transport.container``).

A spawner is a function, sync or async, that takes a `SpawnOptions` and returns a
process shaped like ``anyio.abc.Process`` (`SpawnedProcess`): byte streams ``stdin``,
``stdout`` (and ``stderr``, or ``None``), ``async wait()``, ``terminate()``,
``kill()``, ``returncode`` and, if it has them, ``pid`` and ``aclose()``. What it
returns is checked (`start_process()`): a spawner that raises, or returns
something else, gives a `SpawnError` saying why.
"""

from __future__ import annotations

import contextlib
import errno
import inspect
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, Union

import anyio
import anyio.abc
import anyio.to_thread

from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    CLINotFoundError,
    OptionsError,
    SpawnError,
)
from .line_writer import close_quietly

__all__ = [
    "SESSION_TAG",
    "STOP_TAGGED",
    "ProcessSpawner",
    "RunningProcess",
    "as_spawner",
    "check_strings",
    "shebang",
    "SpawnOptions",
    "SpawnedProcess",
    "spawn_local",
    "start_process",
]

logger = logging.getLogger("ccwire")

SESSION_TAG = "CCWIRE_SESSION_TAG"
"""The variable that marks a CLI ccwire starts (a random value of its own) and, as they
inherit it, the processes it starts. The CLI runs its tools in sessions of their own,
outside its process group, and stops them when it exits, which a killed CLI cannot do:
what it left running is found by it (`RunningProcess.left_behind()`; on another machine,
the remote shell of ``SSHSpawner`` does the same). Locally, the value starts with this
program's own (``<program>-<session>``): what carries it is stopped by the program's
watchdog when the program dies (`_Watchdog`)."""

STOP_TAGGED = """\
ccwire_stop() {
  ccwire_none=1
  for ccwire_f in $(grep -l "$ccwire_tag" /proc/[0-9]*/environ 2>/dev/null); do
    ccwire_f=${ccwire_f#/proc/}
    kill -"$1" "${ccwire_f%/environ}" 2>/dev/null && ccwire_none=0
  done
  return "$ccwire_none"
}
"""
"""A POSIX shell function: ``ccwire_stop SIGNAL`` sends ``SIGNAL`` (``0``: none, a
check) to each process whose environment holds ``$ccwire_tag`` (where ``/proc`` shows
environments: Linux; a zombie's is empty); it fails when none was signalled."""

_WATCHDOG = (
    STOP_TAGGED
    + """\
ccwire_tag=$1
cd / || :
exec 3<&0
(
  while IFS= read -r ccwire_line; do :; done
  ccwire_stop TERM || exit 0
  ccwire_stop CONT
  for ccwire_i in 1 2 3 4 5; do
    sleep 1
    ccwire_stop 0 || exit 0
  done
  ccwire_stop KILL
) 0<&3 3<&- >/dev/null 2>&1 &
"""
)
"""The watchdog's script (``sh -c _WATCHDOG ccwire-watchdog TAG_PREFIX``): a shell in
the background that reads its input, a pipe only this program writes to, until the
program dies (an end of file: nothing is ever written); then SIGTERM (and SIGCONT) to
each process that carries the program's tags, SIGKILL to those left 5 s later. The
shell that starts it exits at once (it is not this program's child); it holds no
folder (``cd /``)."""

_ENVIRONS_SHOWN = sys.platform != "win32" and os.path.exists("/proc/self/environ")
"""Whether ``/proc`` shows processes' environments, which the watchdog reads (Linux)."""

_WATCHDOG_START = 10.0
"""Seconds the watchdog's starting shell may take (it exits at once)."""


@dataclass(frozen=True)
class SpawnOptions:
    """What a spawner is asked to start: the CLI's command line, folder and environment.

    ``repr()`` shows the names of the environment variables, never their values.

    Attributes:
        command: The executable (the CLI ccwire found, or ``cli_path``).
        args: Its arguments (everything after the executable).
        cwd: The working directory (``ClaudeAgentOptions.cwd``); ``None``: this
            process's.
        env: The complete environment of the CLI (``inherit_env``, ``env`` and
            ccwire's own variables, already merged).
        user: ``ClaudeAgentOptions.user``: the OS user to run as, or ``None``.
        private_files: Files ccwire wrote for this process only (over-long or secret
            argument values, in a 0700 folder of this machine), named by absolute path
            in ``args``. A spawner that runs the CLI elsewhere must make them available
            there (at the same path, or rewriting ``args``).
        explicit_env: The names in ``env`` the caller set itself
            (``ClaudeAgentOptions.env``); the others were inherited from this process
            or are ccwire's own. A spawner that cannot carry a variable to where the
            CLI runs refuses one of these (`SpawnError` naming it) and may skip the
            others.
    """

    command: str
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    user: str | None = None
    private_files: tuple[str, ...] = ()
    explicit_env: frozenset[str] = frozenset()

    @property
    def argv(self) -> list[str]:
        """The whole command line: ``[command, *args]``."""
        return [self.command, *self.args]

    def __repr__(self) -> str:
        return (
            f"SpawnOptions(command={self.command!r}, args=<{len(self.args)} arguments>, "
            f"cwd={self.cwd!r}, env=<{', '.join(sorted(self.env))}>, user={self.user!r}, "
            f"private_files={self.private_files!r}, "
            f"explicit_env=<{', '.join(sorted(self.explicit_env))}>)"
        )


class SpawnedProcess(Protocol):
    """The shape of the process a spawner returns: what ``anyio.abc.Process`` offers.

    ``pid`` and ``aclose()`` are optional; ``stderr`` may be ``None`` (nothing is read
    from it then).
    """

    @property
    def stdin(self) -> anyio.abc.ByteSendStream | None:
        """The CLI's standard input."""
        ...

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        """The CLI's standard output (the NDJSON protocol)."""
        ...

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        """The CLI's standard error, or ``None``."""
        ...

    @property
    def returncode(self) -> int | None:
        """The exit status, ``None`` while the process runs."""
        ...

    async def wait(self) -> int:
        """Wait until the process has exited; returns its exit status."""
        ...

    def terminate(self) -> None:
        """Ask the process to stop (SIGTERM)."""
        ...

    def kill(self) -> None:
        """Stop the process now (SIGKILL)."""
        ...


ProcessSpawner = Callable[[SpawnOptions], Union[SpawnedProcess, Awaitable[SpawnedProcess]]]
"""A function (sync or async) that starts the CLI as `SpawnOptions` say and returns the
process (`SpawnedProcess`)."""


async def spawn_local(options: SpawnOptions) -> anyio.abc.Process:
    """Start the CLI on this machine, as a child process with three pipes.

    The default spawner (``anyio.open_process``). On POSIX the process starts a new
    session, so it leads its own process group, which holds what it starts (MCP
    servers, hooks, tools, or the real CLI behind a wrapper script); a terminal's Ctrl-C
    does not reach it (ccwire's own shutdown stops it). When it is the spawner, ccwire
    stops the whole group with the CLI. A spawner that wraps the command (a sandbox,
    ``nice``, ...) can start its own command line with it:
    ``await spawn_local(dataclasses.replace(options, command=..., args=...))``; its
    process is then signalled alone. The
    spawn itself is not interrupted by a cancellation, which takes effect right after:
    a spawner that awaits anything after it must stop the process if that raises.

    Args:
        options: What to start.

    Returns:
        The running process.

    Raises:
        CLINotFoundError: ``options.command`` does not exist.
        CLIConnectionError: It cannot be started (permission denied, a missing
            working directory, an unknown ``user``, ...).
    """
    exe = options.command
    try:
        # milliseconds, never interrupted: a child is never left half made (the caller
        # gets it, and a cancellation takes effect at its next checkpoint)
        with anyio.CancelScope(shield=True):
            proc = await anyio.open_process(
                options.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=options.cwd,
                env=dict(options.env),
                user=options.user,
                start_new_session=True,  # its own process group (ignored on Windows)
            )
    except (FileNotFoundError, NotADirectoryError) as exc:
        if options.cwd is not None and not await anyio.Path(options.cwd).is_dir():
            exists = await anyio.Path(options.cwd).exists()
            raise CLIConnectionError(
                "cannot start the Claude Code CLI: working directory "
                f"{os.fspath(options.cwd)!r} "
                + ("is not a directory" if exists else "does not exist")
            ) from exc
        interpreter = await anyio.to_thread.run_sync(_missing_interpreter, options)
        if interpreter is not None:
            raise CLIConnectionError(
                f"cannot start the Claude Code CLI at {exe!r}: it exists, but the "
                f"interpreter its first line names ({interpreter}) was not found; install "
                "it (Node.js) or reinstall the CLI"
            ) from exc
        raise CLINotFoundError(f"Claude Code not found at: {exe!r}", searched=(exe,)) from exc
    except PermissionError as exc:
        raise CLIConnectionError(
            f"cannot start the Claude Code CLI at {exe!r}: permission denied ({exc})"
        ) from exc
    except OSError as exc:
        if exc.errno == errno.E2BIG:  # "Argument list too long", most often the environment
            raise CLIConnectionError(_too_long(options)) from exc
        raise CLIConnectionError(f"cannot start the Claude Code CLI at {exe!r}: {exc}") from exc
    except (ValueError, KeyError, subprocess.SubprocessError) as exc:
        raise CLIConnectionError(f"cannot start the Claude Code CLI at {exe!r}: {exc}") from exc
    return proc


def _too_long(options: SpawnOptions) -> str:
    """Why the OS refused ``options`` as too long (E2BIG): the sizes of the command line
    and of the environment, and its largest variable (the usual culprit)."""
    env_bytes = sum(_size(k) + _size(v) + 2 for k, v in options.env.items())
    argv_bytes = sum(_size(a) + 1 for a in options.argv)
    message = (
        f"cannot start the Claude Code CLI at {options.command!r}: the OS refused its "
        f"command line and environment as too long ({argv_bytes} bytes of arguments, "
        f"{env_bytes} bytes in {len(options.env)} environment variables"
    )
    if options.env:
        name = max(options.env, key=lambda k: _size(options.env[k]))
        message += f"; the largest variable, {name}, holds {_size(options.env[name])} bytes"
    return message + "): pass fewer or shorter variables (ClaudeAgentOptions.env, inherit_env)"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _missing_interpreter(options: SpawnOptions) -> str | None:
    """The ``#!`` line of ``options.command``, when the command is a script that exists
    (so what was not found is its interpreter); else ``None``."""
    exe = options.command
    if os.sep not in exe:
        exe = shutil.which(exe, path=options.env.get("PATH", os.defpath)) or exe
    return shebang(exe)


def shebang(path: str) -> str | None:
    """The ``#!`` line of the file at ``path`` (its text, ``#!`` included), or ``None``:
    not a script, or not readable."""
    try:
        with open(path, "rb") as f:
            first = f.read(256).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    return first.decode("utf-8", "replace").strip()


def check_strings(owner: object, *names: str) -> None:
    """Refuse a field of a spawner (``owner``) that is not a sequence of strings.

    A lone string is refused too: it is a sequence, of its characters, and
    ``writable="/srv"`` would bind ``/`` (its first character) read-write.

    Args:
        owner: The spawner (a dataclass), named in the message.
        names: Its fields to check.

    Raises:
        OptionsError: Names the first field that is a string, not a sequence, or
            holds something other than a string.
    """
    for name in names:
        value = getattr(owner, name)
        where = f"{type(owner).__name__}.{name}"
        if isinstance(value, (str, bytes)):
            raise OptionsError(f"{where} must be a list of strings, not one string: [{value!r}]")
        if not isinstance(value, Sequence):
            raise OptionsError(f"{where} must be a list of strings, got {type(value).__name__}")
        for item in value:
            if not isinstance(item, str):
                raise OptionsError(
                    f"{where} must hold strings, got {type(item).__name__}: {item!r}"
                )


def as_spawner(obj: object) -> ProcessSpawner:
    """A spawner from what a reference (``--spawn package.module:attribute``) names.

    Args:
        obj: A spawner (a function or object called with `SpawnOptions`), or a
            spawner class that needs no arguments (``ccwire:BubblewrapSpawner``),
            which is instantiated.

    Returns:
        The spawner.

    Raises:
        TypeError: ``obj`` is neither.
    """
    if isinstance(obj, type):
        cls = obj
        try:
            obj = cls()
        except Exception as exc:
            raise TypeError(
                f"the spawner class {cls.__qualname__} cannot be made without arguments: {exc}"
            ) from exc
    if not callable(obj):
        raise TypeError(
            f"expected a spawner (a callable taking SpawnOptions), got {type(obj).__name__}"
        )
    return obj


def _name(spawner: object) -> str:
    name = getattr(spawner, "__qualname__", None) or type(spawner).__qualname__
    module = getattr(spawner, "__module__", None) or type(spawner).__module__
    return f"{module}.{name}" if module else str(name)


async def start_process(
    spawner: ProcessSpawner | None, options: SpawnOptions, *, timeout: float | None = None
) -> RunningProcess:
    """Start the CLI with ``spawner`` (default `spawn_local()`) and check the result.

    Args:
        spawner: The spawn hook, or ``None`` for the default.
        options: What to start.
        timeout: Seconds an async spawner may take (``None``: no limit); past them it
            is cancelled.

    Returns:
        The process, as the transport uses it.

    Raises:
        SpawnError: ``spawner`` raised something that is not a ccwire error, took
            longer than ``timeout``, or returned something that is not a usable
            process (which is killed, if it can be).
        CcwireError: What ``spawner`` raised, when it is one (e.g.
            `CLINotFoundError`).
    """
    spawn = spawn_local if spawner is None else spawner
    tag = None
    if spawner is None:  # its process is ours to stop, and what it leaves running
        tag = f"{SESSION_TAG}={await _WATCHDOG_OF_PROGRAM.token()}-{secrets.token_hex(8)}"
        options = replace(options, env={**options.env, SESSION_TAG: tag.partition("=")[2]})
    made: object = None
    try:
        with anyio.move_on_after(timeout) as scope:
            made = spawn(options)
            if inspect.isawaitable(made):
                made = await made
    except CcwireError:
        raise
    except Exception as exc:
        raise SpawnError(
            f"spawn_claude_code_process ({_name(spawn)}) raised {type(exc).__name__}: {exc}"
        ) from exc
    if scope.cancelled_caught:
        raise SpawnError(
            f"spawn_claude_code_process ({_name(spawn)}) did not return a process "
            f"within {timeout:g} s"
        )
    problem = _unusable(made)
    if problem is not None:
        _kill_quietly(made)
        raise SpawnError(
            f"spawn_claude_code_process ({_name(spawn)}) returned {type(made).__name__}, "
            f"which is not a usable process: {problem}"
        )
    process: SpawnedProcess = made  # type: ignore[assignment]  # checked by _unusable
    # the default spawner's process leads its own group: the group is stopped with it
    return RunningProcess(process, own_group=spawn is spawn_local, tag=tag)


def _unusable(obj: object) -> str | None:
    """Why ``obj`` cannot serve as the CLI's process (``None``: it can)."""
    if obj is None:
        return "nothing was returned"
    missing = [n for n in ("terminate", "kill") if not callable(getattr(obj, n, None))]
    wait = getattr(obj, "wait", None)
    if not callable(wait):
        missing.append("wait")
    elif not inspect.iscoroutinefunction(wait):
        return "wait() must be an async method (async def wait(self) -> int)"
    if not hasattr(obj, "returncode"):
        missing.append("returncode")
    if missing:
        return f"it has no {', '.join(missing)}"
    stdin = getattr(obj, "stdin", None)
    if stdin is None or not callable(getattr(stdin, "send", None)):
        return "its stdin is not a byte stream with an async send() (anyio.abc.ByteSendStream)"
    for name in ("stdout", "stderr"):
        stream = getattr(obj, name, None)
        if stream is None and name == "stderr":
            continue
        if stream is None or not callable(getattr(stream, "receive", None)):
            return (
                f"its {name} is not a byte stream with an async receive() "
                "(anyio.abc.ByteReceiveStream)"
            )
    return None


def _kill_quietly(obj: object) -> None:
    kill = getattr(obj, "kill", None)
    if callable(kill):
        with contextlib.suppress(Exception):  # best effort, on something already refused
            kill()


class RunningProcess:
    """The transport's view of a spawned process, whatever the spawner returned.

    Passes everything to the process; ``pid`` is ``None`` when it has none, and
    `aclose()` closes the streams itself when it has no ``aclose()``. When
    ``own_group`` is true (the process `spawn_local()` started) and the process leads
    its process group (POSIX), `terminate()` and `kill()` signal the whole group, and
    `group_alive()` tells whether any of it is left. With a ``tag`` (``NAME=value``,
    in the process's environment: `SESSION_TAG`), `left_behind()` finds what it left
    running once it has exited, outside its group too.
    """

    __slots__ = ("_group", "_inner", "_tag", "stderr", "stdin", "stdout")

    def __init__(
        self, inner: SpawnedProcess, *, own_group: bool = False, tag: str | None = None
    ) -> None:
        self._inner = inner
        self._group = _leader_pid(inner) if own_group else None
        self._tag = tag
        stdin, stdout = inner.stdin, inner.stdout
        assert stdin is not None and stdout is not None  # checked by start_process
        self.stdin: anyio.abc.ByteSendStream = stdin
        self.stdout: anyio.abc.ByteReceiveStream = stdout
        self.stderr: anyio.abc.ByteReceiveStream | None = inner.stderr

    @property
    def pid(self) -> int | None:
        """The process id, if the process has one here."""
        pid = getattr(self._inner, "pid", None)
        return pid if isinstance(pid, int) else None

    @property
    def returncode(self) -> int | None:
        """The exit status, ``None`` while it runs."""
        return self._inner.returncode

    async def wait(self) -> int:
        """Wait for the exit; returns the exit status.

        Raises:
            SpawnError: The process's own ``wait()`` raised (not a ccwire error).
        """
        try:
            return await self._inner.wait()
        except CcwireError:
            raise
        except Exception as exc:
            raise SpawnError(
                f"the CLI's process ({type(self._inner).__name__}) failed in wait(): "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    @property
    def process_group(self) -> int | None:
        """The process group signalled with the process (it leads it), or ``None``."""
        return self._group

    def terminate(self) -> None:
        """SIGTERM (or the spawner's equivalent); to the whole group if it leads one,
        then SIGCONT, so that a process of it that was stopped (SIGSTOP, a debugger's
        Ctrl-Z) handles its SIGTERM now rather than when SIGKILL comes.

        Raises:
            ProcessLookupError: The process (or its group) is gone.
        """
        if self._group is None:
            self._inner.terminate()
        else:
            os.killpg(self._group, signal.SIGTERM)
            os.killpg(self._group, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL (or the spawner's equivalent); to the whole group if it leads one.

        Raises:
            ProcessLookupError: The process (or its group) is gone.
        """
        if self._group is None:
            self._inner.kill()
        else:
            os.killpg(self._group, signal.SIGKILL)

    def group_alive(self) -> bool:
        """Whether a running process of its group is left (``False`` without a group).

        A zombie does not count (on Linux): its parent, or an init that does not reap
        orphans, keeps it until it is reaped, but it runs nothing.
        """
        if self._group is None:
            return False
        try:
            os.killpg(self._group, 0)
        except OSError:  # ProcessLookupError: none left; PermissionError: none of ours
            return False
        return _has_running_member(self._group)

    def left_behind(self) -> list[int]:
        """The running processes that carry the process's tag, once it has exited: what
        it started and left running, in its group or outside it (``[]``: no tag, it
        still runs, or ``/proc`` cannot tell)."""
        if self._tag is None or self.returncode is None:
            return []
        return _carrying(self._tag)

    def stop_left_behind(self, *, kill: bool) -> None:
        """SIGKILL, or SIGTERM (then SIGCONT, as `terminate()`), each process of
        `left_behind()`; one gone in the meantime is not an error."""
        for pid in self.left_behind():
            for sig in [signal.SIGKILL] if kill else [signal.SIGTERM, signal.SIGCONT]:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)

    async def aclose(self) -> None:
        """Release the process's resources (it has exited, or is about to)."""
        close = getattr(self._inner, "aclose", None)
        if callable(close):
            await close()
            return
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                await close_quietly(stream)


def _leader_pid(process: object) -> int | None:
    """``process``'s pid if it leads its process group (POSIX), else ``None``."""
    pid = getattr(process, "pid", None)
    if sys.platform == "win32" or not isinstance(pid, int):
        return None
    try:
        return pid if os.getpgid(pid) == pid else None
    except OSError:  # already gone
        return None


def _carrying(tag: str) -> list[int]:
    """The processes whose environment holds ``tag`` (``NAME=value``), where ``/proc``
    shows them (a zombie's is empty: it runs nothing)."""
    needle = b"\0" + os.fsencode(tag) + b"\0"
    return [pid for pid, environ in _each_process("environ") if needle in b"\0" + environ]


def _each_process(name: str) -> Iterator[tuple[int, bytes]]:
    """``(pid, content of /proc/<pid>/<name>)`` for each process ``/proc`` lets us read
    it of (one gone in the meantime, or not ours, is passed over); nothing where there
    is no ``/proc``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/{name}", "rb") as f:
                content = f.read()
        except OSError:
            continue
        yield int(entry), content


def _has_running_member(group: int) -> bool:
    """Whether process group ``group`` has a process that is not a zombie (``True``
    where ``/proc`` cannot tell)."""
    if not os.path.isdir("/proc"):
        return True
    for _pid, stat in _each_process("stat"):
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            return True
    return False


class _Watchdog:
    """This program's watchdog: what stops its CLIs, and what they started, when the
    program dies without closing them (SIGKILL, out of memory, a crash).

    A CLI whose program dies sees its input close, but it ends its turn first: a tool
    that runs (a Bash command) runs to its end, and the CLI with it. One process per
    program (not per session) watches: a shell (`_WATCHDOG`) started with the first
    session, which reads a pipe whose other end only this program holds; the kernel
    closes it when the program dies, however it dies. Every CLI's tag (`SESSION_TAG`)
    starts with the program's own value, which is the shell's argument (not in its
    environment). Where ``/proc`` shows no environments (macOS, Windows) there is no
    watchdog: a CLI outlives its killed program until its turn ends.

    A child made with ``os.fork()`` does not hold the pipe (it would keep the watchdog
    waiting for its own end): it starts a watchdog of its own if it runs sessions.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # programs may run event loops in several threads
        self._token: str | None = None
        self._pipe: int | None = None  # the end we hold, never written to

    async def token(self) -> str:
        """This program's value, which starts its CLIs' tags; the first call starts the
        watchdog (a failure to start it is logged, at debug level, and not raised)."""
        with self._lock:
            if self._token is not None:
                return self._token
            self._token = token = secrets.token_hex(8)
            if not _ENVIRONS_SHOWN:
                return token
            try:
                watched, self._pipe = os.pipe()  # neither end is inherited by what we start
            except OSError as exc:  # out of file descriptors
                logger.debug("ccwire: the watchdog of this program did not start: %s", exc)
                return token
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_WATCHDOG_START):
                argv = ["/bin/sh", "-c", _WATCHDOG, "ccwire-watchdog", f"{SESSION_TAG}={token}-"]
                async with await anyio.open_process(
                    argv,
                    stdin=watched,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    # not the tag of a CLI that runs this program (nested sessions): what
                    # stops that one stops this program, and then its watchdog's work
                    env={k: v for k, v in os.environ.items() if k != SESSION_TAG},
                    start_new_session=True,  # a terminal's Ctrl-C is not for it
                ) as shell:
                    await shell.wait()
        except OSError as exc:  # no /bin/sh, out of processes or file descriptors
            logger.debug("ccwire: the watchdog of this program did not start: %s", exc)
            self._close()  # not tried again: the sessions are not watched
        finally:
            os.close(watched)
        return token

    def forget(self) -> None:
        """In a child made with ``os.fork()``: drop the parent's pipe and value."""
        self._close()
        self._lock = threading.Lock()  # the parent's may have been held by another thread
        self._token = None

    def _close(self) -> None:
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
            self._pipe = None


_WATCHDOG_OF_PROGRAM = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG_OF_PROGRAM.forget)
