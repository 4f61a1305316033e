"""The migrations on a real PostgreSQL server: adopting the previous release's database,
and a server that refuses a database that is behind instead of upgrading it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.core import migrations
from migration_evals.core.errors import StoreError
from migration_evals.core.migrations import Standing
from migration_evals.core.schema import runs_table
from migration_evals.core.store import Store
from migration_evals.oracles.runner import RunStatus
from tests.core.previous_release import build_previous_release, previous_rows, read_rows
from tests.core.test_migrations import LEDGER_TABLES, schema_differences

pytestmark = pytest.mark.postgres


def test_the_migrations_build_exactly_the_declared_schema(postgres_url: str) -> None:
    assert schema_differences(postgres_url) == []


def test_db_upgrade_adopts_the_previous_release_keeping_every_row_and_the_chain(
    bare_postgres_url: str,
) -> None:
    url = bare_postgres_url
    build_previous_release(url)
    assert main(["db", "upgrade", "--db", url]) == 0
    expected = previous_rows()
    assert read_rows(url, sorted(expected)) == expected
    assert schema_differences(url) == []
    assert main(["ledger", "verify", "--db", url]) == 0
    store = Store.open(url)
    assert store.db.schema_state().revision == migrations.head()
    assert store.ledger.verify_ledger().rows == 15
    store.close()


def test_a_server_refuses_a_database_that_is_behind_and_names_the_command(
    bare_postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = bare_postgres_url
    build_previous_release(url, tables=LEDGER_TABLES)
    with pytest.raises(StoreError, match=r"release before schema migrations.*db upgrade --db URL"):
        Store.open(url)
    assert main(["ledger", "verify", "--db", url]) == ExitStatus.SCHEMA_BEHIND
    (line,) = capsys.readouterr().err.splitlines()
    assert "migration-evals db upgrade --db URL" in line
    store = Store.attach(url)
    assert store.db.schema_state().standing is Standing.UNVERSIONED  # refused, not upgraded
    store.close()


def test_a_server_refuses_an_empty_database_too(bare_postgres_url: str) -> None:
    with pytest.raises(StoreError, match="has no tables yet.*db upgrade"):
        Store.open(bare_postgres_url)
    assert main(["db", "status", "--db", bare_postgres_url]) == ExitStatus.SCHEMA_BEHIND


def test_every_run_status_fits_in_postgres(postgres_url: str) -> None:
    """PostgreSQL enforces the column's length (SQLite does not): a run stopped by its
    budget or ending with internal errors must still be recorded as finished."""
    store = Store.open(postgres_url)
    try:
        with store.db.engine.begin() as conn:
            for number, status in enumerate(RunStatus):
                conn.execute(
                    runs_table.insert().values(
                        run_id=f"r-status-{number}",
                        started_at="2026-01-01T00:00:00+00:00",
                        status=status.value,
                        options="{}",
                    )
                )
            stored = conn.execute(sa.select(runs_table.c.status)).scalars().all()
    finally:
        store.close()
    assert {status.value for status in RunStatus} <= set(stored)
