"""``run --executor celery``: the run and its trial jobs go into the database, the job ids
onto the broker, and the command watches the ledger fill up.

Nothing is written before the database and the broker both answer. The run row, its
budget (``--budget``, shared by every worker) and all its jobs are written in one
transaction, so a run either exists whole or not at all;
announcing comes after, and an announcement that does not get through is repeated by the
workers (the jobs are what counts). Progress is read from the database, never from the
broker: a trial is done when its job has ended, with the trial in the ledger (or not
started, the budget being spent), or out of attempts, in which case this command records
it as an infrastructure error, as the embedded runner records a crash.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from migration_evals.bot.executor.budget import SharedBudget, open_budget
from migration_evals.bot.executor.trials import (
    TRIAL,
    TrialTask,
    run_key_prefix,
    run_subject,
    trial_job,
    trial_key,
)
from migration_evals.bot.jobs.kinds import KindRegistry
from migration_evals.bot.jobs.queue import JobState, QueueOptions, build_queue
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.core.errors import BrokerError
from migration_evals.core.liveness import Holder
from migration_evals.core.model import Changeset, Envelope, Trial, Verdict
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import trial_id
from migration_evals.oracles.runner import RunOutcome, RunStatus, internal_error_trial, new_run_id

if TYPE_CHECKING:
    from migration_evals.bot.jobs.dispatch import Dispatcher

__all__ = ["CeleryRun", "run_on_celery"]

log = logging.getLogger(__name__)

INTERNAL_ERROR = "internal error"


def one_line(exc: BaseException) -> str:
    """The first line of an error from the database driver (they run over several)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class CeleryRun:
    """Runs changesets on Celery workers; the same ``RunOutcome`` as the embedded runner."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        specs: SpecSet,
        dispatcher: Dispatcher,
        *,
        plan: RunPlan | None = None,
        poll_s: float = 0.5,
        quiet_s: float = 30.0,
        on_quiet: Callable[[str], None] = log.warning,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.plan = plan or plan_of(settings, specs)
        self.store = store
        self.specs = specs
        self.dispatcher = dispatcher
        self.poll_s = poll_s
        self.quiet_s = quiet_s
        self.on_quiet = on_quiet
        self.clock = clock
        self.sleep = sleep
        self.queue = build_queue(
            store, KindRegistry([TRIAL]), QueueOptions.of(settings, lease_s=settings.scale.lease_s)
        )
        self._database_away = False

    def run(
        self,
        changesets: Sequence[Changeset],
        *,
        options: Mapping[str, Any],
        on_trial: Callable[[], None] = lambda: None,
        run_id: str | None = None,
        holder: Holder | None = None,
        resume: bool = False,
    ) -> RunOutcome:
        """Start the run and watch it to the end; ``resume``: watch ``run_id``, started
        before by a watcher that died (its jobs are in the database already, and the
        workers have kept grading them)."""
        run_id = run_id or new_run_id()
        if not resume:
            self.start(run_id, changesets, options, holder=holder)
        failed = self.wait(run_id, changesets, on_trial)
        self._record_given_up(run_id, changesets, failed)
        return self.finish(run_id, changesets)

    def start(
        self,
        run_id: str,
        changesets: Sequence[Changeset],
        options: Mapping[str, Any],
        *,
        holder: Holder | None = None,
    ) -> None:
        """Write the run and its jobs in one transaction, then announce the jobs."""
        plan = self.plan
        jobs = [trial_job(TrialTask(run_id, changeset, plan)) for changeset in changesets]
        with self.store.db.engine.begin() as conn:
            stored = {**options, "plan": plan.to_dict(), "executor": "celery"}
            self.store.runs.start_run(run_id, stored, conn=conn, holder=holder)
            if plan.budget_usd is not None:
                open_budget(conn, run_id, plan.budget_usd)
            scale = self.settings.scale
            ids = self.queue.intake.insert_many(conn, jobs, max_attempts=scale.max_attempts)
        try:
            self.dispatcher.publish([(job_id, TRIAL) for job_id in ids])
        except BrokerError as exc:
            log.warning(
                "run %s is stored but not announced; workers will announce it: %s", run_id, exc
            )

    def wait(
        self, run_id: str, changesets: Sequence[Changeset], on_trial: Callable[[], None]
    ) -> dict[str, str]:
        """Until every trial job has ended (done or given up); returns the given-up trials
        not in the ledger, and why."""
        done = 0
        last_change = self.clock()
        warned = False
        while True:
            ended = self._ended(run_id, done)
            for _ in range(ended - done):
                on_trial()
            if ended > done:
                done, last_change, warned = ended, self.clock(), False
            if done >= len(changesets):
                return self._given_up(run_id)
            if not warned and self.clock() - last_change > self.quiet_s:
                warned = True
                self.on_quiet(
                    f"no trial finished in {self.quiet_s:.0f} s ({done}/{len(changesets)} done); "
                    "is a worker (`migration-evals worker`) running against this database "
                    "and broker?"
                )
            self.sleep(self.poll_s)

    def _ended(self, run_id: str, known: int) -> int:
        """How many of the run's jobs have ended; ``known`` while the database is away
        (the workers hold on to their jobs meanwhile, and so does this command)."""
        try:
            states = self.queue.admin.count_states(run_subject(run_id))
        except SQLAlchemyError as exc:
            if not self._database_away:
                self.on_quiet(f"the database did not answer; still waiting: {one_line(exc)}")
            self._database_away = True
            return known
        self._database_away = False
        return states.get(JobState.DONE, 0) + states.get(JobState.FAILED, 0)

    def _given_up(self, run_id: str) -> dict[str, str]:
        """Trial jobs that ran out of attempts and whose trial is not in the ledger."""
        prefix = run_key_prefix(run_id)
        failed = self.queue.admin.failed(TRIAL, prefix)
        if not failed:
            return failed  # the usual case: no need to read which trials are written
        written = self.store.ledger.trials_written(run_id)
        return {
            key: error
            for key, error in failed.items()
            if trial_id(run_id, key.removeprefix(prefix)) not in written
        }

    def _record_given_up(
        self, run_id: str, changesets: Sequence[Changeset], failed: Mapping[str, str]
    ) -> None:
        by_key = {trial_key(run_id, c.id): c for c in changesets}
        for key, error in failed.items():
            reason = f"{INTERNAL_ERROR}: the trial's job gave up: {error}"
            trial = internal_error_trial(self.specs, run_id, by_key[key], reason)
            self.store.ledger.append_trial_once(trial, {})

    def finish(self, run_id: str, changesets: Sequence[Changeset]) -> RunOutcome:
        """Read the run's trials back from the ledger, in input order, and close the run."""
        envelopes: dict[str, list[Envelope]] = {}
        for entry in self.store.ledger.entries(run_id=run_id):
            envelopes.setdefault(entry.trial_id, []).append(entry.envelope)
        trials = [
            Trial(tid, run_id, changeset, tuple(envelopes[tid]))
            for changeset in changesets
            if (tid := trial_id(run_id, changeset.id)) in envelopes
        ]
        errors = [
            f"{t.changeset.id}: {t.envelopes[0].reason.removeprefix(INTERNAL_ERROR + ': ')}"
            for t in trials
            if t.envelopes[0].verdict is Verdict.ERROR
            and t.envelopes[0].reason.startswith(INTERNAL_ERROR)
        ]
        status = RunStatus.INTERNAL_ERRORS if errors else RunStatus.COMPLETED
        if SharedBudget.is_exhausted(self.store, run_id):
            status = RunStatus.STOPPED_BUDGET
        outcome = RunOutcome(run_id, trials, status, len(changesets) - len(trials), errors)
        tiers = [spec.tier for spec in self.specs.oracle.tiers]
        self.store.runs.finish_run(run_id, status, outcome.summary(tiers).to_dict())
        return outcome


def run_on_celery(
    plan: RunPlan,
    settings: Settings,
    store: Store,
    specs: SpecSet,
    changesets: Sequence[Changeset],
    *,
    options: Mapping[str, Any],
    on_trial: Callable[[], None],
    on_quiet: Callable[[str], None],
    run_id: str | None = None,
    holder: Holder | None = None,
    resume: bool = False,
) -> RunOutcome:
    """``CeleryRun`` of ``plan`` on the settings' broker, refusing to start unless the
    broker answers."""
    # Celery and its Redis transport take half a second to load; only this path needs them.
    from migration_evals.bot.jobs.dispatch import CeleryDispatcher, make_celery  # noqa: PLC0415

    dispatcher = CeleryDispatcher(make_celery(settings.scale), settings.scale)
    try:
        dispatcher.check()
        run = CeleryRun(settings, store, specs, dispatcher, plan=plan, on_quiet=on_quiet)
        return run.run(
            changesets,
            options=options,
            on_trial=on_trial,
            run_id=run_id,
            holder=holder,
            resume=resume,
        )
    finally:
        dispatcher.close()
