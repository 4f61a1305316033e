"""Trial jobs: one changeset of a command-line run, graded by whichever worker leases it.

The job's payload carries the changeset whole (patch included) and the run's plan (its
modes, judging, endpoints and the stamps of the specs it was started under). The worker
grades with the plan's cascade, whatever its own environment says; a worker that cannot
honour the plan (other specs, no engine for a live sandbox, no key for a live judge)
refuses the job instead of grading it some other way.

Writing is where "at least once" becomes "exactly once": the trial's envelopes, its slot
in the ledger and the job's completion commit together, and only while the worker still
holds the job. A worker that lost its lease (presumed dead, then alive after all), or a
second run of a trial already written, writes nothing.

A judge API that is unavailable while the job has attempts left puts the job back
(``TrialDeferredError``, honouring the API's ``Retry-After``) with the envelopes made so
far; on the job's last attempt the judge tier records ``error``, so the run still ends.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from migration_evals.bot.cascades import CascadeBuilder, Cascades, PlanRefusedError
from migration_evals.bot.executor.budget import SharedBudget
from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.leasing import Leasing
from migration_evals.bot.jobs.pool import CARRIED
from migration_evals.bot.jobs.queue import Job, NewJob
from migration_evals.bot.plan import RunPlan
from migration_evals.bot.wiring import BuiltCascade
from migration_evals.core.errors import ConfigError, MigrationEvalsError
from migration_evals.core.model import Changeset, Trial
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import (
    Budget,
    Carried,
    Cascade,
    TrialDeferredError,
    TrialRecord,
)
from migration_evals.oracles.runner import crashed_trial, internal_error_trial

__all__ = [
    "NOT_STARTED",
    "REFUSED",
    "TRIAL",
    "TrialGrader",
    "TrialTask",
    "run_key_prefix",
    "run_subject",
    "trial_job",
    "trial_key",
    "unchecked_trial",
]

log = logging.getLogger(__name__)

# Trials of one run need not wait for one another; they travel on a queue of their own.
TRIAL = JobKind("trial", exclusive=False, queue="trials")
NOT_STARTED = "not started"
REFUSED = "refused"


def run_key_prefix(run_id: str) -> str:
    return f"trial:{run_id}:"


def trial_key(run_id: str, changeset_id: str) -> str:
    """The job's idempotency key: one job per changeset of a run."""
    return run_key_prefix(run_id) + changeset_id


@dataclass(frozen=True, slots=True)
class TrialTask:
    """What a trial job asks a worker to do: one changeset, graded as the run's plan says."""

    run_id: str
    changeset: Changeset
    plan: RunPlan
    # What an earlier attempt made before an outside API was unavailable.
    carried: Carried | None = None

    @property
    def budgeted(self) -> bool:
        """Whether the run has a shared budget (``run_budgets``)."""
        return self.plan.budget_usd is not None

    def payload(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "changeset": self.changeset.to_dict(),
            "plan": self.plan.to_dict(),
        }

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> TrialTask:
        if "plan" not in payload:
            raise ConfigError(
                "a trial job without a run plan (queued by an earlier release); start the run again"
            )
        return cls(
            run_id=str(payload["run_id"]),
            changeset=Changeset.from_dict(payload["changeset"]),
            plan=RunPlan.from_dict(payload["plan"]),
            carried=Carried.of(payload.get(CARRIED)),
        )


def run_subject(run_id: str) -> str:
    """The subject of a run's trial jobs. Trial jobs never wait for others of their
    subject (leasing them skips that check), so it only groups them: the run's progress
    is counted on the subject's index."""
    return f"trial-run:{run_id}"


def trial_job(task: TrialTask) -> NewJob:
    key = trial_key(task.run_id, task.changeset.id)
    return NewJob(TRIAL, key, run_subject(task.run_id), task.payload())


def refused_trial(specs: SpecSet, task: TrialTask, reason: str) -> Trial:
    """The trial of a plan no worker could honour: an infrastructure error saying why,
    stamped as the run was planned (this worker's specs may be the reason)."""
    return _planned_error_trial(specs, task, f"{REFUSED}: {reason}")


def unchecked_trial(specs: SpecSet, task: TrialTask, exc: Exception) -> Trial:
    """The trial whose plan could not even be checked (a bug in the check): an
    infrastructure error with the exception and the end of its traceback, stamped as the
    run was planned. Retrying would raise the same again, so the trial ends here."""
    reason = f"internal error checking the run plan: {type(exc).__name__}: {exc}"
    details = {"traceback": traceback.format_exception(exc)[-5:]}
    return _planned_error_trial(specs, task, reason, details)


def _planned_error_trial(
    specs: SpecSet, task: TrialTask, reason: str, details: Mapping[str, Any] | None = None
) -> Trial:
    trial = internal_error_trial(specs, task.run_id, task.changeset, reason, details)
    stamps = task.plan.stamps_for(task.changeset.recipe)
    envelopes = tuple(replace(e, stamps=stamps) for e in trial.envelopes)
    return replace(trial, envelopes=envelopes)


class TrialGrader:
    """Runs trial jobs in a worker: the cascade of the job's plan, then the ledger and the
    job together.

    A plan this worker cannot honour is refused: the job is put back for another worker
    while it has attempts left, and on its last one the trial is recorded as an
    infrastructure error saying why. It completes its job itself (``completes_jobs``), in
    the ledger's transaction.
    """

    completes_jobs = True

    def __init__(
        self,
        settings: Settings,
        store: Store,
        leasing: Leasing,
        specs: SpecSet,
        *,
        build: CascadeBuilder | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.leasing = leasing
        self.specs = specs
        self.plans = Cascades(settings, store, specs, build=build)

    def cascades(self) -> list[BuiltCascade]:
        """The cascades built so far, with their sandboxes."""
        return self.plans.built()

    def _cascade(self, task: TrialTask, job: Job) -> Cascade | Trial:
        """The cascade of the job's plan; the refused trial on the job's last attempt;
        ``PlanRefusedError`` while other workers may still take the job. A check that
        crashes ends the trial as an internal error: the job failing instead would be
        tried again only to crash again, and the run would wait on it meanwhile."""
        try:
            refusal = self.plans.refusal(task.plan, task.changeset.recipe)
            if refusal is None:
                return self.plans.for_plan(task.plan)
        except MigrationEvalsError:
            raise  # the database or an outside service away: the job is tried again
        except Exception as exc:  # a bug, recorded on the trial, not lost, not silent
            log.exception("internal error checking the run plan of %s", task.changeset.id)
            return unchecked_trial(self.specs, task, exc)
        why = f"this worker cannot honour the run plan: {refusal}"
        if job.attempts < job.max_attempts:
            raise PlanRefusedError(why)
        return refused_trial(self.specs, task, why)

    def _record(self, task: TrialTask, job: Job) -> TrialRecord | None:
        """The graded trial, the refused one on the last attempt, or None when the budget
        is spent; ``PlanRefusedError`` while other workers may still take the job."""
        checked = self._cascade(task, job)
        if isinstance(checked, Trial):
            return TrialRecord(checked)
        cascade = checked
        budget = SharedBudget(self.store, task.run_id) if task.budgeted else Budget(None)
        if budget.exhausted:
            return None
        try:
            # With attempts left, an unavailable judge API puts the job back (waiting is
            # the queue's, not this thread's); the last attempt records ``error``.
            return cascade.run_trial(
                task.run_id,
                task.changeset,
                budget,
                defer=job.attempts < job.max_attempts,
                carried=task.carried,
            )
        except TrialDeferredError:
            raise
        except Exception as exc:  # one crashing trial is recorded, like the embedded runner
            log.exception("internal error grading %s", task.changeset.id)
            return TrialRecord(crashed_trial(cascade, task.run_id, task.changeset, exc))

    def __call__(self, job: Job, worker: str) -> str:
        task = TrialTask.of(job.payload)
        record = self._record(task, job)
        if record is None:  # as the embedded runner: a trial not started stays so
            line = f"{NOT_STARTED}: the run's budget is exhausted"
            self.leasing.complete(job, worker, line)
            return line
        line = f"{record.trial.verdict.value}: trial {record.trial.id} ({task.changeset.id})"
        seq = self.store.ledger.append_trial_once(
            record.trial,
            record.cache_keys,
            claim=lambda conn: self.leasing.complete_in(conn, job, worker, line),
        )
        if seq is None:
            line = f"discarded: trial {record.trial.id} is already written or no longer ours"
            self.leasing.complete(job, worker, line)  # a no-op when the job is no longer ours
        return line
