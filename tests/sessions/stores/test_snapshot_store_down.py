"""A session whose snapshot store (Redis) goes away mid-session: the session goes on,
and closing it says the store kept an older state instead of only logging it."""

from __future__ import annotations

import pytest

from ccwire import RedisStore, SessionState, SessionStoreError, StoreSnapshots
from tests.sessions.test_session_fake import finish_turn, harness, start

from .conftest import redis_port, redis_server

pytestmark = pytest.mark.anyio


async def test_close_raises_when_the_store_could_not_save_the_last_snapshot(
    anyio_backend: str,
) -> None:
    with redis_server() as server:
        store = RedisStore(f"redis://127.0.0.1:{redis_port(server)}/0", timeout=5)
        try:
            async with harness(store=store) as (agent, h):  # type: ignore[arg-type]
                session, fake, prompt = await start(agent, h)
                server.kill()  # the store goes away mid-turn
                server.wait()
                await finish_turn(fake, prompt["uuid"])
                info = await session.wait_for_completion(5)
                assert info.state is SessionState.COMPLETED  # the session did not mind
                with pytest.raises(SessionStoreError, match="could not save its last") as err:
                    await session.close()
                assert session.closed
                assert "completed" in str(err.value)
                assert isinstance(err.value.__cause__, SessionStoreError)  # Redis's error
                await session.close()  # reported once
        finally:
            await store.aclose()
    assert isinstance(agent.store, StoreSnapshots)
