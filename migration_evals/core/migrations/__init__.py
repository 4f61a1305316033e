"""Schema migrations (Alembic), run from here: no ``alembic.ini``, no ``env.py``.

The revisions are the modules of ``migration_evals.core.migrations.versions``, one linear chain from
the baseline; the newest is ``head()``. ``upgrade`` brings a database to it, ``state`` says
where one stands. ``migration_evals.core.store.Store.open`` upgrades SQLite itself and requires a
server database to be current already (``migration-evals db upgrade`` upgrades it), so several
servers starting at once never race on DDL.

A database made before there were migrations has the tables (those its first command
created) but no ``alembic_version``: the baseline adopts it, creating the missing tables
and checking the present ones, and keeps every row.

Adding a migration: a new module in ``versions/`` whose ``down_revision`` is the current
head, and the same change in ``migration_evals.core.schema``; ``tests/core/test_migrations.py``
fails while the two differ.

Alembic is imported only to upgrade. Every command opens the ledger, and reading where it
stands (the revision row, and the chain's ids from the version modules' source) needs no
more than SQLAlchemy; importing Alembic cost a few tenths of a second per command.
"""

from __future__ import annotations

import ast
import functools
import threading
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

from migration_evals.core.schema import metadata

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


_VERSIONS = Path(__file__).with_name("versions")
_VERSION_TABLE = "alembic_version"  # Alembic's own name for it


@functools.cache
def _scripts() -> ScriptDirectory:
    from alembic.config import Config  # noqa: PLC0415 - deferred on purpose, see above
    from alembic.script import ScriptDirectory  # noqa: PLC0415

    config = Config()
    config.set_main_option("script_location", "migration_evals.core:migrations")
    return ScriptDirectory.from_config(config)


@functools.cache
def _chain() -> dict[str, str | None]:
    """Each revision of ``versions/`` and the one it revises, read from the modules'
    ``revision``/``down_revision`` assignments without importing them (nor Alembic)."""
    chain: dict[str, str | None] = {}
    for module in sorted(_VERSIONS.glob("v*.py")):
        names = _assigned_constants(module)
        chain[str(names["revision"])] = names.get("down_revision")
    return chain


def _assigned_constants(module: Path) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str | None):
                    found[target.id] = node.value.value
    return found


def head() -> str:
    """This release's newest revision: the one no other revises."""
    chain = _chain()
    heads = set(chain) - set(chain.values())
    assert len(heads) == 1, (
        f"migration_evals.core.migrations.versions has heads {sorted(heads)}, not one"
    )
    return heads.pop()


def _current_revision(conn: Connection) -> str | None:
    if not sa.inspect(conn).has_table(_VERSION_TABLE):
        return None
    version = sa.column("version_num", sa.String)
    query = sa.select(version).select_from(sa.table(_VERSION_TABLE))
    rows = conn.execute(query).scalars().all()
    assert len(rows) <= 1, f"{_VERSION_TABLE} has {len(rows)} rows; this chain has one head"
    return rows[0] if rows else None


def state(conn: Connection) -> SchemaState:
    """Where the database behind ``conn`` stands; reads only."""
    revision = _current_revision(conn)
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
    return revision in _chain()


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


# Alembic's ``context`` and ``op`` are process-wide proxies of the migration running now,
# so two threads upgrading two databases at once would run each other's steps (tables
# made twice, crashes in the driver). One upgrade runs at a time in a process.
_ONE_UPGRADE_AT_A_TIME = threading.Lock()


def _run(conn: Connection) -> None:
    with _ONE_UPGRADE_AT_A_TIME:
        _run_alone(conn)


def _run_alone(conn: Connection) -> None:
    from alembic.config import Config  # noqa: PLC0415 - deferred on purpose, see above
    from alembic.runtime.environment import EnvironmentContext  # noqa: PLC0415

    scripts = _scripts()

    def steps(revision: Any, _context: MigrationContext) -> Any:
        return scripts._upgrade_revs("head", revision)  # what ``alembic upgrade`` runs

    config = Config()
    with EnvironmentContext(config, scripts, fn=steps, destination_rev="head") as env:
        env.configure(connection=conn, target_metadata=metadata)
        env.run_migrations()
