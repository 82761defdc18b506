"""Random operation sequences: each adapter behaves like a plain model of the contracts.

Hypothesis draws appends (entries with repeated, fresh or missing uuids, to main and
subagent keys of two projects) and deletes; after every step each key loads, lists and
summarizes exactly as the model says.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import anyio
from hypothesis import HealthCheck, given, settings, strategies as st

from ccwire import (
    PostgresStore,
    RedisStore,
    SessionKey,
    SessionStore,
    SessionStoreEntry,
    SQLiteStore,
    fold_session_summary,
)

_Parts = tuple[str, str, str]
_KEYS: list[_Parts] = [
    (p, s, sub)
    for p in ("pa", "pb")
    for s in ("s1", "s2")
    for sub in ("", "subagents/agent-1", "subagents/deep/agent-2")
]


def _key(parts: _Parts) -> SessionKey:
    key: SessionKey = {"project_key": parts[0], "session_id": parts[1]}
    if parts[2]:
        key["subpath"] = parts[2]
    return key


_entry = st.builds(
    lambda u, n, title: {
        "type": "user",
        **({"uuid": u} if u else {}),
        "n": n,
        **({"customTitle": title} if title else {}),
    },
    st.sampled_from([None, "a", "b", "c", "d"]),
    st.integers(0, 9),
    st.sampled_from([None, "t1", "t2"]),
)
_Op = tuple[str, _Parts, list[dict[str, Any]]]
_op: st.SearchStrategy[_Op] = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(_KEYS), st.lists(_entry, max_size=4)),
    st.tuples(st.just("delete"), st.sampled_from(_KEYS), st.just([])),
)


class _Model:
    def __init__(self) -> None:
        self.entries: dict[_Parts, list[dict[str, Any]]] = {}
        self.summaries: dict[tuple[str, str], dict[str, Any]] = {}

    def append(self, parts: _Parts, batch: list[dict[str, Any]]) -> None:
        if not batch:
            return
        stored = self.entries.setdefault(parts, [])
        seen = {e["uuid"] for e in stored if "uuid" in e}
        for entry in batch:
            if "uuid" in entry:
                if entry["uuid"] in seen:
                    continue
                seen.add(entry["uuid"])
            stored.append(entry)
        if not parts[2]:
            prev = self.summaries.get(parts[:2])
            prev_entry = {"session_id": parts[1], "mtime": 0, "data": prev} if prev else None
            folded = fold_session_summary(
                cast("Any", prev_entry), _key(parts), cast("list[SessionStoreEntry]", batch)
            )
            self.summaries[parts[:2]] = folded["data"]

    def delete(self, parts: _Parts) -> None:
        doomed = [k for k in self.entries if k[:2] == parts[:2] and (not parts[2] or k == parts)]
        for k in doomed:
            del self.entries[k]
        if not parts[2]:
            self.summaries.pop(parts[:2], None)


async def _check(store: SessionStore, ops: list[tuple[str, _Parts, list[dict[str, Any]]]]) -> None:
    model = _Model()
    for op, parts, batch in ops:
        if op == "append":
            await store.append(_key(parts), cast("list[SessionStoreEntry]", batch))
            model.append(parts, batch)
        else:
            await store.delete(_key(parts))
            model.delete(parts)
        for k in _KEYS:
            assert (await store.load(_key(k)) or []) == model.entries.get(k, []), (op, k)
        for project in ("pa", "pb"):
            listed = sorted(e["session_id"] for e in await store.list_sessions(project))
            assert listed == sorted(k[1] for k in model.entries if k[0] == project and not k[2])
            summaries = {
                s["session_id"]: s["data"] for s in await store.list_session_summaries(project)
            }
            assert summaries == {k[1]: d for k, d in model.summaries.items() if k[0] == project}
            for session in ("s1", "s2"):
                subkeys = await store.list_subkeys({"project_key": project, "session_id": session})
                assert sorted(subkeys) == sorted(
                    k[2] for k in model.entries if k[:2] == (project, session) and k[2]
                )


_counter = itertools.count()
_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _run(make: Callable[[], Any], ops: list[tuple[str, _Parts, list[dict[str, Any]]]]) -> None:
    async def main() -> None:
        store = make()
        try:
            await _check(store, ops)
        finally:
            if hasattr(store, "aclose"):
                await store.aclose()

    anyio.run(main)


@_SETTINGS
@given(ops=st.lists(_op, max_size=12))
def test_sqlite_store_follows_the_model(
    tmp_path: Path, ops: list[tuple[str, _Parts, list[dict[str, Any]]]]
) -> None:
    _run(lambda: SQLiteStore(tmp_path / f"{next(_counter)}.sqlite3"), ops)


@_SETTINGS
@given(ops=st.lists(_op, max_size=12))
def test_postgres_store_follows_the_model(
    postgres_dsn: str, ops: list[tuple[str, _Parts, list[dict[str, Any]]]]
) -> None:
    _run(lambda: PostgresStore(postgres_dsn, table_prefix=f"m{uuid.uuid4().hex[:12]}"), ops)


@_SETTINGS
@given(ops=st.lists(_op, max_size=12))
def test_redis_store_follows_the_model(
    redis_url: str, ops: list[tuple[str, _Parts, list[dict[str, Any]]]]
) -> None:
    _run(lambda: RedisStore(redis_url, prefix=uuid.uuid4().hex), ops)


def test_the_model_itself_dedups_and_cascades() -> None:
    model = _Model()
    model.append(("p", "s", ""), [{"type": "x", "uuid": "a"}, {"type": "x", "uuid": "a"}])
    model.append(("p", "s", "sub"), [{"type": "x"}])
    assert model.entries[("p", "s", "")] == [{"type": "x", "uuid": "a"}]
    model.delete(("p", "s", ""))
    assert model.entries == {} and model.summaries == {}
