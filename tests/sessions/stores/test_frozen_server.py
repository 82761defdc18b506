"""A PostgreSQL server that stops answering (frozen, not gone: its sockets stay open,
so nothing on the server side can time out) does not hold a store call forever."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlparse

import anyio
import psutil
import pytest

from ccwire import PostgresStore, SessionStoreError

pytestmark = pytest.mark.anyio

KEY = {"project_key": "frozen", "session_id": "s-1"}


@contextmanager
def frozen(dsn: str) -> Iterator[None]:
    """Stop (SIGSTOP) the server listening on the DSN's port and its backends; go on
    (SIGCONT) at the end."""
    port = urlparse(dsn).port
    (pid,) = {
        c.pid
        for c in psutil.net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
    }
    server = psutil.Process(pid)
    processes = [server, *server.children(recursive=True)]
    for p in processes:
        p.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        for p in processes:
            p.send_signal(signal.SIGCONT)


async def test_a_call_to_a_frozen_server_gives_up_with_a_typed_error(
    anyio_backend: str, postgres_dsn: str
) -> None:
    store = PostgresStore(postgres_dsn, connect_timeout=1, statement_timeout=0.5)
    try:
        await store.append(KEY, [{"type": "user", "uuid": "u1"}])  # type: ignore[arg-type]
        with frozen(postgres_dsn):
            with anyio.fail_after(30):  # a guard against the hang, not a timing check
                with pytest.raises(SessionStoreError, match="no answer within 2 s"):
                    await store.load(KEY)  # type: ignore[arg-type]
                with anyio.move_on_after(0) as scope:  # cancelled at its first wait
                    await store.load(KEY)  # type: ignore[arg-type]
                assert scope.cancelled_caught
        assert await store.load(KEY) == [{"type": "user", "uuid": "u1"}]  # type: ignore[arg-type]
    finally:
        await store.aclose()
