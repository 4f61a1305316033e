"""The ledger: append-only, hash-chained, tamper-evident; the cache never reuses errors."""

from __future__ import annotations

import sqlite3
import threading
from datetime import date
from pathlib import Path

import pytest

from migration_evals.core.database import _switch_to_wal
from migration_evals.core.errors import StoreError
from migration_evals.core.model import (
    Changeset,
    Envelope,
    FabricatedMark,
    Stamps,
    Tier,
    Trial,
    Verdict,
)
from migration_evals.core.store import LedgerEntry, Store
from tests.conftest import product_sqlite_pragmas

STAMPS = Stamps("o" * 64, "r" * 64, "h" * 64)
CHANGESET = Changeset(
    id="c1",
    repo="r",
    base_commit="b" * 40,
    patch="p",
    recipe="java8-to-17",
    model="gpt-5",
    repo_created_at=date(2020, 1, 1),
)


def _trial(n: int, verdict: Verdict = Verdict.PASS, fabricated: bool = False) -> Trial:
    marks = (FabricatedMark("sandbox", "k", "c", "miss"),) if fabricated else ()
    envelope = Envelope(
        f"t{n}", "c1", Tier.APPLY, verdict, 0.001, 0.0, 0.1, STAMPS, fabricated=marks
    )
    return Trial(f"t{n}", "run", CHANGESET, (envelope,))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def test_a_shipped_sqlite_ledger_is_in_wal_mode_and_fsyncs_every_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite's own ledgers skip fsync (tests/conftest.py); the product's must not.
    monkeypatch.setattr("migration_evals.core.database._sqlite_pragmas", product_sqlite_pragmas)
    store = Store.open(f"sqlite:///{tmp_path / 'shipped.db'}")
    try:
        with store.db.engine.connect() as conn:
            pragmas = [conn.exec_driver_sql(f"PRAGMA {name}").scalar() for name in
                       ("journal_mode", "synchronous", "foreign_keys")]  # fmt: skip
    finally:
        store.close()
    assert pragmas == ["wal", 2, 1]  # synchronous 2 is FULL


def test_the_suites_own_ledgers_skip_fsync(store: Store) -> None:
    with store.db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 0  # OFF
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_clean_ledger_verifies(store: Store) -> None:
    for n in range(5):
        store.ledger.append_trial(_trial(n), {"apply": f"key{n}"})
    check = store.ledger.verify_ledger()
    assert check.ok and check.rows == 5
    assert store.ledger.head() == (5, check.head_hash)


def _sql(store: Store, statement: str) -> None:
    path = store.db.engine.url.database
    assert path
    with sqlite3.connect(path) as raw:
        raw.execute(statement)


def test_an_edited_row_is_detected(store: Store) -> None:
    for n in range(3):
        store.ledger.append_trial(_trial(n, Verdict.FAIL), {})
    _sql(store, "UPDATE ledger SET verdict = 'pass' WHERE seq = 2")
    problems = store.ledger.verify_ledger().problems
    assert problems == ("row 2: content does not match its hash (edited)",)


def test_a_deleted_middle_row_is_detected(store: Store) -> None:
    for n in range(3):
        store.ledger.append_trial(_trial(n), {})
    _sql(store, "DELETE FROM ledger WHERE seq = 2")
    problems = store.ledger.verify_ledger().problems
    assert "row 2 is missing (next row is 3)" in problems
    assert "row 3: does not chain to the row before it" in problems


def test_a_deleted_last_row_is_detected(store: Store) -> None:
    for n in range(3):
        store.ledger.append_trial(_trial(n), {})
    _sql(store, "DELETE FROM ledger WHERE seq = 3")
    assert not store.ledger.verify_ledger().ok


def test_cache_skips_errors_and_fabricated_envelopes(store: Store) -> None:
    store.ledger.append_trial(_trial(1, Verdict.ERROR), {"apply": "k"})
    store.ledger.append_trial(_trial(2, fabricated=True), {"apply": "k"})
    assert store.trials.cached_envelope("k") is None
    store.ledger.append_trial(_trial(3, Verdict.FAIL), {"apply": "k"})
    cached = store.trials.cached_envelope("k")
    assert cached is not None and cached.verdict is Verdict.FAIL


def test_concurrent_appends_keep_the_chain(store: Store) -> None:
    def worker(offset: int) -> None:
        for n in range(20):
            store.ledger.append_trial(_trial(offset + n), {})

    threads = [threading.Thread(target=worker, args=(i * 100,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    check = store.ledger.verify_ledger()
    assert check.ok and check.rows == 80


def test_envelopes_round_trip_through_the_ledger(store: Store) -> None:
    store.ledger.append_trial(_trial(1, fabricated=True), {})
    (entry,) = list(store.ledger.entries())
    assert entry.envelope.fabricated[0].reason == "miss"
    assert entry.changeset["patch_sha256"] == CHANGESET.patch_sha256


def test_a_schema_revision_from_a_newer_release_is_refused(store: Store, tmp_path: Path) -> None:
    _sql(store, "UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(
        StoreError, match="revision 9999, which this release .* does not know: a newer release"
    ):
        Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def test_unusable_url_is_a_clear_error() -> None:
    with pytest.raises(StoreError, match="cannot use database URL"):
        Store.open("nosuchdb://x")


def test_a_row_decodes_as_entries_streams_it(store: Store) -> None:
    store.ledger.append_trial(_trial(9), {})
    (entry,) = store.ledger.entries()
    with store.db.reading() as conn:
        payload = conn.exec_driver_sql("SELECT payload FROM ledger WHERE seq = 1").scalar_one()
    assert LedgerEntry.decode(1, payload) == entry


def test_a_trial_is_written_once_whatever_happens_twice(store: Store) -> None:
    assert store.ledger.append_trial_once(_trial(1), {"apply": "k1"}) == 1
    assert store.ledger.append_trial_once(_trial(1, Verdict.FAIL), {"apply": "k1"}) is None
    assert store.ledger.append_trial_once(_trial(2), {}) == 2
    assert store.ledger.trials_written("run") == {"t1", "t2"}
    assert [e.envelope.verdict for e in store.ledger.entries()] == [Verdict.PASS, Verdict.PASS]
    assert store.ledger.verify_ledger().ok


def test_a_refused_claim_writes_nothing(store: Store) -> None:
    seen = []

    def refuse(conn: object) -> bool:
        seen.append(conn)
        return False

    assert store.ledger.append_trial_once(_trial(1), {}, claim=refuse) is None
    assert seen and store.ledger.head()[0] == 0 and store.ledger.trials_written("run") == set()
    assert store.ledger.append_trial_once(_trial(1), {}, claim=lambda _conn: True) == 1


def test_an_unreachable_server_is_one_clear_line() -> None:
    # Nothing listens on port 1: the error names the database, hides the password, and
    # fits on one line of stderr.
    with pytest.raises(StoreError) as caught:
        Store.open("postgresql+psycopg://someone:secret@127.0.0.1:1/evals")
    message = str(caught.value)
    assert message.startswith("cannot open database postgresql+psycopg://someone:***@")
    assert "refused" in message and "\n" not in message and "secret" not in message


def test_a_lookup_sees_rows_appended_after_an_earlier_lookup(store: Store) -> None:
    assert store.trials.cached_envelopes(["k"]) == {}  # keeps its connection for the next lookup
    store.ledger.append_trial(_trial(1, Verdict.FAIL), {"apply": "k"})
    store.ledger.append_trial(_trial(2, Verdict.PASS), {"apply": "k"})
    found = store.trials.cached_envelopes(["k", "other"])
    assert list(found) == ["k"] and found["k"].verdict is Verdict.PASS  # the newest wins


def test_a_lookup_survives_a_kept_connection_that_died(store: Store) -> None:
    store.ledger.append_trial(_trial(1), {"apply": "k"})
    assert "k" in store.trials.cached_envelopes(["k"])
    lookups = store.trials._lookups
    assert lookups is not None and len(lookups._free) == 1
    lookups._free[0].dbapi_connection.close()  # as a database restart would leave it
    assert "k" in store.trials.cached_envelopes(["k"])


def test_lookups_work_on_an_in_memory_database() -> None:
    store = Store.open("sqlite://")
    store.ledger.append_trial(_trial(1), {"apply": "k"})
    assert set(store.trials.cached_envelopes(["k", "j"])) == {"k"}
    assert store.trials.cached_envelopes([]) == {}
    store.close()


class _ContendedCursor:
    """Refuses the switch to WAL ``refusals`` times with ``message``, then accepts it."""

    def __init__(self, refusals: int, message: str = "database is locked") -> None:
        self.refusals = refusals
        self.message = message
        self.tries = 0

    def execute(self, statement: str) -> None:
        self.tries += 1
        if self.tries <= self.refusals:
            raise sqlite3.OperationalError(self.message)


def test_the_switch_to_wal_is_retried_while_another_connection_holds_the_file() -> None:
    # SQLite refuses it at once, busy handler or not, when two connections switch together.
    cursor = _ContendedCursor(refusals=3)
    _switch_to_wal(cursor)
    assert cursor.tries == 4


def test_the_switch_to_wal_does_not_retry_other_errors() -> None:
    cursor = _ContendedCursor(refusals=1, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        _switch_to_wal(cursor)
    assert cursor.tries == 1
