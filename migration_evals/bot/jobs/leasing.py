"""Leasing: workers take runnable jobs for a while, renew, complete or fail them.

A job whose worker died is leased again once its lease ends. Two jobs of the same
subject (one pull request) never run at once: each decision for an ``exclusive`` kind
locks the guard row first; jobs of a free kind (the executor's trials) skip it, so
workers do not queue behind one another. With the Celery executor the broker carries
only job ids: a worker leases the named row (``lease_by_id``), and ``due_for_dispatch``
finds the ready jobs whose announcement was lost, so the database stays the source of
truth.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.model import Job, JobState
from migration_evals.bot.jobs.table import GUARD, JOB_COLUMNS, JobTable, relax_commit, runnable
from migration_evals.core.retry import Backoff
from migration_evals.core.schema import jobs_table

__all__ = ["Leasing"]

log = logging.getLogger(__name__)


class Leasing:
    """Jobs as workers see them: leased for ``lease_s`` seconds, then done or failed."""

    def __init__(
        self,
        table: JobTable,
        *,
        lease_s: float,
        backoff: Backoff,
        jitter: Callable[[], float],
    ) -> None:
        self.table = table
        self.lease_s = lease_s
        # Between attempts of a failed job; jitter spreads a burst that failed together.
        self.backoff = backoff
        self.jitter = jitter

    def lease(self, worker: str, *, kinds: Sequence[JobKind] | None = None) -> Job | None:
        """Take the oldest runnable job whose subject is not busy, for ``lease_s`` seconds.

        ``kinds`` limits it to the jobs this worker has handlers for.
        """
        now = self.table.clock()
        jobs = jobs_table.c
        with self.table.store.db.engine.begin() as conn:
            conn.execute(GUARD)
            busy = sa.select(jobs.subject).where(
                jobs.state == JobState.RUNNING.value, jobs.lease_until > now
            )
            query = sa.select(jobs_table).where(runnable(now), jobs.subject.not_in(busy))
            if kinds is not None:
                query = query.where(jobs.kind.in_([kind.name for kind in kinds]))
            row = conn.execute(
                query.order_by(*self._lease_order()).limit(1).with_for_update(skip_locked=True)
            ).first()
            return None if row is None else self._take(conn, row, worker, now)

    def _lease_order(self) -> list[sa.ColumnElement[Any]]:
        """Oldest first, within each kind's priority (lower first)."""
        ranks = self.table.kinds.priorities()
        if not ranks:
            return [jobs_table.c.id]
        return [sa.case(ranks, value=jobs_table.c.kind, else_=0), jobs_table.c.id]

    def lease_by_id(
        self, job_id: int, worker: str, *, kinds: Sequence[JobKind] | None = None
    ) -> Job | None:
        """Take job ``job_id`` if it is runnable now (a broker delivery names it).

        None when it is done, failed, not due yet, held by a live lease (a repeated
        delivery), its subject is busy, it has just run out of attempts, or its kind is
        not among ``kinds``.
        """
        now = self.table.clock()
        free = [k.name for k in self.table.kinds.free() if kinds is None or k in kinds]
        if free:
            taken = self._lease_free(job_id, worker, now, free)
            if taken is not None:
                return taken
        jobs = jobs_table.c
        with self.table.store.db.engine.begin() as conn:
            kind = conn.execute(sa.select(jobs.kind).where(jobs.id == job_id)).scalar()
            if kind is None or (kinds is not None and kind not in {k.name for k in kinds}):
                return None
            exclusive = self.table.kinds.get(kind).exclusive
            if exclusive:
                conn.execute(GUARD)  # before the row, in the same order as ``lease``
            row = conn.execute(
                sa.select(jobs_table).where(jobs.id == job_id, runnable(now)).with_for_update()
            ).first()
            if row is None or (exclusive and self._subject_busy(conn, row, now)):
                return None
            return self._take(conn, row, worker, now)

    def _lease_free(self, job_id: int, worker: str, now: float, names: list[str]) -> Job | None:
        """The common case of a job of a free kind (a trial) in one statement: runnable,
        attempts left, take it.

        Its commit need not wait for the disk: a lease lost in a server crash only lets
        the job run again, and a trial is written once however often it runs.
        """
        jobs = jobs_table.c
        take = (
            jobs_table.update()
            .where(jobs.id == job_id, jobs.kind.in_(names), runnable(now))
            .where(jobs.attempts < jobs.max_attempts)
            .values(
                state=JobState.RUNNING.value,
                attempts=jobs.attempts + 1,
                lease_until=now + self.lease_s,
                leased_by=worker,
                updated_at=now,
            )
            .returning(*JOB_COLUMNS)
        )
        with self.table.store.db.engine.begin() as conn:
            relax_commit(conn)
            row = conn.execute(take).first()
        return None if row is None else self.table.job(row, attempts=int(row.attempts))

    @staticmethod
    def _subject_busy(conn: Connection, row: Any, now: float) -> bool:
        jobs = jobs_table.c
        other = conn.execute(
            sa.select(jobs.id)
            .where(jobs.subject == row.subject, jobs.id != row.id)
            .where(jobs.state == JobState.RUNNING.value, jobs.lease_until > now)
            .limit(1)
        ).first()
        return other is not None

    def _take(self, conn: Connection, row: Any, worker: str, now: float) -> Job | None:
        if row.attempts >= row.max_attempts:
            why = _gave_up(row)
            self.table.set(conn, row.id, state=JobState.FAILED, last_error=why)
            log.error("job %s (%s) %s", row.id, row.key, why)
            return None
        self.table.set(
            conn,
            row.id,
            state=JobState.RUNNING,
            attempts=row.attempts + 1,
            lease_until=now + self.lease_s,
            leased_by=worker,
        )
        return self.table.job(row, attempts=int(row.attempts) + 1)

    def due_for_dispatch(
        self,
        redispatch_s: float,
        *,
        starved: Collection[JobKind] | None = None,
        limit: int = 500,
    ) -> list[tuple[int, JobKind]]:
        """Ready jobs whose last announcement may be lost; marks them announced now.

        Ready: queued and due, or running under an expired lease (its worker died). Not
        announced since it became ready (``updated_at`` before ``run_after`` or the
        lease's end): certainly due. Announced ``redispatch_s`` ago and still not taken:
        due when the lease ran out, and for a queued job only if its kind is ``starved``
        (None: every kind), i.e. its broker queue is empty; a job waiting behind a long
        queue has its announcement still in the queue. A repeat is harmless: a delivery
        leases the row or does nothing.
        """
        now = self.table.clock()
        jobs = jobs_table.c
        waited = jobs.updated_at < now - redispatch_s
        if starved is not None:
            queued_waited = sa.and_(waited, jobs.kind.in_([k.name for k in starved]))
        else:
            queued_waited = waited
        stale = sa.or_(
            sa.and_(
                jobs.state == JobState.QUEUED.value,
                sa.or_(jobs.updated_at < jobs.run_after, queued_waited),
            ),
            sa.and_(
                jobs.state == JobState.RUNNING.value,
                sa.or_(jobs.updated_at < jobs.lease_until, waited),
            ),
        )
        with self.table.store.db.engine.begin() as conn:
            due = [
                (int(job_id), self.table.kinds.get(kind))
                for job_id, kind in conn.execute(
                    sa.select(jobs.id, jobs.kind)
                    .where(runnable(now), stale)
                    .order_by(jobs.id)
                    .limit(limit)
                    .with_for_update(skip_locked=True)
                )
            ]
            if due:
                ids = [job_id for job_id, _ in due]
                conn.execute(jobs_table.update().where(jobs.id.in_(ids)).values(updated_at=now))
        return due

    def heartbeat(self, job: Job, worker: str) -> bool:
        """Extend the lease; False when the job is no longer this worker's."""
        with self.table.store.db.engine.begin() as conn:
            relax_commit(conn)  # a lost renewal costs at most a repeated run
            return self._owned_update_in(
                conn, job, worker, lease_until=self.table.clock() + self.lease_s
            )

    def complete(self, job: Job, worker: str, result: str = "") -> bool:
        return self._owned_update(
            job, worker, state=JobState.DONE, result=result, lease_until=None, last_error=None
        )

    def fail(
        self,
        job: Job,
        worker: str,
        error: str,
        *,
        retry_after_s: float | None = None,
        carry: Mapping[str, Any] | None = None,
    ) -> bool:
        """Record a failed attempt: put the job back after a backoff with jitter (never
        sooner than ``retry_after_s``, the wait a server asked for), or give up after the
        last attempt, saying how many were made and why the last one failed.

        ``carry``: fields merged into the payload of the job put back, for its next
        attempt (the work an attempt made before an outside API was unavailable)."""
        if job.attempts >= job.max_attempts:
            why = f"gave up after {job.attempts} attempt(s); the last failed: {error}"
            return self._owned_update(
                job, worker, state=JobState.FAILED, last_error=why, lease_until=None
            )
        wait = self.backoff.wait_s(job.attempts - 1, self.jitter(), asked_s=retry_after_s)
        extra: dict[str, Any] = {}
        if carry:
            extra["payload"] = json.dumps({**job.payload, **carry}, sort_keys=True)
        return self._owned_update(
            job,
            worker,
            state=JobState.QUEUED,
            last_error=error,
            lease_until=None,
            run_after=self.table.clock() + wait,
            **extra,
        )

    def complete_in(self, conn: Connection, job: Job, worker: str, result: str) -> bool:
        """``complete`` inside the caller's transaction (with the work it records)."""
        return self._owned_update_in(
            conn, job, worker, state=JobState.DONE, result=result, lease_until=None
        )

    def _owned_update(self, job: Job, worker: str, **values: Any) -> bool:
        with self.table.store.db.engine.begin() as conn:
            return self._owned_update_in(conn, job, worker, **values)

    def _owned_update_in(self, conn: Connection, job: Job, worker: str, **values: Any) -> bool:
        values = {k: v.value if isinstance(v, JobState) else v for k, v in values.items()}
        done = conn.execute(
            jobs_table.update()
            .where(jobs_table.c.id == job.id)
            .where(jobs_table.c.leased_by == worker)
            .where(jobs_table.c.state == JobState.RUNNING.value)
            .values(updated_at=self.table.clock(), **values)
        )
        return bool(done.rowcount)


def _gave_up(row: Any) -> str:
    previous = f"; last error: {row.last_error}" if row.last_error else ""
    return f"gave up after {row.attempts} attempt(s) (a worker died or timed out){previous}"
