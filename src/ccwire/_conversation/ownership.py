"""One owner per session id: two CLIs must never write one conversation.

A connection that resumes a session (``resume=``), or starts one under a chosen id
(``session_id=``), claims that id for as long as it runs; a second claim is refused
with `SessionInUseError`, whichever way it comes: `ClaudeSDKClient`, `query()` or an
agent's session, in this process or in another process on this host.

Across processes the claim is an advisory lock (``flock``) on a file named after the
session id, in a folder of this user's (``$XDG_RUNTIME_DIR/ccwire/sessions``, else the
temporary folder): the operating system drops it when the process ends, however it
ends, so a crashed owner never leaves a session locked. The file holds the owner's
pid, for the error message. Where ``flock`` does not exist (Windows), the claim holds
within this process only.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import Final

from .._core.errors import SessionInUseError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: claims hold within this process
    fcntl = None  # type: ignore[assignment]

__all__ = ["SessionClaim", "claim_session", "claims_folder"]

_SAFE_ID: Final = re.compile(r"[A-Za-z0-9._-]{1,200}")
_held: dict[str, SessionClaim] = {}  # the claims of this process, by session id


def claims_folder() -> Path:
    """The folder of this user's session claims (made on first use, private)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(base) / f"ccwire-{uid}" / "sessions"


class SessionClaim:
    """A session id owned by one connection of this process, until `release()`."""

    def __init__(self, session_id: str, fd: int | None) -> None:
        self.session_id = session_id
        self._fd = fd

    def release(self) -> None:
        """Give the id up (idempotent)."""
        if _held.get(self.session_id) is self:
            del _held[self.session_id]
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # drops the lock


def claim_session(session_id: str) -> SessionClaim:
    """Own ``session_id`` until the claim is released.

    Raises:
        SessionInUseError: A connection of this process, or another process on this
            host, owns the id.
    """
    if session_id in _held:
        raise SessionInUseError(
            f"session {session_id} is already open in this process: one session id has "
            "one owner; continue it there, or close it first (fork_session=True copies "
            "it into a new session)",
            session_id=session_id,
            state="running",
        )
    fd = _lock(session_id) if fcntl is not None and _SAFE_ID.fullmatch(session_id) else None
    claim = _held[session_id] = SessionClaim(session_id, fd)
    return claim


def _lock(session_id: str) -> int:
    folder = claims_folder()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(folder / f"{session_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        other = _read_pid(fd)
        os.close(fd)
        raise SessionInUseError(
            f"session {session_id} is already open in another process"
            + (f" (pid {other})" if other else "")
            + ": one session id has one owner; close it there first "
            "(fork_session=True copies it into a new session)",
            session_id=session_id,
            state="running",
        ) from None
    except BaseException:
        os.close(fd)
        raise
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def _read_pid(fd: int) -> str:
    with contextlib.suppress(OSError):
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return text
    return ""
