"""One schema, migrated: the migrations build ``migration_evals.core.schema``, adopt a database of
the release before them without losing a row, and servers never upgrade on their own."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.core import migrations
from migration_evals.core.errors import StoreError
from migration_evals.core.migrations import Standing
from migration_evals.core.schema import metadata, runs_table
from migration_evals.core.store import SchemaPolicy, Store
from migration_evals.oracles.runner import RunStatus
from tests.core import opening_together
from tests.core.previous_release import build_previous_release, previous_rows, read_rows

# Every new ledger here runs the chain itself (the suite copies a migrated template).
pytestmark = pytest.mark.real_migrations

LEDGER_TABLES = {"meta", "runs", "ledger", "ledger_head", "trial_slots"}


def schema_differences(url: str) -> list[object]:
    """What autogenerate would change to make the database match ``migration_evals.core.schema``."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return list(compare_metadata(MigrationContext.configure(conn), metadata))
    finally:
        engine.dispose()


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def test_the_migrations_build_exactly_the_declared_schema(url: str) -> None:
    Store.open(url).close()
    assert schema_differences(url) == []


def test_every_table_is_there_whichever_command_opens_the_database_first(url: str) -> None:
    store = Store.open(url)  # what ``ledger verify`` opens: once only the ledger's tables
    with store.db.reading() as conn:
        assert set(metadata.tables) <= set(sa.inspect(conn).get_table_names())
    assert store.db.schema_state().standing is Standing.CURRENT
    assert store.ledger.head() == (0, "0" * 64)
    store.close()


def test_a_database_of_the_previous_release_keeps_every_row_and_its_chain(url: str) -> None:
    build_previous_release(url)
    before = Store.attach(url)
    assert before.db.schema_state().standing is Standing.UNVERSIONED
    before.close()
    store = Store.open(url)  # SQLite: upgraded on open
    check = store.ledger.verify_ledger()
    assert check.ok and check.rows == 15
    assert store.db.schema_state().revision == migrations.head()
    store.close()
    expected = previous_rows()
    assert read_rows(url, sorted(expected)) == expected
    assert schema_differences(url) == []
    assert main(["ledger", "verify", "--db", url]) == 0


def test_a_previous_release_database_with_only_the_ledger_gets_the_other_tables(
    url: str,
) -> None:
    build_previous_release(url, tables=LEDGER_TABLES)  # what ``run`` alone created
    assert main(["db", "upgrade", "--db", url]) == 0
    assert schema_differences(url) == []
    store = Store.open(url)
    assert store.ledger.verify_ledger().ok and store.ledger.head()[0] == 15
    store.close()


def test_db_status_tells_an_old_database_and_exits_non_zero(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    build_previous_release(url, tables=LEDGER_TABLES)
    assert main(["db", "status", "--db", url]) == ExitStatus.SCHEMA_BEHIND
    assert "made by a release before schema migrations" in capsys.readouterr().out
    assert main(["db", "upgrade", "--db", url]) == 0
    assert main(["db", "status", "--db", url]) == 0


def test_a_table_without_the_columns_of_the_schema_is_not_adopted(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ledger (seq BIGINT PRIMARY KEY, note TEXT)")
    engine.dispose()
    with pytest.raises(StoreError, match="table ledger lacks column"):
        Store.open(url)
    store = Store.attach(url)
    assert store.db.schema_state().standing is Standing.UNVERSIONED  # nothing half-done
    store.close()


def test_require_current_refuses_a_database_that_is_behind_naming_the_command(
    url: str,
) -> None:
    build_previous_release(url, tables=LEDGER_TABLES)
    with pytest.raises(StoreError, match=r"`migration-evals db upgrade --db URL`") as refused:
        Store.open(url, schema=SchemaPolicy.REQUIRE_CURRENT)
    assert "\n" not in str(refused.value)
    with pytest.raises(StoreError, match="has no tables yet"):
        Store.open(url.replace("ledger.db", "new.db"), schema=SchemaPolicy.REQUIRE_CURRENT)


def test_the_previous_releases_schema_version_row_is_kept(url: str) -> None:
    # A release before migrations opening an upgraded database checks this row.
    Store.open(url).close()
    assert read_rows(url, ["meta"]) == {"meta": [{"key": "schema_version", "value": "1"}]}


def test_processes_opening_a_new_sqlite_file_at_once_all_succeed(url: str) -> None:
    # Processes of a fork server that has imported the store: three processes all the same,
    # without three imports of it (spawned, each cost a quarter of a second).
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([opening_together.__name__])
    # Each process opens once all three have started and imported: a process waiting at
    # the barrier takes no other task, so the three opens are in three processes.
    together = context.Barrier(3)
    with context.Pool(3, initializer=opening_together.wait_with, initargs=(together,)) as pool:
        assert pool.map(opening_together.open_store, [url] * 3) == [0, 0, 0]
    assert schema_differences(url) == []
    assert read_rows(url, ["ledger_head"])["ledger_head"] == [
        {"id": 1, "seq": 0, "row_hash": "0" * 64}
    ]


def test_threads_making_new_sqlite_ledgers_at_once_each_get_the_whole_schema(
    tmp_path: Path,
) -> None:
    urls = [f"sqlite:///{tmp_path}/ledger-{n}.db" for n in range(6)]
    together = threading.Barrier(len(urls))

    def make(url: str) -> int:
        together.wait()
        store = Store.open(url)
        rows = store.ledger.head()[0]
        store.close()
        return rows

    with ThreadPoolExecutor(len(urls)) as pool:
        assert list(pool.map(make, urls)) == [0] * len(urls)
    assert [schema_differences(url) for url in urls] == [[]] * len(urls)


def test_the_chain_read_without_alembic_is_alembics_own() -> None:
    scripts = migrations._scripts()
    assert migrations.head() == scripts.get_current_head()
    assert migrations._chain() == {
        script.revision: script.down_revision for script in scripts.walk_revisions()
    }


def test_the_revision_read_without_alembic_is_alembics_own(url: str) -> None:
    Store.open(url).close()
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert (
            migrations.state(conn).revision
            == MigrationContext.configure(conn).get_current_revision()
        )
        assert migrations.state(conn).revision == migrations.head()
    engine.dispose()


def test_reading_a_current_ledger_imports_no_alembic(url: str) -> None:
    Store.open(url).close()
    probe = (
        "import sys; from migration_evals.core.store import Store; "
        f"Store.open({url!r}).close(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_run_status_fits_its_column() -> None:
    """A length SQLite ignores and PostgreSQL enforces (revision 0006)."""
    longest = max(len(status.value) for status in RunStatus)
    assert runs_table.c.status.type.length >= longest
