"""The same store on a real PostgreSQL server: schema, hash chain, several processes."""

from __future__ import annotations

import multiprocessing
import time
from datetime import date

import pytest
import sqlalchemy as sa

from migration_evals.core.errors import StoreError
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from migration_evals.core.store import Store

pytestmark = pytest.mark.postgres

STAMPS = Stamps("o" * 64, "r" * 64, "h" * 64)


def _trial(run: str, n: int) -> Trial:
    changeset = Changeset(
        id=f"c{n}",
        repo="r",
        base_commit="b" * 40,
        patch="p",
        recipe="java8-to-17",
        model="gpt-5",
        repo_created_at=date(2020, 1, 1),
    )
    tiers = (Tier.APPLY, Tier.COMPILE)
    envelopes = tuple(
        Envelope(f"{run}-t{n}", f"c{n}", tier, Verdict.PASS, 0.001, 0.0, 0.1, STAMPS)
        for tier in tiers
    )
    return Trial(f"{run}-t{n}", run, changeset, envelopes)


def _append(url: str, worker: int, count: int) -> None:
    """One process: open the store (racing the others to create it) and append."""
    store = Store.open(url)
    for n in range(count):
        store.ledger.append_trial(_trial(f"w{worker}", n), {"apply": f"w{worker}-{n}"})
    store.close()


def _append_same(url: str, count: int) -> int:
    """One process: try to write every trial of one run; returns how many it wrote."""
    store = Store.open(url)
    written = sum(
        store.ledger.append_trial_once(_trial("shared", n), {}) is not None for n in range(count)
    )
    store.close()
    return written


def _upgrade_at(url: str, start_at: float) -> int:
    """One process: wait for the common start, then upgrade (and so create) the schema."""
    time.sleep(max(0.0, start_at - time.time()))
    store = Store.attach(url)
    store.db.upgrade_schema()
    store.close()
    store = Store.open(url)
    rows = store.ledger.head()[0]
    store.close()
    return rows


def _in_processes(target: object, arguments: list[tuple[object, ...]]) -> list[object]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(len(arguments)) as pool:
        return list(pool.starmap(target, arguments))  # type: ignore[arg-type]


def test_processes_upgrading_a_new_database_at_the_same_moment_all_succeed(
    bare_postgres_url: str,
) -> None:
    start_at = time.time() + 4  # after every process has started and imported
    assert _in_processes(_upgrade_at, [(bare_postgres_url, start_at)] * 6) == [0] * 6
    engine = sa.create_engine(bare_postgres_url)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM meta")).scalar_one() == 1
        assert conn.execute(sa.text("SELECT count(*) FROM ledger_head")).scalar_one() == 1
    engine.dispose()


def test_four_processes_create_the_schema_and_append_losing_nothing(postgres_url: str) -> None:
    _in_processes(_append, [(postgres_url, worker, 25) for worker in range(4)])
    store = Store.open(postgres_url)
    check = store.ledger.verify_ledger()
    assert check.ok, check.problems
    assert check.rows == 4 * 25 * 2
    trial_ids = [entry.trial_id for entry in store.ledger.entries()]
    assert len(set(trial_ids)) == 100 and len(trial_ids) == 200  # no loss, no duplicate
    store.close()


def test_processes_racing_on_the_same_trials_write_each_once(postgres_url: str) -> None:
    written = _in_processes(_append_same, [(postgres_url, 30) for _ in range(3)])
    assert sum(written) == 30  # type: ignore[arg-type]
    store = Store.open(postgres_url)
    assert len(store.ledger.trials_written("shared")) == 30
    assert store.ledger.verify_ledger().rows == 60
    store.close()


def test_schema_revision_and_tampering_on_postgres(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    store.ledger.append_trial(_trial("x", 1), {})
    with store.db.engine.begin() as conn:
        conn.execute(sa.text("UPDATE ledger SET verdict = 'fail' WHERE seq = 1"))
    assert store.ledger.verify_ledger().problems == (
        "row 1: content does not match its hash (edited)",
    )
    with store.db.engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '7777'"))
    store.close()
    with pytest.raises(StoreError, match="schema revision 7777, which this release"):
        Store.open(postgres_url)


def test_cache_lookups_on_postgres(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    store.ledger.append_trial(_trial("x", 1), {"apply": "key-a", "compile": "key-b"})
    found = store.trials.cached_envelopes(["key-a", "key-b", "key-c"])
    assert set(found) == {"key-a", "key-b"}
    store.close()
