"""Crash a child Python process that runs a session, mid tool call."""

from __future__ import annotations

import os
import signal
import subprocess

import anyio
import anyio.to_thread
import pytest


def _spawn(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


async def kill_at_tool_call(argv: list[str], timeout: float) -> str:
    """Run ``argv`` (a child that prints ``SAVED <state> <session id>`` at each snapshot)
    until its session waits on a tool call, then SIGKILL it; its orphaned CLI sees its
    stdin close and exits (killed after 30 s). Returns the session id."""
    psutil = pytest.importorskip("psutil")
    child = _spawn(argv)
    try:

        def wait_for_tool_state() -> str:
            assert child.stdout is not None
            for line in child.stdout:
                parts = line.split()
                if parts[:2] == ["SAVED", "waiting_tool_call"]:
                    return parts[2]
            raise AssertionError("the child ended before its tool call was saved")

        with anyio.fail_after(timeout):
            sid = await anyio.to_thread.run_sync(wait_for_tool_state, abandon_on_cancel=True)
        orphans = psutil.Process(child.pid).children(recursive=True)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        # the CLI sees its stdin close: it ends the turn and exits by itself
        _, alive = await anyio.to_thread.run_sync(lambda: psutil.wait_procs(orphans, timeout=30))
        for proc in alive:
            proc.kill()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
    return sid
