"""The cache lookup made before every trial, on plain DBAPI connections.

The lookup is one indexed query, yet through SQLAlchemy's connection, transaction and
result bookkeeping it costs several times what the database spends on it; a trial makes
it once, so at replay speed that bookkeeping is a visible share of the framework's own
time. Connections are opened on demand (one per concurrent caller), kept in a free list
and closed with the store. Each query stands alone (autocommit): there is nothing to hold
a snapshot for, and the newest rows are always seen.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from migration_evals.core.errors import StoreError
from migration_evals.core.model import Verdict

__all__ = ["CacheLookups", "cache_lookup_sql"]

# Envelopes that are never reused: an infrastructure error says nothing about the
# candidate, and a skipped tier was not graded.
_NEVER_REUSED = (Verdict.ERROR, Verdict.SKIPPED)


def cache_lookup_sql(paramstyle: str, count: int) -> str:
    """Rows that may serve ``count`` cache keys, newest first (keys bound positionally)."""
    mark = "?" if paramstyle == "qmark" else "%s"
    excluded = ", ".join(f"'{verdict.value}'" for verdict in _NEVER_REUSED)
    # Only placeholders and the enum's own constant values are formatted in; keys are bound.
    return (
        "SELECT cache_key, payload FROM ledger"  # noqa: S608
        f" WHERE cache_key IN ({', '.join([mark] * count)})"
        f" AND verdict NOT IN ({excluded}) AND fabricated = false"
        " ORDER BY seq DESC"
    )


class CacheLookups:
    """A free list of DBAPI connections to the store's database, for the cache lookup."""

    def __init__(self, engine: Engine) -> None:
        """``engine``: configured like the store's (connect options, SQLite pragmas) but
        unpooled (``NullPool``), so lookups never wait on, or exhaust, the store's pool."""
        self._engine = engine
        self._postgres = engine.dialect.name == "postgresql"
        self._paramstyle = engine.dialect.paramstyle
        self._free: list[Any] = []
        self._opened: list[Any] = []
        self._lock = threading.Lock()
        self._sql: dict[int, str] = {}

    def rows(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        """(cache_key, payload) rows for ``keys``, newest first; retried once on a fresh
        connection when a kept one has died (a database restart)."""
        sql = self._sql.get(len(keys))
        if sql is None:
            sql = self._sql[len(keys)] = cache_lookup_sql(self._paramstyle, len(keys))
        for attempt in (1, 2):
            connection = self._take()
            try:
                cursor = connection.cursor()
                cursor.execute(sql, list(keys))
                found = [(str(key), str(payload)) for key, payload in cursor.fetchall()]
                cursor.close()
            except Exception as exc:  # the DBAPI's own error classes differ per driver
                self._discard(connection)
                if attempt == 2:
                    raise StoreError(f"cache lookup failed: {exc}") from exc
                continue
            self._give_back(connection)
            return found
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            opened, self._opened, self._free = self._opened, [], []
        for connection in opened:
            _close_quietly(connection)
        self._engine.dispose()

    def _take(self) -> Any:
        with self._lock:
            if self._free:
                return self._free.pop()
        try:
            connection = self._engine.raw_connection()
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot open database for a cache lookup: {exc}") from exc
        if self._postgres:
            connection.dbapi_connection.autocommit = True  # type: ignore[union-attr]
        with self._lock:
            self._opened.append(connection)
        return connection

    def _give_back(self, connection: Any) -> None:
        with self._lock:
            self._free.append(connection)

    def _discard(self, connection: Any) -> None:
        with self._lock:
            if connection in self._opened:
                self._opened.remove(connection)
        _close_quietly(connection)


def _close_quietly(connection: Any) -> None:
    with contextlib.suppress(Exception):  # closing a connection that already died
        connection.close()
