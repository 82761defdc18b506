"""`PostgresStore`: a `SessionStore` in PostgreSQL (extra `ccwire[postgres]`, psycopg 3).

Three tables, named after `table_prefix` (default `ccwire`), created on first use:

* `<prefix>_entries(seq BIGSERIAL, project_key, session_id, subpath, uuid, entry TEXT)`:
  one row per transcript entry, `entry` the JSON text as appended (text, not
  `JSONB`, so any JSON the CLI writes round-trips, `\\u0000` included); a partial
  unique index on `(project_key, session_id, subpath, uuid)` makes `uuid` an
  idempotency key;
* `<prefix>_transcripts(project_key, session_id, subpath, mtime BIGINT)`: one row per
  transcript, `subpath` `''` for the main one, `mtime` the server's commit clock in
  epoch milliseconds;
* `<prefix>_summaries(project_key, session_id, mtime BIGINT, data TEXT)`.

psycopg's blocking API runs in worker threads, so the store works on asyncio and on
trio alike (psycopg's async API needs asyncio). Idle connections are kept for reuse,
at most `max_idle` of them. An append is one transaction holding a transaction-level
advisory lock on its session, which serializes the summary fold across processes.
Nothing is deleted except by `delete`: retention is yours (for example a scheduled
job that deletes through the store the sessions whose `mtime` is too old).
"""

from __future__ import annotations

import json
import re
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
    import psycopg


__all__ = ["PostgresStore"]

_T = TypeVar("_T")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,40}")
_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint"


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("PostgresStore needs psycopg 3: pip install 'ccwire[postgres]'") from exc
    return psycopg


class PostgresStore(SessionStore):
    """A `SessionStore` in PostgreSQL; implements every optional method.

    Args:
        dsn: A libpq connection string or URL (`postgresql://user@host:port/db`).
        table_prefix: The prefix of the three tables (lower-case letters, digits,
            underscores).
        max_idle: How many idle connections to keep for reuse.
        connect_timeout: Seconds to wait for a connection.
        statement_timeout: Seconds one statement may run before the server cancels it
            (so a stuck server never holds a call, or a cancellation of it, forever).

    Raises:
        ValueError: `table_prefix` is not a plain identifier.
    """

    def __init__(
        self,
        dsn: str,
        *,
        table_prefix: str = "ccwire",
        max_idle: int = 4,
        connect_timeout: float = 10.0,
        statement_timeout: float = 30.0,
    ) -> None:
        if not _IDENTIFIER.fullmatch(table_prefix):
            raise ValueError(f"table_prefix must match {_IDENTIFIER.pattern}: {table_prefix!r}")
        self.dsn = dsn
        self.table_prefix = table_prefix
        self.max_idle = max_idle
        self.connect_timeout = connect_timeout
        self.statement_timeout = statement_timeout
        self._idle: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()
        self._ready = False
        p = table_prefix
        self._entries, self._transcripts, self._summaries = (
            f"{p}_entries",
            f"{p}_transcripts",
            f"{p}_summaries",
        )

    def _where(self) -> str:
        """The server, without credentials, for error messages."""
        try:
            info = _import_psycopg().conninfo.conninfo_to_dict(self.dsn)
        except Exception:
            return "postgresql"
        return (
            f"postgresql://{info.get('host', '')}:{info.get('port', '')}/{info.get('dbname', '')}"
        )

    def _schema(self) -> list[str]:
        e, t, s = self._entries, self._transcripts, self._summaries
        return [
            f"""CREATE TABLE IF NOT EXISTS {e} (
                seq BIGSERIAL PRIMARY KEY, project_key TEXT NOT NULL,
                session_id TEXT NOT NULL, subpath TEXT NOT NULL, uuid TEXT,
                entry TEXT NOT NULL)""",
            f"CREATE INDEX IF NOT EXISTS {e}_key ON {e} (project_key, session_id, subpath, seq)",
            f"""CREATE UNIQUE INDEX IF NOT EXISTS {e}_uuid
                ON {e} (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL""",
            f"""CREATE TABLE IF NOT EXISTS {t} (
                project_key TEXT NOT NULL, session_id TEXT NOT NULL, subpath TEXT NOT NULL,
                mtime BIGINT NOT NULL, PRIMARY KEY (project_key, session_id, subpath))""",
            f"""CREATE TABLE IF NOT EXISTS {s} (
                project_key TEXT NOT NULL, session_id TEXT NOT NULL, mtime BIGINT NOT NULL,
                data TEXT NOT NULL, PRIMARY KEY (project_key, session_id))""",
        ]

    def _take(self) -> psycopg.Connection[Any]:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed and not conn.broken:
                    return conn
        fresh: psycopg.Connection[Any] = _import_psycopg().connect(
            self.dsn,
            autocommit=True,
            connect_timeout=max(1, round(self.connect_timeout)),
            options=f"-c statement_timeout={max(1, round(self.statement_timeout * 1000))}",
        )
        if not self._ready:
            with fresh.transaction():
                # one creator at a time: concurrent CREATE ... IF NOT EXISTS can collide
                fresh.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._entries,))
                for statement in self._schema():
                    fresh.execute(statement)
            self._ready = True
        return fresh

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        with self._lock:
            if not conn.broken and not conn.closed and len(self._idle) < self.max_idle:
                self._idle.append(conn)
                return
        conn.close()

    async def _run(self, what: str, fn: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        def call() -> _T:
            psycopg = _import_psycopg()
            try:
                conn = self._take()
            except psycopg.Error as exc:
                raise SessionStoreError(
                    f"cannot connect to the session store: {exc}", path=self._where()
                ) from exc
            try:
                with conn.transaction():
                    return fn(conn)
            except psycopg.Error as exc:
                raise SessionStoreError(
                    f"session store {what} failed: {exc}", path=self._where()
                ) from exc
            finally:
                self._give_back(conn)

        return await anyio.to_thread.run_sync(call)

    def _decode(self, text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            raise SessionStoreError(
                f"a stored session entry is not valid JSON: {exc}", path=self._where()
            ) from exc

    async def aclose(self) -> None:
        """Close the idle connections (calls in flight keep theirs until they end)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

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
        rows = [
            (
                project,
                session,
                sub,
                e.get("uuid") if isinstance(e.get("uuid"), str) else None,
                json.dumps(e, separators=(",", ":")),
            )
            for e in entries
        ]

        def write(conn: psycopg.Connection[Any]) -> None:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (json.dumps([self.table_prefix, project, session]),),
            )
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {self._entries} (project_key, session_id, subpath, uuid, entry) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (project_key, session_id, subpath, "
                    "uuid) WHERE uuid IS NOT NULL DO NOTHING",
                    rows,
                )
            row = conn.execute(
                f"INSERT INTO {self._transcripts} AS t VALUES (%s, %s, %s, {_NOW_MS}) "
                "ON CONFLICT (project_key, session_id, subpath) DO UPDATE SET "
                "mtime = GREATEST(excluded.mtime, t.mtime + 1) RETURNING mtime",
                (project, session, sub),
            ).fetchone()
            assert row is not None
            now = int(row[0])
            if sub:
                return
            found = conn.execute(
                f"SELECT mtime, data FROM {self._summaries} "
                "WHERE project_key = %s AND session_id = %s",
                (project, session),
            ).fetchone()
            prev: SessionSummaryEntry | None = (
                {"session_id": session, "mtime": found[0], "data": self._decode(found[1])}
                if found
                else None
            )
            folded = fold_session_summary(prev, key, entries)
            conn.execute(
                f"INSERT INTO {self._summaries} VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (project_key, session_id) DO UPDATE SET "
                "mtime = excluded.mtime, data = excluded.data",
                (project, session, now, json.dumps(folded["data"])),
            )

        await self._run("append", write)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries of `key` in append order, or `None` if it was never written.

        Args:
            key: The transcript.

        Returns:
            The entries.

        Raises:
            SessionStoreError: The server could not be reached, or holds invalid JSON.
        """
        parts = key_parts(key)

        def read(conn: psycopg.Connection[Any]) -> list[str] | None:
            known = conn.execute(
                f"SELECT 1 FROM {self._transcripts} "
                "WHERE project_key = %s AND session_id = %s AND subpath = %s",
                parts,
            ).fetchone()
            if known is None:
                return None
            rows = conn.execute(
                f"SELECT entry FROM {self._entries} WHERE project_key = %s "
                "AND session_id = %s AND subpath = %s ORDER BY seq",
                parts,
            ).fetchall()
            return [r[0] for r in rows]

        texts = await self._run("load", read)
        return None if texts is None else [self._decode(t) for t in texts]

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts under `project_key`, with their write times.

        Args:
            project_key: The scope.

        Returns:
            One entry per session.

        Raises:
            SessionStoreError: The server could not be reached.
        """
        rows = await self._run(
            "list_sessions",
            lambda conn: conn.execute(
                f"SELECT session_id, mtime FROM {self._transcripts} "
                "WHERE project_key = %s AND subpath = ''",
                (project_key,),
            ).fetchall(),
        )
        return [{"session_id": r[0], "mtime": int(r[1])} for r in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of the sessions under `project_key`.

        Args:
            project_key: The scope.

        Returns:
            One summary per main transcript.

        Raises:
            SessionStoreError: The server could not be reached, or holds invalid JSON.
        """
        rows = await self._run(
            "list_session_summaries",
            lambda conn: conn.execute(
                f"SELECT session_id, mtime, data FROM {self._summaries} WHERE project_key = %s",
                (project_key,),
            ).fetchall(),
        )
        return [{"session_id": r[0], "mtime": int(r[1]), "data": self._decode(r[2])} for r in rows]

    async def delete(self, key: SessionKey) -> None:
        """Delete `key`; a main transcript takes its subkeys and summary along.

        Args:
            key: The transcript.

        Raises:
            SessionStoreError: The server could not be reached or refused the delete.
        """
        project, session, sub = key_parts(key)
        where = "project_key = %s AND session_id = %s" + (" AND subpath = %s" if sub else "")
        args: tuple[str, ...] = (project, session, sub) if sub else (project, session)

        def remove(conn: psycopg.Connection[Any]) -> None:
            conn.execute(f"DELETE FROM {self._entries} WHERE {where}", args)
            conn.execute(f"DELETE FROM {self._transcripts} WHERE {where}", args)
            if not sub:
                conn.execute(f"DELETE FROM {self._summaries} WHERE {where}", args)

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
        rows = await self._run(
            "list_subkeys",
            lambda conn: conn.execute(
                f"SELECT subpath FROM {self._transcripts} WHERE project_key = %s "
                "AND session_id = %s AND subpath <> '' ORDER BY subpath",
                (key["project_key"], key["session_id"]),
            ).fetchall(),
        )
        return [r[0] for r in rows]
