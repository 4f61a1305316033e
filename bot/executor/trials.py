"""Trial jobs: one changeset of a command-line run, graded by whichever worker leases it.

The job's payload carries the changeset whole (patch included), the mode and judging the
run asked for, and the stamps of the specs the run was started under: a worker whose
specs differ refuses the job instead of grading it under other rules.

Writing is where "at least once" becomes "exactly once": the trial's envelopes, its slot
in the ledger and the job's completion commit together, and only while the worker still
holds the job. A worker that lost its lease (presumed dead, then alive after all), or a
second run of a trial already written, writes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.app.jobs import Job, JobKind, JobQueue, NewJob
from bot.app.jobs import metadata as jobs_metadata
from bot.executor.budget import SharedBudget
from bot.executor.budget import metadata as budget_metadata
from bot.wiring import build_cascade
from core.errors import ConfigError
from core.model import Changeset, Stamps
from core.settings import CassetteMode, Settings
from core.specs import SpecSet
from core.store import Store
from oracles.cascade import Budget, Cascade, TrialRecord
from oracles.runner import crashed_trial

__all__ = [
    "NOT_STARTED",
    "TABLES",
    "TrialGrader",
    "TrialTask",
    "run_key_prefix",
    "run_subject",
    "trial_job",
    "trial_key",
]

log = logging.getLogger(__name__)

CascadeFactory = Callable[[CassetteMode, bool], Cascade]
NOT_STARTED = "not started"
# Beside the ledger wherever trial jobs are written or run: the jobs and the run budgets.
TABLES = (jobs_metadata, budget_metadata)


def run_key_prefix(run_id: str) -> str:
    return f"trial:{run_id}:"


def trial_key(run_id: str, changeset_id: str) -> str:
    """The job's idempotency key: one job per changeset of a run."""
    return run_key_prefix(run_id) + changeset_id


@dataclass(frozen=True, slots=True)
class TrialTask:
    """What a trial job asks a worker to do."""

    run_id: str
    changeset: Changeset
    mode: CassetteMode
    strict: bool
    stamps: Stamps
    budgeted: bool = False  # the run has a shared budget (``run_budgets``)

    def payload(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "changeset": self.changeset.to_dict(),
            "mode": self.mode.value,
            "strict": self.strict,
            "stamps": self.stamps.to_dict(),
            "budgeted": self.budgeted,
        }

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> TrialTask:
        return cls(
            run_id=str(payload["run_id"]),
            changeset=Changeset.from_dict(payload["changeset"]),
            mode=CassetteMode(payload["mode"]),
            strict=bool(payload["strict"]),
            stamps=Stamps.from_dict(payload["stamps"]),
            budgeted=bool(payload.get("budgeted", False)),
        )


def run_subject(run_id: str) -> str:
    """The subject of a run's trial jobs. Trial jobs never wait for others of their
    subject (leasing them skips that check), so it only groups them: the run's progress
    is counted on the subject's index."""
    return f"trial-run:{run_id}"


def trial_job(task: TrialTask) -> NewJob:
    key = trial_key(task.run_id, task.changeset.id)
    return NewJob(JobKind.TRIAL, key, run_subject(task.run_id), task.payload())


class TrialGrader:
    """Runs trial jobs in a worker: the cascade, then the ledger and the job together.

    It completes its job itself (``completes_jobs``), in the ledger's transaction.
    """

    completes_jobs = True

    def __init__(
        self,
        settings: Settings,
        store: Store,
        queue: JobQueue,
        specs: SpecSet,
        *,
        cascades: CascadeFactory | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.queue = queue
        self.specs = specs
        self._factory = cascades or self._build
        self._built: dict[tuple[CassetteMode, bool], Cascade] = {}
        self._lock = threading.Lock()

    def _build(self, mode: CassetteMode, strict: bool) -> Cascade:
        wanted = self.settings.with_overrides(mode=mode, strict_judge=strict)
        return build_cascade(wanted, store=self.store, specs=self.specs)

    def cascade(self, mode: CassetteMode, strict: bool) -> Cascade:
        """One cascade per mode and judging, built on first use and shared by threads."""
        with self._lock:
            if (mode, strict) not in self._built:
                self._built[mode, strict] = self._factory(mode, strict)
            return self._built[mode, strict]

    def cascades(self) -> list[Cascade]:
        with self._lock:
            return list(self._built.values())

    def _check_stamps(self, task: TrialTask) -> None:
        mine = self.specs.stamps_for(task.changeset.recipe)
        if mine != task.stamps:
            raise ConfigError(
                f"this worker's specs differ from the run's (oracle {mine.oracle[:12]} vs "
                f"{task.stamps.oracle[:12]}, recipe {mine.recipe[:12]} vs "
                f"{task.stamps.recipe[:12]}); deploy the same specs/ to every worker"
            )

    def __call__(self, job: Job, worker: str) -> str:
        task = TrialTask.of(job.payload)
        self._check_stamps(task)
        cascade = self.cascade(task.mode, task.strict)
        budget = SharedBudget(self.store, task.run_id) if task.budgeted else Budget(None)
        if budget.exhausted:  # as the embedded runner: a trial not started stays so
            line = f"{NOT_STARTED}: the run's budget is exhausted"
            self.queue.complete(job, worker, line)
            return line
        try:
            record = cascade.run_trial(task.run_id, task.changeset, budget)
        except Exception as exc:  # one crashing trial is recorded, like the embedded runner
            log.exception("internal error grading %s", task.changeset.id)
            record = TrialRecord(crashed_trial(cascade, task.run_id, task.changeset, exc))
        line = f"{record.trial.verdict.value}: trial {record.trial.id} ({task.changeset.id})"
        seq = self.store.append_trial_once(
            record.trial,
            record.cache_keys,
            claim=lambda conn: self.queue.complete_in(conn, job, worker, line),
        )
        if seq is None:
            line = f"discarded: trial {record.trial.id} is already written or no longer ours"
            self.queue.complete(job, worker, line)  # a no-op when the job is no longer ours
        return line
