"""`SSHSpawner`: run the CLI on another machine over SSH (OpenSSH's client).

The local process is ``ssh``; its stdin, stdout and stderr are the remote CLI's. What
travels how:

* ``ssh``'s command line holds only the destination, the SSH options and a fixed
  bootstrap (``exec /bin/sh -c '...'``): no argument of the CLI, no variable;
* the first line ``ssh`` writes to the remote shell is a base64 script that sets the
  environment, writes ccwire's private files (over-long or secret argument values) to
  a private temporary folder there, changes to ``cwd`` and starts the CLI; the remote
  shell reads it from stdin with builtins only (``read``, ``eval``, ``printf``), so no
  secret appears on a command line on either machine;
* everything after that line is the CLI's own input.

The remote CLI ends with the session: ccwire closes its input, and it exits. When the
connection drops instead (ccwire stops ``ssh``, the network fails), a watchdog on the
remote side sees the SSH session end and stops the CLI (SIGTERM, SIGKILL 5 s later),
within about a second. So each session has a connection of its own: ``ssh`` never
multiplexes it over a shared one (``ControlMaster`` and ``ControlPath`` of the SSH
configuration are overridden), which would outlive it. A CLI that ends killed (out of
memory, SIGKILL) cannot stop the tools it started: the remote shell stops them (on
Linux, see `_RUN`). The remote side needs a POSIX ``sh``, ``base64``, ``mktemp`` and
``grep``, and the CLI (``cli``, default ``claude`` on the remote ``PATH``).

Variables that describe this machine (`LOCAL_ONLY_ENV`: ``PATH``, ``HOME``, ...) are
not forwarded: the remote login's own are kept, unless given in ``env``. The others of
the CLI's environment are (with ``inherit_env=True``, the default, that is this
process's whole environment: ``inherit_env=CLI_ENV_ALLOWLIST`` sends only what the CLI
needs). The remote shell sets them, so a name must be one a shell can set (letters,
digits and ``_``, not starting with a digit): one of ``ClaudeAgentOptions.env`` that is
not is refused (`SpawnError`), an inherited one is skipped (logged at debug level).
"""

from __future__ import annotations

import base64
import os
import secrets
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.abc

from .._core.errors import CLINotFoundError, OptionsError, SpawnError
from .remote_env import LOCAL_ONLY_ENV, check_names, check_operand, forwarded_env, masked_repr
from .spawn import SESSION_TAG, STOP_TAGGED, SpawnOptions, check_strings, spawn_local

__all__ = ["SSHSpawner"]

_CONNECT_TIMEOUT = 15  # seconds ssh waits for the host to answer at all

_BOOTSTRAP = 'IFS= read -r ccwire_boot || exit 125; eval "$(printf %s "$ccwire_boot" | base64 -d)"'
"""Read the first line of stdin (base64) and run it, with builtins and ``base64`` only."""

_RUN = """\
ccwire_parent=$PPID
ccwire_tag={variable}={token}
{stop}exec 3<&0
{variable}={token} {command} 0<&3 3<&- &
ccwire_cli=$!
exec 3<&- 0</dev/null >/dev/null 2>&1
(
  ccwire_nap=
  trap 'if [ -n "$ccwire_nap" ]; then kill "$!" 2>/dev/null; wait; fi; exit 0' TERM
  ccwire_sleep() {{ ccwire_nap=1; sleep "$1" & wait "$!"; ccwire_nap=; }}
  while kill -0 "$ccwire_parent" 2>/dev/null; do
    kill -0 "$ccwire_cli" 2>/dev/null || exit 0
    ccwire_sleep 1
  done
  kill -TERM "$ccwire_cli" 2>/dev/null
  ccwire_sleep 5
  kill -KILL "$ccwire_cli" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
ccwire_watch=$!
wait "$ccwire_cli"
ccwire_rc=$?
kill "$ccwire_watch" 2>/dev/null
wait "$ccwire_watch"
if [ "$ccwire_rc" -ne 0 ] && ccwire_stop TERM; then
  sleep 1
  ccwire_stop KILL
fi
if [ -n "$ccwire_d" ]; then rm -rf "$ccwire_d"; fi
exit "$ccwire_rc"
"""
"""Start the CLI in the background on the session's input, watch the SSH session (the
shell's parent, the sshd process of this connection) and stop the CLI if it ends. The
watchdog naps in the background (``wait`` returns at a signal; ``sleep`` would not), so
that, stopped when the CLI exits, it stops its nap too and the shell waits for it (it
marks a nap before it starts one: stopped as the ``sleep`` starts, it stops that one):
nothing of the session is left on the remote machine when the shell exits. Once the
CLI runs, the shell writes nowhere: its output is the SSH channel, which a dropped
connection breaks (a shell reporting a job "Terminated" there dies of SIGPIPE before
its clean-up).

The CLI runs its tools in sessions of their own (not in this shell's process group)
and stops them when it exits, which it cannot do when it is killed (out of memory,
SIGKILL, or by the watchdog after SIGTERM went unheeded). So the CLI starts with a
variable of its own (`SESSION_TAG`, a random value), which what it starts inherits;
when it exits with a failure, the shell stops (SIGTERM, SIGKILL a second later) each
process that still carries it (`STOP_TAGGED`, where ``/proc`` shows environments: Linux)."""


@dataclass(frozen=True, repr=False)
class SSHSpawner:
    """A spawner that runs the CLI on another machine over SSH; see the module docstring.

    Pass it as ``ClaudeAgentOptions(spawn_claude_code_process=SSHSpawner("me@build-box"),
    cwd="/srv/work/project")``: ``cwd`` is a folder of the remote machine.

    Attributes:
        host: The destination: ``host``, ``user@host`` or a ``Host`` of the SSH
            configuration.
        cli: The CLI's executable on the remote machine (a path, or a name found on the
            remote login's ``PATH``).
        port: The SSH port, 1 to 65535 (default: the configuration's).
        identity_file: The private key to log in with.
        ssh_options: More ``-o Key=Value`` options (e.g. ``{"UserKnownHostsFile":
            "..."}``), over the defaults (``ServerAliveInterval=15``,
            ``ServerAliveCountMax=3``, ``ConnectTimeout=15``: a host that never answers
            is an error after 15 s) and the configuration; not ``BatchMode``,
            ``ControlMaster`` nor ``ControlPath`` (see the module docstring). Names and
            one-line string values: else `OptionsError`.
        config_file: An SSH configuration file (``-F``); ``"/dev/null"`` ignores the
            user's.
        env: Variables for the remote CLI, over what ccwire forwards (names a shell
            can set: else `OptionsError`).
        local_only: The variables never forwarded (default `LOCAL_ONLY_ENV`).
        ssh: The ``ssh`` executable.
        extra_args: More ``ssh`` arguments, placed before the destination.
    """

    host: str
    cli: str = "claude"
    port: int | None = None
    identity_file: str | None = None
    ssh_options: Mapping[str, str] = field(default_factory=dict)
    config_file: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    local_only: Sequence[str] = LOCAL_ONLY_ENV
    ssh: str = "ssh"
    extra_args: Sequence[str] = ()

    def __post_init__(self) -> None:
        check_names(self.env, "SSHSpawner")
        check_strings(self, "extra_args")
        options = self.ssh_options
        if not isinstance(options, Mapping):
            raise OptionsError(
                f"SSHSpawner.ssh_options must be a mapping ({{'Key': 'value'}}), got {options!r}"
            )
        for key, value in options.items():  # each one `-o Key=value`
            if not isinstance(key, str) or not key.isalnum() or not key.isascii():
                raise OptionsError(f"SSHSpawner.ssh_options: {key!r} is not an SSH option name")
            if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
                raise OptionsError(
                    f"SSHSpawner.ssh_options[{key!r}] must be a one-line string, got {value!r}"
                )
        check_operand(self.host, "SSHSpawner.host", "a destination (host, user@host)")
        port = self.port
        if port is not None and (
            isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536
        ):
            raise OptionsError(f"SSHSpawner.port must be a port number (1 to 65535), got {port!r}")

    def __repr__(self) -> str:
        return masked_repr(self)  # the values of env (API keys...) are not shown

    async def __call__(self, options: SpawnOptions) -> _SSHProcess:
        """Start ``ssh``; the start-up line goes out ahead of the session's first line.

        Args:
            options: What ccwire would start here.

        Returns:
            The ``ssh`` process: its pipes are the remote CLI's, its exit status the
            CLI's (255: the connection failed; ``ssh``'s message is on stderr).

        Raises:
            CLINotFoundError: ``ssh`` is not installed.
            SpawnError: ``options.user`` is set, a private file cannot be read, or a
                variable of ``ClaudeAgentOptions.env`` has a name a shell cannot set.
        """
        local, script = self.wrap(options)
        return _SSHProcess(await spawn_local(local), script)

    def wrap(self, options: SpawnOptions) -> tuple[SpawnOptions, bytes]:
        """The local ``ssh`` command and the first line to write to it.

        Args:
            options: What ccwire would start here.

        Returns:
            ``(what to start here, the start-up line)``: the line carries the
            environment, the private files and the CLI's command line.

        Raises:
            CLINotFoundError: ``ssh`` is not installed.
            SpawnError: ``options.user`` is set, a private file cannot be read, or a
                variable of ``ClaudeAgentOptions.env`` has a name a shell cannot set.
        """
        ssh = shutil.which(self.ssh)
        if ssh is None:
            raise CLINotFoundError(
                f"the SSH client ({self.ssh!r}) is not installed: install OpenSSH's client "
                "(apt-get install openssh-client)",
                searched=(self.ssh,),
            )
        if options.user is not None:
            raise SpawnError(
                "ClaudeAgentOptions.user is not used by SSHSpawner: name the remote user "
                "in the destination ('user@host')"
            )
        # ssh takes the first value it is given for an option: what must hold comes
        # first, then what was asked for, then the defaults. Never a password prompt, and
        # a connection of its own, never one shared with other sessions (a ControlMaster
        # of the configuration): the remote watchdog watches it, which a shared one outlives
        args = ["-T", "-e", "none", "-o", "BatchMode=yes"]
        args += ["-o", "ControlMaster=no", "-o", "ControlPath=none"]
        if self.config_file is not None:
            args += ["-F", self.config_file]
        if self.port is not None:
            args += ["-p", str(self.port)]
        if self.identity_file is not None:
            args += ["-i", self.identity_file]
        for key, value in self.ssh_options.items():
            args += ["-o", f"{key}={value}"]
        args += ["-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"]
        args += ["-o", f"ConnectTimeout={_CONNECT_TIMEOUT}"]  # a host that never answers
        args += [*self.extra_args, "--", self.host, f"exec /bin/sh -c {shlex.quote(_BOOTSTRAP)}"]
        local = SpawnOptions(command=ssh, args=tuple(args), env=dict(os.environ))
        return local, self.script(options)

    def script(self, options: SpawnOptions) -> bytes:
        """The start-up line: a base64 shell script, and its newline."""
        q = shlex.quote
        env = forwarded_env(
            options.env,
            self.env,
            self.local_only,
            explicit=options.explicit_env,
            owner="SSHSpawner",
        )
        lines = ["umask 077", *(f"export {k}={q(v)}" for k, v in env.items())]
        files: dict[str, str] = {}
        if options.private_files:
            lines.append('ccwire_d=$(mktemp -d "${TMPDIR:-/tmp}/ccwire-XXXXXX") || exit 125')
            for path in options.private_files:
                name = files[path] = f"{len(files)}-{os.path.basename(path)}"
                try:
                    with open(path, "rb") as fh:
                        data = base64.b64encode(fh.read()).decode("ascii")
                except OSError as exc:
                    raise SpawnError(f"cannot read ccwire's private file {path!r}: {exc}") from exc
                lines.append(f'printf %s {data} | base64 -d > "$ccwire_d"/{q(name)} || exit 125')
        else:
            lines.append("ccwire_d=")
        if options.cwd is not None:
            lines.append(f"cd -- {q(options.cwd)} || exit 125")
        words = [q(self.cli)]
        words += [f'"$ccwire_d"/{q(files[a])}' if a in files else q(a) for a in options.args]
        token = secrets.token_hex(8)
        lines.append(
            _RUN.format(
                command=" ".join(words),
                variable=SESSION_TAG,
                token=token,
                stop=STOP_TAGGED,
            )
        )
        # bytes that are not UTF-8 (in an inherited variable, a path) are held as
        # surrogates: they go back to their own bytes, as the OS would pass them
        return base64.b64encode(os.fsencode("\n".join(lines))) + b"\n"


class _HeaderFirst(anyio.abc.ByteSendStream):
    """``ssh``'s stdin: the start-up line goes out with the first write (so starting
    ``ssh`` never waits for the connection), then everything as it comes."""

    def __init__(self, inner: anyio.abc.ByteSendStream, header: bytes) -> None:
        self._inner = inner
        self._header: bytes | None = header

    async def send(self, item: bytes) -> None:
        header, self._header = self._header, None
        await self._inner.send(item if header is None else header + item)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _SSHProcess:
    """The ``ssh`` process, its stdin sending the start-up line first."""

    def __init__(self, proc: anyio.abc.Process, header: bytes) -> None:
        assert proc.stdin is not None
        self._proc = proc
        self.stdin: anyio.abc.ByteSendStream = _HeaderFirst(proc.stdin, header)
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def pid(self) -> int:
        """The local ``ssh`` process's id."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """``ssh``'s exit status: the remote CLI's, or 255."""
        return self._proc.returncode

    async def wait(self) -> int:
        """Wait for ``ssh`` to exit."""
        return await self._proc.wait()

    def terminate(self) -> None:
        """End ``ssh`` (the remote side's watchdog ends the CLI)."""
        self._proc.terminate()

    def kill(self) -> None:
        """Kill ``ssh`` (likewise)."""
        self._proc.kill()

    async def aclose(self) -> None:
        """Release ``ssh``'s pipes (it has exited, or is about to)."""
        await self._proc.aclose()
