"""What of the CLI's environment a spawner forwards to another machine or a container.

ccwire builds the CLI's complete environment here (`SpawnOptions.env`), and part of it
describes this machine: ``PATH``, ``HOME``, ``USER``, the temporary folder... A
spawner that runs the CLI elsewhere keeps the other side's own values of those
(`LOCAL_ONLY_ENV`) and forwards the rest (the API key, the model, ccwire's
variables), plus the variables it was given for the other side.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import logging
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from .._core.errors import OptionsError, SpawnError

__all__ = ["LOCAL_ONLY_ENV", "check_names", "check_operand", "forwarded_env", "masked_repr"]

LOCAL_ONLY_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_*",
    "SSH_*",
    "DISPLAY",
    "TERM",
    "HOSTNAME",
)
"""The variables that describe this machine: never forwarded (the other side keeps its
own), unless given again for the other side."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

logger = logging.getLogger("ccwire")

_WHY = (
    "is not a name a shell can set (letters, digits and '_', not starting with a digit), "
    "so it cannot be carried to the CLI"
)


def check_names(env: Mapping[str, str], owner: str) -> None:
    """Refuse the variables given to a spawner (``owner``) that a shell cannot set.

    Args:
        env: The spawner's own ``env``.
        owner: The spawner's class name, for the message.

    Raises:
        OptionsError: A name is not letters, digits and ``_``, starting with a letter
            or ``_``, or a value is not a string or holds NUL; it names the first
            one. Or ``env`` is not a mapping.
    """
    if not isinstance(env, Mapping):
        raise OptionsError(f"{owner}.env must be a mapping of names to values, got {env!r}")
    for key, value in env.items():
        if not isinstance(key, str) or not _NAME.match(key):
            raise OptionsError(f"{owner}.env: {key!r} {_WHY}")
        if not isinstance(value, str):
            raise OptionsError(f"{owner}.env[{key!r}] must be a string, got {type(value).__name__}")
        if "\0" in value:  # no environment can hold it: a shell would cut it silently
            raise OptionsError(f"{owner}.env[{key!r}] holds a NUL character")


def check_operand(value: object, field: str, what: str) -> None:
    """Refuse a ``value`` (the destination, the image: the operand of ``ssh`` or
    ``run``) that is not a non-empty str, or that starts with ``-``, which the command
    would read as an option of its own (``--privileged``).

    Raises:
        OptionsError: ``field`` must be ``what``, naming ``value``.
    """
    if not isinstance(value, str) or not value or value.startswith("-"):
        raise OptionsError(f"{field} must be {what}, got {value!r}")


def forwarded_env(
    env: Mapping[str, str],
    remote: Mapping[str, str],
    local_only: Iterable[str] = LOCAL_ONLY_ENV,
    *,
    explicit: Collection[str] = frozenset(),
    owner: str = "the spawner",
) -> dict[str, str]:
    """The variables to set on the other side.

    A variable of ``env`` whose name a POSIX shell cannot set (``A-B``, ``1A``...)
    cannot be carried there: one the caller set itself (``explicit``) is refused, any
    other (inherited from this process) is skipped and logged (debug).

    Args:
        env: The CLI's environment as ccwire built it.
        remote: Variables for the other side (win over ``env``, and may set names
            of ``local_only``; checked by `check_names()`).
        local_only: Names and shell-style patterns kept from the other side.
        explicit: The names of ``env`` the caller set (``SpawnOptions.explicit_env``).
        owner: The spawner, for the error message.

    Returns:
        ``env`` without ``local_only`` and without the names a shell cannot set,
        updated with ``remote``.

    Raises:
        SpawnError: A name of ``explicit`` a shell cannot set; it names the first one.
    """
    patterns = tuple(local_only)
    out: dict[str, str] = {}
    for key, value in env.items():
        if not _NAME.match(key):
            if key in explicit:
                raise SpawnError(f"{owner} cannot pass ClaudeAgentOptions.env[{key!r}]: it {_WHY}")
            logger.debug("ccwire: %s skips the inherited variable %r: it %s", owner, key, _WHY)
        elif not any(fnmatch.fnmatchcase(key, p) for p in patterns):
            out[key] = value
    out.update(remote)
    return out


def masked_repr(spawner: Any) -> str:
    """The ``repr()`` of a spawner dataclass, with the values of its ``env`` masked
    (their names shown), as ``ClaudeAgentOptions`` and `SpawnOptions` show theirs: an
    API key given for the other side must not reach a log or a traceback."""
    parts = []
    for f in dataclasses.fields(spawner):
        value = getattr(spawner, f.name)
        if f.name == "env" and isinstance(value, Mapping):
            value = dict.fromkeys(value, "***")
        parts.append(f"{f.name}={value!r}")
    return f"{type(spawner).__name__}({', '.join(parts)})"
