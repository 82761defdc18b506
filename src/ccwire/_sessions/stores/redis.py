"""`RedisStore`: a `SessionStore` in Redis (extra `ccwire[redis]`, redis-py).

Keys, under `prefix` (default `ccwire`), where `T` is the JSON array
`["<project_key>","<session_id>","<subpath>"]` (`subpath` `""` for the main
transcript) and `S` the array `["<project_key>","<session_id>"]`:

* `<prefix>:entries:T`: a list, one JSON text per entry, in append order;
* `<prefix>:uuids:T`: a set of the entry uuids stored (the idempotency keys);
* `<prefix>:sessions:<project_key>`: a sorted set of the project's main transcripts,
  scored by their last write time in epoch milliseconds (Redis has no native
  modification time: this is the index `list_sessions` reads);
* `<prefix>:subkeys:S`: a sorted set of the session's subpaths, scored the same way;
* `<prefix>:summary:S`: the session's folded summary, JSON `{"mtime", "data"}`.

An append is one `MULTI`/`EXEC` transaction under `WATCH` of the session's keys
(retried when another writer got there first), so concurrent appends from any number
of processes fold the summary one after the other; write times come from the server's
`TIME`. redis-py's blocking client runs in worker threads, so the store works on
asyncio and on trio alike (its asyncio client needs asyncio).

Like `LRANGE`, `load` cannot tell a never-written key from an emptied one: both load
as `None`. Nothing expires by itself: retention is yours, for example a scheduled job
that reads `ZRANGEBYSCORE <prefix>:sessions:<project> -inf <cutoff>` and deletes those
sessions through `delete`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread

from ..._core.errors import SessionStoreError
from .protocol import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    key_parts,
)
from .summary import fold_session_summary

if TYPE_CHECKING:
    import redis


__all__ = ["RedisStore"]

_T = TypeVar("_T")


def _import_redis() -> Any:
    try:
        import redis
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("RedisStore needs redis-py: pip install 'ccwire[redis]'") from exc
    return redis


def _str(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _tag(*parts: str) -> str:
    return json.dumps(list(parts), separators=(",", ":"), ensure_ascii=False)


class RedisStore(SessionStore):
    """A `SessionStore` in Redis; implements every optional method.

    Args:
        url: A Redis URL (`redis://host:port/db`); its connection pool is made on
            first use.
        prefix: The prefix of every key.
        client: A ready redis-py blocking client (`redis.Redis`) to use instead of
            `url`.
        timeout: Seconds to connect and to wait for each reply (for the pool made
            from `url`), so a stuck server never holds a call forever.

    Raises:
        ValueError: Neither `url` nor `client` was given.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        prefix: str = "ccwire",
        client: redis.Redis | None = None,
        timeout: float = 30.0,
    ) -> None:
        if url is None and client is None:
            raise ValueError("RedisStore needs a url or a client")
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self._client: Any = client
        self._lock = threading.Lock()

    def _redis(self) -> Any:  # redis-py's own annotations are partial
        with self._lock:
            if self._client is None:
                self._client = _import_redis().Redis.from_url(
                    self.url, socket_timeout=self.timeout, socket_connect_timeout=self.timeout
                )
            return self._client

    def _where(self) -> str:
        if self.url is None:
            return "redis"
        kwargs = _import_redis().connection.parse_url(self.url)
        return f"redis://{kwargs.get('host', '')}:{kwargs.get('port', 6379)}/{kwargs.get('db', 0)}"

    async def _run(self, what: str, fn: Callable[[Any], _T]) -> _T:
        def call() -> _T:
            rd = _import_redis()
            try:
                return fn(self._redis())
            except rd.RedisError as exc:
                raise SessionStoreError(
                    f"session store {what} failed: {exc}", path=self._where()
                ) from exc

        return await anyio.to_thread.run_sync(call)

    def _decode(self, raw: bytes | str) -> Any:
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise SessionStoreError(
                f"a stored session entry is not valid JSON: {exc}", path=self._where()
            ) from exc

    def _k(self, kind: str, tag: str) -> str:
        return f"{self.prefix}:{kind}:{tag}"

    async def aclose(self) -> None:
        """Close the connection pool this store made (a given `client` is left open)."""
        with self._lock:
            client, self._client = (self._client, None) if self.url is not None else (None, None)
        if client is not None:
            client.close()

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Append entries to `key` in one transaction (see `SessionStore.append`).

        Args:
            key: The transcript.
            entries: The entries; one with a `uuid` already stored is skipped.

        Raises:
            SessionStoreError: The server could not be reached or refused the write.
        """
        if not entries:
            return
        project, session, sub = key_parts(key)
        t, s = _tag(project, session, sub), _tag(project, session)
        entries_key, uuids_key = self._k("entries", t), self._k("uuids", t)
        summary_key = self._k("summary", s)
        index_key, member = (
            (self._k("subkeys", s), sub) if sub else (self._k("sessions", project), session)
        )
        texts = [(e.get("uuid"), json.dumps(e, separators=(",", ":"))) for e in entries]
        rd = _import_redis()

        def write(client: Any) -> None:
            with client.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(uuids_key, index_key, summary_key)
                        seen: set[str] = set()
                        uuids = sorted({u for u, _ in texts if isinstance(u, str)})
                        if uuids:
                            stored = pipe.smismember(uuids_key, uuids)
                            seen.update(u for u, hit in zip(uuids, stored, strict=True) if hit)
                        fresh: list[str] = []
                        new_uuids: list[str] = []
                        for uuid, text in texts:
                            if isinstance(uuid, str):
                                if uuid in seen:
                                    continue
                                seen.add(uuid)
                                new_uuids.append(uuid)
                            fresh.append(text)
                        seconds, micros = pipe.time()
                        previous = pipe.zscore(index_key, member)
                        now = max(seconds * 1000 + micros // 1000, int(previous or 0) + 1)
                        folded = None
                        if not sub:
                            raw = pipe.get(summary_key)
                            prev: SessionSummaryEntry | None = None
                            if raw is not None:
                                stored_summary = self._decode(raw)
                                prev = {
                                    "session_id": session,
                                    "mtime": stored_summary["mtime"],
                                    "data": stored_summary["data"],
                                }
                            folded = fold_session_summary(prev, key, entries)
                        pipe.multi()
                        if fresh:
                            pipe.rpush(entries_key, *fresh)
                        if new_uuids:
                            pipe.sadd(uuids_key, *new_uuids)
                        pipe.zadd(index_key, {member: now})
                        if folded is not None:
                            pipe.set(
                                summary_key, json.dumps({"mtime": now, "data": folded["data"]})
                            )
                        pipe.execute()
                        return
                    except rd.WatchError:
                        continue  # another writer changed the session first: fold again

        await self._run("append", write)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries of `key` in append order, or `None` if there are none.

        Args:
            key: The transcript.

        Returns:
            The entries.

        Raises:
            SessionStoreError: The server could not be reached, or holds invalid JSON.
        """
        entries_key = self._k("entries", _tag(*key_parts(key)))
        raws = await self._run("load", lambda client: client.lrange(entries_key, 0, -1))
        return [self._decode(r) for r in raws] if raws else None

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts under `project_key`, with their write times.

        Args:
            project_key: The scope.

        Returns:
            One entry per session.

        Raises:
            SessionStoreError: The server could not be reached.
        """
        index_key = self._k("sessions", project_key)
        rows = await self._run(
            "list_sessions", lambda client: client.zrange(index_key, 0, -1, withscores=True)
        )
        return [{"session_id": _str(m), "mtime": int(score)} for m, score in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of the sessions under `project_key`.

        Args:
            project_key: The scope.

        Returns:
            One summary per main transcript.

        Raises:
            SessionStoreError: The server could not be reached, or holds invalid JSON.
        """
        index_key = self._k("sessions", project_key)

        def read(client: Any) -> list[tuple[str, bytes | None]]:
            ids = [_str(m) for m in client.zrange(index_key, 0, -1)]
            if not ids:
                return []
            raws = client.mget([self._k("summary", _tag(project_key, i)) for i in ids])
            return list(zip(ids, raws, strict=True))

        out: list[SessionSummaryEntry] = []
        for session_id, raw in await self._run("list_session_summaries", read):
            if raw is not None:
                stored = self._decode(raw)
                out.append(
                    {"session_id": session_id, "mtime": stored["mtime"], "data": stored["data"]}
                )
        return out

    async def delete(self, key: SessionKey) -> None:
        """Delete `key`; a main transcript takes its subkeys and summary along.

        Args:
            key: The transcript.

        Raises:
            SessionStoreError: The server could not be reached or refused the delete.
        """
        project, session, sub = key_parts(key)
        s = _tag(project, session)
        subkeys_key = self._k("subkeys", s)
        rd = _import_redis()

        def remove(client: Any) -> None:
            if sub:
                t = _tag(project, session, sub)
                with client.pipeline() as pipe:  # MULTI/EXEC
                    pipe.delete(self._k("entries", t), self._k("uuids", t))
                    pipe.zrem(subkeys_key, sub)
                    pipe.execute()
                return
            with client.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(subkeys_key)
                        subs = [_str(m) for m in pipe.zrange(subkeys_key, 0, -1)]
                        doomed = [subkeys_key, self._k("summary", s)]
                        for part in ["", *subs]:
                            t = _tag(project, session, part)
                            doomed += [self._k("entries", t), self._k("uuids", t)]
                        pipe.multi()
                        pipe.delete(*doomed)
                        pipe.zrem(self._k("sessions", project), session)
                        pipe.execute()
                        return
                    except rd.WatchError:
                        continue

        await self._run("delete", remove)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session.

        Args:
            key: The session.

        Returns:
            The subpaths.

        Raises:
            SessionStoreError: The server could not be reached.
        """
        subkeys_key = self._k("subkeys", _tag(key["project_key"], key["session_id"]))
        rows = await self._run("list_subkeys", lambda client: client.zrange(subkeys_key, 0, -1))
        return sorted(_str(m) for m in rows)
