"""The database under the store: its engine, its connections and its schema's standing.

SQLite (WAL, ``synchronous=FULL``) by default; any SQLAlchemy URL works, PostgreSQL
included. SQLite write transactions begin ``IMMEDIATE`` so that two appenders never
deadlock; readers take a plain snapshot (``Database.reading``) and never block writers.

The tables are ``migration_evals.core.schema``'s, made and changed by the migrations in
``migration_evals.core.migrations``: a SQLite database is upgraded in place (inside a write
transaction, so processes opening a new file at once do not race) and a server database
that is behind is refused until ``migration-evals db upgrade`` has run (``SchemaPolicy``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from migration_evals.core import migrations
from migration_evals.core.errors import SchemaBehindError, StoreError
from migration_evals.core.migrations import Standing

__all__ = ["Database", "SchemaPolicy", "make_engine"]


class SchemaPolicy(StrEnum):
    """What ``Store.open`` does with a database whose schema is behind this release's."""

    UPGRADE = "upgrade"  # migrate it to this release's head (SQLite's default)
    REQUIRE_CURRENT = "require-current"  # refuse it (a server database's default)


_BUSY_TIMEOUT_MS = 30_000


def _switch_to_wal(cursor: Any) -> None:
    """Put the file in WAL mode, retrying while another connection holds it.

    SQLite skips the busy handler when the switch would deadlock with a connection that is
    switching too (several processes opening a new file at once), so those refusals are
    retried here for as long as the busy timeout would have waited.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    pause = 0.01
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _sqlite_pragmas(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (below) instead of pysqlite's deferred BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # The busy handler first: every later statement, the switch to WAL included, waits
        # for another connection's lock instead of failing at once.
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # IMMEDIATE takes the write lock up front, so two appenders never deadlock;
        # readers (marked read_only) take a plain snapshot and never block writers (WAL).
        if connection.get_execution_options().get("read_only"):
            connection.exec_driver_sql("BEGIN")
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")


def _engine_options(url: str, pool_size: int | None) -> dict[str, Any]:
    """Server databases: fail within seconds when the server is away, drop pooled
    connections that died with a server restart instead of handing them out, and keep
    as many connections as the caller has threads."""
    if not url.startswith("postgresql"):
        return {}
    options: dict[str, Any] = {"pool_pre_ping": True, "connect_args": {"connect_timeout": 10}}
    if pool_size is not None:
        options.update(pool_size=pool_size, max_overflow=pool_size)
    return options


def make_engine(url: str, pool_size: int | None = None, *, pooled: bool = True) -> Engine:
    """An engine for ``url``, SQLite's pragmas set on every connection it opens."""
    options = _engine_options(url, pool_size)
    if not pooled:
        options = {"connect_args": options.get("connect_args", {}), "poolclass": NullPool}
    try:
        engine = sa.create_engine(url, future=True, **options)
    except (SQLAlchemyError, ValueError, ImportError) as exc:
        raise StoreError(f"cannot use database URL {url!r}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        _sqlite_pragmas(engine)
    return engine


class Database:
    """One engine: read connections, and the schema's standing against this release."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def display_url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @property
    def in_memory(self) -> bool:
        """A SQLite database in memory: another connection would open another, empty, one."""
        return self.is_sqlite and self.engine.url.database in (None, "", ":memory:")

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads only: on SQLite it never takes the write lock."""
        with self.engine.connect() as conn:
            yield conn.execution_options(read_only=True)

    def schema_state(self) -> migrations.SchemaState:
        """Where this database stands against this release's migrations."""
        try:
            with self.reading() as conn:
                return migrations.state(conn)
        except SQLAlchemyError as exc:
            raise self._unusable(exc) from exc

    def upgrade_schema(self) -> migrations.SchemaState:
        """Migrate to this release's head; returns the state the database was in before."""
        try:
            with self.engine.begin() as conn:
                before = migrations.upgrade(conn)
        except SQLAlchemyError as exc:
            raise self._unusable(exc) from exc
        if before.standing is Standing.UNKNOWN:
            raise StoreError(self._newer(before))
        return before

    def prepare_schema(self, policy: SchemaPolicy | None) -> None:
        """Make sure the schema is this release's, as ``policy`` says (by default: upgrade
        SQLite, refuse a server database that is behind)."""
        if policy is None:
            policy = SchemaPolicy.UPGRADE if self.is_sqlite else SchemaPolicy.REQUIRE_CURRENT
        found = self.schema_state()
        if found.standing is Standing.CURRENT:
            return
        if found.standing is Standing.UNKNOWN:
            raise StoreError(self._newer(found))
        if policy is SchemaPolicy.REQUIRE_CURRENT:
            raise SchemaBehindError(
                f"database {self.display_url} {found.describe()}: upgrade it first with "
                "`migration-evals db upgrade --db URL` (once, before the servers start)"
            )
        self.upgrade_schema()

    def _unusable(self, exc: SQLAlchemyError) -> StoreError:
        reason = " ".join(str(exc.__cause__ or exc).split())  # one line, for stderr
        return StoreError(f"cannot open database {self.display_url}: {reason}")

    def _newer(self, found: migrations.SchemaState) -> str:
        return (
            f"database {self.display_url} is at schema revision {found.revision}, which this "
            f"release (at {found.head}) does not know: a newer release of migration-evals made it"
        )
