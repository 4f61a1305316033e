"""The gold anchor table: real pull requests labelled by what happened to them.

accepted = merged and survived the window (not reverted, added lines still present);
rejected = closed without merge, reverted, or too little survived; pending = merged too
recently to tell. The miners fill this table; the gate correlates funnel verdicts with it.
It lives in ``core`` because both sides read it and neither may import the other.

Rows are keyed by repository and pull request number. A change mined from git that was
never a pull request is keyed by its landing commit instead (``commit_key``): a negative
number, so it can never take a pull request's place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa

from core.model import Verdict
from core.records import GOLD
from core.schema import gold_table
from core.store import Store

__all__ = ["GoldLabel", "GoldRow", "commit_key", "gold_rows", "gold_table", "upsert_gold"]


class GoldLabel(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    PENDING = "pending"


def commit_key(sha: str) -> int:
    """The ``pr_number`` of a change that was never a pull request: from its commit's first
    31 bits, negated, so it fits a 32-bit column and never collides with a PR number."""
    return -(1 + int(sha[:8], 16) % (2**31 - 1))


@dataclass(frozen=True, slots=True)
class GoldRow:
    """One labelled pull request and the funnel's verdict on the same changeset."""

    repo: str
    pr_number: int
    label: GoldLabel
    computed_at: datetime
    survival: float | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    changeset_id: str | None = None
    model: str | None = None
    funnel_verdict: Verdict | None = None
    trial_id: str | None = None

    def to_row(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "pr_number": self.pr_number,
            "changeset_id": self.changeset_id,
            "model": self.model,
            "label": self.label.value,
            "survival": self.survival,
            "evidence": json.dumps(dict(self.evidence), sort_keys=True),
            "computed_at": self.computed_at.isoformat(),
            "funnel_verdict": self.funnel_verdict.value if self.funnel_verdict else None,
            "trial_id": self.trial_id,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> GoldRow:
        verdict = row["funnel_verdict"]
        return cls(
            repo=row["repo"],
            pr_number=int(row["pr_number"]),
            label=GoldLabel(row["label"]),
            computed_at=datetime.fromisoformat(row["computed_at"]),
            survival=row["survival"],
            evidence=json.loads(row["evidence"]),
            changeset_id=row["changeset_id"],
            model=row["model"],
            funnel_verdict=Verdict(verdict) if verdict else None,
            trial_id=row["trial_id"],
        )


def upsert_gold(store: Store, row: GoldRow) -> None:
    """Insert or replace the label of one pull request (labels are recomputed over time),
    chained in the record chain so a label written past the store is refused."""
    values = row.to_row()
    with store.engine.begin() as conn:
        conn.execute(gold_table.delete().where(GOLD.where(values)))
        conn.execute(gold_table.insert().values(**values))
        store.record(conn, GOLD, values)


def gold_rows(store: Store) -> list[GoldRow]:
    query = sa.select(gold_table).order_by(gold_table.c.repo, gold_table.c.pr_number)
    with store.reading() as conn:
        return [GoldRow.from_row(dict(row)) for row in conn.execute(query).mappings()]
