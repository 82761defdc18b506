"""Start a child with ``subprocess.Popen`` in a short-lived thread: the standard library
only, so that the CLI can be started before the rest of the connection machinery loads.

The kernel puts a new thread on an idle CPU, and the child it forks starts there,
instead of sharing the CPU the event loop keeps busy (see ``bench/README.md``,
handshake). `start_popen()` returns at once with a future of the child;
`abandon_popen()` kills and reaps a child nobody will take.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["abandon_popen", "kill_quietly", "spawn_kwargs", "start_popen"]


def spawn_kwargs(
    *, cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None, user: str | None
) -> dict[str, Any]:
    """``subprocess.Popen``'s keywords for a child with three pipes."""
    kwargs: dict[str, Any] = {
        "stdin": subprocess.PIPE,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "cwd": cwd,
        "env": env,
        "bufsize": 0,
    }
    if user is not None:
        kwargs["user"] = user
    return kwargs


def kill_quietly(popen: subprocess.Popen[bytes]) -> None:
    """Send ``SIGKILL`` unless the child has exited."""
    with contextlib.suppress(ProcessLookupError):  # exited, not yet reaped
        popen.kill()


def _kill_and_reap_in_thread(popen: subprocess.Popen[bytes]) -> None:
    kill_quietly(popen)
    threading.Thread(target=popen.wait, name=f"ccwire reap {popen.pid}", daemon=True).start()


def start_popen(
    loop: asyncio.AbstractEventLoop, argv: Sequence[str], kwargs: dict[str, Any]
) -> asyncio.Future[subprocess.Popen[bytes]]:
    """Run ``subprocess.Popen(argv, **kwargs)`` in a new thread; returns a future of it.

    If the future is cancelled before the child is handed over (`abandon_popen()`),
    the child is killed and reaped as soon as it exists: nothing is left running.
    """
    done: asyncio.Future[subprocess.Popen[bytes]] = loop.create_future()

    def settle(popen: subprocess.Popen[bytes] | None, exc: BaseException | None) -> None:
        if done.cancelled():  # abandoned: nobody takes the child
            if popen is not None:
                _kill_and_reap_in_thread(popen)
        elif exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(popen)  # type: ignore[arg-type]

    def spawn() -> None:
        popen: subprocess.Popen[bytes] | None = None
        error: BaseException | None = None
        try:
            popen = subprocess.Popen(argv, **kwargs)
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        if done.cancelled():  # abandoned while spawning: reaped here, not by settle(),
            if popen is not None:  # which a loop about to close may never run
                kill_quietly(popen)
                popen.wait()
            return
        try:
            loop.call_soon_threadsafe(settle, popen, error)
        except RuntimeError:  # the loop is closed: reap the child here
            if popen is not None:
                kill_quietly(popen)
                popen.wait()

    threading.Thread(target=spawn, name="ccwire spawn", daemon=True).start()
    return done


def abandon_popen(done: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    """Give up a `start_popen()` child that nobody took: kill and reap it (now if it
    exists, else as soon as it does)."""
    if done.cancel():
        return  # still spawning: settle() kills it
    if not done.cancelled() and done.exception() is None:
        _kill_and_reap_in_thread(done.result())
