"""What the job queue's parts hand each other and their callers: states, jobs, outcomes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.core.errors import MigrationEvalsError

__all__ = ["Accepted", "Job", "JobRetryError", "JobState", "NewJob"]


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


class JobRetryError(MigrationEvalsError):
    """A job that cannot be put back by hand: unknown, running or done."""
