"""Every shipped `SessionStore` adapter passes the reference conformance contracts.

SQLite runs on a temporary file; PostgreSQL and Redis on real servers started by
`conftest.py`. Each contract gets a fresh, empty store: a new file, a new table
prefix, a new key prefix.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ccwire import InMemorySessionStore, PostgresStore, RedisStore, SessionStore, SQLiteStore
from ccwire.testing import run_session_store_conformance

pytestmark = pytest.mark.anyio

_counter = itertools.count()


async def test_in_memory_store_conforms() -> None:
    await run_session_store_conformance(InMemorySessionStore)


async def test_sqlite_store_conforms(tmp_path: Path) -> None:
    made: list[SQLiteStore] = []

    def make() -> SessionStore:
        made.append(SQLiteStore(tmp_path / f"{next(_counter)}.sqlite3"))
        return made[-1]

    await run_session_store_conformance(make)
    assert len(made) >= 14  # one fresh store per contract


@pytest.fixture
async def postgres_stores(postgres_dsn: str) -> AsyncIterator[list[PostgresStore]]:
    stores: list[PostgresStore] = []
    yield stores
    for store in stores:
        await store.aclose()


async def test_postgres_store_conforms(
    postgres_dsn: str, postgres_stores: list[PostgresStore]
) -> None:
    def make() -> SessionStore:
        postgres_stores.append(
            PostgresStore(postgres_dsn, table_prefix=f"c{uuid.uuid4().hex[:12]}")
        )
        return postgres_stores[-1]

    await run_session_store_conformance(make)
    assert len(postgres_stores) >= 14


async def test_redis_store_conforms(redis_url: str) -> None:
    stores: list[RedisStore] = []

    def make() -> SessionStore:
        stores.append(RedisStore(redis_url, prefix=f"t{uuid.uuid4().hex[:12]}"))
        return stores[-1]

    try:
        await run_session_store_conformance(make)
    finally:
        for store in stores:
            await store.aclose()
    assert len(stores) >= 14
