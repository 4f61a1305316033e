"""Schema migrations (Alembic), run from here: no ``alembic.ini``, no ``env.py``.

The revisions are the modules of ``core.migrations.versions``, one linear chain from the
baseline; the newest is ``head()``. ``upgrade`` brings a database to it, ``state`` says
where one stands. ``core.store.Store.open`` upgrades SQLite itself and requires a server
database to be current already (``migration-evals db upgrade`` upgrades it), so several
servers starting at once never race on DDL.

A database made before there were migrations has the tables (those its first command
created) but no ``alembic_version``: the baseline adopts it, creating the missing tables
and checking the present ones, and keeps every row.

Adding a migration: a new module in ``versions/`` whose ``down_revision`` is the current
head, and the same change in ``core.schema``; ``tests/core/test_migrations.py`` fails
while the two differ.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from core.schema import metadata

__all__ = ["SchemaState", "Standing", "head", "state", "upgrade"]

# Any fixed number: the key of the advisory lock that serialises upgrades on PostgreSQL.
_UPGRADE_LOCK_KEY = 0x6D65_7363_6865_6D61


class Standing(StrEnum):
    CURRENT = "current"  # at this release's head
    EMPTY = "empty"  # no tables at all
    UNVERSIONED = "unversioned"  # tables of a release before migrations, no revision
    BEHIND = "behind"  # at an older revision of this chain
    UNKNOWN = "unknown"  # at a revision this release does not have (a newer release's)


@dataclass(frozen=True, slots=True)
class SchemaState:
    """Where a database stands against this release's migrations."""

    revision: str | None  # None: no alembic_version row
    head: str
    standing: Standing

    @property
    def upgradable(self) -> bool:
        return self.standing in (Standing.EMPTY, Standing.UNVERSIONED, Standing.BEHIND)

    def describe(self) -> str:
        """One line, for messages: where the database is and where this release is."""
        at = {
            Standing.EMPTY: "has no tables yet",
            Standing.UNVERSIONED: "was made by a release before schema migrations",
        }.get(self.standing, f"is at schema revision {self.revision}")
        return f"{at}; this release's schema is revision {self.head}"


@functools.cache
def _scripts() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", "core:migrations")
    return ScriptDirectory.from_config(config)


def head() -> str:
    """This release's newest revision."""
    found = _scripts().get_current_head()
    assert found is not None, "core.migrations.versions holds no revision"
    return found


def state(conn: Connection) -> SchemaState:
    """Where the database behind ``conn`` stands; reads only."""
    revision = MigrationContext.configure(conn).get_current_revision()
    newest = head()
    if revision == newest:
        standing = Standing.CURRENT
    elif revision is None:
        tables = set(sa.inspect(conn).get_table_names())
        standing = Standing.UNVERSIONED if tables & set(metadata.tables) else Standing.EMPTY
    elif _known(revision):
        standing = Standing.BEHIND
    else:
        standing = Standing.UNKNOWN
    return SchemaState(revision, newest, standing)


def _known(revision: str) -> bool:
    return any(script.revision == revision for script in _scripts().walk_revisions())


def upgrade(conn: Connection) -> SchemaState:
    """Bring the database behind ``conn`` to ``head()`` inside the caller's transaction.

    On PostgreSQL an advisory lock held to the end of that transaction makes concurrent
    upgrades wait for each other (DDL is transactional there); on SQLite the caller's
    write transaction does the same. Returns the state the database was in before.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_UPGRADE_LOCK_KEY)))
    before = state(conn)
    if before.standing is Standing.UNKNOWN:
        return before
    if before.standing is not Standing.CURRENT:
        _run(conn)
    return before


def _run(conn: Connection) -> None:
    scripts = _scripts()

    def steps(revision: Any, _context: MigrationContext) -> Any:
        return scripts._upgrade_revs("head", revision)  # what ``alembic upgrade`` runs

    config = Config()
    with EnvironmentContext(config, scripts, fn=steps, destination_rev="head") as env:
        env.configure(connection=conn, target_metadata=metadata)
        env.run_migrations()
