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
from typing import TYPE_CHECKING, Any

from .blocking import (
    Append,
    BlockingStore,
    Parts,
    as_text,
    decode_json,
    encode_json,
    import_driver,
)

if TYPE_CHECKING:
    import redis

__all__ = ["RedisStore"]


def _import_redis() -> Any:
    return import_driver("redis", "RedisStore", "redis-py", "redis")


def _tag(*parts: str) -> str:
    return json.dumps(list(parts), separators=(",", ":"), ensure_ascii=False)


class _RedisBackend:
    """The keys of one prefix on one server (see the module docstring)."""

    def __init__(self, store: RedisStore, client: Any) -> None:
        self._store = store
        self._client = client
        self._lock = threading.Lock()

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        return (_import_redis().RedisError,)

    @property
    def where(self) -> str:
        """The server, without credentials."""
        url = self._store.url
        if url is None:
            return "redis"
        kwargs = _import_redis().connection.parse_url(url)
        return f"redis://{kwargs.get('host', '')}:{kwargs.get('port', 6379)}/{kwargs.get('db', 0)}"

    def _redis(self) -> Any:  # redis-py's own annotations are partial
        with self._lock:
            if self._client is None:
                store = self._store
                self._client = _import_redis().Redis.from_url(
                    store.url, socket_timeout=store.timeout, socket_connect_timeout=store.timeout
                )
            return self._client

    def _k(self, kind: str, tag: str) -> str:
        return f"{self._store.prefix}:{kind}:{tag}"

    def _watching(self, watched: list[str], write: Callable[[Any], None]) -> None:
        """`write(pipe)` reads under `WATCH`, then queues its writes after `pipe.multi()`;
        all again when another writer changed a watched key first."""
        rd = _import_redis()
        with self._redis().pipeline() as pipe:
            while True:
                try:
                    pipe.watch(*watched)
                    write(pipe)
                    pipe.execute()
                    return
                except rd.WatchError:
                    continue

    def append(self, batch: Append) -> None:
        """Push the entries whose `uuid` is new, index the transcript, fold the summary."""
        project, session, sub = batch.parts
        t, s = _tag(project, session, sub), _tag(project, session)
        entries_key, uuids_key = self._k("entries", t), self._k("uuids", t)
        summary_key = self._k("summary", s)
        index_key, member = (
            (self._k("subkeys", s), sub) if sub else (self._k("sessions", project), session)
        )

        def write(pipe: Any) -> None:
            uuids = sorted({u for u, _ in batch.rows if u is not None})
            stored = pipe.smismember(uuids_key, uuids) if uuids else []
            seen = {u for u, hit in zip(uuids, stored, strict=True) if hit}
            fresh: list[str] = []
            new_uuids: list[str] = []
            for uuid, text in batch.rows:
                if uuid is not None:
                    if uuid in seen:
                        continue
                    seen.add(uuid)
                    new_uuids.append(uuid)
                fresh.append(text)
            seconds, micros = pipe.time()
            previous = pipe.zscore(index_key, member)
            now = max(seconds * 1000 + micros // 1000, int(previous or 0) + 1)
            summary = None
            if not sub:
                raw = pipe.get(summary_key)
                data = batch.summary(None if raw is None else decode_json(raw, self.where)["data"])
                summary = encode_json({"mtime": now, "data": data})
            pipe.multi()
            if fresh:
                pipe.rpush(entries_key, *fresh)
            if new_uuids:
                pipe.sadd(uuids_key, *new_uuids)
            pipe.zadd(index_key, {member: now})
            if summary is not None:
                pipe.set(summary_key, summary)

        self._watching([uuids_key, index_key, summary_key], write)

    def load(self, parts: Parts) -> list[bytes | str]:
        """The JSON texts of a transcript, in append order."""
        return list(self._redis().lrange(self._k("entries", _tag(*parts)), 0, -1))

    def sessions(self, project_key: str) -> list[tuple[bytes | str, float]]:
        """`(session_id, mtime)` of each main transcript of a project."""
        return list(self._redis().zrange(self._k("sessions", project_key), 0, -1, withscores=True))

    def summaries(self, project_key: str) -> list[tuple[str, int, Any]]:
        """`(session_id, mtime, data)` of each summary of a project."""
        client = self._redis()
        ids = [as_text(m) for m in client.zrange(self._k("sessions", project_key), 0, -1)]
        if not ids:
            return []
        raws = client.mget([self._k("summary", _tag(project_key, i)) for i in ids])
        stored = [(i, decode_json(r, self.where)) for i, r in zip(ids, raws, strict=True) if r]
        return [(i, s["mtime"], s["data"]) for i, s in stored]

    def delete(self, parts: Parts) -> None:
        """Delete a transcript; a main one takes its subkeys and summary along."""
        project, session, sub = parts
        s = _tag(project, session)
        subkeys_key = self._k("subkeys", s)

        def remove(pipe: Any) -> None:
            subs = [sub] if sub else ["", *map(as_text, pipe.zrange(subkeys_key, 0, -1))]
            doomed = [] if sub else [subkeys_key, self._k("summary", s)]
            for part in subs:
                t = _tag(project, session, part)
                doomed += [self._k("entries", t), self._k("uuids", t)]
            pipe.multi()
            pipe.delete(*doomed)
            if sub:
                pipe.zrem(subkeys_key, sub)
            else:
                pipe.zrem(self._k("sessions", project), session)

        self._watching([subkeys_key], remove)

    def subkeys(self, project_key: str, session_id: str) -> list[bytes | str]:
        """The subpaths stored under a session."""
        return list(self._redis().zrange(self._k("subkeys", _tag(project_key, session_id)), 0, -1))

    def close(self) -> None:
        """Close the connection pool made from the URL (a given client is left open)."""
        if self._store.url is None:
            return
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


class RedisStore(BlockingStore):
    """A `SessionStore` in Redis; implements every optional method.

    Args:
        url: A Redis URL (`redis://host:port/db`); its connection pool is made on
            first use.
        prefix: The prefix of every key.
        client: A ready redis-py blocking client (`redis.Redis`) to use instead of
            `url`. (``typing.get_type_hints(RedisStore.__init__)`` cannot resolve
            this annotation: redis-py, an extra, is imported only when a store
            first connects.)
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
        super().__init__(_RedisBackend(self, client))
