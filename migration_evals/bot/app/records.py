"""What the bot published: one row per check run (repo, PR, head sha, mode).

The ``external_id`` of each check run is the row's key, so a job that died after creating
its check run finds it again instead of creating a second one, and ``explain`` / ``status``
can point at the trial behind a check run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from migration_evals.core.schema import check_runs_table
from migration_evals.core.store import Store

__all__ = ["CheckRecord", "CheckRecords", "external_id"]


def external_id(repo: str, number: int, head_sha: str, mode: str) -> str:
    return f"{repo}#{number}@{head_sha}:{mode}"


@dataclass(frozen=True, slots=True)
class CheckRecord:
    external_id: str
    repo: str
    number: int
    head_sha: str
    mode: str
    check_run_id: int
    status: str
    conclusion: str | None
    run_id: str | None
    trial_id: str | None
    updated_at: float


class CheckRecords:
    def __init__(self, store: Store, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def save(self, record: CheckRecord) -> None:
        values = {
            "repo": record.repo,
            "number": record.number,
            "head_sha": record.head_sha,
            "mode": record.mode,
            "check_run_id": record.check_run_id,
            "status": record.status,
            "conclusion": record.conclusion,
            "run_id": record.run_id,
            "trial_id": record.trial_id,
            "updated_at": self.clock(),
        }
        table = check_runs_table
        with self.store.db.engine.begin() as conn:
            updated = conn.execute(
                table.update().where(table.c.external_id == record.external_id).values(**values)
            ).rowcount
            if not updated:
                try:
                    with conn.begin_nested():
                        conn.execute(
                            table.insert().values(external_id=record.external_id, **values)
                        )
                except IntegrityError:
                    conn.execute(
                        table.update()
                        .where(table.c.external_id == record.external_id)
                        .values(**values)
                    )

    def get(self, ext_id: str) -> CheckRecord | None:
        query = sa.select(check_runs_table).where(check_runs_table.c.external_id == ext_id)
        with self.store.db.reading() as conn:
            row = conn.execute(query).mappings().first()
        return CheckRecord(**row) if row else None

    def for_pull(self, repo: str, number: int) -> list[CheckRecord]:
        """Every check run of the PR, newest first."""
        query = (
            sa.select(check_runs_table)
            .where(check_runs_table.c.repo == repo, check_runs_table.c.number == number)
            .order_by(check_runs_table.c.updated_at.desc())
        )
        with self.store.db.reading() as conn:
            return [CheckRecord(**row) for row in conn.execute(query).mappings()]
