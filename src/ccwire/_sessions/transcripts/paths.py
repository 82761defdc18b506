"""Where the CLI keeps its transcripts, and how a directory names its project.

The CLI writes each session to
`<config dir>/projects/<project key>/<session id>.jsonl`, where the config dir is
`$CLAUDE_CONFIG_DIR` or `~/.claude`, and the project key is the session's working
directory with every character other than a letter or digit replaced by `-` (long
paths are cut at 200 characters and suffixed with a hash).
"""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..._conversation.cli_paths import (
    MAX_SANITIZED_LENGTH,
    canonicalize_path,
    project_key_for_directory,
    sanitize_path,
    valid_uuid,
)

__all__ = [
    "CASE_INSENSITIVE",
    "MAX_SANITIZED_LENGTH",
    "candidate_project_dirs",
    "canonicalize_path",
    "config_home",
    "find_project_dir",
    "project_dir",
    "project_key_for_directory",
    "projects_dir",
    "sanitize_path",
    "valid_uuid",
    "worktree_paths",
]

CASE_INSENSITIVE = sys.platform == "win32"
"""Whether project keys compare case-insensitively (Windows file systems)."""


def config_home(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's config directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.

    Args:
        env: Variables read before `os.environ` (the ``env`` the CLI is given), so
            a ``CLAUDE_CONFIG_DIR`` there names the directory that CLI writes to.

    Returns:
        The directory, NFC-normalised.
    """
    override = (env or {}).get("CLAUDE_CONFIG_DIR") or os.environ.get("CLAUDE_CONFIG_DIR")
    if override:
        return Path(unicodedata.normalize("NFC", override))
    return Path(unicodedata.normalize("NFC", str(Path.home() / ".claude")))


def projects_dir(env: Mapping[str, str] | None = None) -> Path:
    """The directory holding one subdirectory of transcripts per project.

    Args:
        env: Variables read before `os.environ` (see `config_home()`).

    Returns:
        `config_home(env) / "projects"`.
    """
    return config_home(env) / "projects"


def project_dir(project_path: str) -> Path:
    """Where the CLI keeps the transcripts of `project_path` (which may not exist).

    Args:
        project_path: A canonical project path.

    Returns:
        `projects_dir()` / the project's key.
    """
    return projects_dir() / sanitize_path(project_path)


def find_project_dir(project_path: str) -> Path | None:
    """The directory holding the transcripts of `project_path`, if it exists.

    For paths longer than the 200-character limit the hash suffix may differ
    between CLI builds, so any directory with the same 200-character prefix counts.

    Args:
        project_path: A canonical project path.

    Returns:
        The project directory, or `None` when the project has no transcripts.
    """
    exact = project_dir(project_path)
    if exact.is_dir():
        return exact
    root, sanitized = exact.parent, exact.name
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
