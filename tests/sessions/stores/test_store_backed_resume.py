"""Store-backed resume with the real CLI: the transcript lives only in PostgreSQL.

A child process runs the CLI with `session_mirror=True` and feeds its
`transcript_mirror` frames to a `TranscriptMirrorBatcher` over a `PostgresStore`
(eager flushes). It is SIGKILLed mid-turn, while a tool call is in flight, and its
local transcripts are deleted. This process then loads the session from PostgreSQL
into a temporary config dir (`materialize_resume_session`) and the CLI resumes it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from ccwire import ClaudeAgentOptions, ClaudeSDKClient, PostgresStore, ResultMessage
from ccwire._conversation.cli_paths import project_key_for_directory
from ccwire._conversation.transcript_store.resume import materialize_resume_session
from ccwire.testing import ScriptedModel, text, tool_use
from tests.e2e.conftest import CLI_PATH

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(CLI_PATH is None, reason="Claude Code CLI not installed (run `make cli`)"),
]

TIMEOUT = 60

_CHILD = textwrap.dedent(
    """
    import json, os, sys
    import anyio
    from ccwire import ClaudeAgentOptions, ClaudeSDKClient, PostgresStore
    from ccwire import TranscriptMirrorMessage, create_sdk_mcp_server, tool
    from ccwire._conversation.transcript_store.mirror import TranscriptMirrorBatcher

    cli, cwd, dsn, env = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])

    @tool("slow", "A job that never ends", {"job": str})
    async def slow(args):
        print("TOOL", flush=True)
        await anyio.sleep_forever()

    async def failed(key, message):
        print("MIRROR-ERROR", message, flush=True)

    async def main():
        options = ClaudeAgentOptions(
            cli_path=cli, cwd=cwd, env=env, allowed_tools=["mcp__jobs__slow"],
            session_mirror=True,
            mcp_servers={"jobs": create_sdk_mcp_server("jobs", tools=[slow])},
        )
        projects = os.path.join(env["HOME"], ".claude", "projects")
        store = PostgresStore(dsn)
        async with anyio.create_task_group() as tg:
            batcher = TranscriptMirrorBatcher(
                store, projects, failed, task_group=tg, flush_mode="eager"
            )
            async with ClaudeSDKClient(options) as client:
                await client.query("Remember the word PAPAYA, then run job C.")
                async for message in client.receive_messages():
                    if isinstance(message, TranscriptMirrorMessage):
                        batcher.enqueue(message.file_path, [dict(e) for e in message.entries])
                        await batcher.flush()
                        print("MIRRORED", message.file_path, flush=True)

    anyio.run(main)
    """
)


def _spawn(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # two real CLIs per run
async def test_a_session_killed_mid_turn_resumes_from_postgres_in_a_new_process(
    scripted_model: ScriptedModel, offline_env: dict[str, str], tmp_path: Path, postgres_dsn: str
) -> None:
    psutil = pytest.importorskip("psutil")
    scripted_model.add(tool_use("mcp__jobs__slow", {"job": "C"}))
    scripted_model.default = text("The word was PAPAYA.")
    cwd = tmp_path / "work"
    cwd.mkdir()
    assert CLI_PATH is not None
    child = _spawn(
        [sys.executable, "-c", _CHILD, CLI_PATH, str(cwd), postgres_dsn, json.dumps(offline_env)]
    )
    lines: list[str] = []
    try:

        def until_the_tool_runs() -> None:
            """Until the tool runs and the CLI has mirrored the prompt (its first frame)."""
            assert child.stdout is not None
            for line in child.stdout:
                lines.append(line)
                seen = {x.split()[0] for x in lines if x.strip()}
                if {"TOOL", "MIRRORED"} <= seen:
                    return
            raise AssertionError("the child ended before its tool ran:\n" + "".join(lines))

        with anyio.fail_after(TIMEOUT):
            await anyio.to_thread.run_sync(until_the_tool_runs, abandon_on_cancel=True)
        orphans = psutil.Process(child.pid).children(recursive=True)
        os.kill(child.pid, signal.SIGKILL)
        for proc in orphans:  # the CLI too: nothing ends the turn
            proc.kill()
        child.wait(10)
        await anyio.to_thread.run_sync(lambda: psutil.wait_procs(orphans, timeout=30))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
    assert not any(line.startswith("MIRROR-ERROR") for line in lines)
    mirrored = [line.split()[1] for line in lines if line.startswith("MIRRORED")]
    assert mirrored, "the CLI sent no transcript_mirror frame before the tool ran"
    session_id = Path(mirrored[0]).stem
    shutil.rmtree(Path(offline_env["HOME"]) / ".claude" / "projects")  # only the store has it

    store = PostgresStore(postgres_dsn)  # a new connection, as a new process would make
    try:
        key = {"project_key": project_key_for_directory(cwd), "session_id": session_id}
        stored = await store.load(key)  # type: ignore[arg-type]
        assert stored is not None
        assert any("PAPAYA" in json.dumps(e) for e in stored if e.get("type") == "user")

        materialized = await materialize_resume_session(
            store, cwd=cwd, resume=session_id, env=offline_env
        )
        assert materialized is not None and materialized.resume_session_id == session_id
        options = ClaudeAgentOptions(
            cli_path=CLI_PATH, cwd=str(cwd), env=materialized.env(offline_env), resume=session_id
        )
        try:
            with anyio.fail_after(TIMEOUT):
                async with ClaudeSDKClient(options) as client:
                    await client.query("What was the word?")
                    results = [
                        m async for m in client.receive_response() if isinstance(m, ResultMessage)
                    ]
        finally:
            await materialized.cleanup()
        assert not materialized.config_dir.exists()
        assert results and results[-1].result == "The word was PAPAYA."
        history = json.dumps(scripted_model.turn_requests[-1].body["messages"])
        assert "Remember the word PAPAYA" in history and "What was the word?" in history
    finally:
        await store.aclose()
