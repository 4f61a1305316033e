"""Fixtures for the gate's tests: a fresh ledger, and specs whose hypotheses were
registered long before any result a test writes (so only the HARKing test sees HARKing)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.gate.ledgers import add_gold, append, balanced, registered_early


@pytest.fixture
def gate_specs(specs: SpecSet) -> SpecSet:
    return registered_early(specs)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def _clean_ledger(tmp_path_factory: pytest.TempPathFactory, specs: SpecSet) -> Path:
    """``clean_store``'s ledger, written once per worker through the store: 120 trials
    and the gold table took a quarter of a second for each of the ~40 tests that ask."""
    path = tmp_path_factory.mktemp("clean-ledger") / "ledger.db"
    store = Store.open(f"sqlite:///{path}")
    append(store, registered_early(specs), balanced())
    add_gold(store)
    store.close()  # the last connection: SQLite folds the WAL into the file
    return path


@pytest.fixture
def clean_store(_clean_ledger: Path, tmp_path: Path) -> Iterator[Store]:
    """A ledger the gate publishes: balanced trials, enough of them, an anchored gold table
    (a copy of one written at the start, which each test may change as it likes)."""
    path = tmp_path / "clean-ledger.db"
    shutil.copyfile(_clean_ledger, path)
    opened = Store.open(f"sqlite:///{path}")
    yield opened
    opened.close()
