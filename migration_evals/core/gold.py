"""The gold anchor table: real pull requests labelled by what happened to them.

accepted = merged and survived the window (not reverted, added lines still present);
rejected = closed without merge, reverted, or too little survived; pending = merged too
recently to tell. The miners fill this table; the gate correlates funnel verdicts with it.
It lives in ``core`` because both sides read it and neither may import the other.

A final label is not silently overwritten: when a later look changes it (a revert found
inside the window once more history arrived), the new row's evidence says so
(``relabelled``: both labels, both reasons, when), and the record chain keeps every row
the table held (``label_history``).

Rows are keyed by repository and pull request number. A change mined from git that was
never a pull request is keyed by its landing commit instead (``commit_key``): a negative
number, so it can never take a pull request's place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.database import Database
from migration_evals.core.ledger import Ledger
from migration_evals.core.model import Verdict
from migration_evals.core.records import GOLD
from migration_evals.core.schema import gold_table, record_log_table

__all__ = [
    "RELABELLED",
    "GoldLabel",
    "GoldRow",
    "commit_key",
    "gold_rows",
    "gold_table",
    "label_history",
    "upsert_gold",
    "upsert_gold_rows",
]

RELABELLED = "relabelled"
"""The evidence key listing each change of a final label: from, to, at, reason, was."""


class GoldLabel(StrEnum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    PENDING = "pending"


_FINAL = (GoldLabel.ACCEPTED, GoldLabel.REJECTED)


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


def upsert_gold(ledger: Ledger, row: GoldRow) -> GoldRow:
    """Insert or replace the label of one pull request (labels are recomputed over time),
    chained in the record chain so a label written past the store is refused.

    Replacing a final label with another adds the change to the row's ``relabelled``
    evidence, and every later write carries that list on. Returns the row as stored."""
    return upsert_gold_rows(ledger, [row])[0]


def upsert_gold_rows(ledger: Ledger, rows: Sequence[GoldRow]) -> list[GoldRow]:
    """``upsert_gold`` for many labels in one transaction: all are written or none, with
    one commit instead of one per label. Returns the rows as stored."""
    with ledger.writing() as conn:
        return [_upsert(conn, ledger, row) for row in rows]


def _upsert(conn: Connection, ledger: Ledger, row: GoldRow) -> GoldRow:
    key = {"repo": row.repo, "pr_number": row.pr_number}
    found = conn.execute(sa.select(gold_table).where(GOLD.where(key))).mappings().first()
    stored = _with_history(None if found is None else GoldRow.from_row(dict(found)), row)
    values = stored.to_row()
    conn.execute(gold_table.delete().where(GOLD.where(values)))
    conn.execute(gold_table.insert().values(**values))
    ledger.record(conn, GOLD, values)
    return stored


def _with_history(previous: GoldRow | None, row: GoldRow) -> GoldRow:
    """``row`` with the relabelling history of ``previous``, plus this change if it is one.

    Pending turning final is the label arriving, not a change of mind: not listed."""
    if previous is None:
        return row
    history = list(previous.evidence.get(RELABELLED, []))
    if previous.label in _FINAL and row.label is not previous.label:
        history.append(
            {
                "from": previous.label.value,
                "to": row.label.value,
                "at": row.computed_at.isoformat(),
                "reason": row.evidence.get("reason"),
                "was": previous.evidence.get("reason"),
            }
        )
    if not history:
        return row
    return replace(row, evidence={**row.evidence, RELABELLED: history})


def label_history(db: Database, repo: str, pr_number: int) -> list[GoldRow]:
    """Every row the gold table held for one label, oldest first, as the record chain
    recorded them (``Ledger.verify_ledger`` says whether the chain can be trusted)."""
    record_key = GOLD.key_of({"repo": repo, "pr_number": pr_number})
    c = record_log_table.c
    query = (
        sa.select(c.content).where(c.kind == GOLD.name, c.record_key == record_key).order_by(c.seq)
    )
    with db.reading() as conn:
        return [GoldRow.from_row(json.loads(content)) for content in conn.scalars(query)]


def gold_rows(db: Database) -> list[GoldRow]:
    query = sa.select(gold_table).order_by(gold_table.c.repo, gold_table.c.pr_number)
    with db.reading() as conn:
        return [GoldRow.from_row(dict(row)) for row in conn.execute(query).mappings()]
