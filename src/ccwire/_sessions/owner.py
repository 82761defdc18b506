"""Which process runs a session, and telling a live session from the orphan of a crash.

Every snapshot a session saves names its `SessionOwner`: the host, the
pid and a random token drawn once per process. When the Python process dies mid-turn
nothing writes a final snapshot, so the store keeps the session in an active state;
`session_liveness()` tells such an orphan from a session that still runs.

This module also keeps the set of sessions running in this process, so that
``agent.resume_session`` can refuse to start a second CLI on a conversation that is
still live here.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
import weakref
from typing import Literal, Protocol

from .._core.errors import SessionInUseError
from .state import FINAL_STATES, SessionOwner, SessionState, SessionStateInfo

__all__ = [
    "SessionLiveness",
    "current_owner",
    "running_here",
    "session_liveness",
    "track",
    "untrack",
]

SessionLiveness = Literal["live", "orphaned", "ended", "unknown"]
"""What `session_liveness()` says of a stored snapshot."""


class _Running(Protocol):
    @property
    def session_id(self) -> str: ...

    @property
    def state(self) -> SessionState: ...


_token = uuid.uuid4().hex
_running: weakref.WeakSet[_Running] = weakref.WeakSet()


def _after_fork() -> None:  # pragma: no cover - runs in a forked child
    global _token
    _token = uuid.uuid4().hex
    _running.clear()  # the child runs none of its parent's sessions


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def current_owner() -> SessionOwner:
    """This process, as recorded in the snapshots of the sessions it runs."""
    return SessionOwner(host=socket.gethostname(), pid=os.getpid(), token=_token)


def track(session: _Running) -> None:
    """Claim `session`'s id for it in this process, from its start until it releases its CLI.

    One owner per session id: two CLIs writing one conversation would interleave their
    transcripts, so a second session with the id of one still running here (started
    by any agent, through `start()`, `resume_session()` or an explicit `session_id`)
    is refused.

    Args:
        session: The session about to start.

    Raises:
        SessionInUseError: Another session with this id runs in this process.
    """
    live = running_here(session.session_id)
    if live is not None and live is not session:
        raise SessionInUseError(
            f"session {session.session_id} is already running in this process "
            f"({live.state.value}): one session id has one owner; continue it with "
            "session.send(), or close it first",
            session_id=session.session_id,
            state=live.state.value,
        )
    _running.add(session)


def untrack(session: _Running) -> None:
    """``session`` no longer runs in this process."""
    _running.discard(session)


def running_here(session_id: str) -> _Running | None:
    """The session with this id running in this process (any agent), if any."""
    for session in list(_running):
        if session.session_id == session_id:
            return session
    return None


def _pid_running(pid: int) -> bool | None:
    """Whether a process with this pid exists on this host (``None``: cannot tell)."""
    if sys.platform == "win32" or pid <= 0:
        return None  # os.kill(pid, 0) would terminate the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except OSError:
        return None
    return True


def session_liveness(info: SessionStateInfo) -> SessionLiveness:
    """Whether the session of a stored snapshot still runs somewhere.

    * ``"live"``: it runs in this process (it holds a CLI here, whatever its state), or
      its snapshot is active and its owner process on this host still exists;
    * ``"orphaned"``: its snapshot is active but its owner is gone (this process, or
      a process on this host that no longer exists): the Python process died, or
      could not write the final snapshot. Continue it with ``agent.resume_session``;
    * ``"ended"``: its snapshot is at rest (``completed``, ``failed``, ``cancelled``)
      and it does not run here;
    * ``"unknown"``: its snapshot is active, but its owner is another host, or was not
      recorded (a hand-made snapshot, an older version), or this platform cannot check
      a pid (Windows).

    Other processes are checked by pid; pids are reused, so a process that died long
    ago can look ``"live"`` when an unrelated process got its pid.
    """
    if running_here(info.session_id) is not None:
        return "live"
    if info.state in FINAL_STATES:
        return "ended"
    owner = info.owner
    if owner is None:
        return "unknown"
    if owner.token == _token:
        return "orphaned"  # ours, but no session of this process runs it any more
    if owner.host != socket.gethostname():
        return "unknown"
    if owner.pid == os.getpid():
        return "orphaned"  # an earlier process that had our pid (a restarted container)
    running = _pid_running(owner.pid)
    if running is None:
        return "unknown"
    return "live" if running else "orphaned"
