"""Task functions for the Ray tests, imported by reference on the actors' workers: one
session holds its slot until another kills the actor's process from inside it."""

from __future__ import annotations

import os
from typing import Any

import anyio

_holding: anyio.Event | None = None  # set once a `hold` session runs in this process


async def hold(client: Any) -> str:
    """Keep the session open (its CLI running) until the process dies (bounded)."""
    global _holding
    if _holding is None:
        _holding = anyio.Event()
    _holding.set()
    with anyio.fail_after(60):
        await anyio.Event().wait()
    return "not reached"


async def exit_worker(client: Any) -> str:
    """Once a `hold` session runs in this process, end the process at once (a crash)."""
    global _holding
    if _holding is None:
        _holding = anyio.Event()
    with anyio.fail_after(60):
        await _holding.wait()
    os._exit(3)
