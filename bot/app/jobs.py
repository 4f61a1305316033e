"""The durable job queue: webhook deliveries become rows before the 202 goes out.

Tables (created beside the ledger through ``Store.open(extra_metadata=[metadata])``):

- ``bot_deliveries``: one row per ``X-GitHub-Delivery``; a repeated delivery is a no-op.
- ``bot_jobs``: kind, idempotency key (unique), subject, payload, state, attempts,
  lease-until, last error. A job whose worker died is leased again once its lease ends.
- ``bot_queue_guard``: one row locked by every lease decision, so that two jobs of the
  same subject (one pull request) never run at once, on SQLite (whose write transactions
  are ``BEGIN IMMEDIATE``) and on PostgreSQL (``SELECT ... FOR UPDATE``) alike. Candidate
  rows are read ``FOR UPDATE SKIP LOCKED`` where the dialect has it.
- ``bot_leases``: named, expiring locks (the one-scheduler lock).

Times are seconds since the epoch from an injected clock, so tests can move time.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from core.errors import StoreError
from core.store import Store

__all__ = [
    "Accepted",
    "Job",
    "JobKind",
    "JobQueue",
    "JobState",
    "NewJob",
    "metadata",
]

metadata = sa.MetaData()

deliveries_table = sa.Table(
    "bot_deliveries",
    metadata,
    sa.Column("delivery_id", sa.String(100), primary_key=True),
    sa.Column("event", sa.String(60), nullable=False),
    sa.Column("received_at", sa.Float, nullable=False),
    sa.Column("jobs", sa.Integer, nullable=False),
)

jobs_table = sa.Table(
    "bot_jobs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("key", sa.String(500), nullable=False, unique=True),
    sa.Column("subject", sa.String(300), nullable=False, index=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("max_attempts", sa.Integer, nullable=False),
    sa.Column("run_after", sa.Float, nullable=False),
    sa.Column("lease_until", sa.Float),
    sa.Column("leased_by", sa.String(120)),
    sa.Column("last_error", sa.Text),
    sa.Column("result", sa.Text),
    sa.Column("delivery_id", sa.String(100)),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

guard_table = sa.Table(
    "bot_queue_guard",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
)

leases_table = sa.Table(
    "bot_leases",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("holder", sa.String(120), nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)


class JobKind(StrEnum):
    GRADE = "grade"  # grade a PR head and publish its check run
    COMMAND = "command"  # slash commands in one PR comment
    TRACK_MERGE = "track-merge"  # hand a merged agent PR to survival mining


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


class JobQueue:
    """Deliveries, jobs and leases on top of the project's ``Store``."""

    def __init__(
        self,
        store: Store,
        *,
        lease_s: float = 300.0,
        max_attempts: int = 5,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.lease_s = lease_s
        self.max_attempts = max_attempts
        self.clock = clock
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
            return self._intake.submit((delivery_id, event, tuple(jobs)))
        except SQLAlchemyError as exc:
            if isinstance(exc, IntegrityError):
                return Accepted(duplicate=True)  # a concurrent twin committed first
            raise StoreError(f"cannot record delivery {delivery_id}: {exc}") from exc

    def _accept_batch(self, batch: Sequence[_Delivery]) -> list[Accepted]:
        with self.store.engine.begin() as conn:
            return [self._accept(conn, *delivery) for delivery in batch]

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
        ids = [self._insert(conn, job, now, delivery_id) for job in jobs]
        return Accepted(duplicate=False, job_ids=tuple(i for i in ids if i is not None))

    def enqueue(self, job: NewJob, *, delay_s: float = 0.0) -> int | None:
        """Create ``job`` unless its key exists; returns the new id or None."""
        now = self.clock()
        with self.store.engine.begin() as conn:
            return self._insert(conn, job, now + delay_s, None)

    def _insert(
        self, conn: Connection, job: NewJob, run_after: float, delivery_id: str | None
    ) -> int | None:
        now = self.clock()
        try:
            with conn.begin_nested():
                result = conn.execute(
                    jobs_table.insert().values(
                        kind=job.kind.value,
                        key=job.key,
                        subject=job.subject,
                        payload=json.dumps(dict(job.payload), sort_keys=True),
                        state=JobState.QUEUED.value,
                        attempts=0,
                        max_attempts=self.max_attempts,
                        run_after=run_after,
                        delivery_id=delivery_id,
                        created_at=now,
                        updated_at=now,
                    )
                )
        except IntegrityError:
            return None  # the same work is already queued, running or done
        key = result.inserted_primary_key
        return int(key[0]) if key else None

    # -- leasing --------------------------------------------------------------------------

    def lease(self, worker: str) -> Job | None:
        """Take the oldest runnable job whose subject is not busy, for ``lease_s`` seconds."""
        now = self.clock()
        jobs = jobs_table.c
        with self.store.engine.begin() as conn:
            conn.execute(_GUARD)
            busy = sa.select(jobs.subject).where(
                jobs.state == JobState.RUNNING.value, jobs.lease_until > now
            )
            runnable = sa.or_(
                sa.and_(jobs.state == JobState.QUEUED.value, jobs.run_after <= now),
                sa.and_(jobs.state == JobState.RUNNING.value, jobs.lease_until <= now),
            )
            row = conn.execute(
                sa.select(jobs_table)
                .where(runnable, jobs.subject.not_in(busy))
                .order_by(jobs.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            if row.attempts >= row.max_attempts:
                self._set(conn, row.id, state=JobState.FAILED, last_error=_gave_up(row))
                return None
            self._set(
                conn,
                row.id,
                state=JobState.RUNNING,
                attempts=row.attempts + 1,
                lease_until=now + self.lease_s,
                leased_by=worker,
            )
        return Job(
            id=int(row.id),
            kind=JobKind(row.kind),
            key=str(row.key),
            subject=str(row.subject),
            payload=json.loads(row.payload),
            attempts=int(row.attempts) + 1,
            max_attempts=int(row.max_attempts),
        )

    def heartbeat(self, job: Job, worker: str) -> bool:
        """Extend the lease; False when the job is no longer this worker's."""
        return self._owned_update(job, worker, lease_until=self.clock() + self.lease_s)

    def complete(self, job: Job, worker: str, result: str = "") -> bool:
        return self._owned_update(
            job, worker, state=JobState.DONE, result=result, lease_until=None, last_error=None
        )

    def fail(self, job: Job, worker: str, error: str, *, retry_at: float | None = None) -> bool:
        """Record a failed attempt: back off and retry, or give up after the last attempt."""
        if job.attempts >= job.max_attempts:
            return self._owned_update(
                job, worker, state=JobState.FAILED, last_error=error, lease_until=None
            )
        backoff = min(600.0, 5.0 * 2 ** (job.attempts - 1))
        when = retry_at if retry_at is not None else self.clock() + backoff
        return self._owned_update(
            job, worker, state=JobState.QUEUED, last_error=error, lease_until=None, run_after=when
        )

    def _owned_update(self, job: Job, worker: str, **values: Any) -> bool:
        values = {k: v.value if isinstance(v, JobState) else v for k, v in values.items()}
        with self.store.engine.begin() as conn:
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

    # -- reading --------------------------------------------------------------------------

    def jobs(self, *, subject: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(jobs_table).order_by(jobs_table.c.id)
        if subject is not None:
            query = query.where(jobs_table.c.subject == subject)
        with self.store.reading() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

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


def _gave_up(row: Any) -> str:
    previous = f"; last error: {row.last_error}" if row.last_error else ""
    return f"gave up after {row.attempts} attempt(s) (a worker died or timed out){previous}"
