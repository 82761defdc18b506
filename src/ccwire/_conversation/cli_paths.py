"""Where the CLI keeps its files: its config directory and the project key of a directory.

The CLI writes each session to
`<config dir>/projects/<project key>/<session id>.jsonl`, where the config dir is
`$CLAUDE_CONFIG_DIR` or `~/.claude`, and the project key is the session's working
directory with every character other than a letter or digit replaced by `-` (long
paths are cut at 200 characters and suffixed with a hash). The connection needs this to
mirror transcripts into a `SessionStore` and resume from one; the transcript readers
(`ccwire._sessions.transcripts.paths`) build on it.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "MAX_SANITIZED_LENGTH",
    "canonicalize_path",
    "cli_config_dir",
    "project_key_for_directory",
    "sanitize_path",
    "valid_uuid",
]

MAX_SANITIZED_LENGTH = 200
"""Longest project key kept verbatim; longer ones are cut and get a hash suffix."""

_UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE
)
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def valid_uuid(value: object) -> bool:
    """Tell whether `value` is a UUID in its canonical hyphenated form.

    Args:
        value: The candidate session or message id.

    Returns:
        `True` for `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, any case).
    """
    return isinstance(value, str) and _UUID_RE.match(value) is not None


def _js_hash36(text: str) -> str:
    """The CLI's 32-bit string hash (`h = h*31 + c`, JavaScript `|0`), in base 36."""
    h = 0
    for ch in text:
        h = ((h << 5) - h + ord(ch)) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    h = abs(h)
    if h == 0:
        return "0"
    digits: list[str] = []
    while h:
        h, rest = divmod(h, 36)
        digits.append(_BASE36[rest])
    return "".join(reversed(digits))


def sanitize_path(path: str) -> str:
    """Turn a directory path into its project key, as the CLI does.

    Args:
        path: An absolute, canonical directory path.

    Returns:
        The path with every non-alphanumeric character replaced by `-`; beyond
        200 characters, the first 200 plus `-` and a hash of the whole path.
    """
    sanitized = _NOT_ALNUM.sub("-", path)
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    return f"{sanitized[:MAX_SANITIZED_LENGTH]}-{_js_hash36(path)}"


def canonicalize_path(path: str) -> str:
    """Resolve symlinks and normalise to Unicode NFC, as the CLI does for its cwd.

    Args:
        path: Any directory path.

    Returns:
        The real, absolute, NFC-normalised path.
    """
    try:
        resolved = os.path.realpath(path)
    except OSError:
        resolved = path
    return unicodedata.normalize("NFC", resolved)


def project_key_for_directory(directory: str | os.PathLike[str] | None = None) -> str:
    """The project key the CLI files a directory's sessions under.

    Args:
        directory: The project directory; the current directory when `None`.

    Returns:
        The key, e.g. `-home-ann-src-app` for `/home/ann/src/app`: the name of the
        directory under `<config dir>/projects/` that holds its transcripts.

    Example:
        ```python
        from ccwire import project_key_for_directory

        project_key_for_directory("/home/ann/src/app")  # '-home-ann-src-app'
        ```
    """
    return sanitize_path(canonicalize_path(os.fspath(directory) if directory is not None else "."))


def cli_config_dir(env: Mapping[str, str]) -> Path:
    """The config directory of a CLI that runs with the environment `env`.

    Args:
        env: The CLI's whole environment (not only the variables an option adds).

    Returns:
        `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude` (this process's home directory when
        `env` has no `HOME`), NFC-normalised.
    """
    override = env.get("CLAUDE_CONFIG_DIR")
    if override:
        return Path(unicodedata.normalize("NFC", override))
    home = env.get("USERPROFILE" if sys.platform == "win32" else "HOME") or str(Path.home())
    return Path(unicodedata.normalize("NFC", str(Path(home) / ".claude")))
