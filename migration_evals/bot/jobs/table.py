"""The jobs table as every part of the queue sees it: one store, one set of kinds, one
clock, one listener for new jobs, and the statements the parts share.

Every lease decision locks the one ``bot_queue_guard`` row first (``GUARD``), whichever
part makes it, so that the parts never decide against one another.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from migration_evals.bot.jobs.kinds import JobKind, KindRegistry
from migration_evals.bot.jobs.model import Job, JobState
from migration_evals.core.schema import guard_table, jobs_table
from migration_evals.core.store import Store

__all__ = ["GUARD", "INSERT_JOBS", "JOB_COLUMNS", "JobTable", "relax_commit", "runnable"]

GUARD = sa.select(guard_table.c.id).where(guard_table.c.id == 1).with_for_update()
INSERT_JOBS = jobs_table.insert().returning(jobs_table.c.id, sort_by_parameter_order=True)
JOB_COLUMNS = tuple(
    jobs_table.c[name]
    for name in ("id", "kind", "key", "subject", "payload", "attempts", "max_attempts")
)


class JobTable:
    """The state the queue's parts share; built once per queue by ``build_queue``."""

    def __init__(
        self,
        store: Store,
        kinds: KindRegistry,
        *,
        clock: Callable[[], float],
        on_new_jobs: Callable[[Sequence[tuple[int, JobKind]]], None] | None = None,
    ) -> None:
        self.store = store
        self.kinds = kinds
        self.clock = clock
        # Told the ids of jobs once they are committed (the Celery executor announces them).
        self.on_new_jobs = on_new_jobs
        self._ensure_guard()

    def _ensure_guard(self) -> None:
        with self.store.db.engine.begin() as conn:
            if conn.execute(sa.select(guard_table.c.id)).first() is None:
                try:
                    with conn.begin_nested():
                        conn.execute(guard_table.insert().values(id=1))
                except IntegrityError:
                    pass  # another process created it first

    def announce(self, jobs: Sequence[tuple[int, JobKind]]) -> None:
        # After the commit: a job is announced only once it exists. A lost announcement
        # is not lost work; ``Leasing.due_for_dispatch`` finds the job again.
        if jobs and self.on_new_jobs is not None:
            self.on_new_jobs(jobs)

    def set(self, conn: Connection, job_id: int, **values: Any) -> None:
        values = {k: v.value if isinstance(v, JobState) else v for k, v in values.items()}
        conn.execute(
            jobs_table.update()
            .where(jobs_table.c.id == job_id)
            .values(updated_at=self.clock(), **values)
        )

    def job(self, row: Any, *, attempts: int) -> Job:
        return Job(
            id=int(row.id),
            kind=self.kinds.get(str(row.kind)),
            key=str(row.key),
            subject=str(row.subject),
            payload=json.loads(row.payload),
            attempts=attempts,
            max_attempts=int(row.max_attempts),
        )


def relax_commit(conn: Connection) -> None:
    """On PostgreSQL, let this transaction's commit return before its WAL reaches disk.

    Only for writes that are safe to lose in a server crash (leases and their renewals):
    losing one makes a job run again, which the job keys and trial slots absorb.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SET LOCAL synchronous_commit TO OFF"))


def runnable(now: float) -> sa.ColumnElement[bool]:
    """Queued and due, or running under a lease that ran out (its worker died)."""
    jobs = jobs_table.c
    return sa.or_(
        sa.and_(jobs.state == JobState.QUEUED.value, jobs.run_after <= now),
        sa.and_(jobs.state == JobState.RUNNING.value, jobs.lease_until <= now),
    )
