"""What of the CLI's environment a spawner forwards to another machine or a container.

ccwire builds the CLI's complete environment here (`SpawnOptions.env`), and part of it
describes this machine: ``PATH``, ``HOME``, ``USER``, the temporary folder... A
spawner that runs the CLI elsewhere keeps the other side's own values of those
(`LOCAL_ONLY_ENV`) and forwards the rest (the API key, the model, ccwire's
variables), plus the variables it was given for the other side.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

__all__ = ["LOCAL_ONLY_ENV", "forwarded_env"]

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


def forwarded_env(
    env: Mapping[str, str],
    remote: Mapping[str, str],
    local_only: Iterable[str] = LOCAL_ONLY_ENV,
) -> dict[str, str]:
    """The variables to set on the other side.

    Args:
        env: The CLI's environment as ccwire built it.
        remote: Variables for the other side (win over ``env``, and may set names
            of ``local_only``).
        local_only: Names and shell-style patterns kept from the other side.

    Returns:
        ``env`` without ``local_only`` and without names a POSIX shell cannot set,
        updated with ``remote``.
    """
    patterns = tuple(local_only)
    out = {
        k: v
        for k, v in env.items()
        if _NAME.match(k) and not any(fnmatch.fnmatchcase(k, p) for p in patterns)
    }
    for key, value in remote.items():
        if not _NAME.match(key):
            raise ValueError(f"{key!r} is not a valid environment variable name")
        out[key] = value
    return out
