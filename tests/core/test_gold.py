"""The gold table round-trips labels and replaces a PR's label when it is recomputed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from core.gold import GoldLabel, GoldRow, gold_rows, upsert_gold
from core.model import Verdict
from core.store import Store


def test_upsert_replaces_and_rows_round_trip(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'gold.db'}")
    when = datetime(2026, 1, 1, tzinfo=UTC)
    upsert_gold(store, GoldRow("o/r", 7, GoldLabel.PENDING, when))
    final = GoldRow(
        "o/r",
        7,
        GoldLabel.ACCEPTED,
        when,
        survival=0.93,
        evidence={"commit": "abc"},
        funnel_verdict=Verdict.PASS,
    )
    upsert_gold(store, final)
    upsert_gold(store, GoldRow("o/r", 8, GoldLabel.REJECTED, when))
    assert gold_rows(store) == [final, GoldRow("o/r", 8, GoldLabel.REJECTED, when)]
