"""The gold anchor: phi with n, held to its floor and minimum n; broken otherwise."""

from __future__ import annotations

from datetime import UTC, datetime

from migration_evals.core.gold import GoldLabel, GoldRow
from migration_evals.core.model import Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.anchor import (
    AnchorState,
    anchor_from_rows,
    anchor_from_table,
    anchor_status,
)
from migration_evals.gate.stats import matthews_corrcoef
from tests.gate.ledgers import add_gold

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _row(n: int, verdict: Verdict | None, label: GoldLabel) -> GoldRow:
    return GoldRow("org/repo", n, label, NOW, funnel_verdict=verdict)


def test_an_anchored_evaluation(store: Store, specs: SpecSet) -> None:
    add_gold(store, agree=18, disagree=2)
    status = anchor_status(store.db, specs)
    assert status.state is AnchorState.OK and status.banner() is None
    verdicts = [True] * 18 + [False] * 18 + [True, True, False, False]
    labels = [True] * 18 + [False] * 18 + [False, False, True, True]
    expected = matthews_corrcoef(verdicts, labels)
    assert status.phi == expected and status.n == 40
    assert (status.passed_accepted, status.failed_rejected, status.passed_rejected) == (18, 18, 2)


def test_below_the_floor_is_broken(store: Store, specs: SpecSet) -> None:
    add_gold(store, agree=12, disagree=8)
    status = anchor_status(store.db, specs)
    assert status.broken and status.phi is not None and status.phi < 0.3
    banner = status.banner()
    assert banner is not None and banner.startswith("This evaluation is BROKEN: the gold")


def test_too_few_rows_is_broken_and_says_why(specs: SpecSet) -> None:
    rows = [_row(n, Verdict.PASS, GoldLabel.ACCEPTED) for n in range(10)]
    status = anchor_from_rows(rows, specs.oracle.gate)
    assert status.broken and status.phi is None
    assert status.reason == "only 10 gold-labelled pull request(s), fewer than the minimum 30"


def test_pending_labels_and_ungraded_verdicts_are_left_out(specs: SpecSet) -> None:
    rows = [_row(n, Verdict.PASS, GoldLabel.ACCEPTED) for n in range(20)]
    rows += [_row(100 + n, Verdict.INCONCLUSIVE, GoldLabel.REJECTED) for n in range(20)]
    rows += [
        _row(200, Verdict.PASS, GoldLabel.PENDING),
        _row(201, Verdict.ERROR, GoldLabel.ACCEPTED),
    ]
    rows += [_row(202, None, GoldLabel.REJECTED)]
    status = anchor_from_rows(rows, specs.oracle.gate)
    assert (status.n, status.pending, status.unmatched, status.phi) == (40, 1, 2, 1.0)


def test_one_class_only_is_undefined_and_broken(specs: SpecSet) -> None:
    rows = [_row(n, Verdict.PASS, GoldLabel.ACCEPTED) for n in range(40)]
    status = anchor_from_rows(rows, specs.oracle.gate)
    assert status.broken and "undefined" in status.reason


def test_the_published_table_recomputes(store: Store, specs: SpecSet) -> None:
    add_gold(store, agree=18, disagree=3)
    status = anchor_status(store.db, specs)
    assert anchor_from_table(status.to_dict(), specs.oracle.gate) == status
