"""The nightly survival refresh (``migration-evals mine survival``).

For every tracked PR whose label is not final yet: ask the provider for its merge state,
update the tracking row, label it once it has aged the window (pending until then), and
write the gold row with the funnel's verdict from the ledger. Then record the
retroactive-scoring unlock if it has just been earned.

An infrastructure failure on one PR (API down, clone failed) is noted on that PR's row and
in the report; it never becomes a label, and the other PRs are still refreshed.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from migration_evals.core.clock import Clock
from migration_evals.core.database import Database
from migration_evals.core.errors import InfrastructureError
from migration_evals.core.gold import GoldLabel, gold_rows, upsert_gold
from migration_evals.core.ledger import Ledger
from migration_evals.core.ports import ChangesetProvider
from migration_evals.miners.funnel import recorded_result
from migration_evals.miners.labels import gold_row, label_pull_request
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.retro import Unlock, record_unlock_if_earned
from migration_evals.miners.tracking import TrackedPR, note_check, track_pr, tracked_prs

__all__ = ["RefreshReport", "refresh"]

log = logging.getLogger(__name__)

Mirror = Callable[[str], Path]
"""Clone URL -> git dir of an up-to-date mirror (``MirrorCache.mirror``)."""


@dataclass
class RefreshReport:
    now: datetime
    checked: int = 0
    labels: dict[str, GoldLabel] = field(default_factory=dict)
    still_open: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    unlock: Unlock | None = None
    newly_unlocked: bool = False

    def count(self, label: GoldLabel) -> int:
        return sum(1 for value in self.labels.values() if value is label)

    def to_dict(self) -> dict[str, Any]:
        return {
            "now": self.now.isoformat(),
            "checked": self.checked,
            "labels": {key: label.value for key, label in sorted(self.labels.items())},
            "accepted": self.count(GoldLabel.ACCEPTED),
            "rejected": self.count(GoldLabel.REJECTED),
            "pending": self.count(GoldLabel.PENDING),
            "still_open": self.still_open,
            "errors": self.errors,
            "unlock": self.unlock.to_dict() if self.unlock else None,
            "newly_unlocked": self.newly_unlocked,
        }


def _final_keys(db: Database) -> set[tuple[str, int]]:
    final = (GoldLabel.ACCEPTED, GoldLabel.REJECTED)
    return {(row.repo, row.pr_number) for row in gold_rows(db) if row.label in final}


def _refresh_one(
    db: Database,
    ledger: Ledger,
    provider: ChangesetProvider,
    tracked: TrackedPR,
    *,
    now: datetime,
    policy: SurvivalPolicy,
    mirror: Mirror,
) -> GoldLabel | None:
    info = provider.pull_request(tracked.repo, tracked.number)
    # The bot decided whether the author is an agent (per-repository config); keep its word.
    info = dataclasses.replace(info, is_agent=tracked.is_agent)
    updated = TrackedPR.from_info(info, tracked.changeset_id)
    track_pr(ledger, updated)
    labelled = label_pull_request(info, now=now, policy=policy, mirror=mirror)
    if labelled is None:
        return None
    changeset_id = tracked.changeset_id
    funnel = recorded_result(db, changeset_id) if changeset_id else None
    row = gold_row(info, labelled, computed_at=now, changeset_id=changeset_id, funnel=funnel)
    upsert_gold(ledger, row)
    return labelled.label


def refresh(
    db: Database,
    ledger: Ledger,
    provider: ChangesetProvider,
    clock: Clock,
    *,
    policy: SurvivalPolicy,
    mirror: Mirror,
) -> RefreshReport:
    """Refresh merge state and labels of every tracked PR not finally labelled yet."""
    now = clock.now()
    report = RefreshReport(now=now)
    final = _final_keys(db)
    for tracked in tracked_prs(db):
        if (tracked.repo, tracked.number) in final:
            continue
        report.checked += 1
        try:
            label = _refresh_one(
                db, ledger, provider, tracked, now=now, policy=policy, mirror=mirror
            )
        except InfrastructureError as exc:
            log.warning("survival refresh of %s failed: %s", tracked.key, exc)
            report.errors[tracked.key] = str(exc)
            note_check(ledger, tracked, now, str(exc))
            continue
        note_check(ledger, tracked, now)
        if label is None:
            report.still_open.append(tracked.key)
        else:
            report.labels[tracked.key] = label
    report.unlock, report.newly_unlocked = record_unlock_if_earned(db, ledger, now, policy)
    return report
