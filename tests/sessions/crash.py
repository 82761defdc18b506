"""Crash a child Python process that runs a session, mid tool call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import anyio
import anyio.to_thread
import pytest

CHILD = textwrap.dedent(
    """
    import json, sys
    import anyio
    from ccwire import ClaudeAgentOptions, ClaudeCodeAgent, SQLiteSnapshotStore, StoreSnapshots
    from ccwire import PostgresStore, RedisStore, SQLiteStore
    from ccwire import create_sdk_mcp_server, tool

    cli, cwd, spec, env = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    kinds = {"sqlite": SQLiteStore, "postgres": PostgresStore, "redis": RedisStore}

    def announcing(base):
        class Announcing(base):
            async def save(self, info):
                await super().save(info)
                print("SAVED", info.state.value, info.session_id, flush=True)

        return Announcing

    @tool("slow", "A job that never ends", {"job": str})
    async def slow(args):
        await anyio.sleep_forever()

    async def main():
        options = ClaudeAgentOptions(
            cli_path=cli, cwd=cwd, env=env, allowed_tools=["mcp__jobs__slow"],
            mcp_servers={"jobs": create_sdk_mcp_server("jobs", tools=[slow])},
        )
        if spec["kind"] == "snapshots":
            store = announcing(SQLiteSnapshotStore)(spec["where"])
        else:
            store = announcing(StoreSnapshots)(kinds[spec["kind"]](spec["where"]))
        async with ClaudeCodeAgent(options, store=store) as agent:
            await agent.start_session("Remember the word PAPAYA, then run job C.")
            await anyio.sleep_forever()

    anyio.run(main)
    """
)
"""A child that runs a session with one tool call that never ends; it prints
``SAVED <state> <session id>`` at each snapshot. Its arguments: the CLI, the working
directory, the store (JSON: ``kind`` ``snapshots`` for an `SQLiteSnapshotStore`, else a
transcript store's, and ``where``) and the CLI's environment (JSON)."""


def _spawn(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


async def kill_at_tool_call(
    cli: str, cwd: str, store: dict[str, str], env: dict[str, str], timeout: float
) -> str:
    """Run `CHILD` until its session waits on its tool call, then SIGKILL it; its
    orphaned CLI sees its stdin close and exits (killed after 30 s). Returns the
    session id."""
    psutil = pytest.importorskip("psutil")
    child = _spawn([sys.executable, "-c", CHILD, cli, cwd, json.dumps(store), json.dumps(env)])
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
