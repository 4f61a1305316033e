"""Intake: webhook deliveries and new jobs become rows before anyone is told of them."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from migration_evals.bot.jobs.model import Accepted, JobState, NewJob
from migration_evals.bot.jobs.table import INSERT_JOBS, JobTable
from migration_evals.core.errors import StoreError
from migration_evals.core.schema import deliveries_table, jobs_table

__all__ = ["Intake"]

_Delivery = tuple[str, str, tuple[NewJob, ...]]

# Built once: intake runs these for every batch of deliveries.
_KNOWN_DELIVERIES = sa.select(deliveries_table.c.delivery_id).where(
    deliveries_table.c.delivery_id.in_(sa.bindparam("ids", expanding=True))
)
_TAKEN_KEYS = sa.select(jobs_table.c.key).where(
    jobs_table.c.key.in_(sa.bindparam("keys", expanding=True))
)


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


def _accepted(fresh: tuple[NewJob, ...] | None, ids: Iterator[int]) -> Accepted:
    """One delivery's outcome; takes its new jobs' ids, in order, from ``ids``."""
    if fresh is None:
        return Accepted(duplicate=True)
    return Accepted(
        duplicate=False,
        job_ids=tuple(int(next(ids)) for _ in fresh),
        kinds=tuple(job.kind for job in fresh),
    )


class Intake:
    """Deliveries and new jobs: recorded once (a repeat is a no-op), then announced."""

    def __init__(self, table: JobTable, *, max_attempts: int) -> None:
        self.table = table
        self.max_attempts = max_attempts
        # Fields every new job's payload carries unless it has its own (the App's plan).
        self.carry: Mapping[str, Any] = {}
        self._group = _GroupCommit(self._accept_batch)

    def accept(self, delivery_id: str, event: str, jobs: Sequence[NewJob]) -> Accepted:
        """Record a delivery and its jobs in one transaction; a repeat is a duplicate."""
        try:
            accepted = self._group.submit((delivery_id, event, tuple(jobs)))
        except SQLAlchemyError as exc:
            if isinstance(exc, IntegrityError):
                return Accepted(duplicate=True)  # a concurrent twin committed first
            raise StoreError(f"cannot record delivery {delivery_id}: {exc}") from exc
        self.table.announce(list(zip(accepted.job_ids, accepted.kinds, strict=True)))
        return accepted

    def _accept_batch(self, batch: Sequence[_Delivery]) -> list[Accepted]:
        engine = self.table.store.db.engine
        try:
            with engine.begin() as conn:
                return self._accept_all(conn, batch)
        except IntegrityError:
            # A twin committed by another process between this batch's look and its write
            # (possible on PostgreSQL; SQLite's write lock is held from the start): settle
            # the batch one delivery, one job at a time.
            with engine.begin() as conn:
                return [self._accept(conn, *delivery) for delivery in batch]

    def _accept_all(self, conn: Connection, batch: Sequence[_Delivery]) -> list[Accepted]:
        """The whole batch in a few statements: look up known deliveries and job keys once,
        then insert what is new in two multi-row inserts."""
        now = self.table.clock()
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
        ids = iter(conn.execute(INSERT_JOBS, rows).scalars()) if rows else iter(())
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
        now = self.table.clock()
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
        now = self.table.clock()
        with self.table.store.db.engine.begin() as conn:
            job_id = self._insert(conn, job, now + delay_s, None)
        if job_id is not None and delay_s <= 0:
            self.table.announce([(job_id, job.kind)])
        return job_id

    def insert_many(
        self, conn: Connection, jobs: Sequence[NewJob], *, max_attempts: int | None = None
    ) -> list[int]:
        """Insert fresh jobs inside the caller's transaction; returns their ids in order.

        For keys that cannot exist yet (a new run's trials): one multi-row insert, no
        savepoint per row; a key that does exist fails the whole transaction. Announcing
        them is the caller's business, after its commit.
        """
        now = self.table.clock()
        rows = [self._row(job, now, max_attempts=max_attempts) for job in jobs]
        if not rows:
            return []
        return [int(job_id) for job_id in conn.execute(INSERT_JOBS, rows).scalars()]

    def _insert(
        self, conn: Connection, job: NewJob, run_after: float, delivery_id: str | None
    ) -> int | None:
        now = self.table.clock()
        row = self._row(job, now, run_after=run_after, delivery_id=delivery_id)
        try:
            with conn.begin_nested():
                result = conn.execute(jobs_table.insert().values(**row))
        except IntegrityError:
            return None  # the same work is already queued, running or done
        key = result.inserted_primary_key
        return int(key[0]) if key else None
