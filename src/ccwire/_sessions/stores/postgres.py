"""`PostgresStore`: a `SessionStore` in PostgreSQL (extra `ccwire[postgres]`, psycopg 3).

The SQL core's three tables (see `sql.py`), named after `table_prefix` (default
`ccwire`) and created on first use: `<prefix>_entries` (`seq BIGSERIAL`, `entry TEXT`,
not `JSONB`, so any JSON the CLI writes round-trips, `\\u0000` included),
`<prefix>_transcripts` and `<prefix>_summaries` (`mtime BIGINT`, the server's commit
clock in epoch milliseconds).

psycopg's blocking API runs in worker threads, so the store works on asyncio and on
trio alike (psycopg's async API needs asyncio). Idle connections are kept for reuse,
at most `max_idle` of them. An append is one transaction holding a transaction-level
advisory lock on its session, which serializes the summary fold across processes.
Nothing is deleted except by `delete`: retention is yours (for example a scheduled
job that deletes through the store the sessions whose `mtime` is too old).
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from .blocking import BlockingStore, import_driver
from .sql import Dialect, SqlBackend

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore"]

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,40}")

_POSTGRES = Dialect(
    placeholder="%s",
    serial="BIGSERIAL PRIMARY KEY",
    greatest="GREATEST",
    now_ms="(extract(epoch from clock_timestamp()) * 1000)::bigint",
    begin="BEGIN",
    lock="SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
)


def _import_psycopg() -> Any:
    return import_driver("psycopg", "PostgresStore", "psycopg 3", "postgres")


class _Pool:
    """Connections to one server, at most `max_idle` of them kept idle for reuse."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store
        self._idle: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()

    @property
    def errors(self) -> tuple[type[Exception], ...]:
        return (_import_psycopg().Error,)

    @property
    def where(self) -> str:
        """The server, without credentials."""
        try:
            info = _import_psycopg().conninfo.conninfo_to_dict(self._store.dsn)
        except Exception:
            return "postgresql"
        return (
            f"postgresql://{info.get('host', '')}:{info.get('port', '')}/{info.get('dbname', '')}"
        )

    def open(self) -> psycopg.Connection[Any]:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed and not conn.broken:
                    return conn
        store = self._store
        fresh: psycopg.Connection[Any] = _import_psycopg().connect(
            store.dsn,
            autocommit=True,
            connect_timeout=max(1, round(store.connect_timeout)),
            options=f"-c statement_timeout={max(1, round(store.statement_timeout * 1000))}",
        )
        return fresh

    def release(self, conn: psycopg.Connection[Any]) -> None:
        idle = conn.info.transaction_status == _import_psycopg().pq.TransactionStatus.IDLE
        with self._lock:
            reusable = idle and not conn.broken and not conn.closed
            if reusable and len(self._idle) < self._store.max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class PostgresStore(BlockingStore):
    """A `SessionStore` in PostgreSQL; implements every optional method.

    Args:
        dsn: A libpq connection string or URL (`postgresql://user@host:port/db`).
        table_prefix: The prefix of the three tables (lower-case letters, digits,
            underscores).
        max_idle: How many idle connections to keep for reuse.
        connect_timeout: Seconds to wait for a connection.
        statement_timeout: Seconds one statement may run before the server cancels it.
            A server that stops answering altogether (frozen, or its network gone
            silent) cannot cancel anything: a call then gives up after
            ``connect_timeout + 2 * statement_timeout`` with a `SessionStoreError`, and
            a cancelled call returns at once.

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
        super().__init__(
            SqlBackend(_POSTGRES, _Pool(self), table_prefix),
            call_timeout=connect_timeout + 2 * statement_timeout,
        )
