"""Fixtures for the gate's tests: a fresh ledger, and specs whose hypotheses were
registered long before any result a test writes (so only the HARKing test sees HARKing)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from core.specs import SpecSet
from core.store import Store
from tests.gate.ledgers import add_gold, append, balanced


@pytest.fixture
def gate_specs(specs: SpecSet) -> SpecSet:
    early = {key: replace(h, registered_at=date(2000, 1, 1)) for key, h in specs.hypotheses.items()}
    return replace(specs, hypotheses=early)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    yield opened
    opened.close()


@pytest.fixture
def clean_store(store: Store, gate_specs: SpecSet) -> Store:
    """A ledger the gate publishes: balanced trials, enough of them, an anchored gold table."""
    append(store, gate_specs, balanced())
    add_gold(store)
    return store
