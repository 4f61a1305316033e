"""The durable job queue: webhook deliveries become rows before the 202 goes out.

Tables (in ``migration_evals.core.schema`` with every other table):

- ``bot_deliveries``: one row per ``X-GitHub-Delivery``; a repeated delivery is a no-op.
- ``bot_jobs``: kind, idempotency key (unique), subject, payload, state, attempts,
  lease-until, last error. A job whose worker died is leased again once its lease ends.
- ``bot_queue_guard``: one row locked by every lease decision, so that two jobs of the
  same subject (one pull request) never run at once, on SQLite (whose write transactions
  are ``BEGIN IMMEDIATE``) and on PostgreSQL (``SELECT ... FOR UPDATE``) alike. Candidate
  rows are read ``FOR UPDATE SKIP LOCKED`` where the dialect has it.
- ``bot_leases``: named, expiring locks (the one-scheduler lock).

With the Celery executor the broker only carries job ids: a worker leases the named row
(``lease_by_id``), and ``due_for_dispatch`` finds the ready jobs whose announcement was
lost (a dead worker, a restarted broker), so the database stays the source of truth.
Jobs of a kind that is not ``exclusive`` (the executor's trials: one per changeset of a
command-line run) need no subject exclusivity, so leasing them skips the guard row and
workers do not queue behind one another. The queue knows kinds only through the
``KindRegistry`` it is given.

Times are seconds since the epoch from an injected clock, so tests can move time.
"""

from __future__ import annotations

import json
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from migration_evals.bot.jobs.kinds import JobKind, KindRegistry
from migration_evals.core.errors import MigrationEvalsError, StoreError
from migration_evals.core.retry import Backoff
from migration_evals.core.schema import deliveries_table, guard_table, jobs_table, leases_table
from migration_evals.core.store import Store

__all__ = [
    "DEFAULT_BACKOFF",
    "Accepted",
    "Job",
    "JobQueue",
    "JobRetryError",
    "JobState",
    "NewJob",
]

log = logging.getLogger(__name__)


DEFAULT_BACKOFF = Backoff(base_s=5.0, max_s=600.0)
"""Between attempts of a failed job: 2.5-5 s after the first, doubling up to ten minutes."""


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # out of attempts; last_error says why


@dataclass(frozen=True, slots=True)
class NewJob:
    """A job to create; ``key`` makes creating it twice a no-op."""

    kind: JobKind
    key: str
    subject: str
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Job:
    """A leased job, as a worker sees it."""

    id: int
    kind: JobKind
    key: str
    subject: str
    payload: Mapping[str, Any]
    attempts: int
    max_attempts: int


@dataclass(frozen=True, slots=True)
class Accepted:
    """What a delivery became: new job ids, or a duplicate of an earlier delivery."""

    duplicate: bool
    job_ids: tuple[int, ...] = ()
    kinds: tuple[JobKind, ...] = ()  # of each new job, in the same order


_Delivery = tuple[str, str, tuple[NewJob, ...]]


class _GroupCommit:
    """Deliveries arriving together share one transaction (one fsync), like the ledger.

    Each caller still waits until its own delivery is committed before it answers, so a
    202 always means "stored"; under load many deliveries ride on one commit.
    """

    def __init__(self, run: Callable[[Sequence[_Delivery]], list[Accepted]]) -> None:
        self.run = run
        self._queue: queue.Queue[tuple[_Delivery, Future[Accepted]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, delivery: _Delivery) -> Accepted:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="intake", daemon=True)
                self._thread.start()
        future: Future[Accepted] = Future()
        self._queue.put((delivery, future))
        return future.result()

    def _loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < 64:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                results = self.run([delivery for delivery, _ in batch])
            except Exception as exc:  # handed to every waiting request
                for _, future in batch:
                    future.set_exception(exc)
                continue
            for (_, future), result in zip(batch, results, strict=True):
                future.set_result(result)


_GUARD = sa.select(guard_table.c.id).where(guard_table.c.id == 1).with_for_update()
# Built once: intake runs these for every batch of deliveries.
_KNOWN_DELIVERIES = sa.select(deliveries_table.c.delivery_id).where(
    deliveries_table.c.delivery_id.in_(sa.bindparam("ids", expanding=True))
)
_TAKEN_KEYS = sa.select(jobs_table.c.key).where(
    jobs_table.c.key.in_(sa.bindparam("keys", expanding=True))
)
_INSERT_JOBS = jobs_table.insert().returning(jobs_table.c.id, sort_by_parameter_order=True)


def _accepted(fresh: tuple[NewJob, ...] | None, ids: Iterator[int]) -> Accepted:
    """One delivery's outcome; takes its new jobs' ids, in order, from ``ids``."""
    if fresh is None:
        return Accepted(duplicate=True)
    return Accepted(
        duplicate=False,
        job_ids=tuple(int(next(ids)) for _ in fresh),
        kinds=tuple(job.kind for job in fresh),
    )


class JobQueue:
    """Deliveries, jobs and leases on top of the project's ``Store``."""

    def __init__(
        self,
        store: Store,
        kinds: KindRegistry,
        *,
        lease_s: float = 300.0,
        max_attempts: int = 5,
        clock: Callable[[], float] = time.time,
        on_new_jobs: Callable[[Sequence[tuple[int, JobKind]]], None] | None = None,
        backoff: Backoff = DEFAULT_BACKOFF,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.store = store
        self.kinds = kinds
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        self.clock = clock
        # Between attempts of a failed job; jitter spreads a burst that failed together.
        self.backoff = backoff
        self.jitter = jitter
        # Told the ids of jobs once they are committed (the Celery executor announces them).
        self.on_new_jobs = on_new_jobs
        # Fields every new job's payload carries unless it has its own (the App's plan).
        self.carry: Mapping[str, Any] = {}
        self._intake = _GroupCommit(self._accept_batch)
        self._ensure_guard()

    def _ensure_guard(self) -> None:
        with self.store.engine.begin() as conn:
            if conn.execute(sa.select(guard_table.c.id)).first() is None:
                try:
                    with conn.begin_nested():
                        conn.execute(guard_table.insert().values(id=1))
                except IntegrityError:
                    pass  # another process created it first

    # -- intake ---------------------------------------------------------------------------

    def accept(self, delivery_id: str, event: str, jobs: Sequence[NewJob]) -> Accepted:
        """Record a delivery and its jobs in one transaction; a repeat is a duplicate."""
        try:
            accepted = self._intake.submit((delivery_id, event, tuple(jobs)))
        except SQLAlchemyError as exc:
            if isinstance(exc, IntegrityError):
                return Accepted(duplicate=True)  # a concurrent twin committed first
            raise StoreError(f"cannot record delivery {delivery_id}: {exc}") from exc
        self._announce(list(zip(accepted.job_ids, accepted.kinds, strict=True)))
        return accepted

    def _announce(self, jobs: Sequence[tuple[int, JobKind]]) -> None:
        # After the commit: a job is announced only once it exists. A lost announcement
        # is not lost work; ``due_for_dispatch`` finds the job again.
        if jobs and self.on_new_jobs is not None:
            self.on_new_jobs(jobs)

    def _accept_batch(self, batch: Sequence[_Delivery]) -> list[Accepted]:
        try:
            with self.store.engine.begin() as conn:
                return self._accept_all(conn, batch)
        except IntegrityError:
            # A twin committed by another process between this batch's look and its write
            # (possible on PostgreSQL; SQLite's write lock is held from the start): settle
            # the batch one delivery, one job at a time.
            with self.store.engine.begin() as conn:
                return [self._accept(conn, *delivery) for delivery in batch]

    def _accept_all(self, conn: Connection, batch: Sequence[_Delivery]) -> list[Accepted]:
        """The whole batch in a few statements: look up known deliveries and job keys once,
        then insert what is new in two multi-row inserts."""
        now = self.clock()
        known = set(conn.execute(_KNOWN_DELIVERIES, {"ids": [d[0] for d in batch]}).scalars())
        keys = [job.key for _, _, jobs in batch for job in jobs]
        taken = set(conn.execute(_TAKEN_KEYS, {"keys": keys}).scalars()) if keys else set()
        deliveries: list[dict[str, Any]] = []
        rows: list[dict[str, Any]] = []
        plan: list[tuple[NewJob, ...] | None] = []
        for delivery_id, event, jobs in batch:
            if delivery_id in known:
                plan.append(None)
                continue
            known.add(delivery_id)
            fresh = tuple(job for job in jobs if job.key not in taken)
            taken.update(job.key for job in fresh)
            plan.append(fresh)
            deliveries.append(
                {"delivery_id": delivery_id, "event": event, "received_at": now, "jobs": len(jobs)}
            )
            rows.extend(self._row(job, now, delivery_id=delivery_id) for job in fresh)
        if deliveries:
            conn.execute(deliveries_table.insert(), deliveries)
        ids = iter(conn.execute(_INSERT_JOBS, rows).scalars()) if rows else iter(())
        return [_accepted(fresh, ids) for fresh in plan]

    def _row(
        self,
        job: NewJob,
        now: float,
        *,
        run_after: float | None = None,
        delivery_id: str | None = None,
        max_attempts: int | None = None,
    ) -> dict[str, Any]:
        return {
            "kind": job.kind.name,
            "key": job.key,
            "subject": job.subject,
            "payload": json.dumps({**self.carry, **job.payload}, sort_keys=True),
            "state": JobState.QUEUED.value,
            "attempts": 0,
            "max_attempts": max_attempts or self.max_attempts,
            "run_after": now if run_after is None else run_after,
            "delivery_id": delivery_id,
            "created_at": now,
            "updated_at": now,
        }

    def _accept(
        self, conn: Connection, delivery_id: str, event: str, jobs: Sequence[NewJob]
    ) -> Accepted:
        now = self.clock()
        try:
            with conn.begin_nested():
                conn.execute(
                    deliveries_table.insert().values(
                        delivery_id=delivery_id, event=event, received_at=now, jobs=len(jobs)
                    )
                )
        except IntegrityError:
            return Accepted(duplicate=True)
        made = [(self._insert(conn, job, now, delivery_id), job.kind) for job in jobs]
        new = [(job_id, kind) for job_id, kind in made if job_id is not None]
        return Accepted(
            duplicate=False,
            job_ids=tuple(job_id for job_id, _ in new),
            kinds=tuple(kind for _, kind in new),
        )

    def enqueue(self, job: NewJob, *, delay_s: float = 0.0) -> int | None:
        """Create ``job`` unless its key exists; returns the new id or None."""
        now = self.clock()
        with self.store.engine.begin() as conn:
            job_id = self._insert(conn, job, now + delay_s, None)
        if job_id is not None and delay_s <= 0:
            self._announce([(job_id, job.kind)])
        return job_id

    def insert_many(
        self, conn: Connection, jobs: Sequence[NewJob], *, max_attempts: int | None = None
    ) -> list[int]:
        """Insert fresh jobs inside the caller's transaction; returns their ids in order.

        For keys that cannot exist yet (a new run's trials): one multi-row insert, no
        savepoint per row; a key that does exist fails the whole transaction. Announcing
        them is the caller's business, after its commit.
        """
        now = self.clock()
        rows = [self._row(job, now, max_attempts=max_attempts) for job in jobs]
        if not rows:
            return []
        return [int(job_id) for job_id in conn.execute(_INSERT_JOBS, rows).scalars()]

    def _insert(
        self, conn: Connection, job: NewJob, run_after: float, delivery_id: str | None
    ) -> int | None:
        now = self.clock()
        row = self._row(job, now, run_after=run_after, delivery_id=delivery_id)
        try:
            with conn.begin_nested():
                result = conn.execute(jobs_table.insert().values(**row))
        except IntegrityError:
            return None  # the same work is already queued, running or done
        key = result.inserted_primary_key
        return int(key[0]) if key else None

    # -- leasing --------------------------------------------------------------------------

    def lease(self, worker: str, *, kinds: Sequence[JobKind] | None = None) -> Job | None:
        """Take the oldest runnable job whose subject is not busy, for ``lease_s`` seconds.

        ``kinds`` limits it to the jobs this worker has handlers for.
        """
        now = self.clock()
        jobs = jobs_table.c
        with self.store.engine.begin() as conn:
            conn.execute(_GUARD)
            busy = sa.select(jobs.subject).where(
                jobs.state == JobState.RUNNING.value, jobs.lease_until > now
            )
            query = sa.select(jobs_table).where(_runnable(now), jobs.subject.not_in(busy))
            if kinds is not None:
                query = query.where(jobs.kind.in_([kind.name for kind in kinds]))
            row = conn.execute(
                query.order_by(*self._lease_order()).limit(1).with_for_update(skip_locked=True)
            ).first()
            return None if row is None else self._take(conn, row, worker, now)

    def _lease_order(self) -> list[sa.ColumnElement[Any]]:
        """Oldest first, within each kind's priority (lower first)."""
        ranks = self.kinds.priorities()
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
        now = self.clock()
        free = [k.name for k in self.kinds.free() if kinds is None or k in kinds]
        if free:
            taken = self._lease_free(job_id, worker, now, free)
            if taken is not None:
                return taken
        jobs = jobs_table.c
        with self.store.engine.begin() as conn:
            kind = conn.execute(sa.select(jobs.kind).where(jobs.id == job_id)).scalar()
            if kind is None or (kinds is not None and kind not in {k.name for k in kinds}):
                return None
            exclusive = self.kinds.get(kind).exclusive
            if exclusive:
                conn.execute(_GUARD)  # before the row, in the same order as ``lease``
            row = conn.execute(
                sa.select(jobs_table).where(jobs.id == job_id, _runnable(now)).with_for_update()
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
            .where(jobs.id == job_id, jobs.kind.in_(names), _runnable(now))
            .where(jobs.attempts < jobs.max_attempts)
            .values(
                state=JobState.RUNNING.value,
                attempts=jobs.attempts + 1,
                lease_until=now + self.lease_s,
                leased_by=worker,
                updated_at=now,
            )
            .returning(*_JOB_COLUMNS)
        )
        with self.store.engine.begin() as conn:
            _relax_commit(conn)
            row = conn.execute(take).first()
        return None if row is None else self._job(row, attempts=int(row.attempts))

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
            self._set(conn, row.id, state=JobState.FAILED, last_error=why)
            log.error("job %s (%s) %s", row.id, row.key, why)
            return None
        self._set(
            conn,
            row.id,
            state=JobState.RUNNING,
            attempts=row.attempts + 1,
            lease_until=now + self.lease_s,
            leased_by=worker,
        )
        return self._job(row, attempts=int(row.attempts) + 1)

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
        now = self.clock()
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
        with self.store.engine.begin() as conn:
            due = [
                (int(job_id), self.kinds.get(kind))
                for job_id, kind in conn.execute(
                    sa.select(jobs.id, jobs.kind)
                    .where(_runnable(now), stale)
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
        with self.store.engine.begin() as conn:
            _relax_commit(conn)  # a lost renewal costs at most a repeated run
            return self._owned_update_in(conn, job, worker, lease_until=self.clock() + self.lease_s)

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
            run_after=self.clock() + wait,
            **extra,
        )

    def complete_in(self, conn: Connection, job: Job, worker: str, result: str) -> bool:
        """``complete`` inside the caller's transaction (with the work it records)."""
        return self._owned_update_in(
            conn, job, worker, state=JobState.DONE, result=result, lease_until=None
        )

    def _owned_update(self, job: Job, worker: str, **values: Any) -> bool:
        with self.store.engine.begin() as conn:
            return self._owned_update_in(conn, job, worker, **values)

    def _owned_update_in(self, conn: Connection, job: Job, worker: str, **values: Any) -> bool:
        values = {k: v.value if isinstance(v, JobState) else v for k, v in values.items()}
        done = conn.execute(
            jobs_table.update()
            .where(jobs_table.c.id == job.id)
            .where(jobs_table.c.leased_by == worker)
            .where(jobs_table.c.state == JobState.RUNNING.value)
            .values(updated_at=self.clock(), **values)
        )
        return bool(done.rowcount)

    def _set(self, conn: Connection, job_id: int, **values: Any) -> None:
        values = {k: v.value if isinstance(v, JobState) else v for k, v in values.items()}
        conn.execute(
            jobs_table.update()
            .where(jobs_table.c.id == job_id)
            .values(updated_at=self.clock(), **values)
        )

    def _job(self, row: Any, *, attempts: int) -> Job:
        return Job(
            id=int(row.id),
            kind=self.kinds.get(str(row.kind)),
            key=str(row.key),
            subject=str(row.subject),
            payload=json.loads(row.payload),
            attempts=attempts,
            max_attempts=int(row.max_attempts),
        )

    # -- reading --------------------------------------------------------------------------

    def jobs(self, *, subject: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(jobs_table).order_by(jobs_table.c.id)
        if subject is not None:
            query = query.where(jobs_table.c.subject == subject)
        with self.store.reading() as conn:
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
        with self.store.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def retry(self, job_id: int) -> dict[str, Any]:
        """Put job ``job_id`` back now with a fresh set of attempts (a failed job, or a
        queued one waiting out its backoff); returns its row as it was before.

        ``JobRetryError`` when there is no such job, it is running under a live lease
        (its worker has it) or it is done (its work is recorded: re-grade instead)."""
        now = self.clock()
        jobs = jobs_table.c
        with self.store.engine.begin() as conn:
            conn.execute(_GUARD)  # no lease decision in between
            row = conn.execute(sa.select(jobs_table).where(jobs.id == job_id)).mappings().first()
            if row is None:
                raise JobRetryError(
                    f"there is no job {job_id}; `migration-evals jobs list` lists them"
                )
            before = dict(row)
            kind = _kind_of(self.kinds, before)
            _check_retryable(before, now)
            self._set(
                conn,
                job_id,
                state=JobState.QUEUED,
                attempts=0,
                run_after=now,
                lease_until=None,
                leased_by=None,
            )
        log.info("job %s (%s) put back by hand (it was %s)", job_id, before["key"], before["state"])
        self._announce([(job_id, kind)])  # where a dispatcher listens (the Celery executor)
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
        with self.store.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def failed(self, kind: JobKind, key_prefix: str) -> dict[str, str]:
        """Key and last error of the failed jobs of ``kind`` whose key starts so."""
        jobs = jobs_table.c
        query = sa.select(jobs.key, jobs.last_error).where(
            jobs.state == JobState.FAILED.value,
            jobs.kind == kind.name,
            jobs.key.startswith(key_prefix, autoescape=True),
        )
        with self.store.reading() as conn:
            return {str(key): str(error or "") for key, error in conn.execute(query)}

    def count_states(self, subject: str) -> dict[JobState, int]:
        """How many jobs of ``subject`` are in each state."""
        query = (
            sa.select(jobs_table.c.state, sa.func.count())
            .where(jobs_table.c.subject == subject)
            .group_by(jobs_table.c.state)
        )
        with self.store.reading() as conn:
            return {JobState(state): int(n) for state, n in conn.execute(query)}

    def counts(self) -> dict[str, int]:
        query = sa.select(jobs_table.c.state, sa.func.count()).group_by(jobs_table.c.state)
        with self.store.reading() as conn:
            return {str(state): int(n) for state, n in conn.execute(query)}

    def ping(self) -> bool:
        """True when the database answers."""
        try:
            with self.store.reading() as conn:
                conn.execute(sa.select(1))
        except SQLAlchemyError:
            return False
        return True

    def deliveries(self) -> int:
        with self.store.reading() as conn:
            return int(
                conn.execute(sa.select(sa.func.count()).select_from(deliveries_table)).scalar_one()
            )

    # -- named leases (one scheduler among many processes) -------------------------------

    def hold_lease(self, name: str, holder: str, ttl_s: float) -> bool:
        """Take or renew the named lease; True while ``holder`` has it."""
        now = self.clock()
        leases = leases_table.c
        with self.store.engine.begin() as conn:
            conn.execute(_GUARD)
            taken = conn.execute(
                leases_table.update()
                .where(leases.name == name)
                .where(sa.or_(leases.holder == holder, leases.expires_at <= now))
                .values(holder=holder, expires_at=now + ttl_s)
            ).rowcount
            if taken:
                return True
            if conn.execute(sa.select(leases.name).where(leases.name == name)).first():
                return False
            conn.execute(
                leases_table.insert().values(name=name, holder=holder, expires_at=now + ttl_s)
            )
            return True

    def release_lease(self, name: str, holder: str) -> None:
        with self.store.engine.begin() as conn:
            conn.execute(
                leases_table.delete()
                .where(leases_table.c.name == name)
                .where(leases_table.c.holder == holder)
            )


_JOB_COLUMNS = tuple(
    jobs_table.c[name]
    for name in ("id", "kind", "key", "subject", "payload", "attempts", "max_attempts")
)


def _relax_commit(conn: Connection) -> None:
    """On PostgreSQL, let this transaction's commit return before its WAL reaches disk.

    Only for writes that are safe to lose in a server crash (leases and their renewals):
    losing one makes a job run again, which the job keys and trial slots absorb.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SET LOCAL synchronous_commit TO OFF"))


def _runnable(now: float) -> sa.ColumnElement[bool]:
    """Queued and due, or running under a lease that ran out (its worker died)."""
    jobs = jobs_table.c
    return sa.or_(
        sa.and_(jobs.state == JobState.QUEUED.value, jobs.run_after <= now),
        sa.and_(jobs.state == JobState.RUNNING.value, jobs.lease_until <= now),
    )


class JobRetryError(MigrationEvalsError):
    """A job that cannot be put back by hand: unknown, running or done."""


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


def _gave_up(row: Any) -> str:
    previous = f"; last error: {row.last_error}" if row.last_error else ""
    return f"gave up after {row.attempts} attempt(s) (a worker died or timed out){previous}"
