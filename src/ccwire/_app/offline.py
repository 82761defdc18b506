"""Where offline runs keep their sessions.

``ccwire run --offline`` / ``--scripted`` and ``ccwire demo`` point the Claude Code CLI
at a scripted model. The CLI's config directory for those runs (its
``CLAUDE_CONFIG_DIR``: the transcripts under ``projects/``, its settings) is
``~/.ccwire/offline``, or ``$CCWIRE_OFFLINE_DIR`` when set: kept, so ``ccwire sessions
--offline`` lists those sessions and ``ccwire show`` finds them, and apart from your
own ``~/.claude``, so scripted conversations never mix with real ones.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["OFFLINE_DIR_ENV", "offline_dir", "reading_config_dir"]

OFFLINE_DIR_ENV = "CCWIRE_OFFLINE_DIR"
"""The environment variable that moves the offline runs' folder."""

_CONFIG_ENV = "CLAUDE_CONFIG_DIR"


def offline_dir(environ: Mapping[str, str]) -> Path:
    """The CLI's config directory for offline runs (see the module docstring).

    Args:
        environ: The environment (``CCWIRE_OFFLINE_DIR``, ``HOME``).

    Returns:
        ``$CCWIRE_OFFLINE_DIR``, else ``~/.ccwire/offline``.
    """
    configured = environ.get(OFFLINE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()) / ".ccwire" / "offline"


@contextlib.contextmanager
def reading_config_dir(config_dir: Path | None) -> Iterator[None]:
    """Read the CLI's transcripts from ``config_dir`` during the block (None: where the
    CLI keeps them for you, ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).

    The transcript readers find the config directory in the process's environment;
    the command line is one command per process, so it moves it there for the block
    and puts it back after.
    """
    if config_dir is None:
        yield
        return
    before = os.environ.get(_CONFIG_ENV)
    os.environ[_CONFIG_ENV] = str(config_dir)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_CONFIG_ENV, None)
        else:
            os.environ[_CONFIG_ENV] = before
