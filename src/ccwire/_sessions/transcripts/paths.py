"""Where the CLI keeps its transcripts, and how a directory names its project.

The CLI writes each session to
`<config dir>/projects/<project key>/<session id>.jsonl`, where the config dir is
`$CLAUDE_CONFIG_DIR` or `~/.claude`, and the project key is the session's working
directory with every character other than a letter or digit replaced by `-` (long
paths are cut at 200 characters and suffixed with a hash).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "CASE_INSENSITIVE",
    "MAX_SANITIZED_LENGTH",
    "candidate_project_dirs",
    "canonicalize_path",
    "config_home",
    "find_project_dir",
    "project_key_for_directory",
    "projects_dir",
    "sanitize_path",
    "valid_uuid",
    "worktree_paths",
]

MAX_SANITIZED_LENGTH = 200
"""Longest project key kept verbatim; longer ones are cut and get a hash suffix."""

_UUID_RE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE
)
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

CASE_INSENSITIVE = sys.platform == "win32"
"""Whether project keys compare case-insensitively (Windows file systems)."""


def valid_uuid(value: str) -> bool:
    """Tell whether `value` is a UUID in its canonical hyphenated form.

    Args:
        value: The candidate session or message id.

    Returns:
        `True` for `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, any case).
    """
    return _UUID_RE.match(value) is not None


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


def config_home() -> Path:
    """The CLI's config directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.

    Returns:
        The directory, NFC-normalised.
    """
    override = os.environ.get("CLAUDE_CONFIG_DIR")
    if override:
        return Path(unicodedata.normalize("NFC", override))
    return Path(unicodedata.normalize("NFC", str(Path.home() / ".claude")))


def projects_dir() -> Path:
    """The directory holding one subdirectory of transcripts per project.

    Returns:
        `config_home() / "projects"`.
    """
    return config_home() / "projects"


def find_project_dir(project_path: str) -> Path | None:
    """The directory holding the transcripts of `project_path`, if it exists.

    For paths longer than the 200-character limit the hash suffix may differ
    between CLI builds, so any directory with the same 200-character prefix counts.

    Args:
        project_path: A canonical project path.

    Returns:
        The project directory, or `None` when the project has no transcripts.
    """
    root = projects_dir()
    sanitized = sanitize_path(project_path)
    exact = root / sanitized
    if exact.is_dir():
        return exact
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return None
    prefix = sanitized[:MAX_SANITIZED_LENGTH] + "-"
    try:
        for entry in root.iterdir():
            if entry.is_dir() and entry.name.startswith(prefix):
                return entry
    except OSError:
        pass
    return None


def worktree_paths(cwd: str) -> list[str]:
    """The roots of every git worktree of the repository containing `cwd`.

    Args:
        cwd: A directory, possibly inside a git repository.

    Returns:
        The worktree paths (NFC), main worktree first; empty when git is missing or
        `cwd` is not in a repository.
    """
    try:
        done = subprocess.run(
            ["git", "worktree", "list", "--porcelain"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    if done.returncode != 0 or not done.stdout:
        return []
    return [
        unicodedata.normalize("NFC", line[len("worktree ") :])
        for line in done.stdout.split("\n")
        if line.startswith("worktree ")
    ]


def candidate_project_dirs(directory: str | None) -> Iterator[tuple[Path, str | None]]:
    """The project directories to look in for one session, in lookup order.

    With `directory`: its own project directory, then those of its other git
    worktrees (git runs only if the first place did not have the session).
    Without: every project directory.

    Args:
        directory: The project path given by the caller, or `None` for all projects.

    Yields:
        `(project directory, project path)` pairs; the project path is `None` when
        searching all projects.
    """
    if not directory:
        try:
            entries = [e for e in projects_dir().iterdir() if e.is_dir()]
        except OSError:
            return
        for entry in entries:
            yield entry, None
        return
    canonical = canonicalize_path(directory)
    own = find_project_dir(canonical)
    if own is not None:
        yield own, canonical
    for tree in worktree_paths(canonical):
        if tree == canonical:
            continue
        found = find_project_dir(tree)
        if found is not None:
            yield found, tree
