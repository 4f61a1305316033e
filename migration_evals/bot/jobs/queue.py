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

The queue is four parts over one ``JobTable`` (store, kinds, clock, the listener told of
new jobs), each with one job, and a caller takes the part it needs:

- ``Intake`` (``intake``): deliveries, ``enqueue``, ``insert_many``.
- ``Leasing`` (``leasing``): ``lease``, ``lease_by_id``, ``heartbeat``, ``complete``,
  ``fail``, ``due_for_dispatch``.
- ``Administration`` (``admin``): listings, counts, ``retry``, ``ping``.
- ``NamedLeases`` (``named_leases``): ``hold_lease``, ``release_lease``.

``build_queue`` is the one way to make them; ``QueueOptions.of`` reads its options from
the settings, so the App, the workers, the executor's driver and the ``jobs`` command
agree. The queue knows kinds only through the ``KindRegistry`` it is given. Times are
seconds since the epoch from an injected clock, so tests can move time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from migration_evals.bot.jobs.admin import Administration
from migration_evals.bot.jobs.intake import Intake
from migration_evals.bot.jobs.kinds import JobKind, KindRegistry
from migration_evals.bot.jobs.leasing import Leasing
from migration_evals.bot.jobs.model import Accepted, Job, JobRetryError, JobState, NewJob
from migration_evals.bot.jobs.named_leases import NamedLeases
from migration_evals.bot.jobs.table import JobTable
from migration_evals.core.retry import Backoff
from migration_evals.core.settings import GitHubAppSettings, Settings
from migration_evals.core.store import Store

__all__ = [
    "DEFAULT_BACKOFF",
    "Accepted",
    "Administration",
    "Intake",
    "Job",
    "JobQueue",
    "JobRetryError",
    "JobState",
    "Leasing",
    "NamedLeases",
    "NewJob",
    "QueueOptions",
    "build_queue",
]


_APP = GitHubAppSettings()  # the settings' defaults are the queue's: one copy of each
DEFAULT_BACKOFF = Backoff(base_s=_APP.job_retry_s, max_s=_APP.job_retry_max_s)
"""Between attempts of a failed job, as the settings default it."""


@dataclass(frozen=True, slots=True)
class QueueOptions:
    """How long a lease lasts, how often a job is tried and how long it waits between."""

    lease_s: float = _APP.job_lease_s
    max_attempts: int = _APP.job_max_attempts
    backoff: Backoff = DEFAULT_BACKOFF
    jitter: Callable[[], float] = field(default=random.random)

    @classmethod
    def of(cls, settings: Settings, *, lease_s: float | None = None) -> QueueOptions:
        """The App's job options from ``settings``; ``lease_s`` replaces the App's job lease
        where another lease governs (a Celery worker's is the trial lease)."""
        app = settings.github_app
        return cls(
            lease_s=app.job_lease_s if lease_s is None else lease_s,
            max_attempts=app.job_max_attempts,
            backoff=Backoff(base_s=app.job_retry_s, max_s=app.job_retry_max_s),
        )


@dataclass(frozen=True, slots=True)
class JobQueue:
    """The queue's parts over one table; pass a caller only the part it uses."""

    table: JobTable
    intake: Intake
    leasing: Leasing
    admin: Administration
    named_leases: NamedLeases

    @property
    def store(self) -> Store:
        return self.table.store

    @property
    def kinds(self) -> KindRegistry:
        return self.table.kinds


def build_queue(
    store: Store,
    kinds: KindRegistry,
    options: QueueOptions | None = None,
    *,
    clock: Callable[[], float] = time.time,
    on_new_jobs: Callable[[Sequence[tuple[int, JobKind]]], None] | None = None,
) -> JobQueue:
    """The job queue on ``store`` for ``kinds``; ``on_new_jobs`` is told of committed jobs
    (the Celery executor announces them)."""
    options = options or QueueOptions()
    table = JobTable(store, kinds, clock=clock, on_new_jobs=on_new_jobs)
    return JobQueue(
        table=table,
        intake=Intake(table, max_attempts=options.max_attempts),
        leasing=Leasing(
            table, lease_s=options.lease_s, backoff=options.backoff, jitter=options.jitter
        ),
        admin=Administration(table),
        named_leases=NamedLeases(table),
    )
