"""`ContainerSpawner`: run the CLI in a container (podman or docker).

``podman run`` (or ``docker run``) starts a fresh container from ``image`` for each
session, removed when it ends (``--rm``), with an init process (``--init``), the
session's work folder mounted read-write at the same path (``cwd``), ccwire's
private files mounted read-only at theirs, and the CLI's input attached (``-i``): when
ccwire closes it, the CLI exits and the container goes away; the runtime's client
passes SIGTERM on to the container.

The environment is passed as ``-e NAME`` with the value in the client's own
environment, so no value appears on a command line. Variables that describe this
machine (`LOCAL_ONLY_ENV`) are left out: the image's own are kept, unless given in
``env``. A name must be one a shell can set (letters, digits and ``_``, not starting
with a digit): one of ``ClaudeAgentOptions.env`` that is not is refused (`SpawnError`),
an inherited one is skipped (logged at debug level). The image needs the CLI (``cli``,
default ``claude`` on its ``PATH``).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import anyio.abc

from .._core.errors import CLINotFoundError, SpawnError
from .remote_env import LOCAL_ONLY_ENV, check_names, check_operand, forwarded_env, masked_repr
from .spawn import SpawnOptions, check_strings, spawn_local

__all__ = ["ContainerSpawner", "find_container_runtime"]

RUNTIMES = ("podman", "docker")
"""The container runtimes looked for, in this order."""


def find_container_runtime(runtime: str | None = None) -> str | None:
    """The container runtime's client: ``runtime`` if given and found, else podman or
    docker, whichever is installed first (``None``: neither)."""
    for name in (runtime,) if runtime else RUNTIMES:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


@dataclass(frozen=True, repr=False)
class ContainerSpawner:
    """A spawner that runs the CLI in a new container; see the module docstring.

    Pass it as ``ClaudeAgentOptions(spawn_claude_code_process=ContainerSpawner(image),
    cwd=work)``.

    Attributes:
        image: The image, with the CLI installed (a name, not starting with ``-``:
            else `OptionsError`).
        runtime: ``"podman"``, ``"docker"`` or a path to either; default: podman if
            installed, else docker.
        cli: The CLI's executable inside the image.
        volumes: More ``-v`` mounts (``"host:container[:options]"``).
        mount_cwd: Mount the session's work folder at the same path (read-write).
        env: Variables for the CLI inside, over what ccwire forwards (names a shell
            can set: else `OptionsError`).
        local_only: The variables never forwarded (default `LOCAL_ONLY_ENV`).
        extra_args: More ``run`` arguments, placed before the image.
    """

    image: str
    runtime: str | None = None
    cli: str = "claude"
    volumes: Sequence[str] = ()
    mount_cwd: bool = True
    env: Mapping[str, str] = field(default_factory=dict)
    local_only: Sequence[str] = LOCAL_ONLY_ENV
    extra_args: Sequence[str] = ()

    def __post_init__(self) -> None:
        check_names(self.env, "ContainerSpawner")
        check_strings(self, "volumes", "extra_args")
        check_operand(self.image, "ContainerSpawner.image", "an image name")

    def __repr__(self) -> str:
        return masked_repr(self)  # the values of env (API keys...) are not shown

    async def __call__(self, options: SpawnOptions) -> anyio.abc.Process:
        """Start the container; returns the runtime client's process.

        Args:
            options: What ccwire would start here.

        Returns:
            The ``podman run``/``docker run`` process: its pipes are the CLI's.

        Raises:
            CLINotFoundError: No container runtime is installed.
            SpawnError: A variable of ``ClaudeAgentOptions.env`` has a name a shell
                cannot set, or a folder to mount holds ``:``.
            CLIConnectionError: It cannot be started.
        """
        return await spawn_local(self.wrap(options))

    def wrap(self, options: SpawnOptions) -> SpawnOptions:
        """The ``run`` command for ``options``.

        Args:
            options: What ccwire would start here.

        Returns:
            What to start here: the runtime's client, the variables to pass in its
            own environment.

        Raises:
            CLINotFoundError: No container runtime is installed.
            SpawnError: A variable of ``ClaudeAgentOptions.env`` has a name a shell
                cannot set, or a folder to mount holds ``:``.
        """
        runtime = find_container_runtime(self.runtime)
        if runtime is None:
            wanted = self.runtime or " or ".join(RUNTIMES)
            raise CLINotFoundError(
                f"no container runtime found ({wanted})", searched=(self.runtime or "podman",)
            )
        env = forwarded_env(
            options.env,
            self.env,
            self.local_only,
            explicit=options.explicit_env,
            owner="ContainerSpawner",
        )
        name = f"ccwire-{secrets.token_hex(6)}"
        args = ["run", "--rm", "-i", "--init", "--name", name]
        if options.user is not None:
            args += ["--user", options.user]
        if options.cwd is not None:
            if self.mount_cwd:
                args += ["-v", _bind(options.cwd, "")]
            args += ["--workdir", options.cwd]
        for folder in dict.fromkeys(os.path.dirname(p) for p in options.private_files):
            args += ["-v", _bind(folder, ":ro")]
        for volume in self.volumes:
            args += ["-v", volume]
        for key in env:
            args += ["-e", key]
        args += [*self.extra_args, self.image, self.cli, *options.args]
        client_env = {**os.environ, **env}
        return SpawnOptions(command=runtime, args=tuple(args), env=client_env)


def _bind(folder: str, mode: str) -> str:
    """``-v`` for ``folder`` at the same path; `SpawnError` for a path ``-v`` cannot
    express (a ``:`` would be read as the separator of its fields)."""
    if ":" in folder:
        raise SpawnError(
            f"cannot mount {folder!r} into the container: '-v' reads ':' in a path as a "
            "separator; use a folder whose path has no ':'"
        )
    return f"{folder}:{folder}{mode}"
