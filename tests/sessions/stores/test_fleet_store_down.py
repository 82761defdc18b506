"""Many sessions against one session store that goes down, then comes back.

Twelve conversations mirror into one Redis server. The server is killed between two
turns: every conversation still gets its turn's result, with a `MirrorErrorMessage`
before it naming the store's error, and nothing waits on the dead server longer than
its timeout. The server comes back on the same port: the next turn of every
conversation mirrors again, with no error, into the same store object.
"""

from __future__ import annotations

import signal
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    Message,
    MirrorErrorMessage,
    RedisStore,
    ResultMessage,
)
from ccwire.testing import FakeCLI, memory_transport_pair

from .conftest import redis_port, redis_server

pytestmark = pytest.mark.anyio

CONFIG = "/fake-config"
SESSIONS = 12


def _frame(sid: str, uid: str) -> dict[str, Any]:
    return {
        "type": "transcript_mirror",
        "filePath": f"{CONFIG}/projects/-work/{sid}.jsonl",
        "entries": [{"type": "user", "uuid": uid, "sessionId": sid}],
    }


class Conversation:
    """One client over a fake CLI, driven turn by turn."""

    def __init__(self, n: int, store: RedisStore) -> None:
        self.sid = f"00000000-0000-4000-8000-{n:012d}"
        transport, peer = memory_transport_pair()
        self.fake = FakeCLI(peer)
        options = ClaudeAgentOptions(session_store=store, env={"CLAUDE_CONFIG_DIR": CONFIG})
        self.client = ClaudeSDKClient(options, transport=transport)

    async def turn(self, uid: str) -> list[Message]:
        await self.client.query("hi")
        await self.fake.receive("user")
        await self.fake.send(_frame(self.sid, uid))
        await self.fake.result()
        return [m async for m in self.client.receive_response()]


async def _all_turns(conversations: list[Conversation], uid: str) -> list[list[Message]]:
    got: list[list[Message]] = [[] for _ in conversations]

    async def one(i: int) -> None:
        got[i] = await conversations[i].turn(f"{uid}-{i}")

    async with anyio.create_task_group() as tg:
        for i in range(len(conversations)):
            tg.start_soon(one, i)
    return got


async def test_a_store_that_dies_and_comes_back_under_many_sessions() -> None:
    with redis_server() as first:
        port = redis_port(first)
        store = RedisStore(f"redis://127.0.0.1:{port}/0", timeout=2.0)
        conversations = [Conversation(n, store) for n in range(SESSIONS)]
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for c in conversations:
                    tg.start_soon(c.fake.handshake)
                for c in conversations:
                    await c.client.connect()
            before = await _all_turns(conversations, "up")
            first.send_signal(signal.SIGKILL)  # the store's server dies between two turns
            first.wait(timeout=10)
            down = await _all_turns(conversations, "down")
    with redis_server(port) as second:  # back, on the same port, empty
        with anyio.fail_after(60):
            after = await _all_turns(conversations, "back")
            for c in conversations:
                await c.client.disconnect()
            stored = [await store.load({"project_key": "-work", "session_id": c.sid})
                      for c in conversations]  # fmt: skip
        await store.aclose()
        second.terminate()
    for turn in before + after:
        assert [type(m) for m in turn] == [ResultMessage]
    for turn in down:  # every session got its result, the mirror's failure before it
        assert [type(m) for m in turn] == [MirrorErrorMessage, ResultMessage]
        error = turn[0]
        assert isinstance(error, MirrorErrorMessage) and "redis" in error.error.lower()
    for n, entries in enumerate(stored):  # what was mirrored after the restart is there
        assert entries is not None and [e["uuid"] for e in entries] == [f"back-{n}"]
