"""`SqlBackend`: the SQL stores' logic, once, for any database described by a `Dialect`.

`SQLiteStore` and `PostgresStore` are a `BlockingStore` over this backend; each brings
its `Dialect` (how its database spells a few things) and its `Connections` (how it
opens, reuses and closes a DB-API connection). Three tables, named after a prefix:

* `<prefix>_entries(seq, project_key, session_id, subpath, uuid, entry)`: one row per
  entry, `entry` the JSON text as appended (`TEXT`, not a JSON type, so any JSON
  round-trips, `\\u0000` included), `seq` the append order; a partial unique index on
  `(project_key, session_id, subpath, uuid)` makes an entry's `uuid` its idempotency
  key;
* `<prefix>_transcripts(project_key, session_id, subpath, mtime)`: one row per
  transcript, `subpath` `''` for the main one, `mtime` its last write time in epoch
  milliseconds (never going back for one transcript);
* `<prefix>_summaries(project_key, session_id, mtime, data)`: the folded summary of
  each main transcript, `data` JSON text.

A read is one `SELECT`; a write is one transaction (`begin` ... `COMMIT`, on a
connection in autocommit mode), and an append first takes the dialect's lock on its
session, which serializes the summary fold across connections and processes.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .blocking import Append, Parts, decode_json, encode_json

__all__ = ["Connections", "Dialect", "SqlBackend"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Dialect:
    """How one database spells what `SqlBackend` says; its statements use `?` placeholders.

    Attributes:
        placeholder: The driver's parameter placeholder, put for each `?`.
        serial: The column definition of `seq`: an auto-incrementing primary key.
        greatest: The name of the function that returns the larger of two values.
        now_ms: An expression for the write time, in epoch milliseconds.
        begin: The statement that starts a write transaction.
        lock: A statement that takes a transaction-level lock on the `?` key (a JSON
            text), or `""` when `begin` already keeps other writers out.
        setup: Statements run once per store, outside a transaction, before the
            tables are created.
    """

    placeholder: str
    serial: str
    greatest: str
    now_ms: str
    begin: str
    lock: str
    setup: tuple[str, ...] = ()


class Connections(Protocol):
    """Where a `SqlBackend` gets its connections, and gives them back."""

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        """The driver's exceptions (opening a connection included)."""
        ...

    @property
    def where(self) -> str:
        """The database, without credentials, for error messages."""
        ...

    def open(self) -> Any:
        """A DB-API connection in autocommit mode."""
        ...

    def release(self, conn: Any) -> None:
        """Take back a connection `open` gave, once no transaction is open on it."""
        ...

    def close(self) -> None:
        """Close the connections kept for reuse."""
        ...


class SqlBackend:
    """A store `Backend` in three SQL tables.

    Args:
        dialect: How the database spells things.
        connections: Where the connections come from.
        prefix: The tables' prefix (a plain identifier).
    """

    def __init__(self, dialect: Dialect, connections: Connections, prefix: str) -> None:
        self._dialect = dialect
        self._connections = connections
        self._prefix = prefix
        self._ready = False
        self._lock = threading.Lock()
        e, t, s = f"{prefix}_entries", f"{prefix}_transcripts", f"{prefix}_summaries"
        self._tables = (e, t, s)
        key2 = "project_key = ? AND session_id = ?"
        key3 = f"{key2} AND subpath = ?"
        d = dialect
        sql: dict[str, str] = {
            "insert": f"INSERT INTO {e} (project_key, session_id, subpath, uuid, entry) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_key, session_id, subpath, uuid) "
            "WHERE uuid IS NOT NULL DO NOTHING",
            "touch": f"INSERT INTO {t} (project_key, session_id, subpath, mtime) "
            f"VALUES (?, ?, ?, {d.now_ms}) ON CONFLICT (project_key, session_id, subpath) "
            f"DO UPDATE SET mtime = {d.greatest}(excluded.mtime, {t}.mtime + 1)",
            "mtime": f"SELECT mtime FROM {t} WHERE {key3}",
            "summary": f"SELECT data FROM {s} WHERE {key2}",
            "fold": f"INSERT INTO {s} (project_key, session_id, mtime, data) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (project_key, session_id) "
            "DO UPDATE SET mtime = excluded.mtime, data = excluded.data",
            "load": f"SELECT entry FROM {e} WHERE {key3} ORDER BY seq",
            "sessions": f"SELECT session_id, mtime FROM {t} WHERE project_key = ? AND subpath = ''",
            "summaries": f"SELECT session_id, mtime, data FROM {s} WHERE project_key = ?",
            "subkeys": f"SELECT subpath FROM {t} WHERE {key2} AND subpath <> ''",
            "lock": d.lock,
            "key2": key2,
            "key3": key3,
        }
        self._sql = {name: text.replace("?", d.placeholder) for name, text in sql.items()}
        self._schema = [
            f"""CREATE TABLE IF NOT EXISTS {e} (
                seq {d.serial}, project_key TEXT NOT NULL, session_id TEXT NOT NULL,
                subpath TEXT NOT NULL, uuid TEXT, entry TEXT NOT NULL)""",
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

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        """The driver's exceptions."""
        return self._connections.errors

    @property
    def where(self) -> str:
        """The database, for error messages."""
        return self._connections.where

    def _transaction(self, conn: Any, fn: Callable[[Any], _T]) -> _T:
        conn.execute(self._dialect.begin)
        try:
            result = fn(conn)
        except BaseException:
            # a broken connection cannot roll back: the first error is the one to report
            with contextlib.suppress(*self.errors):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _lock_on(self, conn: Any, *key: str) -> None:
        if self._sql["lock"]:
            conn.execute(self._sql["lock"], (json.dumps([self._prefix, *key]),))

    def _create_tables(self, conn: Any) -> None:
        with self._lock:
            if self._ready:
                return
            for statement in self._dialect.setup:
                conn.execute(statement)

            def create(conn: Any) -> None:
                self._lock_on(conn)  # concurrent CREATE ... IF NOT EXISTS can collide
                for statement in self._schema:
                    conn.execute(statement)

            self._transaction(conn, create)
            self._ready = True

    def _connected(self, fn: Callable[[Any], _T]) -> _T:
        conn = self._connections.open()
        try:
            if not self._ready:
                self._create_tables(conn)
            return fn(conn)
        finally:
            self._connections.release(conn)

    def _write(self, fn: Callable[[Any], None]) -> None:
        self._connected(lambda conn: self._transaction(conn, fn))

    def _read(self, name: str, *args: str) -> list[Any]:
        """The rows of one `SELECT`: atomic on its own, so it takes no lock."""
        return self._connected(lambda conn: conn.execute(self._sql[name], args).fetchall())

    def append(self, batch: Append) -> None:
        """Store the new rows, stamp the transcript and fold the summary, in one transaction."""
        parts, session = batch.parts, batch.parts[:2]
        sql = self._sql

        def write(conn: Any) -> None:
            self._lock_on(conn, *session)
            conn.cursor().executemany(sql["insert"], [(*parts, u, e) for u, e in batch.rows])
            conn.execute(sql["touch"], parts)
            (now,) = conn.execute(sql["mtime"], parts).fetchone()
            if parts[2]:
                return
            row = conn.execute(sql["summary"], session).fetchone()
            data = batch.summary(None if row is None else decode_json(row[0], self.where))
            conn.execute(sql["fold"], (*session, now, encode_json(data)))

        self._write(write)

    def load(self, parts: Parts) -> list[str]:
        """The JSON texts of a transcript, in append order."""
        return [r[0] for r in self._read("load", *parts)]

    def sessions(self, project_key: str) -> list[Any]:
        """`(session_id, mtime)` of each main transcript of a project."""
        return self._read("sessions", project_key)

    def summaries(self, project_key: str) -> list[tuple[str, int, Any]]:
        """`(session_id, mtime, data)` of each summary of a project."""
        rows = self._read("summaries", project_key)
        return [(r[0], r[1], decode_json(r[2], self.where)) for r in rows]

    def delete(self, parts: Parts) -> None:
        """Delete a transcript; a main one takes its subkeys and summary along."""
        sub = parts[2]
        where, args = (self._sql["key3"], parts) if sub else (self._sql["key2"], parts[:2])
        tables = self._tables[:2] if sub else self._tables

        def remove(conn: Any) -> None:
            for table in tables:
                conn.execute(f"DELETE FROM {table} WHERE {where}", args)

        self._write(remove)

    def subkeys(self, project_key: str, session_id: str) -> list[str]:
        """The subpaths stored under a session."""
        return [r[0] for r in self._read("subkeys", project_key, session_id)]

    def close(self) -> None:
        """Close the connections kept for reuse."""
        self._connections.close()
