"""The gold table round-trips labels and replaces a PR's label when it is recomputed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from migration_evals.core.gold import (
    RELABELLED,
    GoldLabel,
    GoldRow,
    gold_rows,
    label_history,
    upsert_gold,
    upsert_gold_rows,
)
from migration_evals.core.model import Verdict
from migration_evals.core.store import Store


def test_upsert_replaces_and_rows_round_trip(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'gold.db'}")
    when = datetime(2026, 1, 1, tzinfo=UTC)
    upsert_gold(store.ledger, GoldRow("o/r", 7, GoldLabel.PENDING, when))
    final = GoldRow(
        "o/r",
        7,
        GoldLabel.ACCEPTED,
        when,
        survival=0.93,
        evidence={"commit": "abc"},
        funnel_verdict=Verdict.PASS,
    )
    upsert_gold(store.ledger, final)
    upsert_gold(store.ledger, GoldRow("o/r", 8, GoldLabel.REJECTED, when))
    assert gold_rows(store.db) == [final, GoldRow("o/r", 8, GoldLabel.REJECTED, when)]


def test_many_labels_in_one_transaction_chain_as_one_at_a_time_would(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'gold.db'}")
    day = datetime(2026, 1, 1, tzinfo=UTC)
    accepted = GoldRow("o/r", 7, GoldLabel.ACCEPTED, day, evidence={"reason": "survived"})
    rejected = GoldRow("o/r", 7, GoldLabel.REJECTED, day, evidence={"reason": "reverted"})
    other = GoldRow("o/r", 8, GoldLabel.PENDING, day)
    stored = upsert_gold_rows(store.ledger, [accepted, rejected, other])
    # A later row of the same PR sees the earlier one: the relabelling is in its history.
    assert stored[0] == accepted and stored[2] == other
    assert [c["to"] for c in stored[1].evidence[RELABELLED]] == ["rejected"]
    assert gold_rows(store.db) == [stored[1], other]
    assert [r.label for r in label_history(store.db, "o/r", 7)] == [
        GoldLabel.ACCEPTED,
        GoldLabel.REJECTED,
    ]
    assert store.ledger.verify_ledger().ok  # the record chain verifies


def test_a_final_label_changed_keeps_both_labels_and_reasons(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'gold.db'}")
    day = datetime(2026, 1, 1, tzinfo=UTC)
    later = datetime(2026, 2, 1, tzinfo=UTC)
    upsert_gold(
        store.ledger, GoldRow("o/r", 7, GoldLabel.PENDING, day, evidence={"reason": "open"})
    )
    accepted = GoldRow("o/r", 7, GoldLabel.ACCEPTED, day, evidence={"reason": "survived"})
    assert (
        upsert_gold(store.ledger, accepted) == accepted
    )  # pending turning final: no change of mind
    relabelled = upsert_gold(
        store.ledger, GoldRow("o/r", 7, GoldLabel.REJECTED, later, evidence={"reason": "reverted"})
    )
    change = {
        "from": "accepted",
        "to": "rejected",
        "at": later.isoformat(),
        "reason": "reverted",
        "was": "survived",
    }
    assert relabelled.evidence == {"reason": "reverted", RELABELLED: [change]}
    # Written again with the same label: the history is carried on, not lost.
    again = upsert_gold(
        store.ledger, GoldRow("o/r", 7, GoldLabel.REJECTED, later, evidence={"reason": "reverted"})
    )
    assert again.evidence[RELABELLED] == [change]
    assert gold_rows(store.db) == [again]
    recorded = label_history(store.db, "o/r", 7)
    assert [row.label for row in recorded] == [
        GoldLabel.PENDING,
        GoldLabel.ACCEPTED,
        GoldLabel.REJECTED,
        GoldLabel.REJECTED,
    ]
    assert recorded[-1] == again
    assert label_history(store.db, "o/r", 8) == []
