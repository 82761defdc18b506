"""Beyond the conformance contracts: concurrent writers, idempotent uuids, odd JSON, and
typed errors that never show a password, on each adapter against its real server."""

from __future__ import annotations

import contextlib
import json
import pickle
import socket
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from ccwire import (
    CcwireError,
    InMemorySessionStore,
    MissingExtraError,
    OptionsError,
    PostgresStore,
    RedisStore,
    SessionKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreError,
    SQLiteStore,
    fold_session_summary,
)

pytestmark = pytest.mark.anyio

KEY: SessionKey = {"project_key": "proj", "session_id": "sess"}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once it is closed


async def _open(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    kind = request.param
    made: Any
    if kind == "memory":
        made = InMemorySessionStore()
    elif kind == "sqlite":
        made = SQLiteStore(tmp_path / "s.sqlite3")
    elif kind == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        made = PostgresStore(dsn, table_prefix=f"a{uuid.uuid4().hex[:12]}")
    else:
        made = RedisStore(request.getfixturevalue("redis_url"), prefix=uuid.uuid4().hex)
    yield made
    if hasattr(made, "aclose"):
        await made.aclose()


@pytest.fixture(params=["sqlite", "postgres", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    async for made in _open(request, tmp_path):
        yield made


@pytest.fixture(params=["memory", "sqlite", "postgres", "redis"])
async def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    async for made in _open(request, tmp_path):
        yield made


def e(**fields: Any) -> SessionStoreEntry:
    return cast("SessionStoreEntry", {"type": "x", **fields})


async def test_concurrent_appends_keep_every_entry_and_a_consistent_summary(
    store: SessionStore,
) -> None:
    async with anyio.create_task_group() as tg:
        for i in range(16):
            tg.start_soon(store.append, KEY, [e(uuid=f"u{i}", customTitle=f"t{i}")])
    loaded = await store.load(KEY)
    assert loaded is not None and sorted(x["uuid"] for x in loaded) == sorted(
        f"u{i}" for i in range(16)
    )
    (summary,) = await store.list_session_summaries("proj")
    # the summary is the fold of the entries in stored order: no fold was lost to a race
    assert summary["data"] == fold_session_summary(None, KEY, loaded)["data"]


async def test_uuids_are_idempotency_keys_and_entries_without_one_are_kept(
    store: SessionStore,
) -> None:
    await store.append(KEY, [e(uuid="a"), e(n=1), e(uuid="a")])
    await store.append(KEY, [e(uuid="a"), e(n=1)])
    assert await store.load(KEY) == [e(uuid="a"), e(n=1), e(n=1)]


async def test_any_json_round_trips(store: SessionStore) -> None:
    odd = e(
        uuid="odd",
        text="nul \u0000, emoji \U0001f600, lone surrogate-free \u2028",
        nested={"list": [1, 2.5, None, True, {"k": "v"}], "empty": {}},
        big=2**53 + 1,
    )
    await store.append(KEY, [odd])
    assert await store.load(KEY) == [odd]


def _corrupt_the_summary(store: Any) -> None:
    """Overwrite the stored summary of `KEY` with text that is not JSON, with the driver."""
    if isinstance(store, SQLiteStore):
        with contextlib.closing(sqlite3.connect(store.path)) as db, db:
            db.execute("UPDATE ccwire_summaries SET data = '{oops'")
    elif isinstance(store, PostgresStore):
        import psycopg

        with psycopg.connect(store.dsn, autocommit=True) as conn:
            conn.execute(f"UPDATE {store.table_prefix}_summaries SET data = '{{oops'")
    else:
        import redis

        with redis.Redis.from_url(store.url) as client:
            tag = json.dumps([KEY["project_key"], KEY["session_id"]], separators=(",", ":"))
            client.set(f"{store.prefix}:summary:{tag}", "{oops")


async def test_a_failed_append_leaves_nothing_behind_and_the_store_keeps_working(
    store: SessionStore,
) -> None:
    await store.append(KEY, [e(uuid="a")])
    (before,) = await store.list_sessions("proj")
    _corrupt_the_summary(store)
    with pytest.raises(SessionStoreError, match="not valid JSON"):
        await store.append(KEY, [e(uuid="b"), e(n=1)])
    # the entries, the write time and the summary are as they were: one transaction
    assert await store.load(KEY) == [e(uuid="a")]
    assert await store.list_sessions("proj") == [before]
    with pytest.raises(SessionStoreError, match="not valid JSON"):
        await store.list_session_summaries("proj")
    sub: SessionKey = {**KEY, "subpath": "subagents/agent-1"}
    await store.append(sub, [e(uuid="c")])  # no summary there: the same connections serve
    assert await store.load(sub) == [e(uuid="c")]
    await store.delete(KEY)
    await store.append(KEY, [e(uuid="b")])
    assert await store.load(KEY) == [e(uuid="b")]
    assert [s["data"]["is_sidechain"] for s in await store.list_session_summaries("proj")] == [
        False
    ]


async def test_sqlite_reads_go_on_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = SQLiteStore(path, timeout=0)  # a call that needs the write lock fails at once
    await store.append(KEY, [e(uuid="a")])
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        assert await store.load(KEY) == [e(uuid="a")]
        assert [s["session_id"] for s in await store.list_sessions("proj")] == ["sess"]
        assert len(await store.list_session_summaries("proj")) == 1
        assert await store.list_subkeys(KEY) == []
        with pytest.raises(SessionStoreError, match="locked"):
            await store.append(KEY, [e(uuid="b")])
        writer.execute("ROLLBACK")
    await store.append(KEY, [e(uuid="b")])
    assert await store.load(KEY) == [e(uuid="a"), e(uuid="b")]


async def test_an_unreachable_server_is_a_typed_error_without_the_password() -> None:
    port = _closed_port()
    stores: list[Any] = [
        PostgresStore(f"postgresql://app:hunter2@127.0.0.1:{port}/db", connect_timeout=5),
        RedisStore(f"redis://:hunter2@127.0.0.1:{port}/0"),
    ]
    for down in stores:
        with pytest.raises(SessionStoreError) as caught:
            await down.load(KEY)
        assert "hunter2" not in str(caught.value) and "hunter2" not in (caught.value.path or "")
        assert f"127.0.0.1:{port}" in str(caught.value)
        assert caught.value.__cause__ is not None
        await down.aclose()


async def test_a_redis_store_on_a_given_client_leaves_it_open(redis_url: str) -> None:
    import redis

    with redis.Redis.from_url(redis_url) as client:
        store = RedisStore(client=client, prefix=uuid.uuid4().hex)
        await store.append(KEY, [e(uuid="a")])
        await store.aclose()
        assert await store.load(KEY) == [e(uuid="a")]  # the client still answers
        tag = json.dumps(["proj", "sess"], separators=(",", ":"))
        client.set(f"{store.prefix}:summary:{tag}", "{")
        with pytest.raises(SessionStoreError) as caught:
            await store.list_session_summaries("proj")
        assert caught.value.path == "redis"


_WRONG_TYPED_CALLS: list[tuple[str, tuple[Any, ...], str]] = [
    ("load", (5,), "key must be a SessionKey"),
    ("load", ({"project_key": "proj", "session_id": 5},), "key['session_id'] must be a str"),
    ("load", ({"project_key": 5, "session_id": "sess"},), "key['project_key'] must be a str"),
    ("load", ({"project_key": "proj"},), "key has no 'session_id'"),
    ("load", ({**KEY, "subpath": 7},), "key['subpath'] must be a str"),
    ("append", (None, [{"type": "x"}]), "key must be a SessionKey"),
    ("append", ({"project_key": "proj", "session_id": 5}, []), "key['session_id']"),
    ("append", (KEY, "text"), "entries must be a list"),
    ("append", (KEY, [{"type": "x"}, 5]), "entries[1] must be a dict"),
    ("delete", ("proj/sess",), "key must be a SessionKey"),
    ("list_subkeys", ({"project_key": "proj", "session_id": b"sess"},), "key['session_id']"),
    ("list_sessions", (5,), "project_key must be a str"),
    ("list_session_summaries", (None,), "project_key must be a str"),
]


async def test_a_wrong_typed_argument_is_an_options_error_naming_it(
    any_store: SessionStore,
) -> None:
    """``load(5)`` answered ``None`` (as for a key never written), a key with an int
    ``session_id`` was stored and looked up as such, and others raised AttributeError,
    KeyError or TypeError from inside the store: each adapter refuses them by name."""
    await any_store.append(KEY, [e(uuid="u1")])
    for method, args, words in _WRONG_TYPED_CALLS:
        with pytest.raises(OptionsError) as caught:
            await getattr(any_store, method)(*args)
        assert words in str(caught.value), (method, args, str(caught.value))
    assert await any_store.load(KEY) == [e(uuid="u1")]  # and none of them wrote


def test_bad_store_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="table_prefix"):
        PostgresStore("postgresql://x@127.0.0.1/db", table_prefix="no-dashes")
    with pytest.raises(ValueError, match="url or a client"):
        RedisStore()


def test_the_drivers_are_imported_only_when_a_store_is_used() -> None:
    code = (
        "import sys, ccwire\n"
        "for name in ccwire.__all__: getattr(ccwire, name)\n"
        "ccwire.PostgresStore('postgresql://x@127.0.0.1/db'); ccwire.RedisStore('redis://x')\n"
        "print(sorted(m for m in ('psycopg', 'redis') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("make", "driver", "extra"),
    [
        (lambda: PostgresStore("postgresql://x@127.0.0.1:1/db"), "psycopg", "postgres"),
        (lambda: RedisStore("redis://127.0.0.1:1"), "redis", "redis"),
    ],
    ids=["postgres", "redis"],
)
async def test_a_store_without_its_driver_says_which_extra_to_install(
    make: Any, driver: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, driver, None)  # as if the extra were not installed
    store = make()
    with pytest.raises(MissingExtraError) as caught:
        await store.load({"project_key": "p", "session_id": "s"})
    assert isinstance(caught.value, CcwireError) and isinstance(caught.value, ImportError)
    assert caught.value.extra == extra
    assert f"pip install 'ccwire[{extra}]'" in str(caught.value)
    assert pickle.loads(pickle.dumps(caught.value)).args == caught.value.args  # crosses Ray
