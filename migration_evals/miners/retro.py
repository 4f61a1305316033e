"""The retroactive-scoring unlock: historical changesets may be graded only once the funnel
has been anchored on enough of our own agents' merges.

A tracked agent PR *counts* once it has merged, aged the survival window and received a
label (accepted or rejected); so does an agent-authored change that ``mine gold`` labelled
(from a provider or from git alone), known by the ``is_agent`` of its gold row. When
``unlock_prs`` of them count (50 in the spec; 49 is not enough), the unlock is recorded
once, with the time and the changes that earned it, and never rewritten. Progress, and
the earliest date the threshold can be reached from the merges known today, are computed
from the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from migration_evals.core.clock import as_utc
from migration_evals.core.database import Database
from migration_evals.core.gold import GoldLabel, GoldRow, gold_rows
from migration_evals.core.ledger import Ledger
from migration_evals.core.model import Trial
from migration_evals.core.records import RETRO_UNLOCK
from migration_evals.core.schema import retro_trials_table, retro_unlock_table
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.tracking import tracked_prs

__all__ = [
    "Unlock",
    "UnlockProgress",
    "current_unlock",
    "mark_retroactive",
    "progress",
    "record_unlock_if_earned",
    "retroactive_trials",
]

_FINAL = (GoldLabel.ACCEPTED, GoldLabel.REJECTED)


@dataclass(frozen=True, slots=True)
class Unlock:
    unlocked_at: datetime
    threshold: int
    window_days: int
    prs: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "unlocked_at": self.unlocked_at.isoformat(),
            "threshold": self.threshold,
            "window_days": self.window_days,
            "prs": list(self.prs),
        }


@dataclass(frozen=True, slots=True)
class UnlockProgress:
    """Where the unlock stands at ``now``."""

    now: datetime
    threshold: int
    labelled: tuple[str, ...]  # agent PRs merged, aged and labelled ("owner/name#n")
    ready_at: tuple[tuple[str, datetime], ...]  # merged agent PRs not labelled yet, and when
    open_prs: int  # tracked agent PRs not merged or closed yet
    unlock: Unlock | None

    @property
    def needed(self) -> int:
        return max(0, self.threshold - len(self.labelled))

    @property
    def earliest(self) -> datetime | None:
        """The earliest time the threshold can be reached from current merges (None: cannot)."""
        if self.unlock is not None:
            return self.unlock.unlocked_at
        if self.needed == 0:
            return self.now
        times = sorted(when for _, when in self.ready_at)
        if len(times) < self.needed:
            return None
        return max(self.now, times[self.needed - 1])

    def describe(self) -> str:
        """One sentence on how far away the unlock is."""
        if self.unlock is not None:
            return f"retroactive scoring unlocked at {self.unlock.unlocked_at.isoformat()}"
        have = f"{len(self.labelled)} of {self.threshold} agent PRs merged, aged and labelled"
        if self.needed == 0:
            return f"{have}; the unlock is due at the next survival refresh"
        earliest = self.earliest
        if earliest is None:
            short = self.needed - len(self.ready_at)
            when = f"{short} more agent PR(s) must merge before it can be reached"
        else:
            when = f"earliest possible {earliest.date().isoformat()}"
        return f"{have}; {self.needed} more needed ({when})"

    def to_dict(self) -> dict[str, Any]:
        earliest = self.earliest
        return {
            "threshold": self.threshold,
            "labelled": len(self.labelled),
            "pending": len(self.ready_at),
            "needed": self.needed,
            "open": self.open_prs,
            "earliest": earliest.isoformat() if earliest else None,
            "unlocked": self.unlock is not None,
            "unlock": self.unlock.to_dict() if self.unlock else None,
        }


def current_unlock(db: Database) -> Unlock | None:
    with db.reading() as conn:
        row = conn.execute(sa.select(retro_unlock_table)).mappings().first()
    if row is None:
        return None
    return Unlock(
        unlocked_at=datetime.fromisoformat(row["unlocked_at"]),
        threshold=int(row["threshold"]),
        window_days=int(row["window_days"]),
        prs=tuple(json.loads(row["prs"])),
    )


def _row_key(row: GoldRow) -> str:
    if row.pr_number > 0:
        return f"{row.repo}#{row.pr_number}"
    return f"{row.repo}@{str(row.evidence.get('commit', ''))[:12]}"


def _merges(db: Database) -> Iterator[tuple[str, datetime | None, bool, GoldLabel | None]]:
    """``(key, merged_at, closed, label)`` of every agent merge known: tracked PRs first,
    then mined agent changes that no tracked PR stands for."""
    rows = gold_rows(db)
    labels = {(row.repo, row.pr_number): row.label for row in rows}
    seen: set[str] = set()
    for pr in tracked_prs(db, agents_only=True):
        seen.add(pr.key)
        label = labels.get((pr.repo, pr.number))
        yield pr.key, pr.merged_at, pr.closed_at is not None, label
    for row in rows:
        merged = row.evidence.get("merged_at")
        if row.evidence.get("is_agent") is True and merged and _row_key(row) not in seen:
            yield _row_key(row), datetime.fromisoformat(str(merged)), True, row.label


def progress(db: Database, now: datetime, policy: SurvivalPolicy) -> UnlockProgress:
    now = as_utc(now)
    labelled: list[str] = []
    ready: list[tuple[str, datetime]] = []
    open_prs = 0
    for key, merged_at, closed, label in _merges(db):
        if merged_at is None:
            open_prs += not closed
            continue
        aged_at = as_utc(merged_at) + policy.window
        if aged_at <= now and label in _FINAL:
            labelled.append(key)
        else:
            ready.append((key, aged_at))
    return UnlockProgress(
        now=now,
        threshold=policy.unlock_prs,
        labelled=tuple(labelled),
        ready_at=tuple(ready),
        open_prs=open_prs,
        unlock=current_unlock(db),
    )


def record_unlock_if_earned(
    db: Database, ledger: Ledger, now: datetime, policy: SurvivalPolicy
) -> tuple[Unlock | None, bool]:
    """Record the unlock the first time it is earned; returns (unlock, newly recorded)."""
    state = progress(db, now, policy)
    if state.unlock is not None or state.needed > 0:
        return state.unlock, False
    unlock = Unlock(state.now, policy.unlock_prs, policy.window_days, tuple(sorted(state.labelled)))
    row = {
        "id": 1,
        "unlocked_at": unlock.unlocked_at.isoformat(),
        "threshold": unlock.threshold,
        "window_days": unlock.window_days,
        "prs": json.dumps(list(unlock.prs)),
    }
    try:
        with ledger.writing() as conn:
            conn.execute(retro_unlock_table.insert().values(**row))
            ledger.record(conn, RETRO_UNLOCK, row)
    except IntegrityError:  # another process recorded it first; theirs stands
        return current_unlock(db), False
    return unlock, True


def mark_retroactive(db: Database, run_id: str, trials: Sequence[Trial], at: datetime) -> None:
    """Mark the trials of a retroactive run, so reports can tell them from live grading."""
    rows = [
        {
            "run_id": run_id,
            "trial_id": trial.id,
            "changeset_id": trial.changeset.id,
            "marked_at": as_utc(at).isoformat(),
        }
        for trial in trials
    ]
    if rows:
        with db.engine.begin() as conn:
            conn.execute(retro_trials_table.insert(), rows)


def retroactive_trials(db: Database) -> set[str]:
    """Ids of every trial graded retroactively."""
    with db.reading() as conn:
        return {str(t) for t in conn.execute(sa.select(retro_trials_table.c.trial_id)).scalars()}
