"""Administration: the queue as operators, health checks and progress reports read it,
and jobs put back by hand."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from migration_evals.bot.jobs.kinds import JobKind, KindRegistry
from migration_evals.bot.jobs.model import JobRetryError, JobState
from migration_evals.bot.jobs.table import GUARD, JobTable
from migration_evals.core.schema import deliveries_table, jobs_table

__all__ = ["Administration"]

log = logging.getLogger(__name__)


class Administration:
    """Reading jobs and deliveries, and ``retry``: one job put back by an operator."""

    def __init__(self, table: JobTable) -> None:
        self.table = table

    def jobs(self, *, subject: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(jobs_table).order_by(jobs_table.c.id)
        if subject is not None:
            query = query.where(jobs_table.c.subject == subject)
        with self.table.store.db.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def listing(
        self, *, states: Collection[JobState] = (), kind: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """The newest ``limit`` jobs (of those ``states`` and ``kind`` when given), newest
        first, for ``migration-evals jobs list``."""
        query = sa.select(jobs_table).order_by(jobs_table.c.id.desc()).limit(limit)
        if states:
            query = query.where(jobs_table.c.state.in_([state.value for state in states]))
        if kind is not None:
            query = query.where(jobs_table.c.kind == kind)
        with self.table.store.db.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def retry(self, job_id: int) -> dict[str, Any]:
        """Put job ``job_id`` back now with a fresh set of attempts (a failed job, or a
        queued one waiting out its backoff); returns its row as it was before.

        ``JobRetryError`` when there is no such job, it is running under a live lease
        (its worker has it) or it is done (its work is recorded: re-grade instead)."""
        now = self.table.clock()
        jobs = jobs_table.c
        with self.table.store.db.engine.begin() as conn:
            conn.execute(GUARD)  # no lease decision in between
            row = conn.execute(sa.select(jobs_table).where(jobs.id == job_id)).mappings().first()
            if row is None:
                raise JobRetryError(
                    f"there is no job {job_id}; `migration-evals jobs list` lists them"
                )
            before = dict(row)
            kind = _kind_of(self.table.kinds, before)
            _check_retryable(before, now)
            self.table.set(
                conn,
                job_id,
                state=JobState.QUEUED,
                attempts=0,
                run_after=now,
                lease_until=None,
                leased_by=None,
            )
        log.info("job %s (%s) put back by hand (it was %s)", job_id, before["key"], before["state"])
        self.table.announce([(job_id, kind)])  # where a dispatcher listens (the Celery executor)
        return before

    def failing(self, *, since: float) -> list[dict[str, Any]]:
        """The jobs failing now, newest first: those retrying after a failed attempt, and
        those that gave up at ``since`` or later."""
        jobs = jobs_table.c
        retrying = sa.and_(
            jobs.state.in_([JobState.QUEUED.value, JobState.RUNNING.value]),
            jobs.attempts > 0,
            jobs.last_error.is_not(None),
        )
        gave_up = sa.and_(jobs.state == JobState.FAILED.value, jobs.updated_at >= since)
        query = (
            sa.select(
                jobs.id, jobs.kind, jobs.state, jobs.attempts, jobs.max_attempts, jobs.last_error
            )
            .where(sa.or_(retrying, gave_up))
            .order_by(jobs.id.desc())
        )
        with self.table.store.db.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def failed(self, kind: JobKind, key_prefix: str) -> dict[str, str]:
        """Key and last error of the failed jobs of ``kind`` whose key starts so."""
        jobs = jobs_table.c
        query = sa.select(jobs.key, jobs.last_error).where(
            jobs.state == JobState.FAILED.value,
            jobs.kind == kind.name,
            jobs.key.startswith(key_prefix, autoescape=True),
        )
        with self.table.store.db.reading() as conn:
            return {str(key): str(error or "") for key, error in conn.execute(query)}

    def count_states(self, subject: str) -> dict[JobState, int]:
        """How many jobs of ``subject`` are in each state."""
        query = (
            sa.select(jobs_table.c.state, sa.func.count())
            .where(jobs_table.c.subject == subject)
            .group_by(jobs_table.c.state)
        )
        with self.table.store.db.reading() as conn:
            return {JobState(state): int(n) for state, n in conn.execute(query)}

    def counts(self) -> dict[str, int]:
        query = sa.select(jobs_table.c.state, sa.func.count()).group_by(jobs_table.c.state)
        with self.table.store.db.reading() as conn:
            return {str(state): int(n) for state, n in conn.execute(query)}

    def ping(self) -> bool:
        """True when the database answers."""
        try:
            with self.table.store.db.reading() as conn:
                conn.execute(sa.select(1))
        except SQLAlchemyError:
            return False
        return True

    def deliveries(self) -> int:
        with self.table.store.db.reading() as conn:
            return int(
                conn.execute(sa.select(sa.func.count()).select_from(deliveries_table)).scalar_one()
            )


def _kind_of(kinds: KindRegistry, row: Mapping[str, Any]) -> JobKind:
    """The row's kind, if it is one this queue may put back."""
    known = {kind.name: kind for kind in kinds}
    found = known.get(str(row["kind"]))
    if found is None:
        raise JobRetryError(
            f"job {row['id']} is a {row['kind']!r} job, which is not put back from here "
            f"(this puts back {', '.join(sorted(known)) or 'no'} jobs); a run's trials are "
            "graded again by `migration-evals run --resume RUN_ID`"
        )
    return found


def _check_retryable(row: Mapping[str, Any], now: float) -> None:
    state = JobState(row["state"])
    if state is JobState.DONE:
        raise JobRetryError(
            f"job {row['id']} is done ({row['result'] or 'no result'}); nothing to retry "
            "(to grade a pull request again, use GitHub's Re-run or `/migration-evals rerun`)"
        )
    lease = row["lease_until"]
    if state is JobState.RUNNING and lease is not None and lease > now:
        raise JobRetryError(
            f"job {row['id']} is running on {row['leased_by']} (its lease runs "
            f"{lease - now:.0f} s more); retry it only once it has failed"
        )
