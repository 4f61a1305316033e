"""The funnel's verdict on a mined changeset: read from the ledger, or graded now.

Miners may not import the cascade (imports flow bot -> miners -> core), so grading comes in
as a ``Grader`` the composition root builds over ``migration_evals.oracles.Runner``. A changeset the
ledger already holds is never graded again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from migration_evals.core.database import Database
from migration_evals.core.model import Changeset, Trial, Verdict, combine_verdicts
from migration_evals.core.schema import ledger_table

__all__ = ["FunnelResult", "Grader", "funnel_results", "recorded_result"]

Grader = Callable[[Sequence[Changeset]], Sequence[Trial]]
"""Grades changesets through the cascade (appending to the ledger) and returns the trials."""


@dataclass(frozen=True, slots=True)
class FunnelResult:
    trial_id: str
    verdict: Verdict
    model: str
    fabricated: tuple[dict[str, Any], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"trial_id": self.trial_id, "verdict": self.verdict.value}
        if self.fabricated:
            # Carried into the gold row, so the gate refuses an anchor built on a fabrication.
            data["fabricated"] = list(self.fabricated)
        return data

    @classmethod
    def of(cls, trial: Trial) -> FunnelResult:
        marks = tuple(mark.to_dict() for mark in trial.fabricated)
        return cls(trial.id, trial.verdict, trial.changeset.model, marks)


def recorded_result(db: Database, changeset_id: str) -> FunnelResult | None:
    """The newest trial of ``changeset_id`` in the ledger, if it was ever graded."""
    columns = (ledger_table.c.trial_id, ledger_table.c.model)
    latest = (
        sa.select(*columns)
        .where(ledger_table.c.changeset_id == changeset_id)
        .order_by(ledger_table.c.seq.desc())
        .limit(1)
    )
    with db.reading() as conn:
        row = conn.execute(latest).first()
        if row is None:
            return None
        trial_id, model = str(row.trial_id), str(row.model)
        rows = conn.execute(
            sa.select(ledger_table.c.verdict, ledger_table.c.payload)
            .where(ledger_table.c.trial_id == trial_id)
            .order_by(ledger_table.c.seq)
        ).all()
    marks = tuple(
        mark for _, payload in rows for mark in json.loads(payload)["envelope"]["fabricated"]
    )
    verdict = combine_verdicts(Verdict(v) for v, _ in rows)
    return FunnelResult(trial_id, verdict, model, marks)


def funnel_results(
    db: Database, changesets: Sequence[Changeset], grade: Grader | None
) -> dict[str, FunnelResult]:
    """Results by changeset id: recorded ones, then the rest graded in one run (if allowed)."""
    found: dict[str, FunnelResult] = {}
    for changeset in changesets:
        recorded = recorded_result(db, changeset.id)
        if recorded is not None:
            found[changeset.id] = recorded
    missing = [c for c in changesets if c.id not in found]
    if missing and grade is not None:
        for trial in grade(missing):
            found[trial.changeset.id] = FunnelResult.of(trial)
    return found
